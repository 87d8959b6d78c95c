//! Sorting every file of a campaign folder into its part of the campaign, parsed and checked.
//!
//! Each top folder has its handler (`world/`, `characters/`, `plot/`, …);
//! a file no handler claims is a warning, unless it is a sidecar (read with
//! its asset in [`super::assets`]). Enrichment's `*_generated` files are used
//! only where no human-authored one exists.

use std::path::Path;

use serde_json::Value;

use super::checks::{check_id, provenance};
use super::{Collected, IMAGE, Loader, UNSUPPORTED_MEDIA};
use crate::campaign::format::{AssetMeta, NpcProfile, Scenario};
use crate::campaign::source;
use crate::campaign::{Document, keywords_from_name};

impl Loader {
    /// Sort one file into its part of the campaign.
    pub(super) fn classify(&mut self, path: &Path, c: &mut Collected) {
        let rel = self.rel(path).to_path_buf();
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_lowercase();
        let name = parts.last().copied().unwrap_or("");
        let claimed = match parts.as_slice() {
            ["packs", id, "pack.yaml"] => {
                c.pack_dirs.push(((*id).to_owned(), path.to_path_buf()));
                true
            }
            // The manifest is read first; packs and the campaign's own ruleset are read on their own.
            ["manifest.json"] | ["packs", ..] | ["ruleset", "ruleset.json" | "rulebook.md"] => true,
            ["README.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert("readme".into(), t);
                }
                true
            }
            ["world", rest @ ..] => self.world_file(path, rest, c),
            ["characters", rest @ ..] => self.character_file(path, rest, &ext, c),
            ["plot", rest @ ..] => self.plot_file(path, rest, &ext, c),
            ["scenarios", _] if ext == "json" => {
                if let Some(s) = self.json::<Scenario>(path, |s| &s.scenario) {
                    c.scenarios.push(s);
                }
                true
            }
            ["lore", .., _] if ext == "md" || ext == "txt" => {
                self.lore_file(path, c);
                true
            }
            ["art" | "music", ..] => {
                if UNSUPPORTED_MEDIA.contains(&ext.as_str()) {
                    self.report.warning(
                        &rel,
                        None,
                        format!(
                            "`.{ext}` is not a supported format (images: PNG, JPEG, WebP; audio: MP3, OGG, WAV, FLAC); ignored"
                        ),
                    );
                }
                true
            }
            _ => false,
        };
        if !claimed && !name.ends_with(".keywords.txt") && !name.ends_with(".meta.json") {
            self.report.warning(
                &rel,
                None,
                "not part of the campaign format (seed 002 §6.2.2); ignored",
            );
        }
    }

    /// `world/`: the setting's prose (or enrichment's) and the starting state.
    fn world_file(&mut self, path: &Path, rest: &[&str], c: &mut Collected) -> bool {
        match rest {
            [name @ ("setting.md" | "rules.md" | "constraints.md")] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert(name.trim_end_matches(".md").into(), t);
                }
            }
            // Enrichment's files (seed 002 §6.2.12): used only where no human-authored one exists.
            [
                name @ ("setting_generated.md" | "rules_generated.md" | "constraints_generated.md"),
            ] => {
                let role = name.trim_end_matches("_generated.md");
                if crate::files::is_file(&self.root.join("world").join(format!("{role}.md"))) {
                    self.ignore_generated(path, &format!("world/{role}.md"));
                } else if let Some(t) = self.markdown(path) {
                    c.prose.insert(role.into(), t);
                }
            }
            ["state.json"] => c.world = self.json(path, |s| &s.world),
            _ => return false,
        }
        true
    }

    /// `characters/`: NPC profiles (or enrichment's), secrets and portraits,
    /// and the player template.
    fn character_file(&mut self, path: &Path, rest: &[&str], ext: &str, c: &mut Collected) -> bool {
        match rest {
            ["npcs", id, "profile_generated.json"] => {
                if crate::files::is_file(&path.with_file_name("profile.json")) {
                    self.ignore_generated(path, "profile.json");
                } else if let Some(p) = self.json::<NpcProfile>(path, |s| &s.npc) {
                    check_id(&mut self.report, &p.rel, id);
                    self.json_provenance(&p.rel, p.value.generated, p.value.provenance.as_ref());
                    c.npcs.insert((*id).to_owned(), p);
                }
            }
            ["npcs", id, "profile.json"] => {
                if let Some(p) = self.json::<NpcProfile>(path, |s| &s.npc) {
                    check_id(&mut self.report, &p.rel, id);
                    c.npcs.insert((*id).to_owned(), p);
                }
            }
            ["npcs", id, "secrets.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.secrets.insert((*id).to_owned(), t);
                }
            }
            ["npcs", _, _] if IMAGE.contains(&ext) => {}
            ["player", "template.json"] => c.player = self.json(path, |s| &s.player),
            _ => return false,
        }
        true
    }

    /// `plot/`: the premise, the beats (or enrichment's) and the endings.
    fn plot_file(&mut self, path: &Path, rest: &[&str], ext: &str, c: &mut Collected) -> bool {
        match rest {
            ["beats_generated.json"] => {
                if crate::files::is_file(&path.with_file_name("beats.json")) {
                    self.ignore_generated(path, "plot/beats.json");
                } else {
                    c.beats = self.json(path, |s| &s.beats);
                    if let Some(b) = &c.beats {
                        let (rel, generated, provenance) =
                            (b.rel.clone(), b.value.generated, b.value.provenance.clone());
                        self.json_provenance(&rel, generated, provenance.as_ref());
                    }
                }
            }
            ["premise.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert("premise".into(), t);
                }
            }
            ["beats.json"] => c.beats = self.json(path, |s| &s.beats),
            ["endings", file] if ext == "md" => {
                if let Some(t) = self.markdown(path) {
                    c.endings.insert(file.trim_end_matches(".md").to_owned(), t);
                }
            }
            _ => return false,
        }
        true
    }

    /// `lore/**`: a document for the memory index, its keywords from its
    /// frontmatter or else its name.
    fn lore_file(&mut self, path: &Path, c: &mut Collected) {
        let rel = self.rel(path).to_path_buf();
        if let Some(text) = self.read(path) {
            let (generated, keywords) = self.prose_meta(&rel, &text);
            let keywords = if keywords.is_empty() {
                keywords_from_name(&rel)
            } else {
                keywords
            };
            c.lore.push(Document {
                path: rel,
                text,
                keywords,
                generated,
            });
        }
    }

    /// Notes that a generated file is ignored because `human` (a human-authored one) exists.
    fn ignore_generated(&mut self, path: &Path, human: &str) {
        let rel = self.rel(path).to_path_buf();
        self.report.notices.push(format!(
            "{}: a human-authored {human} exists; the generated one is ignored",
            rel.display()
        ));
    }

    /// Read a markdown file; its optional frontmatter may mark it generated (checked like asset metadata).
    fn markdown(&mut self, path: &Path) -> Option<String> {
        let text = self.read(path)?;
        let rel = self.rel(path).to_path_buf();
        self.prose_meta(&rel, &text);
        Some(text)
    }

    /// `generated` and `provenance` of a structured file, checked like asset metadata.
    fn json_provenance(
        &mut self,
        rel: &Path,
        generated: bool,
        provenance_map: Option<&serde_json::Map<String, Value>>,
    ) {
        let meta = AssetMeta {
            generated,
            provenance: provenance_map.cloned(),
            ..AssetMeta::default()
        };
        provenance(&mut self.report, rel, Some(1), &meta);
    }

    /// Frontmatter of campaign prose: `generated`, `provenance`, `keywords`.
    fn prose_meta(&mut self, rel: &Path, text: &str) -> (bool, Vec<String>) {
        let Some((yaml, line, _)) = source::frontmatter(text) else {
            return (false, Vec::new());
        };
        match source::yaml::<AssetMeta>(rel, yaml, line, &self.schemas.meta, &mut self.report) {
            Some(meta) => {
                provenance(&mut self.report, rel, Some(line), &meta);
                (meta.generated, meta.keywords)
            }
            None => (false, Vec::new()),
        }
    }
}
