//! The workload and report settings built from memtier_benchmark's options as read.

use super::args::{bad, number, template, Memtier, Req, Settings, KEY_PLACEHOLDER, MAX_WEIGHT};
use super::import::Imported;
use super::monitor::{self, Captured, Placeholder};
use super::report::{CommandRow, DataVerify, Options, MONITOR_RANDOM};
use crate::plan::Workload;
use crate::spec::sanitize_name_part;
use crate::{Error, Result};
use serde_json::{json, Map, Value as Json};

/// The longest rotation of `--multi-key-get` MGETs kept exactly (a chain of that many steps).
const MAX_MGET_ROTATION: u32 = 1024;
/// The longest `--transaction` rotation (requests), its lines times their ratios.
const MAX_ROTATION: usize = 1024;

/// memtier's cap on the wait between two reconnect attempts, in seconds.
const MAX_BACKOFF_SECS: f64 = 60.0;

/// `redis://[user[:password]@]host[:port][/db]` as memtier reads it: (host, port, auth, db).
type UriParts = (Option<String>, Option<u16>, Option<String>, Option<u32>);

/// The URI as messages and memtier's `configuration` show it: its password hidden.
fn shown_uri(uri: &str) -> String {
    match (uri.contains("://"), uri.rsplit_once('@')) {
        (true, _) => crate::spec::redact_url(uri),
        (false, Some((_, host))) => format!("***@{host}"),
        (false, None) => uri.to_string(),
    }
}

fn parse_uri(uri: &str) -> Result<UriParts> {
    let what = "redis://[user[:password]@]host[:port][/db]";
    let (scheme, rest) = uri
        .split_once("://")
        .ok_or_else(|| bad("--uri", &shown_uri(uri), what))?;
    match scheme {
        "redis" => {}
        "rediss" => {}
        _ => {
            let allowed = format!("a redis:// URI, {what}");
            return Err(bad("--uri", &shown_uri(uri), &allowed));
        }
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
    pub(super) fn distribution(&self, letter: char) -> Json {
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

    pub(super) fn build(self) -> Result<Memtier> {
        let conns = self.check_options()?;
        let target = self.target()?;
        let imported = self.imported()?;
        let (load, requests_per_client) = self.load(conns, imported.as_ref())?;
        let keys = self.keys();
        let values = self.values();
        let (commands, rows) = self.commands(imported.as_ref())?;
        let spec = self.spec(target, load, keys, values, commands);
        let workload = Workload::from_json_value(Json::Object(spec))?;
        let config = self.config_items(requests_per_client);
        let data_verify = imported.and_then(|i| i.verify);
        Ok(Memtier {
            workload,
            options: self.report_options(requests_per_client, rows, config, data_verify),
        })
    }

    /// memtier's checks of the options against one another (and respload's limits), before
    /// anything is built; the connections, clients x threads.
    fn check_options(&self) -> Result<u64> {
        self.check_transaction()?;
        self.check_command_options()?;
        self.check_key_options()?;
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
        self.check_data_options()?;
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
        Ok(conns)
    }

    /// `--transaction` needs `--command`s; MULTI, EXEC, WATCH... in a `--command` need it.
    fn check_transaction(&self) -> Result<()> {
        if self.transaction && self.commands.is_empty() {
            return Err(Error::spec(
                "--transaction",
                "requires at least one --command (as in memtier_benchmark)",
            ));
        }
        let transactional = self
            .commands
            .iter()
            .map(|c| command_name(&c.args))
            .find(|n| {
                matches!(
                    n.as_str(),
                    "MULTI" | "EXEC" | "DISCARD" | "WATCH" | "UNWATCH"
                )
            });
        if let (Some(name), false) = (transactional, self.transaction) {
            return Err(Error::spec(
                "--command",
                format!(
                    "{name} needs --transaction with respload: without it respload picks the \
                     --command entries at random by weight, where memtier sends them in a fixed \
                     rotation; --transaction sends them in memtier's rotation, on one key"
                ),
            ));
        }
        Ok(())
    }

    /// With `--command`, memtier's own key pattern and ratio options, P on all or none.
    fn check_command_options(&self) -> Result<()> {
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
        Ok(())
    }

    /// The gaussian's parameters and the key range.
    fn check_key_options(&self) -> Result<()> {
        let arbitrary = !self.commands.is_empty();
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
        Ok(())
    }

    /// `target`: where and how to connect (`--uri` over `-s`, `-p`, `-a`, `--select-db`).
    fn target(&self) -> Result<Map<String, Json>> {
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
                if let Some(family) = self.family {
                    target.insert("family".into(), json!(family));
                }
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
        Ok(target)
    }

    /// `load`: connections, threads, pipeline, how the run ends (`-n` or `--test-time`),
    /// ramp, retries, reconnects, jitter and rate; with the requests per client memtier's
    /// run information shows.
    fn load(
        &self,
        conns: u64,
        imported: Option<&Imported>,
    ) -> Result<(Map<String, Json>, Option<u64>)> {
        let (lo, hi) = (self.key_minimum, self.key_maximum);
        let mut load = Map::new();
        load.insert("connections".into(), json!(conns));
        load.insert("threads".into(), json!(self.threads));
        load.insert("pipeline".into(), json!(self.pipeline));
        let keys_count = hi - lo + 1;
        let requests_per_client = match self.requests {
            // The file's keys: one request per item.
            Some(Req::AllKeys) if imported.is_some() && !self.generate_keys => {
                let items = imported.map_or(0, |i| i.items);
                load.insert("requests".into(), json!(items));
                Some(items.div_ceil(conns))
            }
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
        if self.retry_on_error {
            let mut retry = Map::new();
            if self.max_retries >= 0 {
                retry.insert("attempts".into(), json!(self.max_retries));
            }
            if let Some(on) = &self.retry_on {
                retry.insert("on".into(), json!(on.split(',').collect::<Vec<_>>()));
            }
            retry.insert(
                "delay".into(),
                json!(format!("{}ms", self.retry_backoff_ms)),
            );
            // memtier's factor 0 keeps the wait constant.
            retry.insert("backoff".into(), json!(self.retry_backoff_factor.max(1.0)));
            if self.max_retry_queue > 0 {
                retry.insert("queue".into(), json!(self.max_retry_queue));
            }
            load.insert("retry".into(), Json::Object(retry));
        }
        if let Some(reconnect) = self.reconnect_spec() {
            load.insert("reconnect".into(), reconnect);
        }
        let (lo, hi) = self.jitter_micros;
        if hi > 0 {
            // memtier pauses only when the maximum is above 0.
            load.insert(
                "open_jitter".into(),
                json!([format!("{lo}us"), format!("{hi}us")]),
            );
        }
        if let Some(r) = self.rate_per_connection {
            // memtier limits each connection; respload's rate is the total.
            let connections = self.clients as u64 * self.threads as u64;
            load.insert("rate".into(), json!(r as u64 * connections));
        }
        Ok((load, requests_per_client))
    }

    /// `keys`: prefix, range and the SET and GET key patterns.
    fn keys(&self) -> Map<String, Json> {
        let arbitrary = !self.commands.is_empty();
        let (set_p, get_p) = self.key_pattern.unwrap_or(('R', 'R'));
        let (lo, hi) = (self.key_minimum, self.key_maximum);
        let mut keys = Map::new();
        keys.insert("prefix".into(), json!(self.key_prefix));
        keys.insert("range".into(), json!([lo, hi]));
        if !arbitrary {
            keys.insert("distribution".into(), self.distribution(set_p));
            keys.insert("writes".into(), self.distribution(set_p));
            keys.insert("reads".into(), self.distribution(get_p));
        }
        keys
    }

    /// `values`: sizes, data and the SETs' expiry.
    fn values(&self) -> Map<String, Json> {
        let arbitrary = !self.commands.is_empty();
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
        // Imported items carry their own TTLs (see `imported`).
        let sets = !arbitrary && self.ratio.unwrap_or((1, 10)).0 > 0 && self.data_import.is_none();
        if let (Some((a, b)), true) = (self.expiry_range, sets) {
            values.insert("expiry".into(), json!([a, b]));
        }
        values
    }

    /// `[[commands]]`, and the rows of memtier's table for a `--command` workload (`None`:
    /// its Sets/Gets/Waits rows).
    fn commands(
        &self,
        imported: Option<&Imported>,
    ) -> Result<(Vec<Json>, Option<Vec<CommandRow>>)> {
        let arbitrary = !self.commands.is_empty();
        let mut commands = Vec::new();
        let mut rows = None;
        let captured = self.monitor_commands()?;
        if self.scan_incremental {
            let (scan, list) = self.scan_command()?;
            commands.push(scan);
            rows = Some(list);
        } else if arbitrary && self.transaction {
            let (chain, list) = self.transaction_chain()?;
            commands.push(chain);
            rows = Some(list);
        } else if arbitrary {
            let mut list: Vec<CommandRow> = Vec::new();
            // memtier counts the requests of `__monitor_line@__` under their own commands'
            // names, in rows after those of every --command.
            let mut tail: Vec<CommandRow> = Vec::new();
            let mut each = 0;
            for c in &self.commands {
                let (args, line) = match (&c.monitor, &captured) {
                    (None, _) => (c.args.clone(), None),
                    (Some(text), None) => {
                        return Err(Error::spec(
                            "--command",
                            format!(
                                "`{text}` replays a command of a --monitor-input file, and \
                                 there is none: give --monitor-input=FILE"
                            ),
                        ))
                    }
                    (Some(text), Some((path, file))) => {
                        match monitor::placeholder("--command", text, file.len())? {
                            Placeholder::Line(n) => (monitor::take(file, n, path)?, Some(n)),
                            Placeholder::Each => {
                                each += 1;
                                let label = if each == 1 {
                                    "MONITOR".to_string()
                                } else {
                                    format!("MONITOR#{each}")
                                };
                                commands.push(self.monitor_chain(c, &label, path, file)?);
                                list.push(CommandRow {
                                    label: String::new(),
                                    name: MONITOR_RANDOM.into(),
                                    line_name: None,
                                });
                                // The chain's steps are reported as `MONITOR:NAME`, by name.
                                for args in file.iter().flatten() {
                                    let name = command_name(args);
                                    let label = format!("{label}:{name}");
                                    if !tail.iter().any(|r| r.label == label) {
                                        tail.push(CommandRow {
                                            label,
                                            name,
                                            line_name: None,
                                        });
                                    }
                                }
                                continue;
                            }
                        }
                    }
                };
                let name = command_name(&args);
                let n = list.iter().filter(|r| r.name == name).count();
                let label = if n == 0 {
                    name.clone()
                } else {
                    format!("{name}#{}", n + 1)
                };
                commands.push(json!({
                    "template": template(&args),
                    "label": label,
                    "weight": c.ratio,
                    "distribution": self.distribution(c.pattern),
                }));
                list.push(CommandRow {
                    label,
                    // memtier's name of `__monitor_lineN__` by line: `SET (Line 2)`.
                    line_name: line.map(|n| format!("{name} (Line {n})")),
                    name,
                });
            }
            list.extend(tail);
            rows = Some(list);
        } else if let Some(imported) = imported {
            commands = imported.commands.clone();
        } else {
            commands = self.set_get_commands()?;
        }
        Ok((commands, rows))
    }

    /// The whole spec: its parts, output files, StatsD, seeds and the runs as phases.
    fn spec(
        &self,
        target: Map<String, Json>,
        load: Map<String, Json>,
        keys: Map<String, Json>,
        values: Map<String, Json>,
        commands: Vec<Json>,
    ) -> Map<String, Json> {
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
        let mut output = Map::new();
        if self.json_out_file.is_some() {
            // Its per-second percentiles are read from each interval's histogram.
            output.insert("interval_histograms".into(), json!(true));
        }
        if let Some(path) = &self.failed_keys_file {
            output.insert("failed_keys".into(), json!(path));
        }
        if let Some(prefix) = &self.client_stats {
            output.insert("client_stats".into(), json!(prefix));
        }
        if !output.is_empty() {
            spec.insert("output".into(), Json::Object(output));
        }
        if let Some(host) = &self.statsd_host {
            // memtier makes the prefix and the label valid (an empty label is `default`),
            // and posts its events to the StatsD host's Graphite port.
            let label = match self.statsd_run_label.as_str() {
                "" => "default".to_string(),
                l => sanitize_name_part(l, false),
            };
            let statsd = json!({
                "host": host,
                "port": self.statsd_port,
                "prefix": sanitize_name_part(&self.statsd_prefix, true),
                "run_label": label,
                "percentiles": self.percentiles,
                "graphite_port": self.graphite_port,
            });
            spec.insert("observe".into(), json!({ "statsd": statsd }));
        }
        if self.run_count > 1 {
            let phases: Vec<Json> = (1..=self.run_count)
                .map(|i| json!({ "name": format!("run {i}") }))
                .collect();
            spec.insert("phases".into(), json!(phases));
        } else {
            spec.insert("name".into(), json!("run 1"));
        }
        spec
    }

    /// The report settings of the line.
    fn report_options(
        self,
        requests_per_client: Option<u64>,
        rows: Option<Vec<CommandRow>>,
        config: Vec<(String, Json)>,
        data_verify: Option<DataVerify>,
    ) -> Options {
        Options {
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
            data_verify,
        }
    }

    /// The commands of the `--monitor-input` file, with its path; `None` without one.
    /// memtier reads the file whether or not a `--command` uses it, so a bad file is an
    /// error either way.
    fn monitor_commands(&self) -> Result<Option<(&str, Vec<Captured>)>> {
        let Some(path) = &self.monitor_input else {
            return Ok(None);
        };
        if self.cluster_mode {
            return Err(Error::spec(
                "--monitor-input",
                "is not supported with --cluster-mode (as in memtier_benchmark)",
            ));
        }
        Ok(Some((path, monitor::load(path)?)))
    }

    /// `__monitor_line@__`: a chain of the file's commands, one sent per pick, in turn
    /// (`--monitor-pattern=S`, memtier's one counter over all connections) or at random
    /// (`R`, each command with the same chance).
    fn monitor_chain(
        &self,
        c: &super::args::UserCommand,
        label: &str,
        path: &str,
        file: &[Captured],
    ) -> Result<Json> {
        let steps = (1..=file.len())
            .map(|n| monitor::take(file, n, path).map(|args| template(&args)))
            .collect::<Result<Vec<Json>>>()?;
        Ok(json!({
            "chain": steps,
            "pick": if self.monitor_pattern == 'R' { "random" } else { "sequential" },
            "label": label,
            "weight": c.ratio,
            "distribution": self.distribution(c.pattern),
        }))
    }

    /// memtier's own checks of `--no-expiry`, `--data-offset`, `--multi-key-get` and
    /// `--wait-ratio` against the rest of the line.
    fn check_data_options(&self) -> Result<()> {
        if self.data_offset > 0 && self.expiry_range.is_some() {
            return Err(Error::spec(
                "--data-offset",
                "cannot be used with --expiry-range: SETRANGE sets no TTL (as in \
                 memtier_benchmark)",
            ));
        }
        if self.cluster_mode {
            for (set, opt) in [
                (self.reconnect_interval.is_some(), "--reconnect-interval"),
                (self.wait_ratio.is_some(), "--wait-ratio"),
            ] {
                if set {
                    return Err(Error::spec(
                        opt,
                        "is not supported with --cluster-mode (as in memtier_benchmark)",
                    ));
                }
            }
            if self.retry_on_error {
                return Err(Error::spec(
                    "--retry-on-error",
                    "is not supported with --cluster-mode by respload yet: its cluster client \
                     follows MOVED, ASK and TRYAGAIN itself",
                ));
            }
            if self.client_stats.is_some() {
                return Err(Error::spec(
                    "--client-stats",
                    "is not supported with --cluster-mode by respload yet: its cluster client \
                     keeps no per-connection counters",
                ));
            }
            if self.multi_key_get > 0 {
                return Err(Error::spec(
                    "--multi-key-get",
                    "is not supported with --cluster-mode by respload: an MGET's keys would \
                     fall in different slots (CROSSSLOT); memtier gathers them on one shard",
                ));
            }
        }
        let (lo, hi) = self.jitter_micros;
        if lo > hi {
            return Err(Error::spec(
                "--thread-conn-start-min-jitter-micros",
                format!("{lo} is above --thread-conn-start-max-jitter-micros ({hi})"),
            ));
        }
        Ok(())
    }

    /// memtier's SET/GET mix as weighted commands: SET (SETRANGE at `--data-offset`), GET
    /// (GETRANGE; or MGETs of up to `--multi-key-get` keys) and WAIT (`--wait-ratio`).
    fn set_get_commands(&self) -> Result<Vec<Json>> {
        let (a, b) = self.ratio.unwrap_or((1, 10));
        let offset = self.data_offset.to_string();
        // memtier sends a WAIT whenever SETs / WAITs > A / B (integer division, from the
        // first request): one WAIT per A / B + 1 SETs, the others weighted up to match.
        let (every, waits) = match self.wait_ratio {
            Some((wa, wb)) if wb > 0 => (wa / wb + 1, true),
            _ => (1, false),
        };
        let weight = |w: u64| -> Result<u64> {
            let w = w * every as u64;
            if w > MAX_WEIGHT {
                return Err(Error::spec(
                    "--wait-ratio",
                    format!(
                        "gives a weight of {w} to the SET/GET mix: respload allows at most \
                         {MAX_WEIGHT} (use smaller --ratio or --wait-ratio numbers)"
                    ),
                ));
            }
            Ok(w)
        };
        let mut out = Vec::new();
        if a > 0 {
            out.push(if self.data_offset > 0 {
                json!({
                    "template": ["SETRANGE", "{key}", offset, "{value}"],
                    "label": "SET",
                    "weight": weight(a as u64)?,
                })
            } else {
                json!({ "name": "set", "weight": weight(a as u64)? })
            });
        }
        if b > 0 {
            let n = self.multi_key_get;
            // `None` without --multi-key-get (N = 0).
            out.push(if let Some(full) = b.checked_div(n) {
                // memtier's rotation: B keys read as MGETs of N keys, the last of B mod N.
                let mget = |keys: u32| {
                    let mut args = vec!["MGET".to_string(), "{key}".to_string()];
                    args.extend((1..keys).map(|_| "{newkey}".to_string()));
                    json!(args)
                };
                let rest = b - full * n;
                let count = full + u32::from(rest > 0);
                // A rotation longer than MAX_MGET_ROTATION keeps its full MGETs only: the
                // short one would be 1 in more than a thousand.
                if rest == 0 || count > MAX_MGET_ROTATION {
                    json!({ "template": mget(n), "weight": weight(count as u64)? })
                } else {
                    let mut steps: Vec<Json> = (0..full).map(|_| mget(n)).collect();
                    steps.push(mget(rest));
                    json!({
                        "chain": steps,
                        "pick": "sequential",
                        "weight": weight(count as u64)?,
                    })
                }
            } else if self.data_offset > 0 {
                json!({
                    "template": ["GETRANGE", "{key}", offset, "-1"],
                    "label": "GET",
                    "weight": weight(b as u64)?,
                })
            } else {
                json!({ "name": "get", "weight": weight(b as u64)? })
            });
        }
        if waits && a > 0 {
            let range = |(lo, hi): (u32, u32)| format!("{{rand:{lo}..{hi}}}");
            out.push(json!({
                "template": [
                    "WAIT",
                    range(self.num_slaves.unwrap_or((0, 0))),
                    range(self.wait_timeout.unwrap_or((0, 0))),
                ],
                "label": "WAIT",
                "weight": a,
            }));
        }
        Ok(out)
    }

    /// `load.reconnect` from memtier's reconnect options: after `--reconnect-interval`
    /// requests; with `--max-reconnect-attempts` or `--reconnect-backoff-factor`, memtier's
    /// waits (F, F^2, ... seconds up to 60 s, or 1 s without a factor) and attempts.
    fn reconnect_spec(&self) -> Option<Json> {
        let mut r = Map::new();
        if let Some(n) = self.reconnect_interval {
            r.insert("every".into(), json!(n));
        }
        if self.max_reconnect_attempts.is_some() || self.reconnect_backoff_factor.is_some() {
            let f = self.reconnect_backoff_factor.unwrap_or(1.0);
            let first = f.min(MAX_BACKOFF_SECS);
            r.insert(
                "delay".into(),
                json!(format!("{}ms", (first * 1000.0).round())),
            );
            r.insert("backoff".into(), json!(f));
            r.insert("max_delay".into(), json!(format!("{MAX_BACKOFF_SECS}s")));
            r.insert(
                "attempts".into(),
                json!(self.max_reconnect_attempts.unwrap_or(0)),
            );
        }
        (!r.is_empty()).then_some(Json::Object(r))
    }

    /// `--transaction`: the `--command` lines as one chain in memtier's rotation (each line
    /// `--command-ratio` times in a row), sent back to back on one connection with one key
    /// for every `__key__` of the rotation, drawn by the first keyed line's
    /// `--command-key-pattern` (memtier 2.4.3's same-key rotation). The rows: each step
    /// labelled as respload labels a chain's steps (`SET`, `SET#4` for a name that repeats).
    fn transaction_chain(&self) -> Result<(Json, Vec<CommandRow>)> {
        let opt = "--transaction";
        let mut steps = Vec::new();
        let mut names = Vec::new();
        for c in &self.commands {
            if let Some(text) = &c.monitor {
                return Err(Error::spec(
                    opt,
                    format!("cannot hold `{text}` in its rotation: give the commands themselves"),
                ));
            }
            for _ in 0..c.ratio {
                if steps.len() == MAX_ROTATION {
                    return Err(Error::spec(
                        opt,
                        format!(
                            "makes a rotation of more than {MAX_ROTATION} requests: respload \
                             allows at most {MAX_ROTATION} (use smaller --command-ratio numbers)"
                        ),
                    ));
                }
                steps.push(template(&c.args));
                names.push(command_name(&c.args));
            }
        }
        let pattern = self
            .commands
            .iter()
            .find(|c| c.args.iter().any(|a| a == KEY_PLACEHOLDER))
            .map_or('R', |c| c.pattern);
        let rows = names
            .iter()
            .enumerate()
            .map(|(i, name)| CommandRow {
                label: match names.iter().filter(|n| *n == name).count() {
                    1 => name.clone(),
                    _ => format!("{name}#{}", i + 1),
                },
                name: name.clone(),
                line_name: None,
            })
            .collect();
        let chain = json!({
            "chain": steps,
            "distribution": self.distribution(pattern),
        });
        Ok((chain, rows))
    }

    /// `--scan-incremental-iteration`: the one `--command`, a SCAN, as a template following
    /// `{cursor}` (its first argument), with memtier's checks and its two rows, `SCAN 0`
    /// and `SCAN <cursor>`.
    fn scan_command(&self) -> Result<(Json, Vec<CommandRow>)> {
        let opt = "--scan-incremental-iteration";
        let refuse = |why: &str| Err(Error::spec(opt, format!("{why} (as in memtier_benchmark)")));
        if self.pipeline != 1 {
            return refuse("requires --pipeline 1");
        }
        if self.cluster_mode {
            return refuse("is not supported in cluster mode");
        }
        let [c] = self.commands.as_slice() else {
            return refuse("requires exactly one --command (a SCAN command)");
        };
        if c.monitor.is_some() || command_name(&c.args) != "SCAN" {
            return refuse("requires the command to be a SCAN command");
        }
        if c.args.len() < 2 {
            return refuse("requires a SCAN command with a cursor argument (e.g. 'SCAN 0')");
        }
        let Json::Array(mut args) = template(&c.args) else {
            return Err(Error::spec(
                "--command",
                "a SCAN to follow must be text (UTF-8) in every argument",
            ));
        };
        args[1] = json!("{cursor}");
        let mut scan = json!({
            "template": args,
            "label": "SCAN",
            "weight": c.ratio,
            "distribution": self.distribution(c.pattern),
        });
        if self.scan_max_iterations > 0 {
            scan["max_iterations"] = json!(self.scan_max_iterations);
        }
        let rows = ["SCAN 0", "SCAN <cursor>"]
            .map(|label| CommandRow {
                label: label.into(),
                name: label.into(),
                line_name: None,
            })
            .to_vec();
        Ok((scan, rows))
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
        let (wa, wb) = self.wait_ratio.unwrap_or((0, 0));
        let slaves = self.num_slaves.unwrap_or((0, 0));
        let timeout = self.wait_timeout.unwrap_or((0, 0));
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
            (
                "uri",
                json!(self.uri.as_deref().map(shown_uri).unwrap_or_default()),
            ),
            ("unix socket", opt(&self.unix_socket)),
            (
                "address family",
                json!(match self.family {
                    Some("ipv4") => "AF_INET",
                    Some(_) => "AF_INET6",
                    None => "Unspecified",
                }),
            ),
            ("protocol", json!(self.protocol)),
            ("out_file", opt(&self.out_file)),
            ("client_stats", opt(&self.client_stats)),
            ("run_count", json!(self.run_count)),
            ("debug", json!(self.debug)),
            ("requests", json!(requests_per_client.unwrap_or(0))),
            ("rate_limit", json!(0)),
            ("clients", json!(self.clients)),
            ("threads", json!(self.threads)),
            ("test_time", json!(self.test_time.unwrap_or(0))),
            ("ratio", json!(format!("{ra}:{rb}"))),
            ("pipeline", json!(self.pipeline)),
            ("transaction", tf(self.transaction)),
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
            ("data_offset", json!(self.data_offset)),
            ("random_data", tf(self.random_data)),
            ("data_size_range", range(self.data_size_range)),
            ("data_size_list", json!(list)),
            (
                "data_size_pattern",
                json!(self.data_size_pattern.to_string()),
            ),
            ("expiry_range", range(self.expiry_range)),
            ("data_import", opt(&self.data_import)),
            ("data_verify", tf(self.data_verify)),
            ("verify_only", tf(self.verify_only)),
            ("generate_keys", tf(self.generate_keys)),
            ("key_prefix", json!(self.key_prefix)),
            ("key_minimum", json!(self.key_minimum)),
            ("key_maximum", json!(self.key_maximum)),
            ("key_pattern", json!(format!("{sp}:{gp}"))),
            ("key_stddev", json!(self.key_stddev.unwrap_or(0.0))),
            ("key_median", json!(self.key_median.unwrap_or(0.0))),
            ("key_zipf_exp", json!(self.key_zipf_exp.unwrap_or(0.0))),
            (
                "reconnect_interval",
                json!(self.reconnect_interval.unwrap_or(0)),
            ),
            ("retry_on_error", tf(self.retry_on_error)),
            ("max_retries", json!(self.max_retries)),
            ("retry_backoff_ms", json!(self.retry_backoff_ms)),
            ("retry_backoff_factor", json!(self.retry_backoff_factor)),
            ("retry_on", json!(self.retry_on.clone().unwrap_or_default())),
            ("max_retry_queue", json!(self.max_retry_queue)),
            (
                "failed_keys_file",
                json!(self.failed_keys_file.clone().unwrap_or_default()),
            ),
            ("connection_timeout", json!(self.connection_timeout)),
            (
                "connection_stage_timeout",
                json!(self.connection_stage_timeout),
            ),
            (
                "thread_conn_start_min_jitter_micros",
                json!(self.jitter_micros.0),
            ),
            (
                "thread_conn_start_max_jitter_micros",
                json!(self.jitter_micros.1),
            ),
            ("multi_key_get", json!(self.multi_key_get)),
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
            ("no-expiry", tf(self.no_expiry)),
            ("wait-ratio", json!(format!("{wa}:{wb}"))),
            // memtier writes this range with a `:` (and --wait-timeout's with a `-`).
            ("num-slaves", json!(format!("{}:{}", slaves.0, slaves.1))),
            (
                "wait-timeout",
                json!(format!("{}-{}", timeout.0, timeout.1)),
            ),
            ("print-all-runs", tf(self.print_all_runs)),
        ];
        let _ = self.reconnect_on_error;
        items.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    }
}

/// A command's name as memtier shows it: its first word, upper-cased.
fn command_name(args: &[Vec<u8>]) -> String {
    args.first()
        .map(|a| String::from_utf8_lossy(a).to_ascii_uppercase())
        .unwrap_or_default()
}
