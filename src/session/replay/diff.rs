//! Where a replayed turn differs from its recording, area by area.

use serde::Serialize;
use serde_json::Value;

use super::Recording;
use crate::llm::CallRecord;
use crate::session::turn::{ActivationRoll, TurnResult};
use crate::store::{Scene, StoredTurn};

/// What part of a turn differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Area {
    /// A rendered prompt (the messages a model call was sent).
    Prompt,
    Messages,
    Dice,
    NpcActivation,
    /// The state operations applied.
    Ops,
    World,
    Choices,
    Skills,
}

impl Area {
    pub fn name(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Messages => "messages",
            Self::Dice => "dice",
            Self::NpcActivation => "npc activation",
            Self::Ops => "ops",
            Self::World => "world",
            Self::Choices => "choices",
            Self::Skills => "skills",
        }
    }
}

/// One difference between a replayed turn and its recording.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub area: Area,
    pub detail: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.area.name(), self.detail)
    }
}

fn differ(area: Area, detail: String) -> Difference {
    Difference { area, detail }
}

/// Where the replayed `result` differs from what `turn` stored (`scene`: the
/// scene it made).
pub(super) fn differences(
    recording: &Recording,
    turn: &StoredTurn,
    scene: &Scene,
    result: &TurnResult,
) -> Vec<Difference> {
    let mut out = prompts(&recording.records, &result.records);
    if result.skills != recording.attempts {
        let json = |a| serde_json::to_value(a).unwrap_or_default();
        out.push(differ(
            Area::Skills,
            format!(
                "{} plans recorded, {} replayed differently ({})",
                recording.attempts.len(),
                result.skills.len(),
                first_difference(&json(&recording.attempts), &json(&result.skills), "")
            ),
        ));
    }
    let said = |m: &crate::transcript::Message| {
        (m.owner.clone(), m.kind.name().to_owned(), m.content.clone())
    };
    let stored: Vec<_> = turn.messages.iter().map(said).collect();
    let replayed: Vec<_> = result.messages.iter().map(said).collect();
    for (i, (a, b)) in stored.iter().zip(&replayed).enumerate() {
        if a != b {
            out.push(differ(
                Area::Messages,
                format!("message {i}: stored {a:?}, replayed {b:?}"),
            ));
        }
    }
    if stored.len() != replayed.len() {
        out.push(differ(
            Area::Messages,
            format!(
                "{} messages stored, {} replayed",
                stored.len(),
                replayed.len()
            ),
        ));
    }
    let rolls: Vec<Value> = result
        .rolls
        .iter()
        .map(|r| serde_json::to_value(r).unwrap_or_default())
        .collect();
    if rolls != recording.rolls {
        out.push(differ(
            Area::Dice,
            format!(
                "stored {}, replayed {}",
                Value::from(recording.rolls.clone()),
                Value::from(rolls)
            ),
        ));
    }
    if let Some(activation) = &recording.activation
        && *activation != result.activation
    {
        out.push(differ(
            Area::NpcActivation,
            format!(
                "stored {}, replayed {}",
                activation_words(activation),
                activation_words(&result.activation)
            ),
        ));
    }
    let changes = serde_json::to_value(&result.changes).unwrap_or_default();
    if changes != recording.changes {
        out.push(differ(
            Area::Ops,
            format!(
                "{} state changes stored, {} replayed ({})",
                recording.changes.as_array().map_or(0, Vec::len),
                result.changes.len(),
                first_difference(&recording.changes, &changes, "")
            ),
        ));
    }
    let mut world = result.world.clone();
    let scene_state = std::mem::take(&mut world.scene);
    if world != scene.world || scene_state != scene.state {
        out.push(differ(
            Area::World,
            "the world after the turn differs".into(),
        ));
    }
    let offered = crate::session::save_rows::offered_choices(&turn.result);
    if offered != result.choices {
        out.push(differ(
            Area::Choices,
            format!("stored {offered:?}, replayed {:?}", result.choices),
        ));
    }
    out
}

/// The calls whose rendered prompt differs: each replayed call is compared
/// with the recorded call of the same stage and rank (calls on two lanes
/// finish in any order), by the prompt version and the messages of its
/// first attempt.
fn prompts(stored: &[CallRecord], replayed: &[CallRecord]) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut stages: Vec<&str> = stored.iter().map(|r| r.stage.as_str()).collect();
    stages.extend(replayed.iter().map(|r| r.stage.as_str()));
    stages.sort_unstable();
    stages.dedup();
    for stage in stages {
        let of = |records: &[CallRecord]| -> Vec<CallRecord> {
            records
                .iter()
                .filter(|r| r.stage == stage)
                .cloned()
                .collect()
        };
        let (a, b) = (of(stored), of(replayed));
        for (rank, (a, b)) in a.iter().zip(&b).enumerate() {
            let call = format!("`{stage}` call {}", rank + 1);
            if a.prompt_version != b.prompt_version {
                out.push(differ(
                    Area::Prompt,
                    format!(
                        "{call}: rendered at {}, recorded at {}",
                        b.prompt_version, a.prompt_version
                    ),
                ));
            }
            let first = |r: &CallRecord| r.attempts.first().map(|a| a.messages.clone());
            if let (Some(x), Some(y)) = (first(a), first(b))
                && x != y
            {
                out.push(differ(
                    Area::Prompt,
                    format!("{call}: {}", where_differs(&x, &y)),
                ));
            }
        }
        if a.len() != b.len() {
            out.push(differ(
                Area::Prompt,
                format!(
                    "`{stage}`: {} calls recorded, {} replayed",
                    a.len(),
                    b.len()
                ),
            ));
        }
    }
    out
}

/// "message 1 at character 312: recorded «…the quay…», rendered «…the pier…»".
fn where_differs(stored: &[crate::llm::Message], replayed: &[crate::llm::Message]) -> String {
    if stored.len() != replayed.len() {
        return format!(
            "{} messages recorded, {} rendered",
            stored.len(),
            replayed.len()
        );
    }
    for (i, (a, b)) in stored.iter().zip(replayed).enumerate() {
        if a == b {
            continue;
        }
        let at = a
            .content
            .char_indices()
            .zip(b.content.chars())
            .find(|((_, x), y)| x != y)
            .map_or_else(|| a.content.len().min(b.content.len()), |((at, _), _)| at);
        let window = |text: &str| {
            let mut start = at.saturating_sub(30).min(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (at + 50).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text[start..end].replace('\n', " ")
        };
        return format!(
            "message {i} at character {at}: recorded «{}», rendered «{}»",
            window(&a.content),
            window(&b.content)
        );
    }
    "the messages differ".into()
}

/// Where two JSON values first differ: "at /0/run/result/events/2: stored …, replayed …".
fn first_difference(stored: &Value, replayed: &Value, at: &str) -> String {
    match (stored, replayed) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                if x != y {
                    return first_difference(x, y, &format!("{at}/{k}"));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                if x != y {
                    return first_difference(x, y, &format!("{at}/{i}"));
                }
            }
        }
        _ => {}
    }
    let short = |v: &Value| {
        let t = v.to_string();
        if t.chars().count() > 80 {
            format!("{}…", t.chars().take(80).collect::<String>())
        } else {
            t
        }
    };
    format!(
        "at {}: stored {}, replayed {}",
        if at.is_empty() { "/" } else { at },
        short(stored),
        short(replayed)
    )
}

/// "Mara 12/40 acts, Odo 77/20 stays" for a list of activation rolls.
fn activation_words(rolls: &[ActivationRoll]) -> String {
    if rolls.is_empty() {
        return "none".into();
    }
    rolls
        .iter()
        .map(|r| {
            let acts = if r.roll <= r.threshold {
                "acts"
            } else {
                "stays"
            };
            format!("{} {}/{} {acts}", r.npc, r.roll, r.threshold)
        })
        .collect::<Vec<_>>()
        .join(", ")
}
