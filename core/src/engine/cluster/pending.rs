//! A cluster client's request in flight, and one to send again (after a redirection or a
//! failed node): shared by the client and the redirection rules.

use std::time::Instant;

/// A request written (or about to be) and not yet answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    pub(super) cmd: u16,
    pub(super) measured: bool,
    /// The `ASKING` before a redirected request: its reply is not recorded.
    pub(super) asking: bool,
    pub(super) tries: u8,
    /// Length of its bytes.
    pub(super) len: u32,
    /// When it was first generated, or was due in open loop (latency runs from here,
    /// across redirections).
    pub(super) intended: Instant,
    /// When it was queued for its (last) write: service time in open loop runs from here.
    pub(super) start: Instant,
}

/// A request to send again.
pub(super) struct Retry {
    /// Where (`None`: route by slot again).
    pub(super) node: Option<usize>,
    pub(super) asking: bool,
    pub(super) due: Instant,
    pub(super) p: Pending,
    pub(super) bytes: Vec<u8>,
}
