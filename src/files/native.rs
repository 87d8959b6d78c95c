//! Native file access: thin wrappers over `std::fs`, with writes that never clobber a saved file.

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
