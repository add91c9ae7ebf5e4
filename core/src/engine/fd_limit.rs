//! A run's connections against the process's file-descriptor limit (`ulimit -n`): a phase
//! asking for more connections than the process may open fails before any traffic, saying
//! how to raise the limit, rather than half-way through with `EMFILE` errors.

use crate::spec::Workload;
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
/// so at least that many) do not fit under `limit` open files with [`SPARE_FDS`] to spare.
pub fn check(workload: &Workload, limit: Option<u64>) -> Result<()> {
    let Some(limit) = limit else {
        return Ok(());
    };
    for p in &workload.phases {
        let wanted = u64::from(p.spec.load.connections);
        if wanted + SPARE_FDS <= limit {
            continue;
        }
        let per = if p.connect.cluster.is_some() {
            " per primary node"
        } else {
            ""
        };
        return Err(Error::spec(
            format!("{}load.connections", p.prefix),
            format!(
                "{wanted} connections{per} need about {} open files, and this process may \
                 open {limit} (`ulimit -n`): raise the limit (`ulimit -n {}` in the shell that \
                 starts it, LimitNOFILE= for a systemd service, nofile in \
                 /etc/security/limits.conf) or use fewer connections",
                wanted + SPARE_FDS,
                (wanted + SPARE_FDS).next_power_of_two()
            ),
        ));
    }
    Ok(())
}
