// A tiny read-through cache service: GET /users/:id answers from Redis (`user:<id>`), and on a
// miss loads the user from the "database" (a slow function here) and caches it for 60 s.
import http from 'node:http'
import { RespClient } from './resp-client.mjs'

/** The slow source of truth the cache protects (5 ms per lookup). */
export async function loadUserFromDatabase(id) {
  await new Promise((resolve) => setTimeout(resolve, 5))
  return { id, name: `user ${id}`, plan: id % 3 === 0 ? 'pro' : 'free' }
}

/** Start the service on a free port; resolves with `{ url, stats, close() }`. */
export async function startService({ redisPort, redisHost = '127.0.0.1' }) {
  const redis = await RespClient.connect(redisPort, redisHost)
  const stats = { hits: 0, misses: 0 }
  const server = http.createServer(async (req, res) => {
    const match = /^\/users\/(\d+)$/.exec(req.url ?? '')
    if (req.method !== 'GET' || !match) {
      res.writeHead(404).end()
      return
    }
    try {
      const key = `user:${match[1]}`
      let body = await redis.send('GET', key)
      if (body === null) {
        stats.misses++
        body = JSON.stringify(await loadUserFromDatabase(Number(match[1])))
        await redis.send('SET', key, body, 'EX', 60)
      } else {
        stats.hits++
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(body)
    } catch (err) {
      res.writeHead(503).end(String(err.message))
    }
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    stats,
    close: async () => {
      await new Promise((resolve) => server.close(resolve))
      redis.close()
    },
  }
}
