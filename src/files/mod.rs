//! Loreloom's own files: the disk natively; in the browser, the page's storage over its bundle.
//!
//! Saves, settings, stories, campaigns, prompts and session databases all go
//! through here (the ground floor: it imports nothing of Loreloom), and so do
//! the places they live ([`data_dir`], [`resource_dir`]) and the content-addressed
//! files of generated pictures ([`store_content`]).
//!
//! Natively these are thin wrappers over `std::fs`. In a web build there is no
//! file system:
//! - text Loreloom writes (save slots, settings, stories the player dropped
//!   onto the page) goes to `localStorage` under `loreloom:<path>`: it is
//!   synchronous, so the save code stays the same on both, and its few
//!   megabytes hold slots and settings (a few KB each) with room to spare;
//! - binary files (a session's SQLite database, [`write_binary`]) go to
//!   `IndexedDB` through `web/storage.js`, which loads them all before the game
//!   starts and writes each change behind it, so reads stay synchronous;
//! - what ships with the page (campaigns, prompts, schemas: `bundle.json`,
//!   made by `web/build.sh`) is read like a file, and the pictures and music it lists are fetched over HTTP.
//!
//! Paths keep `/` as separator.

use std::io;
use std::path::{Path, PathBuf};

mod dirs;

pub use dirs::{data_dir, resource_dir};

/// Read a whole text file.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    imp::read_to_string(path)
}

/// Read a whole text file of at most `cap` bytes; a bigger one is an
/// `InvalidData` error that says how big it is and what the cap is, found
/// before it is read (a 1 GB file costs nothing).
pub fn read_to_string_within(path: &Path, cap: u64) -> io::Result<String> {
    imp::read_to_string_within(path, cap)
}

/// The error for a file over its cap (`size` when it is known).
pub fn too_big(size: Option<u64>, cap: u64) -> io::Error {
    let size = size.map_or_else(|| "more than that".to_owned(), mib);
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("too big: {size}, over the {} this file may hold", mib(cap)),
    )
}

/// Bytes as MiB (or KiB for small amounts) in words.
fn mib(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss, reason = "a size in words")]
    let b = bytes as f64;
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", b / f64::from(1u32 << 20))
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// Write next to the target and rename (natively), so a failed write never
/// clobbers what was saved; in the browser one `localStorage` write, which is
/// all-or-nothing.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    imp::write_atomically(path, bytes)
}

/// The entries directly inside `dir` (files and folders), sorted; empty when it is none.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let mut found = imp::list(dir);
    found.sort();
    found.dedup();
    found
}

/// Whether `path` is a file that can be read.
pub fn is_file(path: &Path) -> bool {
    imp::is_file(path)
}

/// Whether `path` is a folder with something in it (in the browser: a prefix of some file).
pub fn is_dir(path: &Path) -> bool {
    imp::is_dir(path)
}

/// Remove a file; a missing one is no error.
pub fn remove(path: &Path) -> io::Result<()> {
    imp::remove(path)
}

/// A whole file's bytes.
pub fn read_binary(path: &Path) -> io::Result<Vec<u8>> {
    imp::read_binary(path)
}

/// Write a binary file as [`write_atomically`] does (in the browser: `IndexedDB`).
pub fn write_binary(path: &Path, bytes: &[u8]) -> io::Result<()> {
    imp::write_binary(path, bytes)
}

/// In the browser: a write of `path` that did not reach IndexedDB after it
/// was handed over (said once); natively writes are done when they return.
#[cfg(target_family = "wasm")]
pub fn failed_write(path: &Path) -> Option<io::Error> {
    imp::failed_write(path)
}

/// In the browser: whether writes of `path` are still on their way.
#[cfg(target_family = "wasm")]
pub fn write_pending(path: &Path) -> bool {
    imp::write_pending(path)
}

/// When the file was last written.
pub fn modified(path: &Path) -> Option<std::time::SystemTime> {
    imp::modified(path)
}

/// The path made absolute with links resolved where there is a disk (the
/// path itself in the browser, or when it cannot be resolved).
pub fn canonical(path: &Path) -> PathBuf {
    imp::canonical(path)
}

/// Writes `bytes` once under `dir/<sha256>.<ext>` (the same content is the
/// same file; written atomically) and returns the file name.
pub fn store_content(dir: &Path, bytes: &[u8], ext: &str) -> io::Result<String> {
    use sha2::Digest;
    let hash = format!("{:x}", sha2::Sha256::digest(bytes));
    let name = format!("{hash}.{ext}");
    let path = dir.join(&name);
    if !is_file(&path) {
        write_atomically(&path, bytes)?;
    }
    Ok(name)
}

#[cfg(not(target_family = "wasm"))]
mod native;

/// Why a path may not be read beneath a folder ([`beneath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Outside {
    #[error("the path is empty")]
    Empty,
    #[error("the path is absolute")]
    Absolute,
    #[error("the path holds a backslash or a NUL")]
    Odd,
    #[error("the path climbs out of its folder (`..`)")]
    Climbs,
    #[error("the path is a link that leads out of its folder")]
    Link,
}

/// `rel` joined beneath `root`, when it stays there: relative, no `..`, no
/// backslash or NUL, and not (through a link anywhere along it) really
/// somewhere else. A path that does not exist yet is judged by its words.
pub fn beneath(root: &Path, rel: &str) -> Result<PathBuf, Outside> {
    use std::path::Component;
    if rel.trim().is_empty() {
        return Err(Outside::Empty);
    }
    let path = Path::new(rel);
    if rel.starts_with(['/', '\\']) || path.is_absolute() || rel.get(1..2) == Some(":") {
        return Err(Outside::Absolute);
    }
    if rel.contains(['\\', '\0']) {
        return Err(Outside::Odd);
    }
    if path
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(Outside::Climbs);
    }
    let joined = root.join(path);
    if let (Ok(real), Ok(real_root)) = (std::fs::canonicalize(&joined), std::fs::canonicalize(root))
        && !real.starts_with(&real_root)
    {
        return Err(Outside::Link);
    }
    Ok(joined)
}
#[cfg(not(target_family = "wasm"))]
use native as imp;

#[cfg(target_family = "wasm")]
mod web;
#[cfg(target_family = "wasm")]
use web as imp;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_read_back_list_and_go() {
        let dir = tempfile::tempdir().unwrap();
        let slot = dir.path().join("saves/story/slot-1.json");
        write_atomically(&slot, b"{}").unwrap();
        assert_eq!(read_to_string(&slot).unwrap(), "{}");
        assert!(is_file(&slot));
        assert!(is_dir(&dir.path().join("saves")));
        assert_eq!(
            list(&dir.path().join("saves")),
            vec![dir.path().join("saves/story")]
        );
        // No temporary file is left beside it.
        assert_eq!(list(&dir.path().join("saves/story")), vec![slot.clone()]);
        remove(&slot).unwrap();
        remove(&slot).unwrap();
        assert!(!is_file(&slot));
        assert!(list(&dir.path().join("nowhere")).is_empty());
    }

    /// A killed writer's temporary goes with the next write of the same
    /// file once it is stale; a fresh one (a writer at work) and other
    /// files' temporaries stay.
    #[cfg(not(target_family = "wasm"))]
    #[test]
    fn a_killed_writers_temporary_is_swept_when_stale() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        let old = std::time::SystemTime::now() - imp::STALE_TEMPORARY * 2;
        let left = |name: &str, age: std::time::SystemTime| {
            let p = dir.path().join(name);
            std::fs::File::create(&p)
                .unwrap()
                .set_modified(age)
                .unwrap();
            p
        };
        let stale = left(".settings.ron.a1B2c3.tmp", old);
        let fresh = left(".settings.ron.Zz9y8X.tmp", std::time::SystemTime::now());
        let other = left(".slot-1.json.a1B2c3.tmp", old);
        let lookalike = left(".settings.ron.notours.tmp", old);
        write_atomically(&path, b"()").unwrap();
        assert!(!stale.exists());
        for kept in [&fresh, &other, &lookalike] {
            assert!(kept.exists(), "{}", kept.display());
        }
    }

    #[test]
    fn many_writers_never_leave_a_torn_file_or_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.ron");
        std::thread::scope(|s| {
            for w in 0..4u8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..50 {
                        write_atomically(path, &vec![b'a' + w; 4096]).unwrap();
                    }
                });
            }
        });
        let text = read_to_string(&path).unwrap();
        assert_eq!(text.len(), 4096);
        assert!(
            text.bytes().all(|b| b == text.as_bytes()[0]),
            "one writer's bytes, whole"
        );
        assert_eq!(list(dir.path()), vec![path]);
    }

    #[test]
    fn a_file_over_its_cap_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(1 << 30).unwrap(); // 1 GiB, sparse
        let err = read_to_string_within(&path, 8 << 20).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            err.to_string(),
            "too big: 1024.0 MiB, over the 8.0 MiB this file may hold"
        );
        write_atomically(&path, b"{}").unwrap();
        assert_eq!(read_to_string_within(&path, 2).unwrap(), "{}");
        assert!(read_to_string_within(&path, 1).is_err());
    }
}
