//! A skill's `data/` kept within its caps (#43): counted before, during and after each run.
//!
//! No kernel quota is at hand for an ordinary user, so the invoker keeps the cap: a skill whose
//! `data/` is already over it does not start; while it runs, the folder is counted every
//! quarter-second and the run is stopped once it goes over; after it, whatever the run added past
//! the cap is removed (what was there before is kept). Links are counted, never followed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The caps: entries (files, folders, links) and bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub files: usize,
    pub bytes: u64,
}

/// What a `data/` folder holds: its entries (relative paths) and bytes.
#[derive(Debug, Default)]
pub struct Usage {
    entries: BTreeSet<PathBuf>,
    bytes: u64,
}

/// Walks `dir` (without following links), stopping after `max` entries.
fn walk(dir: &Path, max: usize) -> Usage {
    let mut usage = Usage::default();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            if usage.entries.len() >= max {
                return usage;
            }
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                folders.push(path.clone());
            } else {
                usage.bytes = usage.bytes.saturating_add(meta.len());
            }
            if let Ok(relative) = path.strip_prefix(dir) {
                usage.entries.insert(relative.to_owned());
            }
        }
    }
    usage
}

impl Usage {
    /// What `dir` holds now; an error naming the cap when it is over it
    /// already (the skill does not start).
    pub fn of(dir: &Path, limits: Caps) -> Result<Self, String> {
        let usage = walk(dir, limits.files.saturating_add(1));
        match usage.over(limits) {
            Some(why) => Err(format!(
                "{}: {why}; the skill does not run until some of it is removed",
                dir.display()
            )),
            None => Ok(usage),
        }
    }

    fn over(&self, limits: Caps) -> Option<String> {
        if self.entries.len() > limits.files {
            Some(format!(
                "more than {} files in the skill's data folder",
                limits.files
            ))
        } else if self.bytes > limits.bytes {
            let cap = if limits.bytes >= 1 << 20 {
                format!("{} MiB", limits.bytes >> 20)
            } else {
                format!("{} bytes", limits.bytes)
            };
            Some(format!("more than {cap} in the skill's data folder"))
        } else {
            None
        }
    }

    /// Why `dir` is over its caps now (the watch while a script runs).
    pub fn over_now(dir: &Path, limits: Caps) -> Option<String> {
        walk(dir, limits.files.saturating_add(1)).over(limits)
    }

    /// After a run: when `dir` is over its caps, removes what the run added
    /// (this usage is from before it) and says why.
    pub fn prune_after(&self, dir: &Path, limits: Caps) -> Option<String> {
        let why = Self::over_now(dir, limits)?;
        let now = walk(dir, usize::MAX);
        // Deepest first, so a new folder is empty when its turn comes.
        let mut added: Vec<&PathBuf> = now.entries.difference(&self.entries).collect();
        added.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        let mut removed = 0usize;
        for relative in &added {
            let path = dir.join(relative);
            let gone = match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => std::fs::remove_dir(&path).is_ok(),
                Ok(_) => std::fs::remove_file(&path).is_ok(),
                Err(_) => false,
            };
            removed += usize::from(gone);
        }
        Some(format!(
            "{why}: the {removed} entries this run added were removed"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{Caps, Usage};

    #[test]
    fn a_run_that_writes_past_the_cap_loses_what_it_added_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Caps {
            files: 10,
            bytes: 1000,
        };
        std::fs::write(dir.path().join("kept.txt"), "old").unwrap();
        let before = Usage::of(dir.path(), limits).unwrap();
        assert!(before.prune_after(dir.path(), limits).is_none());
        std::fs::create_dir(dir.path().join("new")).unwrap();
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("new/{i}")), "x").unwrap();
        }
        let why = before.prune_after(dir.path(), limits).unwrap();
        assert!(why.contains("more than 10 files"), "{why}");
        assert!(why.contains("21 entries"), "{why}");
        assert!(dir.path().join("kept.txt").is_file());
        assert!(!dir.path().join("new").exists());
        // Bytes count too, and a folder already over does not start.
        std::fs::write(dir.path().join("big"), vec![0u8; 2000]).unwrap();
        let refused = Usage::of(dir.path(), limits).unwrap_err();
        assert!(refused.contains("more than 1000 bytes"), "{refused}");
    }
}
