//! A skill's `asset` events made safe (issue #25), copied into the save's content-addressed store.
//!
//! The path must name a regular file beneath that skill's own folder (no absolute path, no `..`, no symlink out: opened through `cap-std` relative to the folder; no FIFO or device), no bigger than a cap; its bytes are copied into the save's content-addressed asset store. Images are checked by their magic bytes; other media are kept and shown as a placeholder card.

#[cfg(not(target_family = "wasm"))]
use std::io::Read;
use std::path::Path;

#[cfg(not(target_family = "wasm"))]
use cap_std::fs::{Dir, OpenOptions};
use serde::{Deserialize, Serialize};

use super::protocol::Event;

/// The largest asset a skill may hand over.
pub const MAX_ASSET: u64 = 16 << 20;

/// An asset copied into the store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    pub asset_id: String,
    pub kind: String,
    pub media_type: String,
    /// The file name in the store (`<sha256>.<ext>`).
    pub file: String,
    /// Whether the window can show it (an image it decodes), else a card.
    pub shown: bool,
}

/// The extension a media type is stored under.
fn extension(media_type: &str) -> &'static str {
    match media_type {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        "audio/ogg" => "ogg",
        "audio/mpeg" => "mp3",
        "audio/wav" | "audio/x-wav" => "wav",
        "text/plain" => "txt",
        "application/json" => "json",
        _ => "bin",
    }
}

/// Whether the bytes are what an image media type says.
fn looks_like(media_type: &str, bytes: &[u8]) -> bool {
    match media_type {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF8"),
        "image/webp" => {
            bytes.len() > 12
                && bytes.get(..4) == Some(&b"RIFF"[..])
                && bytes.get(8..12) == Some(&b"WEBP"[..])
        }
        _ => false,
    }
}

/// Why an asset event's file is refused.
#[derive(Debug, thiserror::Error)]
pub enum AssetError {
    #[error("`{path}`: skills do not run in the browser")]
    Browser { path: String },
    #[error("`{path}`: an asset path is relative to the skill's folder")]
    NotRelative { path: String },
    /// The skill's own folder cannot be opened.
    #[error("{}: {source}", dir.display())]
    Folder {
        dir: std::path::PathBuf,
        source: std::io::Error,
    },
    /// Missing, or out of the folder (`..`, a symlink out).
    #[error("`{path}` is not a file inside the skill's folder ({source})")]
    NotInside {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` is not a regular file")]
    NotRegular { path: String },
    #[error("`{path}` is {size} bytes; an asset is at most {MAX_ASSET}")]
    TooBig { path: String, size: u64 },
    #[error("`{path}` grew past {MAX_ASSET} bytes while read")]
    Grew { path: String },
    #[error("`{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// No skill runs in the browser, so none hands over an asset there.
#[cfg(target_family = "wasm")]
pub fn read_beneath(_skill_dir: &Path, path: &str) -> Result<Vec<u8>, AssetError> {
    Err(AssetError::Browser {
        path: path.to_owned(),
    })
}

/// Reads the file an asset event names, beneath `skill_dir` only.
#[cfg(not(target_family = "wasm"))]
pub fn read_beneath(skill_dir: &Path, path: &str) -> Result<Vec<u8>, AssetError> {
    let named = || path.to_owned();
    if path.is_empty() || Path::new(path).is_absolute() {
        return Err(AssetError::NotRelative { path: named() });
    }
    let dir = Dir::open_ambient_dir(skill_dir, cap_std::ambient_authority()).map_err(|source| {
        AssetError::Folder {
            dir: skill_dir.to_owned(),
            source,
        }
    })?;
    // Following symlinks beneath the folder only: one out is refused.
    let meta = dir.metadata(path).map_err(|source| AssetError::NotInside {
        path: named(),
        source,
    })?;
    if !meta.is_file() {
        return Err(AssetError::NotRegular { path: named() });
    }
    if meta.len() > MAX_ASSET {
        return Err(AssetError::TooBig {
            path: named(),
            size: meta.len(),
        });
    }
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        // A FIFO swapped in after the check must not block the game.
        options.custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits());
    }
    let read = |source| AssetError::Read {
        path: named(),
        source,
    };
    let file = dir.open_with(path, &options).map_err(read)?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(AssetError::NotRegular { path: named() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_ASSET + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_ASSET {
        return Err(AssetError::Grew { path: named() });
    }
    Ok(bytes)
}

/// Copies every `asset` event's file of a skill into `store`; each refusal
/// is said (the event names the asset).
pub fn collect(skill_dir: &Path, events: &[Event], store: &Path) -> (Vec<Stored>, Vec<String>) {
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    for e in events {
        let Event::Asset {
            asset_id,
            kind,
            media_type,
            path,
            ..
        } = e
        else {
            continue;
        };
        let bytes = match read_beneath(skill_dir, path) {
            Ok(bytes) => bytes,
            Err(why) => {
                refused.push(format!("asset `{asset_id}`: {why}"));
                continue;
            }
        };
        let image = media_type.starts_with("image/");
        if image && !looks_like(media_type, &bytes) {
            refused.push(format!(
                "asset `{asset_id}`: `{path}` is not the {media_type} it says it is"
            ));
            continue;
        }
        match crate::files::store_content(store, &bytes, extension(media_type)) {
            Ok(file) => kept.push(Stored {
                asset_id: asset_id.clone(),
                kind: kind.clone(),
                media_type: media_type.clone(),
                file,
                shown: image,
            }),
            Err(e) => refused.push(format!("asset `{asset_id}`: {}: {e}", store.display())),
        }
    }
    (kept, refused)
}
