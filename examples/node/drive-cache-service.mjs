// Drive the example cache service (cache-service.mjs) as its users would: start it on the Redis
// at REDIS_PORT, send REQUESTS HTTP GETs of /users/:id at a steady RATE per second (each sent
// at its instant, without waiting for the ones before), the user ids drawn from a Zipf-like
// popularity (a few users far more often than the rest) by a PRNG seeded with SEED, so that
// the same arguments give the same traffic; then close it and print one JSON line: requests,
// seconds, the service's hits and misses, its HTTP latency (p50, p99, ms).
// examples/notebooks/your-own-traffic.ipynb runs it while it captures the Redis traffic.
//
//   node examples/node/drive-cache-service.mjs REDIS_PORT [REQUESTS=1000] [SEED=1] [RATE=300]
import { startService } from './cache-service.mjs'

const USERS = 1000
const ZIPF_EXPONENT = 1.0

const [portArg, requestsArg = '1000', seedArg = '1', rateArg = '300'] = process.argv.slice(2)
const redisPort = Number(portArg)
const requests = Number(requestsArg)
const rate = Number(rateArg)
if (!Number.isInteger(redisPort) || !Number.isInteger(requests) || requests < 1 || !(rate > 0)) {
  console.error('usage: node drive-cache-service.mjs REDIS_PORT [REQUESTS] [SEED] [RATE]')
  process.exit(2)
}

// A fixed pseudo-random sequence (mulberry32): the same seed, the same user ids.
let state = Number(seedArg) | 0
function random() {
  state = (state + 0x6d2b79f5) | 0
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

// User i (0-based) is asked for in proportion to 1 / (i + 1)^s: the cumulative weights, and a
// binary search of a uniform draw among them.
const cumulative = []
let total = 0
for (let i = 0; i < USERS; i++) {
  total += 1 / (i + 1) ** ZIPF_EXPONENT
  cumulative.push(total)
}
function pickUser() {
  const x = random() * total
  let lo = 0
  let hi = USERS - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (cumulative[mid] < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const service = await startService({ redisPort })
const latencies = []
let failed = 0

async function getUser(id) {
  const started = performance.now()
  try {
    const res = await fetch(`${service.url}/users/${id}`)
    await res.arrayBuffer()
    if (res.status !== 200) failed++
  } catch {
    failed++
  }
  latencies.push(performance.now() - started)
}

// Open loop: request i goes out at start + i / rate, however long the earlier ones take.
const start = performance.now()
const inFlight = []
for (let i = 0; i < requests; i++) {
  const due = start + (i * 1000) / rate
  const wait = due - performance.now()
  if (wait > 0) await sleep(wait)
  inFlight.push(getUser(pickUser()))
}
await Promise.all(inFlight)
const seconds = (performance.now() - start) / 1000
await service.close()

const sorted = latencies.toSorted((a, b) => a - b)
const percentile = (q) => sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)]
console.log(
  JSON.stringify({
    requests,
    seconds: Number(seconds.toFixed(3)),
    hits: service.stats.hits,
    misses: service.stats.misses,
    failed,
    http_p50_ms: Number(percentile(0.5).toFixed(3)),
    http_p99_ms: Number(percentile(0.99).toFixed(3)),
  }),
)
if (failed > 0) process.exit(1)
