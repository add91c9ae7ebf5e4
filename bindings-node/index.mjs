// ESM entry point: the same module instance as `require('respload')` (no dual-package hazard).
import respload from './index.js'

export const {
  run,
  start,
  Runner,
  Report,
  Comparison,
  compare,
  mergeReports,
  Workload,
  validateSpec,
  fromRedisBenchmark,
  fromMemtier,
  Trace,
  Model,
  Capture,
  replay,
  // generated: errors (from core/src/error.rs by scripts/gen_reference.py)
  RespLoadError,
  SpecError,
  ConnectError,
  TlsError,
  AuthError,
  ProtocolError,
  FileError,
  BarrierError,
  InternalError,
  // end generated: errors
  AbortError,
} = respload

export default respload
