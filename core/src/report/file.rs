//! Reading and writing reports: JSON text, files, older schema versions upgraded.

use super::{PhaseReport, Report, SCHEMA_VERSION};
use serde::Deserialize;
use serde_json::Value as Json;

/// Where a report is read from ([`Report::from_sources`]).
#[derive(Debug, Clone, Copy)]
pub enum ReportSource<'a> {
    /// Its JSON text.
    Json(&'a str),
    /// A file holding it (`respload run --json`, [`Report::save`]).
    File(&'a std::path::Path),
}

impl Report {
    /// A report from its JSON text (a `--json` file, a binding's report), or an error saying
    /// it is not one.
    pub fn from_json_str(text: &str) -> crate::Result<Report> {
        // A report of this schema with its `passed` (every report this respload writes) is
        // read straight into the types: no tree of JSON values between (docs/performance.md,
        // "Merging hosts' reports"). Anything else goes the way that upgrades and names what
        // is wrong.
        #[derive(Deserialize)]
        struct Head {
            schema_version: Option<u64>,
            passed: Option<bool>,
        }
        if let Ok(Head {
            schema_version: Some(v),
            passed: Some(_),
        }) = serde_json::from_str::<Head>(text)
        {
            if v == u64::from(SCHEMA_VERSION) {
                if let Ok(report) = serde_json::from_str::<Report>(text) {
                    return Ok(report);
                }
            }
        }
        serde_json::from_value(Self::upgraded_json(text)?).map_err(not_a_report)
    }

    /// A report's JSON text read as the current schema: a version 1 report upgraded, one of
    /// a later version (from a newer respload) refused, naming its version.
    pub fn upgraded_json(text: &str) -> crate::Result<Json> {
        let mut json: Json = serde_json::from_str(text).map_err(not_a_report)?;
        match json.get("schema_version").and_then(Json::as_u64) {
            None => {
                return Err(crate::Error::spec(
                    "report",
                    "not a respload report: it has no schema_version",
                ))
            }
            Some(v) if v > u64::from(SCHEMA_VERSION) => {
                return Err(crate::Error::spec(
                    "report.schema_version",
                    format!(
                        "{v}: this report was written by a newer respload; this one reads \
                         schema versions 1 to {SCHEMA_VERSION}"
                    ),
                ))
            }
            Some(_) => upgrade(&mut json),
        }
        fill_passed(&mut json);
        Ok(json)
    }

    /// Read a report written by `respload run --json` or [`Report::save`] (any schema
    /// version up to this respload's, upgraded).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> crate::Result<Report> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| crate::Error::File {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json_str(&text).map_err(|e| match e {
            crate::Error::Spec { path: p, reason } => crate::Error::Spec {
                path: p,
                reason: format!("{reason} (in {})", path.display()),
            },
            other => other,
        })
    }

    /// Read several reports' files at once, over the machine's cores (`respload merge`); the
    /// first file that cannot be read is the error.
    pub fn from_files<P: AsRef<std::path::Path> + Sync>(paths: &[P]) -> crate::Result<Vec<Report>> {
        let sources: Vec<ReportSource> = paths
            .iter()
            .map(|p| ReportSource::File(p.as_ref()))
            .collect();
        Report::from_sources(&sources)
    }

    /// Several reports from their JSON texts at once, over the machine's cores; the first
    /// text that is not a report is the error.
    pub fn from_json_strs<S: AsRef<str> + Sync>(texts: &[S]) -> crate::Result<Vec<Report>> {
        let sources: Vec<ReportSource> = texts
            .iter()
            .map(|t| ReportSource::Json(t.as_ref()))
            .collect();
        Report::from_sources(&sources)
    }

    /// Several reports, each from its JSON text or its file, read at once over the machine's
    /// cores (the bindings' `merge_reports`, given reports and files together: a file is read
    /// once, straight into its report); the first that fails is the error.
    pub fn from_sources(sources: &[ReportSource<'_>]) -> crate::Result<Vec<Report>> {
        super::parallel::map(sources, 1, |source| match source {
            ReportSource::Json(text) => Report::from_json_str(text),
            ReportSource::File(path) => Report::from_file(path),
        })
        .into_iter()
        .collect()
    }

    /// Write the report as pretty JSON (what `respload run --json` writes) to `path`.
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> crate::Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json()).map_err(|source| crate::Error::File {
            path: path.display().to_string(),
            source,
        })
    }

    /// The phase named `name`, if the run had one.
    pub fn phase(&self, name: &str) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn not_a_report(e: serde_json::Error) -> crate::Error {
    crate::Error::spec("report", format!("not a respload report: {e}"))
}

/// A report of schema version 1 read as version 2: the per-interval gauge `send_lag_ms` (a
/// number) and `client.send_lag_ms_max` were renamed `behind_ms` and `behind_ms_max`, the
/// name going to the per-request send-lag summaries.
/// A report written before `passed` existed gets the one its fields give
/// ([`Report::verdict`]): complete, and every threshold held.
fn fill_passed(json: &mut Json) {
    let Some(report) = json.as_object_mut() else {
        return;
    };
    if report.contains_key("passed") {
        return;
    }
    let set = |key: &str| report.get(key).is_some_and(|v| !v.is_null());
    let complete = !report
        .get("interrupted")
        .and_then(Json::as_bool)
        .unwrap_or(false)
        && !set("error")
        && !set("stopped_by");
    let held = report
        .get("thresholds")
        .and_then(Json::as_array)
        .is_none_or(|all| all.iter().all(|t| t["passed"] == Json::Bool(true)));
    report.insert("passed".into(), Json::Bool(complete && held));
}

fn upgrade(json: &mut Json) {
    if json.get("schema_version").and_then(Json::as_u64) != Some(1) {
        return;
    }
    fn rename(obj: &mut Json, from: &str, to: &str) {
        if let Some(o) = obj.as_object_mut() {
            if let Some(v) = o.remove(from) {
                o.insert(to.to_string(), v);
            }
        }
    }
    fn part(json: &mut Json) {
        if let Some(rows) = json.get_mut("timeline").and_then(Json::as_array_mut) {
            rows.iter_mut()
                .for_each(|r| rename(r, "send_lag_ms", "behind_ms"));
        }
        if let Some(client) = json.get_mut("client") {
            rename(client, "send_lag_ms_max", "behind_ms_max");
        }
    }
    part(json);
    if let Some(phases) = json.get_mut("phases").and_then(Json::as_array_mut) {
        phases.iter_mut().for_each(part);
    }
    json["schema_version"] = Json::from(SCHEMA_VERSION);
}

/// A report's seed read back: the exact integer, or the nearest double a JavaScript number
/// held (a seed near 2^64 rounds above `u64::MAX`), so that Node's `check()` and `hdrLog()`
/// read back any report Node was given.
pub(super) fn seed_of_json<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        Exact(u64),
        Rounded(f64),
    }
    const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
    match Seed::deserialize(d)? {
        Seed::Exact(seed) => Ok(seed),
        // A double holds 2^64 - 1 as 2^64.
        Seed::Rounded(seed) if seed.fract() == 0.0 && (0.0..=TWO_TO_64).contains(&seed) => {
            Ok(seed as u64) // saturating: 2^64 is u64::MAX
        }
        Seed::Rounded(seed) => Err(serde::de::Error::custom(format!(
            "seed: `{seed}` is not a whole number from 0 to 2^64 - 1"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_a_javascript_number_rounded_reads_back() {
        let text = serde_json::to_string(&Report::default()).unwrap();
        assert!(text.contains("\"seed\":0,"));
        let json = |seed: &str| text.replace("\"seed\":0,", &format!("\"seed\":{seed},"));
        let seed = |text: &str| Report::from_json_str(&json(text)).map(|r| r.seed);
        assert_eq!(seed("18446744073709551615").unwrap(), u64::MAX);
        // What JSON.stringify writes for 2^64 - 1 held in a double.
        assert_eq!(seed("18446744073709552000").unwrap(), u64::MAX);
        assert_eq!(seed("9007199254740993").unwrap(), 9_007_199_254_740_993);
        assert!(seed("\"7\"").is_err());
        for bad in ["-1", "7.5", "1e300"] {
            let err = seed(bad).unwrap_err().to_string();
            assert!(
                err.contains("is not a whole number from 0 to 2^64 - 1"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_schema_1_report_loads_with_its_gauges_renamed() {
        let mut v: Json = serde_json::to_value(Report::default()).unwrap();
        v["schema_version"] = Json::from(1);
        let row = serde_json::json!({"t": 1.0, "interval_s": 1.0, "ops": 5, "ops_per_sec": 5.0,
            "errors": 0, "latency_ms": {"mean": 1.0, "p50": 1.0, "p99": 1.0, "max": 1.0},
            "connections": 1, "send_lag_ms": 2.5, "histogram": ""});
        v["timeline"] = Json::Array(vec![row]);
        v["client"]["send_lag_ms_max"] = Json::from(2.5);
        let r = Report::from_json_str(&v.to_string()).unwrap();
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        assert_eq!(r.timeline[0].behind_ms, Some(2.5));
        assert_eq!(r.timeline[0].send_lag_ms, None);
        assert_eq!(r.client.behind_ms_max, Some(2.5));
        // A version 2 report with a number there is not one.
        v["schema_version"] = Json::from(2);
        let e = Report::from_json_str(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a respload report"), "{e}");
        // A newer one is refused by its version; one without a version is not a report.
        v["schema_version"] = Json::from(SCHEMA_VERSION + 1);
        let e = Report::from_json_str(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("report.schema_version") && e.contains("newer respload"),
            "{e}"
        );
        let e = Report::from_json_str("{}").unwrap_err().to_string();
        assert!(e.contains("no schema_version"), "{e}");
    }

    #[test]
    fn a_current_report_reads_the_same_straight_or_through_values() {
        let mut v: Json = serde_json::to_value(Report {
            schema_version: SCHEMA_VERSION,
            passed: true,
            seed: u64::MAX,
            ..Report::default()
        })
        .unwrap();
        v["timeline"] = serde_json::json!([{"t": 1.0, "unix_s": 5.5, "interval_s": 1.0,
            "ops": 5, "ops_per_sec": 5.0, "errors": 1, "connections": 1, "histogram": "",
            "latency_ms": {"mean": 1.0, "p50": 1.0, "p99": 1.0, "max": 1.0},
            "send_lag_ms": {"mean": 0.1, "p50": 0.1, "p99": 0.2, "max": 0.3}}]);
        let text = v.to_string();
        let straight = Report::from_json_str(&text).unwrap();
        let through: Report =
            serde_json::from_value(Report::upgraded_json(&text).unwrap()).unwrap();
        assert_eq!(straight, through);
        assert_eq!(straight.timeline[0].send_lag_ms.as_ref().unwrap().max, 0.3);
        assert_eq!(straight.seed, u64::MAX);
        // A duplicated key, which the types refuse, is read as JSON reads it: the last wins.
        let twice = text.replacen("{", "{\"duration_s\":3.0,", 1);
        assert_eq!(Report::from_json_str(&twice).unwrap(), through);
    }

    #[test]
    fn a_saved_report_loads_back_and_finds_its_phases() {
        let mut r = Report {
            schema_version: SCHEMA_VERSION,
            seed: 7,
            ..Report::default()
        };
        r.phases.push(PhaseReport {
            name: "fill".into(),
            ..PhaseReport::default()
        });
        let dir = std::env::temp_dir().join(format!("respload-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        r.save(&path).unwrap();
        let back = Report::from_file(&path).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.phase("fill").map(|p| p.name.as_str()), Some("fill"));
        assert!(back.phase("nope").is_none());
        let e = Report::from_file(dir.join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.json"), "{e}");
        std::fs::write(&path, "{\"schema_version\": 99}").unwrap();
        let e = Report::from_file(&path).unwrap_err().to_string();
        assert!(e.contains("99") && e.contains("r.json"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
