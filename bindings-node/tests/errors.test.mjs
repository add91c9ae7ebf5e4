// Errors: Error subclasses with stable codes, the field path of spec errors, connection and
// authentication failures from real servers, and spec files read with Workload.fromFile().
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import {
  AuthError,
  ConnectError,
  FileError,
  RespLoadError,
  SpecError,
  TlsError,
  Workload,
  run,
  start,
  validateSpec,
} from 'respload'
import { startRedis } from 'respload/testing'

/** A spec file's normalized spec, as `Workload.fromFile` reads it. */
const loadSpec = (file, options) => Workload.fromFile(file, options).spec

const root = fileURLToPath(new URL('../..', import.meta.url))
let redis
let dir
before(async () => {
  redis = await startRedis()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-node-test-'))
})
after(async () => {
  await redis?.stop()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('an invalid field rejects with SpecError, code ERR_RESPLOAD_SPEC and the field path', async () => {
  const err = await run({ target: { url: redis.url }, load: { connections: 0 } }).catch((e) => e)
  assert.ok(err instanceof SpecError && err instanceof RespLoadError && err instanceof Error)
  assert.equal(err.name, 'SpecError')
  assert.equal(err.code, 'ERR_RESPLOAD_SPEC')
  assert.equal(err.path, 'load.connections')
  assert.match(err.message, /load\.connections.*0 is out of range: allowed is 1 to 1000000/)
  // Nothing was sent.
  assert.equal(await redis.command('DBSIZE'), 0)
  const info = await redis.command('INFO', 'clients')
  assert.match(info, /connected_clients:1\r?\n/)
})

test('spec errors name nested and phase paths; start() and validateSpec() throw them synchronously', () => {
  const cases = [
    [{ load: { conections: 5 } }, 'load.conections', /unknown field `conections`, expected one of `connections`/],
    [{ phases: [{ name: 'a' }, { name: 'b', load: { pipeline: 0 } }] }, 'phases[1].load.pipeline', /0 is out of range/],
    [{ keys: { distribution: 'spiral' } }, 'keys.distribution', /spiral/],
    [{ load: { duration: 'soon' } }, 'load.duration', /soon/],
  ]
  for (const [spec, wantPath, wantMessage] of cases) {
    for (const call of [() => start(spec), () => validateSpec(spec)]) {
      assert.throws(call, (err) => {
        assert.ok(err instanceof SpecError, String(err))
        assert.equal(err.code, 'ERR_RESPLOAD_SPEC')
        assert.equal(err.path, wantPath)
        assert.match(err.message, wantMessage)
        return true
      })
    }
  }
  assert.throws(() => start('load.connections = 1'), TypeError)
})

test('camelCase spec keys are rejected: specs are snake_case', () => {
  assert.throws(
    () => validateSpec({ target: { clientName: 'x' } }),
    (err) => err instanceof SpecError && err.path === 'target.clientName' && /client_name/.test(err.message),
  )
})

test('an unreachable server rejects with ConnectError (ERR_RESPLOAD_CONNECT) and the address', async () => {
  // A port that was free a moment ago, with nothing listening on it.
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
  const err = await run({ target: { host: '127.0.0.1', port }, load: { requests: 10 } }).catch((e) => e)
  assert.ok(err instanceof ConnectError && err instanceof RespLoadError, String(err))
  assert.equal(err.code, 'ERR_RESPLOAD_CONNECT')
  assert.equal(err.address, `127.0.0.1:${port}`)
  assert.match(err.reason, /refused/i)
  assert.match(err.message, /refused/i)
  // The operating system's error number, positive as Python's `errno`.
  assert.equal(err.errno, os.constants.errno.ECONNREFUSED)
})

test('a failed TLS handshake rejects with TlsError (ERR_RESPLOAD_TLS), a ConnectError', async () => {
  // TLS to a plain-text port: the handshake fails before any traffic.
  const err = await run({
    target: { url: `rediss://${redis.host}:${redis.port}`, connect_timeout: '1s', tls: { insecure: true } },
    load: { requests: 10 },
  }).catch((e) => e)
  assert.ok(err instanceof TlsError && err instanceof ConnectError && err instanceof RespLoadError, String(err))
  assert.equal(err.name, 'TlsError')
  assert.equal(err.code, 'ERR_RESPLOAD_TLS')
  assert.equal(err.address, `${redis.host}:${redis.port}`)
  assert.match(err.reason, /plain-text/)
  assert.equal(await redis.command('DBSIZE'), 0)
})

test('a wrong password rejects with AuthError (ERR_RESPLOAD_AUTH)', async () => {
  const secured = await startRedis({ password: 's3cret' })
  try {
    const err = await run({
      target: { host: secured.host, port: secured.port, password: 'wrong' },
      load: { requests: 10 },
    }).catch((e) => e)
    assert.ok(err instanceof AuthError, String(err))
    assert.equal(err.code, 'ERR_RESPLOAD_AUTH')
    assert.equal(err.address, `${secured.host}:${secured.port}`)
    assert.equal(typeof err.reason, 'string')
    assert.equal(await secured.command('DBSIZE'), 0)

    const ok = await run({ target: { url: secured.url }, load: { requests: 50 }, commands: [{ name: 'set' }] })
    assert.equal(ok.totals.ops, 50)
    assert.equal(ok.totals.errors, 0)
    assert.ok(!JSON.stringify(ok).includes('s3cret'), 'the password is redacted in the report')
  } finally {
    await secured.stop()
  }
})

test('Workload.fromFile() reads TOML and JSON files into runnable specs', async () => {
  const quickstart = loadSpec(path.join(root, 'examples/scenarios/quickstart.toml'))
  assert.deepEqual(quickstart.phases.map((p) => p.name), ['populate', 'measure'])
  assert.equal(quickstart.phases[0].load.connections, 20)
  assert.equal(quickstart.phases[0].keys.prefix, 'quickstart:')

  const toml = path.join(dir, 'fill.toml')
  fs.writeFileSync(toml, '[load]\nconnections = 2\nrequests = 300\n[keys]\nprefix = "file:"\nrange = [0, 299]\n' +
    'distribution = "sequential"\n[[commands]]\nname = "set"\n')
  const spec = loadSpec(new URL(`file://${toml}`))
  spec.target.url = redis.url
  await redis.command('FLUSHALL')
  const report = await run(spec)
  assert.equal(report.totals.ops, 300)
  assert.equal(await redis.command('DBSIZE'), 300)

  const json = path.join(dir, 'spec.json')
  fs.writeFileSync(json, JSON.stringify({ load: { requests: 5 }, commands: [{ name: 'get' }] }))
  assert.equal(loadSpec(json).load.requests, 5)
})

test('Workload.fromFile() resolves [vars] at a scale and with values given', async () => {
  const file = path.join(dir, 'scaled.toml')
  fs.writeFileSync(file, [
    '[vars]', 'url = "redis://127.0.0.1:1"', 'last = 99999', '[scales.ci]', 'last = 149',
    '[target]', 'url = "${url}"',
    '[keys]', 'prefix = "scaled:"', 'range = [0, "${last}"]', 'distribution = "sequential"',
    '[load]', 'connections = 2', 'requests = "all_keys"', '[[commands]]', 'name = "set"', '',
  ].join('\n'))
  assert.deepEqual(loadSpec(file, { vars: { url: redis.url } }).keys.range, [0, 99999])
  await redis.command('FLUSHALL')
  const report = await run(loadSpec(file, { scale: 'ci', vars: { url: redis.url } }))
  assert.equal(report.totals.ops, 150)
  assert.equal(await redis.command('DBSIZE'), 150)
  assert.throws(() => loadSpec(file, { vars: { nope: 1 } }), (err) => err instanceof SpecError && err.path === 'vars.nope')
  assert.throws(() => loadSpec(file, { scale: 'full' }), (err) => err instanceof SpecError && err.path === 'scale')
  // Options of the wrong type are named; vars that are not an object are the core's SpecError.
  assert.throws(() => loadSpec(file, { scale: 5 }), (err) => err instanceof TypeError && /^scale: expected/.test(err.message))
  assert.throws(() => loadSpec(file, { vars: [1] }), (err) => err instanceof SpecError && err.path === 'vars')
  assert.throws(() => loadSpec(file, { vars: { last: NaN } }), (err) => err instanceof SpecError && err.path === 'vars.last')
})

test('numbers JSON cannot carry are refused by field path before any traffic', async () => {
  const before = await redis.command('INFO', 'stats')
  const cases = [
    [{ load: { rate: Infinity } }, 'load.rate', 'Infinity is not a finite number'],
    [{ load: { connections: NaN } }, 'load.connections', 'NaN is not a finite number'],
    [{ phases: [{ load: { rate: -Infinity } }] }, 'phases[0].load.rate', '-Infinity is not'],
    [{ seed: 2n ** 64n }, 'seed', '18446744073709551616n is a BigInt'],
  ]
  for (const [fields, where, why] of cases) {
    const spec = { target: { url: redis.url }, ...fields }
    assert.throws(() => validateSpec(spec), (err) => err instanceof SpecError && err.path === where && err.message.includes(why))
    await assert.rejects(run(spec), (err) => err instanceof SpecError && err.path === where)
  }
  const processed = (info) => Number(/total_commands_processed:(\d+)/.exec(info)[1])
  // Only the two INFO calls of this test.
  assert.equal(processed(await redis.command('INFO', 'stats')) - processed(before), 1)
})

test('Workload.fromFile() errors: FileError for a missing file, SpecError with path for a bad one', () => {
  const missing = path.join(dir, 'missing.toml')
  assert.throws(() => loadSpec(missing), (err) => {
    assert.ok(err instanceof FileError && err instanceof RespLoadError)
    assert.equal(err.code, 'ERR_RESPLOAD_FILE')
    assert.equal(err.path, missing)
    // The operating system's number and text, as Python's `errno` and `reason`.
    assert.equal(err.errno, os.constants.errno.ENOENT)
    assert.match(err.reason, /no such file/i)
    return true
  })
  const bad = path.join(dir, 'bad.toml')
  fs.writeFileSync(bad, '[load]\npipeline = 0\n')
  assert.throws(() => loadSpec(bad), (err) => {
    assert.ok(err instanceof SpecError)
    assert.equal(err.path, 'load.pipeline')
    assert.ok(err.message.includes(bad), err.message)
    return true
  })
  const broken = path.join(dir, 'broken.toml')
  fs.writeFileSync(broken, '[load\n')
  assert.throws(() => loadSpec(broken), (err) => err instanceof SpecError && /TOML/.test(err.message))
})
