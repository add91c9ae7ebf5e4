// fromRedisBenchmark(): a redis-benchmark command line, unchanged, run against a real server.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { after, before, test } from 'node:test'
import { SpecError, fromRedisBenchmark, run } from 'respload'
import { startRedis } from 'respload/testing'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

test('each -t test becomes a phase named as redis-benchmark names it', async () => {
  const spec = fromRedisBenchmark(`redis-benchmark -p ${redis.port} -t get,SET -n 300 -r 100 -d 10 -c 3 --seed 4`)
  assert.deepEqual(spec.phases.map((p) => p.name), ['SET', 'GET'])
  assert.equal(spec.phases[0].keys.pad, 12)

  const report = await run(spec)

  assert.deepEqual(report.phases.map((p) => p.name), ['SET', 'GET'])
  assert.deepEqual(report.phases.map((p) => p.totals.ops), [300, 300])
  assert.equal(report.seed, 4)
  const stats = await redis.command('INFO', 'commandstats')
  assert.match(stats, /cmdstat_set:calls=300,/)
  assert.match(stats, /cmdstat_get:calls=300,/)
  const keys = await redis.command('KEYS', '*')
  assert.ok(keys.length > 0)
  for (const key of keys) {
    assert.match(key, /^key:\d{12}$/)
    assert.ok(Number(key.slice(4)) < 100, key)
    assert.equal(await redis.command('STRLEN', key), 10)
  }
})

test('options respload cannot honour throw SpecError naming the option', async () => {
  assert.throws(() => fromRedisBenchmark('valkey-benchmark -h cache --rdma -t get'), (err) => {
    return err instanceof SpecError && err.path === '--rdma' && /not supported by respload/.test(err.message)
  })
  assert.throws(() => fromRedisBenchmark('redis-benchmark -x set k'), (err) => {
    return err instanceof SpecError && err.path === '-x' && /CLI/.test(err.message)
  })
  assert.throws(() => fromRedisBenchmark('redis-benchmark -c zero'), (err) => err instanceof SpecError && err.path === '-c')
  assert.throws(() => fromRedisBenchmark('redis-benchmark -l'), (err) => err instanceof SpecError && /CLI/.test(err.message))
  assert.throws(() => fromRedisBenchmark(42), TypeError)
  const warned = once(process, 'warning')
  fromRedisBenchmark('redis-benchmark -t get ping')
  const [warning] = await warned
  assert.match(warning.message, /-t is ignored/)
})
