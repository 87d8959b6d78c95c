//! Content packs: reading `packs/<id>/` and its entries, then turning the entries into entities.
//!
//! A pack is a `pack.yaml` and markdown entries with frontmatter; entry ids
//! are namespaced `pack:entry`. Packs depend on packs, and the manifest lists
//! the ones the campaign uses (only those are kept).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::checks::first_paragraph;
use super::{Assembly, Loader, Parsed, walk};
use crate::campaign::format::{Entity, EntryKind, Frontmatter, Manifest, PackManifest};
use crate::campaign::source;
use crate::campaign::{Character, CharacterKind, Origin, Pack, PackEntry};
use crate::rules::state::CharacterState;

impl Loader {
    /// The content packs in `packs/` (`dirs`: folder and `pack.yaml` of each):
    /// their dependencies and the manifest's list of them are checked, and
    /// only the packs the manifest lists are kept.
    pub(super) fn packs(
        &mut self,
        manifest: &Parsed<Manifest>,
        dirs: &[(String, PathBuf)],
    ) -> Vec<Pack> {
        let mut packs = Vec::new();
        let mut depends_line = BTreeMap::new();
        for (folder, yaml_path) in dirs {
            let Some(text) = self.read(yaml_path) else {
                continue;
            };
            depends_line.insert(folder.clone(), key_line(&text, "depends_on"));
            if let Some(pack) = self.pack(folder, yaml_path, &text) {
                packs.push(pack);
            }
        }
        // Dependencies and listing in the manifest.
        let ids: BTreeSet<String> = packs.iter().map(|p| p.manifest.id.clone()).collect();
        for pack in &packs {
            for dep in &pack.manifest.depends_on {
                if !ids.contains(dep) {
                    self.report.error(
                        PathBuf::from("packs")
                            .join(&pack.manifest.id)
                            .join("pack.yaml"),
                        depends_line.get(&pack.manifest.id).copied().flatten(),
                        format!("depends on pack `{dep}`, which is not in packs/"),
                    );
                }
            }
        }
        for (i, id) in manifest.value.packs.iter().enumerate() {
            // A pack folder that is there but did not load has its own errors already.
            if !ids.contains(id) && !dirs.iter().any(|(folder, _)| folder == id) {
                self.report.error(
                    &manifest.rel,
                    manifest.line(&format!("/packs/{i}")),
                    format!("pack `{id}` is not in packs/ (expected packs/{id}/pack.yaml)"),
                );
            }
        }
        packs
            .into_iter()
            .filter(|p| manifest.value.packs.contains(&p.manifest.id))
            .collect()
    }

    /// One pack: its `pack.yaml` (`text`), whose id must be its folder's, and
    /// its entries.
    fn pack(&mut self, folder: &str, yaml_path: &Path, text: &str) -> Option<Pack> {
        let rel = self.rel(yaml_path).to_path_buf();
        let pm = source::yaml::<PackManifest>(&rel, text, 1, &self.schemas.pack, &mut self.report)?;
        if pm.id != folder {
            self.report.error(
                &rel,
                key_line(text, "id"),
                format!("pack id `{}` differs from its folder `{folder}`", pm.id),
            );
            return None;
        }
        let dir = yaml_path.parent().unwrap_or(&self.root).to_path_buf();
        let entries = self.pack_entries_in(&pm.id, &dir);
        Some(Pack {
            manifest: pm,
            entries,
        })
    }

    /// The entries of pack `pack` (every markdown file under `dir`, in order),
    /// each with frontmatter and an id unique in the pack.
    fn pack_entries_in(&mut self, pack: &str, dir: &Path) -> Vec<PackEntry> {
        // The campaign's walk has already warned of any link or depth it skipped.
        let mut files = walk(dir, &mut crate::campaign::report::Report::default());
        files.sort();
        let mut entries: Vec<PackEntry> = Vec::new();
        for path in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
        {
            let Some(text) = self.read(path) else {
                continue;
            };
            let rel = self.rel(path).to_path_buf();
            let Some((yaml, line, body)) = source::frontmatter(&text) else {
                self.report.error(
                    &rel,
                    Some(1),
                    "content pack files start with YAML frontmatter between `---` lines (`id`, `type`, …)",
                );
                continue;
            };
            let Some(meta) = source::yaml::<Frontmatter>(
                &rel,
                yaml,
                line,
                &self.schemas.frontmatter,
                &mut self.report,
            ) else {
                continue;
            };
            let id = format!("{pack}:{}", meta.id);
            if let Some(other) = entries.iter().find(|e| e.id == id) {
                self.report.error(
                    &rel,
                    Some(line),
                    format!("duplicate id `{id}` (also in {})", other.path.display()),
                );
                continue;
            }
            entries.push(PackEntry {
                id,
                path: rel,
                meta,
                body: body.to_owned(),
            });
        }
        entries
    }

    /// Assembly phase: pack entries become entities (locations, items,
    /// factions, NPCs), namespaced; what an entry refers to must be an entry.
    pub(super) fn pack_entries(&mut self, packs: &[Pack], a: &mut Assembly) {
        for pack in packs {
            for entry in &pack.entries {
                let entity = Entity {
                    id: entry.id.clone(),
                    name: entry.name(),
                    description: first_paragraph(&entry.body),
                    tags: entry.meta.tags.clone(),
                };
                match entry.meta.kind {
                    EntryKind::Location => {
                        a.locations.insert(entry.id.clone(), entity);
                    }
                    EntryKind::Item => {
                        a.items.insert(entry.id.clone(), entity);
                    }
                    EntryKind::Faction => {
                        a.factions.insert(entry.id.clone(), entity);
                    }
                    EntryKind::Npc => {
                        a.characters.insert(
                            entry.id.clone(),
                            Character {
                                id: entry.id.clone(),
                                name: entity.name.clone(),
                                kind: CharacterKind::Npc,
                                origin: Origin::Pack(pack.manifest.id.clone()),
                                profile: None,
                                secrets: None,
                                description: entity.description.clone(),
                                portrait: None,
                                chattiness: 0.3,
                                baked: false,
                            },
                        );
                        a.world
                            .characters
                            .insert(entry.id.clone(), CharacterState::default());
                    }
                    _ => {}
                }
            }
        }
        self.pack_references(packs);
    }

    /// Every entity, faction and location a pack entry names is a pack entry.
    fn pack_references(&mut self, packs: &[Pack]) {
        let pack_ids: BTreeSet<String> = packs
            .iter()
            .flat_map(|p| p.entries.iter().map(|e| e.id.clone()))
            .collect();
        for pack in packs {
            for entry in &pack.entries {
                let refs = entry
                    .meta
                    .related_entities
                    .iter()
                    .chain(&entry.meta.related_factions)
                    .chain(&entry.meta.related_locations);
                for r in refs {
                    let qualified = if r.contains(':') {
                        r.clone()
                    } else {
                        format!("{}:{r}", pack.manifest.id)
                    };
                    if !pack_ids.contains(&qualified) {
                        self.report.warning(
                            &entry.path,
                            None,
                            format!("refers to `{r}`, which no pack entry defines"),
                        );
                    }
                }
            }
        }
    }
}

/// The 1-based line of a top-level `key:` in a YAML text.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.starts_with(&format!("{key}:")))
        .map(|i| i + 1)
}
