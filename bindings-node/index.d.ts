// Types of the `respload` package (the JavaScript layer in index.js). The native addon's own
// generated declarations are in native.d.ts.
//
// The workload spec (spec.d.ts: snake_case keys, as in spec files) and the report objects
// (report.d.ts: camelCase keys, see docs/node.md for the rule) are generated from the Rust types
// and their doc comments by scripts/gen_reference.py. What is written here is the JavaScript
// layer's own: the Report class's methods, budgets, runs, spec loading and errors.

import type { Spec } from './spec'
import type { PhaseReport, ReportFields, Snapshot } from './report'

export * from './spec'
export * from './report'

// ---------------------------------------------------------------------------------------------
// The report

/** Budgets for `Report.check()`; every one given must be met. */
export interface Budget {
  /** Largest allowed median latency (ms). */
  p50Ms?: number
  /** Largest allowed 90th percentile latency (ms). */
  p90Ms?: number
  /** Largest allowed 99th percentile latency (ms). */
  p99Ms?: number
  /** Largest allowed 99.9th percentile latency (ms). */
  p99_9Ms?: number
  /** @deprecated The old name of `p99_9Ms` (kept for one release). */
  p999Ms?: number
  /** Largest allowed latency of any request (ms). */
  maxMs?: number
  /** Largest allowed error rate, 0 to 1. */
  errorRate?: number
  /** Smallest allowed throughput (ops/s over the measured time). */
  minOpsPerSec?: number
}

/**
 * The result of a run: the report's JSON with camelCase keys (every field of `ReportFields`), and
 * the methods below.
 */
export interface Report extends ReportFields {}
export declare class Report {
  /** Build a Report from the canonical snake_case JSON (object or text). */
  constructor(json: object | string)
  /** Same as `new Report(json)`. */
  static fromJSON(json: object | string): Report
  /**
   * Read a report written by `respload run --json` or `save()`: an older schema version is
   * upgraded, a newer one throws `SpecError` naming its version; a missing file, `FileError`.
   */
  static load(path: string | URL): Report
  /** Write the canonical JSON (what `respload run --json` writes) to `path`. */
  save(path: string | URL): void
  /** The phase named `name`, or `undefined` when the run had none of that name. */
  phase(name: string): PhaseReport | undefined
  /** The canonical JSON form, snake_case (what `JSON.stringify(report)` writes). */
  toJSON(): Record<string, unknown>
  /**
   * The timeline as an HdrHistogram interval log (what `respload run --hdr-log` writes): one
   * interval histogram per timeline row, values in nanoseconds. The run needs
   * `output: { interval_histograms: true }`, else a `SpecError` names that option.
   */
  hdrLog(): string
  /**
   * The latency distribution of the measured requests (or of one `command` label's) as
   * HdrHistogram's percentile distribution, the `.hgrm` text its plotter and
   * HistogramLogAnalyzer draw (what `respload compare --hgrm` writes): value in ms,
   * percentile, count, 1/(1-percentile). Empty when no request finished; an unknown label
   * throws `SpecError`.
   */
  percentileDistribution(command?: string): string
  /**
   * Assert budgets on the totals (and per command label under `commands`). Throws a
   * node:assert `AssertionError` listing every budget not met; a run that finished no
   * request, or was interrupted, never passes; an unknown budget key is a `TypeError`, a
   * negative limit (or an error rate above 1) a `SpecError`. Returns the report.
   *
   * When `validity.trusted` is false it also emits a process warning (`process.emitWarning`,
   * name `UntrustedReportWarning`, code `RESPLOAD_UNTRUSTED`) naming each failed validity check,
   * its phase and its detail; the warning alone does not fail the check.
   */
  check(budget?: Budget & { commands?: Record<string, Budget> }): this
}

// ---------------------------------------------------------------------------------------------
// Running

export interface RunOptions {
  /** Called once per interval (one second) with the interval's figures. */
  onProgress?: (snapshot: Snapshot) => void
  /**
   * Write the CLI's live line (phase, seconds, ops/s, p50/p99/max, errors, connections) to
   * stderr once per interval, only when stderr is a terminal (`process.stderr.isTTY`); nothing
   * otherwise. Default false: the library prints nothing unless asked.
   */
  progress?: boolean
  /**
   * Aborting stops the traffic within a second: run() then rejects with an AbortError carrying
   * the partial report; a started Runner's wait() resolves with the partial report, marked
   * `interrupted` (as stop() does). Already aborted: nothing starts (AbortError).
   */
  signal?: AbortSignal
  /**
   * `[index, count]`: run shard `index` (0-based) of `count` hosts running the workload
   * together (see `shardSpec`).
   */
  shard?: [number, number]
  /**
   * Open the connections, then send the first request at this instant: a `Date`, UNIX seconds,
   * or RFC 3339 text. Rejects with `SpecError` (path `start_at`) before any traffic when it
   * passed by more than a second.
   */
  startAt?: Date | number | string
}

/**
 * Run a workload to its end and resolve with its report. The traffic runs on native threads:
 * the event loop stays free. Rejects with `SpecError`, `ConnectError`, `AuthError`, ... or,
 * when `signal` is aborted, an `AbortError` carrying the partial report.
 */
export declare function run(workload: Spec | Workload, options?: RunOptions): Promise<Report>

/** Start a run and return its handle (throws `SpecError` for an invalid workload). */
export declare function start(workload: Spec | Workload, options?: RunOptions): Runner

/** A run in progress. */
export declare class Runner implements AsyncIterable<Snapshot> {
  /** Validate the workload and start it (throws `SpecError` for an invalid one). */
  constructor(workload: Spec | Workload, options?: RunOptions)
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
  /** `await using runner = start(spec)`: stops the run (if still going) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>
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
 * @deprecated Loading is `Workload.fromFile(path, options)` in every language (its `spec` is
 * this normalized spec); kept for one release.
 */
export declare function loadSpec(path: string | URL, options?: LoadSpecOptions): Spec

/**
 * A validated workload, the core's `Workload` (Python's `respload.Workload`): `spec` is its
 * normalized spec (snake_case, every default filled in, secrets kept so that it can run).
 * `run()`, `start()`, `shardSpec()` and `validateSpec()` take one as they take a spec object.
 */
export declare class Workload {
  /** Check a spec object. Throws `SpecError` naming the bad field. */
  constructor(spec: Spec)
  /** The normalized spec. */
  readonly spec: Spec
  /**
   * Read a `.toml` or `.json` spec file and validate it (Python's `Workload.from_file`, Rust's
   * `Workload::from_file`). Throws `FileError` or `SpecError`.
   */
  static fromFile(path: string | URL, options?: LoadSpecOptions): Workload
  /** The workload of a redis-benchmark command line (as `fromRedisBenchmark`). */
  static fromRedisBenchmark(line: string): Workload
  /** The workload of a memtier_benchmark command line (as `fromMemtier`). */
  static fromMemtier(line: string): Workload
  /** Shard `index` (0-based) of `count` hosts running this workload together (as `shardSpec`). */
  shard(index: number, count: number): Workload
  /**
   * The normalized spec with its secrets (passwords, the TLS key's file and passphrase) shown
   * as `***`, for `JSON.stringify` and `inspect`: `spec` keeps them, to run.
   */
  toJSON(): Spec
}

/** Validate a workload without running it; returns the normalized spec. Throws `SpecError`. */
export declare function validateSpec(workload: Spec | Workload): Spec

/**
 * Shard `index` (0-based) of `count` hosts running `workload` together: the normalized spec of
 * this host's share (its connections, request budgets and rate, the shares summing to the
 * whole; a contiguous part of `keys.range` where keys are walked in order; its own seed; fault
 * drills and server observation on shard 0 only). Throws `SpecError` naming what cannot be
 * shared (fewer connections or requests than shards, an SLO search). A connection ramp is
 * dealt out in turn (`load.connections_ramp.share`).
 */
export declare function shardSpec(workload: Spec | Workload, shard: [number, number]): Spec

/**
 * One report of the reports of hosts that ran one workload together: the shards of
 * `run(spec, { shard: [i, n] })`, each once, or several runs of one workload; `Report` objects
 * or report file paths. The percentiles are those of one histogram holding every host's
 * latencies; counts, rates and errors are summed; timeline rows line up by wall-clock second;
 * `hosts` lists each host. Throws `SpecError` naming what makes them not one workload's.
 */
export declare function mergeReports(reports: Array<Report | string | URL>): Report

/** One metric of one command (`ALL` for the totals) of one phase, in every report compared. */
export interface ComparisonRow {
  phase: string
  command: string
  /** `ops_per_sec`, `p50`, `p99`, `p99_9`, `max` (latencies in ms) or `error_rate`. */
  metric: string
  /** The value in each report, the baseline's first (`null` where a report lacks it). */
  values: Array<number | null>
  /** Each report's change against the baseline: relative, except `error_rate`'s difference. */
  changes: Array<number | null>
  /** Whether each report is worse than the baseline beyond noise. */
  worse: boolean[]
}

/** Reports compared: a baseline and later runs. */
export declare class Comparison {
  private constructor()
  /** The reports' labels, the baseline first. */
  readonly labels: string[]
  readonly rows: ComparisonRow[]
  /** The limits checked, as read. */
  readonly limits: string[]
  /** Each limit a later run crossed. */
  readonly failures: string[]
  /** The comparison as `respload compare` prints it: a table per phase (also `toString()`). */
  readonly text: string
  /** The rows where a later run is worse than the baseline beyond noise. */
  readonly worse: ComparisonRow[]
  /**
   * Throw an `AssertionError` naming every phase, command and metric that moved past `limits`
   * (`{ p99: '+10%', ops_per_sec: '-5%', error_rate: 0.001 }`); returns the checked comparison.
   */
  check(limits?: Partial<Record<'ops_per_sec' | 'p50' | 'p99' | 'p99_9' | 'max' | 'error_rate', string | number>>): Comparison
}

/**
 * Compare a baseline report with later ones (`Report` objects or report file paths): ops/s,
 * p50, p99, p99.9, max and error rate per phase and command, changes marked `worse` beyond noise.
 */
export declare function compare(baseline: Report | string | URL, current: Report | string | URL, ...more: Array<Report | string | URL>): Comparison

/**
 * The workload of a redis-benchmark command line, unchanged (split as a shell would; a leading
 * `redis-benchmark` is skipped): the normalized spec, one phase per test named as
 * redis-benchmark names it, ready for `run()`. Options respload cannot honour yet (`-x`,
 * `--tls-ciphers`, ...), unknown options, bad values and `-l` throw `SpecError` with the
 * option as `path`; redis-benchmark's warnings are emitted with `process.emitWarning`.
 * Output options (`-q`, `--csv`, `--precision`, `--json`) do not change the workload.
 * Every option: docs/compat.md.
 */
export declare function fromRedisBenchmark(line: string): Spec

/**
 * The workload of a memtier_benchmark command line, unchanged (split as a shell would; a
 * leading `memtier_benchmark` is skipped): the normalized spec, ready for `run()`. `-t` x `-c`
 * make the connections, `-n` counts requests per client (`allkeys`: every key once),
 * `--ratio` weighs SET and GET, each `--command` is a template, `--run-count=N` gives measured
 * phases `run 1` ... `run N`. Options respload cannot honour yet, unknown options and bad
 * values throw `SpecError` with the option as `path`. Every option: docs/compat.md.
 */
export declare function fromMemtier(line: string): Spec

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
  /** The underlying reason, without the context in `message` (as Python's `reason`). */
  readonly reason?: string
  /** @deprecated The old name of `reason` (kept for one release). */
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
  /** The address tried, `host:port` or a socket path (as Python's `address`). */
  readonly address: string
  /** @deprecated The old name of `address` (kept for one release). */
  readonly addr: string
  /**
   * The operating system's error number (e.g. 111, `ECONNREFUSED` on Linux), positive as
   * Python's `errno` (Node's own system errors negate it); absent when there is none.
   */
  readonly errno?: number
}
/**
 * The TLS handshake failed (`ERR_RESPLOAD_TLS`): certificate not trusted, wrong name or expired,
 * a client certificate wanted or refused, or a plain-text port. `reason` says what to change.
 */
export declare class TlsError extends ConnectError {
  readonly code: 'ERR_RESPLOAD_TLS'
}
/** The server refused the credentials or the connection setup (`ERR_RESPLOAD_AUTH`). */
export declare class AuthError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_AUTH'
  /** The server's address. */
  readonly address: string
  /** @deprecated The old name of `address` (kept for one release). */
  readonly addr: string
}
/** The server broke the protocol during the connection setup (`ERR_RESPLOAD_PROTOCOL`). */
export declare class ProtocolError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_PROTOCOL'
  /** The server's address. */
  readonly address: string
  /** @deprecated The old name of `address` (kept for one release). */
  readonly addr: string
}
/** A spec file could not be read, or an output file written (`ERR_RESPLOAD_FILE`). */
export declare class FileError extends RespLoadError {
  readonly code: 'ERR_RESPLOAD_FILE'
  /** The file. */
  readonly path: string
  /** The operating system's error number (e.g. 2, `ENOENT`), as in `ConnectError`. */
  readonly errno?: number
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
  Workload: typeof Workload
  loadSpec: typeof loadSpec
  validateSpec: typeof validateSpec
  shardSpec: typeof shardSpec
  mergeReports: typeof mergeReports
  Comparison: typeof Comparison
  compare: typeof compare
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
