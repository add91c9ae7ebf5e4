// Compile-time checks of the package's types, never run: scripts/test-node.sh (and `npm run
// typecheck`) compiles this file with `tsc --noEmit --strict`. The generated spec.d.ts and
// report.d.ts must type real workloads and reports, and reject mistakes: each
// `@ts-expect-error` below fails the check when the types accept the line (as they would if a
// type became `any`), and a wrong or missing type fails it too.
import respload, {
  compare,
  mergeReports,
  run,
  start,
  validateSpec,
  Workload,
  ConnectError,
  FileError,
  Report,
  SpecError,
  Trace,
  Capture,
  Model,
  replay,
  AbortError,
  type Availability,
  type CaptureReport,
  type ModelFit,
  type TraceArg,
  type TraceMalformed,
  type TraceRecord,
  type Budget,
  type BuiltinCommand,
  type ClientStats,
  type Comparison,
  type ComparisonRow,
  type CommandSpec,
  type Distribution,
  type EventReport,
  type IntervalLatency,
  type KeysSpec,
  type Latency,
  type LoadSpec,
  type LoadSpecOptions,
  type NodeServer,
  type Pacing,
  type PhaseReport,
  type PhaseSpec,
  type RampStep,
  type RespLoadErrorCode,
  type RunOptions,
  type ServerFacts,
  type ServerLoad,
  type ServerSample,
  type SloPoint,
  type SloResult,
  type Snapshot,
  type SpecDuration,
  type Stats,
  type TargetSpec,
  type Template,
  type TimelineRow,
  type Unsent,
  type Validity,
  type ValidityCheck,
  type ValuesSpec,
  type Spec,
} from 'respload'
import { connectRedis, startRedis } from 'respload/testing'

// ---- the spec: snake_case keys, every written form ------------------------------------------

const target: TargetSpec = { url: 'redis://127.0.0.1:6379', connect_timeout: 2, client_name: '' }
const load: LoadSpec = {
  connections: 4,
  duration: '5s',
  warmup: 0.5,
  rate_ramp: { start: 100, end: 1000, step: 300, step_duration: '1s' },
  arrivals: 'poisson',
  pacing: 'spin',
}
const pacing: Pacing = 'coarse'
// @ts-expect-error: not a pacing
const wrongPacing: LoadSpec = { pacing: 'busy' }
const keys: KeysSpec = { prefix: 'k:', range: [0, 999], reads: 'hotset', writes: { kind: 'zipf', exponent: 1.2 } }
const values: ValuesSpec = { size: [[64, 3], [1024, 1]], data: 'compressible', compression_ratio: 3 }
const builtin: BuiltinCommand = 'lrange_100'
const template: Template = ['HSET', '{key}', 'f', '{value}']
const commands: CommandSpec[] = [
  { name: builtin },
  { name: 'GET', weight: 4, distribution: { kind: 'gaussian', stddev: 10 } },
  { template, label: 'hset' },
  { chain: ['SET {key} 1', ['DEL', '{key}']] },
]
const workload: Spec = {
  target: { ...target, tls: { enabled: false, versions: ['1.3'] }, read_from: 'prefer-replica' },
  load,
  keys,
  values,
  commands,
  seed: 7,
  observe: { info: true },
  events: [{ at: '1s', drill: 'pause', mode: 'client-pause', duration: '200ms' }],
  slo: { budget_ms: 2, step_duration: '1s', max_steps: 3 },
  output: { memtier: 'memtier.txt' },
  phases: [{ name: 'populate', measured: false, repeat: 2, load: { requests: 'all_keys' } }],
  vars: { url: 'redis://127.0.0.1:6379' },
  scales: { ci: { url: 'redis://127.0.0.1:7000' } },
}
const phase: PhaseSpec | undefined = workload.phases?.[0]
const duration: SpecDuration | undefined = workload.load?.duration
const distribution: Distribution = 'uniform'

const misspelled: Spec = {
  load: {
    // @ts-expect-error: `connection` is not a spec key (`connections` is)
    connection: 4,
  },
}
// @ts-expect-error: spec keys are snake_case, as in spec files
const camelSpec: TargetSpec = { clientName: 'x' }
// @ts-expect-error: a duration is a string or a number of seconds
const wrongType: LoadSpec = { duration: true }
// @ts-expect-error: not a distribution
const wrongName: KeysSpec = { distribution: 'zipfian' }
// @ts-expect-error: a drill needs its time (`at`)
const missingAt: Spec = { events: [{ drill: 'bgsave' }] }
// @ts-expect-error: a key range is two numbers
const wrongRange: KeysSpec = { range: [0, '9'] }

// ---- Workload, the validated object: built from a spec or a file, run like a spec ----------

const validated: Workload = Workload.fromFile('spec.toml', { scale: 'ci' })
const validatedSpec: Spec = validated.spec
const share: Workload = new Workload(workload).shard(0, 2)
void run(share)
void run(validated.toJSON())
// @ts-expect-error: a Workload is built from a spec, not from a file path
const fromPath = new Workload('spec.toml')
// @ts-expect-error: shard() takes an index and a count
const badShare = validated.shard([0, 2])
// @ts-expect-error: the spec of a Workload is not replaced
validated.spec = workload

// ---- the report: camelCase keys, optional where the JSON leaves them out ---------------------

function read(report: Report): number[] {
  const phase0: PhaseReport = report.phases[0]
  const p99: number = phase0.totals.latencyMs.p99
  const p999: number = report.totals.latencyMs.p99_9
  const row: TimelineRow = report.timeline[0]
  const interval: IntervalLatency = row.latencyMs
  const rowRate: number | undefined = row.targetRate
  const rowCpu: number | undefined = row.serverCpuPercent
  const cpu: number | undefined = report.serverLoad?.peakCpuPercent
  const load: ServerLoad | undefined = phase0.serverLoad
  const samples: ServerSample[] = phase0.serverTimeline ?? []
  const used: number | undefined = samples[0]?.usedMemory
  const events: EventReport[] = phase0.events ?? []
  const fork: number | null = events[0].forkUsec
  const steps: RampStep[] = phase0.steps ?? []
  const slo: SloResult | undefined = phase0.slo
  const best: number | null | undefined = slo?.bestRate
  const curve: SloPoint[] = slo?.curve ?? []
  const get: Stats = report.commands['GET']
  const kinds: Record<string, number> = report.totals.errorsByKind
  const node: NodeServer | undefined = report.serverNodes?.['127.0.0.1:7000']
  const client: ClientStats = report.client
  const server: ServerFacts = report.server
  const policy: string = server.config['maxmemory-policy']
  const availability: Availability = phase0.availability
  const service: Latency | undefined = report.totals.serviceMs
  const sendLag: Latency | undefined = report.totals.sendLagMs
  const rowLag: IntervalLatency | undefined = row.sendLagMs
  const behind: number | undefined = row.behindMs
  const busy: number = report.client.busyMax
  const validity: Validity = report.validity
  const trusted: boolean = phase0.validity.trusted
  const failed: ValidityCheck[] = validity.checks.filter((c) => !c.passed)
  const unsent: Unsent | undefined = report.unsent
  const waited: number | undefined = phase0.unsent?.waitedMs.p99
  // @ts-expect-error: renamed behindMsMax in report schema 2
  const oldLag = report.client.sendLagMsMax
  // @ts-expect-error: a row's send lag is an interval latency, no longer a number
  const lagNumber: number | undefined = row.sendLagMs
  // The normalized workload is a spec: snake_case.
  const clientName: string | undefined = report.workload.target?.client_name
  const connections: number | undefined = phase0.workload.load?.connections
  // @ts-expect-error: report keys are camelCase
  const snake = report.totals.ops_per_sec
  // @ts-expect-error: targetRate is left out in closed loop
  const rate: number = phase0.targetRate
  // @ts-expect-error: a drill's figures may be null
  const forkOrZero: number = events[0].forkUsec
  // @ts-expect-error: the workload keeps the spec's snake_case keys
  const camelName = report.workload.target?.clientName
  return [p99, p999, interval.p99, rowRate ?? 0, rowCpu ?? 0, cpu ?? 0, used ?? 0, fork ?? 0, steps.length]
}

/** Errors name the address, the reason and the OS error number as Python does. */
function errorFields(e: unknown): string {
  if (e instanceof ConnectError) {
    const reason: string | undefined = e.reason
    const errno: number | undefined = e.errno
    return `${e.address} ${reason ?? ''} ${errno ?? ''}`
  }
  if (e instanceof FileError) {
    const errno: number | undefined = e.errno
    return `${e.path} ${errno ?? ''}`
  }
  return ''
}

async function runs(): Promise<void> {
  const redis = await startRedis()
  const budget: Budget = { p99Ms: 5, p99_9Ms: 20, errorRate: 0.01 }
  const report = await run({ ...workload, target: { url: redis.url } }, { signal: AbortSignal.timeout(10_000) })
  report.check({ ...budget, commands: { GET: { opsPerSec: 1 } } }).toJSON()
  const again: Report = Report.fromJSON(JSON.stringify(report))
  const options: RunOptions = { onProgress: (s: Snapshot) => s.latencyMs.p99 }
  for await (const snapshot of start(validateSpec(workload))) {
    const name: string = snapshot.phase
    const ops: number = snapshot.opsPerSec
    // @ts-expect-error: a snapshot is a timeline row with the phase: camelCase
    const snake = snapshot.ops_per_sec
  }
  const runner = start(validateSpec(workload), { progress: true, signal: AbortSignal.timeout(1000) })
  const disposed: Promise<void> = runner[Symbol.asyncDispose]()
  // @ts-expect-error progress is a boolean
  start(workload, { progress: 'yes' })
  const spec: Spec = Workload.fromFile('spec.toml', { scale: 'ci', vars: { n: 1 } } satisfies LoadSpecOptions).spec
  const code: RespLoadErrorCode = new SpecError('x').code
  await respload.run(spec)
  await redis.stop()
  const existing = await connectRedis(redis.url, { timeoutMs: 1000 })
  const dir: string = existing.dir
  await existing.stop()
}

// ---- several hosts and comparisons ------------------------------------------------------------

async function hosts(spec: Spec): Promise<Comparison> {
  const shards = await Promise.all([0, 1].map((i) =>
    run(spec, { shard: [i, 2], startAt: new Date(Date.now() + 1000) })))
  const merged: Report = mergeReports([...shards, 'other.json'])
  const skew: number | undefined = merged.hosts?.[0]?.startSkewMs
  // @ts-expect-error startAt is a Date, seconds or text, not a boolean
  await run(spec, { startAt: true })
  const c = compare(shards[0], merged, new URL('file:///r.json'))
  const labelled: Comparison = compare(shards[0], merged, { labels: ['a', 'b'] })
  // @ts-expect-error labels are strings
  compare(shards[0], merged, { labels: [1, 2] })
  const row: ComparisonRow | undefined = c.rows[0]
  const worse: boolean[] = row?.worse ?? []
  // @ts-expect-error limits are metric names
  c.check({ p98Ms: '+1%' })
  return c.check({ p99Ms: '+10%', errorRate: 0.001, opsPerSec: '-5%' })
}

// ---- traces: records, models, captures, replays ----------------------------------------------

async function traces(url: string): Promise<Report> {
  const captured: CaptureReport = await Trace.capture({ url, out: 'app.jsonl', duration: '5s', maxCommands: 100 })
  const cpu: number | null = captured.nodes[0]?.cpuDuringPercent ?? null
  // @ts-expect-error the capture report is camelCase
  captured.duration_s
  // @ts-expect-error `out` is required
  await Trace.capture({ url })
  const capture: Capture = Trace.startCapture({ target: { host: '127.0.0.1', port: 6379 }, out: new URL('file:///t.jsonl') })
  const stopped: CaptureReport = await capture.stop()
  try {
    await Trace.capture({ url, out: 'x.jsonl', signal: AbortSignal.timeout(1000) })
  } catch (err) {
    if (err instanceof AbortError) console.log((err.report as CaptureReport | undefined)?.commands)
  }
  const trace = Trace.open('app.jsonl', { format: 'respload' })
  // @ts-expect-error an unknown format
  Trace.open('app.jsonl', { format: 'csv' })
  for (const rec of trace) {
    const t: number = rec.tUs
    const first: TraceArg | undefined = rec.args[0]
    if (typeof first === 'string') console.log(first.toUpperCase())
    else if (first instanceof Uint8Array) console.log(first.byteLength)
    else if (first) console.log(first.size)
  }
  for await (const rec of trace) {
    const r: TraceRecord = rec
    console.log(r.client, r.db)
  }
  const malformed: TraceMalformed = trace.malformed
  const lines: string[] = malformed.lines
  const model: Model = await trace.model({ rateX: 2, keysX: 0.5, url, topKeys: 0 })
  // @ts-expect-error options are camelCase
  await trace.model({ rate_x: 2 })
  const fit: ModelFit = model.fit
  const share: number | undefined = fit.mix[0]?.traceShare
  const toml: string = model.toToml() + model.summary()
  const fitted: Report = await run(model.spec)
  const workload: Workload = model.workload()
  await trace.replay({ url, speed: 2 })
  const report = await replay('app.jsonl', {
    url,
    rate: 1000,
    connections: 4,
    keyPrefix: 'replay:',
    keyHash: true,
    keep: ['GET', 'SET'],
    drop: ['DEL'],
    loops: 2,
    prefill: false,
    prefillSize: 128,
    output: { interval_histograms: true },
    signal: AbortSignal.timeout(60_000),
  })
  // @ts-expect-error options are camelCase
  await replay(trace, { key_prefix: 'x' })
  // The same replay as a spec: its `replay` table is snake_case.
  await run({ target: { url }, replay: { file: 'app.jsonl', rate: 1000, key_prefix: 'replay:' } })
  const replayed: number | undefined = report.phases[0]?.replay?.replayed
  return report
}

export { traces, errorFields, hosts, read, runs, phase, duration, distribution, misspelled, camelSpec, wrongType, wrongName, missingAt, wrongRange, pacing, wrongPacing }
