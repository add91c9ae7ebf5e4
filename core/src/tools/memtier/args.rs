//! memtier_benchmark command lines, read unchanged and turned into a respload [`Workload`]
//! plus the settings memtier_benchmark's report needs ([`Options`]).
//!
//! Options are read the way memtier_benchmark (2.x) reads them with `getopt_long`: long
//! options as `--name=value` or `--name value` (an unambiguous prefix of a long name is
//! accepted), short options as `-c 20`, `-c20` or clustered flags (`-DR`), and a later
//! option overrides an earlier one. Combinations respload cannot run yet are errors naming
//! the option, never silently ignored; `docs/compat.md` has the table of every
//! option.
//!
//! What maps how, in short: connections = `--threads` x `--clients`; `-n` counts requests
//! per client (`-n allkeys`: every key of the range, `requests = "all_keys"`);
//! `--ratio=SET:GET` is a weighted mix of the built-in `set` and `get`; `--key-pattern`
//! sets `keys.writes` / `keys.reads`; each `--command` is a template with its own weight
//! (`--command-ratio`) and distribution (`--command-key-pattern`); `--monitor-input`
//! placeholders replay captured commands ([`monitor`]); `--run-count=N` gives
//! N measured phases `run 1` ... `run N`.

use super::monitor;
use super::options::{Flag, OptionDef, OPTIONS};
use super::report::{Options, DEFAULT_MISS_RATE_THRESHOLD, DEFAULT_PERCENTILES};
use crate::plan::Workload;
use crate::spec::{escape_literal, MAX_VALUE_SIZE};
use crate::tools::command_line::split_tool_line;
use crate::{Error, Result};
use serde_json::{json, Map, Value as Json};

/// What a memtier_benchmark command line asks for.
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Run a benchmark.
    Run(Box<Memtier>),
    /// `--help`: show [`usage`](super::usage).
    Help,
    /// `-v` / `--version`: show [`version`].
    Version,
}

/// A memtier_benchmark command line as a respload workload and report settings.
#[derive(Debug, Clone)]
pub struct Memtier {
    /// The workload; `--run-count=N` makes N measured phases named `run 1` ... `run N`.
    pub workload: Workload,
    /// How memtier_benchmark would report the run.
    pub options: Options,
}

/// Parse memtier_benchmark arguments (without the program name).
pub fn parse(args: &[String]) -> Result<Invocation> {
    let mut cfg = Settings::default();
    if let Some(early) = read_args(args, &mut cfg)? {
        return Ok(early);
    }
    Ok(Invocation::Run(Box::new(cfg.build()?)))
}

/// Parse a whole memtier_benchmark command line, split as a shell would; a leading
/// `memtier_benchmark` (or a path to it) is skipped.
pub fn parse_line(line: &str) -> Result<Invocation> {
    parse(&split_tool_line(line, "memtier_benchmark")?)
}

/// The workload of a memtier_benchmark command line (see [`parse_line`]); `--help` and
/// `--version` are errors here, as there is nothing to run.
pub fn workload(line: &str) -> Result<Workload> {
    match parse_line(line)? {
        Invocation::Run(m) => Ok(m.workload),
        Invocation::Help => Err(Error::spec(
            "--help",
            "shows the usage: there is nothing to run",
        )),
        Invocation::Version => Err(Error::spec(
            "--version",
            "shows the version: there is nothing to run",
        )),
    }
}

/// What `--version` shows.
pub fn version() -> String {
    format!(
        "respload {} memtier front end (reads memtier_benchmark 2.x options)",
        env!("CARGO_PKG_VERSION")
    )
}

// ----------------------------------------------------------------------------------------
// Reading the arguments.

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Req {
    Count(u64),
    AllKeys,
}

/// A `--command` given on the command line, with its `--command-ratio` and
/// `--command-key-pattern`.
#[derive(Debug, Clone)]
pub(super) struct UserCommand {
    /// Its words, split as memtier splits them (none for a monitor placeholder).
    pub(super) args: Vec<Vec<u8>>,
    pub(super) ratio: u32,
    pub(super) pattern: char,
    /// A monitor placeholder (`__monitor_line2__`, `__monitor_line@__`) as written: read
    /// once the `--monitor-input` file is, which may come later on the line.
    pub(super) monitor: Option<String>,
}

/// Every option as read from the command line, before the workload is built from them.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) server: Option<String>,
    pub(super) port: Option<u16>,
    pub(super) unix_socket: Option<String>,
    pub(super) uri: Option<String>,
    pub(super) protocol: &'static str,
    pub(super) authenticate: Option<String>,
    pub(super) run_count: u32,
    pub(super) debug: u32,
    pub(super) out_file: Option<String>,
    pub(super) json_out_file: Option<String>,
    pub(super) hdr_prefix: Option<String>,
    pub(super) show_config: bool,
    pub(super) hide_histogram: bool,
    pub(super) percentiles: Vec<f64>,
    pub(super) print_all_runs: bool,
    pub(super) stats_by_line: bool,
    pub(super) miss_tracking: bool,
    pub(super) miss_rate_threshold: f64,
    pub(super) requests: Option<Req>,
    pub(super) clients: u32,
    pub(super) threads: u32,
    pub(super) test_time: Option<u32>,
    pub(super) ratio: Option<(u32, u32)>,
    pub(super) pipeline: u32,
    pub(super) reconnect_on_error: bool,
    pub(super) connection_timeout: u32,
    pub(super) select_db: u32,
    pub(super) distinct_client_seed: bool,
    /// `--cluster-mode`: `target.cluster`.
    pub(super) cluster_mode: bool,
    pub(super) randomize: bool,
    pub(super) commands: Vec<UserCommand>,
    pub(super) data_size: Option<u32>,
    pub(super) random_data: bool,
    pub(super) data_size_range: Option<(u32, u32)>,
    pub(super) data_size_list: Option<Vec<(u32, u32)>>,
    pub(super) data_size_pattern: char,
    pub(super) expiry_range: Option<(u32, u32)>,
    pub(super) key_prefix: String,
    pub(super) key_minimum: u64,
    pub(super) key_maximum: u64,
    pub(super) key_pattern: Option<(char, char)>,
    pub(super) key_stddev: Option<f64>,
    pub(super) key_median: Option<f64>,
    pub(super) key_zipf_exp: Option<f64>,
    /// `target.tls` fields from --tls, --cert, --key, --cacert, --tls-skip-verify, --sni,
    /// --tls-protocols and rediss:// URIs.
    pub(super) tls: Map<String, Json>,
    /// --rate-limiting: requests per second per connection.
    pub(super) rate_per_connection: Option<u32>,
    /// --clients-start, --clients-step (per thread) and --step-duration (seconds).
    pub(super) clients_start: Option<u32>,
    pub(super) clients_step: Option<u32>,
    pub(super) step_duration: Option<u32>,
    /// --monitor-input: a file of MONITOR output.
    pub(super) monitor_input: Option<String>,
    /// --monitor-pattern: `S` (sequential, memtier's default) or `R` (random).
    pub(super) monitor_pattern: char,
    /// -4 / -6: `target.family` (`ipv4`, `ipv6`); the last one given wins, as in memtier.
    pub(super) family: Option<&'static str>,
    /// --data-offset: SETRANGE/GETRANGE at this offset instead of SET/GET (0: off).
    pub(super) data_offset: u32,
    /// --multi-key-get: GETs grouped into MGETs of up to this many keys (0: off).
    pub(super) multi_key_get: u32,
    /// --no-expiry: imported items are set without their TTLs (needs --data-import).
    pub(super) no_expiry: bool,
    /// --data-import: a memtier data-import file whose items the SETs write.
    pub(super) data_import: Option<String>,
    /// --data-verify (and --verify-only, which implies it): read the items back after the
    /// run and compare.
    pub(super) data_verify: bool,
    /// --verify-only: no benchmark, only the verification.
    pub(super) verify_only: bool,
    /// --generate-keys: imported data under memtier's generated keys instead of the file's.
    pub(super) generate_keys: bool,
    /// The first of --key-prefix, --key-minimum, --key-maximum given (memtier allows them
    /// with --data-import only together with --generate-keys).
    pub(super) key_option: Option<&'static str>,
    /// --wait-ratio=SET:WAIT.
    pub(super) wait_ratio: Option<(u32, u32)>,
    /// --num-slaves=MIN-MAX: WAIT's first argument.
    pub(super) num_slaves: Option<(u32, u32)>,
    /// --wait-timeout=MIN-MAX: WAIT's timeout in milliseconds.
    pub(super) wait_timeout: Option<(u32, u32)>,
    /// --reconnect-interval: reopen each connection after this many requests.
    pub(super) reconnect_interval: Option<u32>,
    /// --max-reconnect-attempts (0: unlimited).
    pub(super) max_reconnect_attempts: Option<u32>,
    /// --reconnect-backoff-factor.
    pub(super) reconnect_backoff_factor: Option<f64>,
    /// --connection-stage-timeout in seconds (memtier's default 30; 0: none).
    pub(super) connection_stage_timeout: u32,
    /// --thread-conn-start-min-jitter-micros / -max-jitter-micros.
    pub(super) jitter_micros: (u32, u32),
    /// --scan-incremental-iteration: the SCAN `--command` follows its cursor.
    pub(super) scan_incremental: bool,
    /// --transaction: the --command lines as one rotation on one key and one connection.
    pub(super) transaction: bool,
    /// --scan-incremental-max-iterations (0: until the cursor is 0).
    pub(super) scan_max_iterations: u32,
    /// --retry-on-error and its options: --max-retries (-1: no limit),
    /// --retry-backoff-ms, --retry-backoff-factor (0: constant), --retry-on, --max-retry-queue.
    pub(super) retry_on_error: bool,
    pub(super) max_retries: i64,
    pub(super) retry_backoff_ms: u32,
    pub(super) retry_backoff_factor: f64,
    pub(super) retry_on: Option<String>,
    pub(super) max_retry_queue: u32,
    /// --failed-keys-file: the CSV of the requests that failed for good.
    pub(super) failed_keys_file: Option<String>,
    /// --client-stats: the prefix of the per-client statistics files.
    pub(super) client_stats: Option<String>,
    /// --statsd-host (metrics are sent only with it), --statsd-port, --statsd-prefix,
    /// --statsd-run-label (both as given, made valid when the workload is built) and
    /// --graphite-port.
    pub(super) statsd_host: Option<String>,
    pub(super) statsd_port: u16,
    pub(super) statsd_prefix: String,
    pub(super) statsd_run_label: String,
    pub(super) graphite_port: u16,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            server: None,
            port: None,
            unix_socket: None,
            uri: None,
            protocol: "redis",
            authenticate: None,
            run_count: 1,
            debug: 0,
            out_file: None,
            json_out_file: None,
            hdr_prefix: None,
            show_config: false,
            hide_histogram: false,
            percentiles: DEFAULT_PERCENTILES.to_vec(),
            print_all_runs: false,
            stats_by_line: false,
            miss_tracking: true,
            miss_rate_threshold: DEFAULT_MISS_RATE_THRESHOLD,
            requests: None,
            clients: 50,
            threads: 4,
            test_time: None,
            ratio: None,
            pipeline: 1,
            reconnect_on_error: false,
            connection_timeout: 0,
            select_db: 0,
            distinct_client_seed: false,
            cluster_mode: false,
            randomize: false,
            commands: Vec::new(),
            data_size: None,
            random_data: false,
            data_size_range: None,
            data_size_list: None,
            data_size_pattern: 'R',
            expiry_range: None,
            key_prefix: "memtier-".into(),
            key_minimum: 0,
            key_maximum: 10_000_000,
            key_pattern: None,
            key_stddev: None,
            key_median: None,
            key_zipf_exp: None,
            tls: Map::new(),
            rate_per_connection: None,
            clients_start: None,
            clients_step: None,
            step_duration: None,
            monitor_input: None,
            monitor_pattern: 'S',
            family: None,
            data_offset: 0,
            multi_key_get: 0,
            no_expiry: false,
            data_import: None,
            data_verify: false,
            verify_only: false,
            generate_keys: false,
            key_option: None,
            wait_ratio: None,
            num_slaves: None,
            wait_timeout: None,
            reconnect_interval: None,
            max_reconnect_attempts: None,
            reconnect_backoff_factor: None,
            connection_stage_timeout: 30,
            jitter_micros: (0, 0),
            scan_incremental: false,
            transaction: false,
            scan_max_iterations: 0,
            retry_on_error: false,
            max_retries: -1,
            retry_backoff_ms: 0,
            retry_backoff_factor: 0.0,
            retry_on: None,
            max_retry_queue: 0,
            failed_keys_file: None,
            client_stats: None,
            statsd_host: None,
            statsd_port: 8125,
            statsd_prefix: "memtier".into(),
            statsd_run_label: "default".into(),
            graphite_port: 8080,
        }
    }
}

pub(super) fn bad(option: &str, raw: &str, allowed: &str) -> Error {
    Error::spec(option, format!("`{raw}` is not a valid value: {allowed}"))
}

/// The option a word names: (its entry, the spelling to show, an attached `=value`).
fn find_long(body: &str) -> Result<(&'static OptionDef, Option<&str>)> {
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    if let Some(e) = OPTIONS.iter().find(|e| e.0 == name) {
        return Ok((e, value));
    }
    // getopt_long accepts an unambiguous prefix of a long option.
    let matches: Vec<_> = OPTIONS
        .iter()
        .filter(|e| !name.is_empty() && e.0.starts_with(name))
        .collect();
    match matches.as_slice() {
        [one] => Ok((one, value)),
        [] => Err(Error::spec(
            format!("--{name}"),
            "not a memtier_benchmark option (`respload memtier --help` lists them)",
        )),
        many => Err(Error::spec(
            format!("--{name}"),
            format!(
                "is ambiguous: it could be {}",
                many.iter()
                    .map(|e| format!("--{}", e.0))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Read every argument into `cfg`; `Some` when the line asks for help or the version.
fn read_args(args: &[String], cfg: &mut Settings) -> Result<Option<Invocation>> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            if let Some(extra) = args.get(i) {
                return Err(unexpected(extra));
            }
            break;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (entry, attached) = find_long(body)?;
            let shown = format!("--{}", entry.0);
            let value = match (entry.2, attached) {
                (true, Some(v)) => Some(v.to_string()),
                (true, None) => {
                    let v = args.get(i).ok_or_else(|| missing(&shown))?;
                    i += 1;
                    Some(v.clone())
                }
                (false, Some(_)) => {
                    return Err(Error::spec(&shown, "takes no value"));
                }
                (false, None) => None,
            };
            if let Some(early) = apply(cfg, entry.3, &shown, value.as_deref())? {
                return Ok(Some(early));
            }
        } else if arg.len() > 1 && arg.starts_with('-') {
            let letters: Vec<char> = arg[1..].chars().collect();
            let mut k = 0;
            while k < letters.len() {
                let c = letters[k];
                k += 1;
                let shown = format!("-{c}");
                let entry = OPTIONS.iter().find(|e| e.1 == Some(c)).ok_or_else(|| {
                    Error::spec(
                        &shown,
                        "not a memtier_benchmark option (`respload memtier --help` lists them)",
                    )
                })?;
                let value = if entry.2 {
                    let rest: String = letters[k..].iter().collect();
                    k = letters.len();
                    if rest.is_empty() {
                        let v = args.get(i).ok_or_else(|| missing(&shown))?;
                        i += 1;
                        Some(v.clone())
                    } else {
                        Some(rest)
                    }
                } else {
                    None
                };
                if let Some(early) = apply(cfg, entry.3, &shown, value.as_deref())? {
                    return Ok(Some(early));
                }
            }
        } else {
            return Err(unexpected(arg));
        }
    }
    Ok(None)
}

fn unexpected(arg: &str) -> Error {
    Error::spec(
        arg,
        "unexpected argument: memtier_benchmark takes options only (quote a --command with \
         spaces: --command=\"SET __key__ __data__\")",
    )
}

fn missing(option: &str) -> Error {
    Error::spec(option, "needs a value")
}

/// A whole number made of digits only, within `lo..=hi`.
pub(super) fn number<T>(option: &str, raw: &str, lo: u64, hi: u64, what: &str) -> Result<T>
where
    T: TryFrom<u64>,
{
    raw.parse::<u64>()
        .ok()
        .filter(|n| raw.bytes().all(|b| b.is_ascii_digit()) && (lo..=hi).contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| bad(option, raw, what))
}

fn float(option: &str, raw: &str, what: &str, ok: impl Fn(f64) -> bool) -> Result<f64> {
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && ok(*x))
        .ok_or_else(|| bad(option, raw, what))
}

/// `A:B` with whole numbers (memtier's ratio).
fn pair(raw: &str, sep: char) -> Option<(u64, u64)> {
    let (a, b) = raw.split_once(sep)?;
    let num = |s: &str| {
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    Some((num(a)?, num(b)?))
}

pub(super) const MAX_WEIGHT: u64 = 1_000_000;

/// The most keys one `--multi-key-get` MGET may name: a template's arguments, less MGET's
/// name (`MAX_TEMPLATE_ARGS`).
const MAX_MULTI_KEYS: u64 = crate::spec::MAX_TEMPLATE_ARGS as u64 - 1;

/// Read option `o` (shown as `opt`) with its value into `cfg`: `--help` and `--version`
/// end the reading, every other option is read by the step of its kind.
pub(super) fn apply(
    cfg: &mut Settings,
    o: Flag,
    opt: &str,
    value: Option<&str>,
) -> Result<Option<Invocation>> {
    let v = value.unwrap_or_default();
    match o {
        Flag::Help => return Ok(Some(Invocation::Help)),
        Flag::Version => return Ok(Some(Invocation::Version)),
        _ => {}
    }
    let steps = [
        apply_connection,
        apply_output,
        apply_test,
        apply_resilience,
        apply_commands,
        apply_data,
        apply_keys,
    ];
    for step in steps {
        if step(cfg, o, opt, v)? {
            return Ok(None);
        }
    }
    Err(Error::Internal(format!(
        "{opt} is in memtier's option table but read by no step"
    )))
}

/// Where and how to connect: `true` when `o` is one of them, read into `cfg`.
fn apply_connection(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::Server => cfg.server = Some(v.to_string()),
        Flag::Tls => {
            cfg.tls.insert("enabled".into(), json!(true));
        }
        Flag::TlsSkipVerify => {
            cfg.tls.insert("insecure".into(), json!(true));
        }
        Flag::Cert | Flag::Key | Flag::Cacert | Flag::Sni => {
            let field = match o {
                Flag::Cert => "cert",
                Flag::Key => "key",
                Flag::Cacert => "ca_file",
                _ => "sni",
            };
            cfg.tls.insert(field.into(), json!(v));
        }
        Flag::TlsProtocols => {
            // memtier: a comma-separated list such as "TLSv1.2,TLSv1.3".
            let mut versions = Vec::new();
            for p in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                versions.push(match p {
                    "TLSv1.2" => "1.2",
                    "TLSv1.3" => "1.3",
                    _ => {
                        return Err(bad(
                            opt,
                            p,
                            "TLSv1.2 and TLSv1.3 (respload does not speak TLS 1.0 or 1.1)",
                        ))
                    }
                });
            }
            cfg.tls.insert("versions".into(), json!(versions));
        }
        Flag::Port => {
            cfg.port = Some(number(opt, v, 1, 65535, "a port number from 1 to 65535")?);
        }
        Flag::UnixSocket => cfg.unix_socket = Some(v.to_string()),
        Flag::Protocol => {
            cfg.protocol = match v {
                "redis" => "redis",
                "resp2" => "resp2",
                "resp3" => "resp3",
                // By decision, not for lack of time: respload is a RESP load generator.
                "memcache_text" | "memcache_binary" => {
                    return Err(Error::spec(
                        opt,
                        format!(
                            "`{v}` is not supported: respload speaks RESP only; allowed are \
                             redis, resp2 and resp3"
                        ),
                    ))
                }
                _ => {
                    return Err(bad(
                        opt,
                        v,
                        "allowed are redis, resp2 and resp3 (respload speaks RESP only: \
                         memcache_text and memcache_binary are not supported)",
                    ))
                }
            }
        }
        Flag::Authenticate => cfg.authenticate = Some(v.to_string()),
        Flag::Uri => cfg.uri = Some(v.to_string()),
        Flag::ClusterMode => cfg.cluster_mode = true,
        Flag::ConnectionTimeout => {
            cfg.connection_timeout =
                number(opt, v, 0, u32::MAX as u64, "a number of seconds (0: none)")?
        }
        Flag::SelectDb => {
            cfg.select_db = number(opt, v, 0, u32::MAX as u64, "a database number, 0 or more")?
        }
        Flag::Ipv4 => cfg.family = Some("ipv4"),
        Flag::Ipv6 => cfg.family = Some("ipv6"),
        _ => return Ok(false),
    }
    Ok(true)
}

/// The report, its files and the metrics sent: `true` when `o` is one of them, read into `cfg`.
fn apply_output(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::Debug => cfg.debug += 1,
        Flag::OutFile => cfg.out_file = Some(v.to_string()),
        Flag::JsonOutFile => cfg.json_out_file = Some(v.to_string()),
        Flag::HdrFilePrefix => cfg.hdr_prefix = Some(v.to_string()),
        Flag::ShowConfig => cfg.show_config = true,
        Flag::HideHistogram => cfg.hide_histogram = true,
        Flag::PrintPercentiles => {
            let list: Option<Vec<f64>> = v
                .split(',')
                .map(|p| {
                    p.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|x| (0.0..=100.0).contains(x))
                })
                .collect();
            cfg.percentiles = list.filter(|l| !l.is_empty()).ok_or_else(|| {
                bad(
                    opt,
                    v,
                    "percentiles from 0 to 100 separated by commas, e.g. 50,99,99.9",
                )
            })?;
        }
        Flag::PrintAllRuns => cfg.print_all_runs = true,
        Flag::RealtimeLatencies => {}
        Flag::CommandStatsBreakdown => {
            cfg.stats_by_line = match v.to_ascii_lowercase().as_str() {
                "command" => false,
                "line" => true,
                _ => return Err(bad(opt, v, "allowed are command and line")),
            }
        }
        Flag::CommandMissTracking => {
            cfg.miss_tracking = match v.to_ascii_lowercase().as_str() {
                "auto" => true,
                "off" => false,
                _ => return Err(bad(opt, v, "allowed are auto and off")),
            }
        }
        Flag::MissRateThreshold => {
            cfg.miss_rate_threshold = float(opt, v, "a percentage from 0 to 100", |x| {
                (0.0..=100.0).contains(&x)
            })? / 100.0;
        }
        Flag::FailedKeysFile => cfg.failed_keys_file = Some(v.to_string()),
        Flag::StatsdHost => {
            if v.trim().is_empty() {
                return Err(bad(opt, v, "the StatsD server's host name or address"));
            }
            cfg.statsd_host = Some(v.to_string());
        }
        Flag::StatsdPort => {
            cfg.statsd_port = number(opt, v, 1, 65535, "a UDP port number from 1 to 65535")?
        }
        Flag::StatsdPrefix => cfg.statsd_prefix = v.to_string(),
        Flag::StatsdRunLabel => cfg.statsd_run_label = v.to_string(),
        Flag::GraphitePort => {
            cfg.graphite_port = number(opt, v, 1, 65535, "a TCP port number from 1 to 65535")?
        }
        Flag::ClientStats => {
            if v.is_empty() {
                return Err(bad(
                    opt,
                    v,
                    "a file prefix (files PREFIX-RUN-THREAD-CLIENT.csv)",
                ));
            }
            cfg.client_stats = Some(v.to_string())
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The test: clients, threads, how long, the mix and its pace: `true` when `o` is one of them, read into `cfg`.
fn apply_test(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::RateLimiting => {
            cfg.rate_per_connection = Some(number(
                opt,
                v,
                1,
                u32::MAX as u64,
                "requests per second per connection, 1 or more",
            )?);
        }
        Flag::RunCount => {
            cfg.run_count = number(opt, v, 1, 1024, "a number of runs from 1 to 1024")?;
        }
        Flag::Requests => {
            if v == "allkeys" {
                cfg.requests = Some(Req::AllKeys);
            } else {
                let n = number(
                    opt,
                    v,
                    1,
                    u64::MAX,
                    "a number of requests per client greater than zero, or allkeys",
                )?;
                if cfg.test_time.is_some() {
                    return Err(Error::spec(
                        opt,
                        "--test-time and --requests are mutually exclusive (as in memtier_benchmark)",
                    ));
                }
                cfg.requests = Some(Req::Count(n));
            }
        }
        Flag::Clients => {
            cfg.clients = number(
                opt,
                v,
                1,
                1_000_000,
                "a number of clients per thread greater than zero",
            )?
        }
        Flag::Threads => {
            cfg.threads = number(opt, v, 1, 1024, "a number of threads from 1 to 1024")?;
        }
        Flag::ClientsStart => {
            cfg.clients_start = Some(number(
                opt,
                v,
                1,
                1_000_000,
                "a number of clients per thread greater than zero",
            )?)
        }
        Flag::ClientsStep => {
            cfg.clients_step = Some(number(
                opt,
                v,
                1,
                1_000_000,
                "a number of clients per thread greater than zero",
            )?)
        }
        Flag::StepDuration => {
            cfg.step_duration = Some(number(
                opt,
                v,
                1,
                1_000_000_000,
                "a number of seconds greater than zero",
            )?)
        }
        Flag::TestTime => {
            let t = number(
                opt,
                v,
                1,
                u32::MAX as u64,
                "a number of seconds greater than zero",
            )?;
            if cfg.requests.is_some() {
                return Err(Error::spec(
                    opt,
                    "--test-time and --requests are mutually exclusive (as in memtier_benchmark)",
                ));
            }
            cfg.test_time = Some(t);
        }
        Flag::Ratio => {
            let r = pair(v, ':')
                .filter(|&(a, b)| (a > 0 || b > 0) && a <= MAX_WEIGHT && b <= MAX_WEIGHT)
                .ok_or_else(|| {
                    bad(
                        opt,
                        v,
                        "SET:GET weights, e.g. 1:10, each from 0 to 1000000 and not both 0",
                    )
                })?;
            cfg.ratio = Some((r.0 as u32, r.1 as u32));
        }
        Flag::Pipeline => cfg.pipeline = number(opt, v, 1, 1024, "a depth from 1 to 1024")?,
        Flag::DistinctClientSeed => cfg.distinct_client_seed = true,
        Flag::Randomize => cfg.randomize = true,
        Flag::MultiKeyGet => {
            cfg.multi_key_get = number(
                opt,
                v,
                1,
                MAX_MULTI_KEYS,
                "a number of keys per MGET from 1 to 4095",
            )?
        }
        Flag::WaitRatio => {
            let r = pair(v, ':')
                .filter(|&(a, b)| (a > 0 || b > 0) && a <= MAX_WEIGHT && b <= MAX_WEIGHT)
                .ok_or_else(|| {
                    bad(
                        opt,
                        v,
                        "SET:WAIT, e.g. 10:1, each from 0 to 1000000 and not both 0",
                    )
                })?;
            cfg.wait_ratio = Some((r.0 as u32, r.1 as u32));
        }
        Flag::NumSlaves | Flag::WaitTimeout => {
            // memtier's ranges: MIN-MAX, swapped when reversed, MAX above 0.
            let what = if o == Flag::NumSlaves {
                "MIN-MAX replicas, e.g. 1-1, MAX from 1 to 4294967295"
            } else {
                "MIN-MAX milliseconds, e.g. 100-500, MAX from 1 to 4294967295"
            };
            let r = pair(v, '-')
                .map(|(a, b)| (a.min(b), a.max(b)))
                .filter(|&(_, b)| b > 0 && b <= u32::MAX as u64)
                .ok_or_else(|| bad(opt, v, what))?;
            let r = Some((r.0 as u32, r.1 as u32));
            if o == Flag::NumSlaves {
                cfg.num_slaves = r;
            } else {
                cfg.wait_timeout = r;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Retries, reconnections and the connections' start: `true` when `o` is one of them, read into `cfg`.
fn apply_resilience(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::ReconnectOnError => cfg.reconnect_on_error = true,
        Flag::RetryOnError => cfg.retry_on_error = true,
        Flag::MaxRetries => {
            cfg.max_retries = match v {
                "-1" => -1,
                _ => number::<u32>(
                    opt,
                    v,
                    0,
                    u32::MAX as u64,
                    "a number of retries, 0 or more, or -1 (no limit)",
                )? as i64,
            }
        }
        Flag::RetryBackoffMs => {
            cfg.retry_backoff_ms = number(
                opt,
                v,
                0,
                60_000,
                "a number of milliseconds from 0 to 60000",
            )?
        }
        Flag::RetryBackoffFactor => {
            // 0 is memtier's constant backoff; respload's factor is 1 to 1000.
            cfg.retry_backoff_factor = float(opt, v, "0 (constant) or from 1 to 1000", |x| {
                x == 0.0 || (1.0..=1000.0).contains(&x)
            })?
        }
        Flag::RetryOn => {
            let ok = |k: &str| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric());
            if !v.split(',').all(ok) {
                return Err(bad(
                    opt,
                    v,
                    "error kinds separated by commas, e.g. LOADING,BUSY,TRYAGAIN",
                ));
            }
            cfg.retry_on = Some(v.to_string());
        }
        Flag::MaxRetryQueue => {
            cfg.max_retry_queue = number(
                opt,
                v,
                0,
                u32::MAX as u64,
                "a number of requests (0: pipeline x 4, at least 64)",
            )?
        }
        Flag::ReconnectInterval => {
            cfg.reconnect_interval = Some(number(
                opt,
                v,
                1,
                u32::MAX as u64,
                "a number of requests greater than zero",
            )?)
        }
        Flag::MaxReconnectAttempts => {
            cfg.max_reconnect_attempts = Some(number(
                opt,
                v,
                0,
                u32::MAX as u64,
                "a number of attempts (0: unlimited)",
            )?)
        }
        Flag::ReconnectBackoffFactor => {
            // memtier takes any factor above 0; respload's backoff is 0.01 to 1000.
            cfg.reconnect_backoff_factor = Some(float(opt, v, "a factor from 0.01 to 1000", |x| {
                (0.01..=1000.0).contains(&x)
            })?)
        }
        Flag::ConnectionStageTimeout => {
            cfg.connection_stage_timeout = number(
                opt,
                v,
                0,
                u32::MAX as u64,
                "a number of seconds (0: no supervisor)",
            )?
        }
        Flag::ThreadConnStartMinJitter | Flag::ThreadConnStartMaxJitter => {
            let n: u32 = number(
                opt,
                v,
                0,
                60_000_000,
                "a number of microseconds from 0 to 60000000 (60 s)",
            )?;
            if o == Flag::ThreadConnStartMinJitter {
                cfg.jitter_micros.0 = n;
            } else {
                cfg.jitter_micros.1 = n;
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--command` and its options, transactions, SCAN walks, MONITOR input: `true` when `o` is one of them, read into `cfg`.
fn apply_commands(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::ScanIncrementalIteration => cfg.scan_incremental = true,
        Flag::Transaction => cfg.transaction = true,
        Flag::ScanIncrementalMaxIterations => {
            cfg.scan_max_iterations = number(
                opt,
                v,
                0,
                u32::MAX as u64,
                "a number of continuation SCANs per walk (0: until the cursor is 0)",
            )?
        }
        Flag::Command => cfg.commands.push(command(opt, v)?),
        Flag::MonitorInput => cfg.monitor_input = Some(v.to_string()),
        Flag::MonitorPattern => {
            // memtier takes one letter, in either case.
            cfg.monitor_pattern = match v {
                "S" | "s" => 'S',
                "R" | "r" => 'R',
                _ => {
                    return Err(bad(
                        opt,
                        v,
                        "S (sequential, the default) or R (random), one letter",
                    ))
                }
            }
        }
        Flag::CommandRatio => {
            let n: u32 = number(
                opt,
                v,
                1,
                MAX_WEIGHT,
                "a whole number from 1 to 1000000 (respload's largest weight)",
            )?;
            last_command(cfg, opt)?.ratio = n;
        }
        Flag::CommandKeyPattern => {
            let p = match v {
                "R" | "S" | "G" | "Z" | "P" => v.chars().next().unwrap_or('R'),
                _ => return Err(bad(opt, v, "one of R, S, G, Z, P")),
            };
            last_command(cfg, opt)?.pattern = p;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The values, their TTLs and imported data: `true` when `o` is one of them, read into `cfg`.
fn apply_data(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::DataSize => {
            cfg.data_size = Some(number(
                opt,
                v,
                1,
                MAX_VALUE_SIZE as u64,
                "a size in bytes from 1 to 536870912 (512 MiB)",
            )?)
        }
        Flag::DataOffset => {
            // memtier refuses an offset from 2^29 (Redis' largest string is 512 MiB).
            cfg.data_offset = number(
                opt,
                v,
                0,
                (1 << 29) - 1,
                "a number of bytes from 0 to 536870911 (SETRANGE/GETRANGE at this offset)",
            )?
        }
        Flag::NoExpiry => cfg.no_expiry = true,
        Flag::DataImport => cfg.data_import = Some(v.to_string()),
        Flag::DataVerify => cfg.data_verify = true,
        Flag::VerifyOnly => {
            // As in memtier, --verify-only implies --data-verify.
            cfg.verify_only = true;
            cfg.data_verify = true;
        }
        Flag::GenerateKeys => cfg.generate_keys = true,
        Flag::RandomData => cfg.random_data = true,
        Flag::DataSizeRange => {
            let (a, b) = pair(v, '-')
                .map(|(a, b)| (a.min(b), a.max(b)))
                .filter(|&(a, b)| a >= 1 && b <= MAX_VALUE_SIZE as u64)
                .ok_or_else(|| {
                    bad(
                        opt,
                        v,
                        "MIN-MAX sizes in bytes, from 1 to 536870912, e.g. 32-1024",
                    )
                })?;
            cfg.data_size_range = Some((a as u32, b as u32));
        }
        Flag::DataSizeList => {
            let what = "SIZE:WEIGHT pairs separated by commas, e.g. 32:10,1024:1 \
                        (sizes 1 to 536870912 bytes, weights 1 to 1000000)";
            let list: Option<Vec<(u32, u32)>> = v
                .split(',')
                .map(|item| {
                    pair(item, ':')
                        .filter(|&(s, w)| {
                            (1..=MAX_VALUE_SIZE as u64).contains(&s)
                                && (1..=MAX_WEIGHT).contains(&w)
                        })
                        .map(|(s, w)| (s as u32, w as u32))
                })
                .collect();
            cfg.data_size_list = Some(list.ok_or_else(|| bad(opt, v, what))?);
        }
        Flag::DataSizePattern => {
            cfg.data_size_pattern = match v {
                "R" => 'R',
                "S" => 'S',
                _ => return Err(bad(opt, v, "R or S")),
            }
        }
        Flag::ExpiryRange => {
            let (a, b) = pair(v, '-')
                .map(|(a, b)| (a.min(b), a.max(b)))
                .filter(|&(_, b)| b <= u32::MAX as u64)
                .ok_or_else(|| bad(opt, v, "MIN-MAX seconds, e.g. 60-600"))?;
            // memtier: 0-0 (its default) means no expiry; a drawn 0 sends a SET without one.
            cfg.expiry_range = (b > 0).then_some((a as u32, b as u32));
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// The keys: prefix, range and patterns: `true` when `o` is one of them, read into `cfg`.
fn apply_keys(cfg: &mut Settings, o: Flag, opt: &str, v: &str) -> Result<bool> {
    match o {
        Flag::KeyPrefix => {
            cfg.key_option.get_or_insert("--key-prefix");
            cfg.key_prefix = v.to_string()
        }
        Flag::KeyMinimum => {
            cfg.key_option.get_or_insert("--key-minimum");
            cfg.key_minimum = number(opt, v, 1, u64::MAX - 1, "a key number greater than zero")?
        }
        Flag::KeyMaximum => {
            cfg.key_option.get_or_insert("--key-maximum");
            cfg.key_maximum = number(opt, v, 1, u64::MAX - 1, "a key number greater than zero")?
        }
        Flag::KeyPattern => {
            let letters: Vec<char> = v.chars().collect();
            let ok = |c: char| matches!(c, 'S' | 'R' | 'G' | 'P' | 'Z');
            let p = match letters.as_slice() {
                [a, ':', b] if ok(*a) && ok(*b) => (*a, *b),
                _ => {
                    return Err(bad(
                        opt,
                        v,
                        "SET:GET patterns, each one of S, R, G, P, Z, e.g. R:R",
                    ))
                }
            };
            if (p.0 == 'P' || p.1 == 'P') && p.0 != p.1 {
                return Err(bad(
                    opt,
                    v,
                    "the parallel pattern must be given for both SET and GET (P:P)",
                ));
            }
            cfg.key_pattern = Some(p);
        }
        Flag::KeyStddev => {
            cfg.key_stddev = Some(float(opt, v, "a number greater than zero", |x| x > 0.0)?)
        }
        Flag::KeyMedian => {
            cfg.key_median = Some(float(opt, v, "a key number greater than zero", |x| {
                x > 0.0
            })?)
        }
        Flag::KeyZipfExp => {
            cfg.key_zipf_exp = Some(float(opt, v, "an exponent within (0, 5)", |x| {
                x > 0.0 && x < 5.0
            })?)
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn last_command<'a>(cfg: &'a mut Settings, opt: &str) -> Result<&'a mut UserCommand> {
    cfg.commands
        .last_mut()
        .ok_or_else(|| Error::spec(opt, "applies to the --command before it, and there is none"))
}

pub(super) const KEY_PLACEHOLDER: &[u8] = b"__key__";
const DATA_PLACEHOLDER: &[u8] = b"__data__";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// One `--command`, split and checked as memtier does.
fn command(opt: &str, text: &str) -> Result<UserCommand> {
    if monitor::is_placeholder(text) {
        return Ok(UserCommand {
            args: Vec::new(),
            ratio: 1,
            pattern: 'R',
            monitor: Some(text.to_string()),
        });
    }
    let args = split_command(text.as_bytes()).map_err(|m| bad(opt, text, &m))?;
    let Some(first) = args.first() else {
        return Err(bad(
            opt,
            text,
            "a non-empty command, e.g. \"SET __key__ __data__\"",
        ));
    };
    if contains(first, KEY_PLACEHOLDER) || contains(first, DATA_PLACEHOLDER) {
        return Err(bad(
            opt,
            text,
            "the first word must be a command name, not a placeholder",
        ));
    }
    for a in &args {
        for (p, name) in [(KEY_PLACEHOLDER, "key"), (DATA_PLACEHOLDER, "data")] {
            if contains(a, p) && a.as_slice() != p {
                return Err(bad(
                    opt,
                    text,
                    &format!(
                        "the {name} placeholder can't be combined with other data in one argument \
                         (as in memtier_benchmark)"
                    ),
                ));
            }
        }
    }
    Ok(UserCommand {
        args,
        ratio: 1,
        pattern: 'R',
        monitor: None,
    })
}

/// Split a `--command` as memtier_benchmark does (Redis' `sdssplitargs`): blanks separate,
/// `"double quotes"` take `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>` escapes,
/// `'single quotes'` take `\'`, a quote may open inside a word, and a closing quote must be
/// followed by a blank or the end.
pub(super) fn split_command(text: &[u8]) -> std::result::Result<Vec<Vec<u8>>, String> {
    let b = text;
    let mut out = Vec::new();
    let mut i = 0;
    let blank = |c: u8| matches!(c, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    loop {
        while i < b.len() && blank(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            return Ok(out);
        }
        let mut word = Vec::new();
        let (mut dq, mut sq) = (false, false);
        loop {
            let c = b.get(i).copied();
            if dq {
                match c {
                    None => return Err("an unclosed \" quote".into()),
                    Some(b'\\')
                        if b.get(i + 1) == Some(&b'x')
                            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
                            && b.get(i + 3).is_some_and(u8::is_ascii_hexdigit) =>
                    {
                        let hex = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                        word.push(hex(b[i + 2]) * 16 + hex(b[i + 3]));
                        i += 3;
                    }
                    Some(b'\\') if i + 1 < b.len() => {
                        i += 1;
                        word.push(match b[i] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            other => other,
                        });
                    }
                    Some(b'"') => {
                        if b.get(i + 1).is_some_and(|&n| !blank(n)) {
                            return Err("a closing quote must be followed by a space".into());
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else if sq {
                match c {
                    None => return Err("an unclosed ' quote".into()),
                    Some(b'\\') if b.get(i + 1) == Some(&b'\'') => {
                        i += 1;
                        word.push(b'\'');
                    }
                    Some(b'\'') => {
                        if b.get(i + 1).is_some_and(|&n| !blank(n)) {
                            return Err("a closing quote must be followed by a space".into());
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else {
                match c {
                    None => break,
                    Some(c) if blank(c) => break,
                    Some(b'"') => dq = true,
                    Some(b'\'') => sq = true,
                    Some(other) => word.push(other),
                }
            }
            i += 1;
        }
        out.push(word);
    }
}

/// A literal argument quoted for a template line (double quotes, `\xHH` for other bytes).
pub(super) fn quote_arg(arg: &[u8]) -> String {
    let mut s = String::from("\"");
    for &c in arg {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}

/// A `--command` (or a command of a `--monitor-input` file) as a respload template: a list
/// of arguments when all are text, else a line with quoted arguments. Braces in literal
/// arguments are escaped (`{lbrace}`), so that text such as `{key}` or a hash tag is sent as
/// it is.
pub(super) fn template(args: &[Vec<u8>]) -> Json {
    let words: Option<Vec<String>> = args
        .iter()
        .map(|a| match a.as_slice() {
            KEY_PLACEHOLDER => Some("{key}".to_string()),
            DATA_PLACEHOLDER => Some("{value}".to_string()),
            other => String::from_utf8(other.to_vec())
                .ok()
                .map(|t| escape_literal(&t)),
        })
        .collect();
    match words {
        Some(list) => json!(list),
        // Bytes that are not UTF-8: a line with every literal argument quoted.
        None => json!(args
            .iter()
            .map(|a| match a.as_slice() {
                KEY_PLACEHOLDER => "{key}".to_string(),
                DATA_PLACEHOLDER => "{value}".to_string(),
                other => escape_literal(&quote_arg(other)),
            })
            .collect::<Vec<_>>()
            .join(" ")),
    }
}
