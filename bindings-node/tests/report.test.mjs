// Reports: the camelCase rule, toJSON() giving the canonical snake_case JSON, and check().
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileError, Report, SpecError, run } from 'respload'
import { startRedis } from 'respload/testing'
import { setKeys } from './helpers.mjs'

let redis
let clean // a report with no errors
let failing // a report whose every GET hit a list key: WRONGTYPE errors
before(async () => {
  redis = await startRedis()
  clean = await run(setKeys(redis.url, 2000))
  for (let i = 0; i < 10; i++) await redis.command('RPUSH', `list:${i}`, 'x')
  failing = await run({
    target: { url: redis.url },
    load: { connections: 2, requests: 200 },
    keys: { prefix: 'list:', range: [0, 9] },
    commands: [{ name: 'get' }],
  })
})
after(async () => {
  await redis?.stop()
})

test('report keys are camelCase; map keys (commands, error kinds, config) and the workload are kept', () => {
  assert.equal(clean.totals.ops, 2000)
  assert.equal(typeof clean.totals.opsPerSec, 'number')
  assert.ok(clean.totals.opsPerSec > 0)
  assert.equal(typeof clean.totals.latencyMs.p99, 'number')
  assert.ok('p99_9' in clean.totals.latencyMs && 'p99_99' in clean.totals.latencyMs)
  assert.equal(typeof clean.durationS, 'number')
  assert.equal(clean.schemaVersion, 2)
  assert.equal(typeof clean.client.cpuSPerMillion, 'number')
  assert.equal(typeof clean.client.loopLagMsMax, 'number')
  assert.equal(typeof clean.timeline[0].intervalS, 'number')
  assert.deepEqual(Object.keys(clean.commands), ['SET'])
  assert.equal(clean.server.address, `${redis.host}:${redis.port}`)
  assert.equal(clean.server.version, redis.version)
  assert.equal(clean.server.mode, 'standalone')
  assert.equal(clean.server.config.appendonly, 'no')
  assert.ok('maxmemory-policy' in clean.server.config, Object.keys(clean.server.config).join())
  // The normalized workload is a spec, and specs are snake_case: kept verbatim.
  assert.equal(clean.workload.target.client_name, 'respload')
  assert.equal(clean.phases[0].workload.load.connections, 4)
  assert.equal(clean.phases[0].totals.ops, 2000)

  assert.equal(failing.totals.errors, 200)
  assert.equal(failing.totals.errorRate, 1)
  assert.deepEqual(failing.totals.errorsByKind, { WRONGTYPE: 200 })
  assert.deepEqual(failing.commands.GET.errorsByKind, { WRONGTYPE: 200 })
  // No snake_case key is left outside the kept parts.
  const leftovers = []
  const walk = (value, where) => {
    if (value === null || typeof value !== 'object') return
    for (const [k, v] of Object.entries(value)) {
      if (['workload', 'config'].includes(k)) continue
      if (/_[a-z]/.test(k)) leftovers.push(`${where}.${k}`)
      walk(v, `${where}.${k}`)
    }
  }
  walk(clean, 'report')
  assert.deepEqual(leftovers, [])
})

test('toJSON() gives the canonical snake_case JSON, and Report.fromJSON() reads it back', () => {
  const json = JSON.parse(JSON.stringify(clean))
  assert.equal(json.schema_version, 2)
  assert.equal(json.totals.ops, 2000)
  assert.equal(json.totals.ops_per_sec, clean.totals.opsPerSec)
  assert.equal(json.totals.latency_ms.p99_9, clean.totals.latencyMs.p99_9)
  assert.equal(json.commands.SET.bytes_sent, clean.commands.SET.bytesSent)
  assert.equal(json.timeline[0].interval_s, clean.timeline[0].intervalS)
  assert.equal(json.client.cpu_s_per_million, clean.client.cpuSPerMillion)
  assert.ok(!('opsPerSec' in json.totals))
  assert.deepEqual(JSON.parse(JSON.stringify(failing)).totals.errors_by_kind, { WRONGTYPE: 200 })

  const back = Report.fromJSON(JSON.stringify(clean))
  assert.ok(back instanceof Report)
  assert.deepEqual({ ...back }, { ...clean })
  assert.deepEqual(back.toJSON(), clean.toJSON())
  assert.throws(() => new Report({ totals: {} }), TypeError)
})

test('check() passes when every budget is met, and returns the report', () => {
  assert.equal(clean.check({ p99Ms: 10_000, errorRate: 0, opsPerSec: 1 }), clean)
  assert.equal(clean.check({ p50Ms: 10_000, p99_9Ms: 10_000, commands: { SET: { errorRate: 0, p99Ms: 10_000 } } }), clean)
  // p999Ms, a name from before the limits were the core's, is no budget.
  assert.throws(() => clean.check({ p999Ms: 10_000 }), /unknown limit `p999Ms`/)
  assert.throws(() => clean.check({ p99_9Ms: 0.000001 }), /p99\.9/)
  assert.equal(failing.check({ errorRate: 1 }), failing)
})

test('check() throws an AssertionError with a readable message when a budget is not met', () => {
  assert.throws(
    () => clean.check({ p99Ms: 0.000001, errorRate: 0, opsPerSec: 1e12 }),
    (err) => {
      assert.ok(err instanceof assert.AssertionError)
      assert.equal(err.code, 'ERR_ASSERTION')
      assert.match(err.message, /^respload budget not met \(2000 requests in [\d.]+ s\):/)
      assert.match(err.message, /totals: p99 latency [\d.]+ ms is over the budget of 0\.000001 ms/)
      assert.match(err.message, /totals: throughput [\d.]+ ops\/s \(2000 requests in [\d.]+ s\) is under the budget of 1000000000000 ops\/s/)
      assert.doesNotMatch(err.message, /error rate/, 'the met budget is not listed')
      assert.equal(err.actual.p99Ms, clean.totals.latencyMs.p99)
      assert.deepEqual(err.expected, { p99Ms: 0.000001, errorRate: 0, opsPerSec: 1e12 })
      return true
    },
  )
  assert.throws(
    () => failing.check({ errorRate: 0.01 }),
    (err) =>
      err instanceof assert.AssertionError &&
      /totals: error rate 100% \(200 of 200 requests: WRONGTYPE 200\) is over the budget of 1%/.test(err.message),
  )
  assert.throws(
    () => clean.check({ commands: { GET: { p99Ms: 1 } } }),
    (err) => err instanceof assert.AssertionError && /commands\.GET: not in the report \(commands: SET\)/.test(err.message),
  )
})

test('check() rejects unknown budgets (a typo never passes silently) and empty runs', () => {
  assert.throws(() => clean.check({ p99: 5 }), (err) => err instanceof TypeError && /unknown limit `p99`/.test(err.message))
  assert.throws(() => clean.check({ p99Ms: '5' }), TypeError)
  assert.throws(() => clean.check({ commands: 5 }), TypeError)
  assert.throws(() => clean.check({ opsPerSec: Infinity }), /opsPerSec: Infinity is not a finite number/)
  assert.throws(() => clean.check({ commands: { GET: { commands: {} } } }), TypeError)
  // Ranges are the core's: the same SpecError as in Python, naming the limit.
  assert.throws(
    () => clean.check({ commands: { SET: { errorRate: 2 } } }),
    (err) => err instanceof SpecError && err.path === 'check.commands.SET.error_rate' && /0 to 1/.test(err.message),
  )
  const empty = new Report({ ...clean.toJSON(), totals: { ...clean.toJSON().totals, ops: 0 } })
  assert.throws(() => empty.check({}), (err) => err instanceof assert.AssertionError && /finished no requests/.test(err.message))
  const partial = new Report({ ...clean.toJSON(), interrupted: true })
  assert.throws(
    () => partial.check({}),
    (err) =>
      err instanceof assert.AssertionError &&
      /^respload budget not met \(2000 requests in [\d.]+ s, interrupted\):/.test(err.message) &&
      /the run was interrupted: its report is partial/.test(err.message),
  )
})

test('a closed-loop report has no send lag, and checks the client\'s CPU only', () => {
  assert.equal(clean.totals.sendLagMs, undefined)
  assert.equal(clean.totals.sendLagHistogram, undefined)
  assert.ok(clean.timeline.every((row) => row.sendLagMs === undefined && row.behindMs === undefined))
  assert.equal(clean.unsent, undefined)
  assert.ok(clean.client.busyMax > 0 && clean.client.busyMax <= 1, String(clean.client.busyMax))
  assert.deepEqual(
    clean.validity.checks.map((c) => c.check),
    ['client_busy'],
  )
  const [busy] = clean.validity.checks
  assert.equal(busy.phase, 'main')
  assert.equal(busy.value, clean.client.busyMax)
  assert.equal(busy.limit, 0.8)
  assert.equal(clean.validity.trusted, busy.passed)
  assert.deepEqual(clean.phases[0].validity, clean.validity)
})

test('an open-loop run reports its send lag, and checks itself', async () => {
  const report = await run({
    target: { url: redis.url },
    load: { connections: 4, rate: 1000, duration: '2s' },
    commands: [{ name: 'set' }, { name: 'get' }],
  })
  const lag = report.totals.sendLagMs
  assert.ok(lag, 'totals.sendLagMs')
  assert.ok(lag.p99 >= lag.p50 && lag.p50 > 0, JSON.stringify(lag))
  assert.ok(lag.max >= lag.p99)
  assert.equal(typeof report.totals.sendLagHistogram, 'string')
  assert.ok(report.commands.GET.sendLagMs && report.commands.SET.sendLagMs)
  assert.deepEqual(report.phases[0].totals.sendLagMs, lag)
  const rows = report.timeline.filter((row) => row.ops > 0)
  assert.ok(rows.length > 0)
  for (const row of rows) {
    assert.ok(row.sendLagMs.max >= row.sendLagMs.p99 && row.sendLagMs.p99 >= row.sendLagMs.p50, JSON.stringify(row))
  }
  assert.equal(report.client.behindMsMax, Math.max(0, ...report.timeline.map((row) => row.behindMs ?? 0)))
  assert.ok(report.client.busyMax > 0 && report.client.busyMax <= 1)

  // The checks' names and phases are data: kept as the JSON writes them.
  const checks = Object.fromEntries(report.validity.checks.map((c) => [c.check, c]))
  assert.ok(['client_lag', 'rate', 'client_busy'].every((name) => name in checks), Object.keys(checks).join())
  assert.equal(checks.client_lag.phase, 'main')
  assert.equal(checks.client_lag.value, report.clientLagMs.p99)
  // The client's own part of the send lag, never more than the whole.
  assert.ok(report.clientLagMs.max <= lag.max)
  assert.equal(checks.client_lag.limit, Math.max(0.1 * report.totals.latencyMs.p50, 0.05))
  assert.equal(checks.client_lag.passed, checks.client_lag.value <= checks.client_lag.limit)
  assert.equal(typeof checks.client_lag.detail, 'string')
  assert.equal(report.validity.trusted, report.validity.checks.every((c) => c.passed))
  assert.deepEqual(report.phases[0].validity, report.validity)
  assert.equal(report.toJSON().totals.send_lag_ms.p99, lag.p99)
})

/** `report` with one validity check (the report's and its phases') marked failed. */
function untrustedCopy(report, check, detail) {
  const json = report.toJSON()
  for (const validity of [json.validity, ...json.phases.map((p) => p.validity)]) {
    for (const c of validity.checks) {
      c.passed = c.check !== check
      if (c.check === check) c.detail = detail
    }
    validity.trusted = validity.checks.every((c) => c.passed)
  }
  return new Report(json)
}

test('check() warns when the report is not trusted, without failing by itself', (t) => {
  const emitWarning = t.mock.method(process, 'emitWarning', () => {})
  const detail = 'the busiest worker thread was busy 97% of the time: the client is in these figures'
  const untrusted = untrustedCopy(clean, 'client_busy', detail)
  assert.equal(untrusted.validity.trusted, false)
  assert.equal(untrusted.check({ errorRate: 0 }), untrusted)
  assert.equal(emitWarning.mock.callCount(), 1)
  const [message, options] = emitWarning.mock.calls[0].arguments
  assert.match(message, /^respload: this report's figures are not trusted \(1 of 1 validity checks failed\):\n {2}- /)
  assert.ok(message.endsWith(`validity checks failed):\n  - client_busy (main): ${detail}`), message)
  assert.deepEqual(options, { type: 'UntrustedReportWarning', code: 'RESPLOAD_UNTRUSTED' })
  // A budget missed still throws, after the warning.
  assert.throws(() => untrusted.check({ p99Ms: 0.000001 }), assert.AssertionError)
  assert.equal(emitWarning.mock.callCount(), 2)
  // A trusted report does not warn.
  const trusted = untrustedCopy(clean, 'none', '')
  assert.equal(trusted.check(), trusted)
  assert.equal(emitWarning.mock.callCount(), 2)
})

test('hdrLog() gives the timeline as an interval log, and names the option it needs', async () => {
  const logged = await run({
    ...setKeys(redis.url, 1000),
    load: { connections: 2, duration: '2500ms' },
    output: { interval_histograms: true },
  })
  // A full interval's row has its server CPU: the server's sample taken at the row's end.
  assert.equal(typeof logged.timeline[0].serverCpuPercent, 'number')
  assert.equal(logged.timeline[0].serverCpuPercent, logged.serverTimeline[0].cpuPercent)
  const log = logged.hdrLog()
  assert.match(log, /^#respload .* latency log, values in nanoseconds$/m)
  assert.match(log, /^#\[MaxValueDivisor: 1000000\.000\]$/m)
  // One histogram line per timeline row: start, length, max (ms), the encoded histogram.
  const lines = log.split('\n').filter((l) => /^\d/.test(l))
  assert.ok(lines.length >= 3)
  assert.equal(lines.length, logged.timeline.length)
  for (const [line, row] of lines.map((l, i) => [l.split(','), logged.timeline[i]])) {
    assert.equal(Number(line[1]), Number(row.intervalS.toFixed(3)))
    assert.ok(line[3].startsWith('HISTF'), line[3])
  }
  assert.throws(
    () => clean.hdrLog(),
    (err) => err instanceof SpecError && err.path === 'output.interval_histograms',
  )
})

test('percentileDistribution() gives the whole latency distribution as an .hgrm text', () => {
  const rows = (text) =>
    text
      .split('\n')
      .filter((l) => /^\s*\d/.test(l))
      .map((l) => l.trim().split(/\s+/).map(Number))
  const all = rows(clean.percentileDistribution())
  assert.ok(all.length > 10, `${all.length} rows`)
  // Percentile and count rise to 1 and to every request; the last value is the maximum.
  for (let i = 1; i < all.length; i++) assert.ok(all[i][1] > all[i - 1][1] && all[i][2] >= all[i - 1][2])
  const last = all.at(-1)
  assert.deepEqual([last[1], last[2]], [1, clean.totals.ops])
  assert.ok(Math.abs(last[0] - clean.totals.latencyMs.max) <= 0.001 + clean.totals.latencyMs.max / 500)
  const median = all.find((r) => r[1] >= 0.5)
  assert.ok(Math.abs(median[0] - clean.totals.latencyMs.p50) <= 0.001 + clean.totals.latencyMs.p50 / 500)
  // One command's, and an unknown label named in the error.
  assert.equal(rows(clean.percentileDistribution('SET')).at(-1)[2], clean.commands.SET.ops)
  assert.throws(
    () => clean.percentileDistribution('GET'),
    (err) => err instanceof SpecError && err.path === 'command' && /no command `GET`/.test(err.message),
  )
})

test('check() and hdrLog() read back a report whose seed a JavaScript number cannot hold', () => {
  // A seed near 2^64 (given in a spec file) rounds, as a number, to 2^64: out of a u64's range.
  const text = JSON.stringify(clean).replace(/"seed":\d+,/, '"seed":18446744073709551615,')
  const big = Report.fromJSON(text)
  assert.equal(big.seed, 2 ** 64)
  assert.equal(big.check({ errorRate: 0 }), big)
  assert.throws(
    () => big.hdrLog(),
    (err) => err instanceof SpecError && err.path === 'output.interval_histograms',
  )
})

test('save() writes a report that Report.load() reads back; phase() finds a phase by name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'respload-report-'))
  try {
    const path = join(dir, 'report.json')
    clean.save(path)
    const back = Report.load(path)
    assert.deepEqual(back.toJSON(), clean.toJSON())
    const name = clean.phases[0].name
    assert.equal(back.phase(name).totals.ops, clean.phases[0].totals.ops)
    assert.equal(back.phase('nope'), undefined)
    // A newer schema version is refused by its version; a missing file is a FileError.
    writeFileSync(path, JSON.stringify({ ...clean.toJSON(), schema_version: 99 }))
    assert.throws(() => Report.load(path), (e) => e instanceof SpecError && /99: this report was written by a newer/.test(e.message))
    assert.throws(() => Report.load(join(dir, 'missing.json')), FileError)
    // A schema 1 report (its send lag a gauge, a number per row) loads upgraded: the gauge
    // becomes behindMs, as the core reads it.
    const old = clean.toJSON()
    old.schema_version = 1
    for (const row of old.timeline) row.send_lag_ms = 1.5
    old.client.send_lag_ms_max = 1.5
    writeFileSync(path, JSON.stringify(old))
    const upgraded = Report.load(path)
    assert.equal(upgraded.schemaVersion, clean.schemaVersion)
    assert.ok(upgraded.timeline.length > 0)
    assert.ok(upgraded.timeline.every((r) => r.behindMs === 1.5 && r.sendLagMs === undefined))
    assert.equal(upgraded.client.behindMsMax, 1.5)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
