// fromMemtier(): a memtier_benchmark command line, unchanged, against a real redis-server.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { SpecError, fromMemtier, run } from 'respload'
import { startRedis } from 'respload/testing'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

test('a memtier line sends -n requests per client on threads x clients connections', async () => {
  await redis.command('FLUSHALL')
  const spec = fromMemtier(
    `memtier_benchmark -s ${redis.host} -p ${redis.port} -n 50 -c 3 -t 2 --ratio=1:1 --key-maximum=99 -d 64`,
  )
  assert.equal(spec.load.connections, 6)
  assert.equal(spec.load.requests, 300)
  assert.equal(spec.keys.prefix, 'memtier-')
  const report = await run(spec)
  assert.equal(report.totals.ops, 300)
  assert.equal(report.totals.errors, 0)
  const stats = await redis.command('INFO', 'commandstats')
  const calls = (cmd) => Number((stats.match(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`)) ?? [0, 0])[1])
  assert.equal(calls('set') + calls('get'), 300)
  assert.equal(report.commands.SET.ops, calls('set'))
})

test('--client-stats maps to output.client_stats; with --cluster-mode it throws SpecError naming it', () => {
  const spec = fromMemtier('memtier_benchmark -n 10 --client-stats=clients')
  assert.equal(spec.output.client_stats, 'clients')
  // Every memtier option is honoured; a combination respload does not run yet is an error.
  assert.throws(
    () => fromMemtier('memtier_benchmark --client-stats=clients --cluster-mode'),
    (err) => err instanceof SpecError && err.path === '--client-stats' && /--cluster-mode/.test(err.message),
  )
})
