// progress: true (the CLI's live line on stderr when it is a terminal, nothing otherwise),
// start()'s AbortSignal, and the short summary console.log prints for a Report; against a real
// redis-server.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { inspect, promisify } from 'node:util'
import { after, before, test } from 'node:test'
import { AbortError, run, start } from 'respload'
import { startRedis } from 'respload/testing'

const root = fileURLToPath(new URL('../..', import.meta.url))

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

// A child process running a 2.5 s workload with progress: true, then printing its report's
// timeline as `TIMELINE <json>` on stdout.
const CHILD = `
const { run } = require('respload')
run({ target: { url: process.argv[1] }, load: { connections: 2, duration: '2500ms' },
      commands: [{ name: 'set' }] }, { progress: true })
  .then((r) => console.log('TIMELINE ' + JSON.stringify(r.timeline.map((t) => [t.t, t.opsPerSec, t.errors]))))
`

test('progress: true writes the live line to stderr when it is a terminal', async () => {
  // `script` runs the child on a pseudo-terminal: its stderr is a TTY.
  const command = `node -e ${shellQuote(CHILD)} ${shellQuote(redis.url)}`
  const { stdout } = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], { cwd: root })
  const lines = stdout.split(/\r?\n/)
  const timeline = JSON.parse(lines.find((l) => l.startsWith('TIMELINE ')).slice('TIMELINE '.length))
  const live = lines.filter((l) => l.startsWith('[main]'))
  assert.ok(timeline.length >= 2, stdout)
  assert.equal(live.length, timeline.length, stdout)
  live.forEach((line, i) => {
    const [t, opsPerSec, errors] = timeline[i]
    assert.match(line, new RegExp(`^\\[main\\]\\s+${t.toFixed(1)}s\\s+${Math.round(opsPerSec)} ops/s  p50 [\\d.]+ ms  p99 [\\d.]+ ms`))
    assert.ok(line.includes(`errors ${errors}  conns 2`), line)
  })
})

test('progress: true writes nothing when stderr is not a terminal', async () => {
  const child = spawn(process.execPath, ['-e', CHILD, redis.url], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => { stdout += d })
  child.stderr.on('data', (d) => { stderr += d })
  const code = await new Promise((resolve) => child.on('close', resolve))
  assert.equal(code, 0, stderr)
  assert.match(stdout, /^TIMELINE \[\[/)
  assert.equal(stderr, '')
})

test("aborting start()'s signal stops the run: wait() gives the partial report", async () => {
  const controller = new AbortController()
  const startedAt = Date.now()
  const runner = start(
    { target: { url: redis.url }, load: { connections: 2, duration: '60s' }, commands: [{ name: 'set' }] },
    { signal: controller.signal }
  )
  setTimeout(() => controller.abort(), 500)
  const report = await runner.wait()
  assert.equal(report.interrupted, true)
  assert.ok(Date.now() - startedAt < 5000)
  assert.ok(report.durationS < 5, `${report.durationS}`)
  assert.ok(report.totals.ops > 0)
  assert.equal(runner.done, true)
})

test('start() with an aborted signal throws AbortError and sends nothing', async () => {
  const before = await redis.command('DBSIZE')
  assert.throws(
    () => start({ target: { url: redis.url }, load: { requests: 100 } }, { signal: AbortSignal.abort('no') }),
    (err) => err instanceof AbortError && err.cause === 'no'
  )
  assert.throws(() => start({ target: { url: redis.url } }, { signal: {} }), TypeError)
  assert.equal(await redis.command('DBSIZE'), before)
})

test('console.log(report) prints a short summary, not the encoded histograms', async () => {
  const report = await run({
    target: { url: redis.url },
    phases: [
      { name: 'fill', load: { connections: 2, requests: 2000 }, commands: [{ name: 'set' }] },
      { name: 'read', load: { connections: 2, requests: 3000 }, commands: [{ name: 'get' }] },
    ],
  })
  const text = inspect(report)
  const lines = text.split('\n')
  assert.equal(lines.length, 3, text)
  assert.match(lines[0], /^Report \d+\.\d\d s: 5,000 requests, [\d,]+ ops\/s, p50 [\d.]+ ms, p99 [\d.]+ ms, errors 0 \(passed\)$/)
  assert.match(lines[1], /^ {2}fill: 2,000 requests, /)
  assert.match(lines[2], /^ {2}read: 3,000 requests, /)
  assert.ok(!text.includes('histogram'), text)
  // Nested in an object it still prints the summary.
  assert.ok(inspect({ report }).includes('Report '))
  // The full data stays where it was.
  assert.equal(typeof report.totals.histogram, 'string')
  assert.ok(report.totals.histogram.length > 100)
})

function shellQuote(s) {
  return `'${s.replaceAll("'", `'\\''`)}'`
}
