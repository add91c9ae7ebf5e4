//! The core's layers point one way (issue 25): a module uses only the layers below it. This
//! reads the sources: a `crate::MODULE` path in a layer's files must name a module that layer
//! may use.
//!
//! Every module of the crate, bottom up: the leaves `resp` (the wire format and key slots) and
//! `report` (everything a report's JSON holds: reading, writing, merging), which use nothing of
//! the crate but its error type; `spec` (the schema and the checks of its fields) on them;
//! `trace` (trace files, their readers and the model fitted to one) on `spec`; `plan` (a spec resolved: the validated `Workload` and its phases, connection settings, TLS
//! configurations, compiled commands) on `spec`; `net` on `plan`; `stats` (recorders,
//! summaries) on `report`; `observe` (INFO sampling, drills, Prometheus) on `net` and `stats`;
//! `output` (respload's own formats: tables, progress lines, the HdrHistogram log) and `tools`
//! (each peer's command line and output formats together) on `plan` and `stats`; the `engine`
//! on `observe` and below, never on a format; `capture` (MONITOR into a trace) on `net`
//! and `trace`; `runs` (the library's `Runner::start` and `run`:
//! the engine with the phase-end hook that writes the output files) on the engine and
//! `tools`; the `cli` on top (docs/development.md, "The core's layers").
//!
//! Inside the engine, modules do not form circles: none uses one that uses it back.
//!
//! A file's `#[cfg(test)] mod` is left out: a unit test may check its layer through the
//! ones above it (the schema's checks, say, by reading a whole `Workload`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer checked, and the crate's modules it may use besides itself.
const LAYERS: &[(&str, &[&str])] = &[
    ("resp", &["error"]),
    ("report", &["error"]),
    ("spec", &["error", "resp", "report"]),
    ("trace", &["error", "resp", "report", "spec"]),
    ("plan", &["error", "resp", "report", "spec", "trace"]),
    ("net", &["error", "plan", "resp", "spec"]),
    ("stats", &["error", "report"]),
    (
        "observe",
        &["error", "net", "plan", "report", "spec", "stats"],
    ),
    ("output", &["error", "plan", "report", "spec", "stats"]),
    ("tools", &["error", "plan", "report", "spec", "stats"]),
    (
        "engine",
        &[
            "error", "net", "observe", "plan", "report", "resp", "spec", "stats", "trace",
        ],
    ),
    (
        "capture",
        &["error", "net", "observe", "plan", "spec", "trace"],
    ),
    (
        "runs",
        &["engine", "error", "plan", "report", "spec", "tools"],
    ),
    (
        "cli",
        &[
            "capture", "engine", "error", "output", "plan", "report", "runs", "spec", "stats",
            "tools", "trace",
        ],
    ),
];

/// A file's text up to its `#[cfg(test)] mod` (other `#[cfg(test)]` items are checked: they
/// are code of the layer).
fn without_test_module(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let rest = &text[at + line.len()..];
        if line.trim_end() == "#[cfg(test)]" && rest.starts_with("mod ") {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

/// What the crate root re-exports (`pub use MODULE::{A, B};` in lib.rs): each name and the
/// module it comes from, so that `crate::Snapshot` counts as a use of its module.
fn root_exports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for line in lib.lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let path = path.trim_end_matches(';');
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_start_matches('{').trim_end_matches('}');
        for item in items.split(',') {
            let name = item.split_whitespace().last().unwrap_or_default();
            if !name.is_empty() {
                names.insert(name.to_string(), module.to_string());
            }
        }
    }
    names
}

/// The crate modules a source names: `crate::NAME` and `crate::{NAME::.., NAME}`, where a
/// name the crate root re-exports (`roots`) counts as its module.
fn modules_used(text: &str, roots: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let module = |s: &str| {
        let name: String = s
            .trim()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        match roots.get(&name) {
            Some(m) => Some(m.clone()),
            None => (name.chars().next().is_some_and(|c| c.is_ascii_lowercase())).then_some(name),
        }
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            used.extend(group.split(',').filter_map(module));
        } else if let Some(name) = module(rest) {
            used.insert(name);
        }
    }
    used
}

#[test]
fn layers_use_nothing_above_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let roots = root_exports(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    assert_eq!(
        roots.get("Snapshot").map(String::as_str),
        Some("report"),
        "{roots:?}"
    );
    let mut wrong = Vec::new();
    for (layer, allowed) in LAYERS {
        let files = sources(&src.join(layer));
        assert!(!files.is_empty(), "no sources for layer {layer}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for module in modules_used(without_test_module(&text), &roots) {
                if module != *layer && !allowed.contains(&module.as_str()) {
                    wrong.push(format!(
                        "{} uses crate::{module} (layer `{layer}` may use {allowed:?})",
                        file.strip_prefix(&src).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reader_finds_every_form_of_a_crate_path() {
    let roots = root_exports("pub use engine::{run, Runner};\npub use error::{Error, Result};\n");
    let used = modules_used(
        "use crate::spec::Workload;\nuse crate::{engine::run, Error, net};\nlet x = crate::stats::new();\nuse crate::{Result, Runner};",
        &roots,
    );
    let want: BTreeSet<String> = ["engine", "error", "net", "spec", "stats"]
        .map(String::from)
        .into_iter()
        .collect();
    assert_eq!(used, want);
}

/// The engine's modules each file names: `super::NAME` from a file of `engine/` itself,
/// `crate::engine::NAME` from anywhere in it; a file of `engine/cluster/` is module
/// `cluster` (its own `super::` paths stay inside it).
fn engine_modules_used(file: &Path, engine: &Path, text: &str) -> (String, BTreeSet<String>) {
    let rel = file.strip_prefix(engine).unwrap();
    let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
    let first = parts.next().unwrap();
    let nested = parts.next().is_some();
    let own = first.trim_end_matches(".rs").to_string();
    let mut used = BTreeSet::new();
    let name = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut prefixes = vec!["crate::engine::"];
    if !nested {
        prefixes.push("super::");
    }
    for prefix in prefixes {
        for (i, _) in text.match_indices(prefix) {
            // `super::` preceded by `super::` is another file's parent, not ours.
            if prefix == "super::" && text[..i].ends_with("super::") {
                continue;
            }
            let rest = &text[i + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                used.extend(group.split(',').map(|g| name(g.trim())));
            } else {
                used.insert(name(rest));
            }
        }
    }
    used.retain(|m| !m.is_empty() && m != &own && m.chars().all(|c| !c.is_ascii_uppercase()));
    (own, used)
}

#[test]
fn no_module_of_the_engine_uses_one_that_uses_it_back() {
    let engine = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in sources(&engine) {
        if file.file_name().is_some_and(|n| n == "mod.rs") && file.parent() == Some(&engine) {
            continue; // the engine's root: it declares the modules and re-exports the API
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Code only: a doc comment's link to another module is no use of it.
        let code: String = without_test_module(&text)
            .lines()
            .map(|l| l.split("//").next().unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n");
        let (own, used) = engine_modules_used(&file, &engine, &code);
        graph.entry(own).or_default().extend(used);
    }
    assert!(graph.len() > 15, "{graph:?}");
    assert!(
        graph["runner"].contains("phase"),
        "the reader misses super:: paths"
    );
    // A circle: a module that reaches itself by following uses.
    let mut circles = Vec::new();
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Vec<&str>> = vec![vec![start.as_str()]];
        while let Some(path) = stack.pop() {
            let last = *path.last().unwrap();
            for next in graph.get(last).into_iter().flatten() {
                if next == start {
                    circles.push(format!("{} -> {start}", path.join(" -> ")));
                } else if seen.insert(next.as_str()) {
                    let mut longer = path.clone();
                    longer.push(next);
                    stack.push(longer);
                }
            }
        }
    }
    assert!(circles.is_empty(), "{}", circles.join("\n"));
}
