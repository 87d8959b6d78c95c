//! Rulesets (seed 003): rulebook text, stat and scene schemas, and mechanics as data.
//!
//! The mechanics are checks, their bands and triggers; the schemas are JSON
//! Schemas of a character's stat block and of the scene state.
//!
//! A ruleset lives in a folder: `ruleset.json` (this model, the source of
//! `schemas/campaign/ruleset.schema.json`) and `rulebook.md` (the DM-style
//! rulebook text the model reads). System rulesets ship in `campaigns/rulesets/`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::dice::{DiceError, DiceExpr, Modifiers, Roll};
use super::op::{StateOp, schema_at};

/// The file holding a ruleset's data.
pub const RULESET_FILE: &str = "ruleset.json";

/// The most `ruleset.json` or `rulebook.md` may hold.
const RULESET_CAP: u64 = 8 << 20;
/// The file holding a ruleset's rulebook text, when `ruleset.json` has none inline.
pub const RULEBOOK_FILE: &str = "rulebook.md";

/// The term session zero's difficulty adds to a shifted check's expression.
pub const DIFFICULTY: &str = "difficulty";
/// The ruleset a campaign plays by when it names none (seed 002 §7.4, seed 001).
pub const DEFAULT_RULESET: &str = "default-2d6";

/// A ruleset as stored (seed 003 `rulesets` record).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ruleset {
    /// Stable id, lowercase with dashes (`everyday-tension`).
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9-]*$"))]
    pub id: String,
    pub name: String,
    /// DM-style rulebook text; when absent it is read from `rulebook.md` beside `ruleset.json`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rulebook_text: String,
    /// JSON Schema every character's stat block must satisfy.
    pub character_stat_schema: Value,
    /// JSON Schema every scene state (and scenario `scene_seed`) must satisfy.
    pub scene_state_schema: Value,
    /// How the mechanics run: checks, their bands, triggers, stat guides.
    #[serde(default)]
    pub mechanics_guidance: MechanicsGuidance,
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub schema_version: u32,
}

fn one() -> u32 {
    1
}

/// Seed 003 `mechanics_guidance`, made concrete.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct MechanicsGuidance {
    #[serde(default = "yes")]
    pub uses_dice: bool,
    /// Dice notations the rulebook uses (for the model), e.g. `NdM+K`.
    #[serde(default)]
    pub dice_formats: Vec<String>,
    /// When to roll at all, in a sentence.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub when_to_roll: String,
    /// The checks the rulebook defines; the first is the usual one.
    #[serde(default)]
    pub checks: Vec<Check>,
    /// What happens when a scene value reaches a threshold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<Trigger>,
    /// What each stat means: archetypes and consequences.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, StatGuide>,
    /// Bounds on relation axes (trust, tension, closeness); default 0–10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relation_range: Option<(i64, i64)>,
    /// In-game minutes a move takes when nothing is rolled and nobody travels (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub move_minutes: Option<i64>,
    /// Session zero's difficulty in the dice: a shift added to the player's
    /// checks, by difficulty name (default `gentle` +1, `standard` 0, `hard` −1).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub difficulty: BTreeMap<String, i64>,
    /// How far an NPC acting against the player may go, step by step (seed
    /// 001's escalation profile: soft → hard → lethal). Each action against
    /// the player moves that NPC one step on, never past the last step the
    /// scene's `danger_tier` allows. Empty: no profile.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escalation: Vec<EscalationStep>,
}

/// One step of an escalation profile.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EscalationStep {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_]*$"))]
    pub id: String,
    /// What an NPC at this step does, for the narrator ("threats, locked doors").
    pub means: String,
    /// The lowest danger tier at which an NPC may reach this step.
    #[serde(default)]
    pub from_tier: i64,
}

fn yes() -> bool {
    true
}

/// One kind of check: an expression and the bands its total falls into.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Check {
    #[schemars(regex(pattern = r"^[a-z0-9][a-z0-9_]*$"))]
    pub id: String,
    /// A dice expression; names in it are stats of the acting character, `bind`, or `modifiers`.
    pub expression: String,
    /// A name in the expression standing for "the stat this check is for" (`stat`, `aspect`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bind: Option<String>,
    /// Stats `bind` may stand for; empty means any stat of the stat schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bind_to: Vec<String>,
    /// Situational modifiers the caller may supply; absent ones count 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<ModifierSpec>,
    /// When this check applies, in a sentence.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub when: String,
    /// Result bands, tried in order; the first that matches wins.
    pub bands: Vec<Band>,
    /// In-game minutes an attempt takes, success or not (seed 001 costs: time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub minutes: Option<i64>,
    /// What an attempt costs whatever its outcome (seed 001: "apply costs …
    /// regardless of success, if attempt is made"): heat, harm, supplies, as ops.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cost: Vec<StateOp>,
}

/// A situational modifier (seed 002 §7.4: +1 skill, ±1 sentiment, +1 memory callback).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModifierSpec {
    pub name: String,
    pub min: i64,
    pub max: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// What a band's numbers are compared with.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Dice plus modifiers.
    #[default]
    Total,
    /// The dice alone (a "natural" result).
    Dice,
}

/// The engine's reading of a band, shared by every ruleset.
#[derive(
    Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Failure,
    Partial,
    Success,
    Critical,
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tier::Failure => "failure",
            Tier::Partial => "partial",
            Tier::Success => "success",
            Tier::Critical => "critical",
        })
    }
}

/// One result band: `min..=max` (either end open) on the total or the dice.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Band {
    /// The ruleset's own name for the outcome (`bold_success`, `override`).
    pub id: String,
    pub label: String,
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub on: Basis,
    /// What the narration should make of it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub meaning: String,
    /// State operations this outcome applies (a tick of the pressure clock).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<StateOp>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Band {
    pub fn matches(&self, roll: &Roll) -> bool {
        let value = match self.on {
            Basis::Total => roll.total,
            Basis::Dice => roll.dice_total,
        };
        self.min.is_none_or(|m| value >= m) && self.max.is_none_or(|m| value <= m)
    }
}

/// A threshold on a scene value and what happens there (Everyday Tension: pressure 6 shifts the scene).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    /// Scene state path.
    pub path: String,
    /// Fires when the value reaches this (>=).
    pub at: i64,
    pub effect: String,
    /// After firing, the value goes back to this (a failure streak to 0 once its consequence lands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_to: Option<i64>,
}

/// What a stat means (seed 003's stat descriptions).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StatGuide {
    pub represents: String,
    pub high: String,
    pub low: String,
    pub success: String,
    pub fail: String,
}

/// Why a ruleset could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum RulesetError {
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}:{line}: {message}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
    #[error("no ruleset `{id}`: looked in {}", searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NotFound { id: String, searched: Vec<PathBuf> },
}

/// Why a check could not be rolled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error("ruleset `{ruleset}` has no check `{check}`")]
    UnknownCheck { ruleset: String, check: String },
    #[error("check `{check}` needs a stat for `{bind}` (one of: {choices})")]
    MissingBinding {
        check: String,
        bind: String,
        choices: String,
    },
    #[error("check `{check}` cannot use `{stat}` for `{bind}` (one of: {choices})")]
    BadBinding {
        check: String,
        bind: String,
        stat: String,
        choices: String,
    },
    #[error("the stat block has no integer `{stat}`")]
    MissingStat { stat: String },
    #[error("modifier `{name}` = {value} is outside {min}..={max}")]
    ModifierOutOfRange {
        name: String,
        value: i64,
        min: i64,
        max: i64,
    },
    #[error("check `{check}` has no modifier `{name}` (it takes: {known})")]
    UnknownModifier {
        check: String,
        name: String,
        known: String,
    },
    #[error("no band of check `{check}` covers a total of {total}")]
    NoBand { check: String, total: i64 },
    #[error(transparent)]
    Dice(#[from] DiceError),
}

/// The outcome of a check: the roll and the band it fell in.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct CheckOutcome {
    pub check: String,
    /// The stat bound to the check's placeholder, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat: Option<String>,
    pub roll: Roll,
    pub band: String,
    pub label: String,
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<StateOp>,
}

impl Ruleset {
    /// Read a ruleset folder (`ruleset.json` + `rulebook.md`) and check it hangs together.
    pub fn load(dir: &Path) -> Result<Self, RulesetError> {
        let path = dir.join(RULESET_FILE);
        let text = crate::files::read_to_string_within(&path, RULESET_CAP).map_err(|source| {
            RulesetError::Read {
                path: path.clone(),
                source,
            }
        })?;
        let mut ruleset: Ruleset =
            serde_json::from_str(&text).map_err(|e| RulesetError::Parse {
                path: path.clone(),
                line: e.line(),
                message: e.to_string(),
            })?;
        if ruleset.rulebook_text.trim().is_empty() {
            let book = dir.join(RULEBOOK_FILE);
            ruleset.rulebook_text = crate::files::read_to_string_within(&book, RULESET_CAP)
                .map_err(|source| RulesetError::Read {
                    path: book.clone(),
                    source,
                })?;
        }
        let problems = ruleset.problems();
        if let Some(message) = problems.into_iter().next() {
            return Err(RulesetError::Invalid { path, message });
        }
        Ok(ruleset)
    }

    /// Find a ruleset by id: `dir/<id>/` for each directory in order.
    pub fn find(id: &str, dirs: &[PathBuf]) -> Result<Self, RulesetError> {
        let searched: Vec<PathBuf> = dirs.iter().map(|d| d.join(id)).collect();
        match searched
            .iter()
            .find(|d| crate::files::is_file(&d.join(RULESET_FILE)))
        {
            Some(dir) => Self::load(dir),
            None => Err(RulesetError::NotFound {
                id: id.to_owned(),
                searched,
            }),
        }
    }

    /// Everything wrong with the ruleset's own data, one sentence each (empty when sound).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.rulebook_text.trim().is_empty() {
            out.push(format!("ruleset `{}` has no rulebook text", self.id));
        }
        for (name, schema) in [
            ("character_stat_schema", &self.character_stat_schema),
            ("scene_state_schema", &self.scene_state_schema),
        ] {
            if let Err(err) = jsonschema::validator_for(schema) {
                out.push(format!("{name} is not a valid JSON Schema: {err}"));
            }
            check_bounds_keywords(schema, name, &mut out);
        }
        let stats = self.stat_names();
        for check in &self.mechanics_guidance.checks {
            let expr = match DiceExpr::parse(&check.expression) {
                Ok(expr) => expr,
                Err(err) => {
                    out.push(format!("check `{}`: {err}", check.id));
                    continue;
                }
            };
            for name in expr.modifier_names() {
                let known = stats.iter().any(|s| s == name)
                    || check.bind.as_deref() == Some(name)
                    || check.modifiers.iter().any(|m| m.name == name);
                if !known {
                    out.push(format!(
                        "check `{}`: `{name}` in `{}` is neither a stat, the bound name, nor a declared modifier",
                        check.id, check.expression
                    ));
                }
            }
            for stat in &check.bind_to {
                if !stats.contains(stat) {
                    out.push(format!(
                        "check `{}` binds to `{stat}`, which the stat schema does not declare",
                        check.id
                    ));
                }
            }
            if let Some(gap) = band_gap(&check.bands) {
                out.push(format!("check `{}`: {gap}", check.id));
            }
        }
        for trigger in &self.mechanics_guidance.triggers {
            if schema_at(&self.scene_state_schema, &split(&trigger.path)).is_none() {
                out.push(format!(
                    "trigger on `{}`: the scene state schema declares no such path",
                    trigger.path
                ));
            }
        }
        out
    }

    /// The range every relation axis stays in (0..=10 where the ruleset says nothing).
    pub fn relation_range(&self) -> (i64, i64) {
        self.mechanics_guidance.relation_range.unwrap_or((0, 10))
    }

    /// Names of the stats the character stat schema declares.
    pub fn stat_names(&self) -> Vec<String> {
        self.character_stat_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// What each stat is used for, in short phrases: its guide's `represents`
    /// ("Stealth, deceit and sleight of hand: lying, sneaking, …") or else its
    /// schema description, split at colons and commas.
    pub fn stat_cues(&self) -> Vec<(String, Vec<String>)> {
        self.stat_names()
            .into_iter()
            .map(|name| {
                let text = self.mechanics_guidance.stats.get(&name).map_or_else(
                    || {
                        self.character_stat_schema["properties"][&name]["description"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned()
                    },
                    |g| g.represents.clone(),
                );
                let cues = text
                    .split([':', ',', ';'])
                    .map(|p| {
                        p.trim()
                            .trim_end_matches('.')
                            .trim_start_matches("and ")
                            .trim()
                    })
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect();
                (name, cues)
            })
            .collect()
    }

    /// The shift session zero's `difficulty` puts on the player's checks:
    /// the ruleset's own table, else `gentle` +1, `standard` 0, `hard` −1
    /// (an unknown name shifts nothing).
    pub fn difficulty_shift(&self, difficulty: &str) -> i64 {
        let name = difficulty.trim().to_lowercase();
        if let Some(shift) = self.mechanics_guidance.difficulty.get(&name) {
            return *shift;
        }
        match name.as_str() {
            "gentle" | "easy" => 1,
            "hard" | "harsh" => -1,
            _ => 0,
        }
    }

    /// In-game minutes a move takes when nothing is rolled and nobody travels.
    pub fn move_minutes(&self) -> i64 {
        self.mechanics_guidance.move_minutes.unwrap_or(5)
    }

    /// The check with this id, or the first one when `id` is `None`.
    pub fn check(&self, id: Option<&str>) -> Result<&Check, CheckError> {
        let checks = &self.mechanics_guidance.checks;
        match id {
            Some(id) => checks.iter().find(|c| c.id == id),
            None => checks.first(),
        }
        .ok_or_else(|| CheckError::UnknownCheck {
            ruleset: self.id.clone(),
            check: id.unwrap_or("(default)").to_owned(),
        })
    }

    /// Roll a check for a character: stats from its block, `stat` bound to the placeholder, situational modifiers.
    pub fn roll_check(
        &self,
        check: &Check,
        stat_block: &serde_json::Map<String, Value>,
        stat: Option<&str>,
        situational: &Modifiers,
        dice: &mut super::dice::Dice,
    ) -> Result<CheckOutcome, CheckError> {
        self.roll_shifted(check, stat_block, stat, situational, 0, dice)
    }

    /// [`Self::roll_check`] with `shift` added to the total (session zero's
    /// difficulty, [`Self::difficulty_shift`]): the expression gains a
    /// `+difficulty` term when the shift is not 0, so the roll shows it and
    /// replays it.
    pub fn roll_shifted(
        &self,
        check: &Check,
        stat_block: &serde_json::Map<String, Value>,
        stat: Option<&str>,
        situational: &Modifiers,
        shift: i64,
        dice: &mut super::dice::Dice,
    ) -> Result<CheckOutcome, CheckError> {
        let (mut expr, mut modifiers) =
            self.check_modifiers(check, stat_block, stat, situational)?;
        if shift != 0 {
            expr = DiceExpr::parse(&format!("{}+{DIFFICULTY}", check.expression))?;
            modifiers.insert(DIFFICULTY.to_owned(), shift);
        }
        let roll = dice.roll(&expr, &modifiers)?;
        let band = resolve(&check.bands, &roll).ok_or_else(|| CheckError::NoBand {
            check: check.id.clone(),
            total: roll.total,
        })?;
        Ok(CheckOutcome {
            check: check.id.clone(),
            stat: check.bind.as_ref().and(stat.map(str::to_owned)),
            band: band.id.clone(),
            label: band.label.clone(),
            tier: band.tier,
            effects: band.effects.clone(),
            roll,
        })
    }

    /// Seed 002 §4.2.1's success probability: the chance a check for this
    /// character, with no situational modifiers, lands in a band better than
    /// failure (`None` when the dice are too many to count).
    pub fn success_chance(
        &self,
        check: &Check,
        stat_block: &serde_json::Map<String, Value>,
        stat: Option<&str>,
    ) -> Result<Option<f64>, CheckError> {
        let (expr, modifiers) = self.check_modifiers(check, stat_block, stat, &Modifiers::new())?;
        Ok(expr.chance(&modifiers, |roll| {
            resolve(&check.bands, roll).is_some_and(|b| b.tier != Tier::Failure)
        })?)
    }

    /// A check's expression and the modifiers it rolls with: the bound stat,
    /// situational modifiers (absent ones 0) and stats named in it.
    fn check_modifiers(
        &self,
        check: &Check,
        stat_block: &serde_json::Map<String, Value>,
        stat: Option<&str>,
        situational: &Modifiers,
    ) -> Result<(DiceExpr, Modifiers), CheckError> {
        let expr = DiceExpr::parse(&check.expression)?;
        let mut modifiers = Modifiers::new();
        let stat_value = |name: &str| {
            stat_block
                .get(name)
                .and_then(Value::as_i64)
                .ok_or_else(|| CheckError::MissingStat {
                    stat: name.to_owned(),
                })
        };
        let choices = if check.bind_to.is_empty() {
            self.stat_names()
        } else {
            check.bind_to.clone()
        };
        if let Some(bind) = &check.bind {
            let Some(stat) = stat else {
                return Err(CheckError::MissingBinding {
                    check: check.id.clone(),
                    bind: bind.clone(),
                    choices: choices.join(", "),
                });
            };
            if !choices.iter().any(|c| c == stat) {
                return Err(CheckError::BadBinding {
                    check: check.id.clone(),
                    bind: bind.clone(),
                    stat: stat.to_owned(),
                    choices: choices.join(", "),
                });
            }
            modifiers.insert(bind.clone(), stat_value(stat)?);
        }
        for (name, value) in situational {
            let Some(spec) = check.modifiers.iter().find(|m| &m.name == name) else {
                return Err(CheckError::UnknownModifier {
                    check: check.id.clone(),
                    name: name.clone(),
                    known: check
                        .modifiers
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            if !(spec.min..=spec.max).contains(value) {
                return Err(CheckError::ModifierOutOfRange {
                    name: name.clone(),
                    value: *value,
                    min: spec.min,
                    max: spec.max,
                });
            }
        }
        for name in expr.modifier_names() {
            if modifiers.contains_key(name) {
                continue;
            }
            if let Some(spec) = check.modifiers.iter().find(|m| m.name == name) {
                modifiers.insert(
                    spec.name.clone(),
                    situational.get(name).copied().unwrap_or(0),
                );
            } else {
                modifiers.insert(name.to_owned(), stat_value(name)?);
            }
        }
        Ok((expr, modifiers))
    }
}

/// The first band a roll falls in.
pub fn resolve<'a>(bands: &'a [Band], roll: &Roll) -> Option<&'a Band> {
    bands.iter().find(|b| b.matches(roll))
}

/// Split a dotted path.
pub(crate) fn split(path: &str) -> Vec<&str> {
    path.split('.').collect()
}

/// Seed 003's drafts write `min`/`max`; JSON Schema ignores those, so a ruleset using them has no ranges at all.
fn check_bounds_keywords(schema: &Value, name: &str, out: &mut Vec<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop) in props {
            if prop.get("min").is_some() || prop.get("max").is_some() {
                out.push(format!(
                    "{name}: `{key}` uses `min`/`max`, which JSON Schema ignores; write `minimum`/`maximum`"
                ));
            }
            check_bounds_keywords(prop, name, out);
        }
    }
}

/// Do the total-based bands cover every integer? Returns the first gap or overlap, in words.
fn band_gap(bands: &[Band]) -> Option<String> {
    if bands.is_empty() {
        return Some("has no bands".to_owned());
    }
    let mut spans: Vec<(Option<i64>, Option<i64>, &str)> = bands
        .iter()
        .filter(|b| b.on == Basis::Total)
        .map(|b| (b.min, b.max, b.id.as_str()))
        .collect();
    for (min, max, id) in &spans {
        if let (Some(lo), Some(hi)) = (min, max)
            && lo > hi
        {
            return Some(format!("band `{id}` runs from {lo} down to {hi}"));
        }
    }
    spans.sort_by_key(|(min, _, _)| min.unwrap_or(i64::MIN));
    let Some(first) = spans.first() else {
        return Some("has no bands on the total".to_owned());
    };
    if first.0.is_some() {
        return Some(format!(
            "nothing covers totals below {} (give the lowest band no `min`)",
            first.0.unwrap_or_default()
        ));
    }
    let mut reach = first.1;
    for (min, max, id) in spans.iter().skip(1) {
        let Some(upto) = reach else {
            return Some(format!("band `{id}` overlaps a band with no `max`"));
        };
        let lo = min.unwrap_or(i64::MIN);
        if lo > upto + 1 {
            return Some(format!("no band covers totals {}..={}", upto + 1, lo - 1));
        }
        if lo <= upto {
            return Some(format!("band `{id}` overlaps the band below it at {lo}"));
        }
        reach = *max;
    }
    reach.map(|upto| format!("nothing covers totals above {upto} (give the highest band no `max`)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(id: &str, tier: Tier, min: Option<i64>, max: Option<i64>) -> Band {
        Band {
            id: id.into(),
            label: id.into(),
            tier,
            min,
            max,
            on: Basis::Total,
            meaning: String::new(),
            effects: vec![],
        }
    }

    #[test]
    fn band_coverage_is_checked() {
        let good = [
            band("fail", Tier::Failure, None, Some(6)),
            band("partial", Tier::Partial, Some(7), Some(9)),
            band("success", Tier::Success, Some(10), None),
        ];
        assert_eq!(band_gap(&good), None);
        let gap = [
            band("fail", Tier::Failure, None, Some(6)),
            band("success", Tier::Success, Some(10), None),
        ];
        assert_eq!(band_gap(&gap).unwrap(), "no band covers totals 7..=9");
        let overlap = [
            band("fail", Tier::Failure, None, Some(7)),
            band("success", Tier::Success, Some(7), None),
        ];
        assert!(band_gap(&overlap).unwrap().contains("overlaps"));
        let closed = [band("x", Tier::Failure, Some(1), None)];
        assert!(band_gap(&closed).unwrap().contains("below 1"));
        let top = [band("x", Tier::Failure, None, Some(3))];
        assert!(band_gap(&top).unwrap().contains("above 3"));
        assert!(band_gap(&[]).is_some());
    }

    #[test]
    fn min_max_from_the_seed_drafts_are_flagged() {
        let schema = serde_json::json!({"type": "object", "properties": {"shyness": {"type": "integer", "min": 0, "max": 10}}});
        let mut out = Vec::new();
        check_bounds_keywords(&schema, "character_stat_schema", &mut out);
        assert_eq!(out.len(), 1);
        assert!(out[0].contains("`shyness` uses `min`/`max`"));
    }
}
