//! A standalone connection's request in flight: what its reply is measured against, and
//! what a retry resends (shared by the connection and its retry queue).

use std::time::Instant;

/// A request written (or about to be) and not yet answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    /// Its command's index (its row in the report).
    pub(super) cmd: u16,
    /// Whether it counts (sent after the warm-up).
    pub(super) measured: bool,
    /// Its bytes on the wire.
    pub(super) sent: u32,
    /// The write that carried it.
    pub(super) start: Instant,
    /// When it should have been sent (open loop; `start` in closed loop); a resent request
    /// keeps its first one.
    pub(super) intended: Instant,
    /// `load.retry`: how often it was sent again.
    pub(super) tries: u16,
    /// Open loop: how late the client sent it by its own doing (ns, saturated; 0 once
    /// resent), for the arrivals sample: the room its reply makes for a request held back
    /// behind it came that much late, and that request inherits it.
    pub(super) own_late_ns: u32,
}
