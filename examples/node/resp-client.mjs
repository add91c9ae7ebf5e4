// A minimal RESP2 client for the example service: one connection, pipelined requests answered
// in order. Enough for GET/SET; use a full client (ioredis, node-redis) in a real service.
import net from 'node:net'

export class RespClient {
  #socket
  #buffer = Buffer.alloc(0)
  #pending = []

  static connect(port, host = '127.0.0.1') {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port, host }, () => {
        socket.removeListener('error', reject)
        resolve(new RespClient(socket))
      })
      socket.once('error', reject)
    })
  }

  constructor(socket) {
    this.#socket = socket
    socket.setNoDelay(true)
    socket.on('data', (chunk) => this.#onData(chunk))
    socket.on('error', (err) => this.#failAll(err))
    socket.on('close', () => this.#failAll(new Error('connection closed')))
  }

  /** Send one command; resolves with its reply (string, number, null or array). */
  send(...args) {
    let frame = `*${args.length}\r\n`
    for (const arg of args) frame += `$${Buffer.byteLength(String(arg))}\r\n${arg}\r\n`
    return new Promise((resolve, reject) => {
      this.#pending.push({ resolve, reject })
      this.#socket.write(frame)
    })
  }

  close() {
    this.#socket.destroy()
  }

  #onData(chunk) {
    this.#buffer = this.#buffer.length ? Buffer.concat([this.#buffer, chunk]) : chunk
    for (;;) {
      const reply = parse(this.#buffer, 0)
      if (reply === null) break
      this.#buffer = this.#buffer.subarray(reply.next)
      const { resolve, reject } = this.#pending.shift()
      if (reply.error) reject(new Error(reply.value))
      else resolve(reply.value)
    }
  }

  #failAll(err) {
    for (const { reject } of this.#pending.splice(0)) reject(err)
  }
}

/** One reply at `at`: `{ value, next, error }`, or null when more bytes are needed. */
function parse(buf, at) {
  const end = buf.indexOf('\r\n', at)
  if (end < 0) return null
  const type = String.fromCharCode(buf[at])
  const line = buf.toString('utf8', at + 1, end)
  const next = end + 2
  if (type === '+') return { value: line, next }
  if (type === '-') return { value: line, next, error: true }
  if (type === ':') return { value: Number(line), next }
  if (type === '$') {
    const len = Number(line)
    if (len < 0) return { value: null, next }
    if (buf.length < next + len + 2) return null
    return { value: buf.toString('utf8', next, next + len), next: next + len + 2 }
  }
  if (type === '*') {
    const items = []
    let pos = next
    for (let i = 0; i < Number(line); i++) {
      const item = parse(buf, pos)
      if (item === null) return null
      items.push(item.value)
      pos = item.next
    }
    return { value: items, next: pos }
  }
  throw new Error(`unexpected RESP type ${type}`)
}
