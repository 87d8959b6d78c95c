//! Walking a campaign folder: classify every file, parse and schema-check it, then check the files against each other and the ruleset.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::files::{
    AssetMeta, BeatsFile, Entity, Frontmatter, Manifest, NpcProfile, PackManifest, PlayerTemplate,
    Scenario, WorldFile,
};
use super::report::Report;
use super::source::{self, FileSchema, PointerLines};
use super::{
    Asset, AssetKind, Campaign, Character, CharacterKind, Document, Origin, Pack, PackEntry,
    keywords_from_name, parse_keywords,
};
use crate::rules::ruleset::DEFAULT_RULESET;
use crate::rules::state::CharacterState;
use crate::rules::{Ruleset, RulesetError, WorldState};

const IMAGE: [&str; 4] = ["png", "jpg", "jpeg", "webp"];
const AUDIO: [&str; 4] = ["mp3", "ogg", "wav", "flac"];
const UNSUPPORTED_MEDIA: [&str; 7] = ["gif", "bmp", "tif", "tiff", "svg", "aac", "m4a"];

/// The player character's id in scenarios, relations and inventory.
pub const PLAYER: &str = "player";

/// Validate a campaign: the report, and nothing else.
pub fn validate(dir: &Path) -> Report {
    let (_, report) = load(dir, &[super::system_rulesets()]);
    report
}

/// Load a campaign; `None` when it has errors (all of them are in the report).
pub fn load(dir: &Path, ruleset_dirs: &[PathBuf]) -> (Option<Campaign>, Report) {
    let mut loader = Loader {
        root: dir.to_path_buf(),
        report: Report::default(),
        schemas: Schemas::new(),
    };
    let campaign = loader.run(ruleset_dirs);
    let mut report = loader.report;
    report.sort();
    if let Some(c) = &campaign {
        let generated = c.generated_assets();
        if generated > 0 {
            report.notices.push(format!(
                "Campaign contains {generated} AI-generated asset(s). Review generated flags and provenance metadata to verify correctness."
            ));
        }
    }
    let campaign = campaign.filter(|_| !report.has_errors());
    (campaign, report)
}

struct Schemas {
    manifest: FileSchema,
    npc: FileSchema,
    beats: FileSchema,
    player: FileSchema,
    scenario: FileSchema,
    world: FileSchema,
    meta: FileSchema,
    pack: FileSchema,
    frontmatter: FileSchema,
}

impl Schemas {
    fn new() -> Self {
        Self {
            manifest: FileSchema::of::<Manifest>("manifest"),
            npc: FileSchema::of::<NpcProfile>("NPC profile"),
            beats: FileSchema::of::<BeatsFile>("plot beats"),
            player: FileSchema::of::<PlayerTemplate>("player template"),
            scenario: FileSchema::of::<Scenario>("scenario"),
            world: FileSchema::of::<WorldFile>("world state"),
            meta: FileSchema::of::<AssetMeta>("asset metadata"),
            pack: FileSchema::of::<PackManifest>("pack manifest"),
            frontmatter: FileSchema::of::<Frontmatter>("frontmatter"),
        }
    }
}

struct Loader {
    root: PathBuf,
    report: Report,
    schemas: Schemas,
}

/// A parsed JSON file with the line of each of its values, to place later problems.
struct Parsed<T> {
    rel: PathBuf,
    lines: PointerLines,
    value: T,
}

impl<T> Parsed<T> {
    /// The line of the value at a JSON pointer (or of its nearest parent).
    fn line(&self, pointer: &str) -> Option<usize> {
        self.lines.line(pointer)
    }
}

impl Loader {
    fn rel<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }

    fn read(&mut self, path: &Path) -> Option<String> {
        match crate::files::read_to_string(path) {
            Ok(t) => Some(t),
            Err(e) => {
                let rel = self.rel(path).to_path_buf();
                self.report.error(rel, None, format!("cannot read: {e}"));
                None
            }
        }
    }

    fn json<T: serde::de::DeserializeOwned>(
        &mut self,
        path: &Path,
        pick: fn(&Schemas) -> &FileSchema,
    ) -> Option<Parsed<T>> {
        let text = self.read(path)?;
        let rel = self.rel(path).to_path_buf();
        let (value, lines) = source::json::<T>(&rel, &text, pick(&self.schemas), &mut self.report)?;
        Some(Parsed { rel, lines, value })
    }

    fn run(&mut self, ruleset_dirs: &[PathBuf]) -> Option<Campaign> {
        if !crate::files::is_dir(&self.root) {
            self.report.error(
                &self.root,
                None,
                "not a folder; a campaign is a folder with a manifest.json",
            );
            return None;
        }
        let manifest_path = self.root.join("manifest.json");
        if !crate::files::is_file(&manifest_path) {
            self.report.error(
                "manifest.json",
                None,
                "missing: every campaign needs a manifest.json with at least `title` and `version`",
            );
            return None;
        }
        let manifest = self.json::<Manifest>(&manifest_path, |s| &s.manifest);
        let mut files = Vec::new();
        walk(&self.root, &mut files);
        files.sort();
        let ruleset = manifest
            .as_ref()
            .and_then(|m| self.ruleset(m, ruleset_dirs));

        let mut c = Collected::default();
        for path in &files {
            self.classify(path, &mut c);
        }
        let manifest = manifest?;
        let ruleset = ruleset?;
        self.assets(&files, &mut c);
        let packs = self.packs(&manifest, &c.pack_dirs);
        Some(self.assemble(manifest, ruleset, c, packs, files.len()))
    }

    fn ruleset(&mut self, manifest: &Parsed<Manifest>, dirs: &[PathBuf]) -> Option<Ruleset> {
        let name = manifest
            .value
            .ruleset
            .clone()
            .unwrap_or_else(|| DEFAULT_RULESET.to_owned());
        let line = manifest.line("/ruleset");
        let result = if name.starts_with("./") || name.contains('/') {
            Ruleset::load(&self.root.join(&name))
        } else {
            Ruleset::find(&name, dirs)
        };
        match result {
            Ok(r) => Some(r),
            Err(e) => {
                let message = match &e {
                    RulesetError::NotFound { .. } => format!(
                        "{e}; name a system ruleset ({}) or the campaign's own (`./ruleset`, a folder with ruleset.json)",
                        system_ruleset_ids(dirs).join(", ")
                    ),
                    _ => format!("ruleset `{name}`: {e}"),
                };
                self.report.error(&manifest.rel, line, message);
                None
            }
        }
    }

    /// Sort one file into its part of the campaign.
    fn classify(&mut self, path: &Path, c: &mut Collected) {
        let rel = self.rel(path).to_path_buf();
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_lowercase();
        let name = parts.last().copied().unwrap_or("");
        match parts.as_slice() {
            ["packs", id, "pack.yaml"] => {
                c.pack_dirs.push(((*id).to_owned(), path.to_path_buf()));
            }
            // The manifest is read first; packs and the campaign's own ruleset are read on their own.
            ["manifest.json"] | ["packs", ..] | ["ruleset", "ruleset.json" | "rulebook.md"] => {}
            ["README.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert("readme".into(), t);
                }
            }
            ["world", "setting.md" | "rules.md" | "constraints.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert(name.trim_end_matches(".md").into(), t);
                }
            }
            // Enrichment's files (seed 002 §6.2.12): used only where no human-authored one exists.
            [
                "world",
                "setting_generated.md" | "rules_generated.md" | "constraints_generated.md",
            ] => {
                let role = name.trim_end_matches("_generated.md");
                if crate::files::is_file(&self.root.join("world").join(format!("{role}.md"))) {
                    self.report.notices.push(format!(
                        "{}: a human-authored world/{role}.md exists; the generated one is ignored",
                        rel.display()
                    ));
                } else if let Some(t) = self.markdown(path) {
                    c.prose.insert(role.into(), t);
                }
            }
            ["characters", "npcs", id, "profile_generated.json"] => {
                if crate::files::is_file(&path.with_file_name("profile.json")) {
                    self.report.notices.push(format!(
                        "{}: a human-authored profile.json exists; the generated one is ignored",
                        rel.display()
                    ));
                } else if let Some(p) = self.json::<NpcProfile>(path, |s| &s.npc) {
                    check_id(&mut self.report, &p.rel, id);
                    self.json_provenance(&p.rel, p.value.generated, p.value.provenance.as_ref());
                    c.npcs.insert((*id).to_owned(), p);
                }
            }
            ["plot", "beats_generated.json"] => {
                if crate::files::is_file(&path.with_file_name("beats.json")) {
                    self.report.notices.push(format!(
                        "{}: a human-authored plot/beats.json exists; the generated one is ignored",
                        rel.display()
                    ));
                } else {
                    c.beats = self.json(path, |s| &s.beats);
                    if let Some(b) = &c.beats {
                        let (rel, generated, provenance) =
                            (b.rel.clone(), b.value.generated, b.value.provenance.clone());
                        self.json_provenance(&rel, generated, provenance.as_ref());
                    }
                }
            }
            ["world", "state.json"] => c.world = self.json(path, |s| &s.world),
            ["characters", "npcs", id, "profile.json"] => {
                if let Some(p) = self.json::<NpcProfile>(path, |s| &s.npc) {
                    check_id(&mut self.report, &p.rel, id);
                    c.npcs.insert((*id).to_owned(), p);
                }
            }
            ["characters", "npcs", id, "secrets.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.secrets.insert((*id).to_owned(), t);
                }
            }
            ["characters", "npcs", _, _] if IMAGE.contains(&ext.as_str()) => {}
            ["characters", "player", "template.json"] => {
                c.player = self.json(path, |s| &s.player);
            }
            ["plot", "premise.md"] => {
                if let Some(t) = self.markdown(path) {
                    c.prose.insert("premise".into(), t);
                }
            }
            ["plot", "beats.json"] => c.beats = self.json(path, |s| &s.beats),
            ["plot", "endings", file] if ext == "md" => {
                if let Some(t) = self.markdown(path) {
                    c.endings.insert(file.trim_end_matches(".md").to_owned(), t);
                }
            }
            ["scenarios", _] if ext == "json" => {
                if let Some(s) = self.json::<Scenario>(path, |s| &s.scenario) {
                    c.scenarios.push(s);
                }
            }
            ["lore", .., _] if ext == "md" || ext == "txt" => {
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
            }
            _ if name.ends_with(".keywords.txt") || name.ends_with(".meta.json") => {}
            _ => self.report.warning(
                &rel,
                None,
                "not part of the campaign format (seed 002 §6.2.2); ignored",
            ),
        }
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

    fn assets(&mut self, files: &[PathBuf], c: &mut Collected) {
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

    fn packs(&mut self, manifest: &Parsed<Manifest>, dirs: &[(String, PathBuf)]) -> Vec<Pack> {
        let mut packs = Vec::new();
        let mut depends_line = BTreeMap::new();
        for (folder, yaml_path) in dirs {
            let Some(text) = self.read(yaml_path) else {
                continue;
            };
            let rel = self.rel(yaml_path).to_path_buf();
            let key_line = |key: &str| {
                text.lines()
                    .position(|l| l.starts_with(&format!("{key}:")))
                    .map(|i| i + 1)
            };
            depends_line.insert(folder.clone(), key_line("depends_on"));
            let Some(pm) =
                source::yaml::<PackManifest>(&rel, &text, 1, &self.schemas.pack, &mut self.report)
            else {
                continue;
            };
            if &pm.id != folder {
                self.report.error(
                    &rel,
                    key_line("id"),
                    format!("pack id `{}` differs from its folder `{folder}`", pm.id),
                );
                continue;
            }
            let dir = yaml_path.parent().unwrap_or(&self.root).to_path_buf();
            let mut files = Vec::new();
            walk(&dir, &mut files);
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
                let id = format!("{}:{}", pm.id, meta.id);
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
            packs.push(Pack {
                manifest: pm,
                entries,
            });
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

    fn assemble(
        &mut self,
        manifest: Parsed<Manifest>,
        ruleset: Ruleset,
        c: Collected,
        packs: Vec<Pack>,
        file_count: usize,
    ) -> Campaign {
        let stat_validator = jsonschema::validator_for(&ruleset.character_stat_schema).ok();
        let scene_validator = jsonschema::validator_for(&ruleset.scene_state_schema).ok();
        let asset_paths: BTreeSet<PathBuf> = c.assets.iter().map(|a| a.path.clone()).collect();
        let mut world = WorldState::default();
        let mut characters = BTreeMap::new();

        // The player.
        let mut player_stats = None;
        if let Some(p) = &c.player
            && let Some(stats) = &p.value.stats
        {
            check_stats(
                &mut self.report,
                stat_validator.as_ref(),
                &p.rel,
                p.line("/stats"),
                &ruleset.id,
                stats,
            );
            player_stats = Some(stats.clone());
        }
        characters.insert(
            PLAYER.to_owned(),
            Character {
                id: PLAYER.into(),
                name: c
                    .player
                    .as_ref()
                    .and_then(|p| p.value.name.clone())
                    .unwrap_or_else(|| "You".into()),
                kind: CharacterKind::Player,
                origin: Origin::Campaign,
                profile: None,
                secrets: None,
                description: c
                    .player
                    .as_ref()
                    .and_then(|p| p.value.description.clone())
                    .unwrap_or_default(),
                portrait: None,
                chattiness: 1.0,
                baked: true,
            },
        );
        world.characters.insert(
            PLAYER.into(),
            CharacterState {
                stats: player_stats.unwrap_or_default(),
                tags: BTreeSet::default(),
            },
        );

        // Campaign NPCs.
        for (id, p) in &c.npcs {
            let profile = &p.value;
            if let Some(stats) = &profile.stats {
                check_stats(
                    &mut self.report,
                    stat_validator.as_ref(),
                    &p.rel,
                    p.line("/stats"),
                    &ruleset.id,
                    stats,
                );
            }
            let portrait = profile.portrait.as_ref().map(PathBuf::from);
            if let Some(portrait) = &portrait
                && !asset_paths.contains(portrait)
            {
                self.report.warning(
                    &p.rel,
                    p.line("/portrait"),
                    format!(
                        "portrait `{}` does not exist (orphaned reference)",
                        portrait.display()
                    ),
                );
            }
            if profile
                .secrets
                .as_deref()
                .is_some_and(|s| s.contains("secrets.md"))
                && !c.secrets.contains_key(id)
            {
                self.report.warning(
                    &p.rel,
                    p.line("/secrets"),
                    format!(
                        "points to secrets.md, but characters/npcs/{id}/secrets.md does not exist"
                    ),
                );
            }
            characters.insert(
                id.clone(),
                Character {
                    id: id.clone(),
                    name: profile.name.clone(),
                    kind: CharacterKind::Npc,
                    origin: Origin::Campaign,
                    profile: Some(profile.clone()),
                    secrets: c.secrets.get(id).cloned(),
                    description: profile.appearance.clone().unwrap_or_default(),
                    portrait,
                    chattiness: profile.chattiness,
                    baked: profile.baked,
                },
            );
            world.characters.insert(
                id.clone(),
                CharacterState {
                    stats: profile.stats.clone().unwrap_or_default(),
                    tags: profile
                        .metadata
                        .as_ref()
                        .map(|m| m.tags.iter().cloned().collect())
                        .unwrap_or_default(),
                },
            );
        }
        for id in c.secrets.keys() {
            if !c.npcs.contains_key(id) {
                self.report.warning(
                    PathBuf::from("characters/npcs").join(id).join("secrets.md"),
                    None,
                    format!("secrets for `{id}`, who has no profile.json"),
                );
            }
        }

        // Pack entries become entities, namespaced.
        let mut locations = BTreeMap::new();
        let mut items = BTreeMap::new();
        let mut factions = BTreeMap::new();
        for pack in &packs {
            for entry in &pack.entries {
                let entity = Entity {
                    id: entry.id.clone(),
                    name: entry.name(),
                    description: first_paragraph(&entry.body),
                    tags: entry.meta.tags.clone(),
                };
                match entry.meta.kind {
                    super::EntryKind::Location => {
                        locations.insert(entry.id.clone(), entity);
                    }
                    super::EntryKind::Item => {
                        items.insert(entry.id.clone(), entity);
                    }
                    super::EntryKind::Faction => {
                        factions.insert(entry.id.clone(), entity);
                    }
                    super::EntryKind::Npc => {
                        characters.insert(
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
                        world
                            .characters
                            .insert(entry.id.clone(), CharacterState::default());
                    }
                    _ => {}
                }
            }
        }
        let pack_ids: BTreeSet<String> = packs
            .iter()
            .flat_map(|p| p.entries.iter().map(|e| e.id.clone()))
            .collect();
        for pack in &packs {
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

        // World state.
        if let Some(w) = &c.world {
            let mut seen = BTreeSet::new();
            for (list, kind, target) in [
                (&w.value.locations, "locations", &mut locations),
                (&w.value.items, "items", &mut items),
                (&w.value.factions, "factions", &mut factions),
            ] {
                for (i, e) in list.iter().enumerate() {
                    if !seen.insert(e.id.clone()) {
                        self.report.error(
                            &w.rel,
                            w.line(&format!("/{kind}/{i}/id")),
                            format!("duplicate id `{}`", e.id),
                        );
                    }
                    target.insert(e.id.clone(), e.clone());
                }
            }
            for (i, clock) in w.value.clocks.iter().enumerate() {
                let line = w.line(&format!("/clocks/{i}"));
                if clock.max < 1 || !(0..=clock.max).contains(&clock.value) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!(
                            "clock `{}` is at {} of {}; a clock runs from 0 to a max of at least 1",
                            clock.id, clock.value, clock.max
                        ),
                    );
                }
                for at in clock.triggers.keys() {
                    if !at
                        .parse::<i64>()
                        .is_ok_and(|v| (1..=clock.max).contains(&v))
                    {
                        self.report.error(
                            &w.rel,
                            line,
                            format!(
                                "clock `{}` has a trigger at `{at}`; triggers are at values 1..={}",
                                clock.id, clock.max
                            ),
                        );
                    }
                }
                if world
                    .clocks
                    .insert(clock.id.clone(), clock.clone())
                    .is_some()
                {
                    self.report
                        .error(&w.rel, line, format!("duplicate clock `{}`", clock.id));
                }
            }
            let (lo, hi) = ruleset.mechanics_guidance.relation_range.unwrap_or((0, 10));
            for (i, r) in w.value.relationships.iter().enumerate() {
                let line = w.line(&format!("/relationships/{i}"));
                for id in [&r.a, &r.b] {
                    if !characters.contains_key(id) {
                        self.report.error(
                            &w.rel,
                            line,
                            format!("relationship names `{id}`, who is not a character"),
                        );
                    }
                }
                for (axis, v) in [
                    ("trust", r.trust),
                    ("tension", r.tension),
                    ("closeness", r.closeness),
                ] {
                    if !(lo..=hi).contains(&v) {
                        self.report.error(
                            &w.rel,
                            line,
                            format!(
                                "{axis} {v} between `{}` and `{}` is outside {lo}..={hi}",
                                r.a, r.b
                            ),
                        );
                    }
                }
                world.relations.push(r.clone());
            }
            for (i, h) in w.value.inventory.iter().enumerate() {
                let line = w.line(&format!("/inventory/{i}"));
                if !characters.contains_key(&h.owner) && !locations.contains_key(&h.owner) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!(
                            "inventory owner `{}` is neither a character nor a location",
                            h.owner
                        ),
                    );
                }
                if !items.contains_key(&h.item) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!("inventory item `{}` is not among the items", h.item),
                    );
                }
                *world
                    .inventory
                    .entry(h.owner.clone())
                    .or_default()
                    .entry(h.item.clone())
                    .or_default() += h.qty;
            }
            world.facts.clone_from(&w.value.facts);
            for t in &w.value.threads {
                world.threads.insert(t.id.clone(), t.clone());
            }
        }

        // Beats.
        let mut beats = Vec::new();
        if let Some(b) = &c.beats {
            let ids: BTreeSet<&str> = b.value.beats.iter().map(|b| b.id.as_str()).collect();
            let mut seen = BTreeSet::new();
            for (i, beat) in b.value.beats.iter().enumerate() {
                let at = |field: &str| b.line(&format!("/beats/{i}/{field}"));
                if !seen.insert(beat.id.as_str()) {
                    self.report
                        .error(&b.rel, at("id"), format!("duplicate beat id `{}`", beat.id));
                }
                let cond = &beat.conditions;
                let mut wanted: Vec<(&str, &String)> = Vec::new();
                if let Some(r) = &cond.requires_beat {
                    wanted.push(("conditions/requires_beat", r));
                }
                wanted.extend(
                    cond.requires_any_beat
                        .iter()
                        .map(|r| ("conditions/requires_any_beat", r)),
                );
                if let Some(t) = &beat.timeout
                    && let Some(f) = &t.fallback_beat
                {
                    wanted.push(("timeout/fallback_beat", f));
                }
                wanted.extend(
                    beat.outcomes
                        .iter()
                        .filter_map(|o| o.next_beat.as_ref())
                        .map(|n| ("outcomes", n)),
                );
                for (field, target) in wanted {
                    if target == &beat.id {
                        self.report.error(
                            &b.rel,
                            at(field),
                            format!("beat `{}` requires itself", beat.id),
                        );
                    } else if !ids.contains(target.as_str()) {
                        self.report.error(
                            &b.rel,
                            at(field),
                            format!(
                                "beat `{}` refers to beat `{target}`, which does not exist",
                                beat.id
                            ),
                        );
                    }
                }
                if let Some(w) = &cond.scene_count
                    && let (Some(lo), Some(hi)) = (w.min, w.max)
                    && lo > hi
                {
                    self.report.error(
                        &b.rel,
                        at("conditions/scene_count"),
                        format!("scene_count min {lo} is above max {hi}"),
                    );
                }
                for npc in cond.npc_state.keys() {
                    if !characters.contains_key(npc) {
                        self.report.error(
                            &b.rel,
                            at("conditions/npc_state"),
                            format!("npc_state names `{npc}`, who is not a character"),
                        );
                    }
                }
                let total: f64 = beat.outcomes.iter().map(|o| o.probability).sum();
                if !beat.outcomes.is_empty() && (total - 1.0).abs() > 0.01 {
                    self.report.warning(
                        &b.rel,
                        at("outcomes"),
                        format!(
                            "outcome probabilities of `{}` add up to {total:.2}, not 1",
                            beat.id
                        ),
                    );
                }
                if let Some(music) = &beat.music
                    && !asset_paths.contains(Path::new(music))
                {
                    self.report.warning(
                        &b.rel,
                        at("music"),
                        format!("music `{music}` does not exist (orphaned reference)"),
                    );
                }
            }
            beats.clone_from(&b.value.beats);
        }

        // Scenarios.
        let mut scenarios = BTreeMap::new();
        for s in &c.scenarios {
            let sc = &s.value;
            let expected = s.rel.file_stem().and_then(|n| n.to_str()).unwrap_or("");
            if sc.id != expected {
                self.report.error(
                    &s.rel,
                    s.line("/id"),
                    format!(
                        "scenario id `{}` differs from its file name `{expected}`",
                        sc.id
                    ),
                );
            }
            if let Some(r) = &sc.ruleset_id
                && r != &ruleset.id
            {
                self.report.error(
                    &s.rel,
                    s.line("/ruleset_id"),
                    format!(
                        "scenario plays by `{r}`, but the campaign's ruleset is `{}`",
                        ruleset.id
                    ),
                );
            }
            for (i, id) in sc.character_ids.iter().enumerate() {
                if !characters.contains_key(id) {
                    self.report.error(
                        &s.rel,
                        s.line(&format!("/character_ids/{i}")),
                        format!(
                            "`{id}` is not a character of the campaign ({})",
                            known(characters.keys())
                        ),
                    );
                }
            }
            for who in sc.goals.keys() {
                if who != "user" && !sc.character_ids.contains(who) {
                    self.report.warning(
                        &s.rel,
                        s.line(&format!("/goals/{who}")),
                        format!("a goal for `{who}`, who is not in character_ids"),
                    );
                }
            }
            if let Some(loc) = &sc.location
                && !locations.contains_key(loc)
            {
                self.report.error(
                    &s.rel,
                    s.line("/location"),
                    format!("location `{loc}` is not defined (world/state.json or a pack)"),
                );
            }
            if let Some(v) = &scene_validator {
                let seed = Value::Object(sc.scene_seed.clone());
                for e in v.iter_errors(&seed) {
                    let ptr = e.instance_path().to_string();
                    self.report.error(
                        &s.rel,
                        s.line(&format!("/scene_seed{ptr}")),
                        format!(
                            "scene_seed does not fit ruleset `{}`'s scene_state_schema: {}{e}",
                            ruleset.id,
                            field_of(&ptr)
                        ),
                    );
                }
            }
            scenarios.insert(sc.id.clone(), sc.clone());
        }
        if let Some(id) = &manifest.value.default_scenario
            && !scenarios.contains_key(id)
        {
            self.report.error(
                &manifest.rel,
                manifest.line("/default_scenario"),
                format!("default_scenario `{id}` has no scenarios/{id}.json"),
            );
        }
        if let Some(cover) = &manifest.value.cover
            && !asset_paths.contains(Path::new(cover))
        {
            self.report.warning(
                &manifest.rel,
                manifest.line("/cover"),
                format!("cover `{cover}` does not exist (orphaned reference)"),
            );
        }
        // Standing (seed 002 §4.1.4, §4.2.3): factions named must exist, regards stay in range.
        let standing = c
            .world
            .as_ref()
            .and_then(|w| w.value.standing.clone())
            .unwrap_or_default();
        if let Some(w) = &c.world {
            for f in standing.reputation.keys() {
                if !factions.contains_key(f) {
                    self.report.error(
                        &w.rel,
                        w.line("/standing/reputation"),
                        format!(
                            "standing names faction `{f}`, which world/state.json does not define"
                        ),
                    );
                }
            }
            for (f, v) in &standing.reputation {
                if !(-100..=100).contains(v) {
                    self.report.error(
                        &w.rel,
                        w.line("/standing/reputation"),
                        format!("reputation {v} with `{f}` is outside -100..=100"),
                    );
                }
            }
        }
        for ch in characters.values() {
            let Some(p) = &ch.profile else { continue };
            let rel = format!("characters/npcs/{}/profile.json", ch.id);
            for f in &p.factions {
                if !factions.contains_key(f) {
                    self.report.warning(
                        &rel,
                        None,
                        format!(
                            "`{}` belongs to faction `{f}`, which no file defines",
                            ch.id
                        ),
                    );
                }
            }
            for (what, v) in &p.regards {
                if !(-100..=100).contains(v) {
                    self.report.error(
                        &rel,
                        None,
                        format!("`{}` regards `{what}` at {v}, outside -100..=100", ch.id),
                    );
                }
            }
        }
        // The scene starts from the default scenario's seed.
        if let Some(sc) = manifest
            .value
            .default_scenario
            .as_ref()
            .and_then(|id| scenarios.get(id))
            .or_else(|| scenarios.values().next())
        {
            world.scene.clone_from(&sc.scene_seed);
        }

        Campaign {
            root: self.root.clone(),
            manifest: manifest.value,
            ruleset,
            prose: c.prose,
            endings: c.endings,
            characters,
            player: c.player.map(|p| p.value),
            beats,
            scenarios,
            locations,
            items,
            factions,
            world,
            standing,
            lore: c.lore,
            packs,
            assets: c.assets,
            content_files: file_count.saturating_sub(
                usize::from(crate::files::is_file(&self.root.join("manifest.json")))
                    + usize::from(crate::files::is_file(&self.root.join("README.md"))),
            ),
        }
    }
}

#[derive(Default)]
struct Collected {
    prose: BTreeMap<String, String>,
    endings: BTreeMap<String, String>,
    world: Option<Parsed<WorldFile>>,
    npcs: BTreeMap<String, Parsed<NpcProfile>>,
    secrets: BTreeMap<String, String>,
    player: Option<Parsed<PlayerTemplate>>,
    beats: Option<Parsed<BeatsFile>>,
    scenarios: Vec<Parsed<Scenario>>,
    lore: Vec<Document>,
    pack_dirs: Vec<(String, PathBuf)>,
    assets: Vec<Asset>,
}

/// Seed 002 §6.2.11, with its exact messages.
fn provenance(report: &mut Report, rel: &Path, line: Option<usize>, meta: &AssetMeta) {
    match (meta.generated, &meta.provenance) {
        (true, None) => report.error(rel, line, MISSING_PROVENANCE),
        (true, Some(p)) => {
            let has = |k: &str| {
                p.get(k)
                    .is_some_and(|v| v.as_str().is_some_and(|s| !s.trim().is_empty()))
            };
            if !(has("source_model") && has("generated_at") && has("seed_data")) {
                report.error(rel, line, MISSING_PROVENANCE);
            } else if let Some(at) = p.get("generated_at").and_then(Value::as_str)
                && !is_iso8601(at)
            {
                report.error(
                    rel,
                    line,
                    format!("provenance.generated_at `{at}` is not an ISO 8601 datetime (e.g. 2026-02-03T11:00:00Z)"),
                );
            }
        }
        (false, Some(_)) => report.error(rel, line, HUMAN_WITH_PROVENANCE),
        (false, None) => {}
    }
}

/// Seed 002 §6.2.11's message for a generated asset without full provenance.
pub const MISSING_PROVENANCE: &str = "Generated asset missing provenance (generated=true requires provenance.source_model, provenance.generated_at, provenance.seed_data)";
/// Seed 002 §6.2.11's message for a human asset with provenance.
pub const HUMAN_WITH_PROVENANCE: &str = "Human-created asset must not contain provenance (generated=false conflicts with provenance object)";

/// RFC 3339 / ISO 8601 date-time (`2026-02-03T11:00:00Z`, with optional fraction and offset), checked with jsonschema's `date-time` format.
fn is_iso8601(text: &str) -> bool {
    static CHECK: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    CHECK
        .get_or_init(|| {
            jsonschema::options()
                .should_validate_formats(true)
                .build(&serde_json::json!({"type": "string", "format": "date-time"}))
                .expect("a fixed schema compiles")
        })
        .is_valid(&Value::String(text.to_owned()))
}

fn check_stats(
    report: &mut Report,
    validator: Option<&jsonschema::Validator>,
    rel: &Path,
    line: Option<usize>,
    ruleset: &str,
    stats: &serde_json::Map<String, Value>,
) {
    let Some(v) = validator else {
        return;
    };
    let value = Value::Object(stats.clone());
    for e in v.iter_errors(&value) {
        let ptr = e.instance_path().to_string();
        report.error(
            rel,
            line,
            format!(
                "stats {} do not fit ruleset `{ruleset}`'s character_stat_schema: {}{e}",
                super::brief(&value),
                field_of(&ptr)
            ),
        );
    }
}

fn field_of(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!("`{}`: ", pointer.trim_start_matches('/').replace('/', "."))
    }
}

fn check_id(report: &mut Report, rel: &Path, id: &str) {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !ok || id == PLAYER {
        report.error(
            rel,
            None,
            format!("NPC folder `{id}` is not a usable id: lowercase letters, digits, `_` and `-`, and not `player`"),
        );
    }
}

fn known<'a>(ids: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = ids.map(String::as_str).collect();
    format!("known: {}", all.join(", "))
}

fn first_paragraph(body: &str) -> String {
    body.split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with('#'))
        .unwrap_or("")
        .to_owned()
}

fn system_ruleset_ids(dirs: &[PathBuf]) -> Vec<String> {
    let mut ids: Vec<String> = dirs
        .iter()
        .flat_map(|d| crate::files::list(d))
        .filter(|p| crate::files::is_file(&p.join(crate::rules::ruleset::RULESET_FILE)))
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
        .collect();
    ids.sort();
    ids
}

/// Every file under `dir`, skipping hidden ones.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for path in crate::files::list(dir) {
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        if crate::files::is_dir(&path) {
            walk(&path, out);
        } else {
            out.push(path);
        }
    }
}
