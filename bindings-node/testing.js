'use strict'
// respload/testing: throwaway redis-server processes on free loopback ports, for integration
// tests. The servers are started by the respload-testing crate through the native addon (as
// the core's tests and Python's respload.testing start theirs): each runs under a small shell
// watchdog that holds a pipe from this process, so when the pipe closes (stop(), a normal exit,
// a crash, even SIGKILL of this process) the watchdog kills redis-server and removes its
// directory. Nothing outlives the test process. With `tls: true` the certificates are made
// in-process, in a directory held the same way. command() goes through the crate's client
// too; this file holds connectRedis and the asyncDispose wrappers. With RESPLOAD_URL set, startRedis()
// and withRedis() use the server already running there instead (connectRedis), so a suite can
// run where redis-server cannot be installed; they empty it (FLUSHDB) only with
// RESPLOAD_ALLOW_FLUSH=1, and otherwise refuse a database that holds keys.

const fs = require('node:fs')
const path = require('node:path')
const native = require('./native.js')

/** An error reply from the server (`code` is its first word: `ERR`, `WRONGTYPE`, ...). */
class ReplyError extends Error {
  constructor(message) {
    super(message)
    this.code = message.split(' ', 1)[0]
  }
}
Object.defineProperty(ReplyError.prototype, 'name', { value: 'ReplyError', writable: true, configurable: true })

/** A reply of the native client (JSON text) as values: `{ error }` objects become `ReplyError`s. */
function fromJson(value) {
  if (Array.isArray(value)) return value.map(fromJson)
  if (value !== null && typeof value === 'object') return new ReplyError(value.error)
  return value
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// --- certificates --------------------------------------------------------------------------------

/**
 * Throwaway certificates (EC P-256, made in-process): `caFile` signs `certFile` (the server's,
 * for 127.0.0.1 and localhost) and `clientCert` (for mutual TLS). Removed once no server uses
 * them, or when the process ends.
 */
class TlsCerts {
  constructor(dir) {
    this.dir = dir
    this.caFile = path.join(dir, 'ca.crt')
    this.certFile = path.join(dir, 'server.crt')
    this.keyFile = path.join(dir, 'server.key')
    this.clientCert = path.join(dir, 'client.crt')
    this.clientKey = path.join(dir, 'client.key')
  }

  /** A workload `target.tls` trusting the CA, with the client certificate when `clientCert`. */
  targetTls(clientCert = false) {
    return clientCert ? { ca_file: this.caFile, cert: this.clientCert, key: this.clientKey } : { ca_file: this.caFile }
  }

  /** Remove the directory now (idempotent): stopping its servers does it too. */
  async remove() {
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

function checkTls(options) {
  if (options.tlsAuthClients && !options.tls) {
    throw new TypeError('tlsAuthClients: true needs tls: true (client certificates are TLS)')
  }
}

/** A redis-server started by `startRedis()`. */
class RedisServer {
  #native
  #stopping = Promise.resolve()
  #client = null
  #stopped = false

  // connectRedis(): how to reach a server someone else runs ({ tls, user, db }); null for ours.
  #existing

  constructor(fields, native, existing = null) {
    Object.assign(this, fields)
    this.#native = native
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
    this.#client ??= new native.TestClient(this.#clientOptions())
    const bytes = args.map((a) => (a instanceof Uint8Array ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : String(a)))
    let text
    try {
      text = await this.#client.command(bytes)
    } catch (err) {
      if (err.code === 'ERR_RESPLOAD_TESTING_REPLY') throw new ReplyError(err.message)
      throw err
    }
    const reply = fromJson(JSON.parse(text))
    if (reply instanceof ReplyError) throw reply
    return reply
  }

  /** The helper's connection (the respload-testing crate's client): TLS with the client
   * certificate for a server of ours with TLS, Mozilla's roots for `rediss://` of connectRedis. */
  #clientOptions() {
    const existing = this.#existing
    return { host: this.host, port: this.port, tls: Boolean(this.tls || existing?.tls), caFile: this.tls?.caFile,
      cert: this.tls?.clientCert, key: this.tls?.clientKey, user: existing?.user, password: this.password, db: existing?.db }
  }

  /** Whether the server runs (for `connectRedis()`, whether `stop()` was not called yet). */
  get running() {
    return this.#native ? this.#native.running() : !this.#stopped
  }

  /** Stop the server and remove its directory, and its certificates once no server uses them
   * (idempotent). For `connectRedis()`, only the helper's connection is closed. */
  async stop() {
    if (this.#stopped) return this.#stopping
    this.#stopped = true
    this.#client?.close()
    // Someone else's server: only the helper's connection was ours.
    if (!this.#native) return
    this.#stopping = this.#native.stop()
    await this.#stopping
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
}

/**
 * Start a redis-server on a free loopback port, with persistence off and its files in a
 * temporary directory; resolve once it accepts connections. Options: `args` (extra redis-server
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
    if (flushAllowed()) {
      // Opted in: each test starts from an empty database, as with a server of its own.
      await server.command('FLUSHDB')
      return server
    }
    // Someone else's server is never emptied without consent, nor written into when it holds
    // keys: a workload's SETs could overwrite them.
    const keys = await server.command('DBSIZE')
    if (keys > 0) {
      await server.stop()
      const err = new Error(
        `RESPLOAD_URL: the database of ${server.host}:${server.port} holds ${keys} keys, and startRedis() ` +
          'never empties a server it did not start unless RESPLOAD_ALLOW_FLUSH=1 is set: set it to empty ' +
          'that database (FLUSHDB) before each use, or point RESPLOAD_URL at an empty database (/DB)',
      )
      err.code = 'ERR_RESPLOAD_TESTING_NOT_EMPTY'
      throw err
    }
    return server
  }
  const [started] = await native.startServers(nativeOptions({ ...options, cluster: false })).catch(notFound)
  return ourServer(started, options)
}

/** Whether `RESPLOAD_ALLOW_FLUSH` (`1`, `true` or `yes`) lets `startRedis()` empty the server at
 * `RESPLOAD_URL`. */
function flushAllowed() {
  return /^(1|true|yes)$/i.test((process.env.RESPLOAD_ALLOW_FLUSH ?? '').trim())
}

/** The native options of `startRedis()`'s and `startCluster()`'s. */
function nativeOptions(options) {
  const { password, args, tls, tlsAuthClients, redisServer, redisCli, startTimeoutMs, cluster, primaries, replicas } = options
  return { password, args, tls, tlsAuthClients, redisServer, redisCli, startTimeoutMs, cluster, primaries, replicas }
}

/** A missing binary's error, with how to do without it. */
function notFound(err) {
  if (err.code === 'ERR_RESPLOAD_TESTING_NOT_FOUND') {
    err.message += '; or use a server already running: RESPLOAD_URL=redis://HOST:PORT'
  }
  throw err
}

/** The `RedisServer` of a server the addon started, once the helper's client reaches it. */
async function ourServer(started, options) {
  const host = '127.0.0.1'
  const certs = started.certsDir ? new TlsCerts(started.certsDir) : undefined
  const scheme = certs ? 'rediss' : 'redis'
  const { port, password } = { port: started.port, password: options.password }
  const url = password !== undefined
    ? `${scheme}://:${encodeURIComponent(password)}@${host}:${port}`
    : `${scheme}://${host}:${port}`
  const fields = { host, port, url, pid: started.pid, dir: started.dir, version: '', password,
    tls: certs, tlsAuthClients: Boolean(certs && options.tlsAuthClients) }
  const server = new RedisServer(fields, started)
  try {
    const info = await server.command('INFO', 'server')
    server.version = info.match(/^redis_version:(.*)$/m)?.[1]?.trim() ?? ''
  } catch (err) {
    await server.stop()
    throw err
  }
  return server
}

/**
 * A `RedisServer` for a server already running at `url` (`redis://` or `rediss://`, with user,
 * password and database as respload reads them; `rediss://` verified against Mozilla's trusted
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
  const existing = { tls: parsed.protocol === 'rediss:', user, db: Number(dbText) }
  const fields = { host, port, url, pid: 0, dir: '', version: '', password, tls: undefined, tlsAuthClients: false }
  const server = new RedisServer(fields, null, existing)
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
  constructor(nodes, password, certs, tlsAuthClients) {
    /** Every node, primaries first as created (a failover may change roles). */
    this.nodes = nodes
    this.password = password
    /** The certificates every node shares (`tls: true`), else undefined. */
    this.tls = certs ?? undefined
    this.tlsAuthClients = Boolean(certs && tlsAuthClients)
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

  /** Stop every node, and with them the certificates (idempotent). */
  async stop() {
    await Promise.all(this.nodes.map((n) => n.stop()))
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
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
  const started = await native.startServers(nativeOptions({ ...options, cluster: true, primaries, replicas })).catch(notFound)
  const nodes = await Promise.allSettled(started.map((n) => ourServer(n, options)))
  const failed = nodes.find((n) => n.status === 'rejected')
  if (failed) {
    await Promise.all(started.map((n) => n.stop()))
    throw failed.reason
  }
  const servers = nodes.map((n) => n.value)
  return new RedisCluster(servers, options.password, servers[0].tls, options.tlsAuthClients)
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
