//! `redis-benchmark` command lines (Redis 7.x) as respload workloads.
//!
//! ```
//! use respload::tools::redis_benchmark;
//! let rb = redis_benchmark::parse_line("redis-benchmark -t set,get -n 2000 -r 1000 -d 100 -q")?;
//! let names: Vec<&str> = rb.workload.phases.iter().map(|p| p.spec.name.as_str()).collect();
//! assert_eq!(names, ["SET", "GET"]);
//! assert_eq!(rb.workload.phases[0].spec.keys.pad, 12);
//! # Ok::<(), respload::Error>(())
//! ```
//!
//! Every test selected with `-t` (or every default test) becomes one measured phase of `-n`
//! requests, named as redis-benchmark names the test, in redis-benchmark's order. A command
//! given after the options becomes one phase named by the command line, each argument one
//! template argument. `docs/compat.md` lists every option and how it maps.

use super::dataset::Dataset;
use super::report::{Format, OutputOptions};
use crate::spec::{escape_literal, Target, MAX_VALUE_SIZE};
use crate::tools::command_line::{bad_value, split_tool_line, unknown_option, Options};
use crate::{Error, Result, Workload};
use serde_json::{json, Map, Value as Json};
use std::io::Read;

const TOOL: &str = "redis-benchmark";

/// valkey-benchmark: the same front end under Valkey's name (its extra options included).
const VALKEY_TOOL: &str = "valkey-benchmark";

/// The most bytes `-x` reads from standard input (redis-benchmark has no limit; the
/// argument is sent with every request).
pub const MAX_STDIN_ARG: usize = 512 * 1024 * 1024;

/// The placeholder redis-benchmark replaces with a 12-digit random number under `-r`.
pub const RAND_INT: &str = "__rand_int__";

/// Digits of the numbers that replace `__rand_int__`.
pub const RAND_WIDTH: u8 = 12;

/// A parsed redis-benchmark command line.
#[derive(Debug, Clone)]
pub struct RedisBenchmark {
    /// The workload: one phase per test (or one for the trailing command).
    pub workload: Workload,
    /// How to print the report (`-q`, `--csv`, `--precision`, `-l`, `--json`, ...).
    pub output: OutputOptions,
    /// Things redis-benchmark would warn about too (e.g. `-t` next to a command), for the
    /// caller to show; the library prints nothing.
    pub warnings: Vec<String>,
}

impl RedisBenchmark {
    /// The workload alone, for callers that run it themselves (the Python and Node
    /// bindings): an error for `-l`, which only the CLI can honour by running again and again.
    pub fn into_workload(self) -> Result<Workload> {
        if self.output.repeat {
            return Err(Error::spec(
                "-l",
                "redis-benchmark's -l (run the tests forever) is honoured by the respload CLI \
                 only (`respload redis-benchmark -l ...`); from code, run the workload in a loop",
            ));
        }
        Ok(self.workload)
    }
}

/// One of redis-benchmark's tests, in the order it runs them.
struct Test {
    /// The name in the output (and the phase name).
    title: &'static str,
    /// `-t` names that select it.
    selectors: &'static [&'static str],
}

const TESTS: &[Test] = &[
    Test {
        title: "PING_INLINE",
        selectors: &["ping_inline", "ping"],
    },
    Test {
        title: "PING_MBULK",
        selectors: &["ping_mbulk", "ping"],
    },
    Test {
        title: "SET",
        selectors: &["set"],
    },
    Test {
        title: "GET",
        selectors: &["get"],
    },
    Test {
        title: "INCR",
        selectors: &["incr"],
    },
    Test {
        title: "LPUSH",
        selectors: &["lpush"],
    },
    Test {
        title: "RPUSH",
        selectors: &["rpush"],
    },
    Test {
        title: "LPOP",
        selectors: &["lpop"],
    },
    Test {
        title: "RPOP",
        selectors: &["rpop"],
    },
    Test {
        title: "SADD",
        selectors: &["sadd"],
    },
    Test {
        title: "HSET",
        selectors: &["hset"],
    },
    Test {
        title: "SPOP",
        selectors: &["spop"],
    },
    Test {
        title: "ZADD",
        selectors: &["zadd"],
    },
    Test {
        title: "ZPOPMIN",
        selectors: &["zpopmin"],
    },
    Test {
        title: "LPUSH (needed to benchmark LRANGE)",
        selectors: &[
            "lrange",
            "lrange_100",
            "lrange_300",
            "lrange_500",
            "lrange_600",
        ],
    },
    Test {
        title: "LRANGE_100 (first 100 elements)",
        selectors: &["lrange", "lrange_100"],
    },
    Test {
        title: "LRANGE_300 (first 300 elements)",
        selectors: &["lrange", "lrange_300"],
    },
    Test {
        title: "LRANGE_500 (first 500 elements)",
        selectors: &["lrange", "lrange_500"],
    },
    Test {
        title: "LRANGE_600 (first 600 elements)",
        selectors: &["lrange", "lrange_600"],
    },
    Test {
        title: "MSET (10 keys)",
        selectors: &["mset"],
    },
];

/// The tests valkey-benchmark (8.x) runs after redis-benchmark's: in its default suite, and
/// selected with `-t` under either name.
const VALKEY_TESTS: &[Test] = &[
    Test {
        title: "XADD",
        selectors: &["xadd"],
    },
    Test {
        title: "FUNCTION LOAD",
        selectors: &["function_load"],
    },
    Test {
        title: "FCALL",
        selectors: &["fcall"],
    },
];

/// Which tool's command line: the options are the same, the default tests differ
/// (valkey-benchmark adds XADD, FUNCTION LOAD and FCALL).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tool {
    /// redis-benchmark 7.x.
    #[default]
    RedisBenchmark,
    /// valkey-benchmark.
    ValkeyBenchmark,
}

impl Tool {
    /// The tool's program name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::RedisBenchmark => TOOL,
            Tool::ValkeyBenchmark => VALKEY_TOOL,
        }
    }
}

/// The names `-t` accepts (case-insensitive).
pub const TEST_NAMES: &[&str] = &[
    "ping",
    "ping_inline",
    "ping_mbulk",
    "set",
    "get",
    "incr",
    "lpush",
    "rpush",
    "lpop",
    "rpop",
    "sadd",
    "hset",
    "spop",
    "zadd",
    "zpopmin",
    "lrange",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
    "mset",
    "xadd",
    "function_load",
    "fcall",
];

/// The longest `--duration` or `--warmup`, in seconds (a year).
const MAX_SECONDS: u64 = 31_536_000;

/// valkey-benchmark's options beyond redis-benchmark 7.0.
struct ValkeyArgs {
    /// `--duration`: seconds each test runs (instead of `-n` requests).
    duration: Option<u64>,
    /// `--warmup`: seconds of traffic before each test is measured.
    warmup: Option<u64>,
    /// `--rps`: requests per second in total; 0 is no limit.
    rps: u64,
    /// `--sequential`: `__rand_int__` takes the key numbers in turn instead of at random.
    sequential: bool,
    /// `--rfr`: `target.read_from` (`replica` for `yes`, `any` for `all`).
    read_from: Option<&'static str>,
    /// `--num-functions`: functions in the library the function_load test loads.
    functions: u32,
    /// `--num-keys-in-fcall`: keys the fcall test passes.
    fcall_keys: u32,
    /// `--dataset`: the file whose documents fill `__field:NAME__`.
    dataset: Option<String>,
    /// `--maxdocs`: at most this many documents of it.
    max_docs: Option<u64>,
}

impl Default for ValkeyArgs {
    fn default() -> Self {
        ValkeyArgs {
            duration: None,
            warmup: None,
            rps: 0,
            sequential: false,
            read_from: None,
            functions: 10,
            fcall_keys: 1,
            dataset: None,
            max_docs: None,
        }
    }
}

/// The most functions `--num-functions` may ask for (valkey-benchmark writes them into a
/// 64 KiB buffer, about 1,000).
const MAX_FUNCTIONS: u32 = 1000;

/// The Lua library the function_load and fcall tests load: `functions` functions `fooN`
/// (N from `functions` down to 1), each returning `keys[0]` when `with_keys`, else 0.
/// valkey-benchmark registers them with `server.register_function`; respload writes
/// `redis.register_function`, which Valkey reads too (`redis` is kept as an alias) and Redis
/// reads alone.
fn function_library(functions: u32, with_keys: bool) -> String {
    let mut lib = String::from("#!lua name=benchlib\n");
    for n in (1..=functions).rev() {
        let (params, body) = match with_keys {
            true => ("keys, args", "keys[0]"),
            false => ("", "0"),
        };
        lib.push_str(&format!(
            "local function foo{n}({params})\nreturn {body}\nend\n\
             redis.register_function('foo{n}', foo{n})\n"
        ));
    }
    lib
}

/// `-x`: the whole of standard input, as redis-benchmark reads it (a trailing newline
/// included), as the command's last argument: text, or any bytes.
enum StdinArg {
    /// UTF-8 text: an argument like the others (placeholders in it are replaced, as
    /// redis-benchmark replaces them in the whole command).
    Text(String),
    /// Other bytes, sent as they are.
    Bytes(Vec<u8>),
}

fn read_stdin_arg(stdin: Option<&mut dyn Read>) -> Result<StdinArg> {
    let Some(stdin) = stdin else {
        return Err(Error::spec(
            "-x",
            "-x reads the command's last argument from standard input, which only the respload \
             CLI reads (`respload redis-benchmark -x ...`); from code, give the argument on \
             the line",
        ));
    };
    let mut bytes = Vec::new();
    stdin
        .take(MAX_STDIN_ARG as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::spec("-x", format!("cannot read standard input: {e}")))?;
    if bytes.len() > MAX_STDIN_ARG {
        return Err(Error::spec(
            "-x",
            format!(
                "standard input holds more than {MAX_STDIN_ARG} bytes: allowed is up to 512 MiB"
            ),
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => StdinArg::Text(text),
        Err(e) => StdinArg::Bytes(e.into_bytes()),
    })
}

/// A command as a template line (each argument double-quoted, every byte outside printable
/// ASCII, `"` and `\` escaped as `\xHH`) with `tail`'s bytes as its last argument: how a
/// template carries bytes that are not text. `{` in `tail` stays literal.
fn line_with_bytes(args: &[String], tail: &[u8]) -> String {
    fn quote(out: &mut String, bytes: &[u8]) {
        out.push('"');
        for &b in bytes {
            match b {
                b'"' | b'\\' => out.push_str(&format!("\\x{b:02x}")),
                0x20..=0x7e => out.push(b as char),
                _ => out.push_str(&format!("\\x{b:02x}")),
            }
        }
        out.push('"');
    }
    let mut line = String::new();
    for arg in args {
        quote(&mut line, arg.as_bytes());
        line.push(' ');
    }
    let mut literal = Vec::with_capacity(tail.len());
    for &b in tail {
        match b {
            b'{' => literal.extend_from_slice(b"{lbrace}"),
            b => literal.push(b),
        }
    }
    quote(&mut line, &literal);
    line
}

/// Connection settings, applied in the order given (a later `-h` overrides `-u`'s host).
#[derive(Default)]
struct TargetArgs {
    host: Option<String>,
    port: Option<u16>,
    unix: Option<String>,
    user: Option<String>,
    password: Option<String>,
    db: Option<u32>,
    resp3: bool,
    /// `--enable-tracking`: CLIENT TRACKING ON on every load connection.
    tracking: bool,
    /// `--cluster`: `target.cluster`.
    cluster: bool,
    /// `--rfr`: `target.read_from`.
    read_from: Option<&'static str>,
    /// `--mptcp`: `target.mptcp`.
    mptcp: bool,
    /// `target.tls` fields from --tls, --cacert, --cacertdir, --cert, --key, --sni, --insecure.
    tls: Map<String, Json>,
}

impl TargetArgs {
    fn uri(&mut self, option: &str, uri: &str) -> Result<()> {
        // valkey-benchmark's schemes, the same as Redis's.
        if let Some(rest) = uri.strip_prefix("valkey://") {
            return self.uri(option, &format!("redis://{rest}"));
        }
        if let Some(rest) = uri
            .strip_prefix("valkeys://")
            .or(uri.strip_prefix("rediss://"))
        {
            self.tls.insert("enabled".into(), json!(true));
            return self.uri(option, &format!("redis://{rest}"));
        }
        let c = Target {
            url: Some(uri.to_string()),
            ..Target::default()
        }
        .resolve("")
        .map_err(|e| match e {
            Error::Spec { reason, .. } => Error::spec(option, reason),
            other => other,
        })?;
        match c.endpoint {
            crate::plan::Endpoint::Tcp { host, port } => {
                self.host = Some(host);
                self.port = Some(port);
            }
            crate::plan::Endpoint::Unix(path) => self.unix = Some(path),
        }
        if c.user.is_some() {
            self.user = c.user;
        }
        if c.password.is_some() {
            self.password = c.password;
        }
        self.db = Some(c.db);
        Ok(())
    }

    fn to_json(&self) -> Result<Json> {
        let mut t = Map::new();
        // redis-benchmark: "-s <socket> Server socket (overrides host and port)".
        if let Some(unix) = &self.unix {
            t.insert("unix".into(), json!(unix));
        } else {
            if let Some(host) = &self.host {
                t.insert("host".into(), json!(host));
            }
            if let Some(port) = self.port {
                t.insert("port".into(), json!(port));
            }
        }
        if let Some(user) = &self.user {
            if self.password.is_none() {
                return Err(Error::spec(
                    "--user",
                    "redis-benchmark's --user needs -a (the password): give both",
                ));
            }
            t.insert("user".into(), json!(user));
        }
        if let Some(password) = &self.password {
            t.insert("password".into(), json!(password));
        }
        if let Some(db) = self.db {
            t.insert("db".into(), json!(db));
        }
        if self.resp3 {
            t.insert("protocol".into(), json!(3));
        }
        if self.tracking {
            t.insert("tracking".into(), json!(true));
        }
        if self.cluster {
            t.insert("cluster".into(), json!(true));
        }
        if let Some(mode) = self.read_from {
            t.insert("read_from".into(), json!(mode));
        }
        if self.mptcp {
            t.insert("mptcp".into(), json!(true));
        }
        if !self.tls.is_empty() {
            t.insert("tls".into(), Json::Object(self.tls.clone()));
        }
        Ok(Json::Object(t))
    }
}

/// Parse a command line given as one string (split like a shell does; a leading
/// `redis-benchmark` or `valkey-benchmark` is skipped).
pub fn parse_line(line: &str) -> Result<RedisBenchmark> {
    let words = split_tool_line(line, TOOL)?;
    let tool = match words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) {
        Some(VALKEY_TOOL) => Tool::ValkeyBenchmark,
        _ => Tool::RedisBenchmark,
    };
    parse_tool_args(tool, &split_tool_line_args(words, VALKEY_TOOL)?, None)
}

fn split_tool_line_args(mut args: Vec<String>, program: &str) -> Result<Vec<String>> {
    let is_program = args.first().is_some_and(|first| {
        first == program || first.rsplit('/').next().is_some_and(|base| base == program)
    });
    if is_program {
        args.remove(0);
    }
    Ok(args)
}

/// Parse redis-benchmark's arguments (as after the program name). A line with `-x` and a
/// command is an error here, since the last argument would come from standard input: the
/// CLI reads it ([`parse_args_with_stdin`]).
pub fn parse_args(args: &[String]) -> Result<RedisBenchmark> {
    parse_tool_args(Tool::RedisBenchmark, args, None)
}

/// Parse redis-benchmark's arguments, reading the last argument of the command from `stdin`
/// when `-x` is given (and only then, as redis-benchmark does: without a command, `-x`
/// reads nothing).
pub fn parse_args_with_stdin(args: &[String], stdin: &mut dyn Read) -> Result<RedisBenchmark> {
    parse_tool_args(Tool::RedisBenchmark, args, Some(stdin))
}

/// Parse `tool`'s arguments, reading `-x`'s argument from `stdin` when given (see
/// [`parse_args`] and [`parse_args_with_stdin`]).
pub fn parse_tool_args(
    tool: Tool,
    args: &[String],
    stdin: Option<&mut dyn Read>,
) -> Result<RedisBenchmark> {
    let (spec, output, warnings) = build_tool_spec(tool, args, stdin)?;
    let workload = Workload::from_json_value(spec)?;
    Ok(RedisBenchmark {
        workload,
        output,
        warnings,
    })
}

/// The spec (as JSON, not validated yet), the output options and the warnings of a
/// redis-benchmark argument list (`-x` with a command is an error: see [`parse_args`]).
pub fn build_spec(args: &[String]) -> Result<(Json, OutputOptions, Vec<String>)> {
    build_tool_spec(Tool::RedisBenchmark, args, None)
}

/// [`build_spec`] for `tool`, reading `-x`'s argument from `stdin` when given.
pub fn build_tool_spec(
    tool: Tool,
    args: &[String],
    stdin: Option<&mut dyn Read>,
) -> Result<(Json, OutputOptions, Vec<String>)> {
    let mut o = Options::new(args);
    let mut target = TargetArgs::default();
    let mut output = OutputOptions::default();
    let mut warnings = Vec::new();
    let mut clients: u32 = 50;
    let mut requests: u64 = 100_000;
    let mut data_size: u32 = 3;
    let mut pipeline: u32 = 1;
    let mut threads: u32 = 0;
    let mut random: Option<u64> = None;
    let mut tests: Option<Vec<String>> = None;
    let mut seed: Option<u64> = None;
    let mut keepalive = true;
    let mut idle = false;
    let mut requests_given = false;
    let mut valkey = ValkeyArgs::default();
    let mut stdin_arg = false;
    while let Some(arg) = o.peek() {
        if !arg.starts_with('-') {
            break;
        }
        o.next_arg();
        match arg {
            // valkey-benchmark: `--` ends the options; what follows is the command.
            "--" => break,
            "-h" => target.host = Some(o.value(arg, "a host name or address")?.to_string()),
            "-p" => target.port = Some(o.int(arg, "a TCP port number", 1, u16::MAX)?),
            "-s" => target.unix = Some(o.value(arg, "a Unix socket path")?.to_string()),
            "-u" => {
                let uri = o.value(arg, "a URI redis://user:password@host:port/dbnum")?;
                target.uri(arg, uri)?;
            }
            "-a" => target.password = Some(o.value(arg, "a password")?.to_string()),
            "--user" => target.user = Some(o.value(arg, "an ACL user name")?.to_string()),
            "--dbnum" => target.db = Some(o.int(arg, "a database number", 0, u32::MAX)?),
            "-3" => target.resp3 = true,
            "-c" => clients = o.int(arg, "the number of parallel connections", 1, 1_000_000)?,
            "-n" => {
                requests = o.int(arg, "the number of requests", 1, u64::MAX)?;
                requests_given = true;
            }
            "-d" => data_size = o.int(arg, "the value size in bytes", 1, MAX_VALUE_SIZE)?,
            "-P" => pipeline = o.int(arg, "the number of requests to pipeline", 1, 100_000)?,
            "--threads" => threads = o.int(arg, "the number of threads", 0, 500)?,
            "-r" => {
                random = Some(o.int(arg, "the key space length", 0, u64::MAX - 1)?);
            }
            "-k" => match o.value(arg, "1 (keep alive) or 0 (reconnect)")? {
                "1" => keepalive = true,
                "0" => keepalive = false,
                other => return Err(bad_value(arg, other, "1 (keep alive) or 0 (reconnect)")),
            },
            "-t" => {
                let list = o.value(arg, "a comma-separated list of tests")?;
                tests = Some(parse_tests(list)?);
            }
            "--seed" => seed = Some(o.int(arg, "a seed number", 0, u64::MAX)?),
            "-q" => {
                if output.format != Format::Csv {
                    output.format = Format::Quiet;
                }
            }
            // redis-benchmark prints CSV when both -q and --csv are given.
            "--csv" => output.format = Format::Csv,
            "--precision" => output.precision = o.int(arg, "significant digits", 1, 4)?,
            "-l" => output.repeat = true,
            "--json" => output.json = Some(o.value(arg, "a file path")?.to_string()),
            // respload routes every request to the primary owning its key's slot; -c counts
            // connections per primary there (redis-benchmark spreads -c over the primaries).
            "--cluster" => target.cluster = true,
            "--tls" => {
                target.tls.insert("enabled".into(), json!(true));
            }
            "--insecure" => {
                target.tls.insert("insecure".into(), json!(true));
            }
            "--sni" | "--cacert" | "--cacertdir" | "--cert" | "--key" => {
                let field = match arg {
                    "--sni" => "sni",
                    "--cacert" => "ca_file",
                    "--cacertdir" => "ca_dir",
                    "--cert" => "cert",
                    _ => "key",
                };
                let v = o.value(arg, "a TLS setting")?;
                target.tls.insert(field.into(), json!(v));
            }
            "--tls-ciphers" | "--tls-ciphersuites" => {
                let list = o.value(arg, "a colon-separated list of OpenSSL cipher names")?;
                let field = match arg {
                    "--tls-ciphers" => "ciphers",
                    _ => "ciphersuites",
                };
                let names: Vec<String> = list.split(':').map(String::from).collect();
                // Checked here so that the error names the option.
                crate::plan::check_cipher_names(&names, field == "ciphersuites", arg)?;
                target.tls.insert(field.into(), json!(names));
            }
            "-I" => idle = true,
            // redis-benchmark 7.0: show the server's error replies (respload also counts them
            // by kind, with or without -e).
            "-e" => output.show_errors = true,
            "-x" => stdin_arg = true,
            "--duration" => {
                valkey.duration = Some(o.int(arg, "the seconds each test runs", 1, MAX_SECONDS)?)
            }
            "--warmup" => {
                valkey.warmup =
                    Some(o.int(arg, "the warm-up seconds of each test", 0, MAX_SECONDS)?)
            }
            "--rps" => {
                valkey.rps = o.int(
                    arg,
                    "requests per second in total (0: no limit)",
                    0,
                    100_000_000,
                )?
            }
            "--sequential" => valkey.sequential = true,
            "--mptcp" => target.mptcp = true,
            // Options of valkey-benchmark that respload has no counterpart for: errors, never
            // ignored.
            "--rdma" => {
                return Err(Error::spec(
                    arg,
                    "valkey-benchmark's --rdma (connections over RDMA) is not supported by \
                     respload, whose connections are TCP, TLS or Unix sockets; see docs/compat.md",
                ))
            }
            "--fuzz" | "--fuzz-mode" | "--fuzz-loglevel" => {
                return Err(Error::spec(
                    arg,
                    format!(
                        "valkey-benchmark's {arg} (fuzzing the server with random, possibly \
                         malformed commands) is not supported by respload, a load generator: \
                         see docs/compat.md"
                    ),
                ))
            }
            "--dataset" => valkey.dataset = Some(o.value(arg, "a CSV or TSV file")?.to_string()),
            "--maxdocs" => {
                valkey.max_docs =
                    Some(o.int(arg, "the documents read from --dataset", 1, u64::MAX)?)
            }
            "--num-functions" => {
                valkey.functions = o.int(
                    arg,
                    "the functions in the library of the function_load test",
                    1,
                    MAX_FUNCTIONS,
                )?
            }
            "--num-keys-in-fcall" => {
                valkey.fcall_keys =
                    o.int(arg, "the keys passed to FCALL in the fcall test", 0, 1000)?
            }
            "--rfr" => {
                let mode = o.value(arg, "no, yes or all")?;
                valkey.read_from = match mode {
                    "no" => None,
                    "yes" => Some("replica"),
                    "all" => Some("any"),
                    other => return Err(bad_value(
                        arg,
                        other,
                        "no (reads from primaries), yes (from replicas) or all (from every node)",
                    )),
                };
            }
            "--enable-tracking" => target.tracking = true,
            "--help" | "-v" | "--version" => {
                let name = tool.name();
                return Err(Error::spec(
                    arg,
                    format!(
                        "{arg} is not part of `respload {name}`: see `respload help {name}` \
                         and docs/compat.md"
                    ),
                ));
            }
            _ => return Err(unknown_option(tool.name(), arg)),
        }
    }
    let mut command = o.rest().to_vec();
    // Bytes of -x that are not text: the last argument, apart from `command`.
    let mut stdin_bytes: Option<Vec<u8>> = None;
    if stdin_arg && !command.is_empty() {
        match read_stdin_arg(stdin)? {
            StdinArg::Text(text) => command.push(text),
            StdinArg::Bytes(bytes) => stdin_bytes = Some(bytes),
        }
    }
    let cluster = target.cluster;
    if valkey.dataset.is_some() && command.is_empty() {
        return Err(Error::spec(
            "--dataset",
            "valkey-benchmark's --dataset fills the `__field:NAME__` placeholders of a command \
             given after the options: give one, e.g. `-- HSET doc:__rand_int__ title \
             __field:title__`",
        ));
    }
    if valkey.max_docs.is_some() && valkey.dataset.is_none() {
        return Err(Error::spec(
            "--maxdocs",
            "--maxdocs limits --dataset: give the dataset too",
        ));
    }
    if valkey.duration.is_some() && requests_given {
        return Err(Error::spec(
            "--duration",
            "valkey-benchmark's --duration and -n exclude each other: give one of them",
        ));
    }
    if let Some(mode) = valkey.read_from {
        if !cluster {
            return Err(Error::spec(
                "--rfr",
                "valkey-benchmark's --rfr (reads from replicas) needs --cluster",
            ));
        }
        target.read_from = Some(mode);
    }

    let mut base = Map::new();
    base.insert("target".into(), target.to_json()?);
    let mut load = json!({
        "connections": clients,
        // Without --threads redis-benchmark runs one event loop on one thread.
        "threads": threads.max(1),
        "pipeline": pipeline,
        "requests": requests,
    });
    if !keepalive {
        load["keepalive"] = json!(false);
    }
    if let Some(seconds) = valkey.duration {
        load["duration"] = json!(format!("{seconds}s"));
        if let Some(l) = load.as_object_mut() {
            l.remove("requests");
        }
    }
    if let Some(seconds) = valkey.warmup.filter(|s| *s > 0) {
        load["warmup"] = json!(format!("{seconds}s"));
    }
    // valkey-benchmark's --rps: a token bucket that holds every client back; respload sends
    // on a schedule instead (open loop, latency from each request's intended send time).
    if valkey.rps > 0 {
        load["rate"] = json!(valkey.rps);
    }
    // redis-benchmark sends `-P` requests and the next `-P` only once all their replies are
    // in (in cluster mode, per node connection): the same traffic, each request still timed
    // to its own reply.
    if pipeline > 1 && valkey.rps == 0 {
        load["refill"] = json!("batch");
    }
    if idle {
        // -I: the connections are opened and held until Ctrl-C; tests and -n do not apply.
        load = json!({ "connections": clients, "threads": threads.max(1), "idle": true });
        output.idle = Some(clients);
    }
    base.insert("load".into(), load);
    if let Some(r) = random {
        base.insert(
            "keys".into(),
            json!({
                "prefix": "key:",
                "pad": RAND_WIDTH,
                "range": [0, r.max(1) - 1],
                "distribution": if valkey.sequential { "sequential" } else { "uniform" },
            }),
        );
    }
    // redis-benchmark 7.x sends one pseudo-random string of -d letters, digits and signs
    // (the same in every request); random data has its size and, what the server can tell
    // (RDB/AOF compression), its incompressibility. `fixed` would be `x` repeated, as older
    // redis-benchmark versions sent, and compresses to almost nothing.
    base.insert(
        "values".into(),
        json!({ "size": data_size, "data": "random" }),
    );
    if let Some(seed) = seed {
        base.insert("seed".into(), json!(seed));
    }

    let phases = if idle {
        vec![json!({ "name": "IDLE", "commands": [{ "name": "ping" }] })]
    } else if command.is_empty() {
        output.payload_bytes = data_size as u64;
        let selected: Vec<&Test> = TESTS
            .iter()
            .chain(VALKEY_TESTS)
            .filter(|t| match &tests {
                None => {
                    tool == Tool::ValkeyBenchmark
                        || !VALKEY_TESTS.iter().any(|v| v.title == t.title)
                }
                Some(names) => t.selectors.iter().any(|s| names.iter().any(|n| n == s)),
            })
            .collect();
        let mut phases = Vec::new();
        for t in selected {
            match t.title {
                "FUNCTION LOAD" => phases.push(json!({
                    "name": t.title,
                    "commands": [{ "template": [
                        "FUNCTION", "LOAD", "REPLACE",
                        escape_literal(&function_library(valkey.functions, false)),
                    ] }],
                })),
                "FCALL" => phases.extend(fcall_phases(valkey.fcall_keys)),
                _ if cluster => phases.push(cluster_test_phase(t, random, valkey.sequential)),
                _ => phases.push(test_phase(t, random)),
            }
        }
        phases
    } else {
        if tests.is_some() {
            warnings.push("WARNING: Option -t is ignored.".to_string());
        }
        output.command_line = true;
        let tail_bytes = stdin_bytes.as_ref().map_or(0, |b| {
            let digits = b.len().to_string().len() as u64;
            1 + digits + 2 + b.len() as u64 + 2
        });
        output.payload_bytes = command_sequence(&command)?
            .iter()
            .map(|(times, words)| *times as u64 * resp_length(words))
            .sum::<u64>()
            + tail_bytes;
        let dataset = match &valkey.dataset {
            Some(path) => Some(Dataset::read(path, valkey.max_docs)?),
            None => None,
        };
        vec![command_phase(
            &command,
            random,
            cluster,
            valkey.sequential,
            dataset.as_ref(),
            stdin_bytes.as_deref(),
        )?]
    };
    if phases.is_empty() {
        return Err(Error::spec("-t", "selects no test"));
    }
    base.insert("phases".into(), Json::Array(phases));
    output.threads = (threads > 0).then_some(threads);
    Ok((Json::Object(base), output, warnings))
}

fn parse_tests(list: &str) -> Result<Vec<String>> {
    let names: Vec<String> = list
        .split(',')
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    if let Some(bad) = names.iter().find(|n| !TEST_NAMES.contains(&n.as_str())) {
        return Err(Error::spec(
            "-t",
            format!(
                "`{bad}` (in `-t {list}`) is not a redis-benchmark test: allowed are {} \
                 (case-insensitive, comma-separated); for any other command give it after \
                 the options, e.g. `redis-benchmark -n 1000 hset h f v`",
                TEST_NAMES.join(", ")
            ),
        ));
    }
    if names.is_empty() {
        return Err(bad_value(
            "-t",
            list,
            "a comma-separated list of tests, e.g. set,get",
        ));
    }
    Ok(names)
}

/// The phase of one default test. Without `-r`, redis-benchmark's keys are the literal
/// `key:__rand_int__` (one key): templates with that literal word. With `-r N`, the
/// built-ins over `[keys]` `key:` + 12 digits in `[0, N-1]`.
fn test_phase(test: &Test, random: Option<u64>) -> Json {
    let builtin = |name: &str| json!([{ "name": name }]);
    let template = |t: &str| json!([{ "template": t }]);
    let mut phase = json!({ "name": test.title });
    let commands = match (test.title, random) {
        ("PING_INLINE" | "PING_MBULK", _) => builtin("ping"),
        ("SET", Some(_)) => builtin("set"),
        ("SET", None) => template("SET key:__rand_int__ {value}"),
        ("GET", Some(_)) => builtin("get"),
        ("GET", None) => template("GET key:__rand_int__"),
        ("INCR", Some(_)) => builtin("incr"),
        ("INCR", None) => template("INCR counter:__rand_int__"),
        ("SADD", Some(_)) => builtin("sadd"),
        ("SADD", None) => template("SADD myset element:__rand_int__"),
        ("HSET", Some(_)) => builtin("hset"),
        ("HSET", None) => template("HSET myhash element:__rand_int__ {value}"),
        // ZADD draws its score and its member independently (two __rand_int__): the score a
        // padded random number, the member `element:` + the request's key number.
        ("ZADD", Some(r)) => json!([{ "template": [
            "ZADD",
            "myzset",
            rand_placeholder(r),
            "element:{keynum}",
        ] }]),
        ("ZADD", None) => template("ZADD myzset 0 element:__rand_int__"),
        ("MSET (10 keys)", Some(_)) => builtin("mset"),
        ("MSET (10 keys)", None) => {
            template(&format!("MSET{}", " key:__rand_int__ {value}".repeat(10)))
        }
        ("LPUSH (needed to benchmark LRANGE)", _) => builtin("lpush"),
        ("XADD", _) => template("XADD mystream * myfield {value}"),
        (title, _) => {
            // LPUSH, RPUSH, LPOP, RPOP, SPOP, ZPOPMIN, LRANGE_N: fixed keys, same built-in.
            let name = title
                .split(' ')
                .next()
                .unwrap_or(title)
                .to_ascii_lowercase();
            builtin(&name)
        }
    };
    phase["commands"] = commands;
    phase
}

/// The phase of one default test with `--cluster`: redis-benchmark's cluster forms of its
/// commands, each key carrying a hash tag of the client's own node (`key:{tag}:__rand_int__`,
/// `mylist:{tag}`): every client talks to one primary, the clients spread over the primaries,
/// and the keys over each primary's slots. Under `-r N` each `__rand_int__` is its own
/// random number, as redis-benchmark draws them.
fn cluster_test_phase(test: &Test, random: Option<u64>, sequential: bool) -> Json {
    // --sequential: each `__rand_int__` takes the next number of its own counter.
    let r = || match random {
        Some(_) if sequential => "{draw}".to_string(),
        Some(r) => rand_placeholder(r),
        None => RAND_INT.to_string(),
    };
    let t = match test.title {
        "PING_INLINE" | "PING_MBULK" => return test_phase(test, random),
        "SET" => format!("SET key:{{node_tag}}:{} {{value}}", r()),
        "GET" => format!("GET key:{{node_tag}}:{}", r()),
        "INCR" => format!("INCR counter:{{node_tag}}:{}", r()),
        "LPUSH" | "LPUSH (needed to benchmark LRANGE)" => "LPUSH mylist:{node_tag} {value}".into(),
        "RPUSH" => "RPUSH mylist:{node_tag} {value}".into(),
        "LPOP" => "LPOP mylist:{node_tag}".into(),
        "RPOP" => "RPOP mylist:{node_tag}".into(),
        "SADD" => format!("SADD myset:{{node_tag}} element:{}", r()),
        "HSET" => format!("HSET myhash:{{node_tag}} element:{} {{value}}", r()),
        "SPOP" => "SPOP myset:{node_tag}".into(),
        "ZADD" => match random {
            Some(_) => format!("ZADD myzset:{{node_tag}} {} element:{}", r(), r()),
            None => format!("ZADD myzset:{{node_tag}} 0 element:{RAND_INT}"),
        },
        "ZPOPMIN" => "ZPOPMIN myzset:{node_tag}".into(),
        "XADD" => "XADD mystream:{node_tag} * myfield {value}".into(),
        "MSET (10 keys)" => format!(
            "MSET{}",
            (0..10)
                .map(|_| format!(" key:{{node_tag}}:{} {{value}}", r()))
                .collect::<String>()
        ),
        title => {
            // LRANGE_N: the first N elements.
            let n: u32 = title
                .strip_prefix("LRANGE_")
                .and_then(|t| t.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(100);
            format!("LRANGE mylist:{{node_tag}} 0 {}", n - 1)
        }
    };
    json!({ "name": test.title, "commands": [{ "template": t }] })
}

/// valkey-benchmark's fcall test: the one-function library loaded first, by one request of
/// one connection (not measured, as valkey-benchmark loads it before the test), then
/// `FCALL foo1 K key1 ... keyK`.
fn fcall_phases(keys: u32) -> [Json; 2] {
    let library = escape_literal(&function_library(1, keys > 0));
    let mut fcall = vec!["FCALL".to_string(), "foo1".into(), keys.to_string()];
    fcall.extend((1..=keys).map(|k| format!("key{k}")));
    [
        json!({
            "name": "FCALL (load its function)",
            "measured": false,
            "load": { "requests": 1, "connections": 1, "pipeline": 1, "refill": "eager",
                      "duration": null, "warmup": null, "rate": null },
            "commands": [{ "template": ["FUNCTION", "LOAD", "REPLACE", library] }],
        }),
        json!({ "name": "FCALL", "commands": [{ "template": fcall }] }),
    ]
}

/// `{rand:0..N-1:12}`: what `__rand_int__` becomes under `-r N`.
fn rand_placeholder(r: u64) -> String {
    format!("{{rand:0..{}:{RAND_WIDTH}}}", r.max(1) - 1)
}

/// valkey-benchmark's placeholders beside `__rand_int__`: `__rand_1st__` ... `__rand_9th__`
/// (one number per request, the same in each of its occurrences).
pub const RAND_NTH: [&str; 9] = [
    "__rand_1st__",
    "__rand_2nd__",
    "__rand_3rd__",
    "__rand_4th__",
    "__rand_5th__",
    "__rand_6th__",
    "__rand_7th__",
    "__rand_8th__",
    "__rand_9th__",
];

/// valkey-benchmark's placeholder for `-d` bytes of data.
pub const DATA: &str = "__data__";

/// The phase of a command given on the command line: each argument one template argument.
/// Under `-r` every `__rand_int__` inside an argument becomes its own 12-digit random number
/// and each `__rand_1st__` ... `__rand_9th__` one number per request (`{draw1}` ...); with
/// `--sequential` they take the key numbers in turn, each placeholder on its own counter as
/// in valkey-benchmark. `__data__` becomes `-d` bytes of data. With `--cluster` every `{tag}`
/// becomes the hash tag of the client's node, as redis-benchmark replaces it.
fn command_phase(
    command: &[String],
    random: Option<u64>,
    cluster: bool,
    sequential: bool,
    dataset: Option<&Dataset>,
    stdin_bytes: Option<&[u8]>,
) -> Result<Json> {
    let steps = command_sequence(command)?;
    let mut name = command.join(" ");
    if let Some(bytes) = stdin_bytes {
        name = format!("{name} {}", String::from_utf8_lossy(bytes));
    }
    // The last command ends with -x's bytes, when they are not text.
    let last = steps.len() - 1;
    let step_json = |i: usize, args: Vec<String>| match (stdin_bytes, i == last) {
        (Some(bytes), true) => json!(line_with_bytes(&args, bytes)),
        _ => json!(args),
    };
    if let ([(1, only)], None) = (steps.as_slice(), dataset) {
        let template = step_json(0, command_template(only, random, cluster, sequential));
        return Ok(json!({ "name": name, "commands": [{ "template": template }] }));
    }
    // valkey-benchmark's `A ; N B`: the commands in turn, each a request (as -n counts
    // them), the connections walking the sequence together; with --dataset, the sequence
    // once per document, in the file's order.
    let templates: Vec<(u32, Vec<String>)> = steps
        .iter()
        .map(|(times, words)| (*times, command_template(words, random, cluster, sequential)))
        .collect();
    let per_round: usize = steps.iter().map(|(times, _)| *times as usize).sum();
    let rounds = dataset.map_or(1, |d| d.rows.len());
    if per_round.saturating_mul(rounds) > MAX_SEQUENCE {
        return Err(Error::spec(
            if dataset.is_some() {
                "--maxdocs"
            } else {
                "COMMAND"
            },
            format!(
                "the command sequence has {} commands with its repeats{}: allowed are at most \
                 {MAX_SEQUENCE}{}",
                per_round.saturating_mul(rounds),
                if dataset.is_some() {
                    format!(", for {rounds} documents")
                } else {
                    String::new()
                },
                if dataset.is_some() {
                    " (limit the documents with --maxdocs)"
                } else {
                    ""
                },
            ),
        ));
    }
    let mut chain = Vec::with_capacity(per_round * rounds);
    for round in 0..rounds {
        for (i, (times, template)) in templates.iter().enumerate() {
            let step = match dataset {
                Some(d) => template
                    .iter()
                    .map(|arg| d.fill(arg, round, escape_literal))
                    .collect::<Result<Vec<String>>>()?,
                None => template.clone(),
            };
            chain.extend(std::iter::repeat_n(step_json(i, step), *times as usize));
        }
    }
    Ok(json!({
        "name": name,
        "commands": [{ "chain": chain, "pick": "sequential" }],
    }))
}

/// The most commands a `;` sequence may hold, repeats counted.
const MAX_SEQUENCE: usize = 65_535;

/// A command line split at its `;` arguments into commands, each with its repeat count
/// (valkey-benchmark: `incr foo ; 3 incr bar`, a leading number repeats a command).
fn command_sequence(command: &[String]) -> Result<Vec<(u32, &[String])>> {
    let mut steps = Vec::new();
    for words in command.split(|w| w == ";") {
        let (times, words) = match words {
            [n, rest @ ..] if !rest.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                let times = n.parse::<u32>().ok().filter(|t| (1..=65_535).contains(t));
                let Some(times) = times else {
                    return Err(bad_value(
                        "COMMAND",
                        n,
                        "a repeat count before a command, a whole number from 1 to 65535",
                    ));
                };
                (times, rest)
            }
            _ => (1, words),
        };
        if words.is_empty() {
            return Err(Error::spec(
                "COMMAND",
                format!(
                    "`{}` has an empty command between `;`: give a command on each side",
                    command.join(" ")
                ),
            ));
        }
        steps.push((times, words));
    }
    Ok(steps)
}

/// The template arguments of one command given on the line (see [`command_phase`]).
fn command_template(
    command: &[String],
    random: Option<u64>,
    cluster: bool,
    sequential: bool,
) -> Vec<String> {
    let mut args = Vec::with_capacity(command.len());
    for arg in command {
        // Braces are sent as they are (hash tags, JSON, `{key}` text): escaped first, so
        // that only the placeholders change.
        let mut arg = escape_literal(arg);
        if cluster {
            arg = arg.replace("{lbrace}tag}", "{node_tag}");
        }
        arg = arg.replace(DATA, "{value}");
        let Some(r) = random else {
            args.push(arg);
            continue;
        };
        let mut out = String::with_capacity(arg.len());
        let mut rest = arg.as_str();
        while let Some(at) = rest.find("__rand_") {
            out.push_str(&rest[..at]);
            let tail = &rest[at..];
            let found = std::iter::once(RAND_INT)
                .chain(RAND_NTH)
                .enumerate()
                .find(|(_, p)| tail.starts_with(p));
            let Some((n, name)) = found else {
                out.push_str("__rand_");
                rest = &tail["__rand_".len()..];
                continue;
            };
            // --sequential: `{draw}` counts on its own, not on the request's key.
            let replacement = match n {
                0 if sequential => "{draw}".into(),
                0 => rand_placeholder(r),
                n => format!("{{draw{n}}}"),
            };
            out.push_str(&replacement);
            rest = &tail[name.len()..];
        }
        out.push_str(rest);
        args.push(out);
    }
    args
}

/// Bytes of the command in RESP, which redis-benchmark reports as the payload of a command
/// given on the command line.
fn resp_length(command: &[String]) -> u64 {
    let digits = |n: usize| n.to_string().len() as u64;
    let mut len = 1 + digits(command.len()) + 2;
    for arg in command {
        len += 1 + digits(arg.len()) + 2 + arg.len() as u64 + 2;
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Arg, Distribution, Part, Refill, Requests, Template, ValueData};

    fn parse(line: &str) -> RedisBenchmark {
        parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    fn err(line: &str) -> String {
        parse_line(line).map(|_| ()).expect_err(line).to_string()
    }

    fn names(rb: &RedisBenchmark) -> Vec<String> {
        rb.workload
            .phases
            .iter()
            .map(|p| p.spec.name.clone())
            .collect()
    }

    #[test]
    fn defaults_are_redis_benchmarks() {
        let rb = parse("redis-benchmark");
        assert_eq!(
            names(&rb),
            TESTS.iter().map(|t| t.title).collect::<Vec<_>>()
        );
        let p = &rb.workload.phases[2].spec;
        assert_eq!(p.name, "SET");
        assert_eq!(
            (
                p.load.connections,
                p.load.requests,
                p.load.pipeline,
                p.load.threads
            ),
            (50, Some(Requests::Count(100_000)), 1, Some(1))
        );
        assert_eq!(p.values.size, crate::spec::ValueSize::Fixed(3));
        assert_eq!(p.values.data, ValueData::Random);
        assert!(p.seed.is_none());
        assert_eq!(p.target.host, None);
        assert_eq!(p.target.port, None);
        // Without -r every request uses the one key `key:__rand_int__`.
        assert_eq!(
            p.commands[0].template,
            Some(Template::Line("SET key:__rand_int__ {value}".into()))
        );
        let o = &rb.output;
        assert_eq!(
            (o.format, o.precision, o.repeat, o.payload_bytes),
            (Format::Default, 3, false, 3)
        );
        assert!(!o.command_line && o.threads.is_none() && o.json.is_none());
    }

    #[test]
    fn tests_are_selected_case_insensitively_in_redis_benchmarks_order() {
        let rb = parse("-t GET,Set,lrange_300,PING");
        assert_eq!(
            names(&rb),
            [
                "PING_INLINE",
                "PING_MBULK",
                "SET",
                "GET",
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
        let rb = parse("-t lrange");
        assert_eq!(rb.workload.phases.len(), 5);
        let lrange = &rb.workload.phases[4].commands[0];
        assert_eq!(lrange.label, "LRANGE_600");
        assert_eq!(
            parse("-t mset").workload.phases[0].spec.name,
            "MSET (10 keys)"
        );
        let e = err("-t set,mget");
        assert!(
            e.contains("`-t`") && e.contains("`mget`") && e.contains("lrange_100"),
            "{e}"
        );
        assert!(err("-t ,").contains("`-t`"));
    }

    #[test]
    fn random_keys_map_to_padded_key_ranges() {
        let rb = parse("-t set,get,incr,zadd,mset -r 1000 -n 2000 -d 100");
        for p in &rb.workload.phases {
            let k = &p.spec.keys;
            assert_eq!(
                (k.pad, k.range, k.distribution.clone()),
                (12, [0, 999], Distribution::Uniform)
            );
            assert_eq!(p.spec.load.requests, Some(Requests::Count(2000)));
            assert_eq!(p.spec.values.size, crate::spec::ValueSize::Fixed(100));
        }
        let p = &rb.workload.phases;
        assert_eq!(p[0].spec.commands[0].name.as_deref(), Some("set"));
        assert_eq!(p[0].spec.keys.prefix, "key:");
        assert_eq!(p[2].spec.commands[0].name.as_deref(), Some("incr"));
        let zadd = ["ZADD", "myzset", "{rand:0..999:12}", "element:{keynum}"];
        assert_eq!(
            p[3].spec.commands[0].template,
            Some(Template::Args(zadd.map(String::from).to_vec()))
        );
        assert_eq!(p[4].spec.commands[0].name.as_deref(), Some("mset"));
        // -r 0: redis-benchmark replaces __rand_int__ by 000000000000.
        let rb = parse("-t set -r 0");
        assert_eq!(rb.workload.phases[0].spec.keys.range, [0, 0]);
    }

    #[test]
    fn target_options_map_in_order() {
        let rb = parse("-h cache.example -p 6380 -a 'pw d' --user bob --dbnum 3 -3");
        let t = &rb.workload.phases[0].spec.target;
        assert!(!t.tracking);
        assert_eq!(t.host.as_deref(), Some("cache.example"));
        assert_eq!(t.port, Some(6380));
        assert_eq!(
            (t.user.as_deref(), t.password.as_deref()),
            (Some("bob"), Some("pw d"))
        );
        assert_eq!((t.db, t.protocol), (3, 3));
        let rb = parse("--enable-tracking -3");
        assert!(rb.workload.phases[0].spec.target.tracking);
        // -u, then -p overrides its port.
        let rb = parse("-u redis://alice:s3cret@10.0.0.1:7000/2 -p 7001");
        let t = &rb.workload.phases[0].spec.target;
        assert_eq!(
            (t.host.as_deref(), t.port, t.db),
            (Some("10.0.0.1"), Some(7001), 2)
        );
        assert_eq!(
            (t.user.as_deref(), t.password.as_deref()),
            (Some("alice"), Some("s3cret"))
        );
        // -s overrides host and port.
        let rb = parse("-h x -p 1 -s /tmp/r.sock");
        let c = &rb.workload.phases[0].connect;
        assert_eq!(
            c.endpoint,
            crate::plan::Endpoint::Unix("/tmp/r.sock".into())
        );
        assert!(err("--user bob").contains("needs -a"));
        let e = err("-u http://x");
        assert!(e.contains("`-u`") && e.contains("http://x"), "{e}");
    }

    #[test]
    fn load_and_output_options() {
        let rb = parse("-c 4 -n 10 -P 50 --threads 2 --seed 7 -q --precision 2 --json r.json -l");
        let p = &rb.workload.phases[0].spec;
        assert_eq!(
            (
                p.load.connections,
                p.load.requests,
                p.load.pipeline,
                p.load.threads,
                p.seed
            ),
            (4, Some(Requests::Count(10)), 50, Some(2), Some(7))
        );
        // -P sends batches, as redis-benchmark does, in cluster mode too; not without -P.
        assert_eq!(p.load.refill, Refill::Batch);
        let single = parse("-c 4");
        assert_eq!(single.workload.phases[0].spec.load.refill, Refill::Eager);
        let cluster = parse("-P 50 --cluster");
        assert_eq!(cluster.workload.phases[0].spec.load.refill, Refill::Batch);
        // --cluster: every test's keys carry the client's node tag, as redis-benchmark's do;
        // the clients are bound to the primaries in turn.
        let template = |line: &str, phase: usize| {
            let rb = parse(line);
            let p = &rb.workload.phases[phase];
            assert!(p.binds_connections_to_nodes() || p.spec.name.starts_with("PING"));
            p.spec.commands[0].template.clone()
        };
        assert_eq!(
            template("-t get --cluster", 0),
            Some(Template::Line("GET key:{node_tag}:__rand_int__".into()))
        );
        assert_eq!(
            template("-t mset --cluster -r 5", 0),
            Some(Template::Line(format!(
                "MSET{}",
                " key:{node_tag}:{rand:0..4:12} {value}".repeat(10)
            )))
        );
        assert_eq!(
            template("-t lrange_300 --cluster", 1),
            Some(Template::Line("LRANGE mylist:{node_tag} 0 299".into()))
        );
        assert_eq!(template("-t ping --cluster", 0), None);
        for rb in [parse("--cluster"), parse("--cluster -r 100")] {
            assert_eq!(rb.workload.phases.len(), TESTS.len());
            for p in &rb.workload.phases[2..] {
                assert!(p.binds_connections_to_nodes(), "{}", p.spec.name);
            }
        }
        assert!(!parse("-t get").workload.phases[0].binds_connections_to_nodes());
        let o = &rb.output;
        assert_eq!((o.format, o.precision, o.repeat), (Format::Quiet, 2, true));
        assert_eq!((o.threads, o.json.as_deref()), (Some(2), Some("r.json")));
        assert!(parse("--csv -q").output.format == Format::Csv);
        assert!(parse("-q --csv").output.format == Format::Csv);
        let e = parse("-l").into_workload().unwrap_err().to_string();
        assert!(e.contains("-l") && e.contains("CLI"), "{e}");
        assert!(parse("-q").into_workload().is_ok());
    }

    #[test]
    fn bad_values_name_the_option_the_value_and_what_is_allowed() {
        for (line, option, value, allowed) in [
            ("-c 0", "-c", "0", "1 to 1000000"),
            ("-c many", "-c", "many", "1 to 1000000"),
            ("-n -5", "-n", "-5", "1 to"),
            ("-d 0", "-d", "0", "1 to 536870912"),
            ("-P 0", "-P", "0", "1 to 100000"),
            ("-p 70000", "-p", "70000", "1 to 65535"),
            ("-r -1", "-r", "-1", "0 to"),
            ("--threads 501", "--threads", "501", "0 to 500"),
            ("--precision 0", "--precision", "0", "1 to 4"),
            ("-k 2", "-k", "2", "1 (keep alive) or 0"),
            ("--dbnum x", "--dbnum", "x", "0 to"),
        ] {
            let e = err(line);
            assert!(
                e.contains(&format!("`{option}`"))
                    && e.contains(&format!("`{value}`"))
                    && e.contains(allowed),
                "{line}: {e}"
            );
        }
        let e = err("-t set -c");
        assert!(e.contains("-c needs a value"), "{e}");
    }

    #[test]
    fn tls_options_map_to_target_tls() {
        let args: Vec<String> = "--tls --cacert ca.pem --cacertdir d --cert c.pem --key k.pem --sni name --insecure -t get"
            .split(' ')
            .map(String::from)
            .collect();
        let (spec, _, _) = build_spec(&args).unwrap();
        let tls = &spec["phases"][0]["target"]["tls"];
        let tls = if tls.is_null() {
            &spec["target"]["tls"]
        } else {
            tls
        };
        assert_eq!(
            *tls,
            json!({ "enabled": true, "ca_file": "ca.pem", "ca_dir": "d", "cert": "c.pem",
                    "key": "k.pem", "sni": "name", "insecure": true })
        );
        let args = vec!["-u".to_string(), "rediss://127.0.0.1:6380".to_string()];
        let (spec, _, _) = build_spec(&args).unwrap();
        assert_eq!(spec["target"]["tls"]["enabled"], json!(true));
        assert_eq!(spec["target"]["port"], json!(6380));
    }

    #[test]
    fn keepalive_off_and_idle_connections() {
        let rb = parse("-k 0 -c 7 -t get");
        let load = &rb.workload.phases[0].spec.load;
        assert!(!load.keepalive);
        assert!(parse("-k 1 -t get").workload.phases[0].spec.load.keepalive);
        let rb = parse("-I -c 7 -n 5 -t get");
        assert_eq!(rb.output.idle, Some(7));
        let p = &rb.workload.phases[0];
        assert_eq!(rb.workload.phases.len(), 1);
        assert!(p.spec.load.idle && p.spec.load.duration.is_none());
        assert_eq!(p.spec.load.connections, 7);
    }

    #[test]
    fn unknown_options_are_errors() {
        let (spec, _, _) = build_spec(&["--cluster".to_string()]).unwrap();
        let cluster = &spec["target"]["cluster"];
        let cluster = if cluster.is_null() {
            &spec["phases"][0]["target"]["cluster"]
        } else {
            cluster
        };
        assert_eq!(*cluster, json!(true));
        let e = err("--bogus 1");
        assert!(
            e.contains("unknown redis-benchmark option `--bogus`"),
            "{e}"
        );
        assert!(err("--help").contains("respload help redis-benchmark"));
        assert!(err("--version").contains("--version"));
        assert!(err("valkey-benchmark --help").contains("respload help valkey-benchmark"));
        assert!(err("valkey-benchmark --bogus").contains("unknown valkey-benchmark option"));
    }

    /// The spec of a line, before validation (templates in list form are checked by the
    /// spec, see the integration tests).
    fn spec_of(line: &str) -> (Json, OutputOptions, Vec<String>) {
        let args = split_tool_line(line, TOOL).unwrap();
        build_spec(&args).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    #[test]
    fn a_trailing_command_is_one_phase_of_whole_arguments() {
        let (spec, output, warnings) =
            spec_of(r#"redis-benchmark -n 10 -t set eval 'return redis.call("ping")' 0"#);
        assert_eq!(warnings, ["WARNING: Option -t is ignored."]);
        assert!(output.command_line);
        let phase = &spec["phases"][0];
        assert_eq!(spec["phases"].as_array().unwrap().len(), 1);
        assert_eq!(phase["name"], r#"eval return redis.call("ping") 0"#);
        assert_eq!(
            phase["commands"],
            json!([{ "template": ["eval", r#"return redis.call("ping")"#, "0"] }])
        );
        assert_eq!(spec["load"]["requests"], 10);
        // The payload is the command's RESP length, as redis-benchmark reports it.
        let expected = "*3\r\n$4\r\neval\r\n$25\r\nreturn redis.call(\"ping\")\r\n$1\r\n0\r\n";
        assert_eq!(output.payload_bytes, expected.len() as u64);
    }

    #[test]
    fn arguments_that_read_as_placeholders_are_sent_as_they_are() {
        for (line, arg) in [
            ("set k {value}", "{value}"),
            ("set user:{key} v", "user:{key}"),
            ("set k x{rand:1..2}", "x{rand:1..2}"),
            ("set {tag} v", "{tag}"),
            ("-r 10 set {key}:__rand_int__ v", "{key}:__rand_int__"),
            (r#"set {user1}:x '{"a": 1}'"#, r#"{"a": 1}"#),
        ] {
            let rb = parse(line);
            let args = &rb.workload.phases[0].commands[0].args;
            let want = Arg::Lit(arg.as_bytes().into());
            if line.starts_with("-r") {
                // `{key}` stays text; `__rand_int__` becomes a random number beside it.
                let Arg::Parts(parts) = &args[1] else {
                    panic!("{line}: {args:?}")
                };
                assert_eq!(parts[0], Part::Lit(b"{key}:"[..].into()), "{line}");
                assert!(matches!(parts[1], Part::Rand(0, 9, 12)), "{line}");
            } else {
                assert!(args.contains(&want), "{line}: {args:?}");
            }
        }
    }

    #[test]
    fn rand_int_inside_arguments_becomes_a_padded_random_under_r() {
        let (spec, ..) =
            spec_of("-r 1000 -n 10 hset myhash:__rand_int__ f:__rand_int__:x __rand_int__");
        assert_eq!(
            spec["phases"][0]["commands"][0]["template"],
            json!([
                "hset",
                "myhash:{rand:0..999:12}",
                "f:{rand:0..999:12}:x",
                "{rand:0..999:12}"
            ])
        );
        // Without -r the placeholder stays literal, as in redis-benchmark.
        let (spec, ..) = spec_of("lpush mylist __rand_int__");
        assert_eq!(
            spec["phases"][0]["commands"][0]["template"],
            json!(["lpush", "mylist", "__rand_int__"])
        );
    }

    #[test]
    fn x_appends_standard_input_as_the_last_argument() {
        let args: Vec<String> = ["-x", "-n", "5", "set", "k"].map(String::from).to_vec();
        let mut stdin: &[u8] = b"from stdin\n";
        let rb = parse_args_with_stdin(&args, &mut stdin).unwrap();
        assert_eq!(
            rb.workload.phases[0].spec.commands[0].template,
            Some(Template::Args(
                ["set", "k", "from stdin\n"].map(String::from).to_vec()
            ))
        );
        assert_eq!(rb.workload.phases[0].spec.name, "set k from stdin\n");
        // Without a command, -x reads nothing (redis-benchmark ignores it there).
        let mut untouched: &[u8] = b"left";
        let tests: Vec<String> = ["-x", "-t", "get"].map(String::from).to_vec();
        parse_args_with_stdin(&tests, &mut untouched).unwrap();
        assert_eq!(untouched, b"left");
        // From code there is no standard input to read.
        let e = err("-x set k");
        assert!(e.contains("`-x`") && e.contains("CLI"), "{e}");
        // Bytes that are not text are sent as they are: the command becomes a template line.
        let mut binary: &[u8] = b"\xff\"{x}\x00";
        let rb = parse_args_with_stdin(&args, &mut binary).unwrap();
        let command = &rb.workload.phases[0].commands[0].args;
        assert_eq!(command.len(), 3);
        assert_eq!(command[2], Arg::Lit(b"\xff\"{x}\x00"[..].into()));
        assert_eq!(rb.output.payload_bytes, (4 + 10 + 7 + 11) as u64);
    }

    #[test]
    fn valkey_options_map_to_the_load() {
        let rb = parse("valkey-benchmark --duration 3 --warmup 2 --rps 500 -P 4 -t get");
        let load = &rb.workload.phases[0].spec.load;
        assert_eq!(load.requests, None);
        assert_eq!(
            load.duration.map(|d| d.0),
            Some(std::time::Duration::from_secs(3))
        );
        assert_eq!(
            load.warmup.map(|d| d.0),
            Some(std::time::Duration::from_secs(2))
        );
        assert_eq!(load.rate, Some(500.0));
        // An open loop keeps its pipeline topped up (batches are a closed-loop refill).
        assert_eq!(load.refill, Refill::Eager);
        assert_eq!(
            parse("--rps 0 -t get").workload.phases[0].spec.load.rate,
            None
        );
        let e = err("-n 10 --duration 3");
        assert!(e.contains("`--duration`") && e.contains("-n"), "{e}");
        let e = err("--duration 0");
        assert!(e.contains("`--duration`") && e.contains("`0`"), "{e}");
        let e = err("--rps -1");
        assert!(e.contains("`--rps`") && e.contains("`-1`"), "{e}");
        let rb = parse("-r 50 --sequential -t set");
        assert_eq!(
            rb.workload.phases[0].spec.keys.distribution,
            Distribution::Sequential
        );
        // valkey:// and valkeys:// URIs.
        let rb = parse("-u valkey://u:p@10.0.0.2:7000/1");
        let t = &rb.workload.phases[0].spec.target;
        assert_eq!(
            (t.host.as_deref(), t.port, t.db),
            (Some("10.0.0.2"), Some(7000), 1)
        );
        let (spec, ..) = spec_of("-u valkeys://h:7001");
        assert_eq!(spec["target"]["tls"]["enabled"], json!(true));
    }

    #[test]
    fn rfr_needs_cluster_and_names_its_modes() {
        let rb = parse("--cluster --rfr yes -t get");
        assert_eq!(
            rb.workload.phases[0].spec.target.read_from,
            crate::spec::ReadFrom::Replica
        );
        let rb = parse("--cluster --rfr all -t get");
        assert_eq!(
            rb.workload.phases[0].spec.target.read_from,
            crate::spec::ReadFrom::Any
        );
        let rb = parse("--cluster --rfr no -t get");
        assert_eq!(
            rb.workload.phases[0].spec.target.read_from,
            crate::spec::ReadFrom::Primary
        );
        assert!(err("--rfr yes").contains("needs --cluster"));
        let e = err("--cluster --rfr maybe");
        assert!(
            e.contains("`--rfr`") && e.contains("`maybe`") && e.contains("all"),
            "{e}"
        );
    }

    #[test]
    fn valkey_placeholders_under_r() {
        let template = |line: &str| {
            let (spec, ..) = spec_of(line);
            spec["phases"][0]["commands"][0]["template"].clone()
        };
        assert_eq!(
            template("-r 10 set k__rand_1st__ v__rand_1st__:__rand_2nd__ __rand_int__"),
            json!(["set", "k{draw1}", "v{draw1}:{draw2}", "{rand:0..9:12}"])
        );
        // --sequential: each placeholder counts on a sequence of its own.
        assert_eq!(
            template("-r 10 --sequential set a__rand_int__ b__rand_int__"),
            json!(["set", "a{draw}", "b{draw}"])
        );
        assert_eq!(
            template("-r 10 --sequential set a__rand_2nd__ b__rand_2nd__ __rand_int__"),
            json!(["set", "a{draw2}", "b{draw2}", "{draw}"])
        );
        // Without -r they are sent as they are; __data__ is -d bytes of data either way.
        assert_eq!(
            template("-d 7 set __rand_1st__ x__data__"),
            json!(["set", "__rand_1st__", "x{value}"])
        );
        assert_eq!(
            template("-r 5 set __rand_10th__"),
            json!(["set", "__rand_10th__"])
        );
        // `--` ends the options.
        assert_eq!(template("-n 3 -- get -k"), json!(["get", "-k"]));
    }

    #[test]
    fn tls_cipher_lists_are_checked_by_name() {
        let (spec, ..) = spec_of(
            "--tls --tls-ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384 \
             --tls-ciphersuites TLS_CHACHA20_POLY1305_SHA256",
        );
        assert_eq!(
            spec["target"]["tls"]["ciphers"],
            json!([
                "ECDHE-RSA-AES128-GCM-SHA256",
                "ECDHE-ECDSA-AES256-GCM-SHA384"
            ])
        );
        assert_eq!(
            spec["target"]["tls"]["ciphersuites"],
            json!(["TLS_CHACHA20_POLY1305_SHA256"])
        );
        let e = err("--tls --tls-ciphers HIGH:!aNULL");
        assert!(
            e.contains("`--tls-ciphers`")
                && e.contains("`HIGH`")
                && e.contains("ECDHE-RSA-AES128-GCM-SHA256"),
            "{e}"
        );
        let e = err("--tls --tls-ciphersuites TLS_AES_128_CCM_SHA256");
        assert!(
            e.contains("`--tls-ciphersuites`") && e.contains("TLS_AES_128_CCM_SHA256"),
            "{e}"
        );
        // Without --tls a cipher list is an error rather than ignored.
        let e = err("--tls-ciphers ECDHE-RSA-AES128-GCM-SHA256");
        assert!(e.contains("tls.ciphers") && e.contains("TLS is off"), "{e}");
    }

    #[test]
    fn e_shows_errors() {
        assert!(parse("-e -t get").output.show_errors);
        assert!(!parse("-t get").output.show_errors);
    }

    #[test]
    fn semicolons_make_a_sequence_of_commands_with_repeats() {
        let (spec, output, _) = spec_of("-n 12 -- incr foo ';' 3 incr bar");
        let phase = &spec["phases"][0];
        assert_eq!(phase["name"], "incr foo ; 3 incr bar");
        assert_eq!(
            phase["commands"],
            json!([{ "chain": [["incr", "foo"], ["incr", "bar"], ["incr", "bar"], ["incr", "bar"]],
                     "pick": "sequential" }])
        );
        // The payload is every command of the sequence.
        let one = "*2\r\n$4\r\nincr\r\n$3\r\nfoo\r\n".len() as u64;
        assert_eq!(output.payload_bytes, 4 * one);
        parse("-n 12 -- incr foo ';' 3 incr bar");
        for (line, needle) in [
            ("incr foo ';'", "empty command"),
            ("';' incr foo", "empty command"),
            ("0 incr foo", "`0`"),
            ("70000 incr foo", "`70000`"),
        ] {
            let e = err(line);
            assert!(e.contains("`COMMAND`") && e.contains(needle), "{line}: {e}");
        }
        // A number alone is a command (no repeat count without a command after it).
        let (spec, ..) = spec_of("echo 7 ';' 7");
        assert_eq!(
            spec["phases"][0]["commands"][0]["chain"],
            json!([["echo", "7"], ["7"]])
        );
    }

    #[test]
    fn valkey_benchmark_adds_xadd_function_load_and_fcall_to_the_default_tests() {
        let redis = names(&parse("redis-benchmark"));
        assert_eq!(redis.len(), TESTS.len());
        let valkey = names(&parse(
            "valkey-benchmark --num-functions 3 --num-keys-in-fcall 2",
        ));
        assert_eq!(valkey[..TESTS.len()], redis[..]);
        assert_eq!(
            valkey[TESTS.len()..],
            [
                "XADD",
                "FUNCTION LOAD",
                "FCALL (load its function)",
                "FCALL"
            ]
        );
        let rb = parse("valkey-benchmark --num-functions 3 --num-keys-in-fcall 2 -n 7");
        let p = &rb.workload.phases;
        let n = TESTS.len();
        assert_eq!(
            p[n].spec.commands[0].template,
            Some(Template::Line("XADD mystream * myfield {value}".into()))
        );
        let Some(Template::Args(load)) = &p[n + 1].spec.commands[0].template else {
            panic!("{:?}", p[n + 1].spec.commands)
        };
        assert_eq!(load[..3], ["FUNCTION", "LOAD", "REPLACE"]);
        assert_eq!(load[3].matches("redis.register_function('foo").count(), 3);
        assert!(load[3].starts_with("#!lua name=benchlib\nlocal function foo3()\nreturn 0\nend\n"));
        // The fcall test loads its one function once, unmeasured, then calls it.
        let setup = &p[n + 2];
        assert!(!setup.spec.measured);
        assert_eq!(setup.spec.load.requests, Some(Requests::Count(1)));
        assert_eq!(setup.spec.load.connections, 1);
        assert!(p[n + 3].spec.measured);
        assert_eq!(p[n + 3].spec.load.requests, Some(Requests::Count(7)));
        assert_eq!(
            p[n + 3].spec.commands[0].template,
            Some(Template::Args(
                ["FCALL", "foo1", "2", "key1", "key2"]
                    .map(String::from)
                    .to_vec()
            ))
        );
        // Under either name -t selects them.
        assert_eq!(names(&parse("-t xadd")), ["XADD"]);
        let e = err("--num-functions 0");
        assert!(
            e.contains("`--num-functions`") && e.contains("1 to 1000"),
            "{e}"
        );
        let durations = parse("valkey-benchmark --duration 2 -t fcall");
        assert_eq!(durations.workload.phases[0].spec.load.duration, None);
    }

    #[test]
    fn a_dataset_makes_one_step_per_document_and_command() {
        let dir = std::env::temp_dir().join(format!("respload-dataset-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d.csv");
        std::fs::write(&path, "t,n\na{b,1\nc,2\nd,3\n").unwrap();
        let p = path.to_str().unwrap();
        let (spec, ..) = spec_of(&format!(
            "--dataset {p} --maxdocs 2 -- set k:__field:n__ __field:t__ ';' get k:__field:n__"
        ));
        assert_eq!(
            spec["phases"][0]["commands"][0]["chain"],
            json!([
                ["set", "k:1", "a{lbrace}b"],
                ["get", "k:1"],
                ["set", "k:2", "c"],
                ["get", "k:2"]
            ])
        );
        let e = err(&format!("--dataset {p} -t get"));
        assert!(
            e.contains("`--dataset`") && e.contains("a command given after the options"),
            "{e}"
        );
        assert!(err("--maxdocs 3 -t get").contains("--dataset"));
        let e = err("--dataset /dev/zero set k v");
        assert!(
            e.contains("`--dataset`") && e.contains("not a regular file"),
            "{e}"
        );
        let e = err("--dataset /nonexistent/d.csv set k v");
        assert!(
            e.contains("`--dataset`") && e.contains("/nonexistent/d.csv"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn mptcp_maps_and_rdma_and_fuzzing_are_refused() {
        assert!(parse("--mptcp -t get").workload.phases[0].spec.target.mptcp);
        assert!(!parse("-t get").workload.phases[0].spec.target.mptcp);
        let e = err("--mptcp -s /tmp/x.sock -t get");
        assert!(e.contains("target.mptcp") && e.contains("Unix"), "{e}");
        for (line, option) in [
            ("--rdma -t get", "--rdma"),
            ("--fuzz", "--fuzz"),
            ("--fuzz-mode config-commands", "--fuzz-mode"),
            ("--fuzz-loglevel info", "--fuzz-loglevel"),
        ] {
            let e = err(line);
            assert!(
                e.contains(&format!("`{option}`")) && e.contains("not supported"),
                "{e}"
            );
        }
    }
}
