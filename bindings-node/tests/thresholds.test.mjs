// Thresholds in the spec from Node: report.passed, each threshold judged on the report's own
// figures, abortOnFail stopping the run, and check() taking the p90 and max limits.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { run } from 'respload'
import { startRedis } from 'respload/testing'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

test('thresholds are judged on the report figures and listed with their verdicts', async () => {
  const report = await run({
    target: { url: redis.url },
    load: { requests: 400, connections: 2 },
    thresholds: { p99_ms: 10000, max_ms: 0.000001, commands: { GET: { ops_per_sec: 1 } } },
  })
  assert.deepEqual(
    report.thresholds.map((t) => [t.name, t.passed]),
    [['p99_ms', true], ['max_ms', false], ['commands.GET.ops_per_sec', true]],
  )
  assert.equal(report.thresholds[0].value, report.totals.latencyMs.p99)
  assert.equal(report.thresholds[1].value, report.totals.latencyMs.max)
  assert.equal(report.passed, false)
  assert.equal(report.toJSON().passed, false)
  // check() takes the new limits, and reads them as thresholds do.
  report.check({ p90Ms: 10000, maxMs: 10000 })
  assert.throws(() => report.check({ maxMs: 0.000001 }), /totals: max latency [\d.]+ ms is over the budget of 0\.000001 ms/)
})

test('abort_on_fail stops the run and the report names the threshold', async () => {
  const started = Date.now()
  const report = await run({
    target: { url: redis.url },
    load: { rate: 1000, duration: '30s', connections: 1 },
    observe: { info: false },
    thresholds: { p50_ms: 0.000001, abort_on_fail: true },
  })
  assert.ok(Date.now() - started < 6000, `took ${Date.now() - started} ms`)
  assert.match(report.stoppedBy, /^threshold `p50_ms` crossed after [\d.]+ s of phase `main`/)
  assert.equal(report.thresholds[0].stoppedRun, true)
  assert.equal(report.passed, false)
  assert.equal(report.interrupted, false)
})
