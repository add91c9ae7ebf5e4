// ESM: named imports from 'respload' and 'respload/testing', the same instance as require().
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import respload, * as named from 'respload'
import { startRedis } from 'respload/testing'

const require = createRequire(import.meta.url)

test('every export is a named ESM export, shared with require()', () => {
  const cjs = require('respload')
  assert.equal(respload, cjs)
  for (const key of Object.keys(cjs)) if (key !== 'default') assert.equal(named[key], cjs[key], key)
  assert.deepEqual(Object.keys(named).sort(), Object.keys(cjs).sort())
  assert.equal(cjs.default, cjs)
  assert.equal(startRedis, require('respload/testing').startRedis)
})

test('the package exports map resolves both conditions', () => {
  const pkg = require('respload/package.json')
  assert.equal(pkg.name, 'respload')
  assert.match(import.meta.resolve('respload'), /bindings-node\/index\.mjs$/)
  assert.match(require.resolve('respload'), /bindings-node\/index\.js$/)
})
