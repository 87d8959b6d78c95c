//! The vocabulary of state operations: op kinds, paths parsed into targets, and applied changes.
//!
//! An operation is `{"op": OP, "path": PATH, "value": VALUE}`, the shape the
//! ruleset-resolution contract (`schemas/stages/ruleset_resolution.schema.json`)
//! lets a model propose (seed 003 "state changes are typed engine operations",
//! seed 001 `StateDiff`). The path parses into a typed [`Target`], which says
//! which ops apply to it:
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
//! | `set`, `increment`, `decrement` | `perception.<npc>`, `reputation.<faction>` | a number; scores stay in −[`SCALE`]..=[`SCALE`] |
//! | `introduce` | `people.<id>`, `items.<id>`, `places.<id>`, `threads.<id>` | `{name, description}`: someone, something, somewhere or a thread new to the world (#41) |
//!
//! Applying them to the world is `rules/apply.rs`'s; this file names them only.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The bounds of every standing score (perception, reputation): −100..=100.
pub const SCALE: f64 = 100.0;

/// Relation axes (seed 003 "Relation Tracking").
pub const RELATION_AXES: [&str; 3] = ["trust", "tension", "closeness"];
/// Thread statuses.
pub const THREAD_STATUSES: [&str; 5] = ["open", "active", "resolved", "failed", "abandoned"];

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
    Introduce,
}

impl OpKind {
    /// Every op name, for error messages.
    pub const ALL: [&str; 12] = [
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
        "introduce",
    ];

    pub fn name(self) -> &'static str {
        Self::ALL[self as usize]
    }
}

/// Why untrusted JSON is not a state operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpParseError {
    #[error("unknown op `{op}`; the ops are {}", OpKind::ALL.join(", "))]
    UnknownOp { op: String },
    /// Not the op's shape (a missing or unknown field, a value of the wrong type).
    #[error("{0}")]
    Shape(String),
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
    pub fn from_value(value: &Value) -> Result<Self, OpParseError> {
        serde_json::from_value(value.clone()).map_err(|e| {
            let op = value.get("op").and_then(Value::as_str).unwrap_or("");
            if !op.is_empty() && !OpKind::ALL.contains(&op) {
                OpParseError::UnknownOp { op: op.to_owned() }
            } else {
                OpParseError::Shape(e.to_string())
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

/// Why a dotted path names nothing an op can change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("`{path}` has an empty segment")]
    EmptySegment { path: String },
    #[error(
        "unknown path `{path}`; paths are scene.<field>, characters.<id>.stats.<stat>, \
         characters.<id>.tags, clocks.<id>, relations.<a>.<b>.<axis>, \
         inventory.<owner>.<item>, facts.<subject>.<predicate>, threads.<id>.status|stakes, \
         perception.<npc>, reputation.<faction>, people|items|places|threads.<id> (introduce)"
    )]
    Unknown { path: String },
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
    /// Someone, something, somewhere or a thread new to the world (#41).
    New {
        kind: NewKind,
        id: String,
    },
}

/// What an `introduce` op brings into the world.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NewKind {
    Person,
    Item,
    Place,
    Thread,
}

impl NewKind {
    /// The path's first segment for this kind.
    pub fn segment(self) -> &'static str {
        match self {
            NewKind::Person => "people",
            NewKind::Item => "items",
            NewKind::Place => "places",
            NewKind::Thread => "threads",
        }
    }
}

impl Target {
    /// Parse a dotted path, or say which shapes are allowed.
    pub fn parse(path: &str) -> Result<Self, PathError> {
        let parts: Vec<&str> = path.split('.').collect();
        if parts.iter().any(|p| p.trim().is_empty()) {
            return Err(PathError::EmptySegment {
                path: path.to_owned(),
            });
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
            [segment, id] if ["people", "items", "places", "threads"].contains(segment) => {
                let kind = match *segment {
                    "people" => NewKind::Person,
                    "items" => NewKind::Item,
                    "places" => NewKind::Place,
                    _ => NewKind::Thread,
                };
                Target::New {
                    kind,
                    id: owned(id),
                }
            }
            _ => {
                return Err(PathError::Unknown {
                    path: path.to_owned(),
                });
            }
        })
    }

    /// Whether `kind` applies to this target (the table in this file's header).
    pub fn accepts(&self, kind: OpKind) -> bool {
        use OpKind::{
            AddFact, AddTag, Decrement, Increment, Introduce, Inventory, Relation, RemoveTag, Set,
            Thread, TickClock, UpdateFact,
        };
        match self {
            Target::Scene(_)
            | Target::Stat { .. }
            | Target::Perception(_)
            | Target::Reputation(_) => matches!(kind, Set | Increment | Decrement),
            Target::Tags { .. } => matches!(kind, AddTag | RemoveTag),
            Target::Clock(_) => matches!(kind, TickClock | Increment | Decrement),
            Target::Relation { .. } => matches!(kind, Relation | Increment | Decrement),
            Target::Inventory { .. } => matches!(kind, Inventory | Increment | Decrement),
            Target::Fact { .. } => matches!(kind, AddFact | UpdateFact),
            Target::ThreadStatus(_) | Target::ThreadStakes(_) => matches!(kind, Thread | Set),
            Target::New { .. } => kind == Introduce,
        }
    }

    /// What the target is, in words (`a clock`), for refusals.
    pub fn describe(&self) -> &'static str {
        match self {
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
            Target::New { .. } => "something new to the world",
        }
    }
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

/// The sub-schema a dotted path names in an object schema (`properties` all the way down).
pub fn schema_at<'a>(schema: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(schema, |s, key| s.get("properties")?.get(*key))
}

/// The value at a nested path of an object, if there is one.
pub(super) fn get_in<'a>(map: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = map.get(first)?;
    for key in rest {
        value = value.get(key)?;
    }
    Some(value)
}

/// Set a nested value, creating objects on the way; returns the old value (or null).
pub(super) fn set_in(map: &mut Map<String, Value>, path: &[String], value: Value) -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_into_targets_or_say_what_is_allowed() {
        assert_eq!(
            Target::parse("relations.mara.player.trust"),
            Ok(Target::Relation {
                a: "mara".into(),
                b: "player".into(),
                axis: "trust".into()
            })
        );
        assert_eq!(
            Target::parse("scene.weather.wind"),
            Ok(Target::Scene(vec!["weather".into(), "wind".into()]))
        );
        assert!(matches!(
            Target::parse("clocks..tide"),
            Err(PathError::EmptySegment { .. })
        ));
        let err = Target::parse("weather.today").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("unknown path `weather.today`; paths are scene.<field>")
        );
    }

    #[test]
    fn each_target_takes_the_ops_of_its_row() {
        let clock = Target::Clock("tide".into());
        assert!(clock.accepts(OpKind::TickClock) && clock.accepts(OpKind::Decrement));
        assert!(!clock.accepts(OpKind::Set) && !clock.accepts(OpKind::AddTag));
        let tags = Target::Tags {
            character: "mara".into(),
        };
        assert!(tags.accepts(OpKind::RemoveTag) && !tags.accepts(OpKind::Increment));
        let stakes = Target::ThreadStakes("ledger".into());
        assert!(stakes.accepts(OpKind::Set) && stakes.accepts(OpKind::Thread));
        assert!(!stakes.accepts(OpKind::AddFact));
    }

    #[test]
    fn untrusted_ops_name_an_unknown_op_or_the_shape_at_fault() {
        let err =
            StateOp::from_value(&serde_json::json!({"op": "explode", "path": "x"})).unwrap_err();
        assert_eq!(
            err,
            OpParseError::UnknownOp {
                op: "explode".into()
            }
        );
        let err = StateOp::from_value(&serde_json::json!({"op": "set"})).unwrap_err();
        assert!(
            matches!(&err, OpParseError::Shape(m) if m.contains("path")),
            "{err}"
        );
    }

    #[test]
    fn nested_scene_values_are_set_and_read_through_objects() {
        let mut scene = Map::new();
        let path = ["weather".to_owned(), "wind".to_owned()];
        assert_eq!(set_in(&mut scene, &path, 3.into()), Value::Null);
        assert_eq!(get_in(&scene, &path), Some(&Value::from(3)));
        assert_eq!(set_in(&mut scene, &path, 4.into()), Value::from(3));
    }
}
