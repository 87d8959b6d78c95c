//! Why state operations were refused: one op's [`Refusal`], and the batch's [`StateOpError`].
//!
//! The words are what the model and the player read (a refused op goes back
//! to the model, and shows in the overlay), so each names what is wrong and
//! what would be right.

use serde_json::Value;

use super::op::{OpParseError, PathError, RELATION_AXES, THREAD_STATUSES};

/// Why one op of a batch was refused. The words are what the model and the
/// player read, so they name what is wrong and what would be right.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error(transparent)]
    Parse(#[from] OpParseError),
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("`{op}` does not apply to {target}")]
    NotApplicable {
        op: &'static str,
        target: &'static str,
    },
    #[error("`{op}` needs a value")]
    MissingValue { op: &'static str },
    #[error("`{op}` takes a positive whole amount, not {value}")]
    BadAmount { op: &'static str, value: Value },
    #[error("overflow")]
    Overflow,
    #[error("ruleset `{ruleset}` declares no scene field `{field}`")]
    UnknownSceneField { ruleset: String, field: String },
    #[error("`{path}` is {value}, not an integer")]
    NotAnInteger { path: String, value: Value },
    /// The scene would not fit the ruleset's scene state schema.
    #[error("the scene would be invalid: {0}")]
    InvalidScene(String),
    #[error("ruleset `{ruleset}` has no stat `{stat}` (stats: {known})")]
    UnknownStat {
        ruleset: String,
        stat: String,
        known: String,
    },
    #[error("`{character}`'s stats would be invalid: {detail}")]
    InvalidStats { character: String, detail: String },
    #[error("no character `{id}` (characters: {known})")]
    UnknownCharacter { id: String, known: String },
    #[error("`{character}` has no integer stat `{stat}`")]
    NoIntegerStat { character: String, stat: String },
    #[error("a tag is a non-empty string")]
    BadTag,
    #[error("`{character}` has no tag `{tag}`")]
    NoSuchTag { character: String, tag: String },
    #[error("no clock `{id}` (clocks: {known})")]
    UnknownClock { id: String, known: String },
    #[error("unknown relation axis `{axis}` (axes: {})", RELATION_AXES.join(", "))]
    UnknownAxis { axis: String },
    #[error("a relation needs two characters, not `{id}` twice")]
    SelfRelation { id: String },
    #[error("a relation change is an integer")]
    BadRelationChange,
    #[error("{axis} between `{a}` and `{b}` would be {value}, outside {lo}..={hi}")]
    RelationOutOfRange {
        axis: String,
        a: String,
        b: String,
        value: i64,
        lo: i64,
        hi: i64,
    },
    #[error("an inventory change is an integer")]
    BadInventoryChange,
    #[error("`{owner}` holds {held} `{item}`, cannot lose {lose}")]
    NotEnoughHeld {
        owner: String,
        item: String,
        held: i64,
        lose: i64,
    },
    #[error("quantity too large")]
    QuantityTooLarge,
    #[error("`{subject}` already has a `{predicate}` fact; use update_fact")]
    FactExists { subject: String, predicate: String },
    #[error("`{subject}` has no `{predicate}` fact to update; use add_fact")]
    NoSuchFact { subject: String, predicate: String },
    #[error("{value} is not a thread status ({})", THREAD_STATUSES.join(", "))]
    BadThreadStatus { value: Value },
    #[error("no thread `{id}`; a new thread starts with status `open`")]
    NewThreadNotOpen { id: String },
    #[error("no thread `{id}`")]
    UnknownThread { id: String },
    #[error("a score is a number in -100..=100")]
    BadScore,
    #[error("a score change is a number in -200..=200")]
    BadScoreChange,
    #[error("no faction `{id}` (factions: {known})")]
    UnknownFaction { id: String, known: String },
    #[error(
        "an introduction needs a new snake_case id, a name of 2 to 60 characters and a description of at most 300"
    )]
    BadIntroduction,
    #[error("`{id}` is already in the world; introduce something new")]
    AlreadyKnown { id: String },
}

/// Why a batch of operations was refused; nothing of the batch was applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("state op {index} (`{op}`) refused: {reason}")]
pub struct StateOpError {
    /// Position of the refused op in its batch (0-based).
    pub index: usize,
    pub op: String,
    /// The refusal in words, as the model and the player read it.
    pub reason: String,
    /// The refusal, typed.
    pub refusal: Box<Refusal>,
}

impl StateOpError {
    pub(super) fn new(index: usize, op: String, refusal: Refusal) -> Self {
        Self {
            index,
            op,
            reason: refusal.to_string(),
            refusal: Box::new(refusal),
        }
    }
}
