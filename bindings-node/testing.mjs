// ESM entry point of `respload/testing`: the same module instance as the CommonJS one.
import testing from './testing.js'

export const { startRedis, withRedis, connectRedis, RedisServer, ReplyError, startCluster, withCluster, RedisCluster, TlsCerts } = testing

export default testing
