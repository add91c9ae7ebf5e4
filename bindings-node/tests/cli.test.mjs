// The npm package's `respload` bin (bindings-node/cli.js): the Rust binary's command line,
// run through the addon, against a real redis-server.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { withRedis } from 'respload/testing'
import { sleep } from './helpers.mjs'

const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = path.join(root, 'bindings-node', 'cli.js')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

/** Run the bin to its end: `{ code, stdout, stderr }`, whatever the exit code. */
async function respload(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { timeout: 60_000 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    if (typeof err.code !== 'number') throw err
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

/** How many times the server ran `command`, from INFO commandstats. */
async function calls(redis, command) {
  const info = await redis.command('INFO', 'commandstats')
  return Number(info.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0)
}

test('package.json names the bin, and --version prints the package version', async () => {
  assert.equal(pkg.bin.respload, './bindings-node/cli.js')
  const { code, stdout } = await respload('--version')
  assert.equal(code, 0)
  assert.equal(stdout.trim(), `respload ${pkg.version}`)
})

test('run writes the table and the JSON report; the server holds what was sent', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'respload-cli-'))
  try {
    await withRedis(async (redis) => {
      const spec = path.join(dir, 'spec.toml')
      fs.writeFileSync(
        spec,
        [
          '[target]',
          `url = "${redis.url}"`,
          '[load]',
          'connections = 2',
          'requests = 300',
          '[keys]',
          'prefix = "cli:"',
          'range = [0, 299]',
          'distribution = "sequential"',
          '[[commands]]',
          'name = "set"',
        ].join('\n'),
      )
      const out = path.join(dir, 'report.json')
      const { code, stdout, stderr } = await respload('run', spec, '--json', out)
      assert.equal(code, 0, stderr)
      assert.match(stdout, /ALL STATS/)
      const report = JSON.parse(fs.readFileSync(out, 'utf8'))
      assert.equal(report.totals.ops, 300)
      assert.equal(report.totals.errors, 0)
      assert.equal(await redis.command('DBSIZE'), 300)
      assert.equal(await redis.command('EXISTS', 'cli:0', 'cli:299'), 2)
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a bad spec exits 2 with the field named on stderr, before any traffic', async () => {
  await withRedis(async (redis) => {
    const { code, stdout, stderr } = await respload('run', '--url', redis.url, '-c', '0', '-n', '10')
    assert.equal(code, 2)
    assert.equal(stdout, '')
    assert.match(stderr, /load\.connections/)
    assert.equal(await calls(redis, 'get'), 0)
  })
})

test('Ctrl-C stops the run and prints the partial report; exit code 0', async () => {
  await withRedis(async (redis) => {
    const child = spawn(process.execPath, [bin, 'run', '--url', redis.url, '--duration', '60s', '-c', '2', '-q'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      const deadline = Date.now() + 20_000
      while ((await calls(redis, 'get')) < 100 && Date.now() < deadline) await sleep(100)
      const sent = Date.now()
      child.kill('SIGINT')
      const code = await exited
      assert.equal(code, 0, stderr)
      assert.ok(Date.now() - sent < 3000, `took ${Date.now() - sent} ms`)
      assert.match(stdout, /ALL STATS/)
      assert.match(stderr, /interrupted, the report above is partial/)
      // Nothing is left running: the server saw the traffic stop.
      const after = await calls(redis, 'get')
      await sleep(300)
      assert.equal(await calls(redis, 'get'), after)
    } finally {
      child.kill('SIGKILL')
    }
  })
})
