// Types of `respload/testing`: throwaway redis-server processes for integration tests.

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. `['--maxmemory', '10mb']`. */
  args?: string[]
  /** Sets `requirepass`; `url` then carries it and `command()` authenticates. */
  password?: string
  /** The binary (default `$RESPLOAD_REDIS_SERVER`, else `redis-server` on PATH). */
  redisServer?: string
  /** How long to wait for the first PONG (default 10 000 ms). */
  startTimeoutMs?: number
}

/** A redis-server on a free loopback port, persistence off, files in a temporary directory. */
export declare class RedisServer {
  /** `127.0.0.1`. */
  readonly host: string
  readonly port: number
  /** `redis://127.0.0.1:PORT` (with the password when one was set). */
  readonly url: string
  /** The redis-server process id. */
  readonly pid: number
  /** Its working directory (removed when it stops). */
  readonly dir: string
  /** `redis_version`. */
  readonly version: string
  readonly password?: string
  /** Send one command; error replies reject with `ReplyError`. Replies: string, number, null, arrays. */
  command(...args: Array<string | number | Uint8Array>): Promise<any>
  /** Stop the server and remove its directory (idempotent). */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** An error reply; `code` is its first word (`ERR`, `WRONGTYPE`, ...). */
export declare class ReplyError extends Error {
  readonly code: string
}

/**
 * Start a redis-server and resolve once it answers PING. It never outlives this process: it is
 * stopped when the process exits, crashes or is killed, even without `stop()`.
 */
export declare function startRedis(options?: StartRedisOptions): Promise<RedisServer>

/** Start a server, call `fn(server)`, stop the server whatever happens. */
export declare function withRedis<T>(fn: (server: RedisServer) => Promise<T> | T, options?: StartRedisOptions): Promise<T>

declare const testing: {
  startRedis: typeof startRedis
  withRedis: typeof withRedis
  RedisServer: typeof RedisServer
  ReplyError: typeof ReplyError
}
export default testing
