//! Typed state operations (seed 003 "state changes are typed engine operations", seed 001 `StateDiff`) and the world state they change.
//!
//! An operation is `{"op": OP, "path": PATH, "value": VALUE}`, the shape the
//! ruleset-resolution contract (`schemas/stages/ruleset_resolution.schema.json`)
//! lets a model propose. Engine code parses the path into a typed [`Target`],
//! checks that the op applies to it, applies it to a copy of the state and
//! validates the result against the ruleset's schemas and ranges; a batch
//! either applies whole or not at all, and every refusal names the op, its
//! path and the reason.
//!
//! | op | path | value |
//! |----|------|-------|
//! | `set` | `scene.<field>`, `characters.<id>.stats.<stat>`, `threads.<id>.stakes` | the new value |
//! | `increment`, `decrement` | an integer scene field or stat, `clocks.<id>`, `relations.<a>.<b>.<axis>`, `inventory.<owner>.<item>` | amount (default 1) |
//! | `add_tag`, `remove_tag` | `characters.<id>.tags` | the tag |
//! | `tick_clock` | `clocks.<id>` | ticks (default 1; clocks stop at 0 and at their max) |
//! | `relation` | `relations.<a>.<b>.<axis>` (`trust`, `tension`, `closeness`) | signed change |
//! | `inventory` | `inventory.<owner>.<item>` | signed change in quantity |
//! | `add_fact`, `update_fact` | `facts.<subject>.<predicate>` | the fact's object |
//! | `thread` | `threads.<id>.status` | `open`, `active`, `resolved`, `failed` or `abandoned` |
//! | `set`, `increment`, `decrement` | `perception.<npc>`, `reputation.<faction>` | a number; scores stay in −100..=100 ([`super::standing`]) |

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ruleset::Ruleset;

/// The kinds of operation (seed 003 and seed 001's `StateDiff`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Set,
    Increment,
    Decrement,
    AddTag,
    RemoveTag,
    TickClock,
    Relation,
    Inventory,
    AddFact,
    UpdateFact,
    Thread,
}

impl OpKind {
    /// Every op name, for error messages.
    pub const ALL: [&str; 11] = [
        "set",
        "increment",
        "decrement",
        "add_tag",
        "remove_tag",
        "tick_clock",
        "relation",
        "inventory",
        "add_fact",
        "update_fact",
        "thread",
    ];

    pub fn name(self) -> &'static str {
        Self::ALL[self as usize]
    }
}

/// One state operation as written in a ruleset, a campaign or a model's output.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StateOp {
    pub op: OpKind,
    /// Dotted path: `scene.minutes_left`, `characters.lena.stats.shyness`, `clocks.tide`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl StateOp {
    pub fn new(op: OpKind, path: &str, value: impl Into<Value>) -> Self {
        Self {
            op,
            path: path.to_owned(),
            value: Some(value.into()),
        }
    }

    /// Read an op from untrusted JSON (a model's output), naming unknown ops and fields.
    pub fn from_value(value: &Value) -> Result<Self, String> {
        serde_json::from_value(value.clone()).map_err(|e| {
            let op = value.get("op").and_then(Value::as_str).unwrap_or("");
            if !op.is_empty() && !OpKind::ALL.contains(&op) {
                format!("unknown op `{op}`; the ops are {}", OpKind::ALL.join(", "))
            } else {
                e.to_string()
            }
        })
    }
}

impl fmt::Display for StateOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.op.name(), self.path)?;
        if let Some(v) = &self.value {
            write!(f, " {v}")?;
        }
        Ok(())
    }
}

/// What an op's path names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A field of the scene state (nested fields joined by dots).
    Scene(Vec<String>),
    Stat {
        character: String,
        stat: String,
    },
    Tags {
        character: String,
    },
    Clock(String),
    Relation {
        a: String,
        b: String,
        axis: String,
    },
    Inventory {
        owner: String,
        item: String,
    },
    Fact {
        subject: String,
        predicate: String,
    },
    ThreadStatus(String),
    ThreadStakes(String),
    /// An NPC's perception of the persona (seed 002 §4.2.3).
    Perception(String),
    /// The persona's standing with a faction (seed 002 §4.1.4).
    Reputation(String),
}

/// Relation axes (seed 003 "Relation Tracking").
pub const RELATION_AXES: [&str; 3] = ["trust", "tension", "closeness"];
/// Thread statuses.
pub const THREAD_STATUSES: [&str; 5] = ["open", "active", "resolved", "failed", "abandoned"];

impl Target {
    /// Parse a dotted path, or say which shapes are allowed.
    pub fn parse(path: &str) -> Result<Self, String> {
        let parts: Vec<&str> = path.split('.').collect();
        if parts.iter().any(|p| p.trim().is_empty()) {
            return Err(format!("`{path}` has an empty segment"));
        }
        let owned = |s: &str| s.to_owned();
        Ok(match parts.as_slice() {
            ["scene", rest @ ..] if !rest.is_empty() => {
                Target::Scene(rest.iter().map(|s| owned(s)).collect())
            }
            ["characters", id, "stats", stat] => Target::Stat {
                character: owned(id),
                stat: owned(stat),
            },
            ["characters", id, "tags"] => Target::Tags {
                character: owned(id),
            },
            ["clocks", id] => Target::Clock(owned(id)),
            ["relations", a, b, axis] => Target::Relation {
                a: owned(a),
                b: owned(b),
                axis: owned(axis),
            },
            ["inventory", holder, thing] => Target::Inventory {
                owner: owned(holder),
                item: owned(thing),
            },
            ["facts", subject, predicate] => Target::Fact {
                subject: owned(subject),
                predicate: owned(predicate),
            },
            ["threads", id, "status"] => Target::ThreadStatus(owned(id)),
            ["threads", id, "stakes"] => Target::ThreadStakes(owned(id)),
            ["perception", id] => Target::Perception(owned(id)),
            ["reputation", id] => Target::Reputation(owned(id)),
            _ => {
                return Err(format!(
                    "unknown path `{path}`; paths are scene.<field>, characters.<id>.stats.<stat>, \
                     characters.<id>.tags, clocks.<id>, relations.<a>.<b>.<axis>, \
                     inventory.<owner>.<item>, facts.<subject>.<predicate>, threads.<id>.status|stakes, \
                     perception.<npc>, reputation.<faction>"
                ));
            }
        })
    }
}

/// A character's mutable state: its stat block and tags.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
pub struct CharacterState {
    pub stats: Map<String, Value>,
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub tags: BTreeSet<String>,
}

/// `scene.whereabouts`: where each character not in the scene was last left
/// (id → location id), kept by the engine when the player goes elsewhere; a
/// field of every ruleset's scene.
pub const WHEREABOUTS: &str = "whereabouts";

/// A progress clock (seed 001): fills from 0 to `max`; triggers fire at values.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub value: i64,
    pub max: i64,
    /// What happens when the clock reaches a value (`"6": "the tide turns"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub triggers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// A relation between two characters; the pair is unordered (seed 003).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Relation {
    pub a: String,
    pub b: String,
    #[serde(default)]
    pub trust: i64,
    #[serde(default)]
    pub tension: i64,
    #[serde(default)]
    pub closeness: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
}

impl Relation {
    /// One axis's value (`trust`, `tension`, `closeness`).
    pub fn axis(&self, axis: &str) -> Option<i64> {
        match axis {
            "trust" => Some(self.trust),
            "tension" => Some(self.tension),
            "closeness" => Some(self.closeness),
            _ => None,
        }
    }

    pub fn is_between(&self, a: &str, b: &str) -> bool {
        (self.a == a && self.b == b) || (self.a == b && self.b == a)
    }

    fn axis_mut(&mut self, axis: &str) -> Option<&mut i64> {
        match axis {
            "trust" => Some(&mut self.trust),
            "tension" => Some(&mut self.tension),
            "closeness" => Some(&mut self.closeness),
            _ => None,
        }
    }
}

/// Who knows a fact.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    #[default]
    Public,
    Secret,
}

/// A fact about the world (seed 001 `facts`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    pub subject: String,
    pub predicate: String,
    pub object: Value,
    #[serde(default, skip_serializing_if = "is_default")]
    pub visibility: Visibility,
}

/// A story thread (seed 001 `threads`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Thread {
    pub id: String,
    pub title: String,
    #[serde(default = "open")]
    pub status: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub stakes: Value,
}

fn open() -> String {
    "open".to_owned()
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// Everything state operations may change: one session's mutable world.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq, Default)]
pub struct WorldState {
    /// The scene state (validated against the ruleset's scene state schema).
    pub scene: Map<String, Value>,
    pub characters: BTreeMap<String, CharacterState>,
    pub clocks: BTreeMap<String, Clock>,
    pub relations: Vec<Relation>,
    /// Quantities by owner, then item.
    pub inventory: BTreeMap<String, BTreeMap<String, u32>>,
    pub facts: Vec<Fact>,
    pub threads: BTreeMap<String, Thread>,
    /// Each NPC's perception of the persona, −100..=100 (seed 002 §4.2.3).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub perception: BTreeMap<String, f64>,
    /// The persona's reputation with each faction, −100..=100 (seed 002 §4.1.4).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reputation: BTreeMap<String, f64>,
    /// In-game minutes of decay applied so far.
    #[serde(default, skip_serializing_if = "is_default")]
    pub standing_minute: f64,
    /// Where each plot beat stands (seed 002 §7.5); beats not listed are waiting.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub beats: BTreeMap<String, BeatStatus>,
    /// The skills' state tree (seed 002 §2.1: their `state_patch`es
    /// deep-merged), committed with the turn and restored by a rewind.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub skills: Map<String, Value>,
}

/// A plot beat's progress, decided at scene transitions (`session::beats`).
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BeatStatus {
    /// Its prerequisites (beats, scene window) hold since scene `since`; its story conditions not yet.
    Open { since: u32 },
    /// Every condition holds since scene `since` (or it was forced); it triggers within two scenes.
    Ready { since: u32, why: String },
    /// It played in scene `scene` (`why` it was ready).
    Triggered { scene: u32, why: String },
    /// It can no longer happen.
    Skipped { scene: u32, why: String },
}

/// One applied change, before and after, for logs, replay and the overlay.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
pub struct Change {
    pub op: StateOp,
    pub before: Value,
    pub after: Value,
    /// Clock or ruleset triggers this change reached.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggered: Vec<String>,
}

/// Why a batch of operations was refused; nothing of the batch was applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("state op {index} (`{op}`) refused: {reason}")]
pub struct StateOpError {
    /// Position of the refused op in its batch (0-based).
    pub index: usize,
    pub op: String,
    pub reason: String,
}

impl WorldState {
    /// The character ids the scene lists as present (`scene.present`), in order.
    pub fn present(&self) -> Vec<String> {
        self.scene
            .get("present")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Apply a batch atomically: all ops or none. Returns what changed.
    pub fn apply(
        &mut self,
        ops: &[StateOp],
        ruleset: &Ruleset,
    ) -> Result<Vec<Change>, StateOpError> {
        let checker = Checker::new(ruleset);
        let mut next = self.clone();
        let mut changes = Vec::with_capacity(ops.len());
        for (index, op) in ops.iter().enumerate() {
            let refuse = |reason: String| StateOpError {
                index,
                op: op.to_string(),
                reason,
            };
            let change = next.apply_one(op, &checker).map_err(refuse)?;
            changes.push(change);
        }
        *self = next;
        Ok(changes)
    }

    /// Apply untrusted ops (JSON from a model) atomically.
    pub fn apply_values(
        &mut self,
        ops: &[Value],
        ruleset: &Ruleset,
    ) -> Result<Vec<Change>, StateOpError> {
        let parsed = ops
            .iter()
            .enumerate()
            .map(|(index, v)| {
                StateOp::from_value(v).map_err(|reason| StateOpError {
                    index,
                    op: v.to_string(),
                    reason,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.apply(&parsed, ruleset)
    }

    /// Check a batch without changing anything.
    pub fn check(&self, ops: &[StateOp], ruleset: &Ruleset) -> Result<(), StateOpError> {
        self.clone().apply(ops, ruleset).map(|_| ())
    }

    fn apply_one(&mut self, op: &StateOp, checker: &Checker) -> Result<Change, String> {
        let target = Target::parse(&op.path)?;
        let amount = || amount(op);
        let mut triggered = Vec::new();
        let (before, after) = match (op.op, &target) {
            (OpKind::Set, Target::Scene(path)) => {
                checker.scene_path(path)?;
                let value = required(op)?.clone();
                let before = set_in(&mut self.scene, path, value.clone());
                checker.scene(&self.scene)?;
                (before, value)
            }
            (OpKind::Increment | OpKind::Decrement, Target::Scene(path)) => {
                checker.scene_path(path)?;
                let delta = signed(op.op, amount()?);
                // A counter the scene has not started yet (no failure streak so far) counts from 0.
                let before = get_in(&self.scene, path).cloned().unwrap_or(0.into());
                let Some(old) = before.as_i64() else {
                    return Err(format!("`{}` is {before}, not an integer", op.path));
                };
                let new = old.checked_add(delta).ok_or("overflow")?;
                set_in(&mut self.scene, path, new.into());
                checker.scene(&self.scene)?;
                let (fired, reset) = checker.scene_triggers(path, old, new);
                triggered = fired;
                let after = reset.unwrap_or(new);
                if after != new {
                    set_in(&mut self.scene, path, after.into());
                    checker.scene(&self.scene)?;
                }
                (before, after.into())
            }
            (OpKind::Set, Target::Stat { character, stat }) => {
                let value = required(op)?.clone();
                checker.stat_name(stat)?;
                let ch = self.character_mut(character)?;
                let before = ch
                    .stats
                    .insert(stat.clone(), value.clone())
                    .unwrap_or(Value::Null);
                checker.stats(character, &ch.stats)?;
                (before, value)
            }
            (OpKind::Increment | OpKind::Decrement, Target::Stat { character, stat }) => {
                let delta = signed(op.op, amount()?);
                checker.stat_name(stat)?;
                let ch = self.character_mut(character)?;
                let old = ch
                    .stats
                    .get(stat)
                    .and_then(Value::as_i64)
                    .ok_or_else(|| format!("`{character}` has no integer stat `{stat}`"))?;
                let new = old.checked_add(delta).ok_or("overflow")?;
                ch.stats.insert(stat.clone(), new.into());
                checker.stats(character, &ch.stats)?;
                (old.into(), new.into())
            }
            (OpKind::AddTag | OpKind::RemoveTag, Target::Tags { character }) => {
                let tag = required(op)?
                    .as_str()
                    .filter(|t| !t.trim().is_empty())
                    .ok_or("a tag is a non-empty string")?
                    .to_owned();
                let ch = self.character_mut(character)?;
                let before: Value = ch.tags.iter().cloned().collect::<Vec<_>>().into();
                if op.op == OpKind::AddTag {
                    ch.tags.insert(tag);
                } else if !ch.tags.remove(&tag) {
                    return Err(format!("`{character}` has no tag `{tag}`"));
                }
                (before, ch.tags.iter().cloned().collect::<Vec<_>>().into())
            }
            (OpKind::TickClock | OpKind::Increment | OpKind::Decrement, Target::Clock(id)) => {
                let delta = if op.op == OpKind::TickClock {
                    amount()?
                } else {
                    signed(op.op, amount()?)
                };
                let Some(clock) = self.clocks.get_mut(id) else {
                    return Err(format!(
                        "no clock `{id}` (clocks: {})",
                        keys(self.clocks.keys())
                    ));
                };
                let old = clock.value;
                let new = old.saturating_add(delta).clamp(0, clock.max);
                clock.value = new;
                for (at, what) in &clock.triggers {
                    if let Ok(at) = at.parse::<i64>()
                        && old < at
                        && new >= at
                    {
                        triggered.push(format!("clock `{}` reached {at}: {what}", clock.name));
                    }
                }
                (old.into(), new.into())
            }
            (
                OpKind::Relation | OpKind::Increment | OpKind::Decrement,
                Target::Relation { a, b, axis },
            ) => {
                if !RELATION_AXES.contains(&axis.as_str()) {
                    return Err(format!(
                        "unknown relation axis `{axis}` (axes: {})",
                        RELATION_AXES.join(", ")
                    ));
                }
                if a == b {
                    return Err(format!("a relation needs two characters, not `{a}` twice"));
                }
                let delta = if op.op == OpKind::Relation {
                    required(op)?
                        .as_i64()
                        .ok_or("a relation change is an integer")?
                } else {
                    signed(op.op, amount()?)
                };
                for id in [a, b] {
                    if !self.characters.contains_key(id) {
                        return Err(self.unknown_character(id));
                    }
                }
                let (lo, hi) = checker.relation_range;
                let index = if let Some(i) = self.relations.iter().position(|r| r.is_between(a, b))
                {
                    i
                } else {
                    self.relations.push(Relation {
                        a: a.clone(),
                        b: b.clone(),
                        trust: lo.max(0),
                        tension: lo.max(0),
                        closeness: lo.max(0),
                        notes: String::new(),
                    });
                    self.relations.len() - 1
                };
                let slot = self.relations[index].axis_mut(axis).ok_or("unknown axis")?;
                let old = *slot;
                let new = old.checked_add(delta).ok_or("overflow")?;
                if !(lo..=hi).contains(&new) {
                    return Err(format!(
                        "{axis} between `{a}` and `{b}` would be {new}, outside {lo}..={hi}"
                    ));
                }
                *slot = new;
                (old.into(), new.into())
            }
            (
                OpKind::Inventory | OpKind::Increment | OpKind::Decrement,
                Target::Inventory { owner, item },
            ) => {
                let delta = if op.op == OpKind::Inventory {
                    required(op)?
                        .as_i64()
                        .ok_or("an inventory change is an integer")?
                } else {
                    signed(op.op, amount()?)
                };
                let held = self.inventory.entry(owner.clone()).or_default();
                let old = i64::from(held.get(item).copied().unwrap_or(0));
                let new = old + delta;
                if new < 0 {
                    return Err(format!(
                        "`{owner}` holds {old} `{item}`, cannot lose {}",
                        -delta
                    ));
                }
                let new_qty = u32::try_from(new).map_err(|_| "quantity too large".to_owned())?;
                if new_qty == 0 {
                    held.remove(item);
                } else {
                    held.insert(item.clone(), new_qty);
                }
                (old.into(), new.into())
            }
            (OpKind::AddFact | OpKind::UpdateFact, Target::Fact { subject, predicate }) => {
                let object = required(op)?.clone();
                let existing = self
                    .facts
                    .iter_mut()
                    .find(|f| &f.subject == subject && &f.predicate == predicate);
                match (op.op, existing) {
                    (OpKind::AddFact, Some(_)) => {
                        return Err(format!(
                            "`{subject}` already has a `{predicate}` fact; use update_fact"
                        ));
                    }
                    (OpKind::AddFact, None) => {
                        self.facts.push(Fact {
                            subject: subject.clone(),
                            predicate: predicate.clone(),
                            object: object.clone(),
                            visibility: Visibility::Public,
                        });
                        (Value::Null, object)
                    }
                    (_, Some(fact)) => {
                        let before = std::mem::replace(&mut fact.object, object.clone());
                        (before, object)
                    }
                    (_, None) => {
                        return Err(format!(
                            "`{subject}` has no `{predicate}` fact to update; use add_fact"
                        ));
                    }
                }
            }
            (OpKind::Thread | OpKind::Set, Target::ThreadStatus(id)) => {
                let given = required(op)?;
                let status = given
                    .as_str()
                    .filter(|s| THREAD_STATUSES.contains(s))
                    .ok_or_else(|| {
                        format!(
                            "{given} is not a thread status ({})",
                            THREAD_STATUSES.join(", ")
                        )
                    })?
                    .to_owned();
                match self.threads.get_mut(id) {
                    Some(thread) => {
                        let before = std::mem::replace(&mut thread.status, status.clone());
                        (before.into(), status.into())
                    }
                    None if status == "open" => {
                        self.threads.insert(
                            id.clone(),
                            Thread {
                                id: id.clone(),
                                title: id.replace('_', " "),
                                status: status.clone(),
                                stakes: Value::Null,
                            },
                        );
                        (Value::Null, status.into())
                    }
                    None => {
                        return Err(format!(
                            "no thread `{id}`; a new thread starts with status `open`"
                        ));
                    }
                }
            }
            (OpKind::Thread | OpKind::Set, Target::ThreadStakes(id)) => {
                let stakes = required(op)?.clone();
                let thread = self
                    .threads
                    .get_mut(id)
                    .ok_or_else(|| format!("no thread `{id}`"))?;
                let before = std::mem::replace(&mut thread.stakes, stakes.clone());
                (before, stakes)
            }
            (
                OpKind::Set | OpKind::Increment | OpKind::Decrement,
                Target::Perception(id) | Target::Reputation(id),
            ) => {
                let perception = matches!(target, Target::Perception(_));
                let given = required(op)
                    .ok()
                    .and_then(Value::as_f64)
                    .filter(|v| v.is_finite() && v.abs() <= 2.0 * super::standing::SCALE);
                let given = match (op.op, given) {
                    (_, Some(v)) => v,
                    (OpKind::Set, None) => {
                        return Err("a score is a number in -100..=100".to_owned());
                    }
                    (_, None) if op.value.is_none() => 1.0,
                    (_, None) => return Err("a score change is a number in -200..=200".to_owned()),
                };
                let scores = if perception {
                    if !self.characters.contains_key(id) {
                        return Err(self.unknown_character(id));
                    }
                    &mut self.perception
                } else {
                    if !self.reputation.contains_key(id) {
                        return Err(format!(
                            "no faction `{id}` (factions: {})",
                            keys(self.reputation.keys())
                        ));
                    }
                    &mut self.reputation
                };
                let old = scores.get(id).copied().unwrap_or(0.0);
                let new = match op.op {
                    OpKind::Set => given,
                    OpKind::Decrement => old - given,
                    _ => old + given,
                };
                let scale = super::standing::SCALE;
                let new = (new.clamp(-scale, scale) * 10.0).round() / 10.0;
                scores.insert(id.clone(), new);
                (old.into(), new.into())
            }
            (kind, target) => {
                return Err(format!(
                    "`{}` does not apply to {}",
                    kind.name(),
                    describe(target)
                ));
            }
        };
        Ok(Change {
            op: op.clone(),
            before,
            after,
            triggered,
        })
    }

    fn character_mut(&mut self, id: &str) -> Result<&mut CharacterState, String> {
        if !self.characters.contains_key(id) {
            return Err(self.unknown_character(id));
        }
        Ok(self.characters.get_mut(id).expect("checked above"))
    }

    fn unknown_character(&self, id: &str) -> String {
        format!(
            "no character `{id}` (characters: {})",
            keys(self.characters.keys())
        )
    }
}

fn keys<'a>(it: impl Iterator<Item = &'a String>) -> String {
    let all: Vec<&str> = it.map(String::as_str).collect();
    if all.is_empty() {
        "none".to_owned()
    } else {
        all.join(", ")
    }
}

fn describe(target: &Target) -> &'static str {
    match target {
        Target::Scene(_) => "a scene field",
        Target::Stat { .. } => "a stat",
        Target::Tags { .. } => "tags",
        Target::Clock(_) => "a clock",
        Target::Relation { .. } => "a relation",
        Target::Inventory { .. } => "an inventory",
        Target::Fact { .. } => "a fact",
        Target::ThreadStatus(_) => "a thread's status",
        Target::ThreadStakes(_) => "a thread's stakes",
        Target::Perception(_) => "a perception",
        Target::Reputation(_) => "a reputation",
    }
}

fn required(op: &StateOp) -> Result<&Value, String> {
    op.value
        .as_ref()
        .filter(|v| !v.is_null())
        .ok_or_else(|| format!("`{}` needs a value", op.op.name()))
}

/// The amount of an increment, decrement or tick: a positive integer, 1 when absent.
fn amount(op: &StateOp) -> Result<i64, String> {
    match &op.value {
        None | Some(Value::Null) => Ok(1),
        Some(v) => match v.as_i64() {
            Some(n) if n > 0 && n <= 1_000_000 => Ok(n),
            _ => Err(format!(
                "`{}` takes a positive whole amount, not {v}",
                op.op.name()
            )),
        },
    }
}

fn signed(kind: OpKind, amount: i64) -> i64 {
    if kind == OpKind::Decrement {
        -amount
    } else {
        amount
    }
}

fn get_in<'a>(map: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = map.get(first)?;
    for key in rest {
        value = value.get(key)?;
    }
    Some(value)
}

/// Set a nested value, creating objects on the way; returns the old value (or null).
fn set_in(map: &mut Map<String, Value>, path: &[String], value: Value) -> Value {
    let Some((last, parents)) = path.split_last() else {
        return Value::Null;
    };
    let mut current = map;
    for key in parents {
        let entry = current
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        current = entry.as_object_mut().expect("made an object above");
    }
    current.insert(last.clone(), value).unwrap_or(Value::Null)
}

/// The sub-schema a dotted path names in an object schema (`properties` all the way down).
pub fn schema_at<'a>(schema: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(schema, |s, key| s.get("properties")?.get(*key))
}

/// The ruleset's schemas, compiled once per batch.
struct Checker<'r> {
    ruleset: &'r Ruleset,
    scene: Option<jsonschema::Validator>,
    stats: Option<jsonschema::Validator>,
    relation_range: (i64, i64),
}

impl<'r> Checker<'r> {
    fn new(ruleset: &'r Ruleset) -> Self {
        Self {
            ruleset,
            scene: jsonschema::validator_for(&ruleset.scene_state_schema).ok(),
            stats: jsonschema::validator_for(&ruleset.character_stat_schema).ok(),
            relation_range: ruleset.relation_range(),
        }
    }

    fn scene_path(&self, path: &[String]) -> Result<(), String> {
        let parts: Vec<&str> = path.iter().map(String::as_str).collect();
        // The engine's own field, in every ruleset's scene.
        if parts.first() == Some(&WHEREABOUTS) {
            return Ok(());
        }
        if schema_at(&self.ruleset.scene_state_schema, &parts).is_none() {
            return Err(format!(
                "ruleset `{}` declares no scene field `{}`",
                self.ruleset.id,
                path.join(".")
            ));
        }
        Ok(())
    }

    fn stat_name(&self, stat: &str) -> Result<(), String> {
        if schema_at(&self.ruleset.character_stat_schema, &[stat]).is_none() {
            return Err(format!(
                "ruleset `{}` has no stat `{stat}` (stats: {})",
                self.ruleset.id,
                self.ruleset.stat_names().join(", ")
            ));
        }
        Ok(())
    }

    fn scene(&self, scene: &Map<String, Value>) -> Result<(), String> {
        let Some(validator) = &self.scene else {
            return Ok(());
        };
        let value = Value::Object(scene.clone());
        match validator.iter_errors(&value).next() {
            Some(e) => Err(format!("the scene would be invalid: {}{e}", at(&e))),
            None => Ok(()),
        }
    }

    fn stats(&self, character: &str, stats: &Map<String, Value>) -> Result<(), String> {
        let Some(validator) = &self.stats else {
            return Ok(());
        };
        let value = Value::Object(stats.clone());
        match validator.iter_errors(&value).next() {
            Some(e) => Err(format!(
                "`{character}`'s stats would be invalid: {}{e}",
                at(&e)
            )),
            None => Ok(()),
        }
    }

    /// Ruleset triggers on a scene path crossed by a change from `old` to `new`,
    /// and the value the last of them resets it to, if any.
    fn scene_triggers(&self, path: &[String], old: i64, new: i64) -> (Vec<String>, Option<i64>) {
        let joined = path.join(".");
        let fired: Vec<_> = self
            .ruleset
            .mechanics_guidance
            .triggers
            .iter()
            .filter(|t| t.path.strip_prefix("scene.").unwrap_or(&t.path) == joined)
            .filter(|t| old < t.at && new >= t.at)
            .collect();
        let reset = fired.iter().rev().find_map(|t| t.reset_to);
        let messages = fired
            .iter()
            .map(|t| {
                let mut m = format!("`scene.{joined}` reached {}: {}", t.at, t.effect);
                if let Some(to) = t.reset_to {
                    let _ = write!(m, " (`scene.{joined}` is now {to})");
                }
                m
            })
            .collect();
        (messages, reset)
    }
}

fn at(e: &jsonschema::ValidationError) -> String {
    let path = e.instance_path().to_string();
    if path.is_empty() {
        String::new()
    } else {
        format!("{} ", path.trim_start_matches('/').replace('/', "."))
    }
}
