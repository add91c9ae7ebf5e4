// Shards started at one instant and their reports merged (issue 26), against a real server.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { BarrierError, FileError, mergeReports, Report, run, SpecError } from 'respload'
import { startRedis } from 'respload/testing'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

const calls = async (command) => {
  const info = await redis.command('INFO', 'commandstats')
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0)
}

test('shards started together merge into what the server counted', async () => {
  await redis.command('CONFIG', 'RESETSTAT')
  const spec = {
    target: { url: redis.url },
    seed: 9,
    load: { connections: 3, requests: 3001 },
    keys: { prefix: 'merge:', range: [0, 99] },
    commands: [{ name: 'set' }, { name: 'get', weight: 2 }],
  }
  const startAt = new Date(Date.now() + 1000)
  const shards = await Promise.all([0, 1, 2].map((i) => run(spec, { shard: [i, 3], startAt })))
  assert.deepEqual(shards.map((r) => r.shard.index), [0, 1, 2])
  for (const r of shards) assert.ok(r.startSkewMs >= 0 && r.startSkewMs < 250, `${r.startSkewMs}`)
  const dir = mkdtempSync(join(tmpdir(), 'respload-merge-'))
  shards[1].save(join(dir, 's1.json'))
  const merged = mergeReports([shards[2], join(dir, 's1.json'), shards[0]])
  assert.ok(merged instanceof Report)
  assert.equal(merged.totals.ops, 3001)
  assert.equal(merged.totals.ops, (await calls('set')) + (await calls('get')))
  assert.equal(merged.commands.SET.ops, await calls('set'))
  assert.deepEqual(merged.hosts.map((h) => h.shard), [0, 1, 2])
  assert.equal(merged.workload.load.requests, 3001)
  assert.equal(merged.timeline.reduce((n, row) => n + row.ops, 0), 3001)
  assert.equal(merged.totals.latencyMs.max, Math.max(...shards.map((r) => r.totals.latencyMs.max)))
})

test('merging what is not one workload, or starting late, is a SpecError', async () => {
  const spec = { target: { url: redis.url }, load: { connections: 2, requests: 20 } }
  const a = await run(spec, { shard: [0, 2] })
  const b = await run({ ...spec, load: { connections: 2, requests: 22 } }, { shard: [1, 2] })
  assert.throws(() => mergeReports([a, b]), (e) =>
    e instanceof SpecError && e.path === 'reports[1].workload' && /load\.requests/.test(e.message))
  await assert.rejects(run(spec, { startAt: Date.now() / 1000 - 10 }), (e) =>
    e instanceof SpecError && e.path === 'start_at')
  await assert.rejects(run(spec, { startAt: 'later' }), SpecError)
  assert.throws(() => mergeReports('x'), TypeError)
  // A missing file is a FileError naming it, read in the core.
  const gone = join(tmpdir(), `respload-gone-${process.pid}.json`)
  assert.throws(() => mergeReports([a, gone]), (e) => e instanceof FileError && e.message.includes(gone))
  const r = await run(spec, { startAt: new Date(Date.now() + 200).toISOString() })
  assert.ok(r.phases[0].startedAt >= r.startAt)
})

test('a barrier runs the shards\' phases in step; a host that never arrives is a BarrierError', async () => {
  // A barrier server of its own: its scripts' commands stay out of the target's commandstats.
  const meet = await startRedis()
  try {
    const spec = {
      target: { url: redis.url },
      seed: 5,
      load: { connections: 2 },
      keys: { prefix: 'step:', range: [1, 400] },
      phases: [
        { name: 'populate', measured: false, load: { requests: 'all_keys' },
          keys: { distribution: 'sequential' }, commands: [{ name: 'set' }] },
        { name: 'read', load: { requests: 400 }, commands: [{ name: 'get' }] },
      ],
    }
    const options = { barrier: meet.url, barrierId: 'node-step', barrierTimeout: 30 }
    const shards = await Promise.all([0, 1].map((i) => run(spec, { shard: [i, 2], ...options })))
    const ended = Math.max(...shards.map((r) => r.phases[0].startedAt + r.phases[0].durationS))
    for (const r of shards) {
      assert.equal(typeof r.phases[0].barrierWaitS, 'number')
      assert.ok(r.phases[1].startedAt >= ended)
    }
    assert.equal(shards.reduce((n, r) => n + r.phases[1].totals.misses, 0), 0)
    const alone = { barrier: meet.url, barrierId: 'node-alone', barrierTimeout: '1s' }
    await assert.rejects(run(spec, { shard: [0, 2], ...alone }), (e) =>
      e instanceof BarrierError && e.code === 'ERR_RESPLOAD_BARRIER' && e.phase === 'populate' &&
      /1 of 2 hosts arrived within 1s/.test(e.reason) && /missing: shard 1/.test(e.message))
    await assert.rejects(run(spec, { shard: [0, 2], barrier: meet.url }), (e) =>
      e instanceof SpecError && e.path === 'barrier_id')
    await assert.rejects(run(spec, { shard: [0, 2], barrierId: 'x' }), TypeError)
  } finally {
    await meet.stop()
  }
})
