// The names the package shares with the core (`respload schema bindings`): its error classes,
// budget keys and comparison metrics are the core's, from CommonJS and ES modules alike.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { createRequire } from 'node:module'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import * as esm from 'respload'
import { startRedis } from 'respload/testing'

const requireCjs = createRequire(import.meta.url)
const cjs = requireCjs('respload')
const root = fileURLToPath(new URL('../..', import.meta.url))
let names
let redis
before(async () => {
  const bin = path.join(root, 'bindings-node', 'cli.js')
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'schema', 'bindings'])
  names = JSON.parse(stdout)
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

/** The core's camelCase of a snake_case name (an underscore before a digit stays). */
const camel = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())

test('every error kind of the core has its class, with its code, parent and fields', () => {
  assert.deepEqual(
    names.errors.map((e) => e.kind),
    ['Spec', 'Connect', 'Tls', 'Auth', 'Protocol', 'File', 'Barrier', 'Internal'],
  )
  for (const e of names.errors) {
    const cls = cjs[e.class]
    assert.equal(typeof cls, 'function', e.class)
    assert.equal(esm[e.class], cls, `${e.class}: the same class from ES modules`)
    assert.equal(cjs.default[e.class], cls)
    assert.equal(cls.name, e.class)
    const parent = e.parent ? cjs[e.parent] : cjs.RespLoadError
    assert.ok(cls.prototype instanceof parent, `${e.class} extends ${e.parent ?? 'RespLoadError'}`)
    // Built as from the addon's error: the fields the core declares, by name.
    const fields = Object.fromEntries(e.fields.map((f) => [f.name, f.type === 'errno' ? 7 : 'x']))
    const err = new cls('message', { code: e.code, ...fields })
    assert.equal(err.code, e.code)
    assert.equal(err.name, e.class)
    assert.equal(err.message, 'message')
    for (const [name, value] of Object.entries(fields)) assert.equal(err[name], value, `${e.class}.${name}`)
  }
  // Every class the package exports that ends in Error is a core kind's, the base or AbortError.
  const exported = Object.keys(cjs).filter((k) => k.endsWith('Error')).sort()
  const expected = [...names.errors.map((e) => e.class), 'RespLoadError', 'AbortError'].sort()
  assert.deepEqual(exported, expected)
})

test("check()'s budget keys are the core's limits, camelCased", async () => {
  const report = await esm.run({ target: { url: redis.url }, load: { requests: 200 } })
  const keys = names.limits.map((l) => camel(l.name))
  assert.deepEqual(keys, ['p50Ms', 'p90Ms', 'p99Ms', 'p99_9Ms', 'maxMs', 'errorRate', 'opsPerSec'])
  // Every one is taken, and a generous one holds.
  const generous = Object.fromEntries(names.limits.map((l) => [camel(l.name), l.bound === 'min' ? 0 : 1e9]))
  generous.errorRate = 1
  assert.equal(report.check(generous), report)
  // Any other key is refused, naming the ones there are.
  assert.throws(
    () => report.check({ p98Ms: 1 }),
    (err) => err instanceof TypeError &&
      err.message.includes(`unknown limit \`p98Ms\` (allowed: ${keys.join(', ')}, commands)`),
  )

  // compare(): one row per limit of the core (its name, as data), and comparison.check() takes
  // the keys report.check() takes; any other is a TypeError naming the allowed ones.
  const comparison = esm.compare(report, report)
  assert.deepEqual([...new Set(comparison.rows.map((r) => r.metric))], names.limits.map((l) => l.name))
  const rowKeys = names.comparison.$defs.ComparisonRow['x-field-order']
  assert.deepEqual(Object.keys(comparison.rows[0]).sort(), [...rowKeys].sort())
  const generousChange = Object.fromEntries(keys.map((k) => [k, '+100000%']))
  assert.deepEqual(comparison.check(generousChange).failures, [])
  assert.throws(
    () => comparison.check({ p99_ms: '+10%' }),
    (err) => err instanceof TypeError &&
      err.message.includes(`unknown limit \`p99_ms\` (allowed: ${keys.join(', ')})`),
  )
})
