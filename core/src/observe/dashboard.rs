//! The live dashboard (`observe.dashboard = "127.0.0.1:8089"`, `--dashboard ADDR`): while the
//! run lasts, `GET /` serves the report page (`report::html`) in its live form and
//! `GET /events` streams the run's timeline rows to it as server-sent events, one a second,
//! then the final report's data; after that `GET /` serves the final page until the run's
//! owner lets go. Rows are handed over from the thread that merges the phases' figures (as
//! the Prometheus endpoint's), once a second, off the send path; each browser is answered
//! by a thread of its own.

use crate::report::{html, Report, Snapshot};
use crate::{Error, Result};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// At most this many browsers are streamed to at once; more are answered 503.
const MAX_STREAMS: usize = 16;

/// What the dashboard serves: the page, the rows so far, the final report once there.
#[derive(Debug)]
pub struct Live {
    state: Mutex<State>,
    changed: Condvar,
    streams: AtomicUsize,
    started_at: f64,
}

#[derive(Debug, Default)]
struct State {
    page: String,
    rows: Vec<String>,
    /// The final report: its page and its data.
    done: Option<(String, String)>,
}

impl Live {
    /// Add the row of `snapshot` (every browser gets it).
    pub fn push(&self, snapshot: &Snapshot) {
        let row = html::live_row(
            &snapshot.phase,
            snapshot.measured,
            &snapshot.row,
            self.started_at,
        );
        if let Ok(mut s) = self.state.lock() {
            s.rows.push(row);
        }
        self.changed.notify_all();
    }

    /// The run is over: browsers get `report`, and `GET /` its page.
    pub fn finish(&self, report: &Report) {
        let done = (html::report_html(report), html::report_data(report));
        if let Ok(mut s) = self.state.lock() {
            s.done = Some(done);
        }
        self.changed.notify_all();
    }
}

/// The dashboard: a thread answering browsers until the run ends.
pub struct Dashboard {
    /// What it serves.
    pub live: Arc<Live>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Dashboard {
    /// Listen on `address` (`HOST:PORT`; `field` names it in errors) and serve the page of
    /// `started` (the run before its first row): an address that does not resolve or cannot
    /// be bound is an error before any traffic.
    pub fn start(address: &str, field: &str, started: &Report) -> Result<Dashboard> {
        let listener = super::http::listen(address, field, 8089)?;
        let live = Arc::new(Live {
            state: Mutex::new(State {
                page: html::live_html(started),
                ..State::default()
            }),
            changed: Condvar::new(),
            streams: AtomicUsize::new(0),
            started_at: started.started_at,
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (l, s) = (Arc::clone(&live), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("respload-dashboard".into())
            .spawn(move || serve(&listener, &l, &s))
            .map_err(|e| Error::Internal(format!("cannot start the dashboard thread: {e}")))?;
        Ok(Dashboard {
            live,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Dashboard {
    /// The dashboard closes with the run, once its browsers got the final report (or after
    /// two seconds).
    fn drop(&mut self) {
        let until = Instant::now() + Duration::from_secs(2);
        while self.live.streams.load(Ordering::Acquire) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop.store(true, Ordering::Relaxed);
        self.live.changed.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, live: &Arc<Live>, stop: &Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (l, s) = (Arc::clone(live), Arc::clone(stop));
                // A browser that stalls holds its own thread, never the others'.
                let _ = std::thread::Builder::new()
                    .name("respload-dashboard-client".into())
                    .spawn(move || answer(stream, &l, &s));
            }
            // Nothing waiting: look at the stop flag again soon.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Answer one request: the page for `GET /`, the stream for `GET /events`, 404 otherwise.
fn answer(mut stream: TcpStream, live: &Live, stop: &AtomicBool) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    match super::http::get_path(&mut stream).as_deref() {
        Some("/" | "/index.html") => {
            let page = match live.state.lock() {
                Ok(s) => s
                    .done
                    .as_ref()
                    .map_or_else(|| s.page.clone(), |d| d.0.clone()),
                Err(_) => String::new(),
            };
            respond(&mut stream, "200 OK", "text/html; charset=utf-8", &page);
        }
        Some("/events") => {
            if live.streams.fetch_add(1, Ordering::AcqRel) >= MAX_STREAMS {
                respond(
                    &mut stream,
                    "503 Service Unavailable",
                    "text/plain",
                    "too many browsers\n",
                );
            } else {
                events(&mut stream, live, stop);
            }
            live.streams.fetch_sub(1, Ordering::AcqRel);
        }
        _ => respond(
            &mut stream,
            "404 Not Found",
            "text/plain; charset=utf-8",
            "respload's dashboard serves GET / and GET /events\n",
        ),
    }
}

fn respond(stream: &mut TcpStream, status: &str, kind: &str, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// The rows from the first, each as it comes, then the final report; a comment every 15 s
/// keeps idle proxies from closing the stream.
fn events(stream: &mut TcpStream, live: &Live, stop: &AtomicBool) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                Connection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let mut sent = 0;
    let mut quiet_since = Instant::now();
    loop {
        let (rows, done) = {
            let Ok(mut s) = live.state.lock() else { return };
            while s.rows.len() == sent && s.done.is_none() && !stop.load(Ordering::Relaxed) {
                let waited = live.changed.wait_timeout(s, Duration::from_secs(1));
                let Ok((guard, _)) = waited else { return };
                s = guard;
                if quiet_since.elapsed() >= Duration::from_secs(15) {
                    break;
                }
            }
            (
                s.rows[sent..].to_vec(),
                s.done.as_ref().map(|d| d.1.clone()),
            )
        };
        let mut out = String::new();
        for row in &rows {
            out.push_str("data: ");
            out.push_str(row);
            out.push_str("\n\n");
        }
        sent += rows.len();
        if let Some(data) = &done {
            out.push_str("event: report\ndata: ");
            out.push_str(data);
            out.push_str("\n\n");
        } else if out.is_empty() {
            out.push_str(": still running\n\n");
        }
        if stream.write_all(out.as_bytes()).is_err() || done.is_some() {
            return;
        }
        quiet_since = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return;
        }
    }
}
