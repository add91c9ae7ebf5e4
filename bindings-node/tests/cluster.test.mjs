// respload/testing's cluster helper, and cluster reports: per-node stats and redirects, typed.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, test } from 'node:test'
import { Report, run, start } from 'respload'
import { startCluster, withCluster } from 'respload/testing'
import { alive, eventually, sleep } from './helpers.mjs'

let cluster
before(async () => {
  cluster = await startCluster({ primaries: 3, replicas: 1 })
})
after(async () => {
  await cluster?.stop()
})

const commandCalls = async (node, command) => {
  const info = await node.command('INFO', 'commandstats')
  return Number(info.match(new RegExp(`cmdstat_${command}:calls=(\\d+)`))?.[1] ?? 0)
}

/** snake_case JSON from a camelCase report, by the rule of docs/node.md (maps kept). */
function snake(value, key) {
  if (Array.isArray(value)) return value.map((v) => snake(v))
  if (value === null || typeof value !== 'object' || key === 'workload') return value
  const keep = ['commands', 'errorsByKind', 'config', 'nodes'].includes(key)
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [keep ? k : k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(v, keep ? undefined : k)]),
  )
}

test('startCluster() gives 3 primaries with a replica each, all listed, on distinct ports', async () => {
  assert.equal(cluster.nodes.length, 6)
  assert.equal(new Set(cluster.seeds).size, 6)
  assert.equal((await cluster.primaries()).length, 3)
  assert.deepEqual(cluster.target(), { url: cluster.nodes[0].url, cluster: true, cluster_seeds: cluster.seeds })
  for (const node of cluster.nodes) assert.match(await node.command('CLUSTER', 'INFO'), /cluster_state:ok/)
})

test('a cluster run reports per-node stats (camelCase, host:port keys kept) matching each node', async () => {
  const report = await run({
    target: cluster.target(),
    load: { connections: 2, requests: 3000 },
    keys: { prefix: 'n:', range: [0, 2999], distribution: 'sequential' },
    commands: [{ name: 'set' }],
  })
  assert.equal(report.totals.ops, 3000)
  assert.equal(report.totals.errors, 0)
  const primaries = await cluster.primaries()
  assert.deepEqual(Object.keys(report.nodes).sort(), primaries.map((p) => `${p.host}:${p.port}`).sort())
  for (const p of primaries) {
    const stats = report.nodes[`${p.host}:${p.port}`]
    assert.equal(typeof stats.opsPerSec, 'number')
    assert.equal(stats.ops, await commandCalls(p, 'set'))
    assert.equal(stats.ops, await p.command('DBSIZE'))
  }
  assert.deepEqual(report.phases[0].nodes, report.nodes)
  assert.equal(report.totals.redirects, undefined, 'no redirect: absent, as in the JSON')
  // Every key of the camelCase report maps back to the core's JSON by the documented rule.
  assert.deepEqual(snake({ ...report }), report.toJSON())
  assert.deepEqual(Report.fromJSON(JSON.stringify(report)).nodes, report.nodes)
})

test('moved slots show as redirects in the totals and per command', async () => {
  const primaries = await cluster.primaries()
  const source = await cluster.owner('key:0')
  const dest = primaries.find((p) => p.port !== source.port)
  const slot = await source.command('CLUSTER', 'KEYSLOT', 'key:0')
  const runner = start({
    target: cluster.target(),
    load: { connections: 2, pipeline: 2, duration: '2s', threads: 1 },
    keys: { range: [0, 9] },
    commands: [{ name: 'get' }],
  })
  await sleep(600)
  const id = await dest.command('CLUSTER', 'MYID')
  // The new owner first, then the old one (which then answers MOVED), then the rest.
  for (const p of [dest, source, ...primaries.filter((p) => p !== source && p !== dest)]) {
    await p.command('CLUSTER', 'SETSLOT', slot, 'NODE', id)
  }
  const report = await runner.wait()
  assert.equal(report.totals.errors, 0, JSON.stringify(report.totals.errorsByKind))
  assert.ok(report.totals.redirects >= 1, 'no redirect counted')
  assert.equal(report.commands.GET.redirects, report.totals.redirects)
  assert.equal(report.toJSON().totals.redirects, report.totals.redirects)
  assert.deepEqual(snake({ ...report }), report.toJSON())
})

test('withCluster() with a password and no replicas; every node is stopped after', async () => {
  let nodes
  await withCluster(
    async (c) => {
      nodes = c.nodes
      assert.equal(c.nodes.length, 3)
      assert.match(c.url, /^redis:\/\/:pw@127\.0\.0\.1:\d+$/)
      const report = await run({ target: c.target(), load: { connections: 1, requests: 600 } })
      assert.equal(report.totals.errors, 0)
      assert.equal(Object.keys(report.nodes).length, 3)
    },
    { primaries: 3, replicas: 0, password: 'pw' },
  )
  assert.ok(await eventually(() => nodes.every((n) => !alive(n.pid))), 'the nodes are gone')
  assert.ok(nodes.every((n) => !fs.existsSync(n.dir)))
  await assert.rejects(startCluster({ primaries: 2 }), RangeError)
})
