//! FILL's deterministic checks on a passage's prose before it is accepted.
//!
//! Seed 000 FILL, with QuestFoundry-ng's lessons: no sentence lifted from the passages around
//! it or copied from its summary, a length within the scene type's band, no recital of the
//! prompt, the voice's person and tense, none of the words the voice avoids.

use std::fmt;

/// The words a scene type asks for: `(least, most)` (seed 000: a scene has
/// full structure, a sequel breathing room, a micro-beat one paragraph).
pub fn band(scene_type: &str) -> (usize, usize) {
    match scene_type {
        "scene" => (120, 700),
        "sequel" => (70, 450),
        _ => (25, 220),
    }
}

/// The band of a passage merged from several beats: at least the longest
/// least, at most the sum of their most.
pub fn merged_band<'a>(scene_types: impl IntoIterator<Item = &'a str>) -> (usize, usize) {
    scene_types
        .into_iter()
        .map(band)
        .fold((0, 0), |(l, m), (bl, bm)| (l.max(bl), m + bm))
}

/// What a passage's prose must keep to.
#[derive(Clone, Debug, Default)]
pub struct Rules {
    /// `(least, most)` words.
    pub words: (usize, usize),
    /// `first`, `second`, `third_limited` or `third_omniscient`.
    pub pov: String,
    /// `past` or `present`.
    pub tense: String,
    pub avoid_words: Vec<String>,
    /// The prose around it (the passages before, what it leads into).
    pub neighbours: Vec<String>,
    /// Its beats' summaries (the prose tells them, it does not copy them).
    pub summaries: Vec<String>,
}

/// Something wrong with a draft, said so the model can mend it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    Lifted(String),
    Summary(String),
    TooShort { words: usize, least: usize },
    TooLong { words: usize, most: usize },
    Recital(&'static str),
    Person { pov: String },
    Tense { tense: String },
    Avoided(String),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Lifted(s) => {
                write!(f, "it repeats a sentence from the prose around it: \"{s}\"")
            }
            Problem::Summary(s) => write!(
                f,
                "it copies its summary instead of telling the scene: \"{s}\""
            ),
            Problem::TooShort { words, least } => {
                write!(f, "it is {words} words; it needs at least {least}")
            }
            Problem::TooLong { words, most } => {
                write!(f, "it is {words} words; it must stay under {most}")
            }
            Problem::Recital(p) => write!(
                f,
                "it talks about the writing instead of telling the story (\"{p}\")"
            ),
            Problem::Person { pov } => write!(
                f,
                "the narration is not in the {} person",
                pov.split('_').next().unwrap_or(pov)
            ),
            Problem::Tense { tense } => write!(f, "the narration is not in the {tense} tense"),
            Problem::Avoided(w) => write!(f, "it uses \"{w}\", which the voice avoids"),
        }
    }
}

/// Phrases that only a recital of the prompt (or a note about the writing)
/// would contain.
const RECITALS: [&str; 12] = [
    "scene_type",
    "micro_beat",
    "beat summary",
    "voice document",
    "entity_updates",
    "this passage",
    "next passage",
    "the reader",
    "as an ai",
    "roads not taken",
    "it leads into",
    "just before:",
];

/// The number of words in a text.
pub fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// The sentences of a text, normalised (lower case, single spaces, no
/// surrounding quotes or punctuation), for comparison.
fn sentences(text: &str) -> Vec<String> {
    text.split_inclusive(['.', '!', '?'])
        .map(|s| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// The narration: the text outside dialogue (straight or curly quotes).
fn narration(text: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '"' => quoted = !quoted,
            '“' => quoted = true,
            '”' => quoted = false,
            _ if !quoted => out.push(c),
            _ => {}
        }
    }
    out
}

fn count(tokens: &[String], set: &[&str]) -> usize {
    tokens.iter().filter(|t| set.contains(&t.as_str())).count()
}

/// The first sentence of `prose` (normalised) that one of `texts` also has,
/// counting only sentences of at least `least` words.
fn shared_sentence(prose: &str, texts: &[String], least: usize) -> Option<String> {
    let theirs: std::collections::BTreeSet<String> = texts
        .iter()
        .flat_map(|t| sentences(t))
        .filter(|s| words(s) >= least)
        .collect();
    sentences(prose).into_iter().find(|s| theirs.contains(s))
}

/// Every problem of a draft under `rules`.
pub fn check(prose: &str, rules: &Rules) -> Vec<Problem> {
    let mut problems = Vec::new();
    let lower = prose.to_lowercase();
    if let Some(s) = shared_sentence(prose, &rules.neighbours, 6) {
        problems.push(Problem::Lifted(s));
    }
    if let Some(s) = shared_sentence(prose, &rules.summaries, 4) {
        problems.push(Problem::Summary(s));
    }
    let n = words(prose);
    let (least, most) = rules.words;
    if n < least {
        problems.push(Problem::TooShort { words: n, least });
    } else if most > 0 && n > most {
        problems.push(Problem::TooLong { words: n, most });
    }
    if let Some(p) = RECITALS.iter().find(|p| lower.contains(*p)) {
        problems.push(Problem::Recital(p));
    }
    let tokens: Vec<String> = narration(prose)
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    let first = count(&tokens, &["i", "me", "my", "mine", "myself", "i'm", "i'd"]);
    let second = count(&tokens, &["you", "your", "yours", "yourself", "you're"]);
    let wrong_person = match rules.pov.as_str() {
        "first" => first == 0 && n >= 40,
        "second" => second == 0 && n >= 40,
        "third_limited" | "third_omniscient" => first > 2 || second > 2,
        _ => false,
    };
    if wrong_person {
        problems.push(Problem::Person {
            pov: rules.pov.clone(),
        });
    }
    let past = count(
        &tokens,
        &[
            "was", "were", "had", "did", "said", "went", "came", "looked", "turned", "took", "saw",
            "felt",
        ],
    );
    let present = count(
        &tokens,
        &[
            "is", "are", "am", "has", "does", "says", "goes", "comes", "looks", "turns", "takes",
            "sees", "feels",
        ],
    );
    let wrong_tense = match rules.tense.as_str() {
        "past" => present >= 4 && present > past * 2,
        "present" => past >= 4 && past > present * 2,
        _ => false,
    };
    if wrong_tense {
        problems.push(Problem::Tense {
            tense: rules.tense.clone(),
        });
    }
    for w in &rules.avoid_words {
        let w = w.to_lowercase();
        let whole = lower
            .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
            .any(|t| t == w);
        if !w.is_empty() && (whole || (w.contains(' ') && lower.contains(&w))) {
            problems.push(Problem::Avoided(w));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules {
            words: (10, 60),
            pov: "third_limited".into(),
            tense: "past".into(),
            avoid_words: vec!["suddenly".into()],
            neighbours: vec!["The lamp burned low over the empty quay all night.".into()],
            summaries: vec!["Mara climbs to the lamp.".into()],
        }
    }

    #[test]
    fn a_good_draft_passes() {
        let prose = "Mara climbed the stair with the oil can. The wind had teeth that night, and she \
                     counted the steps as her father had. \"Is it lit?\" the boy called. She did not answer.";
        assert_eq!(check(prose, &rules()), Vec::new());
    }

    #[test]
    fn each_problem_is_found_and_said() {
        let lifted = "The lamp burned low over the empty quay all night. Mara waited and waited for the boat.";
        assert!(matches!(check(lifted, &rules())[0], Problem::Lifted(_)));
        assert!(matches!(
            check("Too short.", &rules())[0],
            Problem::TooShort {
                words: 2,
                least: 10
            }
        ));
        let copied =
            "Mara climbs to the lamp. The stair was wet and the rail was cold under her hand.";
        assert!(
            check(copied, &rules()).contains(&Problem::Summary("mara climbs to the lamp".into()))
        );
        let recital =
            "In this passage Mara climbs the stair, and the scene_type is a scene with a goal.";
        assert!(check(recital, &rules()).contains(&Problem::Recital("scene_type")));
        let first =
            "I climbed the stair. I was tired and my hands were cold. I lit the lamp for them.";
        assert!(check(first, &rules()).contains(&Problem::Person {
            pov: "third_limited".into()
        }));
        let present = "Mara is on the stair. The wind is cold and the sea is high. She has the can; it is heavy.";
        assert!(check(present, &rules()).contains(&Problem::Tense {
            tense: "past".into()
        }));
        let avoided = "Suddenly the lamp went out and Mara was alone on the stair in the dark.";
        assert!(check(avoided, &rules()).contains(&Problem::Avoided("suddenly".into())));
        assert_eq!(
            Problem::TooLong {
                words: 90,
                most: 60
            }
            .to_string(),
            "it is 90 words; it must stay under 60"
        );
    }

    #[test]
    fn dialogue_does_not_count_against_the_narrators_person() {
        let prose = "\"I will not go,\" Mara said. \"You cannot make me, and my mind is set.\" \
                     The keeper looked at her and said nothing for a long while.";
        assert!(
            !check(prose, &rules())
                .iter()
                .any(|p| matches!(p, Problem::Person { .. })),
        );
    }

    #[test]
    fn a_merged_passage_gets_the_longest_least_and_the_summed_most() {
        assert_eq!(merged_band(["scene", "micro_beat"]), (120, 920));
    }
}
