// CommonJS: require('respload') and require('respload/testing') work, and are the very modules
// the ESM entry points re-export.
const assert = require('node:assert/strict')
const { test } = require('node:test')
const respload = require('respload')
const { run, Report, SpecError } = require('respload')
const { startRedis, withRedis } = require('respload/testing')

test('require() loads the package and runs a workload against a real server', async () => {
  await withRedis(async (redis) => {
    const report = await run({
      target: { url: redis.url },
      load: { connections: 2, requests: 400 },
      keys: { prefix: 'cjs:', range: [0, 399], distribution: 'sequential' },
      commands: [{ name: 'set' }],
    })
    assert.ok(report instanceof Report)
    assert.equal(report.totals.ops, 400)
    assert.equal(await redis.command('DBSIZE'), 400)
  })
})

test('spec errors from CommonJS are the same classes', async () => {
  await assert.rejects(run({ load: { connections: 0 } }), (err) => err instanceof SpecError && err.path === 'load.connections')
  assert.equal(typeof startRedis, 'function')
})

test('import() of the ESM entry points gives the same module instance', async () => {
  const esm = await import('respload')
  assert.equal(esm.run, respload.run)
  assert.equal(esm.Report, respload.Report)
  assert.equal(esm.default, respload)
  const testing = await import('respload/testing')
  assert.equal(testing.startRedis, startRedis)
})
