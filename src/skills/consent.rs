//! A campaign's skills run only once the player approves them (#43), pinned to the folder's hash.
//!
//! A skill that came with a campaign is a program from a stranger. Discovery keeps it aside
//! (`Discovery::waiting`) until the player approves it, in the window's dialog or at the terminal,
//! after reading what it is and what it asks for (`Skill::asks`). The approval is kept in
//! `<data dir>/skills-approved.json` against the SHA-256 of the skill's folder (every file's path
//! and bytes, links by their target; its own `data/` left out), so a skill changed since stays off
//! and asks again. An approvals file that cannot be read approves nothing and says so. Bundled
//! skills need no approval; they cannot be shadowed by a campaign's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// At most this many entries and bytes are hashed; a bigger folder is not
/// a skill anyone can review, and cannot be approved.
const MAX_ENTRIES: usize = 5_000;
const MAX_BYTES: u64 = 64 << 20;

/// The SHA-256 of a skill's folder, in hex.
pub fn folder_hash(dir: &Path) -> Result<String, String> {
    let mut files: Vec<(PathBuf, std::fs::Metadata)> = Vec::new();
    let mut folders = vec![dir.to_owned()];
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if folder == dir && entry.file_name() == "data" {
                continue;
            }
            let meta =
                std::fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if meta.is_dir() {
                folders.push(path.clone());
            }
            files.push((path, meta));
            if files.len() > MAX_ENTRIES {
                return Err(format!(
                    "{}: more than {MAX_ENTRIES} files; too big to review",
                    dir.display()
                ));
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hash = Sha256::new();
    let mut bytes = 0u64;
    for (path, meta) in files {
        let relative = path.strip_prefix(dir).unwrap_or(&path);
        hash.update(relative.to_string_lossy().as_bytes());
        hash.update([0]);
        if meta.is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            hash.update(b"link\0");
            hash.update(target.to_string_lossy().as_bytes());
        } else if meta.is_dir() {
            hash.update(b"dir\0");
        } else {
            bytes = bytes.saturating_add(meta.len());
            if bytes > MAX_BYTES {
                return Err(format!(
                    "{}: more than {} MiB; too big to review",
                    dir.display(),
                    MAX_BYTES >> 20
                ));
            }
            let content = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            hash.update(b"file\0");
            hash.update(
                u64::try_from(content.len())
                    .unwrap_or(u64::MAX)
                    .to_le_bytes(),
            );
            hash.update(&content);
        }
        hash.update([0]);
    }
    Ok(format!("{:x}", hash.finalize()))
}

/// One approval: which skill, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approved {
    pub name: String,
    /// RFC 3339.
    pub at: String,
}

/// The player's approvals, by folder hash.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approvals {
    #[serde(default)]
    pub approved: BTreeMap<String, Approved>,
}

/// Where approvals are kept: `<data dir>/skills-approved.json`.
pub fn approvals_path() -> PathBuf {
    crate::files::data_dir().join("skills-approved.json")
}

impl Approvals {
    /// The approvals in `path`: none when it is missing; an error (and
    /// then nothing is approved) when it cannot be read or understood.
    pub fn load(path: &Path) -> Result<Self, String> {
        match crate::files::read_to_string_within(path, 4 << 20) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}: {e}; no campaign skill runs until it is fixed or removed",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!(
                "{}: {e}; no campaign skill runs until it is fixed",
                path.display()
            )),
        }
    }

    /// Approvals of these (name, folder hash) pairs, kept nowhere: what a
    /// test or a bench holds after "approving" fixtures it ships itself.
    pub fn of(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            approved: pairs
                .into_iter()
                .map(|(name, hash)| {
                    (
                        hash,
                        Approved {
                            name,
                            at: String::new(),
                        },
                    )
                })
                .collect(),
        }
    }

    /// Whether the skill named `name` with this folder hash was approved.
    pub fn holds(&self, name: &str, hash: &str) -> bool {
        self.approved.get(hash).is_some_and(|a| a.name == name)
    }

    /// Approves `name` at `hash` in the file at `path` (written atomically;
    /// an unreadable file is not overwritten).
    pub fn approve(path: &Path, name: &str, hash: &str) -> Result<(), String> {
        let mut approvals = Self::load(path)?;
        approvals.approved.insert(
            hash.to_owned(),
            Approved {
                name: name.to_owned(),
                at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            },
        );
        approvals.save(path)
    }

    /// Withdraws every approval of `name`.
    pub fn revoke(path: &Path, name: &str) -> Result<(), String> {
        let mut approvals = Self::load(path)?;
        approvals.approved.retain(|_, a| a.name != name);
        approvals.save(path)
    }

    fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        crate::files::write_atomically(path, text.as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::{Approvals, folder_hash};

    #[test]
    fn an_approval_holds_for_the_folder_it_saw_and_not_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("s");
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(skill.join("skill.json"), "{}").unwrap();
        std::fs::write(skill.join("scripts/run.py"), "print(1)").unwrap();
        let first = folder_hash(&skill).unwrap();
        // Its own data is not part of what was approved.
        std::fs::create_dir_all(skill.join("data")).unwrap();
        std::fs::write(skill.join("data/cache"), "x").unwrap();
        assert_eq!(folder_hash(&skill).unwrap(), first);
        let path = dir.path().join("skills-approved.json");
        Approvals::approve(&path, "s", &first).unwrap();
        let approvals = Approvals::load(&path).unwrap();
        assert!(approvals.holds("s", &first));
        assert!(!approvals.holds("other", &first));
        // One byte of a script changed: a new hash, not approved.
        std::fs::write(skill.join("scripts/run.py"), "print(2)").unwrap();
        let changed = folder_hash(&skill).unwrap();
        assert_ne!(changed, first);
        assert!(!approvals.holds("s", &changed));
        // A file moved to another name changes it too.
        std::fs::rename(skill.join("scripts/run.py"), skill.join("scripts/main.py")).unwrap();
        assert_ne!(folder_hash(&skill).unwrap(), changed);
        Approvals::revoke(&path, "s").unwrap();
        assert!(!Approvals::load(&path).unwrap().holds("s", &first));
        // An unreadable file approves nothing and is not overwritten.
        std::fs::write(&path, "{not json").unwrap();
        assert!(
            Approvals::load(&path)
                .unwrap_err()
                .contains("no campaign skill runs")
        );
        assert!(Approvals::approve(&path, "s", &first).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{not json");
    }
}
