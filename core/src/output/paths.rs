//! Output files named on a command line, claimed before any traffic: a path that cannot be
//! written, or one that two outputs name, fails at once rather than after the run (whose
//! results would then be lost, or one output silently overwritten by the other).

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// `path` with its directory resolved, so that two spellings of one file compare equal.
fn resolved(path: &str) -> PathBuf {
    let p = Path::new(path);
    let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
        return p.to_path_buf();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::canonicalize(dir).map_or_else(|_| p.to_path_buf(), |d| d.join(name))
}

/// Refuse a path that two of the outputs `(option, path)` name.
pub fn distinct(files: &[(&str, &str)]) -> Result<()> {
    for (i, (option, path)) in files.iter().enumerate() {
        let here = resolved(path);
        if let Some((first, _)) = files[..i].iter().find(|(_, p)| resolved(p) == here) {
            return Err(Error::spec(
                *option,
                format!("`{path}` is also where {first} writes: give each output its own file"),
            ));
        }
    }
    Ok(())
}

/// Claim the output files `(option, path)`: refuse a path that two of them name, then open
/// each for writing, creating it if needed but keeping what it holds (a run that fails keeps
/// the previous results). Keep the returned [`Claimed`] until the files are written.
pub fn claim(files: &[(&str, &str)]) -> Result<Claimed> {
    distinct(files)?;
    let mut created = Claimed(Vec::new());
    for (option, path) in files {
        let existed = Path::new(path).exists();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::spec(*option, format!("`{path}` cannot be written: {e}")))?;
        if !existed {
            created.0.push(PathBuf::from(path));
        }
    }
    Ok(created)
}

/// The files [`claim`] created. Those still empty when it is dropped (the command failed
/// before writing them) are removed again: a failed run leaves no empty report behind for a
/// later `respload merge shard*.json` to trip on.
#[must_use = "the claimed files are removed again when this is dropped"]
#[derive(Debug)]
pub struct Claimed(Vec<PathBuf>);

impl Drop for Claimed {
    fn drop(&mut self) {
        for path in &self.0 {
            if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Check the directory of files named after the run from `prefix` (memtier's
/// `--hdr-file-prefix`): it must exist.
pub fn claim_prefix(option: &str, prefix: &str) -> Result<()> {
    let dir = match Path::new(prefix).parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if dir.is_dir() {
        Ok(())
    } else {
        Err(Error::spec(
            option,
            format!(
                "`{prefix}`: the directory `{}` does not exist",
                dir.display()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_refused_before_the_run_by_option() {
        let dir = std::env::temp_dir().join(format!("respload-paths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.json");
        let a = a.to_str().unwrap();
        let b = dir.join("sub/../b.log");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let b = b.to_str().unwrap();
        std::fs::write(a, "earlier").unwrap();
        let claimed = claim(&[("--json", a), ("--hdr-log", b)]).unwrap();
        assert!(Path::new(a).is_file() && dir.join("b.log").is_file());
        assert_eq!(std::fs::read_to_string(a).unwrap(), "earlier");
        // Released unwritten (the run failed): the file it created goes, the other stays.
        drop(claimed);
        assert!(!dir.join("b.log").exists());
        assert_eq!(std::fs::read_to_string(a).unwrap(), "earlier");
        // Written, it stays.
        let claimed = claim(&[("--hdr-log", b)]).unwrap();
        std::fs::write(b, "log").unwrap();
        drop(claimed);
        assert_eq!(std::fs::read_to_string(b).unwrap(), "log");
        // The same file, spelled another way.
        let again = dir.join("sub/../a.json");
        let err = claim(&[("--json", a), ("--hdr-log", again.to_str().unwrap())]).unwrap_err();
        assert_eq!(err.code(), "ERR_RESPLOAD_SPEC");
        assert!(
            err.to_string().contains("is also where --json writes"),
            "{err}"
        );
        let err = claim(&[("--json", dir.to_str().unwrap())]).unwrap_err();
        assert!(
            err.to_string().contains("--json") && err.to_string().contains("cannot be written")
        );
        claim_prefix("--hdr-file-prefix", &format!("{}/x", dir.display())).unwrap();
        claim_prefix("--hdr-file-prefix", "x").unwrap();
        let err = claim_prefix("--hdr-file-prefix", "/nonexistent-respload/x").unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
