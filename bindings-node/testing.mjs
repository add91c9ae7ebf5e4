// ESM entry point of `respload/testing`: the same module instance as the CommonJS one.
import testing from './testing.js'

export const { startRedis, withRedis, RedisServer, ReplyError, startCluster, withCluster, RedisCluster } = testing

export default testing
