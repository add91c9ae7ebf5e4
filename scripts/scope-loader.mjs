// Point napi's generated loader (bindings-node/native.js) at the scoped platform packages.
//
// napi names a platform package `${package name}-${platform}` (`respload-linux-x64-gnu`) and
// its loader requires those names; ours are published under the `@respload` scope
// (`@respload/linux-x64-gnu`, bindings-node/npm/*/package.json), as issue 27 asks and as
// napi's own docs recommend against npm's spam filter. `npm run build` runs this after
// `napi build`, and so does the release workflow: the loader is rewritten every time it is
// generated. Idempotent; fails when the loader names no platform package at all (a napi whose
// output changed).
//
//   node scripts/scope-loader.mjs [bindings-node/native.js]
import { readFileSync, writeFileSync } from 'node:fs'

const file = process.argv[2] ?? new URL('../bindings-node/native.js', import.meta.url)
const before = readFileSync(file, 'utf8')
// `require('respload-linux-x64-gnu')` and `.../package.json`; the WASI candidate too.
const unscoped = /(['"])respload-([a-z0-9-]+)(\/package\.json)?\1/g
const after = before.replace(unscoped, (_, quote, platform, sub) => {
  return `${quote}@respload/${platform}${sub ?? ''}${quote}`
})
const scoped = after.match(/['"]@respload\/[a-z0-9-]+(\/package\.json)?['"]/g) ?? []
if (scoped.length === 0) {
  console.error(`scope-loader: ${file} requires no platform package: has napi's loader changed?`)
  process.exit(1)
}
if (after !== before) writeFileSync(file, after)
