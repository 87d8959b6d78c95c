//! The pipeline's stages and the graph's node and edge types, with who may change what.
//!
//! Seed 000's unified graph vocabulary: the stages in order (and the last one this version
//! builds), the node and edge types, and which stage may create, change or remove each (the
//! "Stage Operations" table, no backflow).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A pipeline stage, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Dream,
    Brainstorm,
    Seed,
    Grow,
    Fill,
    Dress,
    Ship,
}

/// The last stage this version runs.
pub const LAST_BUILT: Stage = Stage::Dress;

impl Stage {
    pub const ALL: [Stage; 7] = [
        Stage::Dream,
        Stage::Brainstorm,
        Stage::Seed,
        Stage::Grow,
        Stage::Fill,
        Stage::Dress,
        Stage::Ship,
    ];

    /// The lowercase name (`dream`, `grow`, …), as in file names and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Dream => "dream",
            Stage::Brainstorm => "brainstorm",
            Stage::Seed => "seed",
            Stage::Grow => "grow",
            Stage::Fill => "fill",
            Stage::Dress => "dress",
            Stage::Ship => "ship",
        }
    }

    /// The stage after this one.
    pub fn next(self) -> Option<Stage> {
        Stage::ALL.get(self as usize + 1).copied()
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().to_uppercase())
    }
}

/// A name that is no stage, node type or edge type (the CLI's, or an edited `graph.yaml`'s).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownName {
    #[error("no stage `{0}` (stages: dream, brainstorm, seed, grow, fill, dress, ship)")]
    Stage(String),
    #[error("no node type `{0}`")]
    NodeType(String),
    #[error("no edge type `{0}`")]
    EdgeType(String),
}

impl FromStr for Stage {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Stage::ALL
            .into_iter()
            .find(|st| st.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName::Stage(s.to_owned()))
    }
}

/// The node types of seed 000's ontology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeType {
    Vision,
    Entity,
    Dilemma,
    Answer,
    Path,
    Consequence,
    Beat,
    Arc,
    Passage,
    Codeword,
    Relationship,
    Voice,
    ArtDirection,
    EntityVisual,
    IllustrationBrief,
    Illustration,
    CodexEntry,
}

impl NodeType {
    pub const ALL: [NodeType; 17] = [
        NodeType::Vision,
        NodeType::Entity,
        NodeType::Dilemma,
        NodeType::Answer,
        NodeType::Path,
        NodeType::Consequence,
        NodeType::Beat,
        NodeType::Arc,
        NodeType::Passage,
        NodeType::Codeword,
        NodeType::Relationship,
        NodeType::Voice,
        NodeType::ArtDirection,
        NodeType::EntityVisual,
        NodeType::IllustrationBrief,
        NodeType::Illustration,
        NodeType::CodexEntry,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NodeType::Vision => "vision",
            NodeType::Entity => "entity",
            NodeType::Dilemma => "dilemma",
            NodeType::Answer => "answer",
            NodeType::Path => "path",
            NodeType::Consequence => "consequence",
            NodeType::Beat => "beat",
            NodeType::Arc => "arc",
            NodeType::Passage => "passage",
            NodeType::Codeword => "codeword",
            NodeType::Relationship => "relationship",
            NodeType::Voice => "voice",
            NodeType::ArtDirection => "art_direction",
            NodeType::EntityVisual => "entity_visual",
            NodeType::IllustrationBrief => "illustration_brief",
            NodeType::Illustration => "illustration",
            NodeType::CodexEntry => "codex_entry",
        }
    }

    /// The stages that may create a node of this type.
    pub fn created_in(self) -> &'static [Stage] {
        use Stage::{Brainstorm, Dream, Dress, Fill, Grow, Seed};
        match self {
            NodeType::Vision => &[Dream],
            NodeType::Entity | NodeType::Relationship => &[Brainstorm, Seed],
            NodeType::Dilemma | NodeType::Answer => &[Brainstorm],
            NodeType::Path | NodeType::Consequence => &[Seed],
            NodeType::Beat => &[Seed, Grow],
            NodeType::Arc | NodeType::Passage | NodeType::Codeword => &[Grow],
            NodeType::Voice => &[Fill],
            NodeType::ArtDirection
            | NodeType::EntityVisual
            | NodeType::IllustrationBrief
            | NodeType::Illustration
            | NodeType::CodexEntry => &[Dress],
        }
    }

    /// Whether `stage` may change the field `field` of a node of this type:
    /// its creating stages change anything; later stages only what the seed
    /// gives them (SEED curates entities and records which answers are
    /// explored; GROW adds entity overlays from consequences, the paths'
    /// entity arcs and the beats' scene types; FILL adds prose and the
    /// entities' micro-details).
    pub fn may_change(self, stage: Stage, field: &str) -> bool {
        if self.created_in().contains(&stage) {
            return true;
        }
        match (self, stage) {
            (NodeType::Entity, Stage::Grow) => field == "overlays",
            (NodeType::Entity | NodeType::Relationship, Stage::Fill) => {
                matches!(field, "base" | "overlays")
            }
            (NodeType::Dilemma, Stage::Seed) => {
                matches!(field, "explored" | "unexplored" | "analysis")
            }
            (NodeType::Path, Stage::Grow) => field == "entity_arcs",
            (NodeType::Passage, Stage::Fill) => matches!(field, "prose" | "review"),
            _ => false,
        }
    }

    /// Whether `stage` may remove a node of this type: its creators, and
    /// GROW's final pruning of what no passage reaches.
    pub fn may_remove(self, stage: Stage) -> bool {
        self.created_in().contains(&stage)
            || (stage == Stage::Grow && matches!(self, NodeType::Entity | NodeType::Relationship))
    }
}

impl fmt::Display for NodeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NodeType {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        NodeType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownName::NodeType(s.to_owned()))
    }
}

/// The edge types: persistent ones (`PascalCase`, exported) and working ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum EdgeType {
    /// passage → passage: label, requires, grants.
    Choice,
    /// entity → passage, with a role.
    Appears,
    /// relationship → passage.
    Involves,
    /// illustration → passage.
    Depicts,
    /// codex entry → entity.
    HasEntry,
    /// beat → path.
    #[serde(rename = "belongs_to")]
    BelongsTo,
    /// dilemma → entity.
    #[serde(rename = "involves")]
    DilemmaInvolves,
    /// dilemma → answer.
    #[serde(rename = "has_answer")]
    HasAnswer,
    /// path → answer.
    #[serde(rename = "explores")]
    Explores,
    /// path → consequence.
    #[serde(rename = "has_consequence")]
    HasConsequence,
    /// beat → beat: the first comes after the second (not necessarily right after).
    #[serde(rename = "sequenced_after")]
    SequencedAfter,
    /// beat → codeword.
    #[serde(rename = "grants")]
    Grants,
    /// arc → path.
    #[serde(rename = "weaves")]
    Weaves,
    /// passage → beat.
    #[serde(rename = "from_beat")]
    FromBeat,
    /// entity visual → entity.
    #[serde(rename = "describes_visual")]
    DescribesVisual,
    /// illustration → illustration brief.
    #[serde(rename = "from_brief")]
    FromBrief,
    /// illustration brief → passage.
    #[serde(rename = "targets")]
    Targets,
}

impl EdgeType {
    pub const ALL: [EdgeType; 17] = [
        EdgeType::Choice,
        EdgeType::Appears,
        EdgeType::Involves,
        EdgeType::Depicts,
        EdgeType::HasEntry,
        EdgeType::BelongsTo,
        EdgeType::DilemmaInvolves,
        EdgeType::HasAnswer,
        EdgeType::Explores,
        EdgeType::HasConsequence,
        EdgeType::SequencedAfter,
        EdgeType::Grants,
        EdgeType::Weaves,
        EdgeType::FromBeat,
        EdgeType::DescribesVisual,
        EdgeType::FromBrief,
        EdgeType::Targets,
    ];

    /// The name in the seed's edge table (and in `graph.db`).
    pub fn name(self) -> &'static str {
        match self {
            EdgeType::Choice => "Choice",
            EdgeType::Appears => "Appears",
            EdgeType::Involves => "Involves",
            EdgeType::Depicts => "Depicts",
            EdgeType::HasEntry => "HasEntry",
            EdgeType::BelongsTo => "belongs_to",
            EdgeType::DilemmaInvolves => "involves",
            EdgeType::HasAnswer => "has_answer",
            EdgeType::Explores => "explores",
            EdgeType::HasConsequence => "has_consequence",
            EdgeType::SequencedAfter => "sequenced_after",
            EdgeType::Grants => "grants",
            EdgeType::Weaves => "weaves",
            EdgeType::FromBeat => "from_beat",
            EdgeType::DescribesVisual => "describes_visual",
            EdgeType::FromBrief => "from_brief",
            EdgeType::Targets => "targets",
        }
    }

    /// The node types at either end.
    pub fn ends(self) -> (NodeType, NodeType) {
        use NodeType as N;
        match self {
            EdgeType::Choice => (N::Passage, N::Passage),
            EdgeType::Appears => (N::Entity, N::Passage),
            EdgeType::Involves => (N::Relationship, N::Passage),
            EdgeType::Depicts => (N::Illustration, N::Passage),
            EdgeType::HasEntry => (N::CodexEntry, N::Entity),
            EdgeType::BelongsTo => (N::Beat, N::Path),
            EdgeType::DilemmaInvolves => (N::Dilemma, N::Entity),
            EdgeType::HasAnswer => (N::Dilemma, N::Answer),
            EdgeType::Explores => (N::Path, N::Answer),
            EdgeType::HasConsequence => (N::Path, N::Consequence),
            EdgeType::SequencedAfter => (N::Beat, N::Beat),
            EdgeType::Grants => (N::Beat, N::Codeword),
            EdgeType::Weaves => (N::Arc, N::Path),
            EdgeType::FromBeat => (N::Passage, N::Beat),
            EdgeType::DescribesVisual => (N::EntityVisual, N::Entity),
            EdgeType::FromBrief => (N::Illustration, N::IllustrationBrief),
            EdgeType::Targets => (N::IllustrationBrief, N::Passage),
        }
    }

    /// The stages that may add or remove an edge of this type.
    pub fn made_in(self) -> &'static [Stage] {
        use Stage::{Brainstorm, Dress, Grow, Seed};
        match self {
            EdgeType::Choice
            | EdgeType::Appears
            | EdgeType::Involves
            | EdgeType::Grants
            | EdgeType::Weaves
            | EdgeType::FromBeat => &[Grow],
            EdgeType::Depicts
            | EdgeType::HasEntry
            | EdgeType::DescribesVisual
            | EdgeType::FromBrief
            | EdgeType::Targets => &[Dress],
            EdgeType::DilemmaInvolves | EdgeType::HasAnswer => &[Brainstorm],
            EdgeType::Explores | EdgeType::HasConsequence => &[Seed],
            EdgeType::BelongsTo | EdgeType::SequencedAfter => &[Seed, Grow],
        }
    }

    /// Whether several edges of this type may join the same two nodes
    /// (routing choices to one passage under different gates).
    pub fn may_repeat(self) -> bool {
        self == EdgeType::Choice
    }
}

impl fmt::Display for EdgeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EdgeType {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        EdgeType::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| UnknownName::EdgeType(s.to_owned()))
    }
}

/// The dilemma a hierarchical path id names and the answer it explores:
/// `path::mentor_trust__benevolent` → (`dilemma::mentor_trust`, `benevolent`).
pub fn parse_path_id(id: &str) -> Option<(String, String)> {
    let rest = id.strip_prefix("path::")?;
    let (dilemma, answer) = rest.split_once("__")?;
    (!dilemma.is_empty() && !answer.is_empty())
        .then(|| (format!("dilemma::{dilemma}"), answer.to_owned()))
}

/// The hierarchical id of the path exploring `answer` of `dilemma`.
pub fn path_id(dilemma: &str, answer: &str) -> String {
    let name = dilemma.strip_prefix("dilemma::").unwrap_or(dilemma);
    format!("path::{name}__{answer}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_ids_name_their_dilemma_and_answer() {
        assert_eq!(
            parse_path_id("path::mentor_trust__benevolent"),
            Some(("dilemma::mentor_trust".into(), "benevolent".into()))
        );
        assert_eq!(parse_path_id("path::mentor_trust"), None);
        assert_eq!(parse_path_id("mentor_trust__benevolent"), None);
        assert_eq!(
            path_id("dilemma::mentor_trust", "benevolent"),
            "path::mentor_trust__benevolent"
        );
    }

    #[test]
    fn later_stages_change_only_what_the_seed_gives_them() {
        assert!(NodeType::Entity.may_change(Stage::Seed, "base"));
        assert!(NodeType::Entity.may_change(Stage::Grow, "overlays"));
        assert!(!NodeType::Entity.may_change(Stage::Grow, "base"));
        assert!(NodeType::Dilemma.may_change(Stage::Seed, "explored"));
        assert!(!NodeType::Dilemma.may_change(Stage::Seed, "question"));
        assert!(!NodeType::Path.created_in().contains(&Stage::Grow));
        assert!(NodeType::Passage.may_change(Stage::Fill, "prose"));
        assert!(!NodeType::Passage.may_change(Stage::Fill, "summary"));
        for t in EdgeType::ALL {
            assert_eq!(t.name().parse::<EdgeType>(), Ok(t));
        }
        for t in NodeType::ALL {
            assert_eq!(t.name().parse::<NodeType>(), Ok(t));
        }
    }
}
