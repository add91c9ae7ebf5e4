//! The run's figures gathered by command label: phases (and the running checks of
//! `abort_on_fail`) add their recorders into one whose rows are the labels seen so far.

use crate::stats::Recorder;

/// Merge a phase's recorder into the run's, matching commands by label.
pub(super) fn merge_by_label(
    acc: &mut Option<(Recorder, Vec<String>)>,
    rec: &Recorder,
    labels: Vec<String>,
) {
    let (acc_rec, acc_labels) = acc.get_or_insert_with(|| (Recorder::new(0), Vec::new()));
    acc_rec.merge_nodes(rec);
    if let Some(u) = rec.unsent.as_deref() {
        acc_rec.unsent.get_or_insert_with(Default::default).merge(u);
    }
    acc_rec.merge_client_lag(rec);
    for (label, c) in labels.iter().zip(&rec.commands) {
        match acc_labels.iter().position(|l| l == label) {
            Some(i) => acc_rec.commands[i].merge(c),
            None => {
                acc_labels.push(label.clone());
                acc_rec.commands.push(c.clone());
            }
        }
    }
}
