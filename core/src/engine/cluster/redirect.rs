//! What an error reply of a cluster node asks for: MOVED and ASK (send again to the node it
//! names), TRYAGAIN and CLUSTERDOWN (send again after a backoff).

use super::pending::{Pending, Retry};
use super::topology::Cluster;
use super::RETRY_DELAY;
use crate::resp::slot::SLOTS;
use crate::spec::NodeAddr;
use std::time::Instant;

/// Where a MOVED or ASK reply sends a request.
#[derive(Debug, PartialEq)]
pub(super) enum To {
    /// `host:port` (an IPv6 host as Redis writes it: `::1:7000`, or bracketed).
    Addr(NodeAddr),
    /// `:port`, an empty host: the host of the node that answered.
    Port(u16),
}

/// What an error reply asks for, read from its text alone.
#[derive(Debug, PartialEq)]
pub(super) enum Wants {
    /// The slot has a new owner: send there, and point the slot map at it.
    Moved(u16, To),
    /// The slot is being imported there: send there after `ASKING`, map unchanged.
    Ask(u16, To),
    /// Send again later, routed by the slot map afresh.
    TryAgain,
    /// Send again later, once the slot map was read again.
    ClusterDown,
}

/// What the error reply `line` (`-KIND ...\r\n`) of first word `kind` asks for; `None` for an
/// error to count (another kind, or a MOVED or ASK that cannot be read).
pub(super) fn wants(line: &[u8], kind: &[u8]) -> Option<Wants> {
    match kind {
        b"MOVED" | b"ASK" => {
            let text = std::str::from_utf8(line.get(1..line.len().saturating_sub(2))?).ok()?;
            let mut words = text.split_ascii_whitespace().skip(1);
            let slot: u16 = words
                .next()?
                .parse()
                .ok()
                .filter(|s| (*s as usize) < SLOTS)?;
            let addr = words.next()?;
            // `:port` is an empty host; `::1:7000` an IPv6 one.
            let to = match addr.strip_prefix(':') {
                Some(port) if port.bytes().all(|b| b.is_ascii_digit()) => {
                    To::Port(port.parse().ok().filter(|p| *p > 0)?)
                }
                _ => To::Addr(NodeAddr::parse(addr)?),
            };
            Some(if kind == b"MOVED" {
                Wants::Moved(slot, to)
            } else {
                Wants::Ask(slot, to)
            })
        }
        b"TRYAGAIN" => Some(Wants::TryAgain),
        b"CLUSTERDOWN" => Some(Wants::ClusterDown),
        _ => None,
    }
}

/// What to do about an error reply `line` (`-KIND ...\r\n`) of first word `kind`, from node
/// `from`: a retry (its request and bytes left to fill), or `None` to count it as an error.
pub(super) fn redirect(
    line: &[u8],
    kind: &[u8],
    from: usize,
    cluster: &Cluster,
    now: Instant,
) -> Option<Retry> {
    let blank = Pending {
        cmd: 0,
        measured: false,
        asking: false,
        tries: 0,
        len: 0,
        intended: now,
        start: now,
    };
    let retry = |node, asking, due| Retry {
        node,
        asking,
        due,
        p: blank,
        bytes: Vec::new(),
    };
    let node = |to: To| {
        let addr = match to {
            To::Addr(addr) => addr,
            To::Port(port) => NodeAddr {
                host: cluster.topo.borrow().nodes[from].host.clone(),
                port,
            },
        };
        cluster.index_of(&addr)
    };
    match wants(line, kind)? {
        Wants::Moved(slot, to) => {
            let to = node(to);
            cluster.moved(slot, to);
            Some(retry(Some(to), false, now))
        }
        Wants::Ask(_, to) => Some(retry(Some(node(to)), true, now)),
        // Sent again from the start, routed by the slot map as a new request would be: the
        // node that answered may be the importing one, which serves the slot only after ASKING.
        Wants::TryAgain => Some(retry(None, false, now + RETRY_DELAY)),
        Wants::ClusterDown => {
            cluster.mark_stale();
            Some(retry(None, false, now + RETRY_DELAY * 4))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(host: &str, port: u16) -> To {
        To::Addr(NodeAddr {
            host: host.into(),
            port,
        })
    }

    #[test]
    fn moved_and_ask_name_the_slot_and_the_node() {
        let moved = wants(b"-MOVED 3999 127.0.0.1:6381\r\n", b"MOVED");
        assert_eq!(moved, Some(Wants::Moved(3999, addr("127.0.0.1", 6381))));
        let ask = wants(b"-ASK 0 node-2.example:7000\r\n", b"ASK");
        assert_eq!(ask, Some(Wants::Ask(0, addr("node-2.example", 7000))));
        // An empty host is the answering node's; IPv6 hosts unbracketed (as Redis writes
        // them) or bracketed.
        let port_only = wants(b"-MOVED 16383 :7002\r\n", b"MOVED");
        assert_eq!(port_only, Some(Wants::Moved(16383, To::Port(7002))));
        let v6 = wants(b"-MOVED 12 ::1:7001\r\n", b"MOVED");
        assert_eq!(v6, Some(Wants::Moved(12, addr("::1", 7001))));
        let bracketed = wants(b"-ASK 12 [fe80::1]:7001\r\n", b"ASK");
        assert_eq!(bracketed, Some(Wants::Ask(12, addr("fe80::1", 7001))));
    }

    #[test]
    fn a_redirection_that_cannot_be_read_is_an_error_to_count() {
        for line in [
            &b"-MOVED 16384 127.0.0.1:6381\r\n"[..], // past the last slot
            b"-MOVED x 127.0.0.1:6381\r\n",
            b"-MOVED 5\r\n",
            b"-MOVED 5 127.0.0.1\r\n",
            b"-MOVED 5 :0\r\n",
            b"-MOVED 5 :\r\n",
            b"-ASK 5 127.0.0.1:99999\r\n",
            b"-MOVED\r\n",
        ] {
            assert_eq!(
                wants(line, b"MOVED"),
                None,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn tryagain_and_clusterdown_ask_for_a_retry_other_errors_do_not() {
        let busy = b"-TRYAGAIN Multiple keys request during rehashing of slot\r\n";
        assert_eq!(wants(busy, b"TRYAGAIN"), Some(Wants::TryAgain));
        let down = b"-CLUSTERDOWN The cluster is down\r\n";
        assert_eq!(wants(down, b"CLUSTERDOWN"), Some(Wants::ClusterDown));
        assert_eq!(wants(b"-ERR unknown command\r\n", b"ERR"), None);
        assert_eq!(wants(b"-WRONGTYPE Operation\r\n", b"WRONGTYPE"), None);
    }
}
