'use strict'
// respload/testing: throwaway redis-server processes on free loopback ports, for integration
// tests. Each server runs under a small shell watchdog that holds a pipe from this process:
// when the pipe closes (stop(), a normal exit, a crash, even SIGKILL of this process) the
// watchdog kills redis-server and removes its directory. Nothing outlives the test process.
// With `tls: true` the helpers make throwaway certificates with the openssl command line, in a
// directory held the same way by a watchdog of its own. With RESPLOAD_URL set, startRedis() and
// withRedis() use the server already running there instead (connectRedis), so a suite can run
// where redis-server cannot be installed.

const { execFile, spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const tls = require('node:tls')

const WATCHDOG = `
dir=$1; shift
"$@" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
trap 'exit 143' HUP INT TERM
read -r _ || true
`

// Holds a directory (the certificates); removes it when stdin closes.
const DIR_WATCHDOG = `
trap 'rm -rf "$1"' EXIT
trap 'exit 143' HUP INT TERM
read -r _ || true
`

/** An error reply from the server (`code` is its first word: `ERR`, `WRONGTYPE`, ...). */
class ReplyError extends Error {
  constructor(message) {
    super(message)
    this.code = message.split(' ', 1)[0]
  }
}
Object.defineProperty(ReplyError.prototype, 'name', { value: 'ReplyError', writable: true, configurable: true })

// --- a minimal RESP2 client, enough for test assertions ----------------------------------------

function encode(args) {
  const parts = [Buffer.from(`*${args.length}\r\n`)]
  for (const arg of args) {
    const bytes = arg instanceof Uint8Array ? Buffer.from(arg.buffer, arg.byteOffset, arg.byteLength) : Buffer.from(String(arg))
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, Buffer.from('\r\n'))
  }
  return Buffer.concat(parts)
}

/** Parse one reply at `offset`: `{ value, next }`, or null when more bytes are needed. */
function parse(buf, offset) {
  const end = buf.indexOf('\r\n', offset)
  if (end < 0) return null
  const line = buf.toString('utf8', offset + 1, end)
  const next = end + 2
  switch (String.fromCharCode(buf[offset])) {
    case '+':
      return { value: line, next }
    case '-':
      return { value: new ReplyError(line), next }
    case ':':
      return { value: Number(line), next }
    case '$': {
      const len = Number(line)
      if (len < 0) return { value: null, next }
      if (buf.length < next + len + 2) return null
      return { value: buf.toString('utf8', next, next + len), next: next + len + 2 }
    }
    case '*': {
      const count = Number(line)
      if (count < 0) return { value: null, next }
      const items = []
      let at = next
      for (let i = 0; i < count; i++) {
        const item = parse(buf, at)
        if (item === null) return null
        items.push(item.value)
        at = item.next
      }
      return { value: items, next: at }
    }
    default:
      throw new Error(`unexpected RESP reply type byte ${buf[offset]}`)
  }
}

class Connection {
  #socket
  #buffer = Buffer.alloc(0)
  #pending = []
  #failure = null

  constructor(socket) {
    this.#socket = socket
    // Referenced only while a reply is awaited: an idle connection (a forgotten stop()) does not
    // keep the process alive, and an awaited command() is not cut short.
    socket.unref()
    socket.on('data', (chunk) => this.#onData(chunk))
    socket.on('error', (err) => this.#fail(err))
    socket.on('close', () => this.#fail(new Error('connection closed')))
  }

  /** Connect; over TLS when `tlsOptions` (`{ ca, cert, key }`) is given. */
  static open(port, host, timeoutMs = 2000, tlsOptions = null) {
    return new Promise((resolve, reject) => {
      const socket = tlsOptions ? tls.connect({ port, host, ...tlsOptions }) : net.connect({ port, host })
      const timer = setTimeout(() => socket.destroy(new Error(`timeout connecting to ${host}:${port}`)), timeoutMs)
      socket.once(tlsOptions ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer)
        socket.removeListener('error', reject)
        resolve(new Connection(socket))
      })
      socket.once('error', (err) => {
        clearTimeout(timer)
        reject(err)
      })
    })
  }

  #onData(chunk) {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk
    let offset = 0
    while (this.#pending.length > 0 && offset < this.#buffer.length) {
      const reply = parse(this.#buffer, offset)
      if (reply === null) break
      offset = reply.next
      const { resolve, reject } = this.#pending.shift()
      if (reply.value instanceof ReplyError) reject(reply.value)
      else resolve(reply.value)
    }
    this.#buffer = this.#buffer.subarray(offset)
    if (this.#pending.length === 0) this.#socket.unref()
  }

  #fail(err) {
    this.#failure ??= err
    for (const { reject } of this.#pending.splice(0)) reject(err)
  }

  send(args) {
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject })
      this.#socket.ref()
      this.#socket.write(encode(args))
    })
  }

  close() {
    this.#socket.destroy()
  }
}

// --- servers -------------------------------------------------------------------------------------

const checkedBinaries = new Set()

function redisBinary(options) {
  const binary = options.redisServer ?? process.env.RESPLOAD_REDIS_SERVER ?? 'redis-server'
  if (!checkedBinaries.has(binary)) {
    const probe = spawnSync(binary, ['--version'], { encoding: 'utf8' })
    if (probe.error || probe.status !== 0) {
      throw new Error(
        `cannot run \`${binary} --version\` (${probe.error?.message ?? probe.stderr.trim()}): ` +
          'install redis-server (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) ' +
          'or set RESPLOAD_REDIS_SERVER to the binary; or use a server already running: ' +
          'RESPLOAD_URL=redis://HOST:PORT',
      )
    }
    checkedBinaries.add(binary)
  }
  return binary
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// --- certificates --------------------------------------------------------------------------------

/**
 * Throwaway certificates (EC P-256): `caFile` signs `certFile` (the server's, for 127.0.0.1 and
 * localhost) and `clientCert` (for mutual TLS). Removed by `remove()`, or when the process ends.
 */
class TlsCerts {
  #child
  #exited

  constructor(dir, child, exited) {
    this.dir = dir
    this.caFile = path.join(dir, 'ca.crt')
    this.certFile = path.join(dir, 'server.crt')
    this.keyFile = path.join(dir, 'server.key')
    this.clientCert = path.join(dir, 'client.crt')
    this.clientKey = path.join(dir, 'client.key')
    this.#child = child
    this.#exited = exited
  }

  /** A workload `target.tls` trusting the CA, with the client certificate when `clientCert`. */
  targetTls(clientCert = false) {
    return clientCert ? { ca_file: this.caFile, cert: this.clientCert, key: this.clientKey } : { ca_file: this.caFile }
  }

  /** Remove the directory (idempotent). */
  async remove() {
    this.#child.ref()
    this.#child.stdin.end()
    await this.#exited
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

function run(file, args, options) {
  return new Promise((resolve, reject) => {
    execFile(file, args, options, (err, stdout, stderr) => (err ? reject(Object.assign(err, { stdout, stderr })) : resolve(stdout)))
  })
}

/** Make a CA, a server and a client certificate with openssl, in a watched temporary directory. */
async function makeCerts() {
  const openssl = process.env.RESPLOAD_OPENSSL ?? 'openssl'
  const probe = spawnSync(openssl, ['version'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `cannot run \`${openssl} version\` (${probe.error?.message ?? probe.stderr.trim()}): tls: true needs the openssl ` +
        'command line to make certificates: install it (Debian: apt-get install openssl) or set RESPLOAD_OPENSSL',
    )
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-certs-'))
  const child = spawn('sh', ['-c', DIR_WATCHDOG, 'respload-watchdog', dir], { stdio: ['pipe', 'ignore', 'ignore'] })
  const exited = new Promise((resolve) => child.once('exit', () => resolve()))
  child.unref()
  child.stdin.unref?.()
  child.stdin.on('error', () => {})
  const certs = new TlsCerts(dir, child, exited)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  const ssl = async (...args) => {
    try {
      await run(openssl, args, { cwd: dir, timeout: 60_000 })
    } catch (err) {
      throw new Error(`openssl ${args.join(' ')} failed: ${(err.stderr || err.message).trim()}`)
    }
  }
  const leaf = async (name, cn, extension) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`), `${extension}\n`)
    await ssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`)
    await ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
      '-days', '825', '-extfile', `${name}.ext`, '-out', `${name}.crt`)
  }
  try {
    await ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '825', '-subj', '/CN=respload throwaway CA')
    // No extendedKeyUsage: cluster nodes present this certificate as clients too (bus and
    // replication links with --tls-auth-clients yes).
    await leaf('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost')
    await leaf('client', 'respload client', 'extendedKeyUsage=clientAuth')
  } catch (err) {
    await certs.remove()
    throw err
  }
  return certs
}

/** The redis-server arguments serving TLS only on `port` with `certs`. */
const tlsArgs = (certs, port, authClients) => ['--port', '0', '--tls-port', String(port),
  '--tls-cert-file', certs.certFile, '--tls-key-file', certs.keyFile, '--tls-ca-cert-file', certs.caFile,
  '--tls-auth-clients', authClients ? 'yes' : 'no']

function checkTls(options) {
  if (options.tlsAuthClients && !options.tls) {
    throw new TypeError('tlsAuthClients: true needs tls: true (client certificates are TLS)')
  }
}

/** A redis-server started by `startRedis()`. */
class RedisServer {
  #child
  #exited
  #connection = null
  #stopped = false
  #ownsCerts

  // connectRedis(): how to reach a server someone else runs ({ tls, user, db }); null for ours.
  #existing

  constructor(fields, child, exited, ownsCerts, existing = null) {
    Object.assign(this, fields)
    this.#child = child
    this.#exited = exited
    this.#ownsCerts = ownsCerts
    this.#existing = existing
  }

  /** A workload `target`: `{ url }`, and with TLS `tls` trusting the throwaway CA (with the
   * client certificate when the server requires one). */
  target() {
    return this.tls ? { url: this.url, tls: this.tls.targetTls(this.tlsAuthClients) } : { url: this.url }
  }

  /** Send one command and resolve with its reply (error replies reject with `ReplyError`). */
  async command(...args) {
    if (this.#stopped) throw new Error(`redis-server on port ${this.port} was stopped`)
    if (this.#connection === null) this.#connection = await this.#open()
    return this.#connection.send(args)
  }

  async #open() {
    const existing = this.#existing
    const connection = await Connection.open(this.port, this.host, 2000, existing ? existing.tls : tlsOptions(this.tls))
    try {
      if (this.password !== undefined) {
        await connection.send(existing?.user !== undefined ? ['AUTH', existing.user, this.password] : ['AUTH', this.password])
      }
      if (existing?.db) await connection.send(['SELECT', String(existing.db)])
    } catch (err) {
      connection.close()
      throw err
    }
    return connection
  }

  /** Stop the server (SIGTERM, then SIGKILL after 5 s) and remove its directory. Idempotent. */
  async stop() {
    if (this.#stopped) return this.#exited
    this.#stopped = true
    this.#connection?.close()
    // Someone else's server: only the helper's connection was ours.
    if (this.#existing) return
    this.#child.ref()
    this.#child.stdin.end()
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000)
    await this.#exited
    clearTimeout(timer)
    if (this.#ownsCerts && this.tls) await this.tls.remove()
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
}

/** The client TLS options of the helper's own connections: trust the CA, offer the client certificate. */
function tlsOptions(certs) {
  if (!certs) return null
  const read = (file) => fs.readFileSync(file)
  return { ca: read(certs.caFile), cert: read(certs.clientCert), key: read(certs.clientKey) }
}

/**
 * Start a redis-server on a free loopback port, with persistence off and its files in a
 * temporary directory; resolve once it answers PING. Options: `args` (extra redis-server
 * arguments, e.g. `['--maxmemory', '10mb']`), `password` (sets `requirepass`), `redisServer`
 * (the binary; default `$RESPLOAD_REDIS_SERVER` or `redis-server`), `startTimeoutMs`, `tls`
 * (throwaway certificates, TLS only: `--tls-port` on the free port, `--port 0`), `tlsAuthClients`
 * (also require a client certificate).
 */
async function startRedis(options = {}) {
  checkTls(options)
  const url = process.env.RESPLOAD_URL
  // A server asked to be configured (args, password, TLS, a binary) must be one of our own.
  const configured = options.args?.length || options.password !== undefined || options.redisServer !== undefined ||
    options.tls || options.tlsAuthClients
  if (url && !configured) {
    const server = await connectRedis(url)
    // Each test starts from an empty database, as with a server of its own.
    await server.command('FLUSHDB')
    return server
  }
  const binary = redisBinary(options)
  const certs = options.tls ? await makeCerts() : null
  try {
    return await startAttempts(binary, options, certs, true)
  } catch (err) {
    await certs?.remove()
    throw err
  }
}

async function startAttempts(binary, options, certs, ownsCerts) {
  const attempts = 5
  let lastError
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await startOnce(binary, await freePort(), options, certs, ownsCerts)
    } catch (err) {
      lastError = err
      // Another process took the port between our probe and redis-server's bind: try another.
      if (!err.portInUse) throw err
    }
  }
  throw lastError
}

async function startOnce(binary, port, options, certs, ownsCerts) {
  const host = '127.0.0.1'
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-redis-'))
  const logfile = path.join(dir, 'redis.log')
  const ports = certs ? tlsArgs(certs, port, options.tlsAuthClients) : ['--port', String(port)]
  const connectTls = tlsOptions(certs)
  const args = [...ports, '--bind', host, '--save', '', '--appendonly', 'no',
    '--dir', dir, '--logfile', logfile, '--daemonize', 'no']
  if (options.password !== undefined) args.push('--requirepass', options.password)
  args.push(...(options.args ?? []))
  const child = spawn('sh', ['-c', WATCHDOG, 'respload-watchdog', dir, binary, ...args], {
    stdio: ['pipe', 'ignore', 'ignore'],
  })
  const exited = new Promise((resolve) => child.once('exit', () => resolve()))
  // Neither the watchdog nor its pipe keeps the event loop alive: a test file that forgets
  // stop() still ends, and the closing pipe takes the server down.
  child.unref()
  child.stdin.unref?.()
  child.stdin.on('error', () => {})

  const deadline = Date.now() + (options.startTimeoutMs ?? 10_000)
  let childGone = false
  child.once('exit', () => {
    childGone = true
  })
  const log = () => {
    try {
      return fs.readFileSync(logfile, 'utf8')
    } catch {
      return ''
    }
  }
  const fail = async (message) => {
    const text = log()
    child.stdin.end()
    child.ref()
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
    const err = new Error(`${message}${text ? `\n--- redis-server log ---\n${text.trim().split('\n').slice(-10).join('\n')}` : ''}`)
    err.portInUse = /Address already in use/i.test(text)
    throw err
  }
  for (;;) {
    if (childGone) return fail(`redis-server on port ${port} exited at start`)
    try {
      const connection = await Connection.open(port, host, 500, connectTls)
      try {
        if (options.password !== undefined) await connection.send(['AUTH', options.password])
        await connection.send(['PING'])
        const info = await connection.send(['INFO', 'server'])
        const field = (name) => info.match(new RegExp(`^${name}:(.*)$`, 'm'))?.[1]?.trim()
        const pid = Number(field('process_id'))
        const scheme = certs ? 'rediss' : 'redis'
        const url = options.password !== undefined
          ? `${scheme}://:${encodeURIComponent(options.password)}@${host}:${port}`
          : `${scheme}://${host}:${port}`
        const fields = { host, port, url, pid, dir, version: field('redis_version'), password: options.password,
          tls: certs ?? undefined, tlsAuthClients: Boolean(certs && options.tlsAuthClients) }
        return new RedisServer(fields, child, exited, ownsCerts)
      } finally {
        connection.close()
      }
    } catch (err) {
      if (err instanceof ReplyError && !/LOADING/.test(err.message)) return fail(`redis-server on port ${port}: ${err.message}`)
      const text = log()
      if (/Address already in use/i.test(text)) return fail(`port ${port} is in use`)
      if (Date.now() > deadline) return fail(`redis-server on port ${port} did not answer PING in time (${err.message})`)
      await sleep(25)
    }
  }
}

/**
 * A `RedisServer` for a server already running at `url` (`redis://` or `rediss://`, with user,
 * password and database as respload reads them; `rediss://` verified against Node's trusted
 * CAs), once it answers PING. `url` and `target()` give `url` back, `command()` authenticates
 * and selects the database, `stop()` closes only the helper's connection.
 */
async function connectRedis(url, options = {}) {
  let parsed
  try {
    parsed = new URL(url)
  } catch {
    throw new TypeError(`url ${JSON.stringify(url)}: expected redis://HOST:PORT[/DB] or rediss://...`)
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new TypeError(`url ${JSON.stringify(url)}: expected redis://HOST:PORT[/DB] or rediss://...`)
  }
  const query = parsed.searchParams
  const decode = (text) => (text ? decodeURIComponent(text) : undefined)
  const password = query.get('password') ?? decode(parsed.password)
  const user = query.get('user') ?? decode(parsed.username)
  const dbText = query.get('db') ?? (parsed.pathname.replace(/^\/+|\/+$/g, '') || '0')
  if (!/^\d+$/.test(dbText)) throw new TypeError(`url ${JSON.stringify(url)}: database ${JSON.stringify(dbText)} is not a number`)
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1'
  const port = Number(parsed.port || 6379)
  const existing = { tls: parsed.protocol === 'rediss:' ? { servername: host } : null, user, db: Number(dbText) }
  const fields = { host, port, url, pid: 0, dir: '', version: '', password, tls: undefined, tlsAuthClients: false }
  const server = new RedisServer(fields, null, Promise.resolve(), false, existing)
  const deadline = Date.now() + (options.timeoutMs ?? 10_000)
  for (;;) {
    try {
      await server.command('PING')
      break
    } catch (err) {
      if (err instanceof ReplyError) throw err
      if (Date.now() > deadline) throw new Error(`no redis server answers at ${url}: ${err.message}`)
      await sleep(100)
    }
  }
  const info = await server.command('INFO', 'server')
  const field = (name) => info.match(new RegExp(`^${name}:(.*)$`, 'm'))?.[1]?.trim()
  server.pid = Number(field('process_id'))
  server.version = field('redis_version')
  try {
    server.dir = (await server.command('CONFIG', 'GET', 'dir'))[1] ?? ''
  } catch (err) {
    if (!(err instanceof ReplyError)) throw err
  }
  return server
}

/** Start a server, call `fn(server)`, and stop the server whatever happens. */
async function withRedis(fn, options = {}) {
  const server = await startRedis(options)
  try {
    return await fn(server)
  } finally {
    await server.stop()
  }
}

// --- clusters ------------------------------------------------------------------------------------

/** A Redis Cluster started by `startCluster()`. */
class RedisCluster {
  #certs

  constructor(nodes, password, certs, tlsAuthClients) {
    /** Every node, primaries first as created (a failover may change roles). */
    this.nodes = nodes
    this.password = password
    /** The certificates every node shares (`tls: true`), else undefined. */
    this.tls = certs ?? undefined
    this.tlsAuthClients = Boolean(certs && tlsAuthClients)
    this.#certs = certs
  }

  /** `host:port` of every node, for `target.cluster_seeds`. */
  get seeds() {
    return this.nodes.map((n) => `${n.host}:${n.port}`)
  }

  /** The first node's URL (with the password when one was set). */
  get url() {
    return this.nodes[0].url
  }

  /** A workload `target` for this cluster: cluster mode, every node a seed (and `tls` with TLS). */
  target() {
    const target = { url: this.url, cluster: true, cluster_seeds: this.seeds }
    return this.tls ? { ...target, tls: this.tls.targetTls(this.tlsAuthClients) } : target
  }

  /** The nodes that are primaries now (`ROLE`). */
  async primaries() {
    const roles = await Promise.all(this.nodes.map((n) => n.command('ROLE')))
    return this.nodes.filter((_, i) => roles[i][0] === 'master')
  }

  /** The primary serving `key`'s slot now. */
  async owner(key) {
    const slot = await this.nodes[0].command('CLUSTER', 'KEYSLOT', key)
    for (const [start, end, primary] of await this.nodes[0].command('CLUSTER', 'SLOTS')) {
      if (start <= slot && slot <= end) return this.nodes.find((n) => n.port === primary[1])
    }
    throw new Error(`no node serves slot ${slot}`)
  }

  /** Stop every node and remove the certificates (idempotent). */
  async stop() {
    await Promise.all(this.nodes.map((n) => n.stop()))
    await this.#certs?.remove()
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
}

async function clusterReady(nodes) {
  for (const node of nodes) {
    if (!(await node.command('CLUSTER', 'INFO')).includes('cluster_state:ok')) return false
    // A replica is listed in CLUSTER SLOTS once it has synced with its primary.
    const listed = new Set()
    for (const entry of await node.command('CLUSTER', 'SLOTS')) for (const n of entry.slice(2)) listed.add(n[1])
    if (listed.size !== nodes.length) return false
  }
  return true
}

/**
 * Start a Redis Cluster of `primaries * (1 + replicas)` local nodes (cluster-enabled,
 * `cluster-node-timeout 2000`, `repl-diskless-sync-delay 0`), created with `redis-cli --cluster
 * create`; resolve once every node says `cluster_state:ok` and lists every replica. Options:
 * `primaries` (default 3, at least 3), `replicas` (default 1), `password`, `args`, `redisServer`,
 * `redisCli` (default `$RESPLOAD_REDIS_CLI` or `redis-cli`), `startTimeoutMs` (default 60 000),
 * `tls` (one set of certificates for the cluster; every node TLS only, with `--tls-cluster yes`
 * and `--tls-replication yes`; created with `redis-cli --tls`), `tlsAuthClients`.
 */
async function startCluster(options = {}) {
  const primaries = options.primaries ?? 3
  const replicas = options.replicas ?? 1
  if (!Number.isInteger(primaries) || primaries < 3) {
    throw new RangeError(`primaries = ${primaries}: Redis Cluster needs at least 3`)
  }
  if (!Number.isInteger(replicas) || replicas < 0) throw new RangeError(`replicas = ${replicas}: must be 0 or more`)
  checkTls(options)
  const binary = redisBinary(options)
  const cli = options.redisCli ?? process.env.RESPLOAD_REDIS_CLI ?? 'redis-cli'
  const probe = spawnSync(cli, ['--version'], { encoding: 'utf8' })
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `cannot run \`${cli} --version\` (${probe.error?.message ?? probe.stderr.trim()}): ` +
        'install redis-cli (Debian: apt-get install redis-tools) or set RESPLOAD_REDIS_CLI',
    )
  }
  const certs = options.tls ? await makeCerts() : null
  const nodes = []
  const cluster = new RedisCluster(nodes, options.password, certs, options.tlsAuthClients)
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) {
      const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000',
        '--cluster-port', String(await freePort()), '--repl-diskless-sync-delay', '0']
      if (options.password !== undefined) args.push('--masterauth', options.password)
      if (certs) args.push('--tls-cluster', 'yes', '--tls-replication', 'yes')
      args.push(...(options.args ?? []))
      nodes.push(await startAttempts(binary, { ...options, args }, certs, false))
    }
    const timeoutMs = options.startTimeoutMs ?? 60_000
    const cliOptions = options.password !== undefined ? ['-a', options.password, '--no-auth-warning'] : []
    if (certs) cliOptions.push('--tls', '--cacert', certs.caFile, '--cert', certs.clientCert, '--key', certs.clientKey)
    await new Promise((resolve, reject) => {
      execFile(cli, [...cliOptions, '--cluster', 'create', ...cluster.seeds, '--cluster-replicas', String(replicas), '--cluster-yes'],
        { timeout: timeoutMs }, (err, stdout, stderr) => {
          if (err) reject(new Error(`redis-cli --cluster create failed: ${err.message}\n${stdout}${stderr}`))
          else resolve()
        })
    })
    const deadline = Date.now() + timeoutMs
    while (!(await clusterReady(nodes))) {
      if (Date.now() > deadline) throw new Error(`the cluster ${cluster.seeds.join(' ')} did not come up in time`)
      await sleep(100)
    }
    return cluster
  } catch (err) {
    await cluster.stop()
    throw err
  }
}

/** Start a cluster, call `fn(cluster)`, and stop every node whatever happens. */
async function withCluster(fn, options = {}) {
  const cluster = await startCluster(options)
  try {
    return await fn(cluster)
  } finally {
    await cluster.stop()
  }
}

module.exports = { startRedis, withRedis, connectRedis, RedisServer, ReplyError, startCluster, withCluster, RedisCluster, TlsCerts }
module.exports.default = module.exports
