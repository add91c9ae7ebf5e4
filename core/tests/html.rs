//! The HTML report, opened in a real browser: headless Chromium (Debian's `chromium`, which
//! `make deps` installs) loads the page from a file with the network cut off, runs its
//! script, and the DOM it leaves says what was drawn.

mod common;

use common::{free_port, workload, Server};
use respload::report::Transport;
use respload::{Report, Runner};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_respload");

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("respload-html-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The DOM after Chromium loaded `page` and ran its scripts (up to 5 s of virtual time),
/// with every network request refused: what a user opening the file offline sees. Fails
/// unless the page's script drew it to the end.
fn rendered(page: &Path) -> String {
    browse(
        &format!("file://{}", page.display()),
        &page.with_extension("profile"),
    )
}

/// [`rendered`] of any URL, the browser's profile in `profile`.
fn browse(url: &str, profile: &Path) -> String {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=5000",
            // The page's console on stderr: it writes nothing there unless something failed.
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        // A file's page gets no network at all (no name resolves, no proxy answers: a page
        // that needed the network fails); the dashboard's, loopback only (no name resolves).
        .args(match url.starts_with("file:") {
            true => &[
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=127.0.0.1:9",
            ][..],
            false => &["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"][..],
        })
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap_or_else(|e| panic!("chromium could not start ({e}): `make deps` installs it"));
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8(out.stdout).unwrap();
    let console: Vec<&str> = std::str::from_utf8(&out.stderr)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .collect();
    assert!(console.is_empty(), "the page's console: {console:?}");
    assert_eq!(body_attr(&dom, "data-blank-charts").as_deref(), Some("0"));
    // The page's script ran to its end without an error.
    assert_eq!(
        body_attr(&dom, "data-rendered").as_deref(),
        Some("ok"),
        "{:?}",
        body_attr(&dom, "data-error")
    );
    dom
}

/// With `RESPLOAD_SCREENSHOTS=DIR` set, a screenshot of `page` as `DIR/NAME.png` (the docs'
/// pictures: `RESPLOAD_SCREENSHOTS=$PWD/docs/images cargo test --test html`).
fn screenshot(page: &Path, name: &str, height: u32) {
    let Some(dir) = std::env::var_os("RESPLOAD_SCREENSHOTS") else {
        return;
    };
    let out = Path::new(&dir).join(format!("{name}.png"));
    let status = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .arg("--virtual-time-budget=5000")
        .arg(format!("--window-size=1200,{height}"))
        .arg(format!(
            "--user-data-dir={}",
            page.with_extension("shot").display()
        ))
        .arg(format!("--screenshot={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(status.status.success() && out.exists(), "{}", out.display());
}

/// What the chart titled `title` was given, read back from its element: its first series'
/// points and their sum.
fn chart_data(dom: &str, title: &str) -> (usize, f64) {
    let at = dom
        .find(&format!("data-chart=\"{title}\""))
        .unwrap_or_else(|| panic!("no chart {title}"));
    let tag = &dom[at..at + dom[at..].find('>').unwrap()];
    let attr = |name: &str| {
        let i = tag.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        tag[i..i + tag[i..].find('"').unwrap()].to_string()
    };
    (
        attr("data-points").parse().unwrap(),
        attr("data-sum").parse().unwrap(),
    )
}

/// The attribute `name` of the page's `<body>`.
fn body_attr(dom: &str, name: &str) -> Option<String> {
    let start = dom.find("<body")?;
    let tag = &dom[start..start + dom[start..].find('>')?];
    let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
    Some(tag[at..at + tag[at..].find('"')?].to_string())
}

fn respload(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A spec of two measured phases against `server`: open loop with a BGSAVE drill, then
/// closed loop; GET and SET.
fn spec(dir: &Path, server: &Server, rate: u32) -> PathBuf {
    let path = dir.join(format!("spec-{rate}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"
            [target]
            url = "{}"
            [thresholds]
            error_rate = 0.5
            [load]
            connections = 4
            [[commands]]
            name = "set"
            [[commands]]
            name = "get"
            [[phases]]
            name = "paced"
            load = {{ rate = {rate}, duration = "3s" }}
            events = [{{ at = "1s", drill = "bgsave" }}]
            [[phases]]
            name = "flat-out"
            load = {{ duration = "2s", io = "uring" }}
            "#,
            server.url()
        ),
    )
    .unwrap();
    path
}

/// `respload run` of [`spec`] at `rate`, its report into `json`, with `more` arguments.
fn run_spec(d: &Path, server: &Server, rate: u32, json: &Path, more: &[&str]) {
    let spec = spec(d, server, rate);
    let mut args = vec![
        "run",
        spec.to_str().unwrap(),
        "-q",
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    respload(&args);
}

#[test]
fn a_runs_page_draws_every_chart_offline_in_a_real_browser() {
    let d = dir("run");
    let server = Server::start(&[]);
    let (json, html) = (d.join("run.json"), d.join("run.html"));
    run_spec(
        &d,
        &server,
        2000,
        &json,
        &["--html", html.to_str().unwrap()],
    );
    let report = Report::from_file(json.to_str().unwrap()).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: nothing fetched from elsewhere.
    for external in ["<script src", "<link", "@import", "url(http"] {
        assert!(!page.contains(external), "{external}");
    }
    // The data the page draws is the report's: its requests, per command.
    let start = page.find("id=\"respload-data\">").unwrap() + "id=\"respload-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
    let run = &data["runs"][0];
    assert_eq!(run["totals"]["ops"], report.totals.ops);
    assert_eq!(
        run["timeline"]["t"].as_array().unwrap().len(),
        report.timeline.len()
    );
    let phases: Vec<&str> = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(phases, ["paced", "flat-out"]);
    // The second phase ran on io_uring: the run's client box says both transports ran.
    let io: Vec<Transport> = report.phases.iter().map(|p| p.client.io).collect();
    assert_eq!(io, [Transport::Epoll, Transport::Uring]);
    assert_eq!(report.client.io, Transport::Mixed);
    assert_eq!(run["client"]["io"], "mixed");
    assert_eq!(
        run["events"][0]["label"]
            .as_str()
            .unwrap()
            .split(' ')
            .next(),
        Some("bgsave")
    );
    // A spectrum per phase for all commands and each: 2 x 3, each rising with the percentile.
    let spectra = run["spectra"].as_array().unwrap();
    assert_eq!(spectra.len(), 6);
    for s in spectra {
        let ms: Vec<f64> = s["ms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(ms.len() > 10 && ms.windows(2).all(|w| w[0] <= w[1]), "{s}");
        // Their places on the axis of nines: finite (never 100%), rising, one per point.
        let nines: Vec<f64> = s["nines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(nines.len(), ms.len());
        assert!(nines.iter().all(|x| x.is_finite()), "{s}");
        assert!(nines.windows(2).all(|w| w[0] < w[1]), "{s}");
    }

    let dom = rendered(&html);
    screenshot(&html, "report", 2300);
    // Throughput, latency, errors and connections, server, the spectrum.
    assert_eq!(body_attr(&dom, "data-charts").as_deref(), Some("5"));
    assert_eq!(dom.matches("<canvas").count(), 5);
    // The verdict lists the threshold with its verdict.
    assert_eq!(report.thresholds.len(), 1);
    assert!(
        dom.contains("<td>error_rate</td>") && dom.contains("<td>held</td>"),
        "threshold"
    );
    assert!(
        dom.contains("4 connections (mixed)"),
        "the client box names the transport"
    );
    for id in ["verdict", "timeline", "spectrum", "commands", "workload"] {
        assert!(dom.contains(&format!("<section id=\"{id}\"")), "{id}");
    }
    // The charts drew the report's figures: one throughput point per timeline row, adding
    // up to the rows' ops/s (the page keeps 4 significant digits).
    let (points, sum) = chart_data(&dom, "Throughput (ops/s)");
    let want: f64 = report.timeline.iter().map(|r| r.ops_per_sec).sum();
    assert_eq!(points, report.timeline.len());
    assert!((sum - want).abs() <= want * 1e-3, "{sum} against {want}");
    let (points, sum) = chart_data(&dom, "Latency by percentile");
    let first: Vec<f64> = spectra[0]["ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(points, first.len());
    assert!((sum - first.iter().sum::<f64>()).abs() < 1e-6 * sum.max(1.0));
    let (points, _) = chart_data(&dom, "Server");
    assert_eq!(points, report.server_timeline.len());
    // The commands table holds the report's counts.
    let get = report.commands["GET"].ops;
    assert!(
        dom.contains(&format!("<td>{}</td>", thousands(get))),
        "GET {get}"
    );
}

#[test]
fn compared_reports_share_one_page_with_the_verdicts() {
    let d = dir("compare");
    let server = Server::start(&[]);
    let mut files = Vec::new();
    for rate in [1000, 3000] {
        let json = d.join(format!("r{rate}.json"));
        run_spec(&d, &server, rate, &json, &[]);
        files.push(json.to_str().unwrap().to_string());
    }
    let html = d.join("compare.html");
    let text = respload(&[
        "report",
        &files[0],
        &files[1],
        "--label",
        "slow",
        "--label",
        "fast",
        "--html",
        html.to_str().unwrap(),
    ]);
    // The comparison printed, as `compare` prints it.
    assert!(text.contains("slow") && text.contains("fast"), "{text}");
    let dom = rendered(&html);
    screenshot(&html, "compare", 1400);
    assert!(dom.contains("<section id=\"comparison\""));
    // Three times the rate: the paced phase's ops/s row shows the change (+200%, give or
    // take what the machine did).
    assert!(dom.contains("Baseline: slow"), "no baseline line");
    let row = dom
        .split("<tr>")
        .find(|r| {
            r.contains("<td>paced</td>")
                && r.contains("<td>ALL</td>")
                && r.contains("<td>ops_per_sec</td>")
        })
        .expect("the paced phase's ops/s row");
    let change: f64 = row
        .split("(+")
        .nth(1)
        .and_then(|r| r.split('%').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("{row}"));
    assert!((change - 200.0).abs() < 20.0, "{row}");
    // Both runs' series overlaid: throughput, latency, errors/connections, server, spectrum.
    assert_eq!(body_attr(&dom, "data-charts").as_deref(), Some("5"));
    assert!(dom.contains("slow: ops/s") && dom.contains("fast: ops/s"));
}

#[test]
fn an_hours_page_stays_under_a_megabyte() {
    // A run's report with its timeline stretched to an hour of rows (3,600), every series
    // present: the page carries columns of numbers, not the histograms.
    let d = dir("hour");
    let server = Server::start(&[]);
    let json = d.join("short.json");
    run_spec(&d, &server, 2000, &json, &[]);
    let mut report = Report::from_file(json.to_str().unwrap()).unwrap();
    let row = report.timeline[1].clone();
    report.timeline = (0..3600)
        .map(|i| {
            let mut r = row.clone();
            r.t = i as f64 + 1.0;
            r.unix_s += i as f64;
            r.ops_per_sec *= 1.0 + (i % 7) as f64 / 100.0;
            r.latency_ms.p99 *= 1.0 + (i % 13) as f64 / 100.0;
            r
        })
        .collect();
    report.phases.iter_mut().for_each(|p| p.timeline.clear());
    report.phases[0].timeline = report.timeline.clone();
    let page = respload::report::html::report_html(&report);
    assert!(page.len() < 1_000_000, "{} bytes", page.len());
    let file = d.join("hour.html");
    std::fs::write(&file, &page).unwrap();
    rendered(&file);
}

/// `n` as the page's tables write integers (`toLocaleString('en-US')`).
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A run with `observe.dashboard` on a free port, at 1,000/s for `seconds`.
fn dashboard_run(server: &Server, seconds: u32) -> (Runner, u16) {
    let port = free_port();
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url() },
        "observe": { "dashboard": format!("127.0.0.1:{port}") },
        "load": { "connections": 2, "rate": 1000, "duration": format!("{seconds}s") },
        "commands": [{ "name": "set" }, { "name": "get" }],
    })))
    .unwrap();
    (runner, port)
}

/// Connect to the dashboard once it listens (the runner binds it before any traffic).
fn connect(port: u16) -> std::net::TcpStream {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match std::net::TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => return s,
            Err(e) if Instant::now() > until => panic!("no dashboard on {port}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[test]
fn the_dashboard_streams_each_second_as_it_comes_then_the_report() {
    let server = Server::start(&[]);
    let (runner, port) = dashboard_run(&server, 4);
    let mut stream = connect(port);
    write!(stream, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut lines = BufReader::new(stream).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "HTTP/1.1 200 OK");
    let mut rows: Vec<(Instant, serde_json::Value)> = Vec::new();
    let mut report_data = None;
    let mut event = String::new();
    for line in lines {
        let line = line.unwrap();
        if let Some(name) = line.strip_prefix("event: ") {
            event = name.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            let value: serde_json::Value = serde_json::from_str(data).unwrap();
            if event == "report" {
                report_data = Some((Instant::now(), value));
                break;
            }
            rows.push((Instant::now(), value));
        }
    }
    let report = runner.wait().unwrap();
    let (ended, data) = report_data.expect("the report event");
    // One row per second of the run, each sent as it was emitted: the first well before the
    // end (a stream flushed only at the end would deliver them together).
    assert_eq!(rows.len(), report.timeline.len(), "{rows:?}");
    assert!(
        ended.duration_since(rows[0].0) > Duration::from_millis(2500),
        "the first row came {:?} before the report",
        ended.duration_since(rows[0].0)
    );
    for ((_, row), want) in rows.iter().zip(&report.timeline) {
        assert_eq!(row["phase"], "main");
        assert_eq!(row["connections"], want.connections);
        assert_eq!(row["errors"], want.errors);
    }
    // The report event carries the final report's figures.
    assert_eq!(data["runs"][0]["totals"]["ops"], report.totals.ops);
}

#[test]
fn a_browser_on_the_dashboard_sees_the_rows_then_the_final_report() {
    let server = Server::start(&[]);
    let (runner, port) = dashboard_run(&server, 4);
    drop(connect(port));
    let profile = dir("dashboard").join("profile");
    // The browser waits for the stream to end (the report), then the DOM is read.
    let dom = browse(&format!("http://127.0.0.1:{port}/"), &profile);
    let report = runner.wait().unwrap();
    assert_eq!(body_attr(&dom, "data-final").as_deref(), Some("done"));
    let rows: usize = body_attr(&dom, "data-live-rows").unwrap().parse().unwrap();
    // It connected within the first second or two: most rows came live.
    assert!(rows >= 2 && rows <= report.timeline.len(), "{rows}");
    // The final page: every chart of a run's page.
    assert_eq!(body_attr(&dom, "data-charts").as_deref(), Some("5"));
    assert!(dom.contains("<section id=\"commands\""));
    // A request to anything else is a 404.
    let (runner, port) = dashboard_run(&server, 1);
    let mut s = connect(port);
    write!(s, "GET /nothing HTTP/1.1\r\n\r\n").unwrap();
    let first = BufReader::new(s).lines().next().unwrap().unwrap();
    assert_eq!(first, "HTTP/1.1 404 Not Found");
    runner.wait().unwrap();
}

#[test]
fn a_bad_or_taken_dashboard_address_fails_before_any_traffic() {
    let err = |spec: serde_json::Value| {
        respload::Workload::from_json_value(spec)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err(json!({ "observe": { "dashboard": "8089" } })),
        "invalid spec at `observe.dashboard`: `8089` is not HOST:PORT: give e.g. \
         \"127.0.0.1:8089\""
    );
    assert!(err(json!({ "phases": [
        { "observe": { "dashboard": "127.0.0.1:8089" } },
        { "observe": { "dashboard": "127.0.0.1:8090" } },
    ] }))
    .contains("a run serves one dashboard"));
    let server = Server::start(&[]);
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "requests": 100 },
        "observe": { "dashboard": format!("127.0.0.1:{port}") },
    }));
    let e = respload::run(&w).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "invalid spec at `observe.dashboard`: cannot listen on `127.0.0.1:{port}`"
        )),
        "{e}"
    );
    assert_eq!(server.calls("set") + server.calls("get"), 0);
}

#[test]
fn a_merged_report_of_three_hosts_lists_each() {
    let d = dir("merged");
    let server = Server::start(&[]);
    let spec = spec(&d, &server, 1500);
    let mut files = Vec::new();
    for i in 0..3 {
        let json = d.join(format!("shard{i}.json"));
        respload(&[
            "run",
            spec.to_str().unwrap(),
            "-q",
            "--shard",
            &format!("{i}/3"),
            "--json",
            json.to_str().unwrap(),
        ]);
        files.push(json.to_str().unwrap().to_string());
    }
    let merged = d.join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--json", merged.to_str().unwrap()]);
    respload(&args);
    let html = d.join("merged.html");
    respload(&[
        "report",
        merged.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let report = Report::from_file(merged.to_str().unwrap()).unwrap();
    assert_eq!(report.hosts.len(), 3);
    let dom = rendered(&html);
    assert!(dom.contains("<section id=\"hosts\""));
    // The hosts side by side: each one's throughput and p99, second by second.
    assert_eq!(body_attr(&dom, "data-charts").as_deref(), Some("7"));
    let first = &report.hosts[0].timeline;
    assert!(first.len() >= 5, "{first:?}");
    let (points, sum) = chart_data(&dom, "Throughput by host (ops/s)");
    let want: f64 = first.iter().map(|r| r.ops_per_sec).sum();
    assert_eq!(points, first.len());
    assert!((sum - want).abs() <= want * 1e-3, "{sum} against {want}");
    // The table: one row per host (and the header's), with its requests.
    let hosts = &dom[dom.find("<th>host</th>").unwrap()..];
    let hosts = &hosts[..hosts.find("</table>").unwrap()];
    assert_eq!(hosts.matches("<tr>").count(), 3, "{hosts}");
    for h in &report.hosts {
        assert!(
            hosts.contains(&format!("<td>{}</td>", thousands(h.ops))),
            "{}",
            h.ops
        );
    }
}

#[test]
fn the_command_line_serves_the_dashboard_on_loopback_by_default() {
    let server = Server::start(&[]);
    // `--dashboard` alone: 127.0.0.1:8089, said on stderr before the run's first line.
    let out = Command::new(BIN)
        .args(["run", "--url", &server.url(), "-n", "2000", "--dashboard"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr
            .starts_with("respload: live dashboard at http://127.0.0.1:8089/ while the run lasts"),
        "{stderr}"
    );
    assert_eq!(server.calls("set") + server.calls("get"), 2000);
}
