// Types of `respload/testing`: throwaway redis-server processes for integration tests.

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. `['--maxmemory', '10mb']`. */
  args?: string[]
  /** Sets `requirepass`; `url` then carries it and `command()` authenticates. */
  password?: string
  /** The binary (default `$RESPLOAD_REDIS_SERVER`, else `redis-server` on PATH). */
  redisServer?: string
  /** How long to wait for it to accept connections (default 10 000 ms). */
  startTimeoutMs?: number
  /**
   * Serve TLS only, with throwaway certificates made in-process: `--tls-port` on the free
   * port, `--port 0`. `url` is then `rediss://` and `tls` holds the certificate paths.
   */
  tls?: boolean
  /** Also require a client certificate (`--tls-auth-clients yes`, mutual TLS); needs `tls`. */
  tlsAuthClients?: boolean
}

/** A workload `target.tls` for the throwaway CA (and client certificate). */
export interface TestTargetTls {
  ca_file: string
  cert?: string
  key?: string
}

/**
 * Throwaway certificates (EC P-256) made by `tls: true`: `caFile` signs `certFile` (the server's,
 * for 127.0.0.1 and localhost) and `clientCert`. Removed once no server of theirs runs (the
 * server or every node of the cluster stopped), or when the process ends.
 */
export declare class TlsCerts {
  /** The directory holding every file. */
  readonly dir: string
  /** The CA certificate (PEM): `target.tls.ca_file`. */
  readonly caFile: string
  /** The server's certificate (`--tls-cert-file`). */
  readonly certFile: string
  /** The server's private key (`--tls-key-file`). */
  readonly keyFile: string
  /** A client certificate signed by the CA: `target.tls.cert`. */
  readonly clientCert: string
  /** Its private key: `target.tls.key`. */
  readonly clientKey: string
  /** `{ ca_file }`, with `cert` and `key` when `clientCert` is true. */
  targetTls(clientCert?: boolean): TestTargetTls
  /** Remove the directory now (idempotent): stopping its servers does it too. */
  remove(): Promise<void>
}

/**
 * A redis-server on a free loopback port, persistence off, files in a temporary directory; or,
 * from `connectRedis()` (and `startRedis()` with `RESPLOAD_URL` set), a server already running.
 */
export declare class RedisServer {
  /** `127.0.0.1` (for a server already running, its URL's host). */
  readonly host: string
  /** Its port: the TLS port with `tls: true` (it then has no plain-text port). */
  readonly port: number
  /**
   * `redis://127.0.0.1:PORT` (`rediss://` with TLS; with the password when one was set,
   * percent-encoded); for a server already running, the URL given.
   */
  readonly url: string
  /** The redis-server process id. */
  readonly pid: number
  /**
   * Its working directory (removed when it stops); for a server already running, its
   * `CONFIG GET dir`, or `''` when it does not tell (never removed).
   */
  readonly dir: string
  /** `redis_version`. */
  readonly version: string
  readonly password?: string
  /** The certificates when started with `tls: true`. */
  readonly tls?: TlsCerts
  /** Whether it requires a client certificate. */
  readonly tlsAuthClients: boolean
  /** Whether it runs (for a server already running, whether `stop()` was not called yet). */
  readonly running: boolean
  /** A workload `target`: `{ url }`, plus `tls` (the CA, and the client certificate when required) with TLS. */
  target(): { url: string; tls?: TestTargetTls }
  /**
   * Send one command (over TLS with the client certificate when the server has TLS); error
   * replies reject with `ReplyError`. Replies: string, number, null, arrays.
   */
  command(...args: Array<string | number | Uint8Array>): Promise<any>
  /**
   * Stop the server and remove its directory (idempotent); for a server already running, only
   * close the helper's connection.
   */
  stop(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

/** An error reply; `code` is its first word (`ERR`, `WRONGTYPE`, ...). */
export declare class ReplyError extends Error {
  readonly code: string
}

/**
 * Start a redis-server and resolve once it answers the helper's client. It never outlives this
 * process: it is stopped when the process exits, crashes or is killed, even without `stop()`.
 * With the environment variable `RESPLOAD_URL` set (and none of `args`, `password`,
 * `redisServer`, `tls`, `tlsAuthClients` given), the server already running there instead, left
 * running by `stop()`. Its database is emptied (`FLUSHDB`) only when `RESPLOAD_ALLOW_FLUSH=1` is
 * set too; without it, a database that holds keys is refused (the promise rejects with the code
 * `ERR_RESPLOAD_TESTING_NOT_EMPTY`) and an empty one is used as it is.
 */
export declare function startRedis(options?: StartRedisOptions): Promise<RedisServer>

export interface ConnectRedisOptions {
  /** How long to wait for the server to answer PING (default 10 000 ms). */
  timeoutMs?: number
}

/**
 * A `RedisServer` for a server already running at `url` (`redis://` or `rediss://`, with user,
 * password and database), once it answers PING; `stop()` closes only the helper's connection.
 */
export declare function connectRedis(url: string, options?: ConnectRedisOptions): Promise<RedisServer>

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
  /** The certificates every node shares when started with `tls: true`. */
  readonly tls?: TlsCerts
  /** Whether the nodes require a client certificate. */
  readonly tlsAuthClients: boolean
  /** `host:port` of every node, for `target.cluster_seeds`. */
  readonly seeds: string[]
  /** The first node's URL (with the password when one was set). */
  readonly url: string
  /** A workload `target`: `{ url, cluster: true, cluster_seeds: seeds }`, plus `tls` with TLS. */
  target(): { url: string; cluster: true; cluster_seeds: string[]; tls?: TestTargetTls }
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
 * every replica. Its nodes never outlive this process. With `tls: true` the nodes share one set
 * of certificates and also run `--tls-cluster yes --tls-replication yes` (the cluster bus and
 * replication over TLS); `redis-cli` creates it with `--tls`.
 */
export declare function startCluster(options?: StartClusterOptions): Promise<RedisCluster>

/** Start a cluster, call `fn(cluster)`, stop every node whatever happens. */
export declare function withCluster<T>(fn: (cluster: RedisCluster) => Promise<T> | T, options?: StartClusterOptions): Promise<T>

declare const testing: {
  startRedis: typeof startRedis
  withRedis: typeof withRedis
  connectRedis: typeof connectRedis
  RedisServer: typeof RedisServer
  ReplyError: typeof ReplyError
  startCluster: typeof startCluster
  withCluster: typeof withCluster
  RedisCluster: typeof RedisCluster
  TlsCerts: typeof TlsCerts
}
export default testing
