//! The campaign's media: images and audio with their keyword and metadata sidecars.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::checks::provenance;
use super::{AUDIO, Collected, IMAGE, Loader};
use crate::campaign::format::AssetMeta;
use crate::campaign::{Asset, AssetKind, keywords_from_name, parse_keywords};

impl Loader {
    /// Every image and audio file: its keywords (from its `.keywords.txt`
    /// sidecar, else its name) and its `.meta.json` metadata; sidecars
    /// without their asset and media outside `art/`, `music/` and
    /// `characters/` are warnings.
    pub(super) fn assets(&mut self, files: &[PathBuf], c: &mut Collected) {
        let present: BTreeSet<&Path> = files.iter().map(PathBuf::as_path).collect();
        for path in files {
            let rel = self.rel(path).to_path_buf();
            let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let top = rel.iter().next().and_then(|s| s.to_str()).unwrap_or("");
            for suffix in [".keywords.txt", ".meta.json"] {
                if let Some(asset) = name.strip_suffix(suffix)
                    && !present.contains(path.with_file_name(asset).as_path())
                {
                    self.report.warning(
                        &rel,
                        None,
                        format!("sidecar for `{asset}`, which does not exist (orphaned)"),
                    );
                }
            }
            let ext = path
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("")
                .to_lowercase();
            let kind = if IMAGE.contains(&ext.as_str()) {
                AssetKind::Image
            } else if AUDIO.contains(&ext.as_str()) {
                AssetKind::Audio
            } else {
                continue;
            };
            if !matches!(top, "art" | "music" | "characters") {
                self.report.warning(
                    &rel,
                    None,
                    "media belongs under art/ (images) or music/ (audio); ignored",
                );
                continue;
            }
            let sidecar = path.with_file_name(format!("{name}.keywords.txt"));
            let (keywords, from_sidecar) = if crate::files::is_file(&sidecar) {
                let words = self
                    .read(&sidecar)
                    .map(|t| parse_keywords(&t))
                    .unwrap_or_default();
                if words.is_empty() {
                    self.report.warning(
                        self.rel(&sidecar),
                        None,
                        "no keywords (one per line; `#` starts a comment); the file name's are used",
                    );
                    (keywords_from_name(&rel), false)
                } else {
                    (words, true)
                }
            } else {
                (keywords_from_name(&rel), false)
            };
            let meta_path = path.with_file_name(format!("{name}.meta.json"));
            let meta = if crate::files::is_file(&meta_path) {
                match self.json::<AssetMeta>(&meta_path, |s| &s.meta) {
                    Some(p) => {
                        let line = p.line("/provenance").or(Some(1));
                        provenance(&mut self.report, &p.rel, line, &p.value);
                        p.value
                    }
                    None => AssetMeta::default(),
                }
            } else {
                AssetMeta::default()
            };
            c.assets.push(Asset {
                path: rel,
                kind,
                meta,
                keywords,
                keywords_from_sidecar: from_sidecar,
            });
        }
    }
}
