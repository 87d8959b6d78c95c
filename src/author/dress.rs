//! DRESS's deterministic rules: brief scores, the image budget, the palette, image prompts.
//!
//! Seed 000 Stage 6, QuestFoundry's `procedures/dress.md`: the hybrid priority score of an
//! illustration brief, the author's image budget (and the briefs ranked for it, as the graph
//! holds them), the palette's colour words, and the prompt an image provider is given. The
//! diegetic checks on captions and codex entries are `super::diegetic`'s.

use std::fmt::{self, Write as _};
use std::str::FromStr;

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
    fn wordy_palettes_are_caught() {
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
