//! Typed readings of the node fields several stages read: impacts, analyses, overlays.
//!
//! Node data stays a JSON map in `graph.db`: seed 000's ownership rules, the author's edits
//! at a gate and `graph.yaml` all work field by field. These are the shared readings of it.
//! They are lenient, as the data may be an author's edit: a field of another shape reads as
//! absent, and a list item that does not read is skipped (`Node::items`).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::graph::Node;

/// A field read on its own: of another shape, it reads as absent.
fn lenient<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<Option<T>, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(T::deserialize(&value).ok())
}

/// A list of strings, its other items skipped (as [`super::graph::strings`]).
fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(super::graph::strings(Some(&Value::deserialize(d)?)))
}

/// A beat's effect on a dilemma (`dilemma_impacts`: SEED's, or GROW's gap beats' none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Impact {
    #[serde(default, deserialize_with = "lenient")]
    pub dilemma_id: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub effect: Option<String>,
}

impl Impact {
    /// Whether the beat decides the dilemma here.
    pub fn commits(&self) -> bool {
        self.effect.as_deref() == Some("commits")
    }
}

/// A beat's impacts.
pub fn impacts(beat: &Node) -> Vec<Impact> {
    beat.items("dilemma_impacts")
}

/// A dilemma's analysis as GROW and FILL read it (SEED's `dilemma_analyses`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct Analysis {
    #[serde(default, deserialize_with = "lenient")]
    pub convergence_policy: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub payoff_budget: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pub residue_weight: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub ending_salience: Option<String>,
    /// The tone a high-salience dilemma's endings take (FILL's prose contracts).
    #[serde(default, deserialize_with = "lenient")]
    pub ending_tone: Option<String>,
}

/// A dilemma's analysis (all absent when it has none).
pub fn analysis(dilemma: &Node) -> Analysis {
    dilemma.field("analysis").unwrap_or_default()
}

/// What a consequence changes in an entity, shown once its codewords are all held.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Overlay {
    #[serde(default, deserialize_with = "strings")]
    pub when: Vec<String>,
    #[serde(default, deserialize_with = "lenient")]
    pub details: Option<Map<String, Value>>,
}

/// An entity's overlays.
pub fn overlays(entity: &Node) -> Vec<Overlay> {
    entity.items("overlays")
}
