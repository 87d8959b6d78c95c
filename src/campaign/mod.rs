//! Campaigns: load a campaign folder into a plain-Rust model, validating every file.
//!
//! The formats are seed 002 §6.2's, seed 003's and seed 001's content packs.
//! Only `manifest.json` is required. Structured files are checked against the
//! schemas generated from [`format`] (`schemas/campaign/`), then against each
//! other and the campaign's ruleset: stat blocks against its
//! `character_stat_schema`, scene seeds against its `scene_state_schema`,
//! references between beats, scenarios, characters, places and packs. Every
//! problem names its file and, for JSON and YAML, its line; missing referenced
//! assets are warnings. The session (#6) turns a [`Campaign`] into entities.

// These modules read what others wrote (files, saves, model and skill
// output): no unwrap, expect or indexing that could panic on it (#44); an
// invariant that truly holds says so with `#[expect(.., reason)]`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

pub mod enrich;
pub mod format;
mod load;
pub mod report;
pub mod source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use format::{
    AssetMeta, Beat, ClosedWhen, DEFAULT_ROUTE_MINUTES, Entity, EntryKind, Frontmatter, Manifest,
    NpcProfile, PackManifest, PlayerTemplate, Priority, Route, Scenario, WorldFile,
};
pub use load::{PLAYER, load, validate};
pub use report::{Finding, Report, Severity};

use crate::rules::{Ruleset, WorldState};

/// Where system rulesets live: `campaigns/rulesets/`.
pub fn system_rulesets() -> PathBuf {
    crate::files::resource_dir("campaigns").join("rulesets")
}

/// A campaign, loaded and checked.
#[derive(Clone, Debug)]
pub struct Campaign {
    pub root: PathBuf,
    pub manifest: Manifest,
    pub ruleset: Ruleset,
    /// Markdown prose by role: setting, rules, constraints, premise, readme.
    pub prose: BTreeMap<String, String>,
    /// `plot/endings/<name>.md`, by name.
    pub endings: BTreeMap<String, String>,
    /// The player template and every NPC (campaign and pack), by id.
    pub characters: BTreeMap<String, Character>,
    pub player: Option<PlayerTemplate>,
    pub beats: Vec<Beat>,
    pub scenarios: BTreeMap<String, Scenario>,
    pub locations: BTreeMap<String, Entity>,
    pub items: BTreeMap<String, Entity>,
    pub factions: BTreeMap<String, Entity>,
    /// The ways between places (`world/state.json` → `routes`; empty: every place is one step away).
    pub routes: Vec<Route>,
    /// The starting state: stat blocks, clocks, relations, inventory, facts, threads.
    pub world: WorldState,
    /// How reputation and perception start, move and fade (`world/state.json` → `standing`).
    pub standing: crate::rules::standing::StandingConfig,
    /// Lore documents (`lore/**`), for the memory index (#7).
    pub lore: Vec<Document>,
    pub packs: Vec<Pack>,
    pub assets: Vec<Asset>,
    /// Files other than `manifest.json` and `README.md` (fewer than 3 means sparse: seed 002 §6.2.12).
    pub content_files: usize,
    /// Every word the campaign's authored text uses, once asked for ([`Campaign::words`]).
    pub words: std::sync::OnceLock<std::collections::BTreeSet<String>>,
}

/// Lowercase ASCII words joined by `_`: how names become campaign ids.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_owned()
}

impl Campaign {
    /// Every word (lower case, without a possessive) of the campaign's
    /// authored text: its prose, endings, people (profiles and secrets),
    /// places, items, factions, beats, scenarios, starting world (clocks'
    /// triggers, threads, facts), lore and packs. What a model writes that
    /// none of it has, it made up.
    pub fn words(&self) -> &std::collections::BTreeSet<String> {
        self.words.get_or_init(|| {
            fn json<T: serde::Serialize>(v: &T) -> String {
                serde_json::to_string(v).unwrap_or_default()
            }
            let mut texts: Vec<String> = self
                .prose
                .values()
                .chain(self.endings.values())
                .chain(self.lore.iter().map(|d| &d.text))
                .cloned()
                .collect();
            for c in self.characters.values() {
                texts.extend([c.name.clone(), c.description.clone()]);
                texts.extend(c.secrets.clone());
                texts.extend(c.profile.as_ref().map(json));
            }
            for e in self
                .locations
                .values()
                .chain(self.items.values())
                .chain(self.factions.values())
            {
                texts.extend([e.name.clone(), e.description.clone()]);
            }
            texts.extend(self.beats.iter().map(json));
            texts.extend(self.scenarios.values().map(json));
            texts.push(json(&self.world));
            texts.extend(
                self.packs
                    .iter()
                    .flat_map(|p| p.entries.iter().map(|e| e.body.clone())),
            );
            texts
                .iter()
                .flat_map(|t| {
                    t.split(|c: char| !c.is_alphabetic() && c != '\'' && c != '\u{2019}')
                        .map(|w| {
                            w.trim_matches(['\'', '\u{2019}'])
                                .trim_end_matches("'s")
                                .trim_end_matches("\u{2019}s")
                                .to_lowercase()
                        })
                        .filter(|w| !w.is_empty())
                        .collect::<Vec<_>>()
                })
                .collect()
        })
    }

    /// Seed 002 §6.2.12: fewer than 3 content files call for enrichment.
    pub fn is_sparse(&self) -> bool {
        self.content_files < 3
    }

    /// The scenario a new session starts with: the manifest's default, else the first.
    pub fn default_scenario(&self) -> Option<&Scenario> {
        self.manifest
            .default_scenario
            .as_deref()
            .and_then(|id| self.scenarios.get(id))
            .or_else(|| self.scenarios.values().next())
    }

    /// Assets marked `generated: true`.
    pub fn generated_assets(&self) -> usize {
        self.assets.iter().filter(|a| a.meta.generated).count()
            + self.lore.iter().filter(|d| d.generated).count()
    }

    /// One line for the terminal.
    pub fn summary(&self) -> String {
        let npcs = self
            .characters
            .values()
            .filter(|c| c.kind == CharacterKind::Npc)
            .count();
        let entries: usize = self.packs.iter().map(|p| p.entries.len()).sum();
        format!(
            "{} {}: ruleset {}, {} NPC{}, {} beat{}, {} scenario{}, {} lore file{}, {} pack{} ({} entries), {} asset{}",
            self.manifest.title,
            self.manifest.version,
            self.ruleset.id,
            npcs,
            plural(npcs),
            self.beats.len(),
            plural(self.beats.len()),
            self.scenarios.len(),
            plural(self.scenarios.len()),
            self.lore.len(),
            plural(self.lore.len()),
            self.packs.len(),
            plural(self.packs.len()),
            entries,
            self.assets.len(),
            plural(self.assets.len()),
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Player character or NPC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharacterKind {
    Player,
    Npc,
}

/// Where an entity came from (seed 001: `origin`, `pack_entity_id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Campaign,
    Pack(String),
}

/// A character of the campaign.
#[derive(Clone, Debug)]
pub struct Character {
    pub id: String,
    pub name: String,
    pub kind: CharacterKind,
    pub origin: Origin,
    /// The NPC profile (campaign NPCs) or `None` (player, pack NPCs).
    pub profile: Option<NpcProfile>,
    /// `secrets.md`, or a pack entry's prose.
    pub secrets: Option<String>,
    pub description: String,
    pub portrait: Option<PathBuf>,
    pub chattiness: f64,
    pub baked: bool,
}

/// A markdown document of the campaign or a pack.
#[derive(Clone, Debug)]
pub struct Document {
    /// Relative to the campaign.
    pub path: PathBuf,
    pub text: String,
    pub keywords: Vec<String>,
    pub generated: bool,
}

/// A content pack loaded into the campaign.
#[derive(Clone, Debug)]
pub struct Pack {
    pub manifest: PackManifest,
    pub entries: Vec<PackEntry>,
}

/// One markdown file of a pack.
#[derive(Clone, Debug)]
pub struct PackEntry {
    /// `pack_id:entry_id`.
    pub id: String,
    pub path: PathBuf,
    pub meta: Frontmatter,
    pub body: String,
}

impl PackEntry {
    /// The display name: frontmatter `name`, else the first `# ` heading, else the id.
    pub fn name(&self) -> String {
        self.meta
            .name
            .clone()
            .or_else(|| {
                self.body
                    .lines()
                    .find_map(|l| l.strip_prefix("# ").map(|t| t.trim().to_owned()))
            })
            .unwrap_or_else(|| self.meta.id.clone())
    }
}

/// Image or audio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssetKind {
    Image,
    Audio,
}

/// An image or audio file with its metadata and keywords.
#[derive(Clone, Debug)]
pub struct Asset {
    pub path: PathBuf,
    pub kind: AssetKind,
    pub meta: AssetMeta,
    /// From a `.keywords.txt` sidecar when there is one, else from the file name.
    pub keywords: Vec<String>,
    pub keywords_from_sidecar: bool,
}

/// Keywords from a file name: `art/characters/npc_wizard.png` → `npc`, `wizard`, `characters`.
pub fn keywords_from_name(path: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|s| s.to_str())
        .unwrap_or("");
    for word in stem
        .split(|c: char| !c.is_alphanumeric())
        .chain(std::iter::once(parent))
    {
        let word = word.to_lowercase();
        if word.len() > 1 && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// Keywords from a sidecar: one per line, `#` starts a comment.
pub fn parse_keywords(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A value's JSON, for stat blocks in messages.
pub(crate) fn brief(value: &Value) -> String {
    let s = value.to_string();
    if s.len() > 60 {
        format!("{}…", &s[..s.floor_char_boundary(60)])
    } else {
        s
    }
}
