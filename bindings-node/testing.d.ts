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

export interface StartClusterOptions extends StartRedisOptions {
  /** Primary nodes (default 3, at least 3). */
  primaries?: number
  /** Replicas per primary (default 1). */
  replicas?: number
  /** The redis-cli binary (default `$RESPLOAD_REDIS_CLI`, else `redis-cli` on PATH). */
  redisCli?: string
}

/** A Redis Cluster of local `RedisServer` nodes. */
export declare class RedisCluster {
  /** Every node, primaries first as created (a failover may change roles). */
  readonly nodes: RedisServer[]
  readonly password?: string
  /** `host:port` of every node, for `target.cluster_seeds`. */
  readonly seeds: string[]
  /** The first node's URL (with the password when one was set). */
  readonly url: string
  /** A workload `target`: `{ url, cluster: true, cluster_seeds: seeds }`. */
  target(): { url: string; cluster: true; cluster_seeds: string[] }
  /** The nodes that are primaries now. */
  primaries(): Promise<RedisServer[]>
  /** The primary serving `key`'s slot now. */
  owner(key: string): Promise<RedisServer>
  /** Stop every node (idempotent). */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/**
 * Start a Redis Cluster (cluster-enabled nodes, `cluster-node-timeout 2000`, created with
 * `redis-cli --cluster create`); resolves once every node says `cluster_state:ok` and lists
 * every replica. Its nodes never outlive this process.
 */
export declare function startCluster(options?: StartClusterOptions): Promise<RedisCluster>

/** Start a cluster, call `fn(cluster)`, stop every node whatever happens. */
export declare function withCluster<T>(fn: (cluster: RedisCluster) => Promise<T> | T, options?: StartClusterOptions): Promise<T>

declare const testing: {
  startRedis: typeof startRedis
  withRedis: typeof withRedis
  RedisServer: typeof RedisServer
  ReplyError: typeof ReplyError
  startCluster: typeof startCluster
  withCluster: typeof withCluster
  RedisCluster: typeof RedisCluster
}
export default testing
