//! Reading stories from disk: a package folder, its `story.json`, or a questfoundry-runtime export.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use thiserror::Error;

use super::diagnostic::{Diagnostic, Rule, Subject};
use super::graph::{SharedStory, Story};
use super::model::{Cue, STORY_FORMAT, STORY_FORMAT_VERSION, StoryFile};
use super::questfoundry::{self, QF_FORMAT, QF_VERSION};

/// The file a story package keeps its graph in.
pub const STORY_FILE_NAME: &str = "story.json";

/// The most a story file may hold; bigger is refused before it is read.
pub const STORY_CAP: u64 = 64 << 20;

/// Why a story file could not be read. Every variant names the file.
#[derive(Debug, Error)]
pub enum LoadError {
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: this folder has no {STORY_FILE_NAME}; a story package keeps its graph there", path.display())]
    NotAPackage { path: PathBuf },
    #[error("{}: not valid JSON: {source}", path.display())]
    Syntax {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: at `{at}`: {message}", path.display())]
    Shape {
        path: PathBuf,
        at: String,
        message: String,
    },
    #[error(
        "{}: unknown format {found:?}; Loreloom reads \"{STORY_FORMAT}\" and \"{QF_FORMAT}\" files",
        path.display()
    )]
    UnknownFormat { path: PathBuf, found: String },
    #[error(
        "{}: {format} version {found} is not supported; this Loreloom reads version {supported}",
        path.display()
    )]
    UnsupportedVersion {
        path: PathBuf,
        format: &'static str,
        found: u64,
        supported: u32,
    },
    #[error("{}: the story has broken references:{}", path.display(), list(diagnostics))]
    Broken {
        path: PathBuf,
        diagnostics: Vec<Diagnostic>,
    },
}

fn list(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().fold(String::new(), |mut out, d| {
        let _ = write!(out, "\n  {d}");
        out
    })
}

/// Which format a story file was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    Loreloom,
    QuestFoundry,
}

/// A story file read from disk, not yet compiled.
#[derive(Debug)]
pub struct LoadedFile {
    pub file: StoryFile,
    /// The JSON file read.
    pub path: PathBuf,
    /// The folder asset paths are relative to.
    pub root: PathBuf,
    pub source: SourceFormat,
    /// Notes from import (warnings).
    pub notes: Vec<Diagnostic>,
}

/// A compiled story with where it came from.
#[derive(Debug, Clone)]
pub struct StoryPackage {
    pub story: SharedStory,
    pub path: PathBuf,
    pub root: PathBuf,
    pub source: SourceFormat,
    pub notes: Vec<Diagnostic>,
}

fn parse<T: DeserializeOwned>(path: &Path, value: serde_json::Value) -> Result<T, LoadError> {
    serde_path_to_error::deserialize(value).map_err(|err| LoadError::Shape {
        path: path.to_owned(),
        at: err.path().to_string(),
        message: err.inner().to_string(),
    })
}

/// Read a story package folder, a `story.json`, or a questfoundry-runtime `.json`.
pub fn load_file(path: &Path) -> Result<LoadedFile, LoadError> {
    let file_path = if crate::files::is_dir(path) {
        let inner = path.join(STORY_FILE_NAME);
        if !crate::files::is_file(&inner) {
            return Err(LoadError::NotAPackage {
                path: path.to_owned(),
            });
        }
        inner
    } else {
        path.to_owned()
    };
    let text = crate::files::read_to_string_within(&file_path, STORY_CAP).map_err(|source| {
        LoadError::Io {
            path: file_path.clone(),
            source,
        }
    })?;
    load_text(file_path, &text)
}

/// A story file's text (Loreloom's or QuestFoundry's format) as read from
/// `file_path` (named in errors; asset paths are relative to its folder).
pub fn load_text(file_path: PathBuf, text: &str) -> Result<LoadedFile, LoadError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|source| LoadError::Syntax {
            path: file_path.clone(),
            source,
        })?;
    let format = value.get("format").and_then(|f| f.as_str()).unwrap_or("");
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    let root = file_path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_owned);
    let check_version = |format: &'static str, supported: u32| match version {
        Some(v) if v >= 1 && v <= u64::from(supported) => Ok(()),
        found => Err(LoadError::UnsupportedVersion {
            path: file_path.clone(),
            format,
            found: found.unwrap_or(0),
            supported,
        }),
    };
    match format {
        STORY_FORMAT => {
            check_version(STORY_FORMAT, STORY_FORMAT_VERSION)?;
            Ok(LoadedFile {
                file: parse(&file_path, value)?,
                path: file_path,
                root,
                source: SourceFormat::Loreloom,
                notes: Vec::new(),
            })
        }
        QF_FORMAT => {
            check_version(QF_FORMAT, QF_VERSION)?;
            let qf = parse(&file_path, value)?;
            let stem = file_path
                .file_stem()
                .map_or_else(|| "story".to_owned(), |s| s.to_string_lossy().into_owned());
            let (file, notes) = questfoundry::convert(qf, &stem);
            Ok(LoadedFile {
                file,
                path: file_path,
                root,
                source: SourceFormat::QuestFoundry,
                notes,
            })
        }
        other => Err(LoadError::UnknownFormat {
            path: file_path,
            found: other.to_owned(),
        }),
    }
}

/// Read and compile a story, ready to play.
pub fn open(path: &Path) -> Result<StoryPackage, LoadError> {
    let loaded = load_file(path)?;
    let story = Story::compile(loaded.file).map_err(|diagnostics| LoadError::Broken {
        path: loaded.path.clone(),
        diagnostics,
    })?;
    Ok(StoryPackage {
        story: Arc::new(story),
        path: loaded.path,
        root: loaded.root,
        source: loaded.source,
        notes: loaded.notes,
    })
}

/// Every file a story names (art, portraits, cover, music, ambience) with what names it.
pub fn referenced_assets(file: &StoryFile) -> Vec<(&str, String)> {
    let mut cues: Vec<(Option<&Cue>, String)> =
        vec![(file.meta.cue.as_ref(), "the story's default cue".to_owned())];
    cues.extend(
        file.scenes
            .iter()
            .map(|s| (s.cue.as_ref(), format!("scene `{}`", s.id))),
    );
    cues.extend(
        file.passages
            .iter()
            .map(|p| (p.cue.as_ref(), format!("passage `{}`", p.id))),
    );
    let mut out: Vec<(&str, String)> = Vec::new();
    for (cue, by) in cues {
        if let Some(cue) = cue {
            for path in [&cue.music, &cue.ambience].into_iter().flatten() {
                out.push((path.as_str(), by.clone()));
            }
        }
    }
    if let Some(cover) = &file.meta.cover {
        out.push((cover, "the cover".to_owned()));
    }
    for art in &file.illustrations {
        out.push((&art.asset, format!("illustration `{}`", art.id)));
    }
    for entity in &file.entities {
        if let Some(portrait) = &entity.portrait {
            out.push((portrait, format!("the portrait of `{}`", entity.id)));
        }
    }
    out
}

/// The file an asset path names inside the story's folder `root`, or why it
/// may not be read (#43): an asset is a relative path beneath the folder:
/// not absolute, no `..`, and not a link that leads out of it.
pub fn asset_in(root: &Path, asset: &str) -> Result<std::path::PathBuf, String> {
    use crate::files::Outside;
    crate::files::beneath(root, asset).map_err(|why| match why {
        Outside::Climbs => "the path climbs out of the story's folder (`..`)".to_owned(),
        Outside::Link => "the path is a link that leads out of the story's folder".to_owned(),
        other => other.to_string(),
    })
}

/// Errors for named files outside the package folder `root`, and warnings
/// for those missing from it.
pub fn check_assets(file: &StoryFile, root: &Path) -> Vec<Diagnostic> {
    referenced_assets(file)
        .into_iter()
        .filter_map(|(path, by)| match asset_in(root, path) {
            Err(why) => Some(Diagnostic::new(
                Rule::AssetOutside,
                Subject::Asset(path.to_owned()),
                format!(
                    "named by {by}: {why}; an asset must be a file inside {}",
                    root.display()
                ),
            )),
            Ok(file) if !file.is_file() => Some(Diagnostic::new(
                Rule::MissingAsset,
                Subject::Asset(path.to_owned()),
                format!(
                    "named by {by} but not found in {}; players will see a placeholder",
                    root.display()
                ),
            )),
            Ok(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod asset_tests {
    use super::asset_in;

    #[test]
    fn an_asset_is_a_file_inside_the_story_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("story");
        std::fs::create_dir_all(root.join("art")).unwrap();
        std::fs::write(root.join("art/a.png"), b"png").unwrap();
        std::fs::write(dir.path().join("secret.txt"), b"secret").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("art/link.png"))
                .unwrap();
            std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        }
        assert_eq!(
            asset_in(&root, "art/a.png").unwrap(),
            root.join("art/a.png")
        );
        assert!(asset_in(&root, "./art/a.png").is_ok());
        assert!(
            asset_in(&root, "art/missing.png").is_ok(),
            "missing is a warning elsewhere"
        );
        for bad in [
            "/etc/shadow",
            "../secret.txt",
            "art/../../secret.txt",
            "art\\..\\..\\secret.txt",
            "C:/Windows/win.ini",
            "",
            "art/a.png\0",
        ] {
            assert!(asset_in(&root, bad).is_err(), "{bad:?}");
        }
        #[cfg(unix)]
        for link in ["art/link.png", "up/secret.txt"] {
            assert_eq!(
                asset_in(&root, link).unwrap_err(),
                "the path is a link that leads out of the story's folder",
                "{link}"
            );
        }
    }
}
