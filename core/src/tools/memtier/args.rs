//! memtier_benchmark command lines, read unchanged and turned into a respload [`Workload`]
//! plus the settings memtier_benchmark's report needs ([`Options`]).
//!
//! Options are read the way memtier_benchmark (2.x) reads them with `getopt_long`: long
//! options as `--name=value` or `--name value` (an unambiguous prefix of a long name is
//! accepted), short options as `-c 20`, `-c20` or clustered flags (`-DR`), and a later
//! option overrides an earlier one. Options respload cannot honour yet are errors naming
//! the option, never silently ignored; `docs/compat.md` has the table of every
//! option.
//!
//! What maps how, in short: connections = `--threads` x `--clients`; `-n` counts requests
//! per client (`-n allkeys`: every key of the range, `requests = "all_keys"`);
//! `--ratio=SET:GET` is a weighted mix of the built-in `set` and `get`; `--key-pattern`
//! sets `keys.writes` / `keys.reads`; each `--command` is a template with its own weight
//! (`--command-ratio`) and distribution (`--command-key-pattern`); `--run-count=N` gives
//! N measured phases `run 1` ... `run N`.

use super::report::{CommandRow, Options, DEFAULT_MISS_RATE_THRESHOLD, DEFAULT_PERCENTILES};
use crate::spec::{escape_literal, Workload, MAX_VALUE_SIZE};
use crate::tools::command_line::split_tool_line;
use crate::{Error, Result};
use serde_json::{json, Map, Value as Json};

/// What a memtier_benchmark command line asks for.
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Run a benchmark.
    Run(Box<Memtier>),
    /// `--help`: show [`usage`].
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
// The option table.

/// Which option a command-line flag sets (the table below maps names to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flag {
    Server,
    Port,
    UnixSocket,
    Ipv4,
    Ipv6,
    Protocol,
    Authenticate,
    Uri,
    Tls,
    Cert,
    Key,
    Cacert,
    TlsSkipVerify,
    TlsProtocols,
    Sni,
    RunCount,
    Debug,
    ClusterMode,
    Transaction,
    Help,
    Version,
    OutFile,
    JsonOutFile,
    ClientStats,
    HdrFilePrefix,
    ShowConfig,
    HideHistogram,
    PrintPercentiles,
    PrintAllRuns,
    RealtimeLatencies,
    CommandStatsBreakdown,
    CommandMissTracking,
    MissRateThreshold,
    StatsdHost,
    StatsdPort,
    StatsdPrefix,
    StatsdRunLabel,
    GraphitePort,
    Requests,
    RateLimiting,
    Clients,
    Threads,
    TestTime,
    ClientsStart,
    ClientsStep,
    StepDuration,
    Ratio,
    Pipeline,
    ReconnectInterval,
    ReconnectOnError,
    MaxReconnectAttempts,
    ReconnectBackoffFactor,
    RetryOnError,
    MaxRetries,
    RetryBackoffMs,
    RetryBackoffFactor,
    RetryOn,
    MaxRetryQueue,
    FailedKeysFile,
    ConnectionTimeout,
    ConnectionStageTimeout,
    ThreadConnStartMinJitter,
    ThreadConnStartMaxJitter,
    MultiKeyGet,
    SelectDb,
    DistinctClientSeed,
    Randomize,
    Command,
    CommandRatio,
    CommandKeyPattern,
    MonitorInput,
    MonitorPattern,
    ScanIncrementalIteration,
    ScanIncrementalMaxIterations,
    DataSize,
    DataOffset,
    RandomData,
    DataSizeRange,
    DataSizeList,
    DataSizePattern,
    ExpiryRange,
    DataImport,
    DataVerify,
    VerifyOnly,
    GenerateKeys,
    NoExpiry,
    KeyPrefix,
    KeyMinimum,
    KeyMaximum,
    KeyPattern,
    KeyStddev,
    KeyMedian,
    KeyZipfExp,
    WaitRatio,
    NumSlaves,
    WaitTimeout,
}

/// One option: long name, short letter, whether it takes a value, what it is.
type OptionDef = (&'static str, Option<char>, bool, Flag);

/// Every memtier_benchmark (2.x) option.
const OPTIONS: &[OptionDef] = &[
    ("server", Some('s'), true, Flag::Server),
    ("host", Some('h'), true, Flag::Server),
    ("port", Some('p'), true, Flag::Port),
    ("unix-socket", Some('S'), true, Flag::UnixSocket),
    ("ipv4", Some('4'), false, Flag::Ipv4),
    ("ipv6", Some('6'), false, Flag::Ipv6),
    ("protocol", Some('P'), true, Flag::Protocol),
    ("authenticate", Some('a'), true, Flag::Authenticate),
    ("uri", Some('u'), true, Flag::Uri),
    ("tls", None, false, Flag::Tls),
    ("cert", None, true, Flag::Cert),
    ("key", None, true, Flag::Key),
    ("cacert", None, true, Flag::Cacert),
    ("tls-skip-verify", None, false, Flag::TlsSkipVerify),
    ("tls-protocols", None, true, Flag::TlsProtocols),
    ("sni", None, true, Flag::Sni),
    ("run-count", Some('x'), true, Flag::RunCount),
    ("debug", Some('D'), false, Flag::Debug),
    ("cluster-mode", None, false, Flag::ClusterMode),
    ("transaction", None, false, Flag::Transaction),
    ("help", None, false, Flag::Help),
    ("version", Some('v'), false, Flag::Version),
    ("out-file", Some('o'), true, Flag::OutFile),
    ("json-out-file", None, true, Flag::JsonOutFile),
    ("client-stats", None, true, Flag::ClientStats),
    ("hdr-file-prefix", None, true, Flag::HdrFilePrefix),
    ("show-config", None, false, Flag::ShowConfig),
    ("hide-histogram", None, false, Flag::HideHistogram),
    ("print-percentiles", None, true, Flag::PrintPercentiles),
    ("print-all-runs", None, false, Flag::PrintAllRuns),
    ("realtime-latencies", None, false, Flag::RealtimeLatencies),
    (
        "command-stats-breakdown",
        None,
        true,
        Flag::CommandStatsBreakdown,
    ),
    (
        "command-miss-tracking",
        None,
        true,
        Flag::CommandMissTracking,
    ),
    ("miss-rate-threshold", None, true, Flag::MissRateThreshold),
    ("statsd-host", None, true, Flag::StatsdHost),
    ("statsd-port", None, true, Flag::StatsdPort),
    ("statsd-prefix", None, true, Flag::StatsdPrefix),
    ("statsd-run-label", None, true, Flag::StatsdRunLabel),
    ("graphite-port", None, true, Flag::GraphitePort),
    ("requests", Some('n'), true, Flag::Requests),
    ("rate-limiting", None, true, Flag::RateLimiting),
    ("clients", Some('c'), true, Flag::Clients),
    ("threads", Some('t'), true, Flag::Threads),
    ("test-time", None, true, Flag::TestTime),
    ("clients-start", None, true, Flag::ClientsStart),
    ("clients-step", None, true, Flag::ClientsStep),
    ("step-duration", None, true, Flag::StepDuration),
    ("ratio", None, true, Flag::Ratio),
    ("pipeline", None, true, Flag::Pipeline),
    ("reconnect-interval", None, true, Flag::ReconnectInterval),
    ("reconnect-on-error", None, false, Flag::ReconnectOnError),
    (
        "max-reconnect-attempts",
        None,
        true,
        Flag::MaxReconnectAttempts,
    ),
    (
        "reconnect-backoff-factor",
        None,
        true,
        Flag::ReconnectBackoffFactor,
    ),
    ("retry-on-error", None, false, Flag::RetryOnError),
    ("max-retries", None, true, Flag::MaxRetries),
    ("retry-backoff-ms", None, true, Flag::RetryBackoffMs),
    ("retry-backoff-factor", None, true, Flag::RetryBackoffFactor),
    ("retry-on", None, true, Flag::RetryOn),
    ("max-retry-queue", None, true, Flag::MaxRetryQueue),
    ("failed-keys-file", None, true, Flag::FailedKeysFile),
    ("connection-timeout", None, true, Flag::ConnectionTimeout),
    (
        "connection-stage-timeout",
        None,
        true,
        Flag::ConnectionStageTimeout,
    ),
    (
        "thread-conn-start-min-jitter-micros",
        None,
        true,
        Flag::ThreadConnStartMinJitter,
    ),
    (
        "thread-conn-start-max-jitter-micros",
        None,
        true,
        Flag::ThreadConnStartMaxJitter,
    ),
    ("multi-key-get", None, true, Flag::MultiKeyGet),
    ("select-db", None, true, Flag::SelectDb),
    (
        "distinct-client-seed",
        None,
        false,
        Flag::DistinctClientSeed,
    ),
    ("randomize", None, false, Flag::Randomize),
    ("command", None, true, Flag::Command),
    ("command-ratio", None, true, Flag::CommandRatio),
    ("command-key-pattern", None, true, Flag::CommandKeyPattern),
    ("monitor-input", None, true, Flag::MonitorInput),
    ("monitor-pattern", None, true, Flag::MonitorPattern),
    (
        "scan-incremental-iteration",
        None,
        false,
        Flag::ScanIncrementalIteration,
    ),
    (
        "scan-incremental-max-iterations",
        None,
        true,
        Flag::ScanIncrementalMaxIterations,
    ),
    ("data-size", Some('d'), true, Flag::DataSize),
    ("data-offset", None, true, Flag::DataOffset),
    ("random-data", Some('R'), false, Flag::RandomData),
    ("data-size-range", None, true, Flag::DataSizeRange),
    ("data-size-list", None, true, Flag::DataSizeList),
    ("data-size-pattern", None, true, Flag::DataSizePattern),
    ("expiry-range", None, true, Flag::ExpiryRange),
    ("data-import", None, true, Flag::DataImport),
    ("data-verify", None, false, Flag::DataVerify),
    ("verify-only", None, false, Flag::VerifyOnly),
    ("generate-keys", None, false, Flag::GenerateKeys),
    ("no-expiry", None, false, Flag::NoExpiry),
    ("key-prefix", None, true, Flag::KeyPrefix),
    ("key-minimum", None, true, Flag::KeyMinimum),
    ("key-maximum", None, true, Flag::KeyMaximum),
    ("key-pattern", None, true, Flag::KeyPattern),
    ("key-stddev", None, true, Flag::KeyStddev),
    ("key-median", None, true, Flag::KeyMedian),
    ("key-zipf-exp", None, true, Flag::KeyZipfExp),
    ("wait-ratio", None, true, Flag::WaitRatio),
    ("num-slaves", None, true, Flag::NumSlaves),
    ("wait-timeout", None, true, Flag::WaitTimeout),
];

/// Why an option is not supported yet, or `None` when respload honours it.
fn unsupported(o: Flag) -> Option<&'static str> {
    const RETRY: &str = "respload counts every failed request as an error and never resends it";
    const IMPORT: &str = "respload does not read memtier data-import files";
    const WAIT: &str = "respload's SET/GET workload sends no WAIT commands";
    const STATSD: &str = "respload sends no StatsD/Graphite metrics (read the per-second \
                          timeline of its JSON report instead)";
    Some(match o {
        Flag::Ipv4 | Flag::Ipv6 => {
            "respload connects to the first address of the host that answers"
        }
        Flag::Transaction => {
            "respload picks --command entries at random by weight, not in memtier's fixed \
             rotation, so a MULTI/EXEC rotation cannot be replayed"
        }
        Flag::ClientStats => "respload writes no per-client statistics files",
        Flag::StatsdHost
        | Flag::StatsdPort
        | Flag::StatsdPrefix
        | Flag::StatsdRunLabel
        | Flag::GraphitePort => STATSD,
        Flag::ReconnectInterval => "respload reconnects only after a lost connection",
        Flag::MaxReconnectAttempts | Flag::ReconnectBackoffFactor => {
            "respload reconnects at once after a lost connection, without limit or backoff"
        }
        Flag::RetryOnError
        | Flag::MaxRetries
        | Flag::RetryBackoffMs
        | Flag::RetryBackoffFactor
        | Flag::RetryOn
        | Flag::MaxRetryQueue
        | Flag::FailedKeysFile => RETRY,
        Flag::ConnectionStageTimeout => {
            "respload fails at once when the server cannot be reached; use --connection-timeout"
        }
        Flag::ThreadConnStartMinJitter | Flag::ThreadConnStartMaxJitter => {
            "respload opens connections without jitter"
        }
        Flag::MultiKeyGet => {
            "respload's SET/GET workload sends single-key GETs only \
                           (use --command=\"MGET __key__ __key__\")"
        }
        Flag::MonitorInput | Flag::MonitorPattern => "respload does not replay MONITOR captures",
        Flag::ScanIncrementalIteration | Flag::ScanIncrementalMaxIterations => {
            "respload does not follow SCAN cursors"
        }
        Flag::DataImport
        | Flag::DataVerify
        | Flag::VerifyOnly
        | Flag::GenerateKeys
        | Flag::NoExpiry => IMPORT,
        Flag::WaitRatio | Flag::NumSlaves | Flag::WaitTimeout => WAIT,
        _ => return None,
    })
}

// ----------------------------------------------------------------------------------------
// Reading the arguments.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Req {
    Count(u64),
    AllKeys,
}

/// A `--command` given on the command line, with its `--command-ratio` and
/// `--command-key-pattern`.
#[derive(Debug, Clone)]
struct UserCommand {
    /// Its words, split as memtier splits them.
    args: Vec<Vec<u8>>,
    ratio: u32,
    pattern: char,
}

/// Every option as read from the command line, before the workload is built from them.
#[derive(Debug, Clone)]
struct Settings {
    server: Option<String>,
    port: Option<u16>,
    unix_socket: Option<String>,
    uri: Option<String>,
    protocol: &'static str,
    authenticate: Option<String>,
    run_count: u32,
    debug: u32,
    out_file: Option<String>,
    json_out_file: Option<String>,
    hdr_prefix: Option<String>,
    show_config: bool,
    hide_histogram: bool,
    percentiles: Vec<f64>,
    print_all_runs: bool,
    stats_by_line: bool,
    miss_tracking: bool,
    miss_rate_threshold: f64,
    requests: Option<Req>,
    clients: u32,
    threads: u32,
    test_time: Option<u32>,
    ratio: Option<(u32, u32)>,
    pipeline: u32,
    reconnect_on_error: bool,
    connection_timeout: u32,
    select_db: u32,
    distinct_client_seed: bool,
    /// `--cluster-mode`: `target.cluster`.
    cluster_mode: bool,
    randomize: bool,
    commands: Vec<UserCommand>,
    data_size: Option<u32>,
    random_data: bool,
    data_size_range: Option<(u32, u32)>,
    data_size_list: Option<Vec<(u32, u32)>>,
    data_size_pattern: char,
    expiry_range: Option<(u32, u32)>,
    key_prefix: String,
    key_minimum: u64,
    key_maximum: u64,
    key_pattern: Option<(char, char)>,
    key_stddev: Option<f64>,
    key_median: Option<f64>,
    key_zipf_exp: Option<f64>,
    /// `target.tls` fields from --tls, --cert, --key, --cacert, --tls-skip-verify, --sni,
    /// --tls-protocols and rediss:// URIs.
    tls: Map<String, Json>,
    /// --rate-limiting: requests per second per connection.
    rate_per_connection: Option<u32>,
    /// --clients-start, --clients-step (per thread) and --step-duration (seconds).
    clients_start: Option<u32>,
    clients_step: Option<u32>,
    step_duration: Option<u32>,
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
        }
    }
}

fn bad(option: &str, raw: &str, allowed: &str) -> Error {
    Error::spec(option, format!("`{raw}` is not a valid value: {allowed}"))
}

fn not_supported(option: &str, why: &str) -> Error {
    Error::spec(
        option,
        format!("not supported yet by respload's memtier front end: {why}"),
    )
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
            if let Some(why) = unsupported(entry.3) {
                return Err(not_supported(&shown, why));
            }
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
                if let Some(why) = unsupported(entry.3) {
                    return Err(not_supported(&shown, why));
                }
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
fn number<T>(option: &str, raw: &str, lo: u64, hi: u64, what: &str) -> Result<T>
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

const MAX_WEIGHT: u64 = 1_000_000;

fn apply(
    cfg: &mut Settings,
    o: Flag,
    opt: &str,
    value: Option<&str>,
) -> Result<Option<Invocation>> {
    if let Some(why) = unsupported(o) {
        return Err(not_supported(opt, why));
    }
    let v = value.unwrap_or_default();
    match o {
        Flag::Help => return Ok(Some(Invocation::Help)),
        Flag::Version => return Ok(Some(Invocation::Version)),
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
        Flag::RateLimiting => {
            cfg.rate_per_connection = Some(number(
                opt,
                v,
                1,
                u32::MAX as u64,
                "requests per second per connection, 1 or more",
            )?);
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
                "memcache_text" | "memcache_binary" => {
                    return Err(not_supported(
                        opt,
                        &format!("--protocol={v}: respload speaks RESP only (redis, resp2, resp3)"),
                    ))
                }
                _ => {
                    return Err(bad(
                        opt,
                        v,
                        "allowed are redis, resp2 and resp3 (memcache_text and memcache_binary \
                         are not supported)",
                    ))
                }
            }
        }
        Flag::Authenticate => cfg.authenticate = Some(v.to_string()),
        Flag::Uri => cfg.uri = Some(v.to_string()),
        Flag::RunCount => {
            cfg.run_count = number(opt, v, 1, 1024, "a number of runs from 1 to 1024")?;
        }
        Flag::Debug => cfg.debug += 1,
        Flag::ClusterMode => cfg.cluster_mode = true,
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
        Flag::ReconnectOnError => cfg.reconnect_on_error = true,
        Flag::ConnectionTimeout => {
            cfg.connection_timeout =
                number(opt, v, 0, u32::MAX as u64, "a number of seconds (0: none)")?
        }
        Flag::SelectDb => {
            cfg.select_db = number(opt, v, 0, u32::MAX as u64, "a database number, 0 or more")?
        }
        Flag::DistinctClientSeed => cfg.distinct_client_seed = true,
        Flag::Randomize => cfg.randomize = true,
        Flag::Command => cfg.commands.push(command(opt, v)?),
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
            let n: u32 = number(opt, v, 0, u32::MAX as u64, "a number of bytes, 0 or more")?;
            if n > 0 {
                return Err(not_supported(
                    opt,
                    "respload sends whole values with SET and GET, not SETRANGE/GETRANGE at an offset",
                ));
            }
        }
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
        Flag::KeyPrefix => cfg.key_prefix = v.to_string(),
        Flag::KeyMinimum => {
            cfg.key_minimum = number(opt, v, 1, u64::MAX - 1, "a key number greater than zero")?
        }
        Flag::KeyMaximum => {
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
        // Every other option is unsupported (handled above).
        _ => return Err(not_supported(opt, "no respload equivalent")),
    }
    Ok(None)
}

fn last_command<'a>(cfg: &'a mut Settings, opt: &str) -> Result<&'a mut UserCommand> {
    cfg.commands
        .last_mut()
        .ok_or_else(|| Error::spec(opt, "applies to the --command before it, and there is none"))
}

const KEY_PLACEHOLDER: &[u8] = b"__key__";
const DATA_PLACEHOLDER: &[u8] = b"__data__";

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// One `--command`, split and checked as memtier does.
fn command(opt: &str, text: &str) -> Result<UserCommand> {
    let args = split_command(text).map_err(|m| bad(opt, text, &m))?;
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
    let upper = String::from_utf8_lossy(first).to_ascii_uppercase();
    if matches!(
        upper.as_str(),
        "MULTI" | "EXEC" | "DISCARD" | "WATCH" | "UNWATCH"
    ) {
        return Err(not_supported(
            opt,
            &format!(
                "{upper} in --command: memtier sends --command entries in a fixed rotation, \
                 respload picks them at random by weight, so transactions cannot be replayed"
            ),
        ));
    }
    Ok(UserCommand {
        args,
        ratio: 1,
        pattern: 'R',
    })
}

/// Split a `--command` as memtier_benchmark does (Redis' `sdssplitargs`): blanks separate,
/// `"double quotes"` take `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>` escapes,
/// `'single quotes'` take `\'`, a quote may open inside a word, and a closing quote must be
/// followed by a blank or the end.
fn split_command(text: &str) -> std::result::Result<Vec<Vec<u8>>, String> {
    let b = text.as_bytes();
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
                    None => return Err("a --command with an unclosed \" quote".into()),
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
                    None => return Err("a --command with an unclosed ' quote".into()),
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
fn quote_arg(arg: &[u8]) -> String {
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

/// A `--command` as a respload template: a list of arguments when all are text, else a line
/// with quoted arguments. Braces in literal arguments are escaped (`{lbrace}`), so that text
/// such as `{key}` or a hash tag is sent as it is.
fn template(cmd: &UserCommand) -> Json {
    let words: Option<Vec<String>> = cmd
        .args
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
        None => json!(cmd
            .args
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

// ----------------------------------------------------------------------------------------
// Building the workload.

/// `redis://[user[:password]@]host[:port][/db]` as memtier reads it: (host, port, auth, db).
type UriParts = (Option<String>, Option<u16>, Option<String>, Option<u32>);

fn parse_uri(uri: &str) -> Result<UriParts> {
    let what = "redis://[user[:password]@]host[:port][/db]";
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| bad("--uri", uri, what))?;
    match scheme {
        "redis" => {}
        "rediss" => {}
        _ => return Err(bad("--uri", uri, &format!("a redis:// URI, {what}"))),
    }
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a.to_string()), h),
        None => (None, rest),
    };
    let (hostport, db) = match hostpart.split_once('/') {
        Some((hp, "")) => (hp, None),
        Some((hp, d)) => (
            hp,
            Some(number::<u32>(
                "--uri",
                d,
                0,
                u32::MAX as u64,
                "a database number",
            )?),
        ),
        None => (hostpart, None),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || h.starts_with('[') => (
            h,
            Some(number::<u16>(
                "--uri",
                p,
                1,
                65535,
                "a port from 1 to 65535",
            )?),
        ),
        _ => (hostport, None),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Ok(((!host.is_empty()).then(|| host.to_string()), port, auth, db))
}

/// memtier's credentials: `PASSWORD`, `USER:PASSWORD`, or `:PASSWORD` (a password with colons).
fn credentials(auth: &str) -> (Option<String>, String) {
    if let Some(pw) = auth.strip_prefix(':') {
        return (None, pw.to_string());
    }
    match auth.split_once(':') {
        Some((user, pw)) => (Some(user.to_string()), pw.to_string()),
        None => (None, auth.to_string()),
    }
}

impl Settings {
    fn distribution(&self, letter: char) -> Json {
        match letter {
            'S' => json!("sequential"),
            'P' => json!("parallel"),
            'G' => {
                let mut m = Map::new();
                m.insert("kind".into(), json!("gaussian"));
                if let Some(x) = self.key_median {
                    m.insert("median".into(), json!(x));
                }
                if let Some(x) = self.key_stddev {
                    m.insert("stddev".into(), json!(x));
                }
                Json::Object(m)
            }
            'Z' => json!({ "kind": "zipf", "exponent": self.key_zipf_exp.unwrap_or(1.0) }),
            _ => json!("uniform"),
        }
    }

    fn build(self) -> Result<Memtier> {
        let arbitrary = !self.commands.is_empty();
        if arbitrary {
            if self.key_pattern.is_some() {
                return Err(Error::spec(
                    "--key-pattern",
                    "with --command, give the key pattern with --command-key-pattern (as in \
                     memtier_benchmark)",
                ));
            }
            if self.ratio.is_some() {
                return Err(Error::spec(
                    "--ratio",
                    "with --command, give the ratio with --command-ratio (as in memtier_benchmark)",
                ));
            }
            let parallel = self.commands.iter().filter(|c| c.pattern == 'P').count();
            if parallel > 0 && parallel != self.commands.len() {
                return Err(Error::spec(
                    "--command-key-pattern",
                    "the parallel pattern P must be given to every --command (as in \
                     memtier_benchmark)",
                ));
            }
        }
        let (set_p, get_p) = self.key_pattern.unwrap_or(('R', 'R'));
        let patterns: Vec<char> = if arbitrary {
            self.commands.iter().map(|c| c.pattern).collect()
        } else {
            vec![set_p, get_p]
        };
        let gaussian = patterns.contains(&'G');
        if (self.key_stddev.is_some() || self.key_median.is_some()) && !gaussian {
            let opt = if self.key_stddev.is_some() {
                "--key-stddev"
            } else {
                "--key-median"
            };
            return Err(Error::spec(
                opt,
                "key-stddev and key-median are only allowed together with key-pattern set to G",
            ));
        }
        let (lo, hi) = (self.key_minimum, self.key_maximum);
        if lo > hi {
            return Err(Error::spec(
                "--key-minimum",
                format!("{lo} is above --key-maximum {hi}"),
            ));
        }
        if gaussian && hi - lo < 2 {
            return Err(Error::spec(
                "--key-pattern",
                format!(
                    "G needs a key range spanning at least 3 keys (key-maximum - key-minimum >= 2); \
                     got key-minimum={lo} key-maximum={hi}"
                ),
            ));
        }
        if let Some(m) = self.key_median {
            if gaussian && !(m > lo as f64 && m < hi as f64) {
                return Err(Error::spec(
                    "--key-median",
                    format!("{m} must be strictly inside (key-minimum={lo}, key-maximum={hi})"),
                ));
            }
        }
        if self.data_size.is_some()
            && (self.data_size_list.is_some() || self.data_size_range.is_some())
        {
            return Err(Error::spec(
                "--data-size",
                "data-size cannot be used with data-size-list or data-size-range",
            ));
        }
        if self.data_size_list.is_some() && self.data_size_range.is_some() {
            return Err(Error::spec(
                "--data-size-list",
                "data-size-list cannot be used with data-size-range",
            ));
        }
        if self.unix_socket.is_some() && (self.server.is_some() || self.port.is_some()) {
            return Err(Error::spec(
                "--unix-socket",
                "UNIX domain socket and TCP cannot be used together",
            ));
        }
        match (self.clients_start, self.clients_step, self.step_duration) {
            (None, None, None) => {}
            (Some(start), Some(_), Some(_)) if start >= self.clients => {
                return Err(Error::spec(
                    "--clients-start",
                    format!(
                        "{start} clients per thread: must be less than --clients ({})",
                        self.clients
                    ),
                ))
            }
            (Some(_), Some(_), Some(_)) => {}
            _ => {
                return Err(Error::spec(
                    "--clients-start",
                    "--clients-start, --clients-step and --step-duration go together \
                     (as in memtier_benchmark)",
                ))
            }
        }
        let conns = self.clients as u64 * self.threads as u64;
        if conns > 1_000_000 {
            return Err(Error::spec(
                "--clients",
                format!(
                    "{} clients x {} threads = {conns} connections: respload allows at most 1000000",
                    self.clients, self.threads
                ),
            ));
        }

        // Target.
        let mut target = Map::new();
        let (mut server, mut port, mut auth, mut db) = (
            self.server.clone(),
            self.port,
            self.authenticate.clone(),
            self.select_db,
        );
        if let Some(uri) = &self.uri {
            let (h, p, a, d) = parse_uri(uri)?;
            server = h.or(server);
            port = p.or(port);
            auth = a.or(auth);
            db = d.unwrap_or(db);
        }
        match &self.unix_socket {
            Some(path) => {
                target.insert("unix".into(), json!(path));
            }
            None => {
                target.insert(
                    "host".into(),
                    json!(server.clone().unwrap_or_else(|| "localhost".into())),
                );
                target.insert("port".into(), json!(port.unwrap_or(6379)));
            }
        }
        if let Some(a) = &auth {
            let (user, password) = credentials(a);
            if let Some(u) = user {
                target.insert("user".into(), json!(u));
            }
            target.insert("password".into(), json!(password));
        }
        target.insert("db".into(), json!(db));
        target.insert(
            "protocol".into(),
            json!(if self.protocol == "resp3" { 3 } else { 2 }),
        );
        if self.connection_timeout > 0 {
            target.insert(
                "connect_timeout".into(),
                json!(format!("{}s", self.connection_timeout)),
            );
        }

        // Load.
        let mut load = Map::new();
        load.insert("connections".into(), json!(conns));
        load.insert("threads".into(), json!(self.threads));
        load.insert("pipeline".into(), json!(self.pipeline));
        let keys_count = hi - lo + 1;
        let requests_per_client = match self.requests {
            Some(Req::AllKeys) => {
                load.insert("requests".into(), json!("all_keys"));
                Some(keys_count.div_ceil(conns))
            }
            Some(Req::Count(n)) => {
                let total = n.checked_mul(conns).ok_or_else(|| {
                    Error::spec("--requests", format!("{n} requests per client is too many"))
                })?;
                load.insert("requests".into(), json!(total));
                Some(n)
            }
            None if self.test_time.is_none() => {
                load.insert("requests".into(), json!(10_000 * conns));
                Some(10_000)
            }
            None => None,
        };
        if let Some(t) = self.test_time {
            load.insert("duration".into(), json!(format!("{t}s")));
        }

        // Keys.
        let mut keys = Map::new();
        keys.insert("prefix".into(), json!(self.key_prefix));
        keys.insert("range".into(), json!([lo, hi]));
        if !arbitrary {
            keys.insert("distribution".into(), self.distribution(set_p));
            keys.insert("writes".into(), self.distribution(set_p));
            keys.insert("reads".into(), self.distribution(get_p));
        }

        // Values.
        let mut values = Map::new();
        let size = match (&self.data_size_range, &self.data_size_list, self.data_size) {
            (Some((a, b)), _, _) => json!([a, b]),
            (_, Some(list), _) => {
                json!(list.iter().map(|(s, w)| json!([s, w])).collect::<Vec<_>>())
            }
            (_, _, n) => json!(n.unwrap_or(32)),
        };
        values.insert("size".into(), size);
        if self.data_size_range.is_some() && self.data_size_pattern == 'S' {
            values.insert("size_follows_key".into(), json!(true));
        }
        values.insert(
            "data".into(),
            json!(if self.random_data { "random" } else { "fixed" }),
        );
        // memtier puts the expiry on its own SETs: with none (`--ratio=0:N`, `--command`
        // only) it applies to nothing, as here.
        let sets = !arbitrary && self.ratio.unwrap_or((1, 10)).0 > 0;
        if let (Some((a, b)), true) = (self.expiry_range, sets) {
            values.insert("expiry".into(), json!([a, b]));
        }

        // Commands.
        let mut commands = Vec::new();
        let mut rows = None;
        if arbitrary {
            let mut list = Vec::new();
            for c in &self.commands {
                let name = String::from_utf8_lossy(&c.args[0]).to_ascii_uppercase();
                let n = list.iter().filter(|r: &&CommandRow| r.name == name).count();
                let label = if n == 0 {
                    name.clone()
                } else {
                    format!("{name}#{}", n + 1)
                };
                commands.push(json!({
                    "template": template(c),
                    "label": label,
                    "weight": c.ratio,
                    "distribution": self.distribution(c.pattern),
                }));
                list.push(CommandRow { label, name });
            }
            rows = Some(list);
        } else {
            let (a, b) = self.ratio.unwrap_or((1, 10));
            if a > 0 {
                commands.push(json!({ "name": "set", "weight": a }));
            }
            if b > 0 {
                commands.push(json!({ "name": "get", "weight": b }));
            }
        }

        if !self.tls.is_empty()
            || self
                .uri
                .as_deref()
                .is_some_and(|u| u.starts_with("rediss://"))
        {
            let mut tls = self.tls.clone();
            tls.insert("enabled".into(), json!(true));
            target.insert("tls".into(), Json::Object(tls));
        }
        if self.cluster_mode {
            // memtier's clients each hold a connection to every shard: respload's model too.
            target.insert("cluster".into(), json!(true));
        }
        if let Some(start) = self.clients_start {
            // memtier counts clients per thread; respload's ramp counts connections.
            load.insert(
                "connections_ramp".into(),
                json!({
                    "start": start as u64 * self.threads as u64,
                    "step": self.clients_step.unwrap_or(1) as u64 * self.threads as u64,
                    "step_duration": format!("{}s", self.step_duration.unwrap_or(1)),
                }),
            );
        }
        if let Some(r) = self.rate_per_connection {
            // memtier limits each connection; respload's rate is the total.
            let connections = self.clients as u64 * self.threads as u64;
            load.insert("rate".into(), json!(r as u64 * connections));
        }
        let mut spec = Map::new();
        spec.insert("target".into(), Json::Object(target));
        spec.insert("load".into(), Json::Object(load));
        spec.insert("keys".into(), Json::Object(keys));
        spec.insert("values".into(), Json::Object(values));
        spec.insert("commands".into(), json!(commands));
        spec.insert("distinct_streams".into(), json!(self.distinct_client_seed));
        if !self.randomize {
            // memtier's default is a constant seed: the same stream on every run.
            spec.insert("seed".into(), json!(0));
        }
        if self.json_out_file.is_some() {
            // Its per-second percentiles are read from each interval's histogram.
            spec.insert("output".into(), json!({ "interval_histograms": true }));
        }
        if self.run_count > 1 {
            let phases: Vec<Json> = (1..=self.run_count)
                .map(|i| json!({ "name": format!("run {i}") }))
                .collect();
            spec.insert("phases".into(), json!(phases));
        } else {
            spec.insert("name".into(), json!("run 1"));
        }
        let workload = Workload::from_json_value(Json::Object(spec))?;

        let config = self.config_items(requests_per_client);
        Ok(Memtier {
            workload,
            options: Options {
                out_file: self.out_file,
                json_out_file: self.json_out_file,
                hdr_file_prefix: self.hdr_prefix.filter(|p| !p.is_empty()),
                hide_histogram: self.hide_histogram,
                percentiles: self.percentiles,
                print_all_runs: self.print_all_runs,
                show_config: self.show_config,
                run_count: self.run_count,
                threads: self.threads,
                clients: self.clients,
                requests_per_client,
                test_time: self.test_time,
                commands: rows,
                stats_by_line: self.stats_by_line,
                miss_tracking: self.miss_tracking,
                miss_rate_threshold: self.miss_rate_threshold,
                config,
            },
        })
    }

    /// memtier's configuration object (the keys of its `config_print_to_json`).
    fn config_items(&self, requests_per_client: Option<u64>) -> Vec<(String, Json)> {
        let opt = |s: &Option<String>| s.as_ref().map_or(Json::Null, |v| json!(v));
        let tf = |b: bool| json!(if b { "true" } else { "false" });
        let (ra, rb) = self.ratio.unwrap_or((1, 10));
        let range = |r: Option<(u32, u32)>| {
            let (a, b) = r.unwrap_or((0, 0));
            json!(format!("{a}:{b}"))
        };
        let list = self.data_size_list.as_ref().map_or(String::new(), |l| {
            l.iter()
                .map(|(s, w)| format!("{s}:{w}"))
                .collect::<Vec<_>>()
                .join(",")
        });
        let (sp, gp) = self.key_pattern.unwrap_or(('R', 'R'));
        let server = if self.unix_socket.is_none() {
            json!(self.server.clone().unwrap_or_else(|| "localhost".into()))
        } else {
            Json::Null
        };
        let port = if self.unix_socket.is_none() {
            self.port.unwrap_or(6379)
        } else {
            0
        };
        let items: Vec<(&str, Json)> = vec![
            ("server", server),
            ("port", json!(port)),
            ("uri", json!(self.uri.clone().unwrap_or_default())),
            ("unix socket", opt(&self.unix_socket)),
            ("address family", json!("Unspecified")),
            ("protocol", json!(self.protocol)),
            ("out_file", opt(&self.out_file)),
            ("client_stats", Json::Null),
            ("run_count", json!(self.run_count)),
            ("debug", json!(self.debug)),
            ("requests", json!(requests_per_client.unwrap_or(0))),
            ("rate_limit", json!(0)),
            ("clients", json!(self.clients)),
            ("threads", json!(self.threads)),
            ("test_time", json!(self.test_time.unwrap_or(0))),
            ("ratio", json!(format!("{ra}:{rb}"))),
            ("pipeline", json!(self.pipeline)),
            ("transaction", tf(false)),
            (
                "data_size",
                json!(
                    if self.data_size_range.is_none() && self.data_size_list.is_none() {
                        self.data_size.unwrap_or(32)
                    } else {
                        0
                    }
                ),
            ),
            ("data_offset", json!(0)),
            ("random_data", tf(self.random_data)),
            ("data_size_range", range(self.data_size_range)),
            ("data_size_list", json!(list)),
            (
                "data_size_pattern",
                json!(self.data_size_pattern.to_string()),
            ),
            ("expiry_range", range(self.expiry_range)),
            ("data_import", Json::Null),
            ("data_verify", tf(false)),
            ("verify_only", tf(false)),
            ("generate_keys", tf(false)),
            ("key_prefix", json!(self.key_prefix)),
            ("key_minimum", json!(self.key_minimum)),
            ("key_maximum", json!(self.key_maximum)),
            ("key_pattern", json!(format!("{sp}:{gp}"))),
            ("key_stddev", json!(self.key_stddev.unwrap_or(0.0))),
            ("key_median", json!(self.key_median.unwrap_or(0.0))),
            ("key_zipf_exp", json!(self.key_zipf_exp.unwrap_or(0.0))),
            ("reconnect_interval", json!(0)),
            ("retry_on_error", tf(false)),
            ("max_retries", json!(-1)),
            ("retry_backoff_ms", json!(0)),
            ("retry_backoff_factor", json!(0.0)),
            ("retry_on", json!("")),
            ("max_retry_queue", json!(0)),
            ("failed_keys_file", json!("")),
            ("connection_timeout", json!(self.connection_timeout)),
            ("connection_stage_timeout", json!(30)),
            ("thread_conn_start_min_jitter_micros", json!(0)),
            ("thread_conn_start_max_jitter_micros", json!(0)),
            ("multi_key_get", json!(0)),
            (
                "authenticate",
                json!(if self.authenticate.is_some()
                    || self.uri.as_deref().is_some_and(|u| u.contains('@'))
                {
                    "***"
                } else {
                    ""
                }),
            ),
            ("select-db", json!(self.select_db)),
            ("no-expiry", tf(false)),
            ("wait-ratio", json!("0:0")),
            ("num-slaves", json!("0:0")),
            ("wait-timeout", json!("0-0")),
            ("print-all-runs", tf(self.print_all_runs)),
        ];
        let _ = self.reconnect_on_error;
        items.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

/// The options respload's memtier front end reads, as `--help` shows them.
pub fn usage() -> &'static str {
    r#"Usage: respload memtier [memtier_benchmark options] [--json FILE]
Runs a memtier_benchmark command line with respload and reports as memtier_benchmark does.
Options are read as memtier_benchmark 2.x reads them; those respload cannot honour yet are
errors naming the option. docs/compat.md has the table of every option.

Connection:
  -s, -h, --server/--host=ADDR   Server address (default: localhost)
  -p, --port=PORT                Server port (default: 6379)
  -S, --unix-socket=SOCKET       UNIX domain socket
  -P, --protocol=PROTOCOL        redis (default), resp2 or resp3
  -a, --authenticate=CREDENTIALS PASSWORD or USER:PASSWORD (:PASSWORD for a password with ':')
  -u, --uri=URI                  redis://[user[:password]@]host[:port][/db]
      --select-db=DB             Database to SELECT
      --connection-timeout=SECS  Connect timeout (0: respload's default, 5 s)
Test:
  -n, --requests=NUMBER          Requests per client (default: 10000), or allkeys
  -c, --clients=NUMBER           Clients (connections) per thread (default: 50)
  -t, --threads=NUMBER           Threads (default: 4)
      --test-time=SECS           Seconds to run (instead of --requests)
      --clients-start=NUMBER     Staircase: clients per thread at first (less than -c)
      --clients-step=NUMBER      Staircase: clients per thread added each step
      --step-duration=SECS       Staircase: seconds per step
  -x, --run-count=NUMBER         Runs (measured phases "run 1" ... "run N")
      --ratio=SET:GET            Set:Get ratio (default: 1:10), weights of a random mix
      --pipeline=NUMBER          Requests in flight per connection (default: 1)
      --distinct-client-seed     A different request stream per connection
      --randomize                A random seed (default: a constant seed)
      --reconnect-on-error       Accepted: respload always reconnects a lost connection
Arbitrary commands:
      --command=COMMAND          A command with __key__ and __data__ placeholders (repeatable)
      --command-ratio=NUMBER     Weight of the --command before it (default: 1)
      --command-key-pattern=P    Key pattern of the --command before it: R, S, G, Z or P
Objects:
  -d, --data-size=SIZE           Value size in bytes (default: 32)
  -R, --random-data              Random values (default: 'x' repeated)
      --data-size-range=MIN-MAX  Sizes drawn from a range
      --data-size-list=S:W,...   Sizes drawn by weight
      --data-size-pattern=R|S    S: sizes grow with the key number (with --data-size-range)
      --expiry-range=MIN-MAX     SET ... EX with a random TTL in seconds
Keys:
      --key-prefix=PREFIX        Key prefix (default: memtier-)
      --key-minimum=NUMBER       Smallest key number (default: 0)
      --key-maximum=NUMBER       Largest key number (default: 10000000)
      --key-pattern=SET:GET      Each of R (uniform), S (sequential), G (gaussian),
                                 Z (zipf), P (parallel) (default: R:R)
      --key-stddev=NUMBER        Gaussian standard deviation (default: range / 6)
      --key-median=NUMBER        Gaussian median (default: middle of the range)
      --key-zipf-exp=NUMBER      Zipf exponent, within (0, 5) (default: 1)
Output:
  -o, --out-file=FILE            Text report to FILE instead of stdout
      --json-out-file=FILE       Report in memtier's JSON layout
      --hdr-file-prefix=PREFIX   HdrHistogram files PREFIX_FULL_RUN_1.txt/.hgrm, per command
      --hide-histogram           No latency distribution in the report
      --print-percentiles=LIST   Percentile columns (default: 50,99,99.9)
      --print-all-runs           With --run-count, a table per run too
      --show-config              Print the configuration first
      --command-stats-breakdown=command|line
      --command-miss-tracking=auto|off
      --miss-rate-threshold=PCT  Warn above this miss rate (default: 1)
  -D, --debug, --realtime-latencies  Accepted, no effect on respload's output
  -v, --version / --help
Respload:
      --json FILE                respload's own report as JSON, anywhere on the line
"#
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Arg, Distribution, Requests, ValueData, ValueSize};

    fn args(line: &str) -> Vec<String> {
        crate::tools::command_line::split_command_line(line).unwrap()
    }

    fn run(line: &str) -> Memtier {
        match parse(&args(line)).unwrap_or_else(|e| panic!("{line}: {e}")) {
            Invocation::Run(m) => *m,
            other => panic!("{other:?}"),
        }
    }

    fn err(line: &str) -> String {
        parse(&args(line)).unwrap_err().to_string()
    }

    #[test]
    fn defaults_are_memtiers() {
        let m = run("");
        let w = &m.workload;
        assert_eq!(w.phases.len(), 1);
        let s = &w.phases[0].spec;
        assert_eq!(s.name, "run 1");
        assert_eq!(s.target.host.as_deref(), Some("localhost"));
        assert_eq!(s.target.port, Some(6379));
        assert_eq!(s.load.connections, 200);
        assert_eq!(s.load.threads, Some(4));
        assert_eq!(s.load.pipeline, 1);
        assert_eq!(s.load.requests, Some(Requests::Count(10_000 * 200)));
        assert_eq!(s.keys.prefix, "memtier-");
        assert_eq!(s.keys.range, [0, 10_000_000]);
        assert_eq!(s.keys.reads, Some(Distribution::Uniform));
        assert_eq!(s.values.size, ValueSize::Fixed(32));
        assert_eq!(s.values.data, ValueData::Fixed);
        assert_eq!(s.seed, Some(0));
        assert!(!s.distinct_streams);
        let names: Vec<_> = s
            .commands
            .iter()
            .map(|c| (c.name.clone(), c.weight))
            .collect();
        assert_eq!(
            names,
            vec![(Some("set".into()), 1), (Some("get".into()), 10)]
        );
        assert_eq!(m.options.percentiles, vec![50.0, 99.0, 99.9]);
        assert_eq!(m.options.requests_per_client, Some(10_000));
        assert!(m.options.commands.is_none());
    }

    #[test]
    fn option_forms_and_overrides() {
        let m = run(
            "-s h1 --server=h2 -p7000 -c 3 -t2 --ratio 2:5 --pipeline=4 -n 100 -DR --key-max=99",
        );
        let s = &m.workload.phases[0].spec;
        assert_eq!(s.target.host.as_deref(), Some("h2"));
        assert_eq!(s.target.port, Some(7000));
        assert_eq!(s.load.connections, 6);
        assert_eq!(s.load.pipeline, 4);
        assert_eq!(s.load.requests, Some(Requests::Count(600)));
        assert_eq!(s.values.data, ValueData::Random);
        assert_eq!(s.keys.range, [0, 99]);
        let w: Vec<u32> = s.commands.iter().map(|c| c.weight).collect();
        assert_eq!(w, [2, 5]);
        // -h is the host in memtier 2.x.
        let s = run("-h example.org").workload.phases[0].spec.clone();
        assert_eq!(s.target.host.as_deref(), Some("example.org"));
        assert!(matches!(parse(&args("--help")).unwrap(), Invocation::Help));
        assert!(matches!(
            parse(&args("-v -s x")).unwrap(),
            Invocation::Version
        ));
    }

    #[test]
    fn the_scenario_lines_parse() {
        let m = parse_line("memtier_benchmark -s your-endpoint -p 6380 --hide-histogram --key-maximum=75000000 -n allkeys -d 500 --key-pattern=P:P --ratio=1:0").unwrap();
        let Invocation::Run(m) = m else { panic!() };
        let p = &m.workload.phases[0];
        assert_eq!(p.spec.load.requests, Some(Requests::AllKeys));
        assert!(p.parallel_all_keys());
        assert_eq!(p.spec.keys.range, [0, 75_000_000]);
        assert_eq!(p.spec.values.size, ValueSize::Fixed(500));
        assert_eq!(p.commands.len(), 1);
        assert_eq!(p.commands[0].label, "SET");
        assert!(m.options.hide_histogram);

        let m = run("-s e -p 1 --hide-histogram --key-minimum=27250000 --key-maximum=47750000 -n allkeys --key-pattern=P:P --ratio=0:1");
        let p = &m.workload.phases[0];
        assert_eq!(p.spec.keys.range, [27_250_000, 47_750_000]);
        assert_eq!(p.commands[0].label, "GET");
        assert!(p.parallel_all_keys());

        let m = run("-s e -p 1 --pipeline=11 -c 20 -t 1 -d 500 --key-maximum=75000000 --key-pattern=G:G --key-stddev=5125000 --ratio=1:1 --distinct-client-seed --randomize --test-time=600 --run-count=1 --out-file=test.out");
        let s = &m.workload.phases[0].spec;
        assert_eq!(
            (s.load.connections, s.load.threads, s.load.pipeline),
            (20, Some(1), 11)
        );
        assert_eq!(
            s.keys.reads,
            Some(Distribution::Gaussian {
                median: None,
                stddev: Some(5_125_000.0)
            })
        );
        assert_eq!(s.load.duration.map(|d| d.0.as_secs()), Some(600));
        assert_eq!(s.load.requests, None);
        assert!(s.distinct_streams);
        assert_eq!(s.seed, None);
        assert_eq!(m.options.out_file.as_deref(), Some("test.out"));
        assert_eq!(m.options.test_time, Some(600));
        assert_eq!(m.options.requests_per_client, None);
    }

    #[test]
    fn run_count_makes_phases() {
        let w = run("-x 3 -n 5 -c 1 -t 1").workload;
        let names: Vec<_> = w.phases.iter().map(|p| p.spec.name.as_str()).collect();
        assert_eq!(names, ["run 1", "run 2", "run 3"]);
        assert!(w.phases.iter().all(|p| p.spec.measured));
    }

    #[test]
    fn commands_become_templates() {
        let m = run(
            r#"--command="SET __key__ __data__" --command-ratio=2 --command-key-pattern=S --command='HSET h:x "f 1" __data__' --command "set __key__ 'x\'y'" --command-key-pattern G --key-stddev 10 -c 1 -t 1"#,
        );
        let p = &m.workload.phases[0];
        let labels: Vec<_> = p.commands.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["SET", "HSET", "SET#2"]);
        assert_eq!(p.mix[0].weight, 2);
        assert_eq!(p.mix[0].distribution, Distribution::Sequential);
        assert!(
            matches!(p.mix[2].distribution, Distribution::Gaussian { stddev: Some(s), .. } if s == 10.0)
        );
        assert_eq!(p.commands[0].args[1], Arg::Key);
        assert_eq!(p.commands[0].args[2], Arg::Value);
        assert_eq!(p.commands[1].args[2], Arg::Lit(b"f 1"[..].into()));
        assert_eq!(p.commands[2].args[2], Arg::Lit(b"x'y"[..].into()));
        let rows = m.options.commands.unwrap();
        assert_eq!(
            rows[2],
            CommandRow {
                label: "SET#2".into(),
                name: "SET".into()
            }
        );
        // Binary bytes survive as a quoted line.
        let m = run(r#"--command="SET __key__ \"\xff\x00\"""#);
        assert_eq!(
            m.workload.phases[0].commands[0].args[2],
            Arg::Lit(vec![0xff, 0][..].into())
        );
        // Braces are sent as they are, in text and in binary arguments.
        let m = run(r#"--command="SET __key__ {value}" --command="SET {t} \"{x}\xff\"""#);
        let p = &m.workload.phases[0];
        assert_eq!(p.commands[0].args[2], Arg::Lit(b"{value}"[..].into()));
        assert_eq!(p.commands[0].args[1], Arg::Key);
        assert_eq!(p.commands[1].args[1], Arg::Lit(b"{t}"[..].into()));
        assert_eq!(p.commands[1].args[2], Arg::Lit(b"{x}\xff"[..].into()));
    }

    #[test]
    fn splits_commands_like_memtier() {
        let s = |t: &str| split_command(t).unwrap();
        assert_eq!(
            s(r#"SET "a b" 'c d'"#),
            [b"SET".to_vec(), b"a b".to_vec(), b"c d".to_vec()]
        );
        assert_eq!(s(r#"SET k"a b""#), [b"SET".to_vec(), b"ka b".to_vec()]);
        assert_eq!(s(r#"X "\x41\n\q""#)[1], b"A\nq".to_vec());
        assert!(split_command(r#"X "a"b"#).is_err());
        assert!(split_command("X 'open").is_err());
    }

    #[test]
    fn errors_name_the_option() {
        for (line, opt, text) in [
            ("--rate-limiting=0", "--rate-limiting", "1 or more"),
            (
                "--tls-protocols=TLSv1.1",
                "--tls-protocols",
                "TLS 1.0 or 1.1",
            ),
            ("--transaction", "--transaction", "rotation"),
            ("--wait-ratio=1:1", "--wait-ratio", "WAIT"),
            ("-P memcache_text", "-P", "RESP only"),
            ("--multi-key-get=5", "--multi-key-get", "not supported"),
            ("--data-offset=5", "--data-offset", "SETRANGE"),
            ("--expiry-range=5", "--expiry-range", "MIN-MAX"),
            ("--bogus", "--bogus", "not a memtier_benchmark option"),
            ("-q", "-q", "not a memtier_benchmark option"),
            ("--ratio=a:b", "--ratio", "`a:b`"),
            ("--ratio=0:0", "--ratio", "not both 0"),
            ("-c 0", "-c", "greater than zero"),
            ("--pipeline=2000", "--pipeline", "1 to 1024"),
            ("--key-pattern=X:R", "--key-pattern", "S, R, G, P, Z"),
            ("--key-pattern=P:R", "--key-pattern", "P:P"),
            ("--key-zipf-exp=5", "--key-zipf-exp", "(0, 5)"),
            ("--key-stddev=10", "--key-stddev", "key-pattern set to G"),
            ("-n 10 --test-time=5", "--test-time", "mutually exclusive"),
            ("--test-time=5 -n 10", "-n", "mutually exclusive"),
            ("--command-ratio=2", "--command-ratio", "no"),
            ("--command=SET --ratio=1:1", "--ratio", "--command-ratio"),
            ("--command=MULTI", "--command", "rotation"),
            ("--command='SET x__key__ 1'", "--command", "combined"),
            ("--command=__key__", "--command", "command name"),
            (
                "--command='SET __key__ 1' --command-key-pattern=P --command='GET __key__'",
                "--command-key-pattern",
                "every --command",
            ),
            (
                "-d 10 --data-size-range=1-5",
                "--data-size",
                "cannot be used",
            ),
            ("--key-minimum=10 --key-maximum=5", "--key-minimum", "above"),
            (
                "-S /tmp/s -p 7000",
                "--unix-socket",
                "cannot be used together",
            ),
            ("--hide-histogram=1", "--hide-histogram", "takes no value"),
            ("--key", "--key", "needs a value"),
            ("--data", "--data", "ambiguous"),
            ("stray", "stray", "unexpected argument"),
            ("-c", "-c", "needs a value"),
        ] {
            let e = err(line);
            assert!(
                e.contains(&format!("`{opt}`")) && e.contains(text),
                "{line}: {e}"
            );
        }
    }

    #[test]
    fn the_client_staircase_maps_to_a_connection_ramp() {
        let m =
            run("-c 10 -t 2 --clients-start=2 --clients-step=3 --step-duration=5 --test-time=30");
        let load = &m.workload.phases[0].spec.load;
        let ramp = load.connections_ramp.unwrap();
        // Per thread in memtier: 2 x 2 threads to start, 3 x 2 more per step.
        assert_eq!(
            (ramp.start, ramp.step, ramp.step_duration.0.as_secs()),
            (4, 6, 5)
        );
        assert_eq!(ramp.counts(load.connections), vec![4, 10, 16, 20]);
        assert_eq!(load.duration.map(|d| d.0.as_secs()), Some(30));
        let e = err("-c 10 --clients-start=2 --clients-step=3");
        assert!(
            e.contains("--clients-start") && e.contains("go together"),
            "{e}"
        );
        let e = err("-c 10 --clients-start=10 --clients-step=3 --step-duration=1");
        assert!(
            e.contains("--clients-start") && e.contains("less than --clients"),
            "{e}"
        );
        let e = err("--clients-start=2 --clients-step=0 --step-duration=1");
        assert!(e.contains("--clients-step") && e.contains("`0`"), "{e}");
    }

    #[test]
    fn tls_options_and_rate_limiting_map_to_the_spec() {
        let m = run("--tls --sni name --tls-skip-verify --tls-protocols=TLSv1.3 --rate-limiting=100 -c 5 -t 2");
        let s = &m.workload.phases[0].spec;
        let t = &s.target.tls;
        assert!(t.enabled && t.insecure);
        assert_eq!(
            (t.sni.as_deref(), t.versions.clone()),
            (Some("name"), vec!["1.3".to_string()])
        );
        // memtier's limit is per connection: 100 x 5 clients x 2 threads.
        assert_eq!(s.load.rate, Some(1000.0));
        assert!(
            run("--uri=rediss://127.0.0.1:1").workload.phases[0]
                .spec
                .target
                .tls
                .enabled
        );
        for (opt, field) in [("--cert", "cert"), ("--cacert", "ca_file")] {
            let e = err(&format!(
                "--tls {opt} /nonexistent/x.pem --key /nonexistent/k.pem"
            ));
            assert!(e.contains(&format!("target.tls.{field}")), "{e}");
        }
    }

    #[test]
    fn expiry_range_from_zero() {
        let v = |line: &str| run(line).workload.phases[0].spec.values.expiry;
        assert_eq!(v("--expiry-range=0-10"), Some([0, 10]));
        assert_eq!(v("--expiry-range=30-5"), Some([5, 30]));
        assert_eq!(v("--expiry-range=0-0"), None);
        // No SET of memtier's own to carry it: nothing to expire, and the line still runs.
        assert_eq!(v("--expiry-range=5-10 --ratio=0:1"), None);
        assert_eq!(v("--expiry-range=5-10 --command=\"GET __key__\""), None);
    }

    #[test]
    fn cluster_mode_sets_target_cluster() {
        let s = run("--cluster-mode -c 3 -t 2").workload.phases[0]
            .spec
            .clone();
        assert!(s.target.cluster);
        assert_eq!(s.load.connections, 6);
        assert!(!run("-c 3").workload.phases[0].spec.target.cluster);
    }

    #[test]
    fn credentials_uri_and_protocol() {
        let s = run("-a bob:sec:ret").workload.phases[0].spec.clone();
        assert_eq!(
            (s.target.user.as_deref(), s.target.password.as_deref()),
            (Some("bob"), Some("sec:ret"))
        );
        let s = run("-a :pa:ss").workload.phases[0].spec.clone();
        assert_eq!(
            (s.target.user.as_deref(), s.target.password.as_deref()),
            (None, Some("pa:ss"))
        );
        let s = run("-a pw --select-db=3 -P resp3").workload.phases[0]
            .spec
            .clone();
        assert_eq!(
            (s.target.password.as_deref(), s.target.db, s.target.protocol),
            (Some("pw"), 3, 3)
        );
        let s = run("--uri=redis://u:p@db.example:7001/2").workload.phases[0]
            .spec
            .clone();
        assert_eq!(s.target.host.as_deref(), Some("db.example"));
        assert_eq!((s.target.port, s.target.db), (Some(7001), 2));
        assert_eq!(
            (s.target.user.as_deref(), s.target.password.as_deref()),
            (Some("u"), Some("p"))
        );
        let m = run("-a secret --json-out-file=x.json");
        assert!(!m.options.config_text().contains("secret"));
    }

    #[test]
    fn sizes_expiry_and_patterns() {
        let s = run("--data-size-range=100-10 --data-size-pattern=S --expiry-range=60-30 --key-pattern=Z:S --key-zipf-exp=0.9").workload.phases[0].spec.clone();
        assert_eq!(s.values.size, ValueSize::Range([10, 100]));
        assert!(s.values.size_follows_key);
        assert_eq!(s.values.expiry, Some([30, 60]));
        assert_eq!(s.keys.writes, Some(Distribution::Zipf { exponent: 0.9 }));
        assert_eq!(s.keys.reads, Some(Distribution::Sequential));
        let s = run("--data-size-list=10:1,200:3").workload.phases[0]
            .spec
            .clone();
        assert_eq!(s.values.size, ValueSize::List(vec![[10, 1], [200, 3]]));
        let m = run("-n allkeys --key-minimum=1 --key-maximum=1000 -c 3 -t 2");
        assert_eq!(m.options.requests_per_client, Some(167));
    }
}
