//! Runs: the core [`respload::Runner`] on its own threads, bridged to the JS event loop.
//!
//! A bridge thread owns the runner: it forwards each interval snapshot to JavaScript through a
//! threadsafe function, then keeps the outcome and sends one last event (`null`) meaning "the
//! run is over, take the report". Snapshots and the end arrive through the same queue, so none
//! arrives after the end. Nothing here blocks the event loop.

use crate::error::{internal, to_js};
use crate::workload::parse;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Called on the JS thread with a snapshot's JSON text, or `null` once the run is over.
type EventFn = ThreadsafeFunction<Option<String>, Unknown<'static>, Option<String>, Status, false>;

/// The report's JSON text, or why there is none.
type Outcome = Arc<Mutex<Option<respload::Result<String>>>>;

/// How often the bridge thread looks whether the run is over between snapshots.
const POLL: Duration = Duration::from_millis(50);

/// Phases in step across the hosts of a sharded run (`Workload::with_barrier`).
#[napi(object)]
pub struct BarrierOptions {
    /// The Redis every host meets on (`redis://host:port/`).
    pub url: String,
    /// The run's name on it, the same on every host (derived from the start instant when
    /// absent).
    pub id: Option<String>,
    /// How long a host waits for the others: a duration's text (`"5m"`).
    pub timeout: Option<String>,
}

/// A run in progress (the native half of the JavaScript `Runner`).
#[napi]
pub struct NativeRunner {
    stop: respload::StopHandle,
    outcome: Outcome,
}

#[napi]
impl NativeRunner {
    /// Validate the workload (JSON text of the snake_case spec) and start running it on
    /// background threads. `onEvent` is called with each interval snapshot as JSON text, then
    /// once with `null` when the run is over: `takeReport()` gives the report from then on.
    ///
    /// `shard` (`[index, count]`) runs that shard of it (`Workload::shard`); `startAt` (UNIX
    /// seconds) sends its first request at that instant (`Workload::starting_at`); `barrier`
    /// runs the phases in step across the hosts (`Workload::with_barrier`).
    ///
    /// Throws `ERR_RESPLOAD_SPEC` (with `path`) for an invalid workload; connection failures
    /// come from `takeReport()`.
    #[napi(
        constructor,
        ts_args_type = "workloadJson: string, onEvent: (snapshotJson: string | null) => void, shard?: [number, number] | undefined | null, startAt?: number | undefined | null, barrier?: BarrierOptions | undefined | null"
    )]
    pub fn new(
        env: Env,
        workload_json: String,
        on_event: EventFn,
        shard: Option<Vec<u32>>,
        start_at: Option<f64>,
        barrier: Option<BarrierOptions>,
    ) -> Result<Self> {
        let workload = parse(&workload_json)
            .and_then(|w| match shard.as_deref() {
                Some(&[index, count]) => w.shard(index, count),
                Some(other) => Err(respload::Error::spec(
                    "shard",
                    format!("{other:?}: expected [index, count]"),
                )),
                None => Ok(w),
            })
            .and_then(|w| match start_at {
                Some(at) => w.starting_at(at),
                None => Ok(w),
            })
            .and_then(|w| {
                let Some(b) = &barrier else {
                    return Ok(w);
                };
                let timeout = b
                    .timeout
                    .as_deref()
                    .map(respload::plan::parse_barrier_timeout)
                    .transpose()?;
                w.with_barrier(&b.url, b.id.as_deref(), timeout)
            })
            .map_err(|e| to_js(&env, &e))?;
        let runner = respload::Runner::start(workload).map_err(|e| to_js(&env, &e))?;
        let stop = runner.stop_handle();
        let outcome: Outcome = Arc::default();
        let slot = Arc::clone(&outcome);
        std::thread::Builder::new()
            .name("respload-node".into())
            .spawn(move || bridge(runner, &on_event, &slot))
            .map_err(|e| to_js(&env, &internal(format!("cannot start a thread: {e}"))))?;
        Ok(NativeRunner { stop, outcome })
    }

    /// Ask the run to stop: no new requests; in-flight ones get 300 ms to finish. The end
    /// event follows, and the report is marked `interrupted`.
    #[napi]
    pub fn stop(&self) {
        self.stop.stop();
    }

    /// The report as JSON text, once the end event was delivered (only once). Throws the
    /// run's error (`ERR_RESPLOAD_CONNECT`, `ERR_RESPLOAD_AUTH`, ...) when it failed.
    #[napi]
    pub fn take_report(&self, env: Env) -> Result<String> {
        let taken = match self.outcome.lock() {
            Ok(mut slot) => slot.take(),
            Err(_) => Some(Err(internal("the run's outcome lock is poisoned"))),
        };
        match taken {
            Some(Ok(json)) => Ok(json),
            Some(Err(e)) => Err(to_js(&env, &e)),
            None => Err(to_js(
                &env,
                &internal("no report: the run is not over, or its report was already taken"),
            )),
        }
    }
}

/// Forward snapshots until the run is over, keep its outcome, send the end event.
fn bridge(runner: respload::Runner, on_event: &EventFn, slot: &Outcome) {
    loop {
        match runner.next_snapshot(POLL) {
            Some(snapshot) => {
                if let Ok(json) = serde_json::to_string(&snapshot) {
                    on_event.call(Some(json), ThreadsafeFunctionCallMode::NonBlocking);
                }
            }
            None if runner.is_finished() => break,
            None => {}
        }
    }
    let outcome = runner
        .wait()
        .and_then(|report| serde_json::to_string(&report).map_err(internal));
    if let Ok(mut s) = slot.lock() {
        *s = Some(outcome);
    }
    on_event.call(None, ThreadsafeFunctionCallMode::NonBlocking);
}
