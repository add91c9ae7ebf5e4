// Types of the `respload` package (the JavaScript layer in index.js). The native addon's own
// generated declarations are in native.d.ts.
//
// The workload spec (spec.d.ts: snake_case keys, as in spec files) and the report objects
// (report.d.ts: camelCase keys, see docs/node.md for the rule) are generated from the Rust types
// and their doc comments by scripts/gen_reference.py, and so are the error classes, the budget
// of check() and the comparison's row and metric types (names.d.ts, from the core's names:
// `respload schema bindings`). What is written here is the JavaScript layer's own: the Report
// class's methods, runs, spec loading, traces (records, models, capture reports: not in the
// generated schemas) and AbortError.

import type { Spec, TargetSpec } from './spec'
import type { PhaseReport, ReportFields, Snapshot } from './report'
import type * as errors from './names'
import type { Budget, CompareLimits, ComparisonFields, ComparisonRow } from './names'

export * from './spec'
export * from './report'
export * from './names'

// ---------------------------------------------------------------------------------------------
// The report

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
   * The report as one self-contained HTML page (what `respload run --html` writes): the
   * verdict, the timeline, the latency percentiles per phase and command, the commands,
   * hosts and workload; scripts and data inlined, so it opens with no network.
   */
  toHtml(): string
  /**
   * Assert budgets on the totals (and per command label under `commands`). Throws a
   * node:assert `AssertionError` listing every budget not met; a run that finished no
   * request, or was interrupted, never passes; an unknown limit key is a `TypeError` naming it
   * and the allowed ones, a negative limit (or an error rate above 1) a `SpecError`. Returns
   * the report.
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
   * together (see `Workload.shard`).
   */
  shard?: [number, number]
  /**
   * Open the connections, then send the first request at this instant: a `Date`, UNIX seconds,
   * or RFC 3339 text. Rejects with `SpecError` (path `start_at`) before any traffic when it
   * passed by more than a second.
   */
  startAt?: Date | number | string
  /**
   * With `shard`: run the phases in step across the hosts, meeting before each phase (the
   * first too, without `startAt`) on the Redis at this URL (any server every host reaches; the
   * target will do), so that no host starts phase k + 1 before every host finished phase k.
   * A host that never arrives fails the others with `BarrierError`.
   */
  barrier?: string
  /**
   * The run's name on the barrier server, the same on every host and new for each run
   * (default: derived from the spec, the shard count and `startAt`; needed without `startAt`).
   */
  barrierId?: string
  /** How long a host waits at the barrier for the others: seconds or text such as `'5m'` (default 5 minutes). */
  barrierTimeout?: number | string
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
 * A validated workload, the core's `Workload` (Python's `respload.Workload`): `spec` is its
 * normalized spec (snake_case, every default filled in, secrets kept so that it can run).
 * `run()`, `start()` and `validateSpec()` take one as they take a spec object.
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
  /**
   * Shard `index` (0-based) of `count` hosts running this workload together: this host's
   * share (its connections, request budgets and rate, the shares summing to the whole; a
   * contiguous part of `keys.range` where keys are walked in order; its own seed; fault drills
   * and server observation on shard 0 only). Throws `SpecError` naming what cannot be shared
   * (fewer connections or requests than shards, an SLO search). A connection ramp is dealt out
   * in turn (`load.connections_ramp.share`).
   */
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
 * One report of the reports of hosts that ran one workload together: the shards of
 * `run(spec, { shard: [i, n] })`, each once, or several runs of one workload; `Report` objects
 * or report file paths. The percentiles are those of one histogram holding every host's
 * latencies; counts, rates and errors are summed; timeline rows line up by wall-clock second;
 * `hosts` lists each host. Throws `SpecError` naming what makes them not one workload's.
 */
export declare function mergeReports(reports: Array<Report | string | URL>): Report

/**
 * Reports compared: a baseline and later runs. Its `labels`, `rows`, `limits` and `failures` are
 * the core's comparison (`ComparisonFields`, generated), and the methods below.
 */
export interface Comparison extends ComparisonFields {}
export declare class Comparison {
  private constructor()
  /** The comparison as `respload compare` prints it: a table per phase (also `toString()`). */
  readonly text: string
  /**
   * The compared reports as one self-contained HTML page (what `respload report A.json
   * B.json --html` writes): the verdicts, each report's timeline and percentiles overlaid.
   */
  toHtml(): string
  /** The rows where a later run is worse than the baseline beyond noise. */
  readonly worse: ComparisonRow[]
  /**
   * Throw an `AssertionError` naming every phase, command and metric that moved past `limits`
   * (`{ p99Ms: '+10%', opsPerSec: '-5%', errorRate: 0.001 }`: the keys of `check()` on a
   * report); returns the checked comparison. An unknown key is a `TypeError`.
   */
  check(limits?: CompareLimits): Comparison
}

/** How `compare()` names its reports. */
export interface CompareOptions {
  /** One label per report, in order (default: the file names, else `baseline` and `current`, or `run 1` ...). */
  labels?: string[]
}

/**
 * Compare a baseline report with later ones (`Report` objects or report file paths): ops/s,
 * p50, p90, p99, p99.9, max and error rate per phase and command, changes marked `worse`
 * beyond noise.
 * A last argument `{ labels }` names the reports.
 */
export declare function compare(
  ...args:
    | [Report | string | URL, Report | string | URL, ...Array<Report | string | URL>]
    | [Report | string | URL, Report | string | URL, ...Array<Report | string | URL>, CompareOptions]
): Comparison

/**
 * The workload of a redis-benchmark command line, unchanged (split as a shell would; a leading
 * `redis-benchmark` is skipped, a leading `valkey-benchmark` too, the line then read as
 * valkey-benchmark's): the normalized spec, one phase per test named as redis-benchmark names
 * it, ready for `run()`. Options respload cannot honour (`--rdma`, `--fuzz`), unknown options,
 * bad values, `-l` and `-x` with a command (only the CLI reads standard input) throw
 * `SpecError` with the option as `path`; redis-benchmark's warnings are emitted with
 * `process.emitWarning`.
 * Output options (`-q`, `--csv`, `--precision`, `--json`) do not change the workload.
 * Every option: docs/compat.md.
 */
export declare function fromRedisBenchmark(line: string): Spec

/**
 * The workload of a memtier_benchmark command line, unchanged (split as a shell would; a
 * leading `memtier_benchmark` is skipped): the normalized spec, ready for `run()`. `-t` x `-c`
 * make the connections, `-n` counts requests per client (`allkeys`: every key once),
 * `--ratio` weighs SET and GET, each `--command` is a template, `--run-count=N` gives measured
 * phases `run 1` ... `run N`. Combinations respload cannot run yet, unknown options and bad
 * values throw `SpecError` with the option as `path`. Every option: docs/compat.md.
 */
export declare function fromMemtier(line: string): Spec

// ---------------------------------------------------------------------------------------------
// Traces

/**
 * One argument of a traced command: its text; its bytes as a `Buffer` when they are not UTF-8;
 * or `{ size }`, a value of that many bytes whose content the trace does not hold (Twitter
 * cache traces give sizes only; a replay writes that many bytes of filler).
 */
export type TraceArg = string | Uint8Array | { size: number }

/** One command of a trace (a line of respload's JSON lines: `t_us`, `db`, `client`, `args`). */
export interface TraceRecord {
  /**
   * When the server ran it: microseconds since the UNIX epoch (MONITOR's clock), or on the
   * trace's own clock (a Twitter trace's seconds).
   */
  tUs: number
  /** The database it ran on. */
  db: number
  /** Who sent it: `ADDR:PORT`, `unix:PATH`, `lua`, or a trace's own client id. */
  client: string
  /** The command's name, then its arguments. */
  args: TraceArg[]
}

export type TraceFormat = 'respload' | 'monitor' | 'twitter'

export interface TraceOpenOptions {
  /** The file's format, when its first line does not tell. */
  format?: TraceFormat | null
}

/** Options of `trace.model()`. */
export interface ModelOptions {
  /** Multiply the trace's rate by this (default 1). */
  rateX?: number
  /** Multiply the number of keys by this (default 1). */
  keysX?: number
  /** `target.url` of the spec (default none: the spec's default target). */
  url?: string
  /** How many of the most popular keys the popularity error compares (default 1000; 0: all). */
  topKeys?: number
}

/** One command of a model's mix: its share of the trace and of the model. */
export interface MixShare {
  /** The command name, upper-cased. */
  name: string
  /** Its share of the trace's commands (0 to 1). */
  traceShare: number
  /** Its share of the model's picks (0 to 1; 0 when left out). */
  modelShare: number
  /** What the spec sends for it (`get`, a template, or why it is left out). */
  modelledAs: string
}

/** How close a model is to its trace (camelCase; `toJSON()` gives the core's snake_case). */
export interface ModelFit {
  /** Commands read (records with a command name). */
  commands: number
  /** Distinct keys the commands touched. */
  distinctKeys: number
  /** From the first command to the last, seconds. */
  durationS: number
  /** Commands per second over the trace. */
  meanRate: number
  /** The command mix, most frequent first. */
  mix: MixShare[]
  /** The Zipf exponent fitted to the keys' popularity (null with fewer than 2 keys). */
  zipfExponent: number | null
  /** The Zipf exponents of reads' and writes' keys, when the spec gives each its own. */
  zipfReadsWrites: [number, number] | null
  /** The read and write key spaces: distinct keys only read, only written, and both. */
  keySpaces: { readOnly: number; writtenOnly: number; readAndWritten: number }
  /**
   * Largest difference between the trace's and the model's cumulative share of accesses over
   * the most popular keys (ranks 1 to `topKeys`), 0 to 1.
   */
  popularityError: number
  /**
   * The key distribution chosen: `zipf`, `hotset`, `uniform`, `empirical` (the most popular
   * keys' own shares and a fitted tail), or `none` (no keys).
   */
  popularity: string
  /** Value sizes written: [bytes, share], at most 16 buckets. */
  sizes: Array<[number, number]>
  /** TTLs set: [seconds, share], at most 16 buckets. */
  ttls: Array<[number, number]>
  /** Commands per second, one entry per `rateStepS` seconds of the trace. */
  rateProfile: number[]
  /** Seconds per entry of `rateProfile`. */
  rateStepS: number
  /** What the spec could not express, one sentence each. */
  notes: string[]
}

/** A workload spec fitted to a trace (`trace.model()`). */
export declare class Model {
  private constructor()
  /** The fitted spec (snake_case), ready for `run()` and `new Workload()`. */
  readonly spec: Spec
  /** How close it is to the trace. */
  readonly fit: ModelFit
  /** The spec as a validated `Workload` (throws `SpecError` as `new Workload()` does). */
  workload(): Workload
  /** The spec as TOML, the fit summarized in comments at the top (what `respload model` writes). */
  toToml(): string
  /** The fit in a few human-readable lines. */
  summary(): string
  /** `{ spec, fit }` in the core's snake_case form. */
  toJSON(): { spec: Spec; fit: Record<string, unknown> }
}

/** Options of `Trace.capture()` and `Trace.startCapture()`. */
export interface CaptureOptions {
  /** The server's URL (`redis://host:port`, `rediss://`, with credentials); wins over `target.url`. */
  url?: string | URL
  /**
   * The server as a spec's `target` (host/port, TLS, credentials; `cluster: true`: every
   * primary, into the one file). Neither: the spec's default target.
   */
  target?: TargetSpec
  /** The trace file to write: JSON lines, gzip-compressed when it ends in `.gz`. */
  out: string | URL
  /** How long to capture (`'60s'`, or seconds); until stopped without it. */
  duration?: string | number
  /** Stop after this many commands. */
  maxCommands?: number
  /** Aborting stops the capture; the file keeps what was written. */
  signal?: AbortSignal
}

/** One server's part of a capture. */
export interface NodeCapture {
  /** Its address. */
  address: string
  /** Commands captured from it. */
  commands: number
  /** Its CPU (percent of one core) over the second before MONITOR started. */
  cpuBeforePercent: number | null
  /** Its CPU over the capture, MONITOR's cost included. */
  cpuDuringPercent: number | null
}

/** What a capture recorded (camelCase). */
export interface CaptureReport {
  /** The trace file written. */
  out: string
  /** Commands written to it. */
  commands: number
  /** Seconds from MONITOR's start to the capture's end. */
  durationS: number
  /** Arguments redacted (passwords and ACL rules). */
  redacted: number
  /** MONITOR lines that could not be read as a command (not written). */
  malformed: number
  /** Whether it was stopped (`stop()`, the signal) before its duration or command count. */
  interrupted: boolean
  /** Each server captured. */
  nodes: NodeCapture[]
}

/** A capture in progress (`Trace.startCapture()`). */
export declare class Capture {
  private constructor()
  /** Whether the capture is over. */
  readonly done: boolean
  /**
   * Whether MONITOR is on at every server captured: each command they run from then on is in
   * the trace (true about a second after the start, and from then on).
   */
  readonly started: boolean
  /**
   * Resolves `true` once `started`, or `false` when the capture ends without starting
   * (`wait()` gives its error) or `timeoutMs` passes.
   */
  whenStarted(options?: { timeoutMs?: number }): Promise<boolean>
  /** The report once it is over; rejects with `ConnectError`, `AuthError`, `FileError`, ... */
  wait(): Promise<CaptureReport>
  /** Stop now (within 100 ms; the file keeps what was written): the report, marked `interrupted`. */
  stop(): Promise<CaptureReport>
  /** `await using capture = Trace.startCapture(...)`: stops it (if still going) when the scope ends. */
  [Symbol.asyncDispose](): Promise<void>
}

/** The lines of a trace that could not be read as a command. */
export interface TraceMalformed {
  /** How many. */
  count: number
  /** The first of them, as `line N: reason`. */
  lines: string[]
}

/**
 * A trace file (respload's JSON lines, plain or `.gz`; a `redis-cli MONITOR` log; a Twitter
 * cache-trace CSV). Each pass (`for (const rec of trace)` on the event loop's thread,
 * `for await (const rec of trace)` off it, `model()`) reads the file anew, in batches, never
 * whole. Malformed lines are skipped and counted.
 */
export declare class Trace implements Iterable<TraceRecord>, AsyncIterable<TraceRecord> {
  /** Open the trace at `path` (same as `Trace.open`). */
  constructor(path: string | URL, options?: TraceOpenOptions)
  /**
   * Open the trace at `path`. Throws `FileError` when it cannot be read, `SpecError` (path
   * `format`) for an unknown format.
   */
  static open(path: string | URL, options?: TraceOpenOptions): Trace
  /**
   * Capture what a server executes into the trace file `out` through MONITOR (secrets
   * redacted) until `duration` or `maxCommands` is reached, and resolve with the capture
   * report. Rejects with `SpecError`, `ConnectError`, `AuthError`, `FileError`, ... or, when
   * `signal` is aborted, an `AbortError` whose `report` is the capture report (the file keeps
   * what was written).
   */
  static capture(options: CaptureOptions): Promise<CaptureReport>
  /** Start a capture (as `capture()`) and return its handle, to `stop()` when done. */
  static startCapture(options: CaptureOptions): Capture
  /** The file. */
  readonly path: string
  /** Its format (told by its first line, or given). */
  readonly format: TraceFormat
  /**
   * The lines that could not be read as a command. Known after a whole pass over the file;
   * read here with one pass (on the event loop's thread) when none was made yet.
   */
  readonly malformed: TraceMalformed
  /**
   * Fit a workload spec to the trace in one pass, off the event loop's thread: its command
   * mix, key popularity, value sizes, TTLs and rate. Rejects with `FileError`.
   */
  model(options?: ModelOptions): Promise<Model>
  /** Replay this trace: `replay(this, options)`, in its format. */
  replay(options?: ReplayOptions): Promise<Report>
  [Symbol.iterator](): Iterator<TraceRecord>
  [Symbol.asyncIterator](): AsyncIterator<TraceRecord>
}

/**
 * Options of `replay()`: the server, the spec's `replay` table in camelCase, run options, and
 * spec fields that apply to a replay (`name`, `observe`, `output`, `thresholds`: snake_case, as
 * in a spec).
 */
export interface ReplayOptions
  extends Pick<RunOptions, 'signal' | 'onProgress' | 'progress'>,
    Pick<Spec, 'name' | 'observe' | 'output' | 'thresholds'> {
  /** The server's URL; wins over `target.url`. Neither: the spec's default target. */
  url?: string | URL
  /** The server as a spec's `target`. */
  target?: TargetSpec
  /** The trace's format, when its first line does not tell (a `Trace` given tells its own). */
  format?: TraceFormat
  /** How much faster than recorded (default 1). Give `speed` or `rate`, not both. */
  speed?: number
  /** The mean rate to replay at, in requests per second. */
  rate?: number
  /** Connections to hash the recorded clients onto (default: one per recorded client). */
  connections?: number
  /** Written before every key (e.g. `'replay:'`). */
  keyPrefix?: string
  /** Replace every key with a hash of it (16 hex digits). */
  keyHash?: boolean
  /** Replay only these commands (a command dropped by default only when listed here). */
  keep?: string[]
  /** Never replay these commands, besides those dropped by default. */
  drop?: string[]
  /** Passes over the trace (default 1). */
  loops?: number
  /** Write the keys the trace reads before it writes them first (default true). */
  prefill?: boolean
  /** The value size of a prefilled key whose size the trace does not tell (default 64). */
  prefillSize?: number
}

/**
 * Replay a trace (its path, or a `Trace`) against a server: its commands at their recorded
 * instants (scaled by `speed`, or to the mean `rate`), each recorded client's in order. An
 * ordinary run of the spec `{ target, replay: { file, ... } }` (as `run()`: rejects with
 * `SpecError` before any traffic, `ConnectError`, ..., or an `AbortError` with the partial
 * report); the report's `phases[0].replay` says how faithful it was.
 */
export declare function replay(file: string | URL | Trace, options?: ReplayOptions): Promise<Report>

// ---------------------------------------------------------------------------------------------
// Errors

/** The run (or capture) was aborted through its signal (Node's convention: code `ABORT_ERR`, `cause` = the signal's reason). */
export declare class AbortError<R = Report> extends Error {
  readonly name: 'AbortError'
  readonly code: 'ABORT_ERR'
  /**
   * The partial report, marked `interrupted` (of an aborted `Trace.capture()`, its
   * `CaptureReport`); undefined when the signal was aborted before the start.
   */
  readonly report?: R
}

declare const respload: {
  run: typeof run
  start: typeof start
  Runner: typeof Runner
  Report: typeof Report
  Workload: typeof Workload
  validateSpec: typeof validateSpec
  mergeReports: typeof mergeReports
  Comparison: typeof Comparison
  compare: typeof compare
  fromRedisBenchmark: typeof fromRedisBenchmark
  fromMemtier: typeof fromMemtier
  Trace: typeof Trace
  Model: typeof Model
  Capture: typeof Capture
  replay: typeof replay
  AbortError: typeof AbortError
} & typeof errors
export default respload
