// The npm packages as a user installs them (scripts/test-dist.sh copies this file into a fresh
// npm project where only dist/'s two tarballs are installed, with no cargo or rustc on PATH;
// the release workflow on each platform's runner): `respload` and `respload/testing` import as
// ES modules, the addon comes from the platform package (`@respload/linux-x64-gnu` here; the
// main package ships none), the declarations ship, and a workload runs against a throwaway
// redis-server.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { run, Workload, RespLoadError } from 'respload'
import { withRedis } from 'respload/testing'

const require = createRequire(import.meta.url)
const root = dirname(require.resolve('respload/package.json'))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))

// The platform packages this machine has: exactly one of the optional dependencies.
const installed = Object.keys(pkg.optionalDependencies ?? {}).filter((name) => {
  try {
    return Boolean(require.resolve(`${name}/package.json`))
  } catch {
    return false
  }
})

test('the addon is the platform package, not a file of the main package', () => {
  assert.equal(installed.length, 1, `platform packages installed: ${installed}`)
  const [name] = installed
  assert.match(name, /^@respload\/[a-z0-9-]+$/)
  const platform = name.replace(/^@respload\//, '')
  const addon = require.resolve(name)
  assert.ok(addon.endsWith(join('node_modules', name, `respload.${platform}.node`)), addon)
  assert.equal(require(`${name}/package.json`).version, pkg.version)
  assert.ok(!existsSync(join(root, 'bindings-node', `respload.${platform}.node`)))
})

test('every path the package.json exports exists, declarations included', () => {
  const targets = [pkg.main, pkg.types]
  for (const entry of Object.values(pkg.exports)) {
    targets.push(...(typeof entry === 'string' ? [entry] : Object.values(entry)))
  }
  for (const target of targets) assert.ok(existsSync(join(root, target)), `missing: ${target}`)
  for (const dts of ['index.d.ts', 'testing.d.ts', 'spec.d.ts', 'report.d.ts', 'names.d.ts', 'native.d.ts']) {
    assert.ok(existsSync(join(root, 'bindings-node', dts)), `missing: bindings-node/${dts}`)
  }
})

test('a workload runs against a throwaway server (ESM)', () =>
  withRedis(async (redis) => {
    const report = await run({
      target: { url: redis.url },
      load: { connections: 2, requests: 1000 },
      keys: { prefix: 'esm:', range: [0, 999], distribution: 'sequential' },
      commands: [{ name: 'set' }],
    })
    assert.equal(report.totals.ops, 1000)
    assert.equal(report.totals.errors, 0)
    assert.equal(await redis.command('DBSIZE'), 1000)
  }))

test('a missing spec file throws a RespLoadError naming it', () => {
  assert.throws(() => Workload.fromFile(join(root, 'no-such-spec.toml')), (error) =>
    error instanceof RespLoadError && /no-such-spec\.toml/.test(error.message))
})
