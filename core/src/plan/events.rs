//! Fault drills checked against the resolved target (`[[events]]`: a node or a replica named
//! must be one the run can reach), and a replica's connection settings.

use super::{parse_url, ConnectOptions};
use crate::spec::{redact_url, Drill, DrillMode, Event, NodeAddr, MAX_EVENTS};
use crate::Error;
use std::time::Duration;

/// Check a phase's events; `p` prefixes error paths, `phase_duration` is `load.duration`.
pub(crate) fn validate(
    events: &[Event],
    p: &str,
    connect: &ConnectOptions,
    phase_duration: Option<Duration>,
) -> crate::Result<()> {
    if events.len() > MAX_EVENTS {
        return Err(Error::spec(
            format!("{p}events"),
            format!(
                "{} events: allowed are at most {MAX_EVENTS} per phase",
                events.len()
            ),
        ));
    }
    let cluster = connect.cluster.is_some();
    for (i, e) in events.iter().enumerate() {
        let at = |field: &str| format!("{p}events[{i}].{field}");
        let drill = e.drill.name();
        if let Some(d) = phase_duration {
            if e.at.0 >= d {
                return Err(Error::spec(
                    at("at"),
                    format!(
                        "{:?} is not within the phase's load.duration ({d:?}): allowed is \
                         less than the duration",
                        e.at.0
                    ),
                ));
            }
        }
        if let Some(mode) = e.mode {
            let allowed: &[DrillMode] = match e.drill {
                Drill::Failover if cluster => &[DrillMode::ClusterFailover, DrillMode::Kill],
                Drill::Failover => &[DrillMode::Kill],
                Drill::Pause => &[DrillMode::ClientPause, DrillMode::DebugSleep],
                _ => &[],
            };
            if !allowed.contains(&mode) {
                let names: Vec<&str> = allowed.iter().map(|m| m.name()).collect();
                let what = if names.is_empty() {
                    format!("the {drill} drill has no modes: leave `mode` out")
                } else {
                    format!("allowed for {drill} here: {}", names.join(", "))
                };
                let why = if mode == DrillMode::ClusterFailover && !cluster {
                    " (the target is not a cluster: set target.cluster = true)"
                } else {
                    ""
                };
                return Err(Error::spec(
                    at("mode"),
                    format!("`{}`{why}: {what}", mode.name()),
                ));
            }
        }
        if e.duration.is_some() && !matches!(e.drill, Drill::Pause | Drill::ReplicaResync) {
            return Err(Error::spec(
                at("duration"),
                format!("applies to the pause and replica-resync drills only, not {drill}"),
            ));
        }
        if e.drill == Drill::Pause {
            let d = e.effective_duration();
            if d < Duration::from_millis(1) || d > Duration::from_secs(3600) {
                return Err(Error::spec(
                    at("duration"),
                    format!("{d:?} is out of range: allowed is 1ms to 1h"),
                ));
            }
        }
        if let Some(node) = &e.node {
            if !cluster {
                return Err(Error::spec(
                    at("node"),
                    "applies to cluster mode only: without it the drill acts on the target",
                ));
            }
            if NodeAddr::parse(node).is_none() {
                return Err(Error::spec(
                    at("node"),
                    format!("`{node}` is not host:port (e.g. \"127.0.0.1:7000\")"),
                ));
            }
        }
        if let Some(r) = &e.replica {
            let applies =
                e.drill == Drill::ReplicaResync || (e.drill == Drill::Failover && !cluster);
            if !applies {
                return Err(Error::spec(
                    at("replica"),
                    format!(
                        "does not apply to {drill}{}: it applies to replica-resync, and to \
                         failover without cluster mode",
                        if cluster { " in cluster mode" } else { "" }
                    ),
                ));
            }
            replica_connect(r, connect).map_err(|m| Error::spec(at("replica"), m))?;
        }
    }
    Ok(())
}

/// The connection settings of a replica given as `host:port` or a `redis://` URL: the
/// target's settings (credentials, TLS, timeouts) with the replica's address, and the URL's
/// credentials when it has some (TLS stays the target's).
pub fn replica_connect(text: &str, base: &ConnectOptions) -> Result<ConnectOptions, String> {
    let mut c = base.clone();
    c.cluster = None;
    c.db = 0;
    if text.contains("://") {
        let scheme = text.split("://").next().unwrap_or_default();
        let shown = redact_url(text);
        if scheme != "redis" && scheme != "rediss" {
            return Err(format!(
                "`{shown}`: unknown scheme `{scheme}`: allowed are host:port and redis:// URLs"
            ));
        }
        parse_url(text, &mut c).map_err(|m| format!("`{shown}`: {m}"))?;
        return Ok(c);
    }
    let addr = NodeAddr::parse(text)
        .ok_or_else(|| format!("`{text}` is not host:port or a redis:// URL"))?;
    Ok(addr.connect(&c))
}

#[cfg(test)]
mod tests {
    use crate::Workload;

    fn err(toml: &str) -> String {
        Workload::from_toml_str(toml).unwrap_err().to_string()
    }

    #[test]
    fn events_parse_with_defaults() {
        let w = Workload::from_toml_str(
            "load = { duration = '10s' }\n\
             events = [{ at = '3s', drill = 'bgsave' }, { at = 5, drill = 'pause' },\n\
             { at = '2s', drill = 'replica-resync', replica = 'redis://127.0.0.1:6380' },\n\
             { at = '4s', drill = 'failover' }]",
        )
        .unwrap();
        let e = &w.phases[0].spec.events;
        assert_eq!(e.len(), 4);
        assert_eq!(e[1].effective_duration().as_millis(), 500);
        assert_eq!(e[2].effective_duration().as_secs(), 1);
        assert_eq!(
            e[1].effective_mode(false),
            Some(super::DrillMode::ClientPause)
        );
        assert_eq!(e[3].effective_mode(false), Some(super::DrillMode::Kill));
        assert_eq!(
            e[3].effective_mode(true),
            Some(super::DrillMode::ClusterFailover)
        );
        // The normalized spec keeps them and parses back.
        let back = Workload::from_json_value(w.to_json_value()).unwrap();
        assert_eq!(back.phases[0].spec.events, w.phases[0].spec.events);
        assert!(Workload::from_toml_str("")
            .unwrap()
            .to_json_value()
            .get("events")
            .is_none());
    }

    #[test]
    fn bad_events_name_the_field_and_what_is_allowed() {
        let e = err("events = [{ at = '1s', drill = 'reboot' }]");
        assert!(
            e.contains("events[0].drill") && e.contains("reboot") && e.contains("bgsave"),
            "{e}"
        );
        let e = err(
            "[[phases]]\nname = 'a'\n[[phases]]\nname = 'b'\nload = { duration = '5s' }\n\
             events = [{ at = '1s', drill = 'bgsave' }, { at = '6s', drill = 'bgsave' }]",
        );
        assert!(
            e.contains("phases[1].events[1].at") && e.contains("duration"),
            "{e}"
        );
        let e = err("events = [{ at = '1s', drill = 'failover', mode = 'cluster-failover' }]");
        assert!(
            e.contains("events[0].mode") && e.contains("target.cluster") && e.contains("kill"),
            "{e}"
        );
        let e = err("events = [{ at = '1s', drill = 'bgsave', mode = 'kill' }]");
        assert!(
            e.contains("events[0].mode") && e.contains("no modes"),
            "{e}"
        );
        let e = err("events = [{ at = '1s', drill = 'bgsave', duration = '1s' }]");
        assert!(e.contains("events[0].duration"), "{e}");
        let e = err("events = [{ at = '1s', drill = 'pause', duration = '2h' }]");
        assert!(e.contains("events[0].duration") && e.contains("1h"), "{e}");
        let e = err("events = [{ at = '1s', drill = 'bgsave', node = 'h:1' }]");
        assert!(e.contains("events[0].node") && e.contains("cluster"), "{e}");
        let e = err(
            "target = { cluster = true }\nevents = [{ at = '1s', drill = 'failover', node = 'x' }]",
        );
        assert!(e.contains("events[0].node") && e.contains("`x`"), "{e}");
        let e = err("events = [{ at = '1s', drill = 'pause', replica = 'h:1' }]");
        assert!(e.contains("events[0].replica"), "{e}");
        let e = err("events = [{ at = '1s', drill = 'replica-resync', replica = 'http://h' }]");
        assert!(e.contains("events[0].replica") && e.contains("http"), "{e}");
        let e = err("events = [{ at = '1s', drill = 'bgsave', when = 1 }]");
        assert!(e.contains("events[0]") && e.contains("when"), "{e}");
        let e = err("events = [{ drill = 'bgsave' }]");
        assert!(e.contains("events[0]") && e.contains("at"), "{e}");
        let many: Vec<String> = (0..65)
            .map(|_| "{ at = '1s', drill = 'bgsave' }".to_string())
            .collect();
        let e = err(&format!("events = [{}]", many.join(", ")));
        assert!(e.contains("at `events`") && e.contains("64"), "{e}");
    }

    #[test]
    fn replica_urls_keep_the_targets_settings_unless_given() {
        let w = Workload::from_toml_str("target = { password = 'pw', db = 3 }").unwrap();
        let base = &w.phases[0].connect;
        let c = super::replica_connect("127.0.0.1:6380", base).unwrap();
        assert_eq!(c.endpoint.to_string(), "127.0.0.1:6380");
        assert_eq!((c.password.as_deref(), c.db), (Some("pw"), 0));
        let c = super::replica_connect("redis://:other@10.0.0.2:7001", base).unwrap();
        assert_eq!(c.endpoint.to_string(), "10.0.0.2:7001");
        assert_eq!(c.password.as_deref(), Some("other"));
        assert!(super::replica_connect("nope", base).is_err());
    }
}
