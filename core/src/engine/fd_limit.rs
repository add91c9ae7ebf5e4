//! A run's connections against the process's file-descriptor limit (`ulimit -n`): a phase
//! asking for more connections than the process may open fails before any traffic, saying
//! how to raise the limit, rather than half-way through with `EMFILE` errors.

use crate::plan::{Phase, Workload};
use crate::{Error, Result};

/// Descriptors a run holds besides its load connections: the observer and control
/// connections, drills, timers, the runtime's, the Prometheus endpoint, stdio.
pub const SPARE_FDS: u64 = 64;

/// The soft limit on open files, when the OS says (`None` when unlimited or unknown).
#[cfg(unix)]
pub fn open_files_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// No such limit on Windows: sockets are handles, not a table with a soft limit.
#[cfg(not(unix))]
pub fn open_files_limit() -> Option<u64> {
    None
}

/// An error naming the first phase whose connections (per primary node in cluster mode,
/// so at least that many: [`check_cluster`] checks them all once the primaries are known) do
/// not fit under `limit` open files with [`SPARE_FDS`] to spare.
pub fn check(workload: &Workload, limit: Option<u64>) -> Result<()> {
    for p in &workload.phases {
        let per = match p.connect.cluster.is_some() {
            true => " per primary node",
            false => "",
        };
        let wanted = u64::from(p.spec.load.connections);
        fits(
            &p.prefix,
            wanted,
            &format!("{wanted} connections{per}"),
            limit,
        )?;
    }
    Ok(())
}

/// The same check in cluster mode once the slot map is read: `phase`'s connections on each
/// of its `primaries` (unless its commands bind each connection to one node).
pub fn check_cluster(phase: &Phase, primaries: usize, limit: Option<u64>) -> Result<()> {
    if phase.binds_connections_to_nodes() {
        return Ok(());
    }
    let per = u64::from(phase.spec.load.connections);
    let wanted = per.saturating_mul(primaries as u64);
    let what = format!("{per} connections per primary node on {primaries} primaries ({wanted})");
    fits(&phase.prefix, wanted, &what, limit)
}

/// An error at `{prefix}load.connections` when `wanted` connections (`what`) and
/// [`SPARE_FDS`] do not fit under `limit`.
fn fits(prefix: &str, wanted: u64, what: &str, limit: Option<u64>) -> Result<()> {
    let Some(limit) = limit else {
        return Ok(());
    };
    let need = wanted.saturating_add(SPARE_FDS);
    if need <= limit {
        return Ok(());
    }
    Err(Error::spec(
        format!("{prefix}load.connections"),
        format!(
            "{what} need about {need} open files, and this process may open {limit} \
             (`ulimit -n`): raise the limit (`ulimit -n {}` in the shell that starts it, \
             LimitNOFILE= for a systemd service, nofile in /etc/security/limits.conf) or use \
             fewer connections",
            need.next_power_of_two()
        ),
    ))
}
