//! A narration read against its world by word rules: contradictions, outcomes honoured.
//!
//! Every check reads the narration sentence by sentence against the world
//! state of its turn (who is present, who is dead or gone, what the persona
//! holds, where the scene is, which facts are false) and the engine's own
//! outcome for the move. They are word rules, not a model's judgement: they
//! miss what a paraphrase hides and can be fooled by a name used in passing,
//! and they read the same way for every model and prompt, which is what a
//! comparison needs. Each hit names its sentence, so a person can check it.

use serde::{Deserialize, Serialize};

use crate::campaign::Campaign;
use crate::campaign::PLAYER as PERSONA;
use crate::rules::WorldState;

/// A kind of contradiction (seed 001 `contradiction_rate`, as #40 lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Contradiction {
    /// A person not in the scene speaks or acts.
    AbsentActs,
    /// A dead or departed person appears.
    GoneAppears,
    /// The persona uses an item it does not hold.
    ItemNotHeld,
    /// The narration puts the persona in a place the scene is not.
    WrongPlace,
    /// A fact the world marks false is asserted.
    FalseFact,
}

impl Contradiction {
    pub fn name(self) -> &'static str {
        match self {
            Self::AbsentActs => "a person not present speaks or acts",
            Self::GoneAppears => "a dead or departed person appears",
            Self::ItemNotHeld => "an item not held is used",
            Self::WrongPlace => "the place named is not where the scene is",
            Self::FalseFact => "a fact marked false is asserted",
        }
    }
}

/// One contradiction found, with the sentence that holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub kind: Contradiction,
    /// Who or what it is about (a name, an item, a place).
    pub about: String,
    pub sentence: String,
}

/// What the scene holds when a narration is written: read from the world
/// state after the turn (where the scene ended up) and the campaign.
#[derive(Clone, Debug, Default)]
pub struct Scene {
    /// NPCs in the scene, as (name, names it is called by).
    pub present: Vec<Vec<String>>,
    /// NPCs elsewhere.
    pub absent: Vec<Vec<String>>,
    /// NPCs dead or departed (tagged `dead`, `departed` or `gone`).
    pub gone: Vec<Vec<String>>,
    /// Items the campaign knows that the persona does not hold, by name.
    pub not_held: Vec<String>,
    /// The scene's place name, and the campaign's other places.
    pub here: String,
    pub elsewhere: Vec<String>,
    /// Facts marked false, as the words "subject predicate".
    pub false_facts: Vec<(String, String)>,
}

const GONE_TAGS: [&str; 3] = ["dead", "departed", "gone"];

impl Scene {
    /// The scene of `world` in `campaign`.
    pub fn of(campaign: &Campaign, world: &WorldState) -> Self {
        let present = world.present();
        let everyone_here = present.is_empty();
        let mut scene = Self::default();
        // The names the engine itself knows people by, less a title
        // standing in for a first name ("Captain" of "Captain Ilse Varn").
        for (id, mut names) in crate::session::people::names(campaign) {
            names.retain(|n| !is_title(n));
            let tags = world.characters.get(&id).map(|s| &s.tags);
            if tags.is_some_and(|t| GONE_TAGS.iter().any(|g| t.contains(*g))) {
                scene.gone.push(names);
            } else if everyone_here || present.contains(&id) {
                scene.present.push(names);
            } else {
                scene.absent.push(names);
            }
        }
        let held = world.inventory.get(PERSONA);
        for (id, item) in &campaign.items {
            if held.is_none_or(|h| h.get(id).is_none_or(|n| *n == 0)) {
                scene.not_held.push(item.name.clone());
            }
        }
        let here = world
            .scene
            .get("location")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("");
        for (id, place) in &campaign.locations {
            if id == here {
                scene.here.clone_from(&place.name);
            } else {
                scene.elsewhere.push(place.name.clone());
            }
        }
        for fact in &world.facts {
            if fact.object == serde_json::Value::Bool(false) {
                let subject = campaign
                    .characters
                    .get(&fact.subject)
                    .map_or_else(|| fact.subject.replace('_', " "), |c| c.name.clone());
                scene
                    .false_facts
                    .push((subject, fact.predicate.replace('_', " ")));
            }
        }
        scene
    }
}

/// Honorifics that are not a person's own first name ("Captain Ilse Varn").
fn is_title(word: &str) -> bool {
    matches!(
        word.to_lowercase().as_str(),
        "captain"
            | "mister"
            | "mistress"
            | "lady"
            | "lord"
            | "sister"
            | "brother"
            | "father"
            | "mother"
            | "old"
            | "doctor"
            | "master"
            | "madam"
            | "sir"
            | "the"
    )
}

/// Verbs that make a named person the one who speaks or acts.
const ACTS: [&str; 40] = [
    "says",
    "said",
    "asks",
    "asked",
    "replies",
    "replied",
    "answers",
    "answered",
    "whispers",
    "whispered",
    "shouts",
    "shouted",
    "calls",
    "called",
    "nods",
    "nodded",
    "smiles",
    "smiled",
    "laughs",
    "laughed",
    "turns",
    "turned",
    "steps",
    "stepped",
    "walks",
    "walked",
    "hands",
    "handed",
    "takes",
    "took",
    "looks",
    "looked",
    "grins",
    "grinned",
    "sighs",
    "sighed",
    "leans",
    "leaned",
    "shrugs",
    "shrugged",
];

/// Words that put the persona somewhere.
const BEING_AT: [&str; 12] = [
    "you are in",
    "you stand in",
    "you arrive at",
    "you arrive in",
    "you reach",
    "you enter",
    "you step into",
    "you walk into",
    "you are at",
    "you stand at",
    "you find yourself in",
    "you find yourself at",
];

/// Words that make a sentence a use of something.
const USING: [&str; 14] = [
    "your ",
    "you use",
    "you take out",
    "you pull out",
    "you draw",
    "you unlock",
    "you hold up",
    "you hand over",
    "you show",
    "you raise",
    "you produce",
    "you slip the",
    "you turn the",
    "you wave the",
];

/// The words of `sentence`, lower-case, without punctuation.
fn words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether `name` (one or more words) occurs in `sentence` as whole words,
/// and the index of its first word.
fn find(sentence_words: &[String], name: &str) -> Option<usize> {
    let name = words(name);
    if name.is_empty() {
        return None;
    }
    sentence_words
        .windows(name.len())
        .position(|w| w.iter().zip(&name).all(|(a, b)| a == b))
}

/// Whether the person called `names` speaks or acts in `sentence`: named as
/// the sentence's subject, beside a speech or action verb, or in a sentence
/// with dialogue.
fn acts_in(sentence: &str, names: &[String]) -> Option<String> {
    let ws = words(sentence);
    for name in names {
        let Some(at) = find(&ws, name) else {
            continue;
        };
        let len = words(name).len();
        let subject = at == 0;
        let near = ws
            .iter()
            .skip(at.saturating_sub(2))
            .take(len + 4)
            .any(|w| ACTS.contains(&w.as_str()));
        let speaks = sentence.contains('"') || sentence.contains('“');
        if subject || near || speaks {
            return Some(name.clone());
        }
    }
    None
}

fn negated(sentence_words: &[String]) -> bool {
    sentence_words.iter().any(|w| {
        matches!(
            w.as_str(),
            "not"
                | "no"
                | "never"
                | "nothing"
                | "cannot"
                | "can't"
                | "don't"
                | "doesn't"
                | "isn't"
                | "won't"
                | "without"
                | "nowhere"
                | "gone"
                | "lost"
        )
    })
}

/// The contradictions in `narration` against `scene`.
pub fn contradictions(narration: &str, scene: &Scene) -> Vec<Hit> {
    let mut hits = Vec::new();
    for sentence in crate::memory::chunk::sentences(narration) {
        let ws = words(sentence);
        let lower = sentence.to_lowercase();
        let mut hit = |kind, about: String| {
            hits.push(Hit {
                kind,
                about,
                sentence: sentence.to_string(),
            });
        };
        for names in &scene.absent {
            if let Some(name) = acts_in(sentence, names) {
                hit(Contradiction::AbsentActs, name);
            }
        }
        for names in &scene.gone {
            if let Some(name) = names.iter().find(|n| find(&ws, n).is_some()) {
                hit(Contradiction::GoneAppears, name.clone());
            }
        }
        if !negated(&ws) {
            for item in &scene.not_held {
                let item_lower = item.to_lowercase();
                let bare = item_lower
                    .trim_start_matches("the ")
                    .trim_start_matches("a ");
                if find(&ws, bare).is_some()
                    && USING.iter().any(|u| {
                        lower
                            .find(u)
                            .is_some_and(|at| lower[at..].contains(bare) && lower[at..].len() < 80)
                    })
                {
                    hit(Contradiction::ItemNotHeld, item.clone());
                }
            }
            for place in &scene.elsewhere {
                let place_lower = place.to_lowercase();
                if BEING_AT.iter().any(|b| {
                    lower.find(b).is_some_and(|at| {
                        let after = &lower[at + b.len()..];
                        let after = after.trim_start().trim_start_matches("the ");
                        after.starts_with(place_lower.trim_start_matches("the "))
                    })
                }) {
                    hit(Contradiction::WrongPlace, place.clone());
                }
            }
            for (subject, predicate) in &scene.false_facts {
                if find(&ws, subject).is_some() && lower.contains(&predicate.to_lowercase()) {
                    hit(Contradiction::FalseFact, format!("{subject} {predicate}"));
                }
            }
        }
    }
    hits
}

/// What the engine decided for the persona's move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Ruled out by the referee.
    Blocked,
    Failure,
    Mixed,
    Success,
    /// No check was rolled (the move simply happens).
    Unrolled,
}

impl Outcome {
    /// From a roll's band name (`failure`, `mixed`, `success`, `critical`…).
    pub fn of_band(band: &str) -> Self {
        let band = band.to_lowercase();
        if band.contains("fail") || band.contains("miss") {
            Self::Failure
        } else if band.contains("mixed") || band.contains("partial") || band.contains("cost") {
            Self::Mixed
        } else {
            Self::Success
        }
    }
}

/// The opening of the player's narration the engine writes (#42) for a move
/// (`phrase`, as `phrasing::verb_phrase` words it) with `outcome`: the
/// decided outcome in plain words, for the model to continue ("You try to
/// pull the bolt, but"), so a failed or ruled-out move cannot be told as
/// done, a costly one turns on its cost, and a move that goes ahead is told
/// done before anything else happens ("You ask Bram about the key."; a whole
/// sentence rated better than "…, and" on a blind sheet, #42).
pub fn opening(outcome: Outcome, phrase: &str) -> String {
    if phrase.is_empty() {
        return String::new();
    }
    match outcome {
        Outcome::Blocked | Outcome::Failure => format!("You try to {phrase}, but"),
        Outcome::Mixed => format!("You manage to {phrase}, but"),
        Outcome::Success | Outcome::Unrolled => {
            // Speech ends its own sentence (`say "Who are you?"`).
            let ended = phrase
                .trim_end_matches(['"', '\u{201d}', '\''])
                .ends_with(['.', '!', '?']);
            if ended {
                format!("You {phrase}")
            } else {
                format!("You {phrase}.")
            }
        }
    }
}

/// Words the engine's verbs are told apart by (kept out of a move's content).
const STOP: [&str; 24] = [
    "i", "the", "a", "an", "to", "at", "in", "on", "of", "and", "with", "my", "me", "for", "from",
    "into", "up", "out", "try", "attempt", "it", "her", "his", "their",
];

/// Whether a narration tells a failed or ruled-out move as done: a sentence
/// in the second person holds the move's verb and its object, unnegated.
/// (Seed 001's resolver decides; the words must not reverse it.)
pub fn honours(outcome: Outcome, mv: &str, narration: &str) -> bool {
    if !matches!(outcome, Outcome::Blocked | Outcome::Failure) {
        return true;
    }
    let content: Vec<String> = words(mv)
        .into_iter()
        .filter(|w| !STOP.contains(&w.as_str()) && w.len() > 2)
        .collect();
    let Some(verb) = content.first() else {
        return true;
    };
    let object = content.get(1..).unwrap_or_default();
    if object.is_empty() {
        return true;
    }
    let stem = verb.trim_end_matches('e');
    !crate::memory::chunk::sentences(narration).iter().any(|s| {
        let ws = words(s);
        let second = ws.iter().any(|w| w == "you");
        let has_verb = ws
            .iter()
            .any(|w| w.starts_with(stem) && w.len() <= stem.len() + 3);
        let has_object = object.iter().any(|o| ws.contains(o));
        second && has_verb && has_object && !negated(&ws) && !fails(&ws)
    })
}

fn fails(ws: &[String]) -> bool {
    ws.iter().any(|w| {
        w.starts_with("fail")
            || matches!(
                w.as_str(),
                "try"
                    | "tries"
                    | "tried"
                    | "trying"
                    | "but"
                    | "refuses"
                    | "refused"
                    | "stuck"
                    | "locked"
                    | "slips"
                    | "barred"
                    | "almost"
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_opening_tells_every_decided_move_before_the_model_goes_on() {
        let ask = "ask Mara about the key";
        let cases = [
            (
                Outcome::Failure,
                ask,
                "You try to ask Mara about the key, but",
            ),
            (
                Outcome::Blocked,
                ask,
                "You try to ask Mara about the key, but",
            ),
            (
                Outcome::Mixed,
                ask,
                "You manage to ask Mara about the key, but",
            ),
            (Outcome::Success, ask, "You ask Mara about the key."),
            (Outcome::Unrolled, ask, "You ask Mara about the key."),
            // Speech ends its own sentence.
            (
                Outcome::Unrolled,
                "say \"Who rang the bell?\"",
                "You say \"Who rang the bell?\"",
            ),
            (
                Outcome::Success,
                "say \"Hold the rope\"",
                "You say \"Hold the rope\".",
            ),
            (Outcome::Unrolled, "", ""),
        ];
        for (outcome, phrase, expected) in cases {
            assert_eq!(opening(outcome, phrase), expected, "{outcome:?} {phrase:?}");
        }
    }

    fn scene() -> Scene {
        Scene {
            present: vec![vec!["Mara Quill".into(), "Mara".into()]],
            absent: vec![vec!["Odo Fenn".into(), "Odo".into()]],
            gone: vec![vec!["Brother Ash".into()]],
            not_held: vec!["the brass key".into()],
            here: "Reedmere Quay".into(),
            elsewhere: vec!["the Salt Archive".into()],
            false_facts: vec![("Odo Fenn".into(), "is the harbourmaster".into())],
        }
    }

    #[test]
    fn each_contradiction_is_found_with_its_sentence() {
        let text = "Odo says nothing is lost. Brother Ash watches from the dock. \
                    You take out the brass key and turn it. You step into the Salt Archive. \
                    Odo Fenn is the harbourmaster now.";
        let kinds: Vec<Contradiction> = contradictions(text, &scene())
            .iter()
            .map(|h| h.kind)
            .collect();
        assert_eq!(
            kinds,
            vec![
                Contradiction::AbsentActs,
                Contradiction::GoneAppears,
                Contradiction::ItemNotHeld,
                Contradiction::WrongPlace,
                Contradiction::AbsentActs,
                Contradiction::FalseFact,
            ]
        );
    }

    #[test]
    fn what_the_scene_allows_is_no_contradiction() {
        let text = "Mara says the tide is turning. You think of Odo, far off in the hills. \
                    You do not have the brass key. You are in Reedmere Quay still.";
        assert_eq!(contradictions(text, &scene()), Vec::new());
    }

    #[test]
    fn a_failed_move_told_as_done_is_not_honoured() {
        let mv = "I open the vault door";
        assert!(!honours(
            Outcome::Failure,
            mv,
            "You open the vault door and step inside."
        ));
        assert!(honours(
            Outcome::Failure,
            mv,
            "You try the vault door, but it holds."
        ));
        assert!(honours(Outcome::Failure, mv, "The door does not open."));
        assert!(honours(Outcome::Success, mv, "You open the vault door."));
        assert!(!honours(
            Outcome::Blocked,
            mv,
            "You opened the vault, grinning."
        ));
    }
}
