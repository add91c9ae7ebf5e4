//! memtier_benchmark command lines read into workloads: options, values, errors.

use super::args::*;
use super::report::CommandRow;
use crate::spec::{Arg, Distribution, Pick, Requests, ValueData, ValueSize};

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
    let m =
        run("-s h1 --server=h2 -p7000 -c 3 -t2 --ratio 2:5 --pipeline=4 -n 100 -DR --key-max=99");
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
            name: "SET".into(),
            line_name: None,
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
    let s = |t: &str| split_command(t.as_bytes()).unwrap();
    assert_eq!(
        s(r#"SET "a b" 'c d'"#),
        [b"SET".to_vec(), b"a b".to_vec(), b"c d".to_vec()]
    );
    assert_eq!(s(r#"SET k"a b""#), [b"SET".to_vec(), b"ka b".to_vec()]);
    assert_eq!(s(r#"X "\x41\n\q""#)[1], b"A\nq".to_vec());
    assert!(split_command(br#"X "a"b"#).is_err());
    assert!(split_command(b"X 'open").is_err());
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
        ("--wait-ratio=0:0", "--wait-ratio", "not both 0"),
        ("--wait-ratio=1:x", "--wait-ratio", "SET:WAIT"),
        ("--num-slaves=0-0", "--num-slaves", "MAX from 1"),
        ("--wait-timeout=5", "--wait-timeout", "MIN-MAX milliseconds"),
        (
            "--cluster-mode --wait-ratio=1:1",
            "--wait-ratio",
            "--cluster-mode",
        ),
        (
            "--cluster-mode --multi-key-get=2",
            "--multi-key-get",
            "--cluster-mode",
        ),
        (
            "--ratio=1000000:1 --wait-ratio=1:1",
            "--wait-ratio",
            "at most 1000000",
        ),
        ("--no-expiry", "--no-expiry", "--data-import"),
        ("--verify-only", "--verify-only", "--data-import"),
        ("--data-verify", "--data-verify", "--data-import"),
        ("--generate-keys", "--generate-keys", "--data-import"),
        ("--data-import=/no/such.csv", "--data-import", "cannot read"),
        (
            "--data-import=f.csv --cluster-mode",
            "--cluster-mode",
            "importing",
        ),
        ("--data-import=f.csv -d 10", "--data-size", "importing"),
        ("--data-import=f.csv -R", "--random-data", "importing"),
        (
            "--data-import=f.csv --key-maximum=9",
            "--key-maximum",
            "--generate-keys",
        ),
        (
            "--data-import=f.csv --generate-keys --data-verify",
            "--data-verify",
            "--generate-keys",
        ),
        (
            "--data-import=f.csv --key-pattern=R:G",
            "--key-pattern",
            "R (a key",
        ),
        (
            "--data-import=f.csv --command=GET",
            "--command",
            "--data-import",
        ),
        (
            "--data-offset=5 --expiry-range=1-2",
            "--data-offset",
            "--expiry-range",
        ),
        ("-P memcache_text", "-P", "RESP only"),
        ("--multi-key-get=0", "--multi-key-get", "from 1 to 4095"),
        ("--multi-key-get=4096", "--multi-key-get", "from 1 to 4095"),
        ("--data-offset=536870912", "--data-offset", "0 to 536870911"),
        ("--data-offset=-1", "--data-offset", "0 to 536870911"),
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
        ("--command=MULTI", "--command", "needs --transaction"),
        ("--transaction", "--transaction", "at least one --command"),
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
fn address_family_offset_mget_and_wait_map_to_the_spec() {
    let spec = |line: &str| run(line).workload.phases[0].spec.clone();
    assert_eq!(spec("-4").target.family, crate::spec::Family::Ipv4);
    assert_eq!(spec("-4 --ipv6").target.family, crate::spec::Family::Ipv6);
    assert_eq!(spec("").target.family, crate::spec::Family::Any);
    let m = run("-6 --data-offset=7 --multi-key-get=3 --wait-ratio=3:1 --num-slaves=1-2");
    let config: std::collections::HashMap<_, _> = m.options.config.iter().cloned().collect();
    assert_eq!(config["address family"], "AF_INET6");
    assert_eq!(config["data_offset"], 7);
    assert_eq!(config["multi_key_get"], 3);
    assert_eq!(config["wait-ratio"], "3:1");
    assert_eq!(config["num-slaves"], "1:2");

    // SETRANGE/GETRANGE at the offset, labelled as memtier's SET and GET rows.
    let p = &run("--data-offset=7 --ratio=1:2").workload.phases[0];
    let words = |i: usize| {
        p.commands[i]
            .args
            .iter()
            .map(|a| match a {
                crate::spec::Arg::Lit(b) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(p.commands[0].label, "SET");
    assert_eq!(words(0), ["SETRANGE", "Key", "7", "Value"]);
    assert_eq!(p.commands[1].label, "GET");
    assert_eq!(words(1), ["GETRANGE", "Key", "7", "-1"]);
    assert_eq!((p.mix[0].weight, p.mix[1].weight), (1, 2));

    // 10 GETs as MGETs of 4: 4, 4 and 2 keys in turn, three picks per SET.
    let p = &run("--multi-key-get=4").workload.phases[0];
    let picked = p.mix[1].pick.as_ref().expect("a chain of MGETs");
    let keys: Vec<usize> = picked.steps.iter().map(|(_, a)| a.len() - 1).collect();
    assert_eq!(keys, [4, 4, 2]);
    assert_eq!(p.mix[1].weight, 3);
    // A rotation of more than 1024 MGETs keeps its full ones only.
    let p = &run("--ratio=1:3000 --multi-key-get=2").workload.phases[0];
    assert_eq!((p.commands[1].args.len(), p.mix[1].weight), (3, 1500));
    let p = &run("--ratio=1:2051 --multi-key-get=2").workload.phases[0];
    assert_eq!((p.commands[1].args.len(), p.mix[1].weight), (3, 1026));
    assert!(p.mix[1].pick.is_none());
    // A ratio the MGETs divide evenly is one template.
    let p = &run("--ratio=1:8 --multi-key-get=4").workload.phases[0];
    assert_eq!(p.commands[1].label, "MGET");
    assert_eq!(p.commands[1].args.len(), 5);
    assert_eq!((p.mix[0].weight, p.mix[1].weight), (1, 2));

    // --wait-ratio=3:1: memtier sends a WAIT once SETs / WAITs > 3, one WAIT per 4 SETs.
    let p = &run("--wait-ratio=3:1 --num-slaves=1-2 --wait-timeout=50-50")
        .workload
        .phases[0];
    let weights: Vec<u32> = p.mix.iter().map(|e| e.weight).collect();
    assert_eq!(weights, [4, 40, 1]);
    assert_eq!(p.commands[2].label, "WAIT");
    assert_eq!(
        p.commands[2].args[1..],
        [
            crate::spec::Arg::Rand(1, 2, 0),
            crate::spec::Arg::Rand(50, 50, 0)
        ]
    );
    // WAIT weights only count with SETs; B = 0 sends none (as memtier).
    let p = &run("--wait-ratio=1:0").workload.phases[0];
    assert_eq!(p.commands.len(), 2);
}

#[test]
fn reconnect_options_map_to_load_reconnect() {
    let load = |line: &str| run(line).workload.phases[0].spec.load.clone();
    let d = |ms: u64| crate::spec::SpecDuration(std::time::Duration::from_millis(ms));
    // Without them: respload's own backoff (10 ms doubling to 1 s), never giving up.
    let r = load("--reconnect-on-error").reconnect;
    assert_eq!(r, crate::spec::Reconnect::default());
    let r = load("--reconnect-interval=25").reconnect;
    assert_eq!((r.every, r.attempts, r.delay), (Some(25), 0, d(10)));
    // memtier's waits: F, F^2, ... seconds up to 60 s; 1 s without a factor.
    let r = load("--max-reconnect-attempts=3").reconnect;
    assert_eq!(
        (r.attempts, r.delay, r.backoff, r.max_delay),
        (3, d(1000), 1.0, d(60_000))
    );
    let r = load("--reconnect-backoff-factor=2.5").reconnect;
    assert_eq!((r.attempts, r.delay, r.backoff), (0, d(2500), 2.5));
    let r = load("--reconnect-backoff-factor=100").reconnect;
    assert_eq!((r.delay, r.max_delay), (d(60_000), d(60_000)));
    let m = run("--reconnect-interval=7 --connection-stage-timeout=0 \
                 --thread-conn-start-min-jitter-micros=5 --thread-conn-start-max-jitter-micros=9");
    let config: std::collections::HashMap<_, _> = m.options.config.iter().cloned().collect();
    assert_eq!(config["reconnect_interval"], 7);
    assert_eq!(config["connection_stage_timeout"], 0);
    assert_eq!(config["thread_conn_start_max_jitter_micros"], 9);
    let jitter = m.workload.phases[0].spec.load.open_jitter.unwrap();
    assert_eq!(jitter.map(|j| j.0.as_micros()), [5, 9]);
    // memtier pauses only with a maximum above 0.
    let l = load("--thread-conn-start-min-jitter-micros=0");
    assert_eq!(l.open_jitter, None);
    for (line, opt, text) in [
        (
            "--reconnect-interval=0",
            "--reconnect-interval",
            "greater than zero",
        ),
        (
            "--reconnect-backoff-factor=0",
            "--reconnect-backoff-factor",
            "0.01 to 1000",
        ),
        (
            "--max-reconnect-attempts=-1",
            "--max-reconnect-attempts",
            "0: unlimited",
        ),
        (
            "--connection-stage-timeout=x",
            "--connection-stage-timeout",
            "seconds",
        ),
        (
            "--thread-conn-start-min-jitter-micros=9 --thread-conn-start-max-jitter-micros=5",
            "--thread-conn-start-min-jitter-micros",
            "above",
        ),
        (
            "--thread-conn-start-min-jitter-micros=5",
            "--thread-conn-start-min-jitter-micros",
            "above --thread-conn-start-max-jitter-micros (0)",
        ),
        (
            "--thread-conn-start-max-jitter-micros=60000001",
            "--thread-conn-start-max-jitter-micros",
            "60 s",
        ),
        (
            "--cluster-mode --reconnect-interval=5",
            "--reconnect-interval",
            "--cluster-mode",
        ),
    ] {
        let e = err(line);
        assert!(
            e.contains(&format!("`{opt}`")) && e.contains(text),
            "{line}: {e}"
        );
    }
}

#[test]
fn scan_incremental_iteration_follows_the_cursor_of_the_one_scan() {
    let m = run(
        "--command='SCAN 0 MATCH k* COUNT 7' --scan-incremental-iteration \
                 --scan-incremental-max-iterations=4",
    );
    let p = &m.workload.phases[0];
    let labels: Vec<&str> = p.commands.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["SCAN 0", "SCAN <cursor>"]);
    assert_eq!(p.commands[1].args[1], crate::spec::Arg::Cursor);
    assert_eq!(p.mix[0].cursor, Some(4));
    let rows: Vec<String> = m
        .options
        .commands
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(rows, ["SCAN 0", "SCAN <cursor>"]);
    for (line, text) in [
        ("--scan-incremental-iteration", "exactly one --command"),
        (
            "--command='SCAN 0' --pipeline=2 --scan-incremental-iteration",
            "--pipeline 1",
        ),
        (
            "--command='GET __key__' --scan-incremental-iteration",
            "a SCAN command",
        ),
        (
            "--command=SCAN --scan-incremental-iteration",
            "cursor argument",
        ),
        (
            "--command='SCAN 0' --command='SCAN 0' --scan-incremental-iteration",
            "exactly one",
        ),
        (
            "--command='SCAN 0' --cluster-mode --scan-incremental-iteration",
            "cluster",
        ),
    ] {
        let e = err(line);
        assert!(
            e.contains("`--scan-incremental-iteration`") && e.contains(text),
            "{line}: {e}"
        );
    }
    let e = err("--scan-incremental-max-iterations=x");
    assert!(e.contains("continuation SCANs"), "{e}");
}

#[test]
fn retry_options_map_to_load_retry() {
    let retry = |line: &str| run(line).workload.phases[0].spec.load.retry.clone();
    assert_eq!(retry("--max-retries=3 --retry-backoff-ms=5"), None);
    let r = retry("--retry-on-error").unwrap();
    assert_eq!((r.attempts, r.backoff, r.queue), (None, 1.0, 0));
    assert!(r.delay.0.is_zero() && r.on.is_empty());
    let r = retry(
        "--retry-on-error --max-retries=0 --retry-backoff-ms=25 --retry-backoff-factor=2 \
         --retry-on=LOADING,BUSY --max-retry-queue=9",
    )
    .unwrap();
    assert_eq!((r.attempts, r.backoff, r.queue), (Some(0), 2.0, 9));
    assert_eq!(r.delay.0, std::time::Duration::from_millis(25));
    assert_eq!(r.on, ["LOADING", "BUSY"]);
    let m = run("--retry-on-error --max-retries=4 --retry-on=BUSY");
    let config: std::collections::HashMap<_, _> = m.options.config.iter().cloned().collect();
    assert_eq!(config["retry_on_error"], "true");
    assert_eq!(config["max_retries"], 4);
    assert_eq!(config["retry_on"], "BUSY");
    assert_eq!(config["failed_keys_file"], "");
    let m = run("--failed-keys-file=failed.csv");
    let config: std::collections::HashMap<_, _> = m.options.config.iter().cloned().collect();
    assert_eq!(config["failed_keys_file"], "failed.csv");
    let output = &m.workload.phases[0].spec.output;
    assert_eq!(output.failed_keys.as_deref(), Some("failed.csv"));
    // In cluster mode too.
    let m = run("--failed-keys-file=failed.csv --cluster-mode");
    assert_eq!(
        m.workload.phases[0].spec.output.failed_keys.as_deref(),
        Some("failed.csv")
    );
    for (line, opt, text) in [
        ("--max-retries=-2", "--max-retries", "-1 (no limit)"),
        (
            "--retry-backoff-factor=0.5",
            "--retry-backoff-factor",
            "1 to 1000",
        ),
        (
            "--retry-on=LOADING,,BUSY",
            "--retry-on",
            "separated by commas",
        ),
        (
            "--retry-backoff-ms=60001",
            "--retry-backoff-ms",
            "0 to 60000",
        ),
        (
            "--cluster-mode --client-stats=c",
            "--client-stats",
            "--cluster-mode",
        ),
        (
            "--cluster-mode --retry-on-error",
            "--retry-on-error",
            "--cluster-mode",
        ),
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
    let m = run("-c 10 -t 2 --clients-start=2 --clients-step=3 --step-duration=5 --test-time=30");
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
    let m = run(
        "--tls --sni name --tls-skip-verify --tls-protocols=TLSv1.3 --rate-limiting=100 -c 5 -t 2",
    );
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

/// A file of MONITOR output in the temp directory, named for the test.
fn monitor_file(name: &str, body: &[u8]) -> String {
    let path = std::env::temp_dir().join(format!(
        "respload-memtier-monitor-{}-{name}.txt",
        std::process::id()
    ));
    std::fs::write(&path, body).unwrap();
    path.to_string_lossy().into_owned()
}

/// Captured lines as MONITOR prints them, with redis-cli's `OK` first and a proxy's prefix on
/// one (memtier reads each from its first double quote).
const CAPTURE: &[u8] = b"OK\n\
    1700000000.000001 [0 127.0.0.1:5000] \"SET\" \"k 1\" \"say \\\"hi\\\"\"\n\
    \n\
    [ proxy1 ] 1700000000.000002 [0 127.0.0.1:5000] \"rpush\" \"l\" \"\\xc3\\xa9\\x00{key}\"\r\n\
    1700000000.000003 [3 lua] \"GET\" \"k 1\"\n\
    1700000000.000004 [0 unix:/tmp/r.sock] \"set\" \"k2\" \"v\"\n";

#[test]
fn monitor_lines_become_literal_templates() {
    let path = monitor_file("lines", CAPTURE);
    let m = run(&format!(
        "--monitor-input={path} --command=__monitor_line2__ --command-ratio=3 \
         --command=__monitor_line1__ --command=__monitor_line4__ --command-key-pattern=S"
    ));
    let p = &m.workload.phases[0];
    let labels: Vec<_> = p.commands.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["RPUSH", "SET", "SET#2"]);
    let lit = |b: &[u8]| Arg::Lit(b.into());
    assert_eq!(
        p.commands[0].args,
        [lit(b"rpush"), lit(b"l"), lit(b"\xc3\xa9\x00{key}")]
    );
    assert_eq!(
        p.commands[1].args,
        [lit(b"SET"), lit(b"k 1"), lit(b"say \"hi\"")]
    );
    assert_eq!(p.commands[2].args, [lit(b"set"), lit(b"k2"), lit(b"v")]);
    assert_eq!(p.mix[0].weight, 3);
    assert_eq!(p.mix[2].distribution, Distribution::Sequential);
    let rows = m.options.commands.unwrap();
    assert_eq!(
        rows[0],
        CommandRow {
            label: "RPUSH".into(),
            name: "RPUSH".into(),
            line_name: Some("RPUSH (Line 2)".into()),
        }
    );
    assert_eq!(rows[2].line_name.as_deref(), Some("SET (Line 4)"));
}

#[test]
fn monitor_line_each_is_a_picked_chain() {
    let path = monitor_file("each", CAPTURE);
    let line = format!(
        "--monitor-input={path} --command='SET __key__ __data__' --command=__monitor_line@__ \
         --command-ratio=2"
    );
    for (pattern, order) in [
        ("", Pick::Sequential),
        (" --monitor-pattern=S", Pick::Sequential),
        (" --monitor-pattern=r", Pick::Random),
    ] {
        let m = run(&format!("{line}{pattern}"));
        let p = &m.workload.phases[0];
        let labels: Vec<_> = p.commands.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            ["SET", "MONITOR:SET", "MONITOR:RPUSH", "MONITOR:GET"]
        );
        assert_eq!(p.mix.len(), 2);
        assert_eq!(p.mix[1].weight, 2);
        let picked = p.mix[1].pick.as_deref().unwrap();
        assert_eq!(picked.order, order);
        // Every command of the file, in order, each under its name's label.
        let steps: Vec<usize> = picked.steps.iter().map(|s| s.0).collect();
        assert_eq!(steps, [1, 2, 3, 1]);
        assert_eq!(picked.steps[3].1[0], Arg::Lit(b"set"[..].into()));
        let rows = m.options.commands.unwrap();
        let rows: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.label.as_str(), r.name.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("SET", "SET"),
                ("", "MONITOR_RANDOM"),
                ("MONITOR:SET", "SET"),
                ("MONITOR:RPUSH", "RPUSH"),
                ("MONITOR:GET", "GET"),
            ]
        );
    }
    // The file is read (and checked) even when no --command uses it, as memtier does.
    let m = run(&format!("--monitor-input={path} -n 5"));
    assert!(m.options.commands.is_none());
}

#[test]
fn monitor_errors_name_the_option_and_the_value() {
    let path = monitor_file("errors", CAPTURE);
    let bad_line = monitor_file(
        "bad",
        b"1.0 [0 lua] \"SET\" \"a\"\n1.0 [0 lua] \"GET\" \"open\n",
    );
    let empty = monitor_file("empty", b"OK\n\n");
    let missing = format!("{path}.missing");
    for (line, opt, text) in [
        (
            format!("--monitor-input={path} --command=__monitor_line5__"),
            "--command",
            "__monitor_line1__ to __monitor_line4__",
        ),
        (
            format!("--monitor-input={path} --command=__monitor_line0__"),
            "--command",
            "`__monitor_line0__`",
        ),
        (
            format!(
                "--command=__monitor_line@__ --monitor-input={path} --command=__monitor_lineX__"
            ),
            "--command",
            "or __monitor_line@__",
        ),
        (
            "--command=__monitor_line1__".to_string(),
            "--command",
            "give --monitor-input=FILE",
        ),
        (
            "--command=__monitor_c2__".to_string(),
            "--command",
            "give --monitor-input=FILE",
        ),
        (
            format!("--monitor-input={path} --monitor-pattern=X"),
            "--monitor-pattern",
            "`X`",
        ),
        (
            format!("--monitor-input={path} --monitor-pattern=SR"),
            "--monitor-pattern",
            "one letter",
        ),
        (
            format!("--monitor-input={missing} --command=__monitor_line1__"),
            "--monitor-input",
            "cannot open",
        ),
        (
            format!("--monitor-input={empty}"),
            "--monitor-input",
            "no commands",
        ),
        (
            format!("--monitor-input={bad_line} --command=__monitor_line@__"),
            "--monitor-input",
            "command 2 (line 2: an unclosed",
        ),
        (
            format!("--monitor-input={path} --cluster-mode"),
            "--monitor-input",
            "cluster",
        ),
    ] {
        let e = err(&line);
        assert!(
            e.contains(&format!("`{opt}`")) && e.contains(text),
            "{line}: {e}"
        );
    }
    // Only the lines used need to be commands, as in memtier.
    run(&format!(
        "--monitor-input={bad_line} --command=__monitor_line1__"
    ));
    // The development branch's spelling makes the same workload as the released one.
    for (dev, released) in [("c2", "line2"), ("c@", "line@")] {
        let w = |p: &str| {
            run(&format!("--monitor-input={path} --command=__monitor_{p}__"))
                .workload
                .to_json_value()
        };
        assert_eq!(w(dev), w(released), "{dev}");
    }
    for p in [path, bad_line, empty] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn monitor_files_are_capped() {
    let mut body = Vec::new();
    for i in 0..super::monitor::MAX_MONITOR_COMMANDS {
        body.extend_from_slice(format!("1.0 [0 lua] \"SET\" \"k{i}\" \"v\"\n").as_bytes());
    }
    let path = monitor_file("cap", &body);
    // The most a file may hold: 100000 steps in one chain, grouped under one label.
    let m = run(&format!(
        "--monitor-input={path} --command=__monitor_line@__ -n 1 -c 1 -t 1"
    ));
    let p = &m.workload.phases[0];
    assert_eq!(p.commands.len(), 1);
    assert_eq!(p.mix[0].pick.as_deref().unwrap().steps.len(), 100_000);
    body.extend_from_slice(b"1.0 [0 lua] \"GET\" \"k\"\n");
    std::fs::write(&path, &body).unwrap();
    let e = err(&format!("--monitor-input={path}"));
    assert!(
        e.contains("`--monitor-input`") && e.contains("at most 100000"),
        "{e}"
    );
    let _ = std::fs::remove_file(path);
}

/// Every option of the table is read by one of `apply`'s steps (the match of each step is
/// not exhaustive, so this holds what the compiler no longer checks).
#[test]
fn every_option_of_the_table_is_read() {
    for def in super::options::OPTIONS {
        for value in ["1", "R:R", "1:1", "1-2", "x"] {
            let mut cfg = Settings::default();
            let shown = format!("--{}", def.0);
            if let Err(e) = apply(&mut cfg, def.3, &shown, def.2.then_some(value)) {
                assert!(
                    !matches!(e, crate::Error::Internal(_)),
                    "{shown}={value}: {e}"
                );
            }
        }
    }
}
