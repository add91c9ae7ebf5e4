// Traces against real redis-server processes: a capture holds exactly the commands respload
// sent, in order; a replay sends exactly the trace's commands (INFO commandstats) and reports
// it; a model is a spec the run API accepts; records stream in batches, malformed lines are
// counted by line number; errors are the package's classes.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { after, before, beforeEach, test } from 'node:test'
import {
  AbortError,
  Capture,
  ConnectError,
  FileError,
  Model,
  ProtocolError,
  Report,
  SpecError,
  Trace,
  Workload,
  replay,
  run,
} from 'respload'
import { startRedis } from 'respload/testing'
import { sleep } from './helpers.mjs'

let redis
let dir
before(async () => {
  redis = await startRedis()
  dir = mkdtempSync(join(tmpdir(), 'respload-trace-'))
})
after(async () => {
  await redis?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})
beforeEach(async () => {
  await redis.command('FLUSHALL')
  await redis.command('CONFIG', 'RESETSTAT')
})

/** Write records (`[client, t_ms, args]`, or a raw line as a string) as a respload trace. */
function writeTrace(name, records) {
  const path = join(dir, name)
  const base = 1_700_000_000_000_000
  const lines = records.map((r) => typeof r === 'string'
    ? r
    : JSON.stringify({ t_us: base + r[1] * 1000, db: 0, client: r[0], args: r[2] }))
  writeFileSync(path, lines.join('\n') + '\n')
  return path
}

/** `calls` of each command in the server's `INFO commandstats`, by upper-case name. */
async function commandstats() {
  const info = String(await redis.command('INFO', 'commandstats'))
  const out = {}
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),/gm)) out[m[1].toUpperCase()] = Number(m[2])
  return out
}

/** Resolve once the server has a MONITOR client (the capture is recording). */
async function monitoring() {
  const deadline = Date.now() + 20_000
  while (!String(await redis.command('CLIENT', 'LIST')).includes('cmd=monitor')) {
    assert.ok(Date.now() < deadline, 'MONITOR never started')
    await sleep(20)
  }
}

const text = (arg) => (typeof arg === 'string' ? arg : Buffer.isBuffer(arg) ? arg.toString('latin1') : `<${arg.size}>`)

test('a capture holds exactly the SETs respload sent, in order, from one client', async () => {
  const out = join(dir, 'capture.jsonl')
  const capture = Trace.startCapture({ url: redis.url, out })
  assert.ok(capture instanceof Capture)
  assert.equal(capture.done, false)
  assert.equal(await capture.whenStarted({ timeoutMs: 20_000 }), true)
  assert.equal(capture.started, true)
  // The signal is the server's word: it lists the capture in MONITOR at once.
  assert.ok(String(await redis.command('CLIENT', 'LIST')).includes('cmd=monitor'))
  const n = 300
  const sent = await run({
    target: { url: redis.url },
    load: { connections: 1, requests: n },
    keys: { prefix: 'cap:', range: [0, n - 1], distribution: 'sequential' },
    values: { size: 32 },
    commands: [{ name: 'set' }],
  })
  assert.equal(sent.commands.SET.ops, n)
  // MONITOR shows a command once it ran: the replies are in, so are their lines.
  await sleep(300)
  const report = await capture.stop()
  assert.equal(capture.done, true)
  assert.equal(report.out, out)
  assert.equal(report.interrupted, true)
  assert.equal(report.malformed, 0)
  assert.equal(report.nodes.length, 1)
  assert.equal(report.nodes[0].commands, report.commands)
  assert.equal(typeof report.durationS, 'number')

  const trace = Trace.open(out)
  assert.equal(trace.format, 'respload')
  const records = [...trace]
  assert.equal(records.length, report.commands, 'one line per captured command')
  const sets = records.filter((r) => text(r.args[0]).toUpperCase() === 'SET')
  assert.deepEqual(sets.map((r) => text(r.args[1])), Array.from({ length: n }, (_, i) => `cap:${i}`))
  for (const r of sets) {
    assert.equal(r.args.length, 3)
    assert.equal(Buffer.byteLength(r.args[2]), 32)
  }
  assert.equal(new Set(sets.map((r) => r.client)).size, 1, 'one connection')
  for (let i = 1; i < records.length; i++) assert.ok(records[i].tUs >= records[i - 1].tUs, 'in time order')
  assert.deepEqual(trace.malformed, { count: 0, lines: [] })
})

test('capture() ends by itself after maxCommands; an aborted one rejects with its report', async () => {
  const out = join(dir, 'max.jsonl')
  const captured = Trace.capture({ url: redis.url, out, maxCommands: 50 })
  await monitoring()
  await run({
    target: { url: redis.url },
    load: { connections: 2, requests: 2000 },
    keys: { prefix: 'max:', range: [0, 99] },
    commands: [{ name: 'set' }],
  })
  const report = await captured
  assert.equal(report.interrupted, false)
  assert.ok(report.commands >= 50, `${report.commands} commands`)
  assert.equal([...Trace.open(out)].length, report.commands)

  const controller = new AbortController()
  const aborted = Trace.capture({ url: redis.url, out: join(dir, 'aborted.jsonl'), signal: controller.signal })
  await monitoring()
  const reason = new Error('enough')
  controller.abort(reason)
  const err = await aborted.then(() => assert.fail('resolved'), (e) => e)
  assert.ok(err instanceof AbortError)
  assert.equal(err.cause, reason)
  assert.equal(err.report.interrupted, true)
  assert.equal(err.report.out, join(dir, 'aborted.jsonl'))
})

test('a capture the server refuses never starts, and wait() gives why', async () => {
  await redis.command('ACL', 'SETUSER', 'watcher', 'on', '>pw', '~*', '+@all', '-monitor')
  const url = `redis://watcher:pw@127.0.0.1:${redis.port}`
  const capture = Trace.startCapture({ url, out: join(dir, 'refused.jsonl'), duration: '30s' })
  assert.equal(await capture.whenStarted({ timeoutMs: 20_000 }), false)
  assert.equal(capture.started, false)
  await assert.rejects(capture.wait(), (e) => e instanceof ProtocolError && /MONITOR refused: NOPERM/.test(e.message))
  await assert.rejects(capture.whenStarted({ timeoutMs: -1 }), TypeError)
})

test('capture errors: SpecError for a bad spec, ConnectError for no server, TypeError for a misspelt option', async () => {
  await assert.rejects(Trace.capture({ url: redis.url, out: join(dir, 'x.jsonl'), maxCommands: 0 }), (e) => {
    assert.ok(e instanceof SpecError)
    assert.equal(e.path, 'max_commands')
    return true
  })
  await assert.rejects(Trace.capture({ url: redis.url, out: '' }), (e) => e instanceof SpecError && e.path === 'out')
  await assert.rejects(Trace.capture({ url: 'redis://127.0.0.1:1', out: join(dir, 'y.jsonl'), duration: '1s' }), ConnectError)
  await assert.rejects(Trace.capture({ url: redis.url, out: join(dir, 'z.jsonl'), max_commands: 1 }), TypeError)
})

test('a replay sends exactly the trace: INFO commandstats equals its counts, and phases[0].replay says so', async () => {
  const records = []
  for (let i = 0; i < 100; i++) {
    records.push(['10.0.0.1:1001', i * 2, ['RPUSH', 'list:a', String(i)]])
    records.push(['10.0.0.2:1002', i * 2 + 1, ['RPUSH', 'list:b', String(i)]])
    if (i % 4 === 0) {
      records.push(['10.0.0.3:1003', i * 2, ['INCR', 'counter']])
      records.push(['10.0.0.3:1003', i * 2, ['SET', `k:${i}`, 'v']])
    }
  }
  records.push(['10.0.0.3:1003', 150, ['FLUSHALL']])
  records.push(['10.0.0.1:1001', 199, ['SET', 'bin', { b64: 'AP8NCg==' }]])
  records.push(['10.0.0.2:1002', 199, ['SET', 'sized', { size: 100 }]])
  records.sort((a, b) => a[1] - b[1])
  records.splice(5, 0, 'this line is not a command')
  const path = writeTrace('replay.jsonl', records)

  // What the trace holds, read through Trace.
  const trace = Trace.open(path)
  const counts = {}
  let n = 0
  for (const rec of trace) {
    const name = text(rec.args[0]).toUpperCase()
    counts[name] = (counts[name] ?? 0) + 1
    n++
  }
  assert.equal(n, records.length - 1)
  assert.deepEqual(trace.malformed.lines.map((l) => l.split(':')[0]), ['line 6'])
  assert.equal(trace.malformed.count, 1)

  const report = await replay(path, { url: redis.url, speed: 2, prefill: false })
  assert.ok(report instanceof Report)
  const stats = await commandstats()
  for (const [name, calls] of Object.entries(counts)) {
    assert.equal(stats[name] ?? 0, name === 'FLUSHALL' ? 0 : calls, name)
  }
  const sent = n - counts.FLUSHALL
  assert.equal(report.totals.ops, sent)
  assert.equal(report.totals.errors, 0)
  const fidelity = report.phases[0].replay
  assert.equal(fidelity.file, path)
  assert.equal(fidelity.format, 'respload')
  assert.equal(fidelity.traced, n)
  assert.equal(fidelity.planned, sent)
  assert.equal(fidelity.replayed, sent)
  assert.deepEqual(fidelity.skipped, { 'dropped: FLUSHALL': 1 })
  assert.equal(fidelity.malformed, 1)
  assert.match(fidelity.malformedLines[0], /^line 6: /)
  assert.equal(fidelity.connections, 3)
  assert.equal(fidelity.perClient, true)
  assert.equal(fidelity.speed, 2)
  assert.equal(fidelity.loops, 1)
  assert.ok(fidelity.scheduleMs.p99 >= 0)
  // Each recorded client's order kept; the bytes and sizes arrived whole.
  const want = Array.from({ length: 100 }, (_, i) => String(i))
  assert.deepEqual(await redis.command('LRANGE', 'list:a', 0, -1), want)
  assert.deepEqual(await redis.command('LRANGE', 'list:b', 0, -1), want)
  assert.equal(await redis.command('GET', 'counter'), '25')
  assert.equal(await redis.command('STRLEN', 'bin'), 4)
  assert.equal(await redis.command('STRLEN', 'sized'), 100)
})

test('replay options reach the spec: keyPrefix, drop, loops, connections, and prefill makes reads hit', async () => {
  const records = []
  for (let i = 0; i < 40; i++) records.push([`c:${i % 4}`, i, ['GET', `cold:${i}`]])
  records.push(['c:0', 50, ['SET', 'warm', '12345']])
  records.push(['c:0', 51, ['DEL', 'warm']])
  const trace = Trace.open(writeTrace('options.jsonl', records))
  const report = await trace.replay({
    url: redis.url,
    rate: 2000,
    keyPrefix: 'r:',
    drop: ['del'],
    loops: 2,
    connections: 2,
    prefillSize: 10,
  })
  const fidelity = report.phases[0].replay
  assert.equal(fidelity.loops, 2)
  assert.equal(fidelity.connections, 2)
  assert.equal(fidelity.perClient, false)
  assert.equal(fidelity.replayed, 2 * 41)
  assert.deepEqual(fidelity.skipped, { 'dropped: DEL': 1 })
  assert.equal(fidelity.prefill.keys, 40)
  assert.equal(fidelity.prefill.errors, 0)
  assert.ok(Math.abs(fidelity.rate - 2000) < 1e-6, `${fidelity.rate}`)
  assert.equal(report.commands.GET.hits, 80)
  assert.equal(report.commands.GET.misses, 0)
  assert.equal(await redis.command('STRLEN', 'r:cold:3'), 10)
  assert.equal(await redis.command('GET', 'r:warm'), '12345')
  assert.equal(await redis.command('EXISTS', 'cold:3'), 0)
})

test('a replay is checked before any traffic: SpecError naming the replay field', async () => {
  const path = writeTrace('check.jsonl', [['c', 0, ['PING']]])
  await assert.rejects(replay(path, { url: redis.url, speed: 2, rate: 5 }), (e) => {
    assert.ok(e instanceof SpecError)
    assert.equal(e.path, 'replay.rate')
    return true
  })
  await assert.rejects(replay(path, { url: redis.url, speed: 0 }), (e) => e instanceof SpecError && e.path === 'replay.speed')
  await assert.rejects(replay(path, { url: redis.url, load: { requests: 10 } }), SpecError)
  await assert.rejects(replay(join(dir, 'missing.jsonl'), { url: redis.url }), (e) => {
    assert.ok(e instanceof SpecError || e instanceof FileError, e.name)
    assert.match(e.message, /missing\.jsonl/)
    return true
  })
  assert.equal((await commandstats()).PING ?? 0, 0, 'nothing was sent')
})

test('model() fits a spec the run API accepts: its mix, rate and target', async () => {
  const records = []
  for (let i = 0; i < 500; i++) {
    const key = `user:${i % 50}`
    records.push([`app:${i % 3}`, i, i % 5 === 0 ? ['SET', key, 'x'.repeat(100)] : ['GET', key]])
  }
  const trace = Trace.open(writeTrace('model.jsonl', records))
  const model = await trace.model({ url: redis.url, rateX: 2 })
  assert.ok(model instanceof Model)
  assert.equal(model.fit.commands, 500)
  assert.equal(model.fit.distinctKeys, 50)
  assert.deepEqual(model.fit.mix.map((m) => m.name), ['GET', 'SET'])
  assert.ok(Math.abs(model.fit.mix[0].traceShare - 0.8) < 1e-9)
  assert.ok(Math.abs(model.fit.mix[1].traceShare - 0.2) < 1e-9)
  // Keys 0, 5, ..., 45 only SET (i % 5 === 0), the other 40 only read.
  assert.deepEqual(model.fit.keySpaces, { readOnly: 40, writtenOnly: 10, readAndWritten: 0 })
  assert.equal(model.spec.target.url, redis.url)
  assert.ok(Math.abs(model.spec.load.rate - 2 * model.fit.meanRate) < 1e-6 * model.spec.load.rate, JSON.stringify(model.spec.load))
  assert.match(model.toToml(), /^# respload model of a trace: 500 commands/)
  assert.match(model.toToml(), /^\[load\]$/m)
  assert.match(model.summary(), /mix \(trace -> model\):/)
  assert.deepEqual(Object.keys(model.toJSON()), ['spec', 'fit'])
  assert.equal(model.toJSON().fit.distinct_keys, 50)

  // The run API takes it as it is.
  assert.ok(model.workload() instanceof Workload)
  const report = await run(model.spec)
  assert.ok(report.totals.ops > 0)
  assert.equal(report.totals.errors, 0)
  assert.deepEqual(Object.keys(report.commands).sort(), ['GET', 'SET'])
})

test('records stream in batches, sync and async alike; each pass reads the file anew; gzip and binary args', async () => {
  const n = 5000
  const records = Array.from({ length: n }, (_, i) => [`c:${i % 7}`, i, ['SET', `k:${i}`, String(i)]])
  records.push(['c:0', n, ['SET', { b64: 'AP8=' }, { size: 12 }]])
  records.push('{"t_us": "not a number"}')
  const plain = writeTrace('big.jsonl', records)
  const gz = join(dir, 'big.jsonl.gz')
  writeFileSync(gz, gzipSync(Buffer.from(records.map((r) => typeof r === 'string'
    ? r
    : JSON.stringify({ t_us: r[1], client: r[0], args: r[2] })).join('\n'))))

  const trace = Trace.open(plain)
  const sync = [...trace]
  assert.equal(sync.length, n + 1)
  assert.deepEqual(sync[4321], { tUs: 1_700_000_000_000_000 + 4321 * 1000, db: 0, client: 'c:2', args: ['SET', 'k:4321', '4321'] })
  const last = sync[n]
  assert.ok(Buffer.isBuffer(last.args[1]))
  assert.deepEqual([...last.args[1]], [0x00, 0xff])
  assert.deepEqual(last.args[2], { size: 12 })
  assert.equal(trace.malformed.count, 1)
  assert.match(trace.malformed.lines[0], new RegExp(`^line ${n + 2}: `))

  const again = []
  for await (const rec of trace) again.push(rec)
  assert.deepEqual(again, sync, 'a second pass, async, reads the same records')
  // Leaving a loop early and iterating again starts over.
  for (const rec of trace) {
    assert.equal(rec.args[1], 'k:0')
    break
  }

  const zipped = Trace.open(gz)
  assert.equal(zipped.format, 'respload')
  let count = 0
  for await (const rec of zipped) {
    if (count === 10) assert.deepEqual(rec.args, ['SET', 'k:10', '10'])
    count++
  }
  assert.equal(count, n + 1)
  assert.equal(zipped.malformed.count, 1)
})

test('a MONITOR log is told by its first line; open errors are FileError and SpecError', () => {
  const log = join(dir, 'monitor.log')
  writeFileSync(log, 'OK\n1700000000.000001 [0 127.0.0.1:50001] "SET" "a b" "say \\"hi\\""\n' +
    '1700000000.000500 [2 lua] "GET" "a b"\n')
  const trace = Trace.open(log)
  assert.equal(trace.format, 'monitor')
  assert.deepEqual([...trace], [
    { tUs: 1_700_000_000_000_001, db: 0, client: '127.0.0.1:50001', args: ['SET', 'a b', 'say "hi"'] },
    { tUs: 1_700_000_000_000_500, db: 2, client: 'lua', args: ['GET', 'a b'] },
  ])
  assert.throws(() => Trace.open(join(dir, 'nope.jsonl')), (e) => {
    assert.ok(e instanceof FileError)
    assert.equal(e.path, join(dir, 'nope.jsonl'))
    assert.equal(e.errno, 2)
    return true
  })
  assert.throws(() => Trace.open(log, { format: 'csv' }), (e) => e instanceof SpecError && e.path === 'format')
  assert.throws(() => Trace.open(log, { fromat: 'monitor' }), TypeError)
})
