//! Loreloom's own files (saves, settings, stories on the shelf): the disk natively; in the browser, the page's `localStorage` over files bundled into the build.
//!
//! Natively these are thin wrappers over `std::fs`. In a web build there is no
//! file system: what Loreloom writes (save slots, settings, stories the player
//! dropped onto the page) goes to `localStorage` under `loreloom:<path>`, and
//! what ships with the build (the bundled story) is registered once with
//! [`bundle`] and read like a file. `localStorage` is synchronous, so the save
//! code stays the same on both; its few megabytes hold save slots and settings
//! (a few KB each) with room to spare. Paths keep `/` as separator.

use std::io;
use std::path::{Path, PathBuf};

/// Read a whole text file.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    imp::read_to_string(path)
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

/// Register a read-only text file compiled into the build (the browser's bundled story).
#[cfg(target_family = "wasm")]
pub fn bundle(path: impl Into<PathBuf>, text: &'static str) {
    imp::bundle(path.into(), text);
}

#[cfg(not(target_family = "wasm"))]
mod imp {
    use std::io;
    use std::path::{Path, PathBuf};

    pub fn read_to_string(path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, path)
    }

    pub fn list(dir: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect()
    }

    pub fn is_file(path: &Path) -> bool {
        path.is_file()
    }

    pub fn is_dir(path: &Path) -> bool {
        path.is_dir()
    }

    pub fn remove(path: &Path) -> io::Result<()> {
        match std::fs::remove_file(path) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(target_family = "wasm")]
mod imp {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::io;
    use std::path::{Component, Path, PathBuf};

    const PREFIX: &str = "loreloom:";

    thread_local! {
        static BUNDLED: RefCell<BTreeMap<String, &'static str>> = const { RefCell::new(BTreeMap::new()) };
    }

    /// The path as a storage key: `/`-separated, no `.` parts.
    fn key(path: &Path) -> String {
        let parts: Vec<String> = path
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts.join("/")
    }

    fn storage() -> io::Result<web_sys::Storage> {
        web_sys::window()
            .and_then(|w| w.local_storage().ok().flatten())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "this browser keeps no local storage for the page (private mode?): saves and settings last until the tab closes",
                )
            })
    }

    fn js_error(value: &wasm_bindgen::JsValue) -> io::Error {
        io::Error::other(format!(
            "the browser refused to store it (storage full?): {value:?}"
        ))
    }

    /// Every stored key (without the prefix).
    fn stored_keys() -> Vec<String> {
        let Ok(storage) = storage() else {
            return Vec::new();
        };
        let count = storage.length().unwrap_or(0);
        (0..count)
            .filter_map(|i| storage.key(i).ok().flatten())
            .filter_map(|k| k.strip_prefix(PREFIX).map(str::to_owned))
            .collect()
    }

    pub fn bundle(path: PathBuf, text: &'static str) {
        BUNDLED.with(|b| b.borrow_mut().insert(key(&path), text));
    }

    pub fn read_to_string(path: &Path) -> io::Result<String> {
        let key = key(path);
        if let Some(text) = storage()
            .ok()
            .and_then(|s| s.get_item(&format!("{PREFIX}{key}")).ok().flatten())
        {
            return Ok(text);
        }
        BUNDLED
            .with(|b| b.borrow().get(&key).map(|t| (*t).to_owned()))
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{key}: not stored")))
    }

    pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                "the browser's storage holds text only",
            )
        })?;
        storage()?
            .set_item(&format!("{PREFIX}{}", key(path)), text)
            .map_err(|e| js_error(&e))
    }

    pub fn list(dir: &Path) -> Vec<PathBuf> {
        let dir_key = key(dir);
        let prefix = if dir_key.is_empty() {
            String::new()
        } else {
            format!("{dir_key}/")
        };
        let bundled: Vec<String> = BUNDLED.with(|b| b.borrow().keys().cloned().collect());
        stored_keys()
            .into_iter()
            .chain(bundled)
            .filter_map(|k| {
                let rest = k.strip_prefix(&prefix)?;
                let first = rest.split('/').next()?;
                (!first.is_empty()).then(|| dir.join(first))
            })
            .collect()
    }

    pub fn is_file(path: &Path) -> bool {
        let key = key(path);
        BUNDLED.with(|b| b.borrow().contains_key(&key))
            || storage()
                .ok()
                .and_then(|s| s.get_item(&format!("{PREFIX}{key}")).ok().flatten())
                .is_some()
    }

    pub fn is_dir(path: &Path) -> bool {
        !is_file(path) && !list(path).is_empty()
    }

    pub fn remove(path: &Path) -> io::Result<()> {
        storage()?
            .remove_item(&format!("{PREFIX}{}", key(path)))
            .map_err(|e| js_error(&e))
    }
}

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
}
