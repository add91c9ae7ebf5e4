//! memtier_benchmark's options: every option it has, which of them respload honours, and
//! `--help`'s text.

/// Which option a command-line flag sets (the table below maps names to these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flag {
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
pub(super) type OptionDef = (&'static str, Option<char>, bool, Flag);

/// Every memtier_benchmark (2.x) option.
pub(super) const OPTIONS: &[OptionDef] = &[
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

/// The options respload's memtier front end reads, as `--help` shows them.
pub fn usage() -> &'static str {
    r#"Usage: respload memtier [memtier_benchmark options] [--json FILE]
Runs a memtier_benchmark command line with respload and reports as memtier_benchmark does.
Options are read as memtier_benchmark 2.x reads them; combinations respload cannot run yet
are errors naming the option. docs/compat.md has the table of every option.

Connection:
  -s, -h, --server/--host=ADDR   Server address (default: localhost)
  -p, --port=PORT                Server port (default: 6379)
  -S, --unix-socket=SOCKET       UNIX domain socket
  -4, --ipv4 / -6, --ipv6        Connect to the host's IPv4 (IPv6) addresses only
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
      --retry-on-error           Resend requests that fail with a transient error or on a
                                 lost connection
      --max-retries=N            Most resends of a request (-1: no limit, the default)
      --retry-backoff-ms=NUM     Wait before a resend (default: 0)
      --retry-backoff-factor=NUM Each further wait times NUM (0, the default: constant)
      --retry-on=LIST            Only these error kinds (e.g. LOADING,BUSY,TRYAGAIN)
      --max-retry-queue=NUM      Most requests waiting for a resend per connection
      --failed-keys-file=PATH    Append each request that failed for good as CSV:
                                 timestamp,command,key,status,retries
      --reconnect-interval=NUM   Reopen each connection after NUM requests
      --max-reconnect-attempts=NUM  A lost connection gives up after NUM attempts (0: never)
      --reconnect-backoff-factor=NUM  Waits of NUM, NUM^2, ... seconds (at most 60) between
                                 attempts (default with either option: 1 s)
      --connection-stage-timeout=SECS  Accepted: respload fails at once when the connections
                                 cannot be opened, before any traffic
      --thread-conn-start-min-jitter-micros=NUM / --thread-conn-start-max-jitter-micros=NUM
                                 Pause between the connections a thread opens (microseconds)
      --multi-key-get=NUM        GETs as MGETs of up to NUM keys
      --wait-ratio=SET:WAIT      WAIT commands among the SETs (one per SET/WAIT + 1 SETs)
      --num-slaves=MIN-MAX       WAIT's number of replicas (default: 0-0)
      --wait-timeout=MIN-MAX     WAIT's timeout in milliseconds (default: 0-0)
Arbitrary commands:
      --command=COMMAND          A command with __key__ and __data__ placeholders (repeatable)
      --command-ratio=NUMBER     Weight of the --command before it (default: 1)
      --command-key-pattern=P    Key pattern of the --command before it: R, S, G, Z or P
      --transaction              The --command entries in memtier's rotation on one key, back
                                 to back on one connection (MULTI/EXEC/WATCH need it)
      --monitor-input=FILE       Commands captured with MONITOR: --command=__monitor_lineN__
                                 sends the file's Nth command, --command=__monitor_line@__
                                 one of them per request
      --monitor-pattern=S|R      __monitor_line@__ takes them in turn (S, default) or at random
      --scan-incremental-iteration  The one --command="SCAN 0 ..." follows the cursor each
                                 reply returns, from 0 again when it is 0 (needs --pipeline=1)
      --scan-incremental-max-iterations=NUM  At most NUM continuation SCANs per walk
Objects:
  -d, --data-size=SIZE           Value size in bytes (default: 32)
  -R, --random-data              Random values (default: 'x' repeated)
      --data-offset=OFFSET       SETRANGE/GETRANGE at OFFSET instead of SET/GET
      --data-size-range=MIN-MAX  Sizes drawn from a range
      --data-size-list=S:W,...   Sizes drawn by weight
      --data-size-pattern=R|S    S: sizes grow with the key number (with --data-size-range)
      --expiry-range=MIN-MAX     SET ... EX with a random TTL in seconds
Imported data:
      --data-import=FILE         SETs write the items of a memtier data-import CSV file
      --data-verify              Read every imported key back after the run and compare
      --verify-only              Only the verification, no benchmark
      --generate-keys            Imported values under generated keys (--key-prefix, ...)
      --no-expiry                Imported items without their TTLs
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
      --client-stats=PREFIX      Per-client files PREFIX-RUN-THREAD-CLIENT.csv, a row per second
      --hide-histogram           No latency distribution in the report
      --print-percentiles=LIST   Percentile columns (default: 50,99,99.9)
      --print-all-runs           With --run-count, a table per run too
      --show-config              Print the configuration first
      --command-stats-breakdown=command|line
      --command-miss-tracking=auto|off
      --miss-rate-threshold=PCT  Warn above this miss rate (default: 1)
  -D, --debug, --realtime-latencies  Accepted, no effect on respload's output
      --statsd-host=HOST         Send each second's metrics to StatsD on HOST (UDP)
      --statsd-port=PORT         StatsD's UDP port (default: 8125)
      --statsd-prefix=PREFIX     Metric names' prefix (default: memtier)
      --statsd-run-label=LABEL   Metric names' run label (default: default)
      --graphite-port=PORT       Graphite's HTTP port on HOST for start/end events
                                 (default: 8080)
  -v, --version / --help
Respload:
      --json FILE                respload's own report as JSON, anywhere on the line
"#
}
