// respload/testing with `tls: true`: TLS-only servers and clusters with throwaway certificates,
// runs over TLS counted by the servers themselves, and certificates that never outlive the process.
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import { test } from 'node:test'
import { ConnectError, run, TlsError } from 'respload'
import { startCluster, startRedis, withCluster, withRedis } from 'respload/testing'
import { alive, eventually } from './helpers.mjs'

const calls = async (node, command) => {
  const info = await node.command('INFO', 'commandstats')
  return Number(info.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0)
}

/** `n` requests, half SET half GET, on keys `t:0 .. t:{n-1}`. */
const setGet = (target, n) => ({
  target,
  load: { requests: n, connections: 2, pipeline: 4 },
  keys: { prefix: 't:', range: [0, n - 1], distribution: 'sequential' },
  commands: [{ name: 'set', weight: 1 }, { name: 'get', weight: 1 }],
})

test('startRedis({ tls: true }) serves TLS only; a run over TLS matches the server INFO commandstats', async () => {
  const redis = await startRedis({ tls: true })
  try {
    assert.equal(redis.url, `rediss://127.0.0.1:${redis.port}`)
    assert.equal(redis.tlsAuthClients, false)
    assert.deepEqual(redis.target(), { url: redis.url, tls: { ca_file: redis.tls.caFile } })
    assert.deepEqual(await redis.command('CONFIG', 'GET', 'tls-port'), ['tls-port', String(redis.port)])
    assert.deepEqual(await redis.command('CONFIG', 'GET', 'port'), ['port', '0'], 'no plain-text port')
    const report = await run(setGet(redis.target(), 1000))
    assert.equal(report.totals.errors, 0)
    assert.equal(report.totals.ops, 1000)
    // What the server counted, read over TLS by the helper's own client.
    assert.ok(report.commands.SET.ops > 0 && report.commands.GET.ops > 0)
    assert.equal(await calls(redis, 'set'), report.commands.SET.ops)
    assert.equal(await calls(redis, 'get'), report.commands.GET.ops)
    // redis-cli over TLS sees the same.
    const dbsize = execFileSync('redis-cli', ['--tls', '--cacert', redis.tls.caFile, '-p', String(redis.port), 'DBSIZE'], {
      encoding: 'utf8',
    })
    assert.equal(Number(dbsize), report.commands.SET.ops)
    // Plain text to the TLS port: the run fails to connect, nothing is sent.
    await assert.rejects(run({ target: { url: `redis://127.0.0.1:${redis.port}`, connect_timeout: '1s' }, load: { requests: 10 } }),
      (err) => err instanceof ConnectError)
    assert.equal(await calls(redis, 'set'), report.commands.SET.ops)
  } finally {
    await redis.stop()
  }
  assert.ok(!fs.existsSync(redis.tls.dir) && !fs.existsSync(redis.dir), 'certificates and files removed')
})

test('tlsAuthClients: true requires the client certificate, which target() carries', async () => {
  await withRedis(
    async (redis) => {
      assert.equal(redis.url, `rediss://:pw@127.0.0.1:${redis.port}`)
      const { tls } = redis
      assert.deepEqual(redis.target().tls, { ca_file: tls.caFile, cert: tls.clientCert, key: tls.clientKey })
      const refused = await run({ target: { url: redis.url, tls: { ca_file: tls.caFile } }, load: { requests: 10 } }).catch((e) => e)
      assert.ok(refused instanceof TlsError, String(refused))
      assert.match(refused.message, /certificate/)
      const report = await run(setGet(redis.target(), 400))
      assert.equal(report.totals.errors, 0)
      assert.equal((await calls(redis, 'set')) + (await calls(redis, 'get')), 400)
      assert.deepEqual(await redis.command('CONFIG', 'GET', 'tls-auth-clients'), ['tls-auth-clients', 'yes'])
    },
    { tls: true, tlsAuthClients: true, password: 'pw' },
  )
})

test('tlsAuthClients without tls is a clear error, and a server that cannot start says why', async () => {
  await assert.rejects(startRedis({ tlsAuthClients: true }), (err) => err instanceof TypeError && /needs tls: true/.test(err.message))
  await assert.rejects(startCluster({ tlsAuthClients: true }), /needs tls: true/)
  // redis-server's own complaint, from its error output, with the addon's error code.
  await assert.rejects(startRedis({ tls: true, args: ['--no-such-directive', 'x'] }), (err) =>
    err.code === 'ERR_RESPLOAD_TESTING_START' && /exited at start/.test(err.message) && /no-such-directive/.test(err.message))
})

test('the certificates do not outlive a test process killed with SIGKILL', async () => {
  const script = `
    import { startRedis } from 'respload/testing'
    const redis = await startRedis({ tls: true })
    console.log(JSON.stringify({ pid: redis.pid, certs: redis.tls.dir }))
    setInterval(() => {}, 1000)
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
  const { pid, certs } = JSON.parse(line)
  assert.ok(alive(pid) && fs.existsSync(`${certs}/ca.crt`))
  child.kill('SIGKILL')
  assert.ok(await eventually(() => !alive(pid), 5000), `redis-server ${pid} outlived its test process`)
  assert.ok(await eventually(() => !fs.existsSync(certs), 5000), `${certs} was left behind`)
})

test('startCluster({ tls: true, tlsAuthClients: true }): bus and replication over TLS, per-node counts match', async () => {
  let certs
  await withCluster(
    async (cluster) => {
      certs = cluster.tls.dir
      assert.ok(cluster.nodes.every((n) => n.url.startsWith('rediss://')))
      const target = cluster.target()
      assert.deepEqual(target.tls, { ca_file: cluster.tls.caFile, cert: cluster.tls.clientCert, key: cluster.tls.clientKey })
      for (const node of cluster.nodes) {
        assert.deepEqual(await node.command('CONFIG', 'GET', 'tls-cluster'), ['tls-cluster', 'yes'])
        assert.deepEqual(await node.command('CONFIG', 'GET', 'tls-replication'), ['tls-replication', 'yes'])
      }
      const primaries = await cluster.primaries()
      assert.equal(primaries.length, 3)
      // Every replica synced with its primary (over TLS) and is listed.
      const listed = new Set((await cluster.nodes[0].command('CLUSTER', 'SLOTS')).flatMap((e) => e.slice(2).map((n) => n[1])))
      assert.equal(listed.size, 6)
      const report = await run({
        target,
        load: { requests: 3000, connections: 2 },
        keys: { prefix: 'c:', range: [0, 2999], distribution: 'sequential' },
        commands: [{ name: 'set' }],
      })
      assert.equal(report.totals.errors, 0)
      assert.deepEqual(Object.keys(report.nodes).sort(), primaries.map((p) => `${p.host}:${p.port}`).sort())
      for (const p of primaries) {
        const sets = await calls(p, 'set')
        assert.ok(sets > 0)
        assert.equal(report.nodes[`${p.host}:${p.port}`].ops, sets)
        assert.equal(await p.command('DBSIZE'), sets)
      }
    },
    { primaries: 3, replicas: 1, tls: true, tlsAuthClients: true },
  )
  assert.ok(!fs.existsSync(certs), 'the cluster certificates are removed')
})
