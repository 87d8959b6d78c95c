//! Where Loreloom's files live: the data dir (saves, settings, models) and the shipped resources.

use std::path::PathBuf;

/// Where Loreloom keeps saves and settings: `$LORELOOM_DATA_DIR` when set
/// (tests, portable installs), else the platform's user data dir
/// (`~/.local/share/loreloom` on Linux).
pub fn data_dir() -> PathBuf {
    std::env::var_os("LORELOOM_DATA_DIR")
        .map(PathBuf::from)
        // `::dirs`: the crate, not this module.
        .or_else(|| ::dirs::data_dir().map(|d| d.join("loreloom")))
        .unwrap_or_else(|| PathBuf::from(".loreloom"))
}

/// A folder shipped with Loreloom (`prompts`, `schemas`, `campaigns`): relative to
/// the working directory when it is there, else in the source tree the binary was built from.
/// In the browser the path is the name itself: the page's bundle holds it there.
pub fn resource_dir(name: &str) -> PathBuf {
    if cfg!(target_family = "wasm") {
        return PathBuf::from(name);
    }
    let here = PathBuf::from(name);
    if super::is_dir(&here) {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(name)
    }
}
