//! DRESS's deterministic rules: brief scores, the image budget, diegetic checks, image prompts.
//!
//! Seed 000 Stage 6, QuestFoundry's `procedures/dress.md`: the hybrid priority score of an
//! illustration brief, the author's image budget (and the briefs ranked for it, as the graph
//! holds them), the diegetic check on captions and codex entries, the codex tiers' gates and
//! spoiler direction, and the prompt an image provider is given.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::graph::{Graph, GraphError};
use super::ontology::NodeType;

/// Where the author's image budget is kept (graph meta).
pub const BUDGET_KEY: &str = "dress.budget";

/// The id of the art direction node.
pub const ART_DIRECTION: &str = "art_direction";

/// The categories an illustration may have (the player's).
pub const CATEGORIES: [&str; 4] = ["scene", "portrait", "vista", "item_detail"];

/// What the engine knows of a passage's place in the story, for its
/// brief's structural score (each flag one of the seed's structural rules).
#[allow(
    clippy::struct_excessive_bools,
    reason = "the seed's independent rules"
)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub spine: bool,
    /// The first passage of a branch (an arc's first passage off the spine).
    pub branch_opening: bool,
    pub ending: bool,
    /// A beat here commits a dilemma.
    pub climax: bool,
    /// A location shows here that the passage before it did not show.
    pub new_location: bool,
    /// Every beat here is a bridging beat or a micro-beat.
    pub transition: bool,
}

impl Position {
    /// The rules that hold here, by name (`spine`, `branch_opening`, `ending`, `climax`,
    /// `new_location`, `transition`), for the brief's prompt to put in words.
    pub fn flags(&self) -> Vec<&'static str> {
        [
            (self.spine, "spine"),
            (self.branch_opening, "branch_opening"),
            (self.ending, "ending"),
            (self.climax, "climax"),
            (self.new_location, "new_location"),
            (self.transition, "transition"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// The structural base score and what made it (seed: spine +3, branch
    /// opening +2, ending +2, climax +2, new location +1, transition −1).
    pub fn base(&self) -> (i32, Vec<&'static str>) {
        let mut score = 0;
        let mut why = Vec::new();
        for (on, points, name) in [
            (self.spine, 3, "spine +3"),
            (self.branch_opening, 2, "branch opening +2"),
            (self.ending, 2, "ending +2"),
            (self.climax, 2, "climax +2"),
            (self.new_location, 1, "new location +1"),
            (self.transition, -1, "transition -1"),
        ] {
            if on {
                score += points;
                why.push(name);
            }
        }
        (score, why)
    }
}

/// The model's judgement of a passage, adjusting the structural score.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judgement {
    #[serde(default)]
    pub visually_striking: bool,
    #[serde(default)]
    pub emotionally_pivotal: bool,
    #[serde(default)]
    pub dialogue_heavy: bool,
}

impl Judgement {
    /// +1 striking, +1 pivotal, −1 dialogue-heavy.
    pub fn adjustment(self) -> i32 {
        i32::from(self.visually_striking) + i32::from(self.emotionally_pivotal)
            - i32::from(self.dialogue_heavy)
    }
}

/// A score's priority: 1 must-have (≥ 5), 2 important (3–4), 3
/// nice-to-have (1–2), none (skip, ≤ 0).
pub fn priority(score: i32) -> Option<u8> {
    match score {
        5.. => Some(1),
        3..=4 => Some(2),
        1..=2 => Some(3),
        _ => None,
    }
}

/// Which briefs the author has drawn (seed: set explicitly at gate 2; no
/// silent default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// No images.
    None,
    /// Every brief of priority 1 up to this one.
    UpTo(u8),
    /// The best `n` briefs.
    Top(usize),
    /// Every brief, skipped ones too.
    All,
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Budget::None => f.write_str("none"),
            Budget::UpTo(p) => write!(f, "priority-{p}"),
            Budget::Top(n) => write!(f, "top-{n}"),
            Budget::All => f.write_str("all"),
        }
    }
}

/// A budget the author wrote that is none of the budgets.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is no image budget: none, priority-1, priority-2, priority-3, top-N or all")]
pub struct UnknownBudget(pub String);

/// Why the budget kept at gate 2 could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    #[error(transparent)]
    Unknown(#[from] UnknownBudget),
    #[error(transparent)]
    Graph(#[from] GraphError),
}

impl FromStr for Budget {
    type Err = UnknownBudget;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || UnknownBudget(s.to_owned());
        match s.trim() {
            "none" => Ok(Budget::None),
            "all" => Ok(Budget::All),
            other => {
                if let Some(p) = other.strip_prefix("priority-") {
                    match p.parse() {
                        Ok(p @ 1..=3) => Ok(Budget::UpTo(p)),
                        _ => Err(bad()),
                    }
                } else if let Some(n) = other.strip_prefix("top-") {
                    n.parse().map(Budget::Top).map_err(|_| bad())
                } else {
                    Err(bad())
                }
            }
        }
    }
}

/// A brief as the budget sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranked {
    pub id: String,
    pub priority: Option<u8>,
    pub score: i32,
}

/// Briefs best first: by priority (skipped last), then score, then id.
pub fn rank(briefs: &mut [Ranked]) {
    briefs.sort_by(|a, b| {
        (a.priority.unwrap_or(u8::MAX), -a.score, &a.id).cmp(&(
            b.priority.unwrap_or(u8::MAX),
            -b.score,
            &b.id,
        ))
    });
}

/// The briefs in the graph, ranked for the budget.
pub fn ranked_briefs(graph: &Graph) -> Result<Vec<Ranked>, GraphError> {
    let mut out: Vec<Ranked> = graph
        .nodes(NodeType::IllustrationBrief)?
        .into_iter()
        .map(|b| Ranked {
            priority: b
                .data
                .get("priority")
                .and_then(Value::as_u64)
                .and_then(|p| u8::try_from(p).ok()),
            score: b
                .data
                .get("score")
                .and_then(Value::as_i64)
                .and_then(|s| i32::try_from(s).ok())
                .unwrap_or(0),
            id: b.id,
        })
        .collect();
    rank(&mut out);
    Ok(out)
}

/// The author's budget, as kept at gate 2 (`None` until it is chosen).
pub fn budget(graph: &Graph) -> Result<Option<Budget>, BudgetError> {
    Ok(graph
        .meta(BUDGET_KEY)?
        .and_then(|v| v.as_str().map(str::to_owned))
        .map(|s| s.parse())
        .transpose()?)
}

impl Budget {
    /// The briefs to draw, best first.
    pub fn select(self, briefs: &[Ranked]) -> Vec<String> {
        let mut ranked = briefs.to_vec();
        rank(&mut ranked);
        let ids = ranked.into_iter();
        match self {
            Budget::None => Vec::new(),
            Budget::All => ids.map(|b| b.id).collect(),
            Budget::Top(n) => ids.take(n).map(|b| b.id).collect(),
            Budget::UpTo(p) => ids
                .filter(|b| b.priority.is_some_and(|q| q <= p))
                .map(|b| b.id)
                .collect(),
        }
    }
}

/// Meta phrasing in a caption: it describes the picture instead of
/// speaking from inside the world.
const CAPTION_META: [&str; 16] = [
    "illustration",
    "image of",
    "image shows",
    "picture of",
    "painting of",
    "drawing of",
    "artwork",
    "depicts",
    "depicting",
    "this scene",
    "the scene shows",
    "we see",
    "is shown",
    "in this image",
    "the player",
    "the reader",
];

/// Meta phrasing in a codex entry: it documents the story instead of
/// telling what the world knows.
const CODEX_META: [&str; 14] = [
    "is a character",
    "a character who",
    "the protagonist",
    "main character",
    "the player",
    "the reader",
    "in the story",
    "in this story",
    "this entity",
    "codex",
    "spoiler",
    "this entry",
    "npc",
    "plot",
];

fn meta_in(text: &str, phrases: &[&'static str]) -> Option<&'static str> {
    let lower = format!(" {} ", text.to_lowercase());
    phrases.iter().copied().find(|p| {
        // Whole words: "plot" is meta, "plotted" is not.
        lower.match_indices(p).any(|(i, _)| {
            let before = lower[..i].chars().next_back();
            let after = lower[i + p.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// The meta phrase a caption uses, if it uses one.
pub fn caption_meta(caption: &str) -> Option<&'static str> {
    meta_in(caption, &CAPTION_META)
}

/// The meta phrase a codex entry uses, if it uses one.
pub fn codex_meta(content: &str) -> Option<&'static str> {
    meta_in(content, &CODEX_META)
}

/// Words a caption may have at most (the prompt asks for twelve).
pub const CAPTION_WORDS: usize = 16;

/// What is wrong with a caption, said so the model can mend it: meta
/// phrasing, or too long to be a caption.
pub fn caption_problem(caption: &str) -> Option<String> {
    if let Some(phrase) = caption_meta(caption) {
        return Some(format!(
            "the caption describes the picture (\"{phrase}\"); write it in the story's voice"
        ));
    }
    let words = caption.split_whitespace().count();
    (words > CAPTION_WORDS)
        .then(|| format!("the caption has {words} words; a caption has at most twelve"))
}

/// The palette entries that name a colour (a short phrase or a `#hex`), and
/// the ones dropped (sentences, recitals of the prompt).
pub fn usable_palette(entries: &[String]) -> (Vec<String>, Vec<String>) {
    entries.iter().cloned().partition(|e| {
        let e = e.trim();
        let words = e.split_whitespace().count();
        (1..=4).contains(&words)
            && e.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '#' | '\''))
            && !e.to_lowercase().contains("colour")
            && !e.to_lowercase().contains("color")
    })
}

/// A codex tier as the model proposes it (the `dress_codex` contract's tier).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    pub rank: u32,
    pub visible_when: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub title: Option<String>,
    pub content: String,
}

/// A detail of an entity that only some codewords reveal (an overlay's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gated {
    pub when: Vec<String>,
    pub text: String,
}

/// What is wrong with an entity's codex tiers, said so the model can mend it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodexProblem {
    NoTiers,
    FirstGated,
    Empty(u32),
    UnknownGate { rank: u32, codeword: String },
    Ungated(u32),
    Meta { rank: u32, phrase: &'static str },
    Spoiler { rank: u32, text: String },
}

impl fmt::Display for CodexProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodexProblem::NoTiers => f.write_str("there are no tiers; write at least rank 1"),
            CodexProblem::FirstGated => {
                f.write_str("rank 1 must be visible from the start (visible_when: [])")
            }
            CodexProblem::Empty(r) => write!(f, "rank {r} says nothing"),
            CodexProblem::UnknownGate { rank, codeword } => write!(
                f,
                "rank {rank} is gated by `{codeword}`, which is not one of this entity's codewords"
            ),
            CodexProblem::Ungated(r) => write!(
                f,
                "rank {r} is not gated: every rank after the first needs a codeword from the list"
            ),
            CodexProblem::Meta { rank, phrase } => write!(
                f,
                "rank {rank} speaks about the story (\"{phrase}\"), not from inside the world"
            ),
            CodexProblem::Spoiler { rank, text } => write!(
                f,
                "rank {rank} gives away what a later tier reveals: \"{text}\""
            ),
        }
    }
}

fn normalised(text: &str) -> String {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs of `n` words of a text, normalised.
fn shingles(text: &str, n: usize) -> BTreeSet<String> {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    words.windows(n).map(|w| w.join(" ")).collect()
}

/// Words in a row that count as giving a later tier away.
const SPOILER_RUN: usize = 5;

/// Checks an entity's tiers: sorts them by rank and renumbers them 1, 2, …;
/// rank 1 ungated, later ranks gated by `codewords` only; each diegetic and
/// not empty; and no tier shows a detail gated by codewords it does not
/// itself require, nor a run of five words a tier it does not cover says.
pub fn check_codex(
    tiers: &mut [Tier],
    codewords: &BTreeSet<String>,
    gated: &[Gated],
) -> Vec<CodexProblem> {
    let mut problems = Vec::new();
    tiers.sort_by_key(|t| t.rank);
    for (i, t) in tiers.iter_mut().enumerate() {
        t.rank = u32::try_from(i + 1).unwrap_or(u32::MAX);
        t.visible_when.sort();
        t.visible_when.dedup();
    }
    let Some(first) = tiers.first() else {
        return vec![CodexProblem::NoTiers];
    };
    if !first.visible_when.is_empty() {
        problems.push(CodexProblem::FirstGated);
    }
    for t in tiers.iter() {
        if t.content.trim().is_empty() {
            problems.push(CodexProblem::Empty(t.rank));
        }
        for c in &t.visible_when {
            if !codewords.contains(c) {
                problems.push(CodexProblem::UnknownGate {
                    rank: t.rank,
                    codeword: c.clone(),
                });
            }
        }
        if t.rank > 1 && t.visible_when.is_empty() {
            problems.push(CodexProblem::Ungated(t.rank));
        }
        if let Some(phrase) = codex_meta(&t.content) {
            problems.push(CodexProblem::Meta {
                rank: t.rank,
                phrase,
            });
        }
    }
    for t in tiers.iter() {
        let holds: BTreeSet<&String> = t.visible_when.iter().collect();
        let text = normalised(&t.content);
        let covers = |when: &[String]| when.iter().all(|c| holds.contains(c));
        let leaked = gated
            .iter()
            .filter(|g| !covers(&g.when))
            .map(|g| normalised(&g.text))
            .find(|detail| detail.split(' ').count() >= 2 && text.contains(detail.as_str()));
        let mine = shingles(&text, SPOILER_RUN);
        let echoed = tiers
            .iter()
            .filter(|other| !covers(&other.visible_when))
            .flat_map(|other| shingles(&normalised(&other.content), SPOILER_RUN))
            .find(|s| mine.contains(s));
        if let Some(text) = leaked.or(echoed) {
            problems.push(CodexProblem::Spoiler { rank: t.rank, text });
        }
    }
    problems
}

/// What an image provider is asked to draw: the prompt text a text-to-image
/// model reads (art direction, the brief, each entity's reference
/// fragment), and the same pieces as data for providers that draw from it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImagePrompt {
    pub brief: String,
    pub text: String,
    pub negative: String,
    pub category: String,
    pub aspect_ratio: String,
    pub palette: Vec<String>,
    pub mood: String,
    pub composition: String,
    /// Each entity shown: its colours, and whether it is a character.
    pub entities: Vec<Figure>,
}

/// An entity in a picture, as a provider needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    pub entity: String,
    pub kind: String,
    pub colours: Vec<String>,
    pub fragment: String,
}

/// The art direction's fields a prompt reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Direction {
    pub style: String,
    pub medium: String,
    #[serde(default)]
    pub palette: Vec<String>,
    #[serde(default)]
    pub composition_notes: String,
    #[serde(default)]
    pub negative_defaults: String,
    pub aspect_ratio: String,
}

/// A brief's fields a prompt reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefText {
    pub category: String,
    pub subject: String,
    #[serde(default)]
    pub composition: String,
    #[serde(default)]
    pub mood: String,
    #[serde(default)]
    pub negative: String,
}

/// Assembles the prompt for one brief (seed: every shown entity's
/// reference fragment goes in, so it looks the same in every picture).
pub fn image_prompt(
    brief_id: &str,
    direction: &Direction,
    brief: &BriefText,
    figures: Vec<Figure>,
) -> ImagePrompt {
    let mut text = format!(
        "{}, {}. {}.",
        direction.style.trim(),
        direction.medium.trim(),
        brief.subject.trim().trim_end_matches('.')
    );
    for f in &figures {
        let _ = write!(text, " {}.", f.fragment.trim().trim_end_matches('.'));
    }
    for (label, part) in [
        ("Composition", brief.composition.as_str()),
        ("Framing", direction.composition_notes.as_str()),
        ("Mood", brief.mood.as_str()),
    ] {
        if !part.trim().is_empty() {
            let _ = write!(text, " {label}: {}.", part.trim().trim_end_matches('.'));
        }
    }
    if !direction.palette.is_empty() {
        let _ = write!(text, " Palette: {}.", direction.palette.join(", "));
    }
    let negative = [
        direction.negative_defaults.trim(),
        brief.negative.trim(),
        "text, letters, watermark",
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join(", ");
    ImagePrompt {
        brief: brief_id.to_owned(),
        text,
        negative,
        category: brief.category.clone(),
        aspect_ratio: direction.aspect_ratio.clone(),
        palette: direction.palette.clone(),
        mood: brief.mood.clone(),
        composition: brief.composition.clone(),
        entities: figures,
    }
}

/// `W:H` with both positive, else `None`.
pub fn aspect(ratio: &str) -> Option<(u32, u32)> {
    let (w, h) = ratio.trim().split_once(':')?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    (w > 0 && h > 0 && w <= 32 && h <= 32).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_score_adds_structure_and_judgement() {
        let climax_on_spine = Position {
            spine: true,
            climax: true,
            ..Position::default()
        };
        let (base, why) = climax_on_spine.base();
        assert_eq!((base, why), (5, vec!["spine +3", "climax +2"]));
        assert_eq!(priority(base), Some(1));
        let bridge = Position {
            transition: true,
            ..Position::default()
        };
        let talk = Judgement {
            dialogue_heavy: true,
            ..Judgement::default()
        };
        assert_eq!(priority(bridge.base().0 + talk.adjustment()), None);
        assert_eq!(priority(3), Some(2));
        assert_eq!(priority(2), Some(3));
    }

    #[test]
    fn a_budget_picks_the_best_briefs() {
        let briefs = [
            Ranked {
                id: "b".into(),
                priority: Some(2),
                score: 3,
            },
            Ranked {
                id: "a".into(),
                priority: Some(1),
                score: 6,
            },
            Ranked {
                id: "c".into(),
                priority: None,
                score: 0,
            },
            Ranked {
                id: "d".into(),
                priority: Some(1),
                score: 7,
            },
        ];
        assert_eq!(Budget::UpTo(1).select(&briefs), ["d", "a"]);
        assert_eq!(Budget::UpTo(3).select(&briefs), ["d", "a", "b"]);
        assert_eq!(Budget::Top(1).select(&briefs), ["d"]);
        assert_eq!(Budget::All.select(&briefs), ["d", "a", "b", "c"]);
        assert!(Budget::None.select(&briefs).is_empty());
        for s in ["none", "all", "priority-2", "top-4"] {
            assert_eq!(s.parse::<Budget>().map(|b| b.to_string()), Ok(s.to_owned()));
        }
        assert!("priority-4".parse::<Budget>().is_err());
        assert!("some".parse::<Budget>().is_err());
    }

    #[test]
    fn long_captions_and_wordy_palettes_are_caught() {
        assert!(caption_problem("Where the lamp was last trimmed").is_none());
        let long = "Lena asks Tina about keeping the water out for a second before she goes down again; her answer comes";
        assert!(caption_problem(long).is_some_and(|p| p.contains("at most twelve")));
        let (kept, dropped) = usable_palette(&[
            "storm grey".into(),
            "#1b2b3c".into(),
            "A palette of three to six colour words (, amber".into(),
            "deep sea green".into(),
        ]);
        assert_eq!(kept, ["storm grey", "#1b2b3c", "deep sea green"]);
        assert_eq!(dropped.len(), 1);
    }

    #[test]
    fn meta_captions_and_entries_are_caught() {
        assert_eq!(
            caption_meta("An illustration of two keepers on the gallery"),
            Some("illustration")
        );
        assert_eq!(caption_meta("Where the lamp was last trimmed"), None);
        assert_eq!(
            codex_meta("Ada is a character who keeps the light."),
            Some("is a character")
        );
        // Whole words only.
        assert_eq!(codex_meta("The plotted course ran past the reef."), None);
    }

    fn tier(rank: u32, when: &[&str], content: &str) -> Tier {
        Tier {
            rank,
            visible_when: when.iter().map(|s| (*s).to_owned()).collect(),
            title: None,
            content: content.into(),
        }
    }

    #[test]
    fn codex_tiers_are_gated_and_graduated() {
        let codewords: BTreeSet<String> = ["cw::kept_light".to_owned()].into();
        let gated = [Gated {
            when: vec!["cw::kept_light".into()],
            text: "knows the lamp's secret".into(),
        }];
        let mut good = vec![
            tier(2, &["cw::kept_light"], "She knows the lamp's secret now."),
            tier(1, &[], "The keeper of the northern light."),
        ];
        assert!(check_codex(&mut good, &codewords, &gated).is_empty());
        assert_eq!(good[0].rank, 1);

        let mut leaky = vec![
            tier(1, &[], "The keeper, who knows the lamp's secret."),
            tier(2, &["cw::other"], "Gated by nothing we know."),
            tier(3, &[], "Ungated later tier."),
        ];
        let problems = check_codex(&mut leaky, &codewords, &gated);
        assert!(problems.contains(&CodexProblem::Spoiler {
            rank: 1,
            text: "knows the lamp's secret".into()
        }));
        assert!(problems.contains(&CodexProblem::UnknownGate {
            rank: 2,
            codeword: "cw::other".into()
        }));
        assert!(problems.contains(&CodexProblem::Ungated(3)));

        // A lower tier repeating five words of a higher one gives it away.
        let mut echo = vec![
            tier(1, &[], "She sold the harbour charts to the smugglers."),
            tier(
                2,
                &["cw::kept_light"],
                "In the end she sold the harbour charts to the smugglers.",
            ),
        ];
        let problems = check_codex(&mut echo, &codewords, &[]);
        assert!(
            matches!(&problems[..], [CodexProblem::Spoiler { rank: 1, .. }]),
            "{problems:?}"
        );
        let mut first_gated = vec![tier(1, &["cw::kept_light"], "x y")];
        assert!(check_codex(&mut first_gated, &codewords, &[]).contains(&CodexProblem::FirstGated));
    }

    #[test]
    fn the_prompt_carries_every_entitys_fragment() {
        let direction = Direction {
            style: "ink wash".into(),
            medium: "brush on rice paper".into(),
            palette: vec!["slate grey".into(), "amber".into()],
            composition_notes: "low horizons".into(),
            negative_defaults: "photorealism".into(),
            aspect_ratio: "16:9".into(),
        };
        let brief = BriefText {
            category: "scene".into(),
            subject: "Two keepers argue on the gallery".into(),
            composition: "wide".into(),
            mood: "tense".into(),
            negative: "crowds".into(),
        };
        let figures = vec![Figure {
            entity: "entity::ada".into(),
            kind: "character".into(),
            colours: vec!["amber".into()],
            fragment: "a tall woman in an oilskin coat".into(),
        }];
        let p = image_prompt("brief::x", &direction, &brief, figures);
        assert!(
            p.text
                .starts_with("ink wash, brush on rice paper. Two keepers argue")
        );
        assert!(p.text.contains("a tall woman in an oilskin coat."));
        assert!(p.text.contains("Palette: slate grey, amber."));
        assert_eq!(p.negative, "photorealism, crowds, text, letters, watermark");
        assert_eq!(aspect("16:9"), Some((16, 9)));
        assert_eq!(aspect("wide"), None);
    }
}
