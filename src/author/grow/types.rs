//! GROW's data: what SEED left ([`Seeded`]) and what GROW makes of it ([`Grown`]).

/// How a dilemma's branches may come back together (seed 000 topology layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Policy {
    /// Same structure, different colour: converge at once.
    Flavor,
    /// Converge after `payoff_budget` beats of their own.
    #[default]
    Soft,
    /// Never converge.
    Hard,
}

impl Policy {
    pub fn parse(s: &str) -> Self {
        match s {
            "hard" => Policy::Hard,
            "flavor" => Policy::Flavor,
            _ => Policy::Soft,
        }
    }
}

/// How much the shared passages after branches come back together show a
/// dilemma's choice (seed 000 prose layer, `residue_weight`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Residue {
    /// They must: the passage where they come back is split per answer.
    Heavy,
    /// They may.
    #[default]
    Light,
    /// They must not.
    Cosmetic,
}

impl Residue {
    pub fn parse(s: &str) -> Self {
        match s {
            "heavy" => Residue::Heavy,
            "cosmetic" => Residue::Cosmetic,
            _ => Residue::Light,
        }
    }
}

/// How much the endings differ by a dilemma's choice (seed 000 prose layer,
/// `ending_salience`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Salience {
    /// They must: every ending is split per answer (ending families).
    High,
    /// They may.
    #[default]
    Low,
    /// They must not.
    None,
}

impl Salience {
    pub fn parse(s: &str) -> Self {
        match s {
            "high" => Salience::High,
            "none" => Salience::None,
            _ => Salience::Low,
        }
    }
}

/// A beat as GROW reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Beat {
    pub id: String,
    /// The paths it serves.
    pub paths: Vec<String>,
    pub summary: String,
    pub entities: Vec<String>,
    pub location: Option<String>,
    /// Other places the same action could happen.
    pub alternatives: Vec<String>,
    /// The dilemmas this beat commits (an impact with effect `commits`).
    pub commits: Vec<String>,
    /// Made by GROW to fill a gap (never part of an intersection).
    pub is_gap: bool,
}

/// A path as GROW reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path {
    pub id: String,
    pub dilemma: String,
    pub answer: String,
    pub canonical: bool,
    /// Consequence ids, in order.
    pub consequences: Vec<String>,
}

/// A dilemma's convergence contract (topology and prose layers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dilemma {
    pub id: String,
    pub policy: Policy,
    pub payoff_budget: usize,
    pub residue: Residue,
    pub ending: Salience,
}

/// What SEED left: beats (in SEED's order), paths, dilemmas, and the
/// `sequenced_after` pairs `(after, before)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seeded {
    pub beats: Vec<Beat>,
    pub paths: Vec<Path>,
    pub dilemmas: Vec<Dilemma>,
    pub order: Vec<(String, String)>,
}

/// An arc: one explored path per dilemma, woven.
#[derive(Clone, Debug, PartialEq)]
pub struct Arc {
    pub id: String,
    pub spine: bool,
    pub paths: Vec<String>,
    /// Beat ids in story order.
    pub sequence: Vec<String>,
    /// Passage ids in story order (the beats, each in this arc's world).
    pub passages: Vec<String>,
    /// The last passage shared with the spine before it parts, if any.
    pub diverges_at: Option<String>,
    /// The passage from which the rest is the spine's, if it comes back.
    pub converges_at: Option<String>,
}

/// A passage made from a beat in one world.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    pub id: String,
    /// The primary beat (the first, for a merged passage).
    pub beat: String,
    /// The hard (or not yet converged) choices that set this passage apart: answer ids.
    pub world: Vec<String>,
    /// Answers this passage was split by after its branches came back
    /// together (seed 000 variant routing: heavy residue, high ending salience).
    pub routed: Vec<String>,
    /// For a passage merged from a linear run: every beat, in order, and the
    /// passages it was merged from (empty for a single-beat passage).
    pub beats: Vec<String>,
    pub merged_from: Vec<String>,
}

impl Passage {
    /// Its beats in order (one, unless merged).
    pub fn all_beats(&self) -> Vec<String> {
        if self.beats.is_empty() {
            vec![self.beat.clone()]
        } else {
            self.beats.clone()
        }
    }
}

/// A codeword tracking a consequence (or, for a path without any, the path).
#[derive(Clone, Debug, PartialEq)]
pub struct Codeword {
    pub id: String,
    pub tracks: Option<String>,
    pub path: String,
    /// The beats whose completion grants it.
    pub granted_by: Vec<String>,
}

/// A Choice edge between passages (its label comes later).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub from: String,
    pub to: String,
    pub requires: Vec<String>,
    pub grants: Vec<String>,
}

/// GROW's deterministic result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grown {
    /// Every beat, in one order respecting every `sequenced_after`.
    pub weave: Vec<String>,
    pub arcs: Vec<Arc>,
    pub passages: Vec<Passage>,
    pub codewords: Vec<Codeword>,
    pub choices: Vec<Choice>,
    /// The passage every arc starts from.
    pub start: String,
    /// Passages no choice leaves.
    pub endings: Vec<String>,
    /// Codewords granted but never read, removed ("residue must be read").
    pub unread: Vec<String>,
    /// What the engine decided that the author should know.
    pub notes: Vec<String>,
}

/// Why GROW's deterministic core cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrowError {
    #[error("`sequenced_after` has a cycle through `{0}`")]
    Cycle(String),
    #[error(
        "{0} arcs from the explored paths (at most {MAX_ARCS}); explore fewer non-canonical answers in SEED"
    )]
    TooManyArcs(usize),
    #[error("path `{0}` has no beats")]
    EmptyPath(String),
    #[error(
        "arc `{arc}` starts at `{first}`, the spine at `{spine}`: every arc must open on the same beat (give them a shared opening beat in SEED)"
    )]
    ManyStarts {
        arc: String,
        first: String,
        spine: String,
    },
    #[error("the spine has no beats")]
    NoBeats,
    #[error(
        "arc `{arc}` cannot go from `{from}` to `{to}` with the codewords it holds there (variant routing is not collectively exhaustive)"
    )]
    Uncovered {
        arc: String,
        from: String,
        to: String,
    },
}

/// The most arcs GROW weaves.
pub const MAX_ARCS: usize = 64;
