// Secrets never shown from Node: a password in a URL (user info or query), as a field, or
// wrong, an ACL user's password, and a TLS client key's file and passphrase appear in no
// inspected workload or report, JSON, comparison, merged report, check() message or error.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { after, before, test } from 'node:test'
import { compare, mergeReports, run, SpecError, Workload } from 'respload'
import { startRedis } from 'respload/testing'

const PASSWORD = 'hunter2-node'
const USER_PW = 'Us3r/pw?%x'
const USER_PW_URL = encodeURIComponent(USER_PW)
const KEY_PW = 'K3y-pass-phrase'
const SECRETS = [PASSWORD, 'hunter2', 'Wr0ng-guess', 'Us3r', KEY_PW, 'secret-enc']
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
  assert.equal(await redis.command('ACL', 'SETUSER', 'alice', 'on', `>${USER_PW}`, '~*', '+@all'), 'OK')
  for (const target of [
    { url: `redis://:${PASSWORD}@${host}:${port}` },
    { url: `redis://${host}:${port}/0?password=${PASSWORD}` },
    { host, port, password: PASSWORD },
    { url: `redis://alice:${USER_PW_URL}@${host}:${port}` },
    { host, port, user: 'alice', password: USER_PW },
  ]) {
    const workload = new Workload({ target, load: { requests: 40 } })
    const report = await run(workload)
    assert.equal(report.totals.ops, 40)
    assert.equal(report.totals.errors, 0)
    let message = ''
    try {
      report.check({ p99Ms: 0.0000001 })
    } catch (e) {
      message = `${e.message} ${inspect(e)}`
    }
    assert.match(message, /respload budget not met/)
    const compared = compare(report, report)
    const merged = mergeReports([report, report])
    assert.equal(merged.totals.ops, 80)
    assert.deepEqual(shown(inspect(report, { depth: 10 }), JSON.stringify(report), message,
      inspect(workload, { depth: 10 }), JSON.stringify(workload), String(compared),
      inspect(compared, { depth: 10 }), JSON.stringify(compared), inspect(merged, { depth: 10 }),
      JSON.stringify(merged)), [])
  }
})

test('no output holds the TLS key file or its passphrase', async () => {
  const server = await startRedis({ tls: true, tlsAuthClients: true })
  try {
    const key = join(server.tls.dir, 'secret-enc.key')
    execFileSync('openssl', ['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', server.tls.clientKey,
      '-out', key, '-passout', `pass:${KEY_PW}`])
    const tls = { ...server.tls.targetTls(true), key, key_password: KEY_PW }
    const workload = new Workload({ target: { url: server.url, tls }, load: { requests: 30 } })
    const report = await run(workload)
    assert.equal(report.totals.ops, 30)
    assert.equal(report.totals.errors, 0)
    assert.equal(report.workload.target.tls.key_password, '***')
    const texts = [inspect(workload, { depth: 10 }), JSON.stringify(workload),
      inspect(report, { depth: 10 }), JSON.stringify(report), String(compare(report, report))]
    for (const keyPassword of ['Wr0ng-guess', undefined]) {
      const bad = { ...tls, key_password: keyPassword }
      const err = await run({ target: { url: server.url, tls: bad }, load: { requests: 5 } }).catch((e) => e)
      assert.ok(err instanceof SpecError, String(err))
      assert.equal(err.path, 'target.tls.key')
      texts.push(err.message, inspect(err), JSON.stringify(err))
    }
    assert.deepEqual(shown(...texts), [])
  } finally {
    await server.stop()
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
