// Getting started from Node (docs/getting-started.md shows this file): run a SET/GET mix
// against a throwaway redis-server, read the report, and hold it to a latency budget.
// Run with `node --test examples/node/` (scripts/test-node.sh does).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { run } from 'respload'
import { withRedis } from 'respload/testing'

test('quickstart: a zipf-keyed GET/SET mix within budget', () =>
  withRedis(async (redis) => {
    const report = await run({
      target: { url: redis.url },
      load: { connections: 8, duration: '2s', warmup: '500ms' },
      keys: { prefix: 'user:', range: [0, 9999], distribution: 'zipf' },
      values: { size: [64, 512] },
      commands: [
        { name: 'get', weight: 9 },
        { name: 'set', weight: 1 },
      ],
      seed: 42,
    })

    const t = report.totals
    console.log(`${t.ops} requests: ${t.opsPerSec.toFixed(0)} ops/s, p99 ${t.latencyMs.p99} ms`)
    for (const [label, stats] of Object.entries(report.commands)) {
      console.log(`  ${label}: ${stats.ops} ops, ${stats.hits} hits, ${stats.misses} misses`)
    }
    // Generous budgets for a shared CI machine; tighten them for a dedicated one.
    report.check({ p99Ms: 50, errorRate: 0, opsPerSec: 500 })
    assert.equal(report.commands.GET.ops + report.commands.SET.ops, t.ops)
  }))
