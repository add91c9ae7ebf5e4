// The replay runner refuses a drill that would stop a server on another machine for good:
// managed-cache-guide's failover phase with `failover_mode = "kill"` shuts its primary down
// (SHUTDOWN NOSAVE). The remote host is `cache.invalid`, a name that never resolves (RFC
// 6761): were the refusal to fail, nothing could be reached. Run with `node --test
// examples/node/`.
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { Workload } from 'respload'
import { destructiveDrills, isLoopback, replay } from './replay.mjs'

const GUIDE = fileURLToPath(new URL('../scenarios/managed-cache-guide.toml', import.meta.url))
const REMOTE = 'redis://cache.invalid:10000'

/** managed-cache-guide's variables with every endpoint at `url`. */
function endpoints(url, mode) {
  return {
    url,
    tls_url: url.replace('redis://', 'rediss://'),
    cluster_url: url,
    enterprise_url: url,
    failover_mode: mode,
  }
}

const guide = (url, mode) => Workload.fromFile(GUIDE, { scale: 'ci', vars: endpoints(url, mode) })

test('a kill failover on another machine is refused before any traffic', async () => {
  await assert.rejects(replay('managed-cache-guide', { vars: endpoints(REMOTE, 'kill') }), (err) => {
    assert.equal(err.code, 'ERR_DESTRUCTIVE_DRILL')
    assert.match(err.message, /refusing to stop a server that is not on this machine/)
    assert.match(err.message, /phase failover: failover kill on redis:\/\/cache\.invalid:10000/)
    assert.match(err.message, /--allow-destructive/)
    return true
  })
})

test('only a kill on another machine counts as destructive', () => {
  assert.deepEqual(destructiveDrills(guide(REMOTE, 'kill')), [
    'phase failover: failover kill on redis://cache.invalid:10000',
  ])
  // The coordinated failover stops no server; this machine's own servers may be stopped.
  assert.deepEqual(destructiveDrills(guide(REMOTE, 'cluster-failover')), [])
  assert.deepEqual(destructiveDrills(guide('redis://127.0.0.1:10000', 'kill')), [])
  assert.deepEqual(destructiveDrills(guide('redis://[::1]:10000', 'kill')), [])
})

test('this machine is a loopback address or localhost', () => {
  const cases = [
    ['redis://127.0.0.1:6379', true],
    ['redis://127.8.9.10:6379', true],
    ['redis://localhost:6379', true],
    ['redis://[::1]:6379', true],
    ['rediss://:secret@127.0.0.1:6380', true],
    ['redis://10.0.0.1:6379', false],
    ['redis://cache.invalid:6379', false],
    ['redis://[2001:db8::1]:6379', false],
    ['redis://localhost.example.com:6379', false],
  ]
  for (const [url, here] of cases) assert.equal(isLoopback(url), here, url)
})
