//! Applying state operations to the world: a batch whole or not at all, one handler per target.
//!
//! Engine code parses each op's path into a typed [`Target`], checks that the
//! op applies to it, applies it to a copy of the state and validates the
//! result against the ruleset's schemas and ranges; a batch either applies
//! whole or not at all, and every refusal names the op, its path and the
//! reason ([`StateOpError`], typed as a [`Refusal`]).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::op::{
    Change, NewKind, OpKind, RELATION_AXES, SCALE, StateOp, THREAD_STATUSES, Target, get_in,
    schema_at, set_in,
};
use super::refusal::{Refusal, StateOpError};
use super::ruleset::Ruleset;
use super::state::{
    CharacterState, Fact, Introduced, Relation, Thread, Visibility, WHEREABOUTS, WorldState,
};

/// What one handler did: the target's value before and after, and the
/// triggers the change reached.
struct Applied {
    before: Value,
    after: Value,
    triggered: Vec<String>,
}

impl Applied {
    fn new(before: impl Into<Value>, after: impl Into<Value>) -> Self {
        Self {
            before: before.into(),
            after: after.into(),
            triggered: Vec::new(),
        }
    }
}

impl WorldState {
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
            let change = next
                .apply_one(op, &checker)
                .map_err(|refusal| StateOpError::new(index, op.to_string(), refusal))?;
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
                StateOp::from_value(v)
                    .map_err(|e| StateOpError::new(index, v.to_string(), e.into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.apply(&parsed, ruleset)
    }

    /// Check a batch without changing anything.
    pub fn check(&self, ops: &[StateOp], ruleset: &Ruleset) -> Result<(), StateOpError> {
        self.clone().apply(ops, ruleset).map(|_| ())
    }

    fn apply_one(&mut self, op: &StateOp, checker: &Checker) -> Result<Change, Refusal> {
        let target = Target::parse(&op.path)?;
        if !target.accepts(op.op) {
            return Err(Refusal::NotApplicable {
                op: op.op.name(),
                target: target.describe(),
            });
        }
        let applied = match &target {
            Target::Scene(path) => self.apply_scene(op, path, checker)?,
            Target::Stat { character, stat } => self.apply_stat(op, character, stat, checker)?,
            Target::Tags { character } => self.apply_tags(op, character)?,
            Target::Clock(id) => self.apply_clock(op, id)?,
            Target::Relation { a, b, axis } => {
                self.apply_relation(op, [a, b], axis, checker.relation_range)?
            }
            Target::Inventory { owner, item } => self.apply_inventory(op, owner, item)?,
            Target::Fact { subject, predicate } => self.apply_fact(op, subject, predicate)?,
            Target::ThreadStatus(id) => self.apply_thread_status(op, id)?,
            Target::ThreadStakes(id) => self.apply_thread_stakes(op, id)?,
            Target::Perception(id) => self.apply_standing(op, id, true)?,
            Target::Reputation(id) => self.apply_standing(op, id, false)?,
            Target::New { kind, id } => self.apply_introduce(op, *kind, id)?,
        };
        Ok(Change {
            op: op.clone(),
            before: applied.before,
            after: applied.after,
            triggered: applied.triggered,
        })
    }

    /// `set`, `increment`, `decrement` a scene field; an increment may reach
    /// the ruleset's triggers on that field, the last of which may reset it.
    fn apply_scene(
        &mut self,
        op: &StateOp,
        path: &[String],
        checker: &Checker,
    ) -> Result<Applied, Refusal> {
        checker.scene_path(path)?;
        if op.op == OpKind::Set {
            let value = required(op)?.clone();
            let before = set_in(&mut self.scene, path, value.clone());
            checker.scene(&self.scene)?;
            return Ok(Applied::new(before, value));
        }
        let delta = signed(op.op, amount(op)?);
        // A counter the scene has not started yet (no failure streak so far) counts from 0.
        let before = get_in(&self.scene, path).cloned().unwrap_or(0.into());
        let Some(old) = before.as_i64() else {
            return Err(Refusal::NotAnInteger {
                path: op.path.clone(),
                value: before,
            });
        };
        let new = old.checked_add(delta).ok_or(Refusal::Overflow)?;
        set_in(&mut self.scene, path, new.into());
        checker.scene(&self.scene)?;
        let (triggered, reset) = checker.scene_triggers(path, old, new);
        let after = reset.unwrap_or(new);
        if after != new {
            set_in(&mut self.scene, path, after.into());
            checker.scene(&self.scene)?;
        }
        Ok(Applied {
            before,
            after: after.into(),
            triggered,
        })
    }

    /// `set`, `increment`, `decrement` one of a character's stats.
    fn apply_stat(
        &mut self,
        op: &StateOp,
        character: &str,
        stat: &str,
        checker: &Checker,
    ) -> Result<Applied, Refusal> {
        if op.op == OpKind::Set {
            let value = required(op)?.clone();
            checker.stat_name(stat)?;
            let ch = self.character_mut(character)?;
            let before = ch
                .stats
                .insert(stat.to_owned(), value.clone())
                .unwrap_or(Value::Null);
            checker.stats(character, &ch.stats)?;
            return Ok(Applied::new(before, value));
        }
        let delta = signed(op.op, amount(op)?);
        checker.stat_name(stat)?;
        let ch = self.character_mut(character)?;
        let old =
            ch.stats
                .get(stat)
                .and_then(Value::as_i64)
                .ok_or_else(|| Refusal::NoIntegerStat {
                    character: character.to_owned(),
                    stat: stat.to_owned(),
                })?;
        let new = old.checked_add(delta).ok_or(Refusal::Overflow)?;
        ch.stats.insert(stat.to_owned(), new.into());
        checker.stats(character, &ch.stats)?;
        Ok(Applied::new(old, new))
    }

    /// `add_tag`, `remove_tag` on a character.
    fn apply_tags(&mut self, op: &StateOp, character: &str) -> Result<Applied, Refusal> {
        let tag = required(op)?
            .as_str()
            .filter(|t| !t.trim().is_empty())
            .ok_or(Refusal::BadTag)?
            .to_owned();
        let ch = self.character_mut(character)?;
        let before: Value = ch.tags.iter().cloned().collect::<Vec<_>>().into();
        if op.op == OpKind::AddTag {
            ch.tags.insert(tag);
        } else if !ch.tags.remove(&tag) {
            return Err(Refusal::NoSuchTag {
                character: character.to_owned(),
                tag,
            });
        }
        Ok(Applied::new(
            before,
            ch.tags.iter().cloned().collect::<Vec<_>>(),
        ))
    }

    /// `tick_clock`, `increment`, `decrement` a clock, which stops at 0 and
    /// its max and fires the triggers it passes.
    fn apply_clock(&mut self, op: &StateOp, id: &str) -> Result<Applied, Refusal> {
        let delta = if op.op == OpKind::TickClock {
            amount(op)?
        } else {
            signed(op.op, amount(op)?)
        };
        let Some(clock) = self.clocks.get_mut(id) else {
            return Err(Refusal::UnknownClock {
                id: id.to_owned(),
                known: keys(self.clocks.keys()),
            });
        };
        let old = clock.value;
        let new = old.saturating_add(delta).clamp(0, clock.max);
        clock.value = new;
        let mut applied = Applied::new(old, new);
        for (at, what) in &clock.triggers {
            if let Ok(at) = at.parse::<i64>()
                && old < at
                && new >= at
            {
                applied
                    .triggered
                    .push(format!("clock `{}` reached {at}: {what}", clock.name));
            }
        }
        Ok(applied)
    }

    /// `relation`, `increment`, `decrement` one axis between two characters,
    /// starting the relation (at the range's floor, or 0) when there is none.
    fn apply_relation(
        &mut self,
        op: &StateOp,
        [a, b]: [&String; 2],
        axis: &str,
        (lo, hi): (i64, i64),
    ) -> Result<Applied, Refusal> {
        if !RELATION_AXES.contains(&axis) {
            return Err(Refusal::UnknownAxis {
                axis: axis.to_owned(),
            });
        }
        if a == b {
            return Err(Refusal::SelfRelation { id: a.clone() });
        }
        let delta = if op.op == OpKind::Relation {
            required(op)?.as_i64().ok_or(Refusal::BadRelationChange)?
        } else {
            signed(op.op, amount(op)?)
        };
        for id in [a, b] {
            if !self.characters.contains_key(id) {
                return Err(self.unknown_character(id));
            }
        }
        let index = if let Some(i) = self.relations.iter().position(|r| r.is_between(a, b)) {
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
        let slot = self.relations[index]
            .axis_mut(axis)
            .ok_or_else(|| Refusal::UnknownAxis {
                axis: axis.to_owned(),
            })?;
        let old = *slot;
        let new = old.checked_add(delta).ok_or(Refusal::Overflow)?;
        if !(lo..=hi).contains(&new) {
            return Err(Refusal::RelationOutOfRange {
                axis: axis.to_owned(),
                a: a.clone(),
                b: b.clone(),
                value: new,
                lo,
                hi,
            });
        }
        *slot = new;
        Ok(Applied::new(old, new))
    }

    /// `inventory`, `increment`, `decrement` what an owner holds of an item.
    fn apply_inventory(
        &mut self,
        op: &StateOp,
        owner: &str,
        item: &str,
    ) -> Result<Applied, Refusal> {
        let delta = if op.op == OpKind::Inventory {
            required(op)?.as_i64().ok_or(Refusal::BadInventoryChange)?
        } else {
            signed(op.op, amount(op)?)
        };
        let held = self.inventory.entry(owner.to_owned()).or_default();
        let old = i64::from(held.get(item).copied().unwrap_or(0));
        let new = old + delta;
        if new < 0 {
            return Err(Refusal::NotEnoughHeld {
                owner: owner.to_owned(),
                item: item.to_owned(),
                held: old,
                lose: -delta,
            });
        }
        let new_qty = u32::try_from(new).map_err(|_| Refusal::QuantityTooLarge)?;
        if new_qty == 0 {
            held.remove(item);
        } else {
            held.insert(item.to_owned(), new_qty);
        }
        Ok(Applied::new(old, new))
    }

    /// `add_fact` (a new one) or `update_fact` (an existing one).
    fn apply_fact(
        &mut self,
        op: &StateOp,
        subject: &str,
        predicate: &str,
    ) -> Result<Applied, Refusal> {
        let object = required(op)?.clone();
        let existing = self
            .facts
            .iter_mut()
            .find(|f| f.subject == subject && f.predicate == predicate);
        match (op.op, existing) {
            (OpKind::AddFact, Some(_)) => Err(Refusal::FactExists {
                subject: subject.to_owned(),
                predicate: predicate.to_owned(),
            }),
            (OpKind::AddFact, None) => {
                self.facts.push(Fact {
                    subject: subject.to_owned(),
                    predicate: predicate.to_owned(),
                    object: object.clone(),
                    visibility: Visibility::Public,
                });
                Ok(Applied::new(Value::Null, object))
            }
            (_, Some(fact)) => {
                let before = std::mem::replace(&mut fact.object, object.clone());
                Ok(Applied::new(before, object))
            }
            (_, None) => Err(Refusal::NoSuchFact {
                subject: subject.to_owned(),
                predicate: predicate.to_owned(),
            }),
        }
    }

    /// `thread` (or `set`) a thread's status; a thread not yet known starts
    /// with `open`.
    fn apply_thread_status(&mut self, op: &StateOp, id: &str) -> Result<Applied, Refusal> {
        let given = required(op)?;
        let status = given
            .as_str()
            .filter(|s| THREAD_STATUSES.contains(s))
            .ok_or_else(|| Refusal::BadThreadStatus {
                value: given.clone(),
            })?
            .to_owned();
        match self.threads.get_mut(id) {
            Some(thread) => {
                let before = std::mem::replace(&mut thread.status, status.clone());
                Ok(Applied::new(before, status))
            }
            None if status == "open" => {
                self.threads.insert(
                    id.to_owned(),
                    Thread {
                        id: id.to_owned(),
                        title: id.replace('_', " "),
                        status: status.clone(),
                        stakes: Value::Null,
                    },
                );
                Ok(Applied::new(Value::Null, status))
            }
            None => Err(Refusal::NewThreadNotOpen { id: id.to_owned() }),
        }
    }

    /// `introduce` someone, something, somewhere or a thread: a new id, a
    /// name of 2 to 60 characters and a description of at most 300 (the
    /// engine adds the turn); a thread opens with the name as its title and
    /// the description as its stakes.
    fn apply_introduce(
        &mut self,
        op: &StateOp,
        kind: NewKind,
        id: &str,
    ) -> Result<Applied, Refusal> {
        let value = required(op)?;
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::trim);
        let name = text("name")
            .filter(|n| (2..=60).contains(&n.chars().count()))
            .ok_or(Refusal::BadIntroduction)?
            .to_owned();
        let description = text("description").unwrap_or_default().to_owned();
        if description.chars().count() > 300 {
            return Err(Refusal::BadIntroduction);
        }
        let valid_id = id.len() <= 40
            && id.starts_with(|c: char| c.is_ascii_lowercase())
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_id {
            return Err(Refusal::BadIntroduction);
        }
        let taken = self.introduced.contains_key(id)
            || self.characters.contains_key(id)
            || self.threads.contains_key(id)
            || self.clocks.contains_key(id)
            || self.inventory.contains_key(id)
            || self.inventory.values().any(|h| h.contains_key(id));
        if taken {
            return Err(Refusal::AlreadyKnown { id: id.to_owned() });
        }
        if kind == NewKind::Thread {
            self.threads.insert(
                id.to_owned(),
                Thread {
                    id: id.to_owned(),
                    title: name,
                    status: "open".to_owned(),
                    stakes: Value::from(description),
                },
            );
            return Ok(Applied::new(Value::Null, "open"));
        }
        let at = self
            .scene
            .get("location")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let turn = value.get("turn").and_then(Value::as_u64).unwrap_or(0);
        let entry = Introduced {
            kind,
            name,
            description,
            at,
            turn,
        };
        let after = serde_json::to_value(&entry).unwrap_or(Value::Null);
        self.introduced.insert(id.to_owned(), entry);
        Ok(Applied::new(Value::Null, after))
    }

    /// `thread` (or `set`) a known thread's stakes.
    fn apply_thread_stakes(&mut self, op: &StateOp, id: &str) -> Result<Applied, Refusal> {
        let stakes = required(op)?.clone();
        let thread = self
            .threads
            .get_mut(id)
            .ok_or_else(|| Refusal::UnknownThread { id: id.to_owned() })?;
        let before = std::mem::replace(&mut thread.stakes, stakes.clone());
        Ok(Applied::new(before, stakes))
    }

    /// `set`, `increment`, `decrement` an NPC's perception of the persona
    /// (`perception`) or the persona's reputation with a faction; scores stay
    /// in −[`SCALE`]..=[`SCALE`], to a tenth.
    fn apply_standing(
        &mut self,
        op: &StateOp,
        id: &str,
        perception: bool,
    ) -> Result<Applied, Refusal> {
        let given = required(op)
            .ok()
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite() && v.abs() <= 2.0 * SCALE);
        let given = match (op.op, given) {
            (_, Some(v)) => v,
            (OpKind::Set, None) => return Err(Refusal::BadScore),
            (_, None) if op.value.is_none() => 1.0,
            (_, None) => return Err(Refusal::BadScoreChange),
        };
        let scores = if perception {
            if !self.characters.contains_key(id) {
                return Err(self.unknown_character(id));
            }
            &mut self.perception
        } else {
            if !self.reputation.contains_key(id) {
                return Err(Refusal::UnknownFaction {
                    id: id.to_owned(),
                    known: keys(self.reputation.keys()),
                });
            }
            &mut self.reputation
        };
        let old = scores.get(id).copied().unwrap_or(0.0);
        let new = match op.op {
            OpKind::Set => given,
            OpKind::Decrement => old - given,
            _ => old + given,
        };
        let new = (new.clamp(-SCALE, SCALE) * 10.0).round() / 10.0;
        scores.insert(id.to_owned(), new);
        Ok(Applied::new(old, new))
    }

    fn character_mut(&mut self, id: &str) -> Result<&mut CharacterState, Refusal> {
        if !self.characters.contains_key(id) {
            return Err(self.unknown_character(id));
        }
        Ok(self.characters.get_mut(id).expect("checked above"))
    }

    fn unknown_character(&self, id: &str) -> Refusal {
        Refusal::UnknownCharacter {
            id: id.to_owned(),
            known: keys(self.characters.keys()),
        }
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

fn required(op: &StateOp) -> Result<&Value, Refusal> {
    op.value
        .as_ref()
        .filter(|v| !v.is_null())
        .ok_or(Refusal::MissingValue { op: op.op.name() })
}

/// The amount of an increment, decrement or tick: a positive integer, 1 when absent.
fn amount(op: &StateOp) -> Result<i64, Refusal> {
    match &op.value {
        None | Some(Value::Null) => Ok(1),
        Some(v) => match v.as_i64() {
            Some(n) if n > 0 && n <= 1_000_000 => Ok(n),
            _ => Err(Refusal::BadAmount {
                op: op.op.name(),
                value: v.clone(),
            }),
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

    fn scene_path(&self, path: &[String]) -> Result<(), Refusal> {
        let parts: Vec<&str> = path.iter().map(String::as_str).collect();
        // The engine's own field, in every ruleset's scene.
        if parts.first() == Some(&WHEREABOUTS) {
            return Ok(());
        }
        if schema_at(&self.ruleset.scene_state_schema, &parts).is_none() {
            return Err(Refusal::UnknownSceneField {
                ruleset: self.ruleset.id.clone(),
                field: path.join("."),
            });
        }
        Ok(())
    }

    fn stat_name(&self, stat: &str) -> Result<(), Refusal> {
        if schema_at(&self.ruleset.character_stat_schema, &[stat]).is_none() {
            return Err(Refusal::UnknownStat {
                ruleset: self.ruleset.id.clone(),
                stat: stat.to_owned(),
                known: self.ruleset.stat_names().join(", "),
            });
        }
        Ok(())
    }

    fn scene(&self, scene: &Map<String, Value>) -> Result<(), Refusal> {
        let Some(validator) = &self.scene else {
            return Ok(());
        };
        let value = Value::Object(scene.clone());
        match validator.iter_errors(&value).next() {
            Some(e) => Err(Refusal::InvalidScene(format!("{}{e}", at(&e)))),
            None => Ok(()),
        }
    }

    fn stats(&self, character: &str, stats: &Map<String, Value>) -> Result<(), Refusal> {
        let Some(validator) = &self.stats else {
            return Ok(());
        };
        let value = Value::Object(stats.clone());
        match validator.iter_errors(&value).next() {
            Some(e) => Err(Refusal::InvalidStats {
                character: character.to_owned(),
                detail: format!("{}{e}", at(&e)),
            }),
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

/// A trigger (as `Change::triggered` words it, below) as the story tells it:
/// what happens, without the rules' bookkeeping ("clock `The Sallow in spate` reached 2: Water over the
/// steps" → "Water over the steps").
pub fn told(trigger: &str) -> String {
    let what = trigger
        .split_once(": ")
        .filter(|(head, _)| head.contains("reached"))
        .map_or(trigger, |(_, what)| what);
    let what = what.split(" (`").next().unwrap_or(what);
    what.trim().to_owned()
}

fn at(e: &jsonschema::ValidationError) -> String {
    let path = e.instance_path().to_string();
    if path.is_empty() {
        String::new()
    } else {
        format!("{} ", path.trim_start_matches('/').replace('/', "."))
    }
}

#[cfg(test)]
mod tests {
    use super::told;

    #[test]
    fn a_trigger_is_told_without_its_bookkeeping() {
        assert_eq!(
            told("clock `The Sallow in spate` reached 2: Water over the quay steps."),
            "Water over the quay steps."
        );
        assert_eq!(
            told(
                "`scene.failure_streak` reached 3: A binding consequence lands. (`scene.failure_streak` is now 0)"
            ),
            "A binding consequence lands."
        );
        assert_eq!(told("The tide turns: at last."), "The tide turns: at last.");
    }
}
