// `await using` with a Runner. Node 20 cannot parse `using`, so await-using.test.mjs compiles
// this file with the repo's TypeScript (target es2022 lowers `await using` to a try/finally
// over [Symbol.asyncDispose]), imports the result and asserts on what these functions saw.
// No Node types here: the package has no @types/node.
import { start, type Report, type Runner } from 'respload'

/** What a scope holding a Runner saw, and the run once the scope was left. */
export interface Scope {
  doneInScope: boolean
  doneAfterScope: boolean
  report: Report
  ms: number
}

function spec(url: string) {
  return { target: { url }, load: { connections: 2, duration: '60s' }, commands: [{ name: 'set' as const }] }
}

/** A 60 s run left by `break` out of its iterator, then disposed at the end of the scope. */
export async function breakThenLeave(url: string): Promise<Scope> {
  const startedAt = Date.now()
  let kept: Runner
  let doneInScope: boolean
  {
    await using runner = start(spec(url))
    kept = runner
    for await (const snapshot of runner) {
      if (snapshot.phase !== 'main') throw new Error(`phase ${snapshot.phase}`)
      break
    }
    doneInScope = runner.done
  }
  const doneAfterScope = kept.done
  return { doneInScope, doneAfterScope, report: await kept.wait(), ms: Date.now() - startedAt }
}

/** A 60 s run still going when its scope ends after 300 ms. */
export async function leaveWhileRunning(url: string): Promise<Scope> {
  const startedAt = Date.now()
  let kept: Runner
  let doneInScope: boolean
  {
    await using runner = start(spec(url))
    kept = runner
    await new Promise((resolve) => setTimeout(resolve, 300))
    doneInScope = runner.done
  }
  const doneAfterScope = kept.done
  return { doneInScope, doneAfterScope, report: await kept.wait(), ms: Date.now() - startedAt }
}
