// The HTML report from Node (issue 46): the page of a run and of a comparison carries the
// reports' own figures; the browser test is the core's (core/tests/html.rs).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { compare, run } from 'respload'
import { startRedis } from 'respload/testing'

let redis
before(async () => {
  redis = await startRedis()
})
after(async () => {
  await redis?.stop()
})

const data = (page) => {
  const start = page.indexOf('id="respload-data">') + 'id="respload-data">'.length
  return JSON.parse(page.slice(start, page.indexOf('</script>', start)))
}

const small = (requests) => run({
  target: { url: redis.url },
  load: { connections: 2, requests },
  commands: [{ name: 'set' }, { name: 'get' }],
})

test("a report's page holds its figures", async () => {
  const report = await small(2000)
  const page = report.toHtml()
  assert.ok(page.startsWith('<!DOCTYPE html>'))
  assert.ok(!page.includes('<script src'))
  const r = data(page).runs[0]
  assert.equal(r.totals.ops, 2000)
  assert.equal(r.totals.ops, report.totals.ops)
  assert.deepEqual(
    Object.fromEntries(r.commands.map((c) => [c.label, c.ops])),
    Object.fromEntries(Object.entries(report.commands).map(([k, s]) => [k, s.ops])),
  )
})

test("a comparison's page holds both reports and the verdicts", async () => {
  const a = await small(1000)
  const b = await small(3000)
  const d = data(compare(a, b).toHtml())
  assert.deepEqual(d.runs.map((r) => r.label), ['baseline', 'current'])
  assert.deepEqual(d.runs.map((r) => r.totals.ops), [1000, 3000])
  assert.ok(d.comparison.rows.some((row) => row.metric === 'p99_ms'))
})
