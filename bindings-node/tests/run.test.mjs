// run(), start() and Runner against a real redis-server: counts match what the server holds,
// the event loop stays free, progress arrives per interval, abort is prompt and keeps the report.
import assert from 'node:assert/strict'
import { after, before, beforeEach, test } from 'node:test'
import { AbortError, Report, run, SpecError, start, Workload } from 'respload'
import { startRedis } from 'respload/testing'
import { setKeys } from './helpers.mjs'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})
beforeEach(async () => {
  await redis.command('FLUSHALL')
  await redis.command('CONFIG', 'RESETSTAT')
})

// The calls the server counted (INFO commandstats, since the test's CONFIG RESETSTAT) of
// every command the report has.
async function serverCalls(report) {
  const stats = await redis.command('INFO', 'commandstats')
  let calls = 0
  for (const name of Object.keys(report.commands)) {
    const found = stats.match(new RegExp(`cmdstat_${name.toLowerCase()}:calls=(\\d+),`))
    calls += found ? Number(found[1]) : 0
  }
  return calls
}

test('a sequential SET of N keys leaves DBSIZE == N and counts N ops', async () => {
  const n = 5000
  const report = await run(setKeys(redis.url, n))
  assert.ok(report instanceof Report)
  assert.equal(await redis.command('DBSIZE'), n)
  assert.equal(report.totals.ops, n)
  assert.equal(report.commands.SET.ops, n)
  assert.equal(report.totals.errors, 0)
  assert.equal(report.interrupted, false)
  assert.equal(report.seed, 7)
  assert.equal(await redis.command('EXISTS', 'k:0', `k:${n - 1}`), 2)
  // The server's own command counter agrees with the report.
  const stats = await redis.command('INFO', 'commandstats')
  assert.match(stats, new RegExp(`cmdstat_set:calls=${n},`))
})

test('GET over a key range half of which exists counts hits and misses', async () => {
  const n = 1000
  await run(setKeys(redis.url, n))
  const report = await run({
    target: { url: redis.url },
    load: { connections: 2, requests: 2 * n },
    keys: { prefix: 'k:', range: [0, 2 * n - 1], distribution: 'sequential' },
    commands: [{ name: 'get' }],
  })
  assert.equal(report.commands.GET.ops, 2 * n)
  assert.equal(report.commands.GET.hits, n)
  assert.equal(report.commands.GET.misses, n)
  assert.equal(report.totals.errors, 0)
  assert.equal(await redis.command('DBSIZE'), n, 'GET wrote nothing')
})

test('the event loop stays free during a run (a setInterval keeps firing)', async () => {
  let ticks = 0
  let last = Date.now()
  let maxGap = 0
  const timer = setInterval(() => {
    const now = Date.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
    ticks++
  }, 10)
  const startedAt = Date.now()
  let report
  try {
    report = await run({
      target: { url: redis.url },
      load: { connections: 4, threads: 1, duration: '1500ms' },
      keys: { prefix: 'loop:', range: [0, 999] },
    })
  } finally {
    clearInterval(timer)
  }
  const elapsed = Date.now() - startedAt
  assert.ok(elapsed >= 1400, `the run lasted ${elapsed} ms`)
  assert.ok(report.totals.ops > 100, `only ${report.totals.ops} ops`)
  // Every request the report counts is one the server ran, and none more: a run that ends
  // at its duration waits for the replies in flight.
  assert.equal(await serverCalls(report), report.totals.ops)
  // ~150 ticks are possible in 1.5 s; a blocked loop would give about one.
  assert.ok(ticks >= 50, `only ${ticks} ticks of a 10 ms interval in ${elapsed} ms`)
  assert.ok(maxGap < 300, `the event loop was blocked for ${maxGap} ms`)
})

test('onProgress receives one snapshot per interval, matching the timeline', async () => {
  const arrivals = []
  const snapshots = []
  const startedAt = Date.now()
  const report = await run(
    {
      target: { url: redis.url },
      load: { connections: 2, threads: 1, duration: '2500ms' },
      keys: { prefix: 'progress:', range: [0, 999] },
    },
    {
      onProgress(snapshot) {
        arrivals.push(Date.now() - startedAt)
        snapshots.push(snapshot)
      },
    },
  )
  assert.equal(snapshots.length, 3, `snapshots at ${arrivals.join(', ')} ms`)
  assert.equal(snapshots.length, report.timeline.length)
  for (const [i, s] of snapshots.entries()) {
    assert.equal(s.phase, 'main')
    assert.equal(s.measured, true)
    assert.equal(s.t, report.timeline[i].t)
    assert.equal(s.ops, report.timeline[i].ops)
    assert.ok(s.opsPerSec > 0 && s.latencyMs.p99 > 0, JSON.stringify(s))
    assert.equal(typeof s.intervalS, 'number')
  }
  assert.equal(snapshots.reduce((sum, s) => sum + s.ops, 0), report.totals.ops)
  // Delivered while the run goes on, about a second apart, not all at the end.
  assert.ok(arrivals[0] >= 700 && arrivals[0] < 1800, `first snapshot at ${arrivals[0]} ms`)
  assert.ok(arrivals[1] - arrivals[0] >= 500, `snapshots at ${arrivals.join(', ')} ms`)
})

test('an AbortSignal stops a long run within a second and keeps the partial report', async () => {
  const controller = new AbortController()
  const reason = new Error('enough')
  setTimeout(() => controller.abort(reason), 600)
  const startedAt = Date.now()
  const err = await run(
    {
      target: { url: redis.url },
      load: { connections: 4, threads: 1, duration: '30s' },
      keys: { prefix: 'abort:', range: [0, 999] },
    },
    { signal: controller.signal },
  ).then(
    () => assert.fail('the run was not aborted'),
    (e) => e,
  )
  const afterAbort = Date.now() - startedAt - 600
  assert.ok(err instanceof AbortError && err instanceof Error, String(err))
  assert.equal(err.name, 'AbortError')
  assert.equal(err.code, 'ABORT_ERR')
  assert.equal(err.cause, reason)
  assert.ok(afterAbort < 1000, `rejected ${afterAbort} ms after the abort`)
  assert.ok(err.report instanceof Report)
  assert.equal(err.report.interrupted, true)
  assert.ok(err.report.totals.ops > 0, 'the partial report has the traffic sent before the abort')
  // The server ran every request the partial report counts, and at most the 4 in flight
  // (one per connection) more, whose replies the abort left unread.
  const served = await serverCalls(err.report)
  assert.ok(
    served >= err.report.totals.ops && served <= err.report.totals.ops + 4,
    `the server ran ${served}, the report counts ${err.report.totals.ops}`,
  )
  assert.ok(err.report.durationS > 0.3 && err.report.durationS < 2, `measured ${err.report.durationS} s`)
  // Traffic really stopped: the server's counters stand still.
  const calls = async () => {
    const info = await redis.command('INFO', 'stats')
    return Number(info.match(/total_commands_processed:(\d+)/)[1])
  }
  const before = await calls()
  await new Promise((resolve) => setTimeout(resolve, 300))
  assert.equal(await calls(), before + 1, 'only our own INFO ran in between')
})

test('AbortSignal.timeout() works, and an already aborted signal sends no traffic', async () => {
  const err = await run(
    { target: { url: redis.url }, load: { connections: 2, duration: '20s' }, keys: { prefix: 'to:' } },
    { signal: AbortSignal.timeout(300) },
  ).catch((e) => e)
  assert.equal(err.name, 'AbortError')
  assert.equal(err.report.interrupted, true)
  assert.ok(err.report.totals.ops > 0)
  // As above: what the report counts, and at most the 2 in flight more.
  const served = await serverCalls(err.report)
  assert.ok(
    served >= err.report.totals.ops && served <= err.report.totals.ops + 2,
    `the server ran ${served}, the report counts ${err.report.totals.ops}`,
  )

  await redis.command('FLUSHALL')
  const early = await run(setKeys(redis.url, 100), { signal: AbortSignal.abort() }).catch((e) => e)
  assert.equal(early.name, 'AbortError')
  assert.equal(early.report, undefined)
  assert.equal(await redis.command('DBSIZE'), 0)
})

test('a Runner streams snapshots through an async iterator, then gives the report', async () => {
  const runner = start({
    target: { url: redis.url },
    load: { connections: 2, threads: 1, duration: '2200ms' },
    keys: { prefix: 'iter:', range: [0, 99] },
  })
  const seen = []
  for await (const snapshot of runner) seen.push(snapshot)
  assert.equal(runner.done, true)
  const report = await runner.wait()
  assert.equal(seen.length, report.timeline.length)
  assert.ok(seen.length >= 3, `${seen.length} snapshots`)
  assert.deepEqual(
    seen.map((s) => s.ops),
    report.timeline.map((r) => r.ops),
  )
  assert.equal(seen.reduce((sum, s) => sum + s.ops, 0), report.totals.ops)
})

test('Runner.stop() ends a run early with an interrupted report; leaving the loop stops it too', async () => {
  const spec = {
    target: { url: redis.url },
    load: { connections: 2, threads: 1, duration: '30s' },
    keys: { prefix: 'stop:', range: [0, 99] },
  }
  const runner = start(spec)
  await new Promise((resolve) => setTimeout(resolve, 400))
  const startedStop = Date.now()
  const report = await runner.stop()
  assert.ok(Date.now() - startedStop < 1000)
  assert.equal(report.interrupted, true)
  assert.ok(report.totals.ops > 0)

  const second = start(spec)
  let count = 0
  const t0 = Date.now()
  for await (const snapshot of second) {
    assert.ok(snapshot.ops > 0)
    if (++count === 1) break
  }
  const partial = await second.wait()
  assert.ok(Date.now() - t0 < 3000)
  assert.equal(partial.interrupted, true)
})

test('a run with phases reports every phase; only measured ones (after warm-up) count in the totals', async () => {
  const n = 500
  const snapshots = []
  const report = await run(
    {
      target: { url: redis.url },
      load: { connections: 2 },
      keys: { prefix: 'ph:', range: [0, n - 1] },
      phases: [
        { name: 'populate', measured: false, load: { requests: n }, keys: { distribution: 'sequential' }, commands: [{ name: 'set' }] },
        { name: 'measure', load: { requests: 2 * n, warmup: '200ms' }, commands: [{ name: 'get' }] },
      ],
    },
    { onProgress: (s) => snapshots.push(s) },
  )
  assert.deepEqual(report.phases.map((p) => [p.name, p.measured, p.totals.ops]), [
    ['populate', false, n],
    ['measure', true, 2 * n],
  ])
  assert.equal(report.totals.ops, 2 * n, 'warm-up requests are not counted')
  assert.equal(report.commands.GET.hits, 2 * n, 'every key was populated first')
  const stats = await redis.command('INFO', 'commandstats')
  const gets = Number(stats.match(/cmdstat_get:calls=(\d+),/)[1])
  assert.ok(gets > 2 * n, `the server saw ${gets} GETs: the measured ones and the warm-up's`)
  assert.equal(report.commands.SET, undefined)
  assert.deepEqual([...new Set(snapshots.map((s) => s.phase))], ['populate', 'measure'])
  assert.equal(await redis.command('DBSIZE'), n)
})

test('an onProgress callback that throws stops the run, and run() rejects with its error', async () => {
  const boom = new Error('progress handler failed')
  const startedAt = Date.now()
  const err = await run(
    { target: { url: redis.url }, load: { connections: 2, threads: 1, duration: '30s' }, keys: { prefix: 'cb:' } },
    {
      onProgress() {
        throw boom
      },
    },
  ).catch((e) => e)
  assert.equal(err, boom)
  assert.ok(Date.now() - startedAt < 3000, `took ${Date.now() - startedAt} ms`)
})

test('the shards of a workload send it exactly, each its own part of the keys', async () => {
  await redis.command('CONFIG', 'RESETSTAT') // the server is shared by this file's tests
  const spec = {
    target: { url: redis.url },
    load: { connections: 4, requests: 10 },
    keys: { prefix: 'shard:', range: [0, 8], distribution: 'sequential' },
    commands: [{ name: 'set' }],
    observe: { info: false },
  }
  const loads = [0, 1, 2].map((i) => new Workload(spec).shard(i, 3).spec)
  assert.deepEqual(loads.map((s) => [s.load.connections, s.load.requests]), [[2, 4], [1, 3], [1, 3]])
  assert.deepEqual(loads.map((s) => s.keys.range), [[0, 2], [3, 5], [6, 8]])
  const ops = []
  for (const i of [0, 1, 2]) ops.push((await run(spec, { shard: [i, 3] })).totals.ops)
  assert.deepEqual(ops, [4, 3, 3])
  assert.equal(await redis.command('DBSIZE'), 9)
  assert.match(await redis.command('INFO', 'commandstats'), /cmdstat_set:calls=10,/)
  assert.throws(() => new Workload({ load: { connections: 2 } }).shard(0, 3), (e) =>
    e instanceof SpecError && e.path === 'load.connections' && /2 connections/.test(e.message))
  for (const bad of [[3, 3], [0], 'x', [-1, 2]]) {
    assert.throws(() => start(spec, { shard: bad }), TypeError, JSON.stringify(bad))
  }
})
