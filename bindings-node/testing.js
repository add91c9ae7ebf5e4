'use strict'
// respload/testing: throwaway redis-server processes on free loopback ports, for integration
// tests. Each server runs under a small shell watchdog that holds a pipe from this process:
// when the pipe closes (stop(), a normal exit, a crash, even SIGKILL of this process) the
// watchdog kills redis-server and removes its directory. Nothing outlives the test process.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

const WATCHDOG = `
dir=$1; shift
"$@" &
pid=$!
cleanup() { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
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
    socket.on('data', (chunk) => this.#onData(chunk))
    socket.on('error', (err) => this.#fail(err))
    socket.on('close', () => this.#fail(new Error('connection closed')))
  }

  static open(port, host, timeoutMs = 2000) {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host })
      const timer = setTimeout(() => socket.destroy(new Error(`timeout connecting to ${host}:${port}`)), timeoutMs)
      socket.once('connect', () => {
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
  }

  #fail(err) {
    this.#failure ??= err
    for (const { reject } of this.#pending.splice(0)) reject(err)
  }

  send(args) {
    if (this.#failure) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject })
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
          'install redis-server (Debian: apt-get install redis-server) or set RESPLOAD_REDIS_SERVER',
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

/** A redis-server started by `startRedis()`. */
class RedisServer {
  #child
  #exited
  #connection = null
  #stopped = false

  constructor(fields, child, exited) {
    Object.assign(this, fields)
    this.#child = child
    this.#exited = exited
  }

  /** Send one command and resolve with its reply (error replies reject with `ReplyError`). */
  async command(...args) {
    if (this.#stopped) throw new Error(`redis-server on port ${this.port} was stopped`)
    if (this.#connection === null) {
      const connection = await Connection.open(this.port, this.host)
      if (this.password !== undefined) await connection.send(['AUTH', this.password])
      this.#connection = connection
    }
    return this.#connection.send(args)
  }

  /** Stop the server (SIGTERM, then SIGKILL after 5 s) and remove its directory. Idempotent. */
  async stop() {
    if (this.#stopped) return this.#exited
    this.#stopped = true
    this.#connection?.close()
    this.#child.ref()
    this.#child.stdin.end()
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5000)
    await this.#exited
    clearTimeout(timer)
  }

  async [Symbol.asyncDispose]() {
    await this.stop()
  }
}

/**
 * Start a redis-server on a free loopback port, with persistence off and its files in a
 * temporary directory; resolve once it answers PING. Options: `args` (extra redis-server
 * arguments, e.g. `['--maxmemory', '10mb']`), `password` (sets `requirepass`), `redisServer`
 * (the binary; default `$RESPLOAD_REDIS_SERVER` or `redis-server`), `startTimeoutMs`.
 */
async function startRedis(options = {}) {
  const binary = redisBinary(options)
  const attempts = 5
  let lastError
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await startOnce(binary, await freePort(), options)
    } catch (err) {
      lastError = err
      // Another process took the port between our probe and redis-server's bind: try another.
      if (!err.portInUse) throw err
    }
  }
  throw lastError
}

async function startOnce(binary, port, options) {
  const host = '127.0.0.1'
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-redis-'))
  const logfile = path.join(dir, 'redis.log')
  const args = ['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no',
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
      const connection = await Connection.open(port, host, 500)
      try {
        if (options.password !== undefined) await connection.send(['AUTH', options.password])
        await connection.send(['PING'])
        const info = await connection.send(['INFO', 'server'])
        const field = (name) => info.match(new RegExp(`^${name}:(.*)$`, 'm'))?.[1]?.trim()
        const pid = Number(field('process_id'))
        const url = options.password !== undefined
          ? `redis://:${encodeURIComponent(options.password)}@${host}:${port}`
          : `redis://${host}:${port}`
        return new RedisServer({ host, port, url, pid, dir, version: field('redis_version'), password: options.password },
          child, exited)
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

/** Start a server, call `fn(server)`, and stop the server whatever happens. */
async function withRedis(fn, options = {}) {
  const server = await startRedis(options)
  try {
    return await fn(server)
  } finally {
    await server.stop()
  }
}

module.exports = { startRedis, withRedis, RedisServer, ReplyError }
module.exports.default = module.exports
