// `await using` with a Runner (Node 20 cannot parse it): compile await-using.mts with the
// repo's TypeScript to JavaScript of target es2022 (`await using` lowered to try/finally over
// [Symbol.asyncDispose]), then run its scopes against a real redis-server.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { after, before, test } from 'node:test'
import { startRedis } from 'respload/testing'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tests = join(root, 'bindings-node', 'tests')

let redis
let out
let scopes
before(async () => {
  redis = await startRedis()
  // Inside the package, so that the compiled file's `import 'respload'` resolves to it.
  out = mkdtempSync(join(tests, '.compiled-'))
  const tsc = join(root, 'node_modules', '.bin', 'tsc')
  await promisify(execFile)(tsc, [
    '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    '--lib', 'es2022,dom,esnext.disposable', '--removeComments', '--rootDir', tests, '--outDir', out,
    join(tests, 'await-using.mts'),
  ], { cwd: root }).catch((err) => assert.fail(`tsc: ${err.stdout}${err.stderr}`))
  scopes = await import(pathToFileURL(join(out, 'await-using.mjs')).href)
})
after(async () => {
  await redis?.stop()
  if (out) rmSync(out, { recursive: true, force: true })
})

test('the compiled file lowered `await using` to Symbol.asyncDispose calls', () => {
  const js = readFileSync(join(out, 'await-using.mjs'), 'utf8')
  assert.ok(!/\bawait using\b/.test(js), js)
  assert.match(js, /__addDisposableResource/)
})

test('await using stops a running Runner at the end of its scope', async () => {
  const { doneInScope, doneAfterScope, report, ms } = await scopes.leaveWhileRunning(redis.url)
  assert.equal(doneInScope, false)
  assert.equal(doneAfterScope, true)
  assert.equal(report.interrupted, true)
  assert.ok(report.totals.ops > 0)
  assert.ok(report.durationS < 5, `${report.durationS}`)
  assert.ok(ms < 5000, `${ms} ms`)
})

test('await using after leaving the iterator early (the run already stopping)', async () => {
  const { doneAfterScope, report, ms } = await scopes.breakThenLeave(redis.url)
  assert.equal(doneAfterScope, true)
  assert.equal(report.interrupted, true)
  assert.ok(ms < 10_000, `${ms} ms`)
})
