// Shared helpers of the Node test suite (not a test file itself).

/** A workload writing keys `prefix0 .. prefix{n-1}` once each, in order. */
export function setKeys(url, n, prefix = 'k:') {
  return {
    target: { url },
    load: { connections: 4, requests: n, pipeline: 4 },
    keys: { prefix, range: [0, n - 1], distribution: 'sequential' },
    values: { size: 32 },
    commands: [{ name: 'set' }],
    seed: 7,
  }
}


export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether a process with this pid exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

/** Wait until `predicate()` holds, up to `ms`. */
export async function eventually(predicate, ms = 3000) {
  const deadline = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > deadline) return false
    await sleep(25)
  }
  return true
}
