//! The command line is a cargo feature: the library without it links neither clap nor
//! ctrlc; the addons link the command line (clap, for their `respload` commands) but never
//! ctrlc, which only the binary may use to handle Ctrl-C (issue 25).

use std::process::Command;

/// The crates `package` links (normal dependencies, one name per line).
fn linked(package: &str, extra: &[&str]) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "-e", "normal", "--prefix", "none", "-p", package])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_library_links_the_command_line_only_with_its_feature() {
    let cli = ["clap", "ctrlc"];
    let with = linked("respload", &[]);
    assert!(cli.iter().all(|c| with.iter().any(|l| l == c)), "{with:?}");
    let without = linked("respload", &["--no-default-features"]);
    assert!(without.iter().any(|l| l == "tokio"), "{without:?}");
    assert!(
        !without.iter().any(|l| cli.contains(&l.as_str())),
        "{without:?}"
    );
    let lib_cli = linked("respload", &["--no-default-features", "--features", "cli"]);
    assert!(lib_cli.iter().any(|l| l == "clap"), "{lib_cli:?}");
    assert!(!lib_cli.iter().any(|l| l == "ctrlc"), "{lib_cli:?}");
    for (addon, binding) in [("respload-node", "napi"), ("respload-python", "pyo3")] {
        let linked = linked(addon, &[]);
        assert!(linked.iter().any(|l| l == binding), "{linked:?}");
        assert!(linked.iter().any(|l| l == "clap"), "{linked:?}");
        assert!(!linked.iter().any(|l| l == "ctrlc"), "{linked:?}");
    }
}
