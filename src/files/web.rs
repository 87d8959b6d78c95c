//! The browser's files: text in `localStorage`, binaries in `IndexedDB`, the page's bundle.
//!
//! `localStorage` keys are `loreloom:<path>`; binary files go through
//! `web/storage.js`, which loads them all before the game starts so reads stay
//! synchronous; what ships with the page (`bundle.json`) is read like a file.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::ops::Bound;
use std::path::{Component, Path, PathBuf};

use wasm_bindgen::prelude::*;

const PREFIX: &str = "loreloom:";

/// `web/storage.js`: binary files in `IndexedDB`, loaded before the game
/// starts; `bundle.json` as the page fetched it.
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = get)]
    fn blob_get(path: &str) -> Option<Vec<u8>>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = put, catch)]
    fn blob_put(path: &str, bytes: &[u8]) -> Result<(), JsValue>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = remove)]
    fn blob_remove(path: &str);
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = names)]
    fn blob_names() -> Vec<String>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = modified)]
    fn blob_modified(path: &str) -> Option<f64>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = bundle)]
    fn page_bundle() -> Option<String>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = failedWrite)]
    fn blob_failed(path: &str) -> Option<String>;
    #[wasm_bindgen(js_namespace = loreloomFiles, js_name = pendingWrites)]
    fn blob_pending(path: &str) -> u32;
}

/// What ships with the page: text files by path, and the paths of the
/// pictures and music fetched over HTTP (listed, not read).
#[derive(Default, serde::Deserialize)]
struct Shipped {
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    assets: BTreeSet<String>,
}

impl Shipped {
    /// Every shipped path beneath `prefix` (a folder's key and `/`): two
    /// range reads of the sorted keys, not a walk of the whole bundle.
    fn beneath<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        let files = self
            .files
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .map(|(k, _)| k);
        let assets = self
            .assets
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded));
        files
            .take_while(move |k| k.starts_with(prefix))
            .chain(assets.take_while(move |k| k.starts_with(prefix)))
    }
}

thread_local! {
    /// Read from the page once, on first use.
    static BUNDLED: RefCell<Option<Shipped>> = const { RefCell::new(None) };
}

fn with_bundled<T>(f: impl FnOnce(&Shipped) -> T) -> T {
    BUNDLED.with(|b| {
        let mut b = b.borrow_mut();
        let shipped = b.get_or_insert_with(|| {
            let text = page_bundle().unwrap_or_default();
            if text.is_empty() {
                return Shipped::default();
            }
            serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::error!("bundle.json: not readable ({e}); campaigns and prompts are missing: rebuild with web/build.sh");
                Shipped::default()
            })
        });
        f(shipped)
    })
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

fn js_error(value: &JsValue) -> io::Error {
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

pub fn read_to_string(path: &Path) -> io::Result<String> {
    let key = key(path);
    if let Some(text) = storage()
        .ok()
        .and_then(|s| s.get_item(&format!("{PREFIX}{key}")).ok().flatten())
    {
        return Ok(text);
    }
    with_bundled(|b| b.files.get(&key).cloned())
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{key}: not stored")))
}

pub fn read_to_string_within(path: &Path, cap: u64) -> io::Result<String> {
    let text = read_to_string(path)?;
    if text.len() as u64 > cap {
        return Err(super::too_big(Some(text.len() as u64), cap));
    }
    Ok(text)
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

pub fn read_binary(path: &Path) -> io::Result<Vec<u8>> {
    let key = key(path);
    blob_get(&key)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("{key}: not stored")))
}

pub fn write_binary(path: &Path, bytes: &[u8]) -> io::Result<()> {
    blob_put(&key(path), bytes).map_err(|e| js_error(&e))
}

/// A write of `path` handed to the page earlier that did not reach
/// IndexedDB (said once).
pub fn failed_write(path: &Path) -> Option<io::Error> {
    blob_failed(&key(path)).map(|e| io::Error::other(format!("IndexedDB refused it: {e}")))
}

/// Whether writes of `path` are still on their way to IndexedDB.
pub fn write_pending(path: &Path) -> bool {
    blob_pending(&key(path)) > 0
}

pub fn modified(path: &Path) -> Option<std::time::SystemTime> {
    // The page's clock, in milliseconds since the epoch.
    let ms = blob_modified(&key(path))?;
    Some(std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(ms.max(0.0) / 1000.0))
}

pub fn canonical(path: &Path) -> PathBuf {
    path.to_path_buf()
}

pub fn list(dir: &Path) -> Vec<PathBuf> {
    let dir_key = key(dir);
    let prefix = if dir_key.is_empty() {
        String::new()
    } else {
        format!("{dir_key}/")
    };
    let bundled: Vec<String> = with_bundled(|b| b.beneath(&prefix).cloned().collect());
    stored_keys()
        .into_iter()
        .chain(blob_names())
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
    with_bundled(|b| b.files.contains_key(&key) || b.assets.contains(&key))
        || blob_modified(&key).is_some()
        || storage()
            .ok()
            .and_then(|s| s.get_item(&format!("{PREFIX}{key}")).ok().flatten())
            .is_some()
}

pub fn is_dir(path: &Path) -> bool {
    !is_file(path) && !list(path).is_empty()
}

pub fn remove(path: &Path) -> io::Result<()> {
    let key = key(path);
    blob_remove(&key);
    storage()?
        .remove_item(&format!("{PREFIX}{key}"))
        .map_err(|e| js_error(&e))
}
