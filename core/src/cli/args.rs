//! The command line's arguments (clap) and the spec overrides they make.

use super::redis_benchmark::RedisBenchmarkArgs;
use clap::{Args, Parser, Subcommand};
use serde_json::{json, Map, Value};

/// Load generator and benchmark for Redis and RESP servers.
#[derive(Parser)]
#[command(name = "respload", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run a workload or scenario file (TOML or JSON) and print its report.
    Run(Box<RunArgs>),
    /// Check a spec file and print it normalized (as JSON, secrets redacted), sending nothing.
    Check {
        /// The spec file.
        spec: String,
        #[command(flatten)]
        vars: SpecVars,
    },
    /// Replay a trace (a respload trace, a `redis-cli MONITOR` log or a Twitter cache-trace
    /// CSV) against a server: each command at its recorded instant (open loop), each
    /// recorded client's in order; see docs/traffic.md.
    Replay(Box<ReplayArgs>),
    /// Record what a server executes (through MONITOR) into a trace file, secrets redacted.
    Capture(CaptureArgs),
    /// Fit a workload spec to a trace (its command mix, key popularity, value sizes, TTLs
    /// and rate), print how close it is, and write the spec (TOML) to --out.
    Model(ModelArgs),
    /// Run a redis-benchmark command line unchanged (its options, its tests, its output:
    /// default, -q or --csv); see docs/compat.md for every option.
    #[command(name = "redis-benchmark", disable_help_flag = true)]
    RedisBenchmark(RedisBenchmarkArgs),
    /// Run a valkey-benchmark command line: the redis-benchmark front end, whose default
    /// tests are then valkey-benchmark's (XADD, FUNCTION LOAD and FCALL last).
    #[command(name = "valkey-benchmark", disable_help_flag = true)]
    ValkeyBenchmark(RedisBenchmarkArgs),
    /// Run a memtier_benchmark command line, its options unchanged, and report as memtier
    /// does (`respload memtier --help` lists the options; docs/compat.md maps them).
    #[command(disable_help_flag = true)]
    Memtier(MemtierArgs),
    /// Compare reports (`--json` files): a baseline and later runs, phase by phase and
    /// command by command (ops/s, p50, p90, p99, p99.9, max, error rate), changes marked
    /// `worse` beyond noise; exit status 1 when a `--fail-on` limit is crossed.
    Compare {
        /// The baseline's report file, then the later runs' (at least one).
        #[arg(required = true, num_args = 2.., value_name = "REPORT")]
        reports: Vec<String>,
        /// Limits on the change against the baseline, comma-separated or repeated:
        /// LIMIT=CHANGE with LIMIT one of `--check`'s (p50_ms, p90_ms, p99_ms, p99_9_ms,
        /// max_ms, error_rate, ops_per_sec) and CHANGE in percent (`p99_ms=+10%`,
        /// `ops_per_sec=-5%`) or in the metric's unit (`error_rate=+0.001`, `max_ms=+2`).
        #[arg(long, value_name = "LIMITS", value_delimiter = ',')]
        fail_on: Vec<String>,
        /// Write the comparison as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
        /// Write each report's latency distribution (all commands, measured phases) into
        /// this directory as HdrHistogram `.hgrm` files (`0-NAME.hgrm` the baseline's, then
        /// `1-NAME.hgrm` ...), to overlay with HdrHistogram's plotter.
        #[arg(long, value_name = "DIR")]
        hgrm: Option<String>,
    },
    /// Show reports (`--json` files): one printed as `run` prints it, several compared as
    /// `compare` does (the first the baseline); `--html` draws them into one self-contained
    /// page (verdict, timeline, latency percentiles, commands, hosts, workload).
    Report {
        /// The report files (the baseline first).
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<String>,
        /// Write the page to this file (no network needed to open it).
        #[arg(long, value_name = "FILE")]
        html: Option<String>,
        /// Name the reports in the page and the comparison, in order (repeatable; default:
        /// each file's name).
        #[arg(long = "label", value_name = "NAME")]
        labels: Vec<String>,
    },
    /// Merge the reports (`--json` files) of hosts that ran one workload together (the
    /// shards of `run --shard`, each once) into one report, printed as `run` prints one.
    Merge {
        /// The hosts' report files.
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<String>,
        /// Write the merged report as JSON to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<String>,
    },
    /// Print a JSON Schema (draft 2020-12): `spec`, of spec files (for editors and checks
    /// before a run); `report`, of the report `--json` writes (for validating or typing
    /// reports in other tools); `bindings`, the names the Python and Node packages share
    /// with the core (error kinds and codes, limit names, the comparison's types).
    Schema {
        /// Which schema.
        #[arg(value_enum)]
        of: SchemaOf,
    },
}

/// The documents `respload schema` describes.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum SchemaOf {
    /// Spec files (`run SPEC`, `check SPEC`).
    Spec,
    /// The report (`run --json`, `merge --json`).
    Report,
    /// The names the Python and Node bindings share with the core: error kinds, codes and
    /// fields, limit names (also a comparison's metrics) and the comparison's types.
    Bindings,
}

#[derive(Args)]
pub(crate) struct MemtierArgs {
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
    pub(crate) fn split(self) -> (Vec<String>, Option<String>) {
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
pub(crate) struct RunArgs {
    /// The spec file (TOML or JSON). Without one, the defaults: SET:GET 1:10 against 127.0.0.1:6379.
    pub(crate) spec: Option<String>,
    #[command(flatten)]
    pub(crate) report: ReportFlags,
    /// Run shard I of N (0-based) of the workload, as one of N hosts running it together:
    /// this host's share of the connections, requests, rate and keys walked in order
    /// (`Workload::shard`; docs/guide.md).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub(crate) shard: Option<(u32, u32)>,
    /// Open the connections, then send the first request at this instant: UNIX seconds or
    /// an RFC 3339 time (e.g. 2026-11-25T20:00:00Z), the same on every host of a sharded
    /// run. Fails before any traffic when it passed by more than a second.
    #[arg(long, value_name = "TIME", value_parser = parse_start_at)]
    pub(crate) start_at: Option<f64>,
    /// Run the phases in step across the hosts of a sharded run: before each phase (the
    /// first too, without --start-at) every host waits on this Redis (any server all hosts
    /// reach; the target will do), so that none starts phase k + 1 before every host
    /// finished phase k (docs/distributed.md).
    #[arg(long, value_name = "URL", requires = "shard")]
    pub(crate) barrier: Option<String>,
    /// The run's name on the barrier server, the same on every host and new for each run
    /// (default: derived from the spec, the shard count and --start-at; needed without it).
    #[arg(long, value_name = "ID", requires = "barrier")]
    pub(crate) barrier_id: Option<String>,
    /// How long a host waits at the barrier for the others before the run fails, naming the
    /// phase and the hosts that arrived (default 5m).
    #[arg(long, value_name = "DURATION", requires = "barrier", value_parser = parse_duration)]
    pub(crate) barrier_timeout: Option<std::time::Duration>,
    #[command(flatten)]
    pub(crate) vars: SpecVars,
    #[command(flatten)]
    pub(crate) overrides: Overrides,
}

#[derive(Args)]
pub(crate) struct ReplayArgs {
    /// The trace file.
    pub(crate) file: String,
    /// The trace's format when its first line does not tell: respload, monitor or twitter.
    #[arg(long)]
    format: Option<String>,
    /// How much faster than recorded (2 = twice as fast); or give --rate, the mean rate.
    #[arg(long, conflicts_with = "rate")]
    speed: Option<f64>,
    /// Written before every key (e.g. replay:).
    #[arg(long, value_name = "PREFIX")]
    key_prefix: Option<String>,
    /// Replace every key with a hash of it (16 hex digits).
    #[arg(long)]
    key_hash: bool,
    /// Replay only these commands (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', value_name = "COMMANDS")]
    keep: Vec<String>,
    /// Never replay these commands (comma-separated or repeated), besides those dropped by
    /// default (FLUSHALL, CONFIG, blocking commands, ...).
    #[arg(long, value_delimiter = ',', value_name = "COMMANDS")]
    drop: Vec<String>,
    /// Passes over the trace (default 1).
    #[arg(long)]
    loops: Option<u32>,
    /// Do not write the keys the trace reads before it writes them first.
    #[arg(long)]
    no_prefill: bool,
    /// Value size of a prefilled key whose size the trace does not tell (default 64).
    #[arg(long, value_name = "BYTES")]
    prefill_size: Option<u32>,
    #[command(flatten)]
    pub(crate) report: ReportFlags,
    /// The target (--url, -H, -p, TLS, ...); `--rate` is the replay's mean rate and `-c`
    /// the connections the recorded clients are hashed onto (default: one per client).
    #[command(flatten)]
    pub(crate) overrides: Overrides,
}

impl ReplayArgs {
    /// The spec's `replay` table.
    pub(crate) fn replay_json(&self) -> Value {
        let mut r = json!({ "file": self.file });
        let mut set = |k: &str, v: Value| {
            r[k] = v;
        };
        if let Some(f) = &self.format {
            set("format", json!(f));
        }
        if let Some(s) = self.speed {
            set("speed", json!(s));
        }
        if let Some(p) = &self.key_prefix {
            set("key_prefix", json!(p));
        }
        if self.key_hash {
            set("key_hash", json!(true));
        }
        if !self.keep.is_empty() {
            set("keep", json!(self.keep));
        }
        if !self.drop.is_empty() {
            set("drop", json!(self.drop));
        }
        if let Some(n) = self.loops {
            set("loops", json!(n));
        }
        if self.no_prefill {
            set("prefill", json!(false));
        }
        if let Some(n) = self.prefill_size {
            set("prefill_size", json!(n));
        }
        r
    }
}

#[derive(Args)]
pub(crate) struct ModelArgs {
    /// The trace file (a respload trace, a MONITOR log or a Twitter cache-trace CSV).
    pub(crate) file: String,
    /// The trace's format when its first line does not tell: respload, monitor or twitter.
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// Write the spec (TOML) to this file; without it, to stdout after the summary.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<String>,
    /// Scale the rate: 10 replays the trace's traffic at ten times its rate.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub(crate) rate_x: f64,
    /// Scale the key space: 100 spreads the same popularity over a hundred times the keys.
    #[arg(long, value_name = "X", default_value_t = 1.0)]
    pub(crate) keys_x: f64,
    /// The spec's target URL.
    #[arg(long)]
    pub(crate) url: Option<String>,
    /// Write the fit (how close the model is to the trace) as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<String>,
}

#[derive(Args)]
pub(crate) struct CaptureArgs {
    /// The server: redis://[user[:password]@]host[:port][/db], rediss://... (TLS) or
    /// unix:///path.sock. A cluster (--cluster) is captured from every primary.
    pub(crate) url: String,
    /// How long to capture (e.g. 60s, 5m); until Ctrl-C without it. (No `-d`: it is the
    /// value size in redis-benchmark and memtier_benchmark.)
    #[arg(long)]
    pub(crate) duration: Option<String>,
    /// The trace file to write (JSON lines; `.gz`: gzip-compressed).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: String,
    /// Capture from every primary of the cluster the URL's server belongs to.
    #[arg(long)]
    pub(crate) cluster: bool,
    /// Stop after this many commands.
    #[arg(long, value_name = "N")]
    pub(crate) max_commands: Option<u64>,
    /// Write the capture's summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<String>,
    /// Print nothing while capturing.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

/// The spec file's `[vars]`: a scale and single values.
#[derive(Args)]
pub(crate) struct SpecVars {
    /// Apply the spec file's `[scales.NAME]` values (e.g. `--scale ci`).
    #[arg(long, value_name = "NAME")]
    scale: Option<String>,
    /// Set a variable declared in the spec file's `[vars]` (repeatable): an integer, a
    /// number, true/false, else text.
    #[arg(long = "var", value_name = "NAME=VALUE", value_parser = parse_var)]
    vars: Vec<(String, Value)>,
}

impl SpecVars {
    /// The parameters to read the spec file with.
    pub(crate) fn params(&self) -> crate::spec::SpecParams {
        crate::spec::SpecParams {
            scale: self.scale.clone(),
            vars: self.vars.iter().cloned().collect(),
        }
    }
}

fn parse_start_at(text: &str) -> Result<f64, String> {
    crate::spec::parse_start_at(text).map_err(|e| match e {
        crate::Error::Spec { reason, .. } => reason,
        other => other.to_string(),
    })
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    crate::spec::SpecDuration::parse(text).map(|d| d.0)
}

fn parse_shard(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}`: expected I/N, e.g. 0/3 (shard I of N, I from 0 to N - 1)");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    match i < n {
        true => Ok((i, n)),
        false => Err(bad()),
    }
}

/// A number, range-checked later with the spec's own rule (`load.rate`); NaN and infinity
/// are refused here because JSON has no value for them and the rate would silently vanish.
fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|r| r.is_finite())
        .ok_or_else(|| format!("`{text}` is not a number of requests per second, e.g. 5000"))
}

fn parse_limit(text: &str) -> Result<(String, f64), String> {
    let (name, value) = text
        .split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| format!("`{text}`: expected LIMIT=VALUE, e.g. p99_ms=5"))?;
    let value = value
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("`{text}`: `{value}` is not a number"))?;
    Ok((name.to_string(), value))
}

/// Where a run's report goes, and the budget it must meet (`run`'s and `replay`'s flags).
#[derive(Args)]
pub(crate) struct ReportFlags {
    /// Write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<String>,
    /// Write the timeline as an HdrHistogram interval log to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) hdr_log: Option<String>,
    /// Write the report as a self-contained HTML page to this file: verdict, timeline,
    /// latency percentiles, commands (no network needed to open it).
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<String>,
    /// Print nothing while running (no live line on stderr).
    #[arg(short, long)]
    pub(crate) quiet: bool,
    /// A budget the report must meet, else exit status 1 (repeatable): LIMIT=VALUE with
    /// LIMIT p50_ms, p90_ms, p99_ms, p99_9_ms, max_ms (at most, ms), error_rate (at most,
    /// 0 to 1) or ops_per_sec (at least, requests/s), on the totals or as
    /// commands.LABEL.LIMIT, e.g. `--check p99_ms=5 --check error_rate=0.001 --check
    /// commands.GET.p99_ms=2`. An interrupted run fails it too.
    #[arg(long = "check", value_name = "LIMIT=VALUE", value_parser = parse_limit)]
    pub(crate) checks: Vec<(String, f64)>,
}

impl ReportFlags {
    /// The `--check` limits as a budget, checked before any traffic: an unknown limit or a
    /// value out of range is an error naming it.
    pub(crate) fn budget(&self) -> crate::Result<Option<crate::report::Budget>> {
        budget(&self.checks)
    }
}

/// `--check` limits as a budget, checked before any traffic: an unknown limit or a value
/// out of range is an error naming it.
fn budget(checks: &[(String, f64)]) -> crate::Result<Option<crate::report::Budget>> {
    {
        if checks.is_empty() {
            return Ok(None);
        }
        let mut budget = json!({});
        for (name, value) in checks {
            if name == "commands" {
                return Err(crate::Error::spec(
                    "check.commands",
                    "a command's limit is `commands.LABEL.LIMIT=VALUE`, e.g. \
                     `commands.GET.p99_ms=2`",
                ));
            }
            // `commands.LABEL.LIMIT` (a label may hold dots), else a limit on the totals.
            let slot = match name
                .strip_prefix("commands.")
                .and_then(|r| r.rsplit_once('.'))
            {
                Some((label, limit)) => &mut budget["commands"][label][limit],
                None => &mut budget[name],
            };
            if !slot.is_null() {
                return Err(crate::Error::spec(
                    format!("check.{name}"),
                    format!(
                        "given twice ({} and {value}): give each limit once",
                        slot.as_f64().unwrap_or_default()
                    ),
                ));
            }
            *slot = json!(value);
        }
        crate::report::Budget::from_json_value(&budget).map(Some)
    }
}

fn parse_var(text: &str) -> Result<(String, Value), String> {
    let (name, value) = text
        .split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| format!("`{text}`: expected NAME=VALUE"))?;
    let value = if let Ok(i) = value.parse::<i64>() {
        Value::from(i)
    } else if let Some(f) = value.parse::<f64>().ok().filter(|f| f.is_finite()) {
        Value::from(f)
    } else if value == "true" || value == "false" {
        Value::Bool(value == "true")
    } else {
        Value::from(value)
    };
    Ok((name.to_string(), value))
}

/// Overrides of the spec. Target settings apply to every phase; load settings to the
/// measured phases only (a populate phase keeps its own).
#[derive(Args)]
pub(crate) struct Overrides {
    /// Server URL: redis://[user[:password]@]host[:port][/db], rediss://... (TLS) or
    /// unix:///path.sock; replaces the spec file's target address, whatever its form.
    #[arg(long)]
    url: Option<String>,
    /// Server host name or address; replaces the spec file's (its `url` too, whose user,
    /// password, db and TLS are kept unless given as flags).
    #[arg(long, short = 'H')]
    host: Option<String>,
    /// Server port; replaces the spec file's (its `url` too, as --host does).
    #[arg(long, short = 'p')]
    port: Option<u16>,
    /// Unix socket path, instead of a host and port; replaces the spec file's address (its
    /// `url` too, as --host does).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["host", "port", "url"])]
    unix: Option<String>,
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
    /// TLS: passphrase of an encrypted --key (PKCS#8); never shown in any output.
    #[arg(long, value_name = "PASS")]
    key_password: Option<String>,
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
    /// Worker threads. (No `-t`: redis-benchmark's `-t` names its tests.)
    #[arg(long)]
    threads: Option<u32>,
    /// Requests in flight per connection.
    #[arg(long, short = 'P')]
    pipeline: Option<u32>,
    /// Measured requests in total.
    #[arg(long, short = 'n')]
    requests: Option<u64>,
    /// Measured duration, e.g. 30s, 2m. (No `-d`: it is the value size in redis-benchmark
    /// and memtier_benchmark.)
    #[arg(long)]
    duration: Option<String>,
    /// Open loop: requests per second in total over all connections (as wrk2's -R), each
    /// with an intended send time that latency counts from; sets load.rate.
    #[arg(long, short = 'R', value_name = "PER_SEC", value_parser = parse_rate)]
    rate: Option<f64>,
    /// Warm-up before measuring, e.g. 5s.
    #[arg(long)]
    warmup: Option<String>,
    /// Seed of the request stream.
    #[arg(long)]
    seed: Option<u64>,
    /// Serve live counters and latency histograms for Prometheus on HOST:PORT (`GET
    /// /metrics`) while the run lasts; sets observe.prometheus.
    #[arg(long, value_name = "HOST:PORT")]
    prometheus: Option<String>,
    /// Serve a live dashboard on HOST:PORT (alone: 127.0.0.1:8089) while the run lasts
    /// (open http://HOST:PORT/ in a browser: the charts grow each second, then the final
    /// report); sets observe.dashboard.
    #[arg(
        long,
        value_name = "HOST:PORT",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:8089"
    )]
    pub(crate) dashboard: Option<String>,
}

impl Overrides {
    /// (target overrides, other overrides) as partial specs.
    pub(crate) fn to_json(&self) -> (Option<Value>, Option<Value>) {
        let mut target = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                target.insert(k.into(), v);
            }
        };
        put("url", self.url.clone().map(Value::from));
        put("host", self.host.clone().map(Value::from));
        put("port", self.port.map(Value::from));
        put("unix", self.unix.clone().map(Value::from));
        put("password", self.password.clone().map(Value::from));
        put("user", self.user.clone().map(Value::from));
        let mut tls = Map::new();
        for (k, v) in [
            ("ca_file", &self.cacert),
            ("ca_dir", &self.cacertdir),
            ("cert", &self.cert),
            ("key", &self.key),
            ("key_password", &self.key_password),
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
        put("rate", self.rate.map(Value::from));
        put("warmup", self.warmup.clone().map(Value::from));
        let mut rest = Map::new();
        if !load.is_empty() {
            rest.insert("load".into(), Value::Object(load));
        }
        if let Some(seed) = self.seed {
            rest.insert("seed".into(), json!(seed));
        }
        let mut observe = Map::new();
        if let Some(address) = &self.prometheus {
            observe.insert("prometheus".into(), json!(address));
        }
        if let Some(address) = &self.dashboard {
            observe.insert("dashboard".into(), json!(address));
        }
        if !observe.is_empty() {
            rest.insert("observe".into(), Value::Object(observe));
        }
        let t = (!target.is_empty()).then(|| json!({ "target": target }));
        let r = (!rest.is_empty()).then_some(Value::Object(rest));
        (t, r)
    }
}
