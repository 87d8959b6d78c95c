//! What each turn stage answers, typed: one serde value per contract in `schemas/stages/`.
//!
//! The gateway checks an answer against its JSON Schema (and the engine's own
//! checks below) before the turn sees it; the turn then reads it as one of
//! these types, never by string index. `tests/schema.rs` proves each type reads
//! every answer its contract admits (same fields, nothing required that the
//! contract leaves out, every JSON type and enum value the contract allows).

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::campaign::Campaign;
use crate::llm::LlmError;
use crate::rules::StateOp;

/// `resolve`: can the move happen here, and which check does it roll.
#[derive(Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Resolution {
    pub possible: bool,
    pub blocked_reason: String,
    pub clarification_question: String,
    /// A check of the ruleset, or empty for no roll.
    pub check: String,
    /// The stat the check binds, or empty.
    pub stat: String,
    pub modifiers: Vec<ProposedModifier>,
}

/// A situational modifier the referee proposes (the engine clamps it to the check's range).
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProposedModifier {
    pub name: String,
    pub value: i64,
}

impl Resolution {
    /// The check to roll, if the referee named one.
    pub fn check(&self) -> Option<&str> {
        Some(self.check.trim()).filter(|c| !c.is_empty())
    }

    /// The stat to roll with, if named.
    pub fn stat(&self) -> Option<&str> {
        Some(self.stat.as_str()).filter(|s| !s.is_empty())
    }
}

/// `extract`: what one intention changes for its owner, and what others noticed.
#[derive(Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Extraction {
    pub state_ops: Vec<StateOp>,
    pub observations: Vec<Noticed>,
}

/// What a character present noticed (an observation to come).
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Noticed {
    pub character_id: String,
    pub content: String,
    pub importance: u8,
}

/// `npc_intent`: what a character sets out to do, and what it keeps to itself.
#[derive(Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NpcIntent {
    pub thought: String,
    pub intention: String,
}

/// `lore_extract`: facts a narration establishes or changes.
#[derive(Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoreFacts {
    pub facts: Vec<LoreFact>,
}

/// One fact as the lorebook keeper states it.
#[derive(Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoreFact {
    pub subject: String,
    pub predicate: String,
    pub object: String,
}

/// `choices`: the player's next options.
#[derive(Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Choices {
    pub choices: Vec<String>,
}

/// `narrate`: prose, or (for a drafted call) one prose text per draft.
#[derive(Clone, Debug, PartialEq)]
pub enum Narration {
    Text(String),
    Drafts(Vec<String>),
}

impl Narration {
    /// A narrator's answer: prose has no contract, so any value reads as text.
    pub fn of(value: Value) -> Self {
        match value {
            Value::String(text) => Narration::Text(text),
            Value::Array(drafts) => Narration::Drafts(
                drafts
                    .into_iter()
                    .map(|d| match d {
                        Value::String(text) => text,
                        _ => String::new(),
                    })
                    .collect(),
            ),
            other => Narration::Text(other.to_string()),
        }
    }
}

/// Reads a checked answer as its stage's type. It fails only when a type and
/// its contract disagree (a bug `tests/schema.rs` would catch), and then fails
/// the call as invalid output, never the game.
pub fn read<T: DeserializeOwned>(stage: &str, value: Value) -> Result<T, LlmError> {
    serde_json::from_value(value).map_err(|e| LlmError::InvalidOutput {
        stage: stage.to_owned(),
        model_key: String::new(),
        reason: format!("the answer does not read as the stage's type: {e}"),
    })
}

/// The resolve contract's engine checks: a named check exists, its stat fits.
pub fn check_resolution(campaign: &Campaign, answer: &Value) -> Result<(), Vec<String>> {
    let resolution: Resolution = serde_json::from_value(answer.clone())
        .map_err(|e| vec![format!("the answer does not read as a resolution: {e}")])?;
    let ruleset = &campaign.ruleset;
    let Some(id) = resolution.check() else {
        return Ok(());
    };
    let Ok(check) = ruleset.check(Some(id)) else {
        let ids: Vec<&str> = ruleset
            .mechanics_guidance
            .checks
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        return Err(vec![format!(
            "/check: no check `{id}`; the checks are {}",
            ids.join(", ")
        )]);
    };
    if check.bind.is_some() {
        let stat = resolution.stat.as_str();
        let allowed = if check.bind_to.is_empty() {
            ruleset.stat_names()
        } else {
            check.bind_to.clone()
        };
        if !allowed.iter().any(|s| s == stat) {
            return Err(vec![format!(
                "/stat: check `{id}` needs one of {}, not `{stat}`",
                allowed.join(", ")
            )]);
        }
    }
    // Modifiers the check does not take are dropped, and values clamped, by the engine (`on_resolve`).
    Ok(())
}

/// An extraction's observations must name characters of the campaign.
pub fn check_observers(known: &[String], answer: &Value) -> Result<(), Vec<String>> {
    let extraction: Extraction = serde_json::from_value(answer.clone())
        .map_err(|e| vec![format!("the answer does not read as an extraction: {e}")])?;
    let errors: Vec<String> = extraction
        .observations
        .iter()
        .map(|o| o.character_id.as_str())
        .filter(|id| !known.iter().any(|k| k == id))
        .map(|id| {
            format!(
                "/observations: `{id}` is not a character here ({})",
                known.join(", ")
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
