//! SHIP (seed 000 Stage 7): deterministic exports of any story the player reads, for other tools.
//!
//! Any story the player reads (an authoring project's graph, a `story.json` package, a
//! questfoundry-runtime file) is exported to formats other tools open. No model; the same story
//! gives the same bytes.

pub mod epub;
pub mod html;
pub mod ink;
pub mod markdown;
pub mod questfoundry;
pub mod twee;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use crate::story::model::StoryFile;

/// Why a story could not be written in a format (only EPUB can fail: it packs files).
#[derive(Debug, thiserror::Error)]
pub enum ShipError {
    #[error("the EPUB container: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("{asset}: {source}")]
    Picture {
        asset: String,
        #[source]
        source: std::io::Error,
    },
}

/// A format SHIP writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A Loreloom story package: story.json and every file it names
    Package,
    /// QuestFoundry's questfoundry-runtime v1 JSON and the art it names
    Questfoundry,
    /// One self-contained HTML file: a small player with the story and its pictures inlined
    Html,
    /// inkle's ink: a knot per passage, a `VAR` per codeword, conditional choices
    Ink,
    /// A readable manuscript with the branch structure
    Markdown,
    /// An EPUB 3 book: a chapter per passage, choices as links
    Epub,
    /// Twee 3 for Twine's `SugarCube`: `<<if>>`-gated links that set what they grant
    Twee,
}

impl Format {
    /// The file name SHIP writes.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Package => crate::story::load::STORY_FILE_NAME,
            Format::Questfoundry => "story.qf.json",
            Format::Html => "story.html",
            Format::Ink => "story.ink",
            Format::Markdown => "story.md",
            Format::Epub => "story.epub",
            Format::Twee => "story.twee",
        }
    }

    /// The story in this format (files it inlines read from `root`), and
    /// notes on what the format could not carry.
    pub fn write(self, file: &StoryFile, root: &Path) -> Result<(Vec<u8>, Vec<String>), ShipError> {
        let text = |(t, n): (String, Vec<String>)| Ok((t.into_bytes(), n));
        match self {
            Format::Html => text(html::write(file, root)),
            Format::Package => text((
                serde_json::to_string_pretty(file).unwrap_or_default(),
                Vec::new(),
            )),
            Format::Questfoundry => text(questfoundry::write(file)),
            Format::Ink => text((ink::write(file), Vec::new())),
            Format::Markdown => text((markdown::write(file), Vec::new())),
            Format::Epub => epub::write(file, root),
            Format::Twee => text((twee::write(file), Vec::new())),
        }
    }

    /// The files the shipped file names (copied beside it): everything for
    /// the packages, the pictures for the manuscript, none for formats
    /// that inline what they show or show no pictures.
    fn named_assets(self, file: &StoryFile) -> Vec<(&str, String)> {
        let all = crate::story::load::referenced_assets(file);
        match self {
            Format::Package | Format::Questfoundry => all,
            Format::Markdown => {
                let pictures: BTreeSet<&str> = file
                    .illustrations
                    .iter()
                    .map(|i| i.asset.as_str())
                    .chain(file.meta.cover.as_deref())
                    .collect();
                all.into_iter()
                    .filter(|(a, _)| pictures.contains(a))
                    .collect()
            }
            _ => Vec::new(),
        }
    }
}

/// Writes `file` (read from the folder `root`) in `format` into `out`,
/// with the files it names where the format refers to them. Returns the
/// path written and notes (what the format could not carry, files missing).
pub fn ship(
    file: &StoryFile,
    root: &Path,
    format: Format,
    out: &Path,
) -> std::io::Result<(std::path::PathBuf, Vec<String>)> {
    let (bytes, mut notes) = format.write(file, root).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(out)?;
    let target = out.join(format.file_name());
    std::fs::write(&target, bytes)?;
    {
        let mut seen = BTreeSet::new();
        for (asset, by) in format.named_assets(file) {
            if !seen.insert(asset.to_owned()) {
                continue;
            }
            // #43: only files inside the story's folder, only to beneath `out`.
            let (from, to) = match (
                crate::story::load::asset_in(root, asset),
                crate::story::load::asset_in(out, asset),
            ) {
                (Ok(from), Ok(to)) => (from, to),
                (Err(why), _) | (_, Err(why)) => {
                    notes.push(format!("{asset} (named by {by}): {why}; not shipped"));
                    continue;
                }
            };
            if !from.is_file() {
                notes.push(format!(
                    "{asset} (named by {by}) is missing from {}; not shipped",
                    root.display()
                ));
                continue;
            }
            // Two spellings of one file (`out` is the story's own folder, or
            // a link to it): copying it onto itself would truncate it.
            if !same_file(&from, &to) {
                if let Some(dir) = to.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::copy(&from, &to)?;
            }
        }
    }
    Ok((target, notes))
}

/// Whether two paths are one file on disk (same device and inode; else the
/// same canonical path).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// A stable version-4 UUID for a story (an EPUB identifier, a Twine IFID),
/// its bytes an FNV-1a hash of the story's id, upper case as Twine writes them.
pub fn ifid(id: &str) -> String {
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in id.bytes() {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
    }
    uuid::Builder::from_random_bytes(h.to_be_bytes())
        .into_uuid()
        .hyphenated()
        .to_string()
        .to_uppercase()
}

/// The passage a reader starts at: the story's start, else its first passage.
pub fn start(file: &StoryFile) -> Option<&str> {
    file.start
        .as_deref()
        .or_else(|| file.passages.first().map(|p| p.id.as_str()))
}

/// Text safe inside XML and HTML elements and attributes.
pub fn escape_xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The media type of a picture a page or a book can show, by its extension.
pub fn media_type(asset: &str) -> Option<&'static str> {
    match Path::new(asset).extension().and_then(|e| e.to_str()) {
        Some("png") => Some("image/png"),
        Some("jpg" | "jpeg") => Some("image/jpeg"),
        Some("webp") => Some("image/webp"),
        Some("svg") => Some("image/svg+xml"),
        _ => None,
    }
}

/// The passages in reading order: breadth first from the start along
/// choices (in their order), then any the start does not lead to.
pub fn reading_order(file: &StoryFile) -> Vec<usize> {
    let index: BTreeMap<&str, usize> = file
        .passages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.id.as_str(), i))
        .collect();
    let start = start(file).and_then(|s| index.get(s).copied()).unwrap_or(0);
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut queue = VecDeque::from([start]);
    while let Some(i) = queue.pop_front() {
        if i >= file.passages.len() || !seen.insert(i) {
            continue;
        }
        order.push(i);
        for c in &file.passages[i].choices {
            if let Some(&j) = index.get(c.to.as_str()) {
                queue.push_back(j);
            }
        }
    }
    order.extend((0..file.passages.len()).filter(|i| !seen.contains(i)));
    order
}

/// Names for ids in a format that allows only `[A-Za-z0-9_]`, starting
/// with `prefix`, one per id, never two the same.
pub fn identifiers<'a>(
    ids: impl IntoIterator<Item = &'a str>,
    prefix: &str,
) -> BTreeMap<String, String> {
    let mut taken = BTreeSet::new();
    let mut out = BTreeMap::new();
    for id in ids {
        let clean: String = id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        // `cw-…` ids already read as `cw_…`; others get the prefix.
        let base = if clean.starts_with(prefix) {
            clean
        } else {
            format!("{prefix}{clean}")
        };
        let mut name = base.clone();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        out.insert(id.to_owned(), name);
    }
    out
}
