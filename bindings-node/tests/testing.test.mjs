// respload/testing: servers on free ports, a working client, and cleanup that cannot be missed.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { test } from 'node:test'
import { ReplyError, startRedis, withRedis } from 'respload/testing'
import { alive, eventually } from './helpers.mjs'

test('startRedis() starts servers on distinct free ports; stop() ends them and removes their files', async () => {
  const a = await startRedis()
  const b = await startRedis({ args: ['--maxmemory', '10mb'] })
  try {
    assert.notEqual(a.port, b.port)
    assert.equal(a.url, `redis://127.0.0.1:${a.port}`)
    assert.ok(alive(a.pid) && alive(b.pid))
    assert.ok(a.running && b.running)
    assert.equal(await a.command('INFO', 'server').then((info) => info.match(/process_id:(\d+)/)[1]), String(a.pid))
    assert.equal(await a.command('PING'), 'PONG')
    assert.equal(await a.command('SET', 'x', 'héllo'), 'OK')
    assert.equal(await a.command('GET', 'x'), 'héllo')
    assert.equal(await a.command('GET', 'missing'), null)
    assert.deepEqual(await a.command('CONFIG', 'GET', 'maxmemory'), ['maxmemory', '0'])
    assert.deepEqual(await b.command('CONFIG', 'GET', 'maxmemory'), ['maxmemory', '10485760'])
    assert.equal(await b.command('DBSIZE'), 0, 'servers do not share data')
    await assert.rejects(a.command('NOSUCHCOMMAND'), (err) => err instanceof ReplyError && err.code === 'ERR')
  } finally {
    await a.stop()
    await b.stop()
  }
  assert.ok(await eventually(() => !alive(a.pid) && !alive(b.pid)), 'the servers are gone')
  assert.ok(!a.running && !b.running)
  assert.ok(!fs.existsSync(a.dir) && !fs.existsSync(b.dir), 'their directories are gone')
  await a.stop() // idempotent
  await assert.rejects(a.command('PING'), /stopped/)
})

test('running turns false when the server dies on its own', async () => {
  await withRedis(async (redis) => {
    assert.ok(redis.running)
    process.kill(redis.pid, 'SIGKILL')
    assert.ok(await eventually(() => !redis.running), 'running saw the crash')
    assert.ok(fs.existsSync(redis.dir), 'a crash leaves the directory until stop()')
  })
})

test('withRedis() stops the server even when the callback throws', async () => {
  let pid
  await assert.rejects(
    withRedis(async (redis) => {
      pid = redis.pid
      throw new Error('boom')
    }),
    /boom/,
  )
  assert.ok(await eventually(() => !alive(pid)))
})

test('a password sets requirepass, and the URL carries it', async () => {
  await withRedis(
    async (redis) => {
      assert.equal(redis.url, `redis://:p%40ss@127.0.0.1:${redis.port}`)
      assert.equal(await redis.command('PING'), 'PONG')
      assert.deepEqual(await redis.command('CONFIG', 'GET', 'requirepass'), ['requirepass', 'p@ss'])
    },
    { password: 'p@ss' },
  )
})

for (const how of ['exits without stop()', 'is killed with SIGKILL']) {
  test(`servers do not outlive a test process that ${how}`, async () => {
    const script = `
      import { startRedis } from 'respload/testing'
      const redis = await startRedis()
      // An open helper connection must not keep the process alive either.
      await redis.command('SET', 'k', 'v')
      console.log(JSON.stringify({ pid: redis.pid, dir: redis.dir }))
      ${how.includes('SIGKILL') ? 'setInterval(() => {}, 1000)' : ''}
    `
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    const line = await new Promise((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(out.split('\n')[0])
      })
      child.once('exit', () => reject(new Error(`child exited early: ${out}`)))
    })
    const { pid, dir } = JSON.parse(line)
    assert.ok(pid > 0)
    if (how.includes('SIGKILL')) {
      assert.ok(alive(pid), 'the server runs while its test process does')
      child.kill('SIGKILL')
    }
    assert.ok(await eventually(() => !alive(pid), 5000), `redis-server ${pid} outlived its test process`)
    assert.ok(await eventually(() => !fs.existsSync(dir), 2000), `${dir} was left behind`)
  })
}

/** Run `script` (ESM) in a child node with `env` added; its stdout's JSON. */
async function childJson(script, env) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  })
  let out = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  assert.equal(code, 0, out)
  return JSON.parse(out)
}

test('with RESPLOAD_URL and RESPLOAD_ALLOW_FLUSH=1, startRedis() and withRedis() use that server, emptied, and leave it running', async () => {
  await withRedis(
    async (existing) => {
      const url = `${existing.url}/3`
      await existing.command('SELECT', '3')
      await existing.command('SET', 'before', '1')
      const seen = await childJson(
        `
        import { run } from 'respload'
        import { startRedis, withRedis } from 'respload/testing'
        const out = { withRedis: await withRedis((r) => r.url) }
        const redis = await startRedis()
        Object.assign(out, { url: redis.url, target: redis.target(), port: redis.port, pid: redis.pid, dir: redis.dir })
        out.dbsize = await redis.command('DBSIZE')
        const report = await run({ target: redis.target(), load: { requests: 120 } })
        out.ops = report.totals.ops
        await redis.command('SET', 'left', 'by the test')
        await redis.stop()
        // A server asked for with arguments must be one of our own: no binary, a clear error.
        out.error = await startRedis({ args: ['--maxmemory', '1mb'] }).then(() => '', (err) => err.message)
        console.log(JSON.stringify(out))
        `,
        // Starting a server would fail: what works, works on the existing one.
        { RESPLOAD_URL: url, RESPLOAD_ALLOW_FLUSH: '1', RESPLOAD_REDIS_SERVER: '/nonexistent/redis-server' },
      )
      assert.deepEqual(
        { url: seen.url, target: seen.target, port: seen.port, pid: seen.pid, dir: seen.dir, withRedis: seen.withRedis },
        { url, target: { url }, port: existing.port, pid: existing.pid, dir: existing.dir, withRedis: url },
      )
      assert.equal(seen.dbsize, 0, 'emptied before use')
      assert.equal(seen.ops, 120)
      assert.match(seen.error, /apt-get install -y redis-server/)
      assert.match(seen.error, /RESPLOAD_URL=redis:\/\/HOST:PORT/)
      // The run went to database 3 of the existing server, which is still up with its files.
      const stats = await existing.command('INFO', 'commandstats')
      const calls = (name) => Number(stats.match(new RegExp(`cmdstat_${name}:calls=(\\d+)`))?.[1] ?? 0)
      assert.equal(calls('set') + calls('get'), 2 + 120, 'SET before and left, and the run')
      assert.equal(await existing.command('GET', 'before'), null)
      assert.equal(await existing.command('GET', 'left'), 'by the test')
      assert.ok(alive(existing.pid) && fs.existsSync(existing.dir))
    },
    { password: 'p/?%@:x' },
  )
})

test('without RESPLOAD_ALLOW_FLUSH, the server at RESPLOAD_URL keeps its keys: a database with keys is refused', async () => {
  await withRedis(async (existing) => {
    await existing.command('SET', 'kept', 'mine') // database 0
    const script = `
      import { run } from 'respload'
      import { startRedis, withRedis } from 'respload/testing'
      const out = {}
      out.refused = await startRedis().then(
        () => 'started',
        (err) => ({ code: err.code, message: err.message }),
      )
      out.withRedis = await withRedis(() => 'ran').catch((err) => err.code)
      console.log(JSON.stringify(out))
    `
    for (const allow of [undefined, '', '0', 'no']) {
      const env = { RESPLOAD_URL: existing.url, RESPLOAD_REDIS_SERVER: '/nonexistent/redis-server' }
      const seen = await childJson(script, { ...env, RESPLOAD_ALLOW_FLUSH: allow ?? '' })
      assert.equal(seen.refused.code, 'ERR_RESPLOAD_TESTING_NOT_EMPTY', `RESPLOAD_ALLOW_FLUSH=${allow}`)
      assert.match(seen.refused.message, /holds 1 keys/)
      assert.match(seen.refused.message, /RESPLOAD_ALLOW_FLUSH=1/)
      assert.equal(seen.withRedis, 'ERR_RESPLOAD_TESTING_NOT_EMPTY')
    }
    const stats = await existing.command('INFO', 'commandstats')
    assert.doesNotMatch(stats, /cmdstat_flushdb|cmdstat_flushall/, 'nothing was flushed')
    assert.equal(await existing.command('GET', 'kept'), 'mine')
    assert.equal(await existing.command('DBSIZE'), 1)

    // An empty database is used as it is, and what the suite wrote stays there.
    const empty = await childJson(
      `
      import { run } from 'respload'
      import { startRedis } from 'respload/testing'
      const redis = await startRedis()
      const report = await run({ target: redis.target(), load: { requests: 50 }, keys: { prefix: 'suite:' } })
      await redis.stop()
      console.log(JSON.stringify({ ops: report.totals.ops }))
      `,
      { RESPLOAD_URL: `${existing.url}/2`, RESPLOAD_ALLOW_FLUSH: '', RESPLOAD_REDIS_SERVER: '/nonexistent/redis-server' },
    )
    assert.equal(empty.ops, 50)
    assert.equal(await existing.command('GET', 'kept'), 'mine')
    await existing.command('SELECT', '2')
    assert.ok((await existing.command('DBSIZE')) > 0, 'the run wrote into database 2')
    assert.doesNotMatch(await existing.command('INFO', 'commandstats'), /cmdstat_flushdb|cmdstat_flushall/)
  })
})

test('a missing redis-server says how to install it or how to use a running server', async () => {
  const seen = await childJson(
    `
    import { startRedis } from 'respload/testing'
    console.log(JSON.stringify(await startRedis().then(() => '', (err) => err.message)))
    `,
    { RESPLOAD_REDIS_SERVER: '/nonexistent/redis-server', RESPLOAD_URL: '' },
  )
  assert.match(seen, /\/nonexistent\/redis-server is not on PATH/)
  assert.match(seen, /apt-get install -y redis-server/)
  assert.match(seen, /RESPLOAD_URL=redis:\/\/HOST:PORT/)
})
