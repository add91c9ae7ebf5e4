// Integration test of the cache service: respload drives realistic load at its Redis while the
// test calls the service over HTTP, then asserts latency budgets on both. Run with
// `node --test examples/node/` (scripts/test-node.sh does).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { run } from 'respload'
import { startRedis } from 'respload/testing'
import { startService } from './cache-service.mjs'

const USERS = 200
let redis
let service

before(async () => {
  redis = await startRedis()
  service = await startService({ redisPort: redis.port })
})
after(async () => {
  await service?.close()
  await redis?.stop()
})

async function getUser(id) {
  const started = performance.now()
  const res = await fetch(`${service.url}/users/${id}`)
  assert.equal(res.status, 200)
  const user = await res.json()
  assert.equal(user.id, id)
  return performance.now() - started
}

const p99 = (values) => values.toSorted((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]

test('the first request of each user misses, the next ones hit the cache', async () => {
  for (let id = 0; id < USERS; id++) await getUser(id)
  assert.equal(service.stats.misses, USERS)
  for (let id = 0; id < USERS; id++) await getUser(id)
  assert.equal(service.stats.hits, USERS)
  assert.equal(await redis.command('DBSIZE'), USERS)
})

test('under load on its Redis, the cache and the service stay within budget', async () => {
  // Other readers of the same cache: reads of the cached users (they must all hit what the
  // service wrote), for 3 seconds on 8 connections.
  const load = run({
    target: { url: redis.url },
    load: { connections: 8, duration: '3s' },
    keys: { prefix: 'user:', range: [0, USERS - 1] },
    commands: [{ name: 'get' }],
  })
  // Meanwhile the service answers: respload's traffic runs on native threads, so this event
  // loop (and the service in it) keeps running.
  const latencies = []
  const deadline = Date.now() + 2500
  while (Date.now() < deadline) latencies.push(await getUser(latencies.length % USERS))
  const report = await load

  // The cache: every read found a user the service had cached; budgets generous enough for
  // a shared 2-core CI machine, yet far below a cache that misses (5 ms per database load).
  report.check({ p99Ms: 50, errorRate: 0, opsPerSec: 1000 })
  assert.equal(report.commands.GET.hits, report.commands.GET.ops)
  // The service: many requests served during the load, all from the cache, within budget.
  assert.ok(latencies.length > 100, `only ${latencies.length} requests served during the load`)
  assert.equal(service.stats.misses, USERS, 'no extra database load')
  assert.ok(p99(latencies) < 250, `service p99 ${p99(latencies).toFixed(1)} ms`)
})
