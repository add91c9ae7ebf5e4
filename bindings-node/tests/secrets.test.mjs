// Secrets never shown from Node: a password in a URL (user info or query), as a field, or
// wrong, appears in no inspected report, JSON, check() message or error.
import assert from 'node:assert/strict'
import { inspect } from 'node:util'
import { after, before, test } from 'node:test'
import { run } from 'respload'
import { startRedis } from 'respload/testing'

const PASSWORD = 'hunter2-node'
const SECRETS = [PASSWORD, 'hunter2', 'Wr0ng-guess']
const shown = (...texts) => SECRETS.filter((s) => texts.some((t) => t.includes(s)))

let redis
before(async () => {
  redis = await startRedis({ password: PASSWORD })
})
after(async () => {
  await redis?.stop()
})

test('no output of a run holds its password', async () => {
  const { host, port } = redis
  for (const target of [
    { url: `redis://:${PASSWORD}@${host}:${port}` },
    { url: `redis://${host}:${port}/0?password=${PASSWORD}` },
    { host, port, password: PASSWORD },
  ]) {
    const report = await run({ target, load: { requests: 40 } })
    assert.equal(report.totals.ops, 40)
    assert.equal(report.totals.errors, 0)
    let message = ''
    try {
      report.check({ p99Ms: 0.0000001 })
    } catch (e) {
      message = `${e.message} ${inspect(e)}`
    }
    assert.match(message, /respload budget not met/)
    assert.deepEqual(shown(inspect(report, { depth: 10 }), JSON.stringify(report), message), [])
  }
})

test('no error holds a password, wrong or malformed', async () => {
  const { host, port } = redis
  const texts = []
  for (const url of [
    `redis://:Wr0ng-guess@${host}:${port}`,
    `redis://:Wr0ng-guess%zz@${host}:${port}`,
    `redis://${host}:${port}/?pasword=Wr0ng-guess`,
    `redis://:${PASSWORD}@${host}:notaport`,
  ]) {
    const err = await run({ target: { url }, load: { requests: 5 } }).catch((e) => e)
    assert.ok(err instanceof Error, String(err))
    texts.push(err.message, inspect(err), JSON.stringify(err))
  }
  assert.deepEqual(shown(...texts), [])
  assert.ok(texts.some((t) => /AUTH failed/.test(t)), texts.join('\n'))
})
