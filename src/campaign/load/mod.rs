//! Loading a campaign folder: classify every file, parse and check it, then assemble the campaign.
//!
//! The load runs in phases, each in its own room: [`classify`] sorts every
//! file into its part of the campaign and parses it against its schema,
//! [`assets`] reads media with their sidecars, [`packs`] the content packs;
//! then [`Loader::assemble`] checks the parts against each other and the
//! ruleset, phase by phase: [`people`] (the player, NPCs, standing),
//! [`packs`] (pack entries as entities), [`world`] (`world/state.json`),
//! [`beats`], [`scenarios`]. The checks every phase shares are in [`checks`].

mod assets;
mod beats;
mod checks;
mod classify;
mod packs;
mod people;
mod scenarios;
mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::format::{
    AssetMeta, Beat, BeatsFile, Entity, Frontmatter, Manifest, NpcProfile, PackManifest,
    PlayerTemplate, Route, Scenario, WorldFile,
};
use super::report::Report;
use super::source::{self, FileSchema, PointerLines};
use super::{Asset, Campaign, Character, Document, Pack};
use crate::rules::ruleset::DEFAULT_RULESET;
use crate::rules::standing::StandingConfig;
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
        match crate::files::read_to_string_within(path, FILE_CAP) {
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
        let mut files = walk(&self.root, &mut self.report);
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
            // The campaign's own ruleset stays inside the campaign folder.
            match crate::files::beneath(&self.root, &name) {
                Ok(dir) => Ruleset::load(&dir),
                Err(why) => {
                    self.report.error(
                        &manifest.rel,
                        line,
                        format!("ruleset `{name}`: {why}; a campaign's own ruleset is a folder inside it, such as `./ruleset`"),
                    );
                    return None;
                }
            }
        } else if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            self.report.error(
                &manifest.rel,
                line,
                format!("ruleset `{name}`: a system ruleset's id is letters, digits, `-` and `_` only ({})", checks::system_ruleset_ids(dirs).join(", ")),
            );
            return None;
        } else {
            Ruleset::find(&name, dirs)
        };
        match result {
            Ok(r) => Some(r),
            Err(e) => {
                let message = match &e {
                    RulesetError::NotFound { .. } => format!(
                        "{e}; name a system ruleset ({}) or the campaign's own (`./ruleset`, a folder with ruleset.json)",
                        checks::system_ruleset_ids(dirs).join(", ")
                    ),
                    _ => format!("ruleset `{name}`: {e}"),
                };
                self.report.error(&manifest.rel, line, message);
                None
            }
        }
    }

    /// Checks the parts against each other and the ruleset, phase by phase,
    /// and builds the campaign from them.
    fn assemble(
        &mut self,
        manifest: Parsed<Manifest>,
        ruleset: Ruleset,
        c: Collected,
        packs: Vec<Pack>,
        file_count: usize,
    ) -> Campaign {
        let against = Against::new(&ruleset, &c.assets);
        let mut a = Assembly::default();
        self.player(&c, &against, &mut a);
        self.npcs(&c, &against, &mut a);
        self.pack_entries(&packs, &mut a);
        self.world(&c, &against, &mut a);
        self.beats(&c, &against, &mut a);
        self.scenarios(&c, &against, &mut a);
        self.manifest_refs(&manifest, &against, &a);
        self.standing(&c, &mut a);
        a.open_scene(&manifest.value);

        Campaign {
            root: self.root.clone(),
            manifest: manifest.value,
            ruleset,
            prose: c.prose,
            endings: c.endings,
            characters: a.characters,
            player: c.player.map(|p| p.value),
            beats: a.beats,
            scenarios: a.scenarios,
            locations: a.locations,
            items: a.items,
            factions: a.factions,
            routes: a.routes,
            world: a.world,
            standing: a.standing,
            lore: c.lore,
            packs,
            assets: c.assets,
            content_files: file_count.saturating_sub(
                usize::from(crate::files::is_file(&self.root.join("manifest.json")))
                    + usize::from(crate::files::is_file(&self.root.join("README.md"))),
            ),
            words: std::sync::OnceLock::new(),
        }
    }

    /// The manifest's references: its default scenario exists, its cover too.
    fn manifest_refs(&mut self, manifest: &Parsed<Manifest>, against: &Against, a: &Assembly) {
        if let Some(id) = &manifest.value.default_scenario
            && !a.scenarios.contains_key(id)
        {
            self.report.error(
                &manifest.rel,
                manifest.line("/default_scenario"),
                format!("default_scenario `{id}` has no scenarios/{id}.json"),
            );
        }
        if let Some(cover) = &manifest.value.cover
            && !against.asset_paths.contains(Path::new(cover))
        {
            self.report.warning(
                &manifest.rel,
                manifest.line("/cover"),
                format!("cover `{cover}` does not exist (orphaned reference)"),
            );
        }
    }
}

/// The files of a campaign, sorted into its parts and parsed.
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

/// What the parts are checked against: the ruleset, its schemas compiled,
/// and the media the campaign has.
struct Against<'r> {
    ruleset: &'r Ruleset,
    stats: Option<jsonschema::Validator>,
    scene: Option<jsonschema::Validator>,
    asset_paths: BTreeSet<PathBuf>,
}

impl<'r> Against<'r> {
    fn new(ruleset: &'r Ruleset, assets: &[Asset]) -> Self {
        Self {
            ruleset,
            stats: jsonschema::validator_for(&ruleset.character_stat_schema).ok(),
            scene: jsonschema::validator_for(&ruleset.scene_state_schema).ok(),
            asset_paths: assets.iter().map(|a| a.path.clone()).collect(),
        }
    }
}

/// The campaign as the assembly phases build it.
#[derive(Default)]
struct Assembly {
    world: WorldState,
    /// The player template and every NPC (campaign and pack), by id.
    characters: BTreeMap<String, Character>,
    locations: BTreeMap<String, Entity>,
    items: BTreeMap<String, Entity>,
    factions: BTreeMap<String, Entity>,
    routes: Vec<Route>,
    beats: Vec<Beat>,
    scenarios: BTreeMap<String, Scenario>,
    standing: StandingConfig,
}

impl Assembly {
    /// The scene starts from the default scenario's seed (else the first scenario's).
    fn open_scene(&mut self, manifest: &Manifest) {
        if let Some(sc) = manifest
            .default_scenario
            .as_ref()
            .and_then(|id| self.scenarios.get(id))
            .or_else(|| self.scenarios.values().next())
        {
            self.world.scene.clone_from(&sc.scene_seed);
        }
    }
}

/// The most one campaign file may hold (the biggest real ones are a few hundred KiB).
pub const FILE_CAP: u64 = 8 << 20;

/// How deep the folder walk goes below the campaign folder.
const WALK_DEPTH: usize = 16;
/// How many files a campaign may hold (a real one holds dozens).
const WALK_FILES: usize = 10_000;

/// Every file under the campaign folder, skipping hidden ones. A folder is
/// entered once however many links lead to it (two `x -> .` links end there),
/// a link that leads out of the campaign is skipped with a warning, and the
/// walk stops at [`WALK_DEPTH`] folders deep and [`WALK_FILES`] files, saying so.
fn walk(root: &Path, report: &mut Report) -> Vec<PathBuf> {
    let real_root = crate::files::canonical(root);
    let mut seen = std::collections::HashSet::from([real_root.clone()]);
    let mut out = Vec::new();
    let mut folders = vec![(root.to_path_buf(), 0usize)];
    while let Some((dir, depth)) = folders.pop() {
        for path in crate::files::list(&dir) {
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                continue;
            }
            let target = crate::files::canonical(&path);
            if !target.starts_with(&real_root) {
                report.warning(
                    rel,
                    None,
                    "skipped: a link that leads out of the campaign folder",
                );
                continue;
            }
            if crate::files::is_dir(&path) {
                if !seen.insert(target) {
                    continue;
                }
                if depth + 1 > WALK_DEPTH {
                    report.warning(
                        rel,
                        None,
                        format!("skipped: folders more than {WALK_DEPTH} deep are not read"),
                    );
                    continue;
                }
                folders.push((path, depth + 1));
            } else if out.len() >= WALK_FILES {
                report.error(
                    rel,
                    None,
                    format!("the campaign holds more than {WALK_FILES} files; split it or remove what it does not use"),
                );
                return out;
            } else {
                out.push(path);
            }
        }
    }
    out
}
