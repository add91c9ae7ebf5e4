// Comparing reports (issue 28): a server made slower by a known amount, against a real one.
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { compare, Comparison, run, SpecError } from 'respload'
import { startRedis } from 'respload/testing'

const SPIN = "local s = redis.call('TIME') local t0 = tonumber(s[1]) * 1000000 + tonumber(s[2]) " +
  "repeat local t = redis.call('TIME') " +
  "if tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 >= tonumber(ARGV[1]) then return 1 end until false"

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

const spins = (sha, us) => run({
  target: { url: redis.url },
  load: { connections: 1, requests: 1000 },
  commands: [{ template: `EVALSHA ${sha} 0 ${us}`, label: 'spin' }],
  observe: { info: false },
})

test('a slower run is worse beyond noise and check() names it', async () => {
  const sha = await redis.command('SCRIPT', 'LOAD', SPIN)
  const base = await spins(sha, 100)
  const slow = await spins(sha, 500)
  const c = compare(base, slow)
  assert.ok(c instanceof Comparison)
  assert.deepEqual(c.labels, ['baseline', 'current'])
  const p50 = c.rows.find((r) => r.command === 'SPIN' && r.metric === 'p50_ms')
  assert.deepEqual(p50.values, [base.commands.SPIN.latencyMs.p50, slow.commands.SPIN.latencyMs.p50])
  assert.ok(p50.changes[1] > 1.5, `${p50.changes[1]}`)
  assert.deepEqual(p50.worse, [false, true])
  assert.ok(c.worse.includes(p50))
  // text (and String(c)): the table `respload compare` prints, the slower run marked worse.
  assert.equal(String(c), c.text)
  assert.match(c.text, /SPIN/)
  assert.match(c.text, /worse/)
  assert.throws(() => c.check({ p50Ms: '+50%' }), (e) =>
    e instanceof assert.AssertionError && /current: SPIN p50_ms of phase `main`/.test(e.message))
  assert.deepEqual(c.check({ p50Ms: '+100000%', errorRate: 0.01 }).failures, [])
  // An unknown key is a TypeError listing the keys (report.check()'s); a bad change the core's SpecError.
  assert.throws(() => c.check({ p42: '+1%' }), (e) => e instanceof TypeError && /unknown limit `p42` \(allowed: p50Ms, p90Ms/.test(e.message))
  assert.throws(() => c.check({ p99Ms: 'ten' }), (e) => e instanceof SpecError && /`p99_ms=ten`: `ten` is not a number/.test(e.message))
  const dir = mkdtempSync(join(tmpdir(), 'respload-compare-'))
  base.save(join(dir, 'base.json'))
  const byFile = compare(join(dir, 'base.json'), slow, base)
  assert.deepEqual(byFile.labels, ['base.json', 'run 1', 'run 2'])
  assert.equal(byFile.rows[0].values.length, 3)
  // Labels given, as Python's labels=: they name the columns and the failures.
  const named = compare(base, slow, { labels: ['v1', 'v2'] })
  assert.deepEqual(named.labels, ['v1', 'v2'])
  assert.throws(() => named.check({ p50Ms: '+50%' }), (e) => /v2: SPIN p50_ms of phase `main`/.test(e.message))
  assert.throws(() => compare(base, slow, { labels: ['only one'] }), (e) => e instanceof TypeError && /labels: expected 2 strings/.test(e.message))
})
