//! Native file access: thin wrappers over `std::fs`, with writes that never clobber a saved file.

use std::io;
use std::path::{Path, PathBuf};

pub fn read_to_string(path: &Path) -> io::Result<String> {
    std::fs::read_to_string(path)
}

pub fn read_to_string_within(path: &Path, cap: u64) -> io::Result<String> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    if size > cap {
        return Err(super::too_big(Some(size), cap));
    }
    let mut text = String::new();
    // A file that grows while it is read (or a device with no length) stops at the cap too.
    file.take(cap + 1).read_to_string(&mut text)?;
    if text.len() as u64 > cap {
        return Err(super::too_big(None, cap));
    }
    Ok(text)
}

/// Writes a uniquely named temporary file beside `path` (`O_EXCL`, so two
/// writers never share one), flushes it to the disk, renames it over `path`
/// and flushes the folder, so after a crash or power cut `path` holds either
/// the old bytes or the new ones, never a torn or empty file.
/// Temporaries a killed writer left beside `path` (older than
/// [`STALE_TEMPORARY`]) are swept on the way.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(parent)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    sync_folder(parent)?;
    sweep_temporaries(parent, &name);
    Ok(())
}

/// How old a writer's temporary file must be before it counts as left by
/// a writer that was killed: no write of a small file takes this long, so
/// another writer's file in progress is never taken.
pub const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_mins(10);

/// Removes `.{name}.XXXXXX.tmp` files in `dir` older than [`STALE_TEMPORARY`]
/// (what [`write_atomically`] leaves when the game is killed mid-write).
/// Best effort: a file that cannot be read or removed stays.
fn sweep_temporaries(dir: &Path, name: &str) {
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name();
        let file_name = file_name.to_string_lossy();
        let Some(middle) = file_name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
        else {
            continue;
        };
        // tempfile's random part: six letters or digits.
        if middle.len() != 6 || !middle.chars().all(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TEMPORARY);
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Flushes a folder's entries (a rename inside it) to the disk.
fn sync_folder(dir: &Path) -> io::Result<()> {
    match std::fs::File::open(dir).and_then(|f| f.sync_all()) {
        // Some file systems cannot fsync a folder; the rename is still atomic there.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::InvalidInput | io::ErrorKind::Unsupported
            ) =>
        {
            Ok(())
        }
        other => other,
    }
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

pub fn read_binary(path: &Path) -> io::Result<Vec<u8>> {
    std::fs::read(path)
}

pub fn write_binary(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomically(path, bytes)
}

pub fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).ok()?.modified().ok()
}

pub fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
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
