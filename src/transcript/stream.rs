//! The message stream (seed 004) and the visibility matrix deciding what each stage sees.
//!
//! Messages are append-only, each with an owner, a kind, a turn and a sequence.
//! Every model call appends exactly one message; the orchestrator appends
//! scene markers and system notes. A stage never reads the stream directly:
//! it gets [`view`] for its [`Stage`], which applies seed 004's matrix:
//!
//! | stage | `scene_marker` | narration | intention | thought |
//! |---|---|---|---|---|
//! | persona / NPC intent | no | all past | own past | own |
//! | narrator | yes | all past | the one it resolves | no |
//! | persona / character extractor | no | before the round | its last own only | own |
//! | lore extractor | no | the new one only | no | no |
//!
//! System messages (extractor summaries, injected context) reach no stage's
//! message view and no player view.

use serde::{Deserialize, Serialize};

/// Who produced a message: `system`, `narrator`, the persona's id or a character's id.
pub const SYSTEM: &str = "system";
pub const NARRATOR: &str = "narrator";
/// The owner of a narration the engine wrote itself (#41: a blocked move, a
/// consequence the narrator left untold): no model's words.
pub const ENGINE: &str = "engine";

/// What a message carries.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Narration,
    Intention,
    Thought,
    SceneMarker,
    System,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Narration,
        Kind::Intention,
        Kind::Thought,
        Kind::SceneMarker,
        Kind::System,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Narration => "narration",
            Kind::Intention => "intention",
            Kind::Thought => "thought",
            Kind::SceneMarker => "scene_marker",
            Kind::System => "system",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Where a message sits: the player turn that produced it, and its position in that turn.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageId {
    pub turn_id: u64,
    pub seq: u32,
}

/// One message of the stream.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Message {
    pub id: MessageId,
    pub owner: String,
    pub kind: Kind,
    pub content: String,
    /// A whispered intention's addressee (seed 004): the narrator sees it; nobody else does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// A pipeline stage asking for its view of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The persona (player character) forming an intention.
    PersonaIntent { persona: String },
    /// An NPC forming an intention.
    NpcIntent { npc: String },
    /// The narrator resolving exactly one intention.
    Narrator { resolving: MessageId },
    /// The persona extractor for the persona's intention `intention`.
    PersonaExtractor {
        persona: String,
        intention: MessageId,
    },
    /// A character extractor for an NPC's intention `intention`.
    CharacterExtractor { npc: String, intention: MessageId },
    /// The lore extractor reading one new narration.
    LoreExtractor { narration: MessageId },
}

impl Stage {
    /// The stage's name as prompts and records use it.
    pub fn name(&self) -> &'static str {
        match self {
            Stage::PersonaIntent { .. } => "persona_intent",
            Stage::NpcIntent { .. } => "npc_intent",
            Stage::Narrator { .. } => "narrator",
            Stage::PersonaExtractor { .. } => "persona_extractor",
            Stage::CharacterExtractor { .. } => "character_extractor",
            Stage::LoreExtractor { .. } => "lore_extractor",
        }
    }

    /// Whether this is an extractor (which alone sees latent states).
    pub fn is_extractor(&self) -> bool {
        matches!(
            self,
            Stage::PersonaExtractor { .. }
                | Stage::CharacterExtractor { .. }
                | Stage::LoreExtractor { .. }
        )
    }
}

/// The messages `stage` may see, in stream order.
/// The narrations among `messages`, in order (what the player reads of a turn).
pub fn narrations(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter(|m| m.kind == Kind::Narration)
        .map(|m| m.content.as_str())
        .collect()
}

pub fn view<'m>(stream: &'m [Message], stage: &Stage) -> Vec<&'m Message> {
    stream.iter().filter(|m| visible(m, stage)).collect()
}

/// Seed 004's matrix for one message.
pub fn visible(m: &Message, stage: &Stage) -> bool {
    match stage {
        Stage::PersonaIntent { persona: me } | Stage::NpcIntent { npc: me } => match m.kind {
            Kind::Narration => true,
            Kind::Intention | Kind::Thought => &m.owner == me,
            Kind::SceneMarker | Kind::System => false,
        },
        Stage::Narrator { resolving } => match m.kind {
            Kind::SceneMarker | Kind::Narration => m.id < *resolving,
            Kind::Intention => m.id == *resolving,
            Kind::Thought | Kind::System => false,
        },
        Stage::PersonaExtractor {
            persona: me,
            intention,
        }
        | Stage::CharacterExtractor { npc: me, intention } => match m.kind {
            // Past narrations only: not the one being written for this intention.
            Kind::Narration => m.id < *intention,
            Kind::Intention => m.id == *intention && &m.owner == me,
            Kind::Thought => &m.owner == me && m.id <= *intention,
            Kind::SceneMarker | Kind::System => false,
        },
        Stage::LoreExtractor { narration } => m.kind == Kind::Narration && m.id == *narration,
    }
}

/// What the player reads: narrations, and their persona's own intentions and
/// thoughts; in debug (sandbox) mode every intention as well.
pub fn player_view<'m>(stream: &'m [Message], persona: &str, debug: bool) -> Vec<&'m Message> {
    stream
        .iter()
        .filter(|m| match m.kind {
            Kind::Narration => true,
            Kind::Intention => debug || m.owner == persona,
            Kind::Thought => m.owner == persona,
            Kind::SceneMarker | Kind::System => false,
        })
        .collect()
}

/// A character's or persona's state entry, gated by visibility level (seed 004).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StateEntry {
    pub name: String,
    pub value: serde_json::Value,
    /// Below 6: latent (extractors only); 6 and above: manifest (intent and narrator too).
    pub level: u8,
}

/// The level from which a state is manifest.
pub const MANIFEST_LEVEL: u8 = 6;

impl StateEntry {
    pub fn is_manifest(&self) -> bool {
        self.level >= MANIFEST_LEVEL
    }
}

/// The states a stage may be given: extractors see all, other stages only manifest ones.
pub fn states_for<'s>(stage: &Stage, states: &'s [StateEntry]) -> Vec<&'s StateEntry> {
    states
        .iter()
        .filter(|s| stage.is_extractor() || s.is_manifest())
        .collect()
}

/// Appends messages with the next `turn_id`/`seq` (seed 004: the orchestrator assigns both).
#[derive(Clone, Debug, Default)]
pub struct Stream {
    pub messages: Vec<Message>,
}

impl Stream {
    pub fn new(messages: Vec<Message>) -> Self {
        Self { messages }
    }

    /// The turn id the next player submission gets.
    pub fn next_turn(&self) -> u64 {
        self.messages.last().map_or(1, |m| m.id.turn_id + 1)
    }

    /// Append a message to turn `turn_id` (which must not be older than the last message's).
    pub fn push(
        &mut self,
        turn_id: u64,
        owner: &str,
        kind: Kind,
        content: impl Into<String>,
        target: Option<String>,
    ) -> MessageId {
        let seq = match self.messages.last() {
            Some(last) if last.id.turn_id == turn_id => last.id.seq + 1,
            _ => 1,
        };
        let id = MessageId { turn_id, seq };
        self.messages.push(Message {
            id,
            owner: owner.to_owned(),
            kind,
            content: content.into(),
            target,
        });
        id
    }
}
