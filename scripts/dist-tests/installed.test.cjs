// The npm package from CommonJS, installed from dist/'s tarballs (scripts/test-dist.sh copies
// this file into a fresh npm project): `require('respload')` and `require('respload/testing')`
// are the same instances as the ES modules, and a workload runs.
'use strict'
const assert = require('node:assert/strict')
const { test } = require('node:test')
const respload = require('respload')
const testing = require('respload/testing')

test('require() and import give the same module instances', async () => {
  const esm = await import('respload')
  const esmTesting = await import('respload/testing')
  assert.equal(esm.run, respload.run)
  assert.equal(esm.SpecError, respload.SpecError)
  assert.equal(esmTesting.withRedis, testing.withRedis)
})

test('a workload runs against a throwaway server (CommonJS)', () =>
  testing.withRedis(async (redis) => {
    const report = await respload.run({
      target: { url: redis.url },
      load: { connections: 2, requests: 500 },
      commands: [{ name: 'set' }],
    })
    assert.equal(report.totals.ops, 500)
    report.check({ errorRate: 0 })
  }))
