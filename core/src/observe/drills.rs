//! Fault drills: each event of a phase acts on the server at its time, from its own side
//! connection on a thread of its own, so the load connections are never touched. While a
//! drill is active its bit is set in a mask the workers read at their housekeeping tick, so
//! each drill gets the requests finished during it.

use super::server_info::parse_info;
use crate::net::cluster::SlotMap;
use crate::net::{Client, Value};
use crate::plan::{replica_connect, ConnectOptions, Endpoint, Phase};
use crate::spec::NodeAddr;
use crate::spec::{Drill, DrillMode, Event};
use crate::{Error, Result};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a drill checks whether the server is back.
const POLL: Duration = Duration::from_millis(10);
/// A drill's window stays open this long after it finished, so the requests the server
/// releases when it comes back (those a pause held, say) count with the drill.
pub const WINDOW_GRACE: Duration = Duration::from_millis(100);

/// A drill resolved before any traffic: the nodes it acts on.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The event as written.
    pub event: Event,
    /// The mode used (`pause`, `failover`).
    pub mode: Option<DrillMode>,
    /// The node acted on (the primary of a failover or a resync).
    pub node: ConnectOptions,
    /// `failover`: the replicas that may take over; `replica-resync`: the replica.
    pub replicas: Vec<ConnectOptions>,
    /// Whether the target is a cluster.
    pub cluster: bool,
}

/// What a drill did.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// When its first command was sent (`None`: the phase ended first).
    pub started: Option<Instant>,
    /// When the server was back (see the report's `finished_s`).
    pub finished: Option<Instant>,
    /// The fork time after a save or rewrite (µs).
    pub fork_usec: Option<u64>,
    /// `replica-resync`: from the reattaching REPLICAOF to in sync.
    pub sync: Option<Duration>,
    /// `replica-resync`: whether the primary made a full sync.
    pub full_sync: Option<bool>,
    /// The server's refusal, or a connection failure.
    pub error: Option<String>,
    /// The node acted on.
    pub node: String,
    /// The replica involved (the one promoted, for a failover).
    pub replica: Option<String>,
}

/// Resolve the drills of `phase` (cluster map, replicas) over the network, before traffic.
/// A drill that cannot run (no replica to fail over to, a node that is not a primary) is a
/// spec error naming the event.
pub async fn prepare(phase: &Phase) -> Result<Vec<Plan>> {
    let events = &phase.spec.events;
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let mut base = phase.connect.control();
    if !base.client_name.is_empty() {
        base.client_name.push_str("-drill");
    }
    let cluster = base.cluster.is_some();
    let map = match &base.cluster {
        Some(seeds) => Some(SlotMap::fetch(seeds, &base).await?),
        None => None,
    };
    let p = &phase.prefix;
    let mut plans = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let at = |field: &str| format!("{p}events[{i}].{field}");
        let mut node = base.clone();
        let mut cluster_replicas = Vec::new();
        if let Some(map) = &map {
            let primaries = map.primaries();
            let primary = match &e.node {
                Some(n) => NodeAddr::parse(n).unwrap_or_else(|| primaries[0].clone()),
                None => map
                    .primary_of(0)
                    .cloned()
                    .unwrap_or_else(|| primaries[0].clone()),
            };
            if !primaries.contains(&primary) {
                let names: Vec<String> = primaries.iter().map(|a| a.to_string()).collect();
                return Err(Error::spec(
                    at("node"),
                    format!(
                        "`{primary}` is not a primary of the cluster: allowed are {}",
                        names.join(", ")
                    ),
                ));
            }
            node = primary.connect(&base);
            for r in map.ranges.iter().filter(|r| r.primary == primary) {
                for rep in &r.replicas {
                    let c = rep.connect(&base);
                    if !cluster_replicas.contains(&c) {
                        cluster_replicas.push(c);
                    }
                }
            }
        }
        let replicas = match e.drill {
            Drill::Failover | Drill::ReplicaResync => {
                let given = match &e.replica {
                    Some(r) => {
                        vec![replica_connect(r, &base).map_err(|m| Error::spec(at("replica"), m))?]
                    }
                    None if cluster => cluster_replicas,
                    None => discover_replica(&node).await?.into_iter().collect(),
                };
                if given.is_empty() {
                    let field = if cluster { "node" } else { "replica" };
                    return Err(Error::spec(
                        at(field),
                        format!(
                            "the {} drill needs a replica of {}, and it lists none ({}): start \
                             one{}",
                            e.drill.name(),
                            node.endpoint,
                            if cluster {
                                "in CLUSTER SLOTS"
                            } else {
                                "connected_slaves:0 in INFO replication"
                            },
                            if cluster { "" } else { ", or give `replica`" }
                        ),
                    ));
                }
                if e.replica.is_some() {
                    check_replica(&given[0], &node)
                        .await
                        .map_err(|m| Error::spec(at("replica"), m))?;
                }
                given
            }
            _ => Vec::new(),
        };
        plans.push(Plan {
            event: e.clone(),
            mode: e.effective_mode(cluster),
            node,
            replicas,
            cluster,
        });
    }
    Ok(plans)
}

/// Whether `replica`, given by the spec, replicates `primary`: checked before traffic, as a
/// failover drill would otherwise stop the primary with nothing to take over.
async fn check_replica(
    replica: &ConnectOptions,
    primary: &ConnectOptions,
) -> std::result::Result<(), String> {
    let who = &replica.endpoint;
    if replica.endpoint == primary.endpoint {
        return Err(format!(
            "`{who}` is the target itself: give a replica of it"
        ));
    }
    let mut c = connect(replica)
        .await
        .map_err(|e| format!("`{who}`: {e}"))?;
    let rep = info(&mut c, "replication", replica.connect_timeout)
        .await
        .map_err(|e| format!("`{who}`: {e}"))?;
    let role = field(&rep, "role");
    if role != "slave" && role != "replica" {
        return Err(format!(
            "`{who}` is not a replica (role:{role} in INFO replication): give a replica of {}",
            primary.endpoint
        ));
    }
    let (host, port) = (field(&rep, "master_host"), field(&rep, "master_port"));
    // Loopback names are one machine; other names for the target (a host name, a mapped
    // port) are matched by the replication ID the replica follows.
    let local = |h: &str| {
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    let by_address = match &primary.endpoint {
        Endpoint::Tcp { host: h, port: p } => {
            port == p.to_string() && (host == h || (local(host) && local(h)))
        }
        Endpoint::Unix(_) => true,
    };
    if by_address || same_replid(&rep, primary).await {
        return Ok(());
    }
    Err(format!(
        "`{who}` replicates {host}:{port}, not {}: give a replica of the target",
        primary.endpoint
    ))
}

/// Whether the replica whose INFO replication is `rep` follows `primary`'s replication ID.
async fn same_replid(rep: &BTreeMap<String, String>, primary: &ConnectOptions) -> bool {
    let Ok(mut c) = connect(primary).await else {
        return false;
    };
    let Ok(own) = info(&mut c, "replication", primary.connect_timeout).await else {
        return false;
    };
    let id = field(&own, "master_replid");
    !id.is_empty() && field(rep, "master_replid") == id
}

/// The first replica a primary lists in `INFO replication` (`slave0:ip=...,port=...`).
async fn discover_replica(primary: &ConnectOptions) -> Result<Option<ConnectOptions>> {
    let mut c = Client::connect(primary).await?;
    let info = c
        .call(&[b"INFO", b"replication"], primary.connect_timeout)
        .await?;
    let fields = parse_info(&info.as_text().unwrap_or_default());
    let Some(slave) = fields.get("slave0") else {
        return Ok(None);
    };
    let kv: BTreeMap<&str, &str> = slave.split(',').filter_map(|f| f.split_once('=')).collect();
    let (Some(ip), Some(port)) = (kv.get("ip"), kv.get("port").and_then(|p| p.parse().ok())) else {
        return Ok(None);
    };
    let addr = NodeAddr {
        host: ip.to_string(),
        port,
    };
    let mut r = addr.connect(primary);
    r.cluster = None;
    r.db = 0;
    Ok(Some(r))
}

/// The drill thread of one phase.
pub struct Drills {
    stop: Arc<AtomicBool>,
    join: JoinHandle<Vec<Outcome>>,
}

impl Drills {
    /// Run `plans` at their times from `measure_start`; bit `i` of `mask` is set while plan
    /// `i` is active.
    pub fn start(
        plans: Vec<Plan>,
        measure_start: Instant,
        mask: Arc<AtomicU64>,
    ) -> std::io::Result<Drills> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let join = std::thread::Builder::new()
            .name("respload-drills".into())
            .spawn(move || {
                let n = plans.len();
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return vec![Outcome::default(); n];
                };
                // Each drill's node, and when it started (kept outside its task): a drill
                // that panics is still reported, as started, with its window's load figures.
                let slots: Vec<(String, Rc<Cell<Option<Instant>>>)> = plans
                    .iter()
                    .map(|p| (p.node.endpoint.to_string(), Rc::default()))
                    .collect();
                let local = tokio::task::LocalSet::new();
                local.block_on(&rt, async move {
                    let handles: Vec<_> = plans
                        .into_iter()
                        .enumerate()
                        .map(|(i, plan)| {
                            let (mask, stop) = (Arc::clone(&mask), Arc::clone(&flag));
                            let at = Rc::clone(&slots[i].1);
                            tokio::task::spawn_local(run_one(
                                i,
                                plan,
                                measure_start,
                                mask,
                                stop,
                                at,
                            ))
                        })
                        .collect();
                    let mut out = Vec::with_capacity(n);
                    for (h, (node, at)) in handles.into_iter().zip(slots) {
                        out.push(outcome_of(h.await, node, at.get()));
                    }
                    out
                })
            })?;
        Ok(Drills { stop, join })
    }

    /// The phase is over: end the drills still waiting (a drill that detached a replica still
    /// reattaches it) and return what each did, in event order.
    pub fn finish(self) -> Vec<Outcome> {
        self.stop.store(true, Ordering::Relaxed);
        self.join.join().unwrap_or_default()
    }
}

async fn run_one(
    i: usize,
    plan: Plan,
    measure_start: Instant,
    mask: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    started: Rc<Cell<Option<Instant>>>,
) -> Outcome {
    let mut out = Outcome {
        node: plan.node.endpoint.to_string(),
        ..Outcome::default()
    };
    if !sleep_until(measure_start + plan.event.at.0, &stop).await {
        return out;
    }
    out.started = Some(Instant::now());
    started.set(out.started);
    let active = Active::set(&mask, i);
    let result = match plan.event.drill {
        Drill::Bgsave | Drill::Bgrewriteaof => persist(&plan, &stop, &mut out).await,
        Drill::Pause => pause(&plan, &mut out).await,
        Drill::Failover => failover(&plan, &stop, &mut out).await,
        Drill::ReplicaResync => resync(&plan, &stop, &mut out).await,
    };
    sleep_until(Instant::now() + WINDOW_GRACE, &stop).await;
    drop(active);
    if let Err(e) = result {
        out.error = Some(e);
    }
    out
}

/// A drill's outcome when its task panicked (a bug).
const PANICKED: &str = "internal error: the drill ended by a panic (a bug in respload)";

/// A drill task's outcome. One that panicked (a bug) ends in an internal error, reported
/// with its node and, when it got that far, its start.
fn outcome_of(
    joined: std::result::Result<Outcome, tokio::task::JoinError>,
    node: String,
    started: Option<Instant>,
) -> Outcome {
    joined.unwrap_or_else(|_| Outcome {
        node,
        started,
        error: Some(PANICKED.to_string()),
        ..Outcome::default()
    })
}

/// Bit `i` of the drills' mask, set while this lives: a drill that ends by a panic still
/// clears it, so the requests after it are not counted as made during the drill.
struct Active<'a> {
    mask: &'a AtomicU64,
    bit: u64,
}

impl<'a> Active<'a> {
    fn set(mask: &'a AtomicU64, i: usize) -> Self {
        let bit = 1 << i;
        mask.fetch_or(bit, Ordering::Relaxed);
        Active { mask, bit }
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.mask.fetch_and(!self.bit, Ordering::Relaxed);
    }
}

/// Sleep until `t`; false when stopped first.
async fn sleep_until(t: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        tokio::time::sleep((t - now).min(Duration::from_millis(20))).await;
    }
}

type Drilled = std::result::Result<(), String>;

async fn connect(c: &ConnectOptions) -> std::result::Result<Client, String> {
    Client::connect(c).await.map_err(|e| e.to_string())
}

/// Send one command; an error reply becomes `Err` naming the command.
async fn call(
    client: &mut Client,
    args: &[&[u8]],
    timeout: Duration,
) -> std::result::Result<Value, String> {
    match client.call(args, timeout).await {
        Ok(Value::Error(e)) => Err(format!(
            "{} refused: {e}",
            String::from_utf8_lossy(&args.join(&b' '))
        )),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

async fn info(
    client: &mut Client,
    section: &str,
    timeout: Duration,
) -> std::result::Result<BTreeMap<String, String>, String> {
    let v = call(client, &[b"INFO", section.as_bytes()], timeout).await?;
    Ok(parse_info(&v.as_text().unwrap_or_default()))
}

fn field<'a>(m: &'a BTreeMap<String, String>, k: &str) -> &'a str {
    m.get(k).map_or("", String::as_str)
}

/// `bgsave`, `bgrewriteaof`: start it, wait until it ends, read the fork time.
async fn persist(plan: &Plan, stop: &AtomicBool, out: &mut Outcome) -> Drilled {
    let t = plan.node.connect_timeout;
    let mut c = connect(&plan.node).await?;
    let (cmd, busy, status): (&[u8], &[&str], &str) = match plan.event.drill {
        Drill::Bgsave => (
            b"BGSAVE",
            &["rdb_bgsave_in_progress"],
            "rdb_last_bgsave_status",
        ),
        _ => (
            b"BGREWRITEAOF",
            &["aof_rewrite_in_progress", "aof_rewrite_scheduled"],
            "aof_last_bgrewrite_status",
        ),
    };
    // A save or rewrite the server started on its own (an automatic AOF rewrite, a save
    // point) makes ours fail with "already in progress": wait for it to end, then start ours,
    // so the fork time reported is that of the drill's own fork.
    let mut tries = 0;
    loop {
        match call(&mut c, &[cmd], t).await {
            Err(e) if e.contains("already in progress") && tries < MAX_BUSY_TRIES => {
                tries += 1;
                if !idle(&mut c, busy, stop, t).await? {
                    return Ok(());
                }
                out.started = Some(Instant::now());
            }
            Err(e) => return Err(e),
            Ok(_) => break,
        }
    }
    if !idle(&mut c, busy, stop, t).await? {
        return Ok(());
    }
    out.finished = Some(Instant::now());
    let p = info(&mut c, "persistence", t).await?;
    let stats = info(&mut c, "stats", t).await?;
    out.fork_usec = field(&stats, "latest_fork_usec").parse().ok();
    match field(&p, status) {
        "ok" | "" => Ok(()),
        s => Err(format!("it failed ({status}:{s})")),
    }
}

/// How often a save or rewrite already running is waited out before the drill gives up.
const MAX_BUSY_TRIES: u32 = 5;

/// Wait until none of the `busy` persistence fields is set; `false` if the run stopped first.
async fn idle(
    c: &mut Client,
    busy: &[&str],
    stop: &AtomicBool,
    t: Duration,
) -> std::result::Result<bool, String> {
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let p = info(c, "persistence", t).await?;
        if busy.iter().all(|k| field(&p, k) == "0") {
            return Ok(true);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// `pause`: the server stops serving for `duration`; done when the drill's own next command
/// is answered.
async fn pause(plan: &Plan, out: &mut Outcome) -> Drilled {
    let t = plan.node.connect_timeout;
    let d = plan.event.effective_duration();
    let mut c = connect(&plan.node).await?;
    match plan.mode {
        Some(DrillMode::DebugSleep) => {
            let secs = format!("{}", d.as_secs_f64());
            call(&mut c, &[b"DEBUG", b"SLEEP", secs.as_bytes()], d + t).await?;
        }
        _ => {
            let ms = d.as_millis().max(1).to_string();
            call(&mut c, &[b"CLIENT", b"PAUSE", ms.as_bytes()], t).await?;
            // CLIENT PAUSE holds every client, this one too: the PING returns at the end.
            call(&mut c, &[b"PING"], d + t).await?;
        }
    }
    out.finished = Some(Instant::now());
    Ok(())
}

/// Stop a server with `SHUTDOWN NOSAVE NOW` (`SHUTDOWN NOSAVE` before Redis 7): the
/// connection closing is the success.
async fn shutdown(node: &ConnectOptions) -> Drilled {
    let t = node.connect_timeout;
    let mut c = connect(node).await?;
    for args in [
        &[&b"SHUTDOWN"[..], b"NOSAVE", b"NOW"][..],
        &[b"SHUTDOWN", b"NOSAVE"],
    ] {
        match c.call(args, t).await {
            Ok(Value::Error(e)) if e.contains("syntax") && args.len() == 3 => continue,
            Ok(Value::Error(e)) => return Err(format!("SHUTDOWN refused: {e}")),
            // It answered instead of going away: not stopped.
            Ok(_) => return Err("SHUTDOWN answered, the server is still up".into()),
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// Whether `c` is a primary now (and, in a cluster, sees the cluster as ok).
async fn promoted(c: &ConnectOptions, cluster: bool) -> bool {
    let t = c.connect_timeout;
    let Ok(mut client) = connect(c).await else {
        return false;
    };
    let Ok(r) = info(&mut client, "replication", t).await else {
        return false;
    };
    if field(&r, "role") != "master" {
        return false;
    }
    if !cluster {
        return true;
    }
    match call(&mut client, &[b"CLUSTER", b"INFO"], t).await {
        Ok(v) => v.as_text().is_some_and(|s| s.contains("cluster_state:ok")),
        Err(_) => false,
    }
}

/// `failover`: `CLUSTER FAILOVER` on a replica, or stop the primary (and, outside a cluster,
/// promote the replica); done when a replica is primary.
async fn failover(plan: &Plan, stop: &AtomicBool, out: &mut Outcome) -> Drilled {
    let t = plan.node.connect_timeout;
    match plan.mode {
        Some(DrillMode::ClusterFailover) => {
            let r = &plan.replicas[0];
            let mut c = connect(r).await?;
            call(&mut c, &[b"CLUSTER", b"FAILOVER"], t).await?;
        }
        _ => {
            shutdown(&plan.node).await?;
            if !plan.cluster {
                let mut c = connect(&plan.replicas[0]).await?;
                call(&mut c, &[b"REPLICAOF", b"NO", b"ONE"], t).await?;
            }
        }
    }
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        for r in &plan.replicas {
            if promoted(r, plan.cluster).await {
                out.finished = Some(Instant::now());
                out.replica = Some(r.endpoint.to_string());
                return Ok(());
            }
        }
        tokio::time::sleep(POLL).await;
    }
}

/// `replica-resync`: detach the replica for `duration`, reattach it to its primary, wait until
/// it is in sync again.
async fn resync(plan: &Plan, stop: &AtomicBool, out: &mut Outcome) -> Drilled {
    let r = &plan.replicas[0];
    out.replica = Some(r.endpoint.to_string());
    let t = r.connect_timeout;
    let mut c = connect(r).await?;
    let rep = info(&mut c, "replication", t).await?;
    if field(&rep, "role") != "slave" {
        return Err(format!(
            "{} is not a replica (role:{})",
            r.endpoint,
            field(&rep, "role")
        ));
    }
    let (host, port) = (
        field(&rep, "master_host").to_string(),
        field(&rep, "master_port").to_string(),
    );
    let full_syncs = |m: &BTreeMap<String, String>| field(m, "sync_full").parse::<u64>().ok();
    let mut primary = connect(&plan.node).await.ok();
    let before = match primary.as_mut() {
        Some(p) => info(p, "stats", t).await.ok().and_then(|m| full_syncs(&m)),
        None => None,
    };
    call(&mut c, &[b"REPLICAOF", b"NO", b"ONE"], t).await?;
    // Detached for `duration`, cut short (never skipped) when the phase ends: the replica is
    // always reattached.
    let back = Instant::now() + plan.event.effective_duration();
    sleep_until(back, stop).await;
    let reattached = Instant::now();
    call(&mut c, &[b"REPLICAOF", host.as_bytes(), port.as_bytes()], t).await?;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let rep = info(&mut c, "replication", t).await?;
        if field(&rep, "master_link_status") == "up"
            && field(&rep, "master_sync_in_progress") != "1"
        {
            let now = Instant::now();
            out.finished = Some(now);
            out.sync = Some(now - reattached);
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    if let (Some(p), Some(before)) = (primary.as_mut(), before) {
        let after = info(p, "stats", t).await.ok().and_then(|m| full_syncs(&m));
        out.full_sync = after.map(|a| a > before);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drill_that_panics_clears_its_mask_bit() {
        let mask = AtomicU64::new(1);
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _active = Active::set(&mask, 3);
            assert_eq!(mask.load(Ordering::Relaxed), 0b1001);
            panic!("a bug in a drill");
        }));
        assert!(ended.is_err());
        // Only its own bit: another drill's stays set.
        assert_eq!(mask.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_drill_that_panics_is_reported_as_started_and_failed() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        let at = Instant::now();
        let out = local.block_on(&rt, async {
            let joined = tokio::task::spawn_local(async move {
                // Conditional, so that the block still has the type of a drill task.
                if at.elapsed() < Duration::from_secs(3600) {
                    panic!("a bug in a drill");
                }
                Outcome::default()
            })
            .await;
            outcome_of(joined, "127.0.0.1:7000".into(), Some(at))
        });
        assert_eq!(out.node, "127.0.0.1:7000");
        assert_eq!(out.started, Some(at));
        assert_eq!(out.error.as_deref(), Some(PANICKED));
    }
}
