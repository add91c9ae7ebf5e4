// Workload, the validated object (the core's and Python's `Workload`): built from a spec object
// or a file, checked before any traffic, and run, sharded and serialized like a spec object.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { FileError, run, SpecError, validateSpec, Workload } from 'respload'
import { startRedis } from 'respload/testing'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
let redis
let dir
before(async () => {
  redis = await startRedis()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-workload-'))
})
after(async () => {
  await redis?.stop()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('new Workload(spec) normalizes the spec and runs it', async () => {
  const workload = new Workload({
    target: { url: redis.url },
    load: { connections: 3, requests: 600 },
    keys: { prefix: 'w:', range: [0, 599], distribution: 'sequential' },
    commands: [{ name: 'set' }],
  })
  assert.ok(workload instanceof Workload)
  assert.equal(workload.spec.load.connections, 3)
  assert.equal(workload.spec.load.pipeline, 1, 'defaults are filled in')
  assert.deepEqual(JSON.parse(JSON.stringify(workload)), workload.spec)
  assert.deepEqual(validateSpec(workload), workload.spec)

  await redis.command('FLUSHALL')
  const report = await run(workload)
  assert.equal(report.totals.ops, 600)
  assert.equal(await redis.command('DBSIZE'), 600)
  assert.equal(await redis.command('EXISTS', 'w:0', 'w:599'), 2)
})

test('a bad spec throws SpecError naming the field before any traffic', () => {
  assert.throws(
    () => new Workload({ load: { connections: 0 }, commands: [{ name: 'get' }] }),
    (err) => err instanceof SpecError && err.path === 'load.connections',
  )
  assert.throws(() => new Workload(null), TypeError)
})

test('Workload.fromFile reads TOML with scales and vars', () => {
  const file = path.join(dir, 'w.toml')
  fs.writeFileSync(file, [
    '[vars]', 'n = 100', '[scales.big]', 'n = 1000',
    '[load]', 'connections = 2', 'requests = "${n}"',
    '[[commands]]', 'name = "get"', '',
  ].join('\n'))
  assert.equal(Workload.fromFile(file).spec.load.requests, 100)
  assert.equal(Workload.fromFile(file, { scale: 'big' }).spec.load.requests, 1000)
  assert.equal(Workload.fromFile(new URL(`file://${file}`), { vars: { n: 7 } }).spec.load.requests, 7)

  const quickstart = Workload.fromFile(path.join(root, 'examples/scenarios/quickstart.toml'))
  assert.deepEqual(quickstart.spec.phases.map((p) => p.name), ['populate', 'measure'])
  assert.throws(() => Workload.fromFile(path.join(dir, 'missing.toml')), FileError)
})

test('shard() splits a workload; the peer command lines give workloads', () => {
  const workload = new Workload({ load: { connections: 5, requests: 1001 }, commands: [{ name: 'get' }] })
  const shares = [0, 1, 2].map((i) => workload.shard(i, 3))
  assert.ok(shares.every((s) => s instanceof Workload))
  assert.deepEqual(shares.map((s) => s.spec.load.connections), [2, 2, 1])
  assert.equal(shares.reduce((sum, s) => sum + s.spec.load.requests, 0), 1001)
  // The same share whether from a Workload or from its spec object.
  assert.deepEqual(shares[1].spec, new Workload(workload.spec).shard(1, 3).spec)
  assert.throws(() => workload.shard(0, 6), SpecError, 'fewer connections than shards')

  const rb = Workload.fromRedisBenchmark('redis-benchmark -t get,set -n 500 -c 4')
  assert.deepEqual(rb.spec.phases.map((p) => p.name), ['SET', 'GET'])
  const mt = Workload.fromMemtier('memtier_benchmark -t 2 -c 3 -n 50 --ratio=1:1')
  assert.equal(mt.spec.load.connections, 6)
})
