// Make examples/traces/session-store.jsonl: a capture (Trace.capture, through MONITOR) of a
// small session store at work on a throwaway redis-server. Every one of 20 users has a session
// when the capture begins; three app instances (one connection each) then serve page views, a
// few users far more often than the rest: each view reads the user's session (a missing one,
// after a logout, is written again with a 30-minute TTL), counts the view and stamps the
// profile; now and then a user logs out. examples/node/trace-replay.test.mjs replays the file.
//
//   node examples/traces/capture-session-store.mjs [OUT]   # about 200 commands, 2 seconds
import { fileURLToPath } from 'node:url'
import { Trace } from 'respload'
import { connectRedis, startRedis } from 'respload/testing'

const OUT = process.argv[2] ?? fileURLToPath(new URL('session-store.jsonl', import.meta.url))
const COMMANDS = 200
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// A fixed pseudo-random sequence (mulberry32), so that a new capture has the same shape.
let seed = 42
function random() {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
/** User 0 to 19, the first few far more often (about Zipf 1). */
function pickUser() {
  const weights = Array.from({ length: 20 }, (_, i) => 1 / (i + 1))
  let x = random() * weights.reduce((a, b) => a + b)
  for (let i = 0; i < weights.length; i++) {
    x -= weights[i]
    if (x <= 0) return i
  }
  return 19
}

const redis = await startRedis()
// The app's connections, opened before the capture (their PING and INFO are not the app's).
const instances = await Promise.all([0, 1, 2].map(() => connectRedis(redis.url)))
// Logged in before the capture: the trace reads these sessions before it writes them.
for (let user = 0; user < 20; user++) {
  await redis.command('SET', `session:${user}`, JSON.stringify({ user, cart: [] }), 'EX', 1800)
}
const capture = Trace.startCapture({ url: redis.url, out: OUT })
while (!String(await redis.command('CLIENT', 'LIST')).includes('cmd=monitor')) await sleep(20)

let sent = 0
async function serve(app) {
  while (sent < COMMANDS - 4) {
    const user = pickUser()
    const session = await app.command('GET', `session:${user}`)
    sent++
    if (session === null) {
      await app.command('SET', `session:${user}`, JSON.stringify({ user, cart: [] }), 'EX', 1800)
      sent++
    }
    await app.command('INCR', `views:${user}`)
    await app.command('HSET', `user:${user}`, 'last_seen', String(Date.now()))
    sent += 2
    if (random() < 0.1) {
      await app.command('DEL', `session:${user}`)
      sent++
    }
    await sleep(5 + Math.floor(random() * 20))
  }
}
await Promise.all(instances.map(serve))
// MONITOR shows a command once it ran: the last ones' lines are in by now.
await sleep(300)
const report = await capture.stop()
console.log(`captured ${report.commands} commands in ${report.durationS.toFixed(2)} s into ${report.out}`)
await Promise.all(instances.map((app) => app.stop()))
await redis.stop()
