// Types of the `respload` package (the JavaScript layer in index.js). The native addon's own
// generated declarations are in native.d.ts.
//
// Workloads are written in the canonical snake_case spec schema (the same as TOML files and the
// Python binding); reports come back with camelCase keys (see docs/node.md for the rule).

// ---------------------------------------------------------------------------------------------
// The workload spec (snake_case, as in TOML files; see docs/spec.md)

/** A duration: `"500ms"`, `"10s"`, `"2m"`, `"1h"`, or a number of seconds. */
export type SpecDuration = string | number

/** The server to load (`[target]`). */
export interface TargetSpec {
  /** `redis://[user[:password]@]host[:port][/db]` or `unix:///path.sock[?db=N]`; excludes host/port/unix. */
  url?: string
  /** Host name or address (default `127.0.0.1`). */
  host?: string
  /** TCP port (default 6379). */
  port?: number
  /** Unix socket path, instead of host and port. */
  unix?: string
  /** ACL user name. */
  user?: string
  /** Password for AUTH; redacted in reports. */
  password?: string
  /** Database to SELECT (default 0). */
  db?: number
  /** CLIENT SETNAME of every connection (default `respload`; empty: none). */
  client_name?: string
  /** RESP protocol version, 2 or 3 (default 2). */
  protocol?: 2 | 3
  /** How long to wait for a connection and its handshake (default `5s`). */
  connect_timeout?: SpecDuration
}

/** Connections, pipelining and when to stop (`[load]`). */
export interface LoadSpec {
  /** Total connections (default 50). */
  connections?: number
  /** Worker threads (default: one per core, at most one per connection). */
  threads?: number
  /** Requests in flight per connection (default 1). */
  pipeline?: number
  /** Measured requests (default 100,000 when `duration` is absent too); `all_keys`: one per key. */
  requests?: number | 'all_keys'
  /** How long to measure; with `requests`, whichever comes first. */
  duration?: SpecDuration
  /** Traffic before measuring starts, not counted. */
  warmup?: SpecDuration
  /** Requests unanswered this long count as `TIMEOUT` errors (default `10s`). */
  timeout?: SpecDuration
  /** Open loop: total requests per second; latency counts from intended send times. */
  rate?: number
  /** Open loop spacing of send times (default `uniform`). */
  arrivals?: 'uniform' | 'poisson'
  /** `false`: a new connection for each batch of requests, like redis-benchmark `-k 0` (default true). */
  keepalive?: boolean
  /** Open the connections and hold them, sending nothing, until `duration` ends (redis-benchmark `-I`). */
  idle?: boolean
}

/** The key space (`[keys]`). */
export interface KeysSpec {
  /** Text before the key number (default `key:`). */
  prefix?: string
  /** Smallest and largest key number, both included (default `[0, 99999]`). */
  range?: [number, number]
  /** Zero-pad key numbers to this many digits. */
  pad?: number
  /** How keys are picked (default `uniform`). */
  distribution?: Distribution
  /** How writing commands pick keys, instead of `distribution`. */
  writes?: Distribution
  /** How reading commands pick keys, instead of `distribution`. */
  reads?: Distribution
}

/** A key distribution: a name (parameters at their defaults) or a table with a `kind`. */
export type Distribution =
  | 'uniform' | 'sequential' | 'parallel' | 'gaussian' | 'zipf' | 'hotset'
  | { kind: 'uniform' | 'sequential' | 'parallel' }
  | { kind: 'gaussian'; median?: number; stddev?: number }
  | { kind: 'zipf'; exponent?: number }
  | { kind: 'hotset'; hot_keys?: number; hot_ops?: number }

/** Values written by SET and friends (`[values]`). */
export interface ValuesSpec {
  /** Bytes per value, a uniform `[min, max]` range, or `[[size, weight], ...]` (default 32). */
  size?: number | [number, number] | Array<[number, number]>
  /** With a `[min, max]` size: the size grows with the key number. */
  size_follows_key?: boolean
  /** Content (default `random`). */
  data?: 'random' | 'fixed' | 'compressible'
  /** With `compressible` data: original size / compressed size aimed at (default 2). */
  compression_ratio?: number
  /** Fill each value afresh per request. */
  fresh?: boolean
  /** `[min, max]` seconds: the built-in `set` sends `EX` with a random TTL from this range. */
  expiry?: [number, number]
}

/** A command template: a line (quotes group words) or one argument per element. */
export type Template = string | string[]

/** The built-in commands (redis-benchmark's `-t` tests). */
export type BuiltinCommand =
  | 'ping' | 'get' | 'set' | 'incr' | 'lpush' | 'rpush' | 'lpop' | 'rpop' | 'sadd' | 'spop'
  | 'hset' | 'zadd' | 'zpopmin' | 'lrange_100' | 'lrange_300' | 'lrange_500' | 'lrange_600'
  | 'mset' | 'mget'

/** One entry of the weighted command mix: a built-in `name`, a `template` or a `chain`. */
export interface CommandSpec {
  /** A built-in command, case-insensitive. */
  name?: BuiltinCommand | Uppercase<BuiltinCommand> | (string & {})
  /** Any command; `{key}`, `{keynum}`, `{value}`, `{rand:LO..HI[:WIDTH]}` are replaced per request. */
  template?: Template
  /** Templates run in order on one key (e.g. HSET, HGETALL, DEL). */
  chain?: Template[]
  /** Name in the report (default: the command's name), upper-cased; prefixes a chain's steps. */
  label?: string
  /** Relative share of picks (default 1). */
  weight?: number
  /** How this command picks keys, instead of the `keys` setting. */
  distribution?: Distribution
}

/** The settings of one phase. */
export interface PhaseSpec {
  /** Phase name in the report (default `main`). */
  name?: string
  /** Whether the phase counts in the totals (default true). */
  measured?: boolean
  target?: TargetSpec
  load?: LoadSpec
  keys?: KeysSpec
  values?: ValuesSpec
  /** Weighted command mix (default SET:GET 1:10). */
  commands?: CommandSpec[]
  /** Seed of the request stream; absent: drawn at start and recorded in the report. */
  seed?: number
  /** Server observation: `info` (default true) reads INFO once per second. */
  observe?: { info?: boolean }
  /** Each connection its own request stream (default true); false: all replay one stream. */
  distinct_streams?: boolean
  /**
   * Files written when the phase ends: `memtier` gets memtier_benchmark's text report of
   * the phase (as its `--out-file`).
   */
  output?: { memtier?: string }
}

/** A workload: one phase, or base settings plus `phases` laid over them in order. */
export interface Workload extends PhaseSpec {
  phases?: PhaseSpec[]
}

// ---------------------------------------------------------------------------------------------
// The report (camelCase; toJSON() gives the snake_case JSON of docs/report.md)

/** Latency summary in milliseconds. */
export interface Latency {
  mean: number
  stddev: number
  min: number
  p50: number
  p90: number
  p95: number
  p99: number
  /** 99.9th percentile (`p99_9` in JSON too: an underscore before a digit stays). */
  p99_9: number
  p99_99: number
  max: number
}

/** Counts and latency of one command, or of all (`totals`). */
export interface Stats {
  ops: number
  opsPerSec: number
  hits: number
  misses: number
  errors: number
  /** `errors / ops`, 0 to 1. */
  errorRate: number
  /** By kind, keys as the server sent them: `WRONGTYPE`, `ERR`, ..., `CONNECTION`, `TIMEOUT`. */
  errorsByKind: Record<string, number>
  bytesSent: number
  bytesReceived: number
  /** From the write (closed loop) or from the intended send time (open loop). */
  latencyMs: Latency
  /** HdrHistogram V2 compressed, base64; values in nanoseconds. */
  histogram: string
  /** Open loop only: service time, from the actual write. */
  serviceMs?: Latency
  /** Open loop only: the service-time histogram, encoded like `histogram`. */
  serviceHistogram?: string
  /**
   * Cluster mode: redirections followed (MOVED, ASK) and retries after TRYAGAIN or
   * CLUSTERDOWN; not errors. Absent when 0.
   */
  redirects?: number
}

/** Latency of one interval, in milliseconds. */
export interface IntervalLatency {
  mean: number
  p50: number
  p99: number
  max: number
}

/** One row of the per-interval timeline. */
export interface TimelineRow {
  /** Seconds since the measurement began, at the end of this interval. */
  t: number
  intervalS: number
  ops: number
  opsPerSec: number
  errors: number
  latencyMs: IntervalLatency
  /** Open loop only: service time in this interval. */
  serviceMs?: IntervalLatency
  connections: number
  histogram: string
  /** Open loop only: the rate asked for during this interval (a ramp's step rate). */
  targetRate?: number
}

/** One interval's figures, delivered while a run goes on. */
export interface Snapshot extends TimelineRow {
  /** The phase running. */
  phase: string
  /** Whether that phase is measured. */
  measured: boolean
}

/** What the load generator itself cost. */
export interface ClientStats {
  threads: number
  connections: number
  cpuUserS: number
  cpuSysS: number
  cpuSPerMillion: number
  loopLagMsMax: number
  reconnects: number
}

/** Facts about the server, read before the run. */
export interface ServerFacts {
  address: string
  version: string
  mode: string
  os: string
  /** Config values by their server names (`maxmemory-policy`, ...), kept as they are. */
  config: Record<string, string>
}

/** One interval of the server's own figures, from INFO (see docs/report.md). */
export interface ServerSample {
  t: number
  /** User + system CPU of the server over the interval, percent of one core. */
  cpuPercent: number
  usedMemory: number
  opsPerSec: number
  connectedClients: number
  keyspaceHits: number
  keyspaceMisses: number
  evictedKeys: number
  latestForkUsec: number
  rdbBgsaveInProgress: boolean
  aofRewriteInProgress: boolean
  role: string
  masterLinkStatus: string
  connectedSlaves: number
  /** The INFO round trip (ms): the observer's own cost. */
  infoMs: number
}

/** Summary of the server samples. */
export interface ServerLoad {
  peakCpuPercent: number
  meanCpuPercent: number
  /** 80: the CPU line to stay under (% of a core). */
  cpuLimitPercent: number
  /** Any interval above `cpuLimitPercent`. */
  cpuOverLimit: boolean
  peakUsedMemory: number
  samples: number
  observerInfoMs: number
  /** Cluster mode, in the summary over every node: the node with the peak CPU. */
  peakNode?: string
}

/** Cluster mode: one node's server samples and their summary. */
export interface NodeServer {
  serverTimeline: ServerSample[]
  serverLoad?: ServerLoad
}

/** The longest stretch without a successful reply, and when it began. */
export interface Availability {
  longestGapMs: number
  longestGapAtS: number
}

/** One fault drill of a phase and what it cost (docs/report.md). */
export interface EventReport {
  drill: string
  mode: string | null
  node: string
  replica: string | null
  atS: number
  startedS: number | null
  finishedS: number | null
  recoveryS: number | null
  forkUsec: number | null
  syncS: number | null
  fullSync: boolean | null
  error: string | null
  opsDuring: number | null
  errorsDuring: number | null
  p99DuringMs: number | null
  p99BeforeMs: number | null
  throughputBefore: number | null
  recoveredAfterS: number | null
  longestGapMs: number | null
}

/** One step of a rate or connection ramp. */
export interface RampStep {
  startS: number
  durationS: number
  targetRate?: number
  connections: number
  ops: number
  opsPerSec: number
  errors: number
  errorRate: number
  latencyMs: Latency
  serviceMs?: Latency
}

/** One step of an SLO search: a point of the latency-versus-throughput curve. */
export interface SloPoint {
  run: number
  rate: number
  achievedRate: number
  durationS: number
  ops: number
  errors: number
  errorRate: number
  percentileMs: number
  latencyMs: Latency
  serviceMs?: Latency
  met: boolean
}

/** The result of an SLO search: the best rate meeting the budget (null if none did). */
export interface SloResult {
  percentile: number
  budgetMs: number
  maxErrorRate: number
  minAchieved: number
  bestRate: number | null
  curve: SloPoint[]
}

/** Results of one phase. */
export interface PhaseReport {
  name: string
  measured: boolean
  durationS: number
  interrupted: boolean
  totals: Stats
  /** By command label (`GET`, `SET`, ...), kept as they are. */
  commands: Record<string, Stats>
  timeline: TimelineRow[]
  client: ClientStats
  /** The server's figures per interval (absent when `observe.info` is off). */
  serverTimeline?: ServerSample[]
  serverLoad?: ServerLoad
  /** Open loop only: the rate asked for (requests per second). */
  targetRate?: number
  /**
   * Cluster mode: per node (`host:port`, kept as it is), the requests it answered or failed
   * on. Absent when not a cluster run.
   */
  nodes?: Record<string, Stats>
  /** Cluster mode: each node's server samples (`host:port`, kept as it is). */
  serverNodes?: Record<string, NodeServer>
  /** The longest stretch without a successful reply. */
  availability: Availability
  /** The phase's fault drills (`events` in the spec). */
  events?: EventReport[]
  /** With a rate or connection ramp: one summary per step. */
  steps?: RampStep[]
  /** An SLO search: the curve and the best rate. */
  slo?: SloResult
  /**
   * A file of the phase's `output` that could not be written when it ended (the path and
   * the OS error); the report is kept.
   */
  outputError?: string
  /** This phase's normalized spec, snake_case, secrets redacted. */
  workload: PhaseSpec
}

/** Budgets for `Report.check()`; every one given must be met. */
export interface Budget {
  /** Largest allowed median latency (ms). */
  p50Ms?: number
  /** Largest allowed 99th percentile latency (ms). */
  p99Ms?: number
  /** Largest allowed 99.9th percentile latency (ms). */
  p999Ms?: number
  /** Largest allowed error rate, 0 to 1. */
  errorRate?: number
  /** Smallest allowed throughput (ops/s over the measured time). */
  minOpsPerSec?: number
}

/** The result of a run, with camelCase keys. */
export declare class Report {
  /** Build a Report from the canonical snake_case JSON (object or text). */
  constructor(json: object | string)
  /** Same as `new Report(json)`. */
  static fromJSON(json: object | string): Report
  schemaVersion: number
  resploadVersion: string
  /** Seconds since the Unix epoch. */
  startedAt: number
  /** Measured seconds, over the measured phases. */
  durationS: number
  /** Whether the run was stopped early (stop(), an abort signal). */
  interrupted: boolean
  seed: number
  totals: Stats
  /** By command label (`GET`, `SET`, ...), kept as they are. */
  commands: Record<string, Stats>
  timeline: TimelineRow[]
  client: ClientStats
  server: ServerFacts
  /** Measured phases' server samples, `t` counting on (absent when `observe.info` is off). */
  serverTimeline?: ServerSample[]
  serverLoad?: ServerLoad
  /**
   * Cluster mode: measured phases together, per node (`host:port`, kept as it is). Absent
   * when not a cluster run.
   */
  nodes?: Record<string, Stats>
  /** Cluster mode: each node's server samples over the measured phases. */
  serverNodes?: Record<string, NodeServer>
  /** The longest stretch without a successful reply over the measured phases. */
  availability: Availability
  /** An SLO search: the result of the last phase that searched. */
  slo?: SloResult
  /** The normalized workload, snake_case, secrets redacted. */
  workload: Workload
  phases: PhaseReport[]
  /** The canonical JSON form, snake_case (what `JSON.stringify(report)` writes). */
  toJSON(): Record<string, unknown>
  /**
   * Assert budgets on the totals (and per command label under `commands`). Throws a
   * node:assert `AssertionError` listing every budget not met; a run that finished no
   * request never passes; an unknown budget key is a `TypeError`. Returns the report.
   */
  check(budget?: Budget & { commands?: Record<string, Budget> }): this
}

// ---------------------------------------------------------------------------------------------
// Running

export interface RunOptions {
  /** Called once per interval (one second) with the interval's figures. */
  onProgress?: (snapshot: Snapshot) => void
  /** Aborting stops the traffic within a second; run() then rejects with an AbortError. */
  signal?: AbortSignal
}

/**
 * Run a workload to its end and resolve with its report. The traffic runs on native threads:
 * the event loop stays free. Rejects with `SpecError`, `ConnectError`, `AuthError`, ... or,
 * when `signal` is aborted, an `AbortError` carrying the partial report.
 */
export declare function run(workload: Workload, options?: RunOptions): Promise<Report>

/** Start a run and return its handle (throws `SpecError` for an invalid workload). */
export declare function start(workload: Workload, options?: Pick<RunOptions, 'onProgress'>): Runner

/** A run in progress. */
export declare class Runner implements AsyncIterable<Snapshot> {
  /** Validate the workload and start it (throws `SpecError` for an invalid one). */
  constructor(workload: Workload, options?: Pick<RunOptions, 'onProgress'>)
  /** Whether the run is over. */
  readonly done: boolean
  /** The report once the run is over; rejects with the run's error. */
  wait(): Promise<Report>
  /** Stop now and resolve with the partial report (marked `interrupted`). */
  stop(): Promise<Report>
  /**
   * Interval snapshots as they come, ending with the run (throws the run's error if it failed).
   * Leaving the loop early stops the run. Not available when `onProgress` was given.
   */
  [Symbol.asyncIterator](): AsyncIterator<Snapshot>
}

/** How to resolve a spec file's `[vars]` (docs/spec.md, "Variables and scales"). */
export interface LoadSpecOptions {
  /** Apply the file's `[scales.NAME]` values over its `[vars]` (e.g. `'ci'`). */
  scale?: string | null
  /** Set single variables the file declares, after the scale. */
  vars?: Record<string, unknown> | null
}

/**
 * Read a `.toml` or `.json` spec file, validate it and return the normalized spec (snake_case,
 * every default filled in), ready for `run()`. Throws `FileError` or `SpecError`.
 */
export declare function loadSpec(path: string | URL, options?: LoadSpecOptions): Workload

/** Validate a workload without running it; returns the normalized spec. Throws `SpecError`. */
export declare function validateSpec(workload: Workload): Workload

/**
 * The workload of a redis-benchmark command line, unchanged (split as a shell would; a leading
 * `redis-benchmark` is skipped): the normalized spec, one phase per test named as
 * redis-benchmark names it, ready for `run()`. Options respload cannot honour yet (`--tls`,
 * `--cluster`, `-k 0`, ...), unknown options, bad values and `-l` throw `SpecError` with the
 * option as `path`; redis-benchmark's warnings are emitted with `process.emitWarning`.
 * Output options (`-q`, `--csv`, `--precision`, `--json`) do not change the workload.
 * Every option: docs/compat.md.
 */
export declare function fromRedisBenchmark(line: string): Workload

/**
 * The workload of a memtier_benchmark command line, unchanged (split as a shell would; a
 * leading `memtier_benchmark` is skipped): the normalized spec, ready for `run()`. `-t` x `-c`
 * make the connections, `-n` counts requests per client (`allkeys`: every key once),
 * `--ratio` weighs SET and GET, each `--command` is a template, `--run-count=N` gives measured
 * phases `run 1` ... `run N`. Options respload cannot honour yet, unknown options and bad
 * values throw `SpecError` with the option as `path`. Every option: docs/compat.md.
 */
export declare function fromMemtier(line: string): Workload

// ---------------------------------------------------------------------------------------------
// Errors

export type RespLoadErrorCode =
  | 'ERR_RESPLOAD_SPEC'
  | 'ERR_RESPLOAD_CONNECT'
  | 'ERR_RESPLOAD_TLS'
  | 'ERR_RESPLOAD_AUTH'
  | 'ERR_RESPLOAD_PROTOCOL'
  | 'ERR_RESPLOAD_FILE'
  | 'ERR_RESPLOAD_INTERNAL'

/** Base class of every respload error. */
export declare class RespLoadError extends Error {
  readonly code: RespLoadErrorCode
  /** The underlying reason, without the context in `message`. */
  readonly detail?: string
}
/** The workload spec is invalid (`ERR_RESPLOAD_SPEC`). */
export declare class SpecError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_SPEC'
  /** The field, e.g. `load.connections`, `phases[1].keys.range` (empty for the whole spec). */
  readonly path: string
}
/** The server could not be reached (`ERR_RESPLOAD_CONNECT`). */
export declare class ConnectError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_CONNECT' | 'ERR_RESPLOAD_TLS'
  /** The address tried, `host:port` or a socket path. */
  readonly addr: string
}
/**
 * The TLS handshake failed (`ERR_RESPLOAD_TLS`): certificate not trusted, wrong name or expired,
 * a client certificate wanted or refused, or a plain-text port. `detail` says what to change.
 */
export declare class TlsError extends ConnectError {
  readonly code: 'ERR_RESPLOAD_TLS'
}
/** The server refused the credentials or the connection setup (`ERR_RESPLOAD_AUTH`). */
export declare class AuthError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_AUTH'
  readonly addr: string
}
/** The server broke the protocol during the connection setup (`ERR_RESPLOAD_PROTOCOL`). */
export declare class ProtocolError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_PROTOCOL'
  readonly addr: string
}
/** A spec file could not be read (`ERR_RESPLOAD_FILE`). */
export declare class FileError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_FILE'
  /** The file. */
  readonly path: string
}
/** A failure inside respload itself (`ERR_RESPLOAD_INTERNAL`). */
export declare class InternalError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_INTERNAL'
}
/** The run was aborted through its signal (Node's convention: code `ABORT_ERR`, `cause` = the signal's reason). */
export declare class AbortError extends Error {
  readonly name: 'AbortError'
  readonly code: 'ABORT_ERR'
  /** The partial report, marked `interrupted`; undefined when the signal was aborted before the start. */
  readonly report?: Report
}

declare const respload: {
  run: typeof run
  start: typeof start
  Runner: typeof Runner
  Report: typeof Report
  loadSpec: typeof loadSpec
  validateSpec: typeof validateSpec
  fromRedisBenchmark: typeof fromRedisBenchmark
  fromMemtier: typeof fromMemtier
  RespLoadError: typeof RespLoadError
  SpecError: typeof SpecError
  ConnectError: typeof ConnectError
  TlsError: typeof TlsError
  AuthError: typeof AuthError
  ProtocolError: typeof ProtocolError
  FileError: typeof FileError
  InternalError: typeof InternalError
  AbortError: typeof AbortError
}
export default respload
