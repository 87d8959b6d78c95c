//! DRESS's diegetic checks: captions and codex entries speak from inside the world.
//!
//! Meta phrasing (a caption that describes the picture, an entry that documents the story),
//! captions too long to be captions, and the codex tiers' gates and spoiler direction: rank 1
//! ungated, later ranks gated by the entity's codewords, no tier giving away a later one.

use std::collections::BTreeSet;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_captions_are_caught() {
        assert!(caption_problem("Where the lamp was last trimmed").is_none());
        let long = "Lena asks Tina about keeping the water out for a second before she goes down again; her answer comes";
        assert!(caption_problem(long).is_some_and(|p| p.contains("at most twelve")));
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
}
