// The generated declarations (report.d.ts, spec.d.ts) against a real report: every key of the
// report objects, of the live snapshots and of the normalized workload must be declared in its
// interface, and every key declared required must be there. A report field added in Rust
// without regenerating the types (`make docs`), or a key the JavaScript layer renames, fails.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { run } from 'respload'
import { startRedis } from 'respload/testing'

const dir = new URL('..', import.meta.url)
const interfaces = new Map([
  ...parseInterfaces(readFileSync(new URL('report.d.ts', dir), 'utf8')),
  ...parseInterfaces(readFileSync(new URL('spec.d.ts', dir), 'utf8')),
])

/** `export interface Name extends A, B { key?: type }` blocks, as the generator writes them. */
function parseInterfaces(text) {
  const code = text.replace(/\/\*\*[\s\S]*?\*\//g, '')
  const out = new Map()
  for (const m of code.matchAll(/^export interface (\w+)(?: extends ([\w, ]+))? \{\n([\s\S]*?)^\}/gm)) {
    const props = new Map()
    for (const p of m[3].matchAll(/^ {2}(\w+)(\?)?: (.+)$/gm)) {
      props.set(p[1], { optional: p[2] === '?', type: p[3] })
    }
    out.set(m[1], { extends: m[2] ? m[2].split(/,\s*/) : [], props })
  }
  return out
}

/** An interface's properties, those of the interfaces it extends included. */
function propsOf(name) {
  const it = interfaces.get(name)
  return new Map([...it.extends.flatMap((base) => [...propsOf(base)]), ...it.props])
}

/** Problems of `value` against the TypeScript type `type` (a name, an array, a Record, ...). */
function check(value, type, where, problems) {
  const nullable = type.endsWith(' | null')
  type = type.replace(/ \| null$/, '')
  let m
  if (value === null) {
    if (!nullable) problems.push(`${where}: null, but typed ${type}`)
  } else if ((m = /^Record<string, (.+)>$/.exec(type))) {
    // A map whose keys are data (labels, host:port): only its values are typed.
    for (const [k, v] of Object.entries(value)) check(v, m[1], `${where}[${k}]`, problems)
  } else if ((m = /^(\w+)\[\]$/.exec(type) ?? /^Array<(.+)>$/.exec(type))) {
    if (!Array.isArray(value)) problems.push(`${where}: not an array, but typed ${type}`)
    else value.forEach((v, i) => check(v, m[1], `${where}[${i}]`, problems))
  } else if (interfaces.has(type)) {
    checkObject(value, type, where, problems)
  } else if (['number', 'string', 'boolean'].includes(type) && typeof value !== type) {
    problems.push(`${where}: ${JSON.stringify(value)} is not a ${type}`)
  }
  // Other types (unions of written forms, tuples) are the spec's value types: not walked.
}

function checkObject(value, name, where, problems) {
  const props = propsOf(name)
  for (const [key, v] of Object.entries(value)) {
    const prop = props.get(key)
    if (prop) check(v, prop.type, `${where}.${key}`, problems)
    else problems.push(`${where}.${key}: not declared in ${name}`)
  }
  for (const [key, prop] of props) {
    if (!prop.optional && !(key in value)) problems.push(`${where}.${key}: required in ${name} but absent`)
  }
}

let redis
let report
const snapshots = []
before(async () => {
  redis = await startRedis()
  // Short, but with most optional parts: open loop, a rate ramp, a drill, an SLO search, the
  // server observed, a memtier report written.
  report = await run(
    {
      target: { url: redis.url },
      keys: { prefix: 'types:', range: [0, 999] },
      commands: [{ name: 'set' }, { name: 'get', weight: 2 }],
      phases: [
        {
          name: 'ramp',
          load: {
            connections: 2,
            duration: '2s',
            rate_ramp: { start: 200, end: 400, step: 200, step_duration: '1s' },
          },
          events: [{ at: '500ms', drill: 'bgsave' }],
          output: { memtier: join(tmpdir(), `respload-types-${process.pid}.txt`) },
        },
        {
          name: 'slo',
          load: { connections: 2 },
          slo: { budget_ms: 50, start_rate: 200, max_rate: 400, step_duration: '1s', max_steps: 1 },
        },
      ],
    },
    { onProgress: (snapshot) => snapshots.push(snapshot) },
  )
})
after(async () => {
  await redis?.stop()
})

test('the run has the parts the check relies on', () => {
  const [ramp, slo] = report.phases
  assert.ok(ramp.steps?.length > 0 && ramp.events?.length === 1 && ramp.serverTimeline?.length > 0)
  assert.ok(ramp.timeline[0].targetRate > 0 && ramp.totals.serviceMs)
  assert.ok(slo.slo?.curve.length === 1)
  assert.ok(snapshots.length > 0)
})

test('every key of the report is declared in report.d.ts, and every required key is there', () => {
  const problems = []
  checkObject(report, 'ReportFields', 'report', problems)
  assert.deepEqual(problems, [])
})

test('every key of a snapshot is declared in report.d.ts', () => {
  const problems = []
  snapshots.forEach((s, i) => checkObject(s, 'Snapshot', `snapshots[${i}]`, problems))
  assert.deepEqual(problems, [])
})

test('the check sees an undeclared key and a missing one', () => {
  const problems = []
  const { opsPerSec, ...withoutOps } = report.totals
  checkObject({ ...withoutOps, newField: 1, opsPerSec }, 'Stats', 'totals', problems)
  checkObject(withoutOps, 'Stats', 'totals', problems)
  assert.deepEqual(problems, [
    'totals.newField: not declared in Stats',
    'totals.opsPerSec: required in Stats but absent',
  ])
})
