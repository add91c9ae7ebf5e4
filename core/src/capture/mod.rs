//! Capture: what a live server executes, recorded through `MONITOR` into a trace file
//! (respload's JSON lines), secrets redacted before anything is written.
//!
//! MONITOR costs the server: it formats every command it runs for every monitoring client.
//! The capture measures that cost: the server's CPU over one second before MONITOR starts,
//! and over the capture (`INFO cpu` on a connection of its own, whose commands are left out
//! of the trace).
//!
//! A caller that drives traffic itself waits for [`CaptureControl::is_started`]: it turns
//! true once every server acknowledged MONITOR, so every command run after that is in the
//! trace.

use crate::net::cluster::SlotMap;
use crate::net::{Client, Stream, Value};
use crate::plan::ConnectOptions;
use crate::spec::{SpecDuration, Target};
use crate::trace::{jsonl, monitor, redact::redact, Record};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What to capture (`respload capture`, `Trace.capture` in Python and Node).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CaptureSpec {
    /// The server, as a spec's `target` (a URL, or host/port, TLS, credentials); with
    /// `cluster`, every primary of the cluster is captured into the one file.
    #[serde(default)]
    pub target: Target,
    /// How long to capture (e.g. `"60s"`); until stopped without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<SpecDuration>,
    /// The trace file to write: JSON lines, gzip-compressed when it ends in `.gz`.
    pub out: String,
    /// Stop after this many commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_commands: Option<u64>,
}

/// What a capture recorded.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CaptureReport {
    /// The trace file written.
    pub out: String,
    /// Commands written to it.
    pub commands: u64,
    /// Seconds from MONITOR's start to the capture's end.
    pub duration_s: f64,
    /// Arguments redacted (passwords and ACL rules).
    pub redacted: u64,
    /// MONITOR lines that could not be read as a command (not written).
    pub malformed: u64,
    /// Whether it was stopped (Ctrl-C, `stop()`) before its duration or command count.
    pub interrupted: bool,
    /// Each server captured.
    pub nodes: Vec<NodeCapture>,
}

/// One server's part of a capture.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NodeCapture {
    /// Its address.
    pub address: String,
    /// Commands captured from it.
    pub commands: u64,
    /// Its CPU (percent of one core) over the second before MONITOR started.
    pub cpu_before_percent: Option<f64>,
    /// Its CPU over the capture, MONITOR's cost included.
    pub cpu_during_percent: Option<f64>,
}

/// What a capture shares with its caller's thread: a stop request one way, "recording" the
/// other.
#[derive(Debug, Default)]
pub struct CaptureControl {
    stop: AtomicBool,
    started: AtomicBool,
}

impl CaptureControl {
    /// Ask the capture to stop (it stops within 100 ms, keeping its file).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether a stop was asked for.
    pub fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether every server captured has acknowledged MONITOR: each command it runs from
    /// now on is recorded. Stays true once set, after the capture too.
    pub fn is_started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }
}

/// How long the server's CPU is read before MONITOR starts.
const BEFORE: Duration = Duration::from_secs(1);
/// How often the capture looks at its stop flag, duration and count, and flushes the file.
const TICK: Duration = Duration::from_millis(100);

impl CaptureSpec {
    /// Read a capture spec from JSON (the bindings' form); errors name the field.
    pub fn from_json_value(value: serde_json::Value) -> Result<CaptureSpec> {
        let spec: CaptureSpec = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            Error::spec(
                if path == "." { String::new() } else { path },
                e.into_inner(),
            )
        })?;
        if spec.out.is_empty() {
            return Err(Error::spec("out", "is empty: give the trace file to write"));
        }
        if spec.max_commands == Some(0) {
            return Err(Error::spec(
                "max_commands",
                "0: allowed is at least 1 (or none)",
            ));
        }
        Ok(spec)
    }
}

/// State the nodes' reading tasks share.
struct Shared {
    writer: Option<jsonl::Writer>,
    rec: Record,
    commands: u64,
    redacted: u64,
    malformed: u64,
    failure: Option<Error>,
    write_error: Option<std::io::Error>,
}

/// Capture what `spec`'s server executes until its duration or command count is reached,
/// or `control` is stopped; the trace file keeps what was written either way.
pub fn capture(spec: &CaptureSpec, control: &CaptureControl) -> Result<CaptureReport> {
    let base = spec.target.resolve("target")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, run(spec, base, control))
}

async fn run(
    spec: &CaptureSpec,
    base: ConnectOptions,
    control: &CaptureControl,
) -> Result<CaptureReport> {
    let stop = &control.stop;
    let nodes: Vec<ConnectOptions> = match &base.cluster {
        Some(seeds) => SlotMap::fetch(seeds, &base)
            .await?
            .primaries()
            .iter()
            .map(|n| n.connect(&base))
            .collect(),
        None => vec![base.clone()],
    };
    // A control connection per node: its INFO readings are left out of the trace by its
    // address.
    let mut controls = Vec::with_capacity(nodes.len());
    for n in &nodes {
        let c = n.control();
        let mut client = Client::connect(&c).await?;
        let own = own_address(&mut client, c.connect_timeout).await;
        controls.push((client, own, c.connect_timeout, n.endpoint.to_string()));
    }
    let before_0 = cpu_all(&mut controls).await;
    let t0 = Instant::now();
    sleep_unless(BEFORE, stop).await;
    let before_1 = cpu_all(&mut controls).await;
    let before_s = t0.elapsed().as_secs_f64();
    let writer = jsonl::Writer::create(&spec.out)?;
    let shared = Rc::new(RefCell::new(Shared {
        writer: Some(writer),
        rec: Record::default(),
        commands: 0,
        redacted: 0,
        malformed: 0,
        failure: None,
        write_error: None,
    }));
    let own: Rc<Vec<String>> = Rc::new(controls.iter().filter_map(|c| c.1.clone()).collect());
    let mut streams = Vec::with_capacity(nodes.len());
    for n in &nodes {
        streams.push(monitor(n).await?);
    }
    control.started.store(true, Ordering::Release);
    let started = Instant::now();
    let during_0 = cpu_all(&mut controls).await;
    let per_node: Vec<Rc<RefCell<u64>>> = nodes.iter().map(|_| Rc::default()).collect();
    let tasks: Vec<_> = streams
        .into_iter()
        .zip(&nodes)
        .zip(&per_node)
        .map(|(((stream, early), n), count)| {
            tokio::task::spawn_local(read_monitor(
                stream,
                early,
                n.endpoint.to_string(),
                Rc::clone(&shared),
                Rc::clone(&own),
                Rc::clone(count),
            ))
        })
        .collect();
    let deadline = spec.duration.map(|d| started + d.0);
    let mut interrupted = false;
    loop {
        tokio::time::sleep(TICK).await;
        let mut s = shared.borrow_mut();
        if let Some(w) = s.writer.as_mut() {
            if let Err(e) = w.flush() {
                s.write_error = Some(e);
            }
        }
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let done = deadline.is_some_and(|d| Instant::now() >= d)
            || spec.max_commands.is_some_and(|m| s.commands >= m)
            || s.failure.is_some()
            || s.write_error.is_some()
            || tasks.iter().all(|t| t.is_finished());
        if done {
            break;
        }
    }
    let duration_s = started.elapsed().as_secs_f64();
    for t in &tasks {
        t.abort();
    }
    let during_1 = cpu_all(&mut controls).await;
    let mut s = shared.borrow_mut();
    if let Some(e) = s.failure.take() {
        return Err(e);
    }
    let path = spec.out.clone();
    let file_error = |e| Error::File {
        path: path.clone(),
        source: e,
    };
    if let Some(e) = s.write_error.take() {
        return Err(file_error(e));
    }
    if let Some(w) = s.writer.take() {
        w.finish().map_err(file_error)?;
    }
    let rate = |a: Option<f64>, b: Option<f64>, secs: f64| match (a, b) {
        (Some(a), Some(b)) if secs > 0.0 => Some(((b - a) / secs * 100.0).max(0.0)),
        _ => None,
    };
    let nodes = controls
        .iter()
        .enumerate()
        .map(|(i, c)| NodeCapture {
            address: c.3.clone(),
            commands: *per_node[i].borrow(),
            cpu_before_percent: rate(before_0[i], before_1[i], before_s),
            cpu_during_percent: rate(during_0[i], during_1[i], duration_s),
        })
        .collect();
    Ok(CaptureReport {
        out: spec.out.clone(),
        commands: s.commands,
        duration_s,
        redacted: s.redacted,
        malformed: s.malformed,
        interrupted,
        nodes,
    })
}

/// A connection to `node` in MONITOR, once the server acknowledged it, with the bytes read
/// past the acknowledgement (the first commands' lines).
async fn monitor(node: &ConnectOptions) -> Result<(Stream, Vec<u8>)> {
    let address = node.endpoint.to_string();
    let io_error = |e| Error::Connect {
        address: address.clone(),
        source: e,
    };
    let mut stream = Client::connect(node).await?.into_stream();
    stream
        .write_all(b"*1\r\n$7\r\nMONITOR\r\n")
        .await
        .map_err(io_error)?;
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let deadline = Instant::now() + node.connect_timeout;
    loop {
        if let Some(end) = buf.windows(2).position(|w| w == b"\r\n") {
            let line = &buf[..end];
            if line != b"+OK" {
                return Err(Error::Protocol {
                    address,
                    reason: format!(
                        "MONITOR refused: {}",
                        String::from_utf8_lossy(line.strip_prefix(b"-").unwrap_or(line))
                    ),
                });
            }
            buf.drain(..end + 2);
            return Ok((stream, buf));
        }
        let read = tokio::time::timeout_at(deadline.into(), stream.read_buf(&mut buf)).await;
        match read {
            Ok(Ok(0)) => {
                return Err(io_error(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the server closed the connection instead of answering MONITOR",
                )))
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(io_error(e)),
            Err(_) => {
                return Err(io_error(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "no answer to MONITOR within the connect timeout",
                )))
            }
        }
    }
}

/// Read one node's MONITOR stream into the trace until it closes (or the task is aborted),
/// starting with the bytes `early` read past MONITOR's acknowledgement.
async fn read_monitor(
    mut stream: Stream,
    early: Vec<u8>,
    address: String,
    shared: Rc<RefCell<Shared>>,
    own: Rc<Vec<String>>,
    count: Rc<RefCell<u64>>,
) {
    let mut buf = early;
    loop {
        // The bytes read with the acknowledgement first, then each read's.
        {
            let mut s = shared.borrow_mut();
            let mut start = 0;
            while let Some(end) = buf[start..].windows(2).position(|w| w == b"\r\n") {
                let line = &buf[start..start + end];
                start += end + 2;
                match line.first() {
                    Some(b'+') => s.line(&line[1..], &own, &count),
                    Some(b'-') => {
                        s.failure = Some(Error::Protocol {
                            address: address.clone(),
                            reason: format!(
                                "MONITOR ended: {}",
                                String::from_utf8_lossy(&line[1..])
                            ),
                        });
                        return;
                    }
                    _ => s.malformed += 1,
                }
            }
            // Keep the partial line only.
            buf.drain(..start);
        }
        if buf.capacity() - buf.len() < 16 * 1024 {
            buf.reserve(64 * 1024);
        }
        match stream.read_buf(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

impl Shared {
    fn line(&mut self, line: &[u8], own: &[String], count: &RefCell<u64>) {
        let Shared {
            writer,
            rec,
            commands,
            redacted,
            malformed,
            write_error,
            ..
        } = self;
        if monitor::parse_line(line, rec).is_err() {
            *malformed += 1;
            return;
        }
        if own.contains(&rec.client) {
            return;
        }
        *redacted += redact(rec) as u64;
        if let Some(w) = writer.as_mut() {
            if let Err(e) = w.write(rec) {
                *write_error = Some(e);
                return;
            }
        }
        *commands += 1;
        *count.borrow_mut() += 1;
    }
}

/// The connection's own address as the server sees it (`CLIENT INFO`'s `addr`), which
/// MONITOR names its commands by.
async fn own_address(client: &mut Client, timeout: Duration) -> Option<String> {
    let reply = client.call(&[b"CLIENT", b"INFO"], timeout).await.ok()?;
    let text = reply.as_text()?;
    text.split_whitespace()
        .find_map(|f| f.strip_prefix("addr="))
        .map(str::to_string)
}

/// Each node's CPU seconds (`used_cpu_sys` + `used_cpu_user`), where INFO answers.
async fn cpu_all(controls: &mut [(Client, Option<String>, Duration, String)]) -> Vec<Option<f64>> {
    let mut out = Vec::with_capacity(controls.len());
    for (client, _, timeout, _) in controls.iter_mut() {
        let reply = client.call(&[b"INFO", b"cpu"], *timeout).await;
        let cpu = match reply {
            Ok(Value::Bulk(b)) => {
                let info = crate::observe::parse_info(&String::from_utf8_lossy(&b));
                let f = |k: &str| info.get(k).and_then(|v| v.parse::<f64>().ok());
                match (f("used_cpu_sys"), f("used_cpu_user")) {
                    (Some(s), Some(u)) => Some(s + u),
                    _ => None,
                }
            }
            _ => None,
        };
        out.push(cpu);
    }
    out
}

/// Sleep for `d`, waking early when `stop` is set.
async fn sleep_unless(d: Duration, stop: &AtomicBool) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(TICK.min(end - Instant::now())).await;
    }
}
