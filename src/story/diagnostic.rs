//! Validation findings: one typed diagnostic per problem, each naming what it is about.

use std::fmt;

/// How bad a finding is: errors fail `loreloom validate`, warnings are for review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
}

/// Which rule produced a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    DuplicateId,
    UnknownPassage,
    UnknownCodeword,
    UnknownEntity,
    UnknownRelationship,
    UnknownScene,
    NoStart,
    AmbiguousStart,
    EmptyProse,
    UnreachablePassage,
    DeadEnd,
    NoReachableEnding,
    ImpossibleGate,
    StateSpaceTooLarge,
    ResidueNeverRead,
    UnusedCodeword,
    OverlayConflict,
    CodexNeverVisible,
    OverlayNeverApplies,
    Trapped,
    OrphanEntity,
    NonDiegeticLabel,
    MissingAsset,
    /// An asset path that leads outside the story's folder (#43).
    AssetOutside,
    Import,
}

impl Rule {
    /// The kebab-case code printed in brackets, stable for scripts and tests.
    pub fn code(self) -> &'static str {
        match self {
            Rule::DuplicateId => "duplicate-id",
            Rule::UnknownPassage => "unknown-passage",
            Rule::UnknownCodeword => "unknown-codeword",
            Rule::UnknownEntity => "unknown-entity",
            Rule::UnknownRelationship => "unknown-relationship",
            Rule::UnknownScene => "unknown-scene",
            Rule::NoStart => "no-start",
            Rule::AmbiguousStart => "ambiguous-start",
            Rule::EmptyProse => "empty-prose",
            Rule::UnreachablePassage => "unreachable-passage",
            Rule::DeadEnd => "dead-end",
            Rule::NoReachableEnding => "no-reachable-ending",
            Rule::ImpossibleGate => "impossible-gate",
            Rule::StateSpaceTooLarge => "state-space-too-large",
            Rule::ResidueNeverRead => "residue-never-read",
            Rule::UnusedCodeword => "unused-codeword",
            Rule::OverlayConflict => "overlay-conflict",
            Rule::CodexNeverVisible => "codex-never-visible",
            Rule::OverlayNeverApplies => "overlay-never-applies",
            Rule::Trapped => "trapped",
            Rule::OrphanEntity => "orphan-entity",
            Rule::NonDiegeticLabel => "non-diegetic-label",
            Rule::MissingAsset => "missing-asset",
            Rule::AssetOutside => "asset-outside",
            Rule::Import => "import",
        }
    }

    /// The severity this rule reports at.
    pub fn severity(self) -> Severity {
        match self {
            Rule::ResidueNeverRead
            | Rule::UnusedCodeword
            | Rule::OverlayConflict
            | Rule::CodexNeverVisible
            | Rule::OverlayNeverApplies
            | Rule::OrphanEntity
            | Rule::NonDiegeticLabel
            | Rule::MissingAsset
            | Rule::Import => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

/// What a diagnostic is about, by stable id.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    Story,
    Passage(String),
    /// The `index`-th choice (0-based) of a passage.
    Choice {
        passage: String,
        index: usize,
    },
    Codeword(String),
    Entity(String),
    Relationship(String),
    Codex(String),
    Illustration(String),
    Scene(String),
    /// A file a story refers to, relative to its package folder.
    Asset(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Story => f.write_str("story"),
            Subject::Passage(id) => write!(f, "passage `{id}`"),
            Subject::Choice { passage, index } => {
                write!(f, "passage `{passage}` choice {}", index + 1)
            }
            Subject::Codeword(id) => write!(f, "codeword `{id}`"),
            Subject::Entity(id) => write!(f, "entity `{id}`"),
            Subject::Relationship(id) => write!(f, "relationship `{id}`"),
            Subject::Codex(id) => write!(f, "codex entry `{id}`"),
            Subject::Illustration(id) => write!(f, "illustration `{id}`"),
            Subject::Scene(id) => write!(f, "scene `{id}`"),
            Subject::Asset(path) => write!(f, "asset `{path}`"),
        }
    }
}

/// One finding of validation or import.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Diagnostic {
    pub severity: Severity,
    pub rule: Rule,
    pub subject: Subject,
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at the rule's own severity.
    pub fn new(rule: Rule, subject: Subject, message: impl Into<String>) -> Self {
        Self {
            severity: rule.severity(),
            rule,
            subject,
            message: message.into(),
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{level}[{}] {}: {}",
            self.rule.code(),
            self.subject,
            self.message
        )
    }
}
