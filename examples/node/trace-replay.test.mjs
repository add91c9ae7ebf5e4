// Replay captured production traffic in an integration test: examples/traces/session-store.jsonl
// is a capture of a session store's Redis traffic (made by
// examples/traces/capture-session-store.mjs through `Trace.capture`; capture your own with
// `npx respload capture redis://HOST:PORT --duration 60s --out app.jsonl`). The test replays it
// against a throwaway redis-server at its recorded instants, twice as fast, each app
// connection's commands in order on a connection of its own, and asserts that the server ran
// exactly the captured commands, counted every page view and answered within budget. Run with
// `node --test examples/node/` (scripts/test-node.sh and scripts/examples.sh do).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Trace, replay } from 'respload'
import { withRedis } from 'respload/testing'

const CAPTURE = new URL('../traces/session-store.jsonl', import.meta.url)

/** `calls` of each command in `INFO commandstats`, by upper-case name. */
async function commandstats(redis) {
  const info = String(await redis.command('INFO', 'commandstats'))
  const calls = [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+),/gm)]
  return Object.fromEntries(calls.map((m) => [m[1].toUpperCase(), Number(m[2])]))
}

test('the captured session-store traffic replays whole, within budget, on a fresh server', () =>
  withRedis(async (redis) => {
    // What the capture holds: commands by name, and page views (INCR views:USER) by user.
    const trace = Trace.open(CAPTURE)
    const counts = {}
    const views = {}
    for (const { args } of trace) {
      const name = String(args[0]).toUpperCase()
      counts[name] = (counts[name] ?? 0) + 1
      if (name === 'INCR') views[args[1]] = (views[args[1]] ?? 0) + 1
    }
    assert.equal(trace.malformed.count, 0)

    await redis.command('CONFIG', 'RESETSTAT')
    const report = await replay(trace, { url: redis.url, speed: 2 })

    const r = report.phases[0].replay
    console.log(
      `replayed ${r.replayed} of ${r.traced} commands on ${r.connections} connections at ` +
        `${r.rate.toFixed(0)} ops/s (schedule lag p99 ${r.scheduleMs.p99} ms), ` +
        `${r.prefill.keys} sessions prefilled; latency p99 ${report.totals.latencyMs.p99} ms`,
    )
    assert.equal(r.replayed, r.traced, 'every captured command sent and answered')
    assert.deepEqual(r.skipped, {})
    assert.equal(r.perClient, true)
    // The sessions the app read before this capture wrote them (its users were logged in
    // already) were written first, so the replay's reads hit as the app's did.
    assert.ok(r.prefill.keys > 0)
    assert.ok(report.commands.GET.hits > 0)

    // The server ran exactly the captured commands, plus the prefill's SETs.
    const stats = await commandstats(redis)
    for (const [name, calls] of Object.entries(counts)) {
      assert.equal(stats[name], calls + (name === 'SET' ? r.prefill.keys : 0), name)
    }
    // Every page view was counted.
    for (const [key, n] of Object.entries(views)) assert.equal(await redis.command('GET', key), String(n), key)
    // Generous budgets for a shared CI machine: tighten them on a dedicated one.
    report.check({ p99Ms: 50, errorRate: 0 })
  }))
