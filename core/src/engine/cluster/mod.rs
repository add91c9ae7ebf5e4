//! Cluster mode: one logical client per `connections` index, holding one connection to every
//! primary it sends to. Each request goes to the primary that owns its key's slot, so the
//! cluster sees exactly the key distribution of the spec.
//!
//! - Routing: the slot of the request's first argument (the key of nearly every command);
//!   a request without arguments goes to the owner of slot 0. With `target.read_from` other
//!   than `primary`, reading commands go to a replica of that owner (each client keeps to
//!   one replica per primary, spread by client index), and to the owner itself when the
//!   slot has no replica or the replica's connection is down.
//! - Bound clients (a phase using `{node_tag}`, as `redis-benchmark --cluster`): client `i`
//!   talks to primary `i mod primaries` only (and its replica when reading from replicas);
//!   its keys carry a hash tag of one of that primary's slots, drawn per request, so they
//!   route there; requests without a key go there too.
//! - Pipelining: up to `pipeline` requests in flight per node connection. A request for a
//!   node whose pipeline is full waits in that node's backlog (up to `pipeline` more) and
//!   goes out as soon as replies make room, while the client goes on generating for the
//!   other nodes; only a full backlog stops the client. Without the backlog one busy node
//!   idled the others: a read freed room on one node, and the next request, two times in
//!   three bound for another (full) node, stopped the client after one or two requests.
//!   In closed loop a request's latency starts when it leaves the backlog for the wire.
//!   With `load.refill = "batch"` a node connection writes its next `pipeline` requests only
//!   once every reply of the ones it wrote is in (redis-benchmark `--cluster -P`); meanwhile
//!   its requests wait in its backlog. Retries (below) go out when they fall due, without
//!   opening a batch.
//! - Open loop: the client is paced like a standalone connection; a request waiting for room
//!   on its node keeps its intended send time.
//! - Slot map: re-read from `CLUSTER SLOTS` every [`REFRESH_PERIOD`], and after a sign of
//!   change (at most once per [`REFRESH_EVERY`]), by a task of the worker thread: no client
//!   waits for it.
//! - MOVED: the slot is pointed at the new node at once, a refresh of the whole map is
//!   scheduled, and the same request bytes are sent again to the new node. ASK: `ASKING`
//!   then the request, to the named node, map unchanged. TRYAGAIN, CLUSTERDOWN: sent again
//!   after a backoff (TRYAGAIN 20 ms, CLUSTERDOWN 80 ms, doubled with each try), routed by
//!   the slot map afresh. At most [`MAX_TRIES`] retries, then the error reply counts as an
//!   error. Retries are counted as `redirects`; a request that finally succeeds is a
//!   success. In closed loop, requests waiting for a retry count as in flight: a client
//!   stops generating while `pipeline` times its node count of them wait.
//! - A node connection that fails: its requests in flight fail as `CONNECTION` errors, the
//!   map is refreshed, and the node is reconnected with backoff; meanwhile requests for it
//!   fail as `CONNECTION` errors too.

mod client;
mod pending;
mod redirect;
pub(super) mod route;
mod topology;

pub use client::ClusterClient;
pub use topology::Cluster;

use std::time::Duration;

/// Retries of one request (redirections and TRYAGAIN / CLUSTERDOWN) before its error reply
/// is counted as an error.
pub const MAX_TRIES: u8 = 5;
/// Least time between two refreshes of the slot map, per worker thread.
pub const REFRESH_EVERY: Duration = Duration::from_millis(100);
/// The slot map is re-read this often even when nothing says it changed (new replicas,
/// slots moved by a resharding that no request of this thread ran into yet).
pub const REFRESH_PERIOD: Duration = Duration::from_secs(5);
const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";
const NO_NODE: u16 = u16::MAX;
/// Answered request bytes kept before the retry buffer is compacted.
const SENT_COMPACT: usize = 64 * 1024;
/// Requests failed in a row on nodes that are down before a client waits for its next pass.
const MAX_FAILED_IN_A_ROW: u32 = 8;

const BACKOFF_MIN: Duration = Duration::from_millis(10);
const BACKOFF_MAX: Duration = Duration::from_secs(1);
/// First backoff before retrying after TRYAGAIN or CLUSTERDOWN (doubled per try).
const RETRY_DELAY: Duration = Duration::from_millis(20);
