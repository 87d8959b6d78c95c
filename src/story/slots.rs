//! The story player's save slots: named slots and an autosave per story, each a save document.
//!
//! Each slot is a [`SaveDocument`] with a small header (when, and a line to
//! recognise the moment by), kept on disk or, in the browser, in the page's
//! storage. Layout: `<data dir>/saves/<story id>/<slot>.json` (the data dir is
//! [`crate::files::data_dir`]).

use std::io;
use std::path::{Path, PathBuf};

// The browser's clock in a web build (std's panics there); std's natively.
use web_time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::SaveDocument;

/// The slot written on every passage.
pub const AUTOSAVE: &str = "autosave";

/// The most a save slot may hold (a real one is a few KiB of choices).
const SLOT_CAP: u64 = 8 << 20;

/// Why a slot could not be read.
#[derive(Debug, Error)]
pub enum SlotError {
    #[error("{}: cannot read: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: not a readable save: {source}", path.display())]
    Corrupt {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// A save document with what a slot list shows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct SlotFile {
    /// Seconds since the Unix epoch.
    pub saved_at: u64,
    /// A line to recognise the moment by (the passage's title or first words).
    pub summary: String,
    pub save: SaveDocument,
}

/// One slot as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotInfo {
    pub story: String,
    pub slot: String,
    pub saved_at: u64,
    pub story_title: String,
    pub summary: String,
    pub path: PathBuf,
}

/// The saves under one data dir.
#[derive(Clone, Debug)]
pub struct SlotStore {
    root: PathBuf,
}

impl SlotStore {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            root: data_dir.into().join("saves"),
        }
    }

    fn path(&self, story: &str, slot: &str) -> PathBuf {
        self.root
            .join(sanitize(story))
            .join(format!("{}.json", sanitize(slot)))
    }

    /// Save `doc` in `slot` of its story.
    pub fn write(&self, slot: &str, summary: &str, save: &SaveDocument) -> io::Result<PathBuf> {
        let path = self.path(&save.story, slot);
        let file = SlotFile {
            saved_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            summary: summary.to_owned(),
            save: save.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(io::Error::other)?;
        crate::files::write_atomically(&path, &bytes)?;
        Ok(path)
    }

    pub fn read(&self, story: &str, slot: &str) -> Result<SlotFile, SlotError> {
        read_slot(&self.path(story, slot))
    }

    /// Slots of one story, newest first. Unreadable files are listed by `list_broken`.
    pub fn list(&self, story: &str) -> Vec<SlotInfo> {
        let dir = self.root.join(sanitize(story));
        let mut out: Vec<SlotInfo> = json_files(&dir)
            .filter_map(|path| {
                let file = read_slot(&path).ok()?;
                Some(SlotInfo {
                    story: file.save.story.clone(),
                    slot: path.file_stem()?.to_string_lossy().into_owned(),
                    saved_at: file.saved_at,
                    story_title: file.save.story_title.clone(),
                    summary: file.summary,
                    path,
                })
            })
            .collect();
        out.sort_by(|a, b| b.saved_at.cmp(&a.saved_at).then(a.slot.cmp(&b.slot)));
        out
    }

    /// Save files of a story that cannot be read, with why.
    pub fn list_broken(&self, story: &str) -> Vec<SlotError> {
        json_files(&self.root.join(sanitize(story)))
            .filter_map(|path| read_slot(&path).err())
            .collect()
    }

    /// The newest autosave of any story.
    pub fn latest_autosave(&self) -> Option<SlotInfo> {
        crate::files::list(&self.root)
            .into_iter()
            .filter_map(|dir| {
                let story = dir.file_name()?.to_string_lossy().into_owned();
                self.list(&story).into_iter().find(|s| s.slot == AUTOSAVE)
            })
            .max_by_key(|s| s.saved_at)
    }
}

fn json_files(dir: &Path) -> impl Iterator<Item = PathBuf> {
    crate::files::list(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
}

fn read_slot(path: &Path) -> Result<SlotFile, SlotError> {
    let text =
        crate::files::read_to_string_within(path, SLOT_CAP).map_err(|source| SlotError::Io {
            path: path.to_owned(),
            source,
        })?;
    serde_json::from_str(&text).map_err(|source| SlotError::Corrupt {
        path: path.to_owned(),
        source,
    })
}

/// Keep ids usable as file names on every platform.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::story::{Player, testing};
    use serde_json::json;
    use std::sync::Arc;

    fn doc() -> SaveDocument {
        let story = Arc::new(testing::story(json!({
            "passages": [testing::passage("a", &[("Go", "b", &[], &[])]), {"id": "b", "prose": "End."}],
        })));
        let mut player = Player::new(story);
        player.choose_number(1).unwrap();
        player.save()
    }

    #[test]
    fn slots_round_trip_and_list_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::new(dir.path());
        let save = doc();
        store.write("slot-1", "At the gate", &save).unwrap();
        store.write(AUTOSAVE, "The end", &save).unwrap();
        let back = store.read("test", "slot-1").unwrap();
        assert_eq!(back.save, save);
        assert_eq!(back.summary, "At the gate");
        let slots: Vec<String> = store.list("test").into_iter().map(|s| s.slot).collect();
        assert_eq!(slots.len(), 2);
        assert_eq!(store.latest_autosave().unwrap().slot, AUTOSAVE);
    }

    #[test]
    fn a_corrupt_slot_is_reported_and_the_others_still_list() {
        let dir = tempfile::tempdir().unwrap();
        let store = SlotStore::new(dir.path());
        store.write("slot-1", "fine", &doc()).unwrap();
        std::fs::write(dir.path().join("saves/test/slot-2.json"), "{ torn").unwrap();
        assert_eq!(store.list("test").len(), 1);
        let broken = store.list_broken("test");
        assert_eq!(broken.len(), 1);
        assert!(
            broken[0]
                .to_string()
                .contains("slot-2.json: not a readable save")
        );
        assert!(matches!(
            store.read("test", "slot-2"),
            Err(SlotError::Corrupt { .. })
        ));
    }

    #[test]
    fn odd_ids_become_safe_file_names() {
        assert_eq!(sanitize("../etc/passwd"), "___etc_passwd");
        assert_eq!(sanitize("keepers-bargain"), "keepers-bargain");
    }
}
