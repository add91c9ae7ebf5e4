//! The slot map as one worker thread sees it ([`Cluster`]): loaded from the seeds, refreshed
//! by a task of the thread, pointed at a new owner by MOVED; which node a slot, a read or a
//! bound client goes to.

use super::{NO_NODE, REFRESH_EVERY, REFRESH_PERIOD};
use crate::net::cluster::SlotMap;
use crate::plan::ConnectOptions;
use crate::resp::slot::SLOTS;
use crate::spec::NodeAddr;
use crate::spec::ReadFrom;
use crate::{Error, Result};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

/// The slot map as one worker thread sees it.
pub(super) struct Topology {
    /// Known nodes; only ever appended to, so indexes stay valid.
    pub(super) nodes: Vec<NodeAddr>,
    /// `host:port` of each node.
    names: Vec<String>,
    /// Node index of each slot (`NO_NODE`: unknown).
    slots: Box<[u16]>,
    /// Index into `replicas` of each slot's replica set (`NO_NODE`: none known).
    replica_set: Box<[u16]>,
    /// Replica sets: node indexes of the replicas of one slot range.
    replicas: Vec<Vec<u16>>,
    seeds: Vec<NodeAddr>,
    last_refresh: Instant,
    stale: bool,
    refreshing: bool,
}

/// One worker thread's view of the cluster, shared by its clients.
pub struct Cluster {
    pub(super) topo: RefCell<Topology>,
    base: ConnectOptions,
    /// Reads go to replicas.
    pub(super) replica_reads: bool,
    /// Reads go to the primary or a replica of the slot (`read_from = "any"`).
    read_any: bool,
    /// `{node_tag}`: each client talks to one primary, its home (see [`Cluster::home`]).
    bound: bool,
}

impl Cluster {
    /// Read the slot map from the seeds of `base.cluster` (or its endpoint). With
    /// `read_from = "replica"`, fails when some slot has no replica. `bound`: each client
    /// talks to one primary only (the phase uses `{node_tag}`).
    pub async fn load(base: &ConnectOptions, bound: bool) -> Result<Rc<Cluster>> {
        let seeds = base.cluster.clone().unwrap_or_default();
        let map = SlotMap::fetch(&seeds, base).await?;
        if base.read_from == ReadFrom::Replica {
            if let Some(r) = map.ranges.iter().find(|r| r.replicas.is_empty()) {
                return Err(Error::spec(
                    "target.read_from",
                    format!(
                        "\"replica\", but slots {}-{} (primary {}) have no replica: add \
                         replicas, or use \"prefer-replica\" to read such slots from their \
                         primary",
                        r.start, r.end, r.primary
                    ),
                ));
            }
        }
        Ok(Rc::new(Cluster::from_map(&map, base, seeds, bound)))
    }

    /// The cluster of slot map `map` (its nodes connected with `base`, refreshed from the
    /// nodes, then `seeds`).
    fn from_map(
        map: &SlotMap,
        base: &ConnectOptions,
        seeds: Vec<NodeAddr>,
        bound: bool,
    ) -> Cluster {
        let cluster = Cluster {
            topo: RefCell::new(Topology {
                nodes: Vec::new(),
                names: Vec::new(),
                slots: vec![NO_NODE; SLOTS].into_boxed_slice(),
                replica_set: vec![NO_NODE; SLOTS].into_boxed_slice(),
                replicas: Vec::new(),
                seeds,
                last_refresh: Instant::now(),
                stale: false,
                refreshing: false,
            }),
            base: base.clone(),
            replica_reads: base.read_from != ReadFrom::Primary,
            read_any: base.read_from == ReadFrom::Any,
            bound,
        };
        cluster.apply(map);
        cluster
    }

    pub(super) fn apply(&self, map: &SlotMap) {
        {
            let mut t = self.topo.borrow_mut();
            t.replicas.clear();
            t.replica_set.fill(NO_NODE);
        }
        for r in &map.ranges {
            let i = self.index_of(&r.primary) as u16;
            let set: Vec<u16> = r.replicas.iter().map(|a| self.index_of(a) as u16).collect();
            let mut t = self.topo.borrow_mut();
            let range = r.start as usize..=r.end as usize;
            t.slots[range.clone()].fill(i);
            if !set.is_empty() {
                let k = t.replicas.len() as u16;
                t.replicas.push(set);
                t.replica_set[range].fill(k);
            }
        }
    }

    /// The node index of `addr`, added when new.
    pub(super) fn index_of(&self, addr: &NodeAddr) -> usize {
        let mut t = self.topo.borrow_mut();
        match t.nodes.iter().position(|n| n == addr) {
            Some(i) => i,
            None => {
                t.nodes.push(addr.clone());
                t.names.push(addr.to_string());
                t.nodes.len() - 1
            }
        }
    }

    /// The indexes of the nodes that own slots now, each once.
    pub fn primaries(&self) -> Vec<usize> {
        let t = self.topo.borrow();
        let mut out: Vec<usize> = Vec::new();
        for &s in t.slots.iter() {
            if s != NO_NODE && !out.contains(&(s as usize)) {
                out.push(s as usize);
            }
        }
        out
    }

    /// The nodes logical client `pick` talks to at first: every primary (only its home one
    /// when clients are bound), plus (reading from replicas) its replica of each of them.
    pub fn nodes_for(&self, pick: usize) -> Vec<usize> {
        let home = self.home(pick);
        let mut out = match home {
            Some(home) => vec![home],
            None => self.primaries(),
        };
        if self.replica_reads {
            let t = self.topo.borrow();
            // A bound client reads from the replicas of its home only.
            let home_set = home.and_then(|h| {
                let slot = t.slots.iter().position(|&p| p as usize == h)?;
                Some(t.replica_set[slot] as usize)
            });
            for (k, set) in t.replicas.iter().enumerate() {
                let n = set[pick % set.len()] as usize;
                if !out.contains(&n) && (home.is_none() || home_set == Some(k)) {
                    out.push(n);
                }
            }
        }
        out
    }

    /// Bound clients (`{node_tag}`): the primary client `pick` talks to, the primaries taken
    /// in turn (as redis-benchmark spreads its clients over the nodes); `None` otherwise.
    pub fn home(&self, pick: usize) -> Option<usize> {
        if !self.bound {
            return None;
        }
        let primaries = self.primaries();
        (!primaries.is_empty()).then(|| primaries[pick % primaries.len()])
    }

    /// The slots node `i` owns now.
    pub fn slots_of(&self, i: usize) -> Rc<[u16]> {
        let t = self.topo.borrow();
        (0..SLOTS as u16)
            .filter(|&s| t.slots[s as usize] as usize == i)
            .collect()
    }

    /// Connection settings for node `i`.
    pub fn connect_of(&self, i: usize) -> ConnectOptions {
        self.topo.borrow().nodes[i].connect(&self.base)
    }

    pub(super) fn name(&self, i: usize) -> String {
        self.topo.borrow().names[i].clone()
    }

    #[inline]
    pub(super) fn route(&self, slot: u16) -> usize {
        match self.topo.borrow().slots[slot as usize] {
            NO_NODE => 0,
            n => n as usize,
        }
    }

    /// The node to read `slot` from for client `pick`: its replica, else its primary.
    #[inline]
    pub(super) fn route_read(&self, slot: u16, pick: usize) -> usize {
        let t = self.topo.borrow();
        match t.replica_set[slot as usize] {
            NO_NODE => match t.slots[slot as usize] {
                NO_NODE => 0,
                n => n as usize,
            },
            k => {
                let set = &t.replicas[k as usize];
                // `any`: the primary counts as one more member, taken in turn too.
                match (self.read_any, pick % (set.len() + 1)) {
                    (true, 0) => match t.slots[slot as usize] {
                        NO_NODE => set[0] as usize,
                        n => n as usize,
                    },
                    (true, i) => set[i - 1] as usize,
                    (false, _) => set[pick % set.len()] as usize,
                }
            }
        }
    }

    pub(super) fn moved(&self, slot: u16, to: usize) {
        let mut t = self.topo.borrow_mut();
        t.slots[slot as usize] = to as u16;
        t.stale = true;
    }

    pub(super) fn mark_stale(&self) {
        self.topo.borrow_mut().stale = true;
    }

    /// Called on the worker's housekeeping tick: start re-reading the slot map in a task of
    /// its own when it is known to be stale (at most once per [`REFRESH_EVERY`]) or older
    /// than [`REFRESH_PERIOD`].
    pub fn maintain(self: &Rc<Self>) {
        {
            let mut t = self.topo.borrow_mut();
            let age = t.last_refresh.elapsed();
            let due = (t.stale && age >= REFRESH_EVERY) || age >= REFRESH_PERIOD;
            if !due || t.refreshing {
                return;
            }
            t.refreshing = true;
        }
        let me = Rc::clone(self);
        tokio::task::spawn_local(async move { me.refresh().await });
    }

    /// Re-read the slot map, from the known nodes first, then the seeds.
    async fn refresh(&self) {
        let sources = {
            let t = self.topo.borrow();
            let mut s: Vec<NodeAddr> = t.nodes.clone();
            s.extend(t.seeds.iter().filter(|n| !t.nodes.contains(n)).cloned());
            s
        };
        let map = SlotMap::fetch(&sources, &self.base).await;
        {
            let mut t = self.topo.borrow_mut();
            t.refreshing = false;
            t.last_refresh = Instant::now();
            if map.is_ok() {
                t.stale = false;
            }
        }
        if let Ok(map) = map {
            self.apply(&map);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::cluster::SlotRange;

    fn node(port: u16) -> NodeAddr {
        NodeAddr {
            host: "127.0.0.1".into(),
            port,
        }
    }

    /// Three primaries (7000-7002) over the slots in thirds, each with `replicas` replicas
    /// (7003 onward).
    fn three(replicas: u16, read_from: &str, bound: bool) -> Cluster {
        let thirds = [(0, 5460), (5461, 10922), (10923, 16383)];
        let ranges = thirds
            .iter()
            .enumerate()
            .map(|(i, &(start, end))| SlotRange {
                start,
                end,
                primary: node(7000 + i as u16),
                replicas: (0..replicas)
                    .map(|r| node(7003 + i as u16 * replicas + r))
                    .collect(),
            })
            .collect();
        let target: crate::spec::Target =
            serde_json::from_value(serde_json::json!({"cluster": true, "read_from": read_from}))
                .unwrap();
        let base = target.resolve("").unwrap();
        Cluster::from_map(&SlotMap { ranges }, &base, vec![node(7000)], bound)
    }

    /// The ports of nodes `indexes`.
    fn ports(c: &Cluster, indexes: impl IntoIterator<Item = usize>) -> Vec<u16> {
        let t = c.topo.borrow();
        indexes.into_iter().map(|i| t.nodes[i].port).collect()
    }

    #[test]
    fn each_slot_goes_to_its_primary_and_reads_to_its_replica() {
        let c = three(2, "replica", false);
        assert_eq!(ports(&c, c.primaries()), [7000, 7001, 7002]);
        let owners = [0, 5460, 5461, 10922, 10923, 16383].map(|s| c.route(s));
        assert_eq!(ports(&c, owners), [7000, 7000, 7001, 7001, 7002, 7002]);
        assert_eq!(c.name(c.route(12182)), "127.0.0.1:7002");
        // Clients spread over each primary's replicas by their index.
        let reads = [(0, 0), (0, 1), (0, 2), (16383, 2)].map(|(s, pick)| c.route_read(s, pick));
        assert_eq!(ports(&c, reads), [7003, 7004, 7003, 7007]);
        // Every primary, and this client's replica of each.
        assert_eq!(
            ports(&c, c.nodes_for(1)),
            [7000, 7001, 7002, 7004, 7006, 7008]
        );
        assert_eq!(c.slots_of(c.route(5461)).len(), 10922 - 5461 + 1);
    }

    #[test]
    fn a_slot_without_a_replica_is_read_from_its_primary() {
        let c = three(0, "prefer-replica", false);
        assert_eq!(c.route_read(100, 5), c.route(100));
        assert_eq!(ports(&c, c.nodes_for(5)), [7000, 7001, 7002]);
        // Reading from primaries: no replica is connected to.
        let c = three(1, "primary", false);
        assert_eq!(ports(&c, c.nodes_for(0)), [7000, 7001, 7002]);
    }

    #[test]
    fn bound_clients_take_the_primaries_in_turn() {
        let c = three(1, "replica", true);
        let homes: Vec<usize> = (0..4).map(|pick| c.home(pick).unwrap()).collect();
        assert_eq!(ports(&c, homes), [7000, 7001, 7002, 7000]);
        // Its home and that home's replica only.
        assert_eq!(ports(&c, c.nodes_for(1)), [7001, 7004]);
        assert_eq!(three(1, "primary", false).home(1), None);
    }

    #[test]
    fn moved_points_the_slot_at_the_new_node_and_a_new_map_replaces_it() {
        let c = three(0, "primary", false);
        let to = c.index_of(&node(7009));
        assert_eq!(
            (to, c.topo.borrow().nodes.len()),
            (3, 4),
            "a node not seen before is added"
        );
        c.moved(42, to);
        assert_eq!(c.route(42), 3);
        assert_eq!(c.route(43), 0);
        assert_eq!(c.index_of(&node(7000)), 0, "known nodes keep their index");
        let whole = SlotMap {
            ranges: vec![SlotRange {
                start: 0,
                end: 16383,
                primary: node(7001),
                replicas: Vec::new(),
            }],
        };
        c.apply(&whole);
        assert_eq!(ports(&c, c.primaries()), [7001]);
        assert_eq!(ports(&c, [c.route(42), c.route(0)]), [7001, 7001]);
    }
}
