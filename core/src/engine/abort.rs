//! `abort_on_fail` thresholds checked while a phase runs (k6's `abortOnFail`): once a
//! second, after the grace period, the results so far are judged by the report's own rules
//! ([`Threshold::judge`]); the first limit crossed stops the run, and is named in the report.

use super::labels::merge_by_label;
use crate::plan::Phase;
use crate::report::{Stats, Threshold};
use crate::spec::Thresholds;
use crate::stats::{summarize, Recorder};
use std::collections::BTreeMap;
use std::time::Duration;

/// The earlier measured phases' results (their commands' labels) and seconds, which the
/// running phase's add to for the run's thresholds.
struct Earlier {
    results: Option<(Recorder, Vec<String>)>,
    seconds: f64,
}

/// One set of thresholds checked live: the phase's own, or the run's.
struct Scope {
    entries: Vec<Threshold>,
    delay: Duration,
    earlier: Option<Earlier>,
}

/// The live checks of one phase.
pub struct AbortCheck {
    scopes: Vec<Scope>,
    /// `ops_per_sec` is checked against this part of the limit (a shard's share).
    share: f64,
    phase: String,
}

/// The threshold that stopped the run: its name, and why (figure, limit, when).
#[derive(Debug, Clone)]
pub struct Stopped {
    /// The threshold's name, as the report lists it.
    pub name: String,
    /// What crossed which limit, when.
    pub why: String,
}

impl AbortCheck {
    /// The live checks of `phase`: its own `abort_on_fail` thresholds and, when it is
    /// measured, the run's (`run`, over the `earlier` measured phases' results of
    /// `earlier_s` seconds too). `None` when nothing is checked live.
    pub fn new(
        phase: &Phase,
        run: Option<&Thresholds>,
        earlier: Option<&(Recorder, Vec<String>)>,
        earlier_s: f64,
        share: f64,
    ) -> Option<AbortCheck> {
        let mut scopes = Vec::new();
        if let Some(t) = phase.spec.thresholds.as_ref().filter(|t| t.abort_on_fail) {
            scopes.push(Scope {
                entries: t.entries(Some(&phase.spec.name)),
                delay: t.delay_abort_eval,
                earlier: None,
            });
        }
        if let Some(t) = run.filter(|t| t.abort_on_fail && phase.spec.measured) {
            scopes.push(Scope {
                entries: t.entries(None),
                delay: t.delay_abort_eval,
                earlier: Some(Earlier {
                    results: earlier.cloned(),
                    seconds: earlier_s,
                }),
            });
        }
        (!scopes.is_empty()).then(|| AbortCheck {
            scopes,
            share,
            phase: phase.spec.name.clone(),
        })
    }

    /// Judge the phase's results so far (`total`, its commands named by `labels`, after
    /// `elapsed` measured seconds): the first threshold crossed, if any. A threshold with
    /// no figure yet (no request answered) is not crossed.
    pub fn crossed(&self, total: &Recorder, labels: &[String], elapsed: f64) -> Option<Stopped> {
        for scope in self
            .scopes
            .iter()
            .filter(|s| elapsed >= s.delay.as_secs_f64())
        {
            let (totals, commands) = match &scope.earlier {
                None => summarize(total, labels, elapsed),
                Some(earlier) => {
                    let mut run = earlier.results.clone();
                    merge_by_label(&mut run, total, labels.to_vec());
                    let (rec, labels) = run.as_ref()?;
                    summarize(rec, labels, earlier.seconds + elapsed)
                }
            };
            for t in &scope.entries {
                let mut judged = t.clone();
                judged.judge(stats_of(&judged, &totals, &commands), self.share);
                if judged.value.is_some() && !judged.passed {
                    return Some(Stopped {
                        name: t.name.clone(),
                        why: format!(
                            "threshold `{}` crossed after {elapsed:.1} s of phase `{}`: {} was \
                             {:.3} (limit {}), with abort_on_fail",
                            t.name,
                            self.phase,
                            t.metric,
                            judged.value.unwrap_or(f64::NAN),
                            t.limit
                        ),
                    });
                }
            }
        }
        None
    }
}

fn stats_of<'a>(
    t: &Threshold,
    totals: &'a Stats,
    commands: &'a BTreeMap<String, Stats>,
) -> Option<&'a Stats> {
    match &t.command {
        None => Some(totals),
        Some(label) => commands.get(label),
    }
}
