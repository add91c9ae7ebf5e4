//! The `respload` command line: a thin layer over the library.

use clap::{Args, Parser, Subcommand};
use respload::output::{progress_line, table, write_hdr_log, write_json};
use respload::{Runner, Workload};
use serde_json::{json, Map, Value};
use std::process::ExitCode;
use std::time::Duration;

#[path = "respload/redis_benchmark.rs"]
mod redis_benchmark;

/// Load generator and benchmark for Redis and RESP servers.
#[derive(Parser)]
#[command(name = "respload", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a workload or scenario file (TOML or JSON) and print its report.
    Run(Box<RunArgs>),
    /// Check a spec file and print it normalized (as JSON, secrets redacted), sending nothing.
    Check {
        /// The spec file.
        spec: String,
    },
    /// Run a redis-benchmark command line unchanged (its options, its tests, its output:
    /// default, -q or --csv); see docs/compat.md for every option.
    #[command(name = "redis-benchmark", disable_help_flag = true)]
    RedisBenchmark(redis_benchmark::RedisBenchmarkArgs),
    /// Run a memtier_benchmark command line, its options unchanged, and report as memtier
    /// does (`respload memtier --help` lists the options; docs/compat.md maps them).
    #[command(disable_help_flag = true)]
    Memtier(MemtierArgs),
}

#[derive(Args)]
struct MemtierArgs {
    /// memtier_benchmark options, e.g. -s HOST -p PORT --ratio=1:10 --test-time=30; plus
    /// respload's `--json FILE` (anywhere) for respload's own report as JSON.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "MEMTIER_OPTIONS"
    )]
    args: Vec<String>,
}

impl MemtierArgs {
    /// Take respload's own `--json FILE` / `--json=FILE` out of the memtier options.
    fn split(self) -> (Vec<String>, Option<String>) {
        let (mut rest, mut json) = (Vec::new(), None);
        let mut args = self.args.into_iter();
        while let Some(a) = args.next() {
            if a == "--json" {
                json = args.next();
            } else if let Some(v) = a.strip_prefix("--json=") {
                json = Some(v.to_string());
            } else {
                rest.push(a);
            }
        }
        (rest, json)
    }
}

#[derive(Args)]
struct RunArgs {
    /// The spec file (TOML or JSON). Without one, the defaults: SET:GET 1:10 against 127.0.0.1:6379.
    spec: Option<String>,
    /// Write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Write the timeline as an HdrHistogram interval log to this file.
    #[arg(long, value_name = "FILE")]
    hdr_log: Option<String>,
    /// Print nothing while running (no live line on stderr).
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    overrides: Overrides,
}

/// Overrides of the spec. Target settings apply to every phase; load settings to the
/// measured phases only (a populate phase keeps its own).
#[derive(Args)]
struct Overrides {
    /// Server URL: redis://[user[:password]@]host[:port][/db], rediss://... (TLS) or
    /// unix:///path.sock.
    #[arg(long)]
    url: Option<String>,
    /// Server host name or address (instead of --url).
    #[arg(long, short = 'H')]
    host: Option<String>,
    /// Server port.
    #[arg(long, short = 'p')]
    port: Option<u16>,
    /// Password (AUTH).
    #[arg(long, short = 'a')]
    password: Option<String>,
    /// ACL user name.
    #[arg(long)]
    user: Option<String>,
    /// Connect with TLS (as a rediss:// URL does); every TLS option below implies it.
    #[arg(long)]
    tls: bool,
    /// TLS: PEM file of the CA certificate(s) to verify the server with (instead of the
    /// built-in public roots).
    #[arg(long, value_name = "FILE")]
    cacert: Option<String>,
    /// TLS: directory of PEM files of CA certificates to verify the server with.
    #[arg(long, value_name = "DIR")]
    cacertdir: Option<String>,
    /// TLS: client certificate (PEM) for servers that require one; needs --key.
    #[arg(long, value_name = "FILE")]
    cert: Option<String>,
    /// TLS: private key (PEM) of the client certificate.
    #[arg(long, value_name = "FILE")]
    key: Option<String>,
    /// TLS: server name to send and verify the certificate against (default: the host).
    #[arg(long, value_name = "NAME")]
    sni: Option<String>,
    /// TLS: do not verify the server's certificate (the report says so).
    #[arg(long)]
    insecure: bool,
    /// Redis Cluster: route each request to the node owning its key's slot, follow
    /// redirections; --connections then counts connections per primary node.
    #[arg(long)]
    cluster: bool,
    /// Total connections (per primary node with --cluster).
    #[arg(long, short = 'c')]
    connections: Option<u32>,
    /// Worker threads.
    #[arg(long, short = 't')]
    threads: Option<u32>,
    /// Requests in flight per connection.
    #[arg(long, short = 'P')]
    pipeline: Option<u32>,
    /// Measured requests in total.
    #[arg(long, short = 'n')]
    requests: Option<u64>,
    /// Measured duration, e.g. 30s, 2m.
    #[arg(long, short = 'd')]
    duration: Option<String>,
    /// Warm-up before measuring, e.g. 5s.
    #[arg(long)]
    warmup: Option<String>,
    /// Seed of the request stream.
    #[arg(long)]
    seed: Option<u64>,
}

impl Overrides {
    /// (target overrides, other overrides) as partial specs.
    fn to_json(&self) -> (Option<Value>, Option<Value>) {
        let mut target = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                target.insert(k.into(), v);
            }
        };
        put("url", self.url.clone().map(Value::from));
        put("host", self.host.clone().map(Value::from));
        put("port", self.port.map(Value::from));
        put("password", self.password.clone().map(Value::from));
        put("user", self.user.clone().map(Value::from));
        let mut tls = Map::new();
        for (k, v) in [
            ("ca_file", &self.cacert),
            ("ca_dir", &self.cacertdir),
            ("cert", &self.cert),
            ("key", &self.key),
            ("sni", &self.sni),
        ] {
            if let Some(v) = v {
                tls.insert(k.into(), Value::from(v.clone()));
            }
        }
        if self.insecure {
            tls.insert("insecure".into(), Value::Bool(true));
        }
        if self.tls || !tls.is_empty() {
            tls.insert("enabled".into(), Value::Bool(true));
            put("tls", Some(Value::Object(tls)));
        }
        if self.cluster {
            put("cluster", Some(Value::Bool(true)));
        }
        let mut load = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                load.insert(k.into(), v);
            }
        };
        put("connections", self.connections.map(Value::from));
        put("threads", self.threads.map(Value::from));
        put("pipeline", self.pipeline.map(Value::from));
        put("requests", self.requests.map(Value::from));
        put("duration", self.duration.clone().map(Value::from));
        put("warmup", self.warmup.clone().map(Value::from));
        let mut rest = Map::new();
        if !load.is_empty() {
            rest.insert("load".into(), Value::Object(load));
        }
        if let Some(seed) = self.seed {
            rest.insert("seed".into(), json!(seed));
        }
        let t = (!target.is_empty()).then(|| json!({ "target": target }));
        let r = (!rest.is_empty()).then_some(Value::Object(rest));
        (t, r)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run(*args),
        Command::RedisBenchmark(args) => redis_benchmark::run(args),
        Command::Memtier(args) => memtier(args),
        Command::Check { spec } => Workload::from_path(&spec).map(|w| {
            println!(
                "{}",
                serde_json::to_string_pretty(&w.redacted()).unwrap_or_default()
            );
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("respload: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: RunArgs) -> respload::Result<()> {
    let base = match &args.spec {
        Some(path) => Workload::from_path(path)?,
        None => Workload::from_json_value(json!({}))?,
    };
    let (target, rest) = args.overrides.to_json();
    // Seeds and targets given on the command line apply everywhere.
    let workload = if target.is_some() || rest.is_some() {
        base.with_overrides(target, rest)?
    } else {
        base
    };
    let runner = Runner::start(workload)?;
    let stop = runner.stop_handle();
    let mut interrupts = 0u32;
    // The CLI owns its process, so it may handle Ctrl-C: first press stops the run and keeps
    // the partial report; a second press exits at once.
    let _ = ctrlc::set_handler(move || {
        interrupts += 1;
        if interrupts > 1 {
            std::process::exit(130);
        }
        stop.stop();
    });
    while !runner.is_finished() {
        if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
            if !args.quiet {
                eprintln!("{}", progress_line(&s));
            }
        }
    }
    let report = runner.wait()?;
    print!("{}", table(&report));
    if let Some(path) = &args.json {
        write_json(&report, path)?;
    }
    if let Some(path) = &args.hdr_log {
        write_hdr_log(&report, path)?;
    }
    if report.interrupted {
        eprintln!("respload: interrupted, the report above is partial");
    }
    Ok(())
}

fn memtier(args: MemtierArgs) -> respload::Result<()> {
    use respload::compat::memtier::{self, Invocation};
    let (args, json) = args.split();
    let m = match memtier::parse(&args)? {
        Invocation::Help => {
            print!("{}", memtier::usage());
            return Ok(());
        }
        Invocation::Version => {
            println!("{}", memtier::version());
            return Ok(());
        }
        Invocation::Run(m) => *m,
    };
    let options = m.options;
    if options.show_config {
        eprintln!("============== Configuration values: ==============");
        eprint!("{}", options.config_text());
        eprintln!("===================================================");
    }
    let runner = Runner::start(m.workload)?;
    let stop = runner.stop_handle();
    let mut interrupts = 0u32;
    // As for `run`: the first Ctrl-C stops the run and keeps the partial report.
    let _ = ctrlc::set_handler(move || {
        interrupts += 1;
        if interrupts > 1 {
            std::process::exit(130);
        }
        stop.stop();
    });
    while !runner.is_finished() {
        if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
            eprintln!("{}", progress_line(&s));
        }
    }
    let report = runner.wait()?;
    let printed = respload::output::memtier::finish(&report, &options)?;
    print!("{}", printed.stdout);
    for line in &printed.stderr {
        eprintln!("{line}");
    }
    if let Some(path) = &json {
        write_json(&report, path)?;
    }
    if report.interrupted {
        eprintln!("respload: interrupted, the report above is partial");
    }
    Ok(())
}
