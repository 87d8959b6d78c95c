//! The engine's own choices (an open question, a way on) and the model's that invent or stray.
//!
//! A small model's choices are often not moves in this story at all: "Searle
//! the room for a lamp", "Ask Tamsin what the Jenkins have on them", "Call
//! 781 to your back door". Those that do not start with something to do, or
//! name someone, something or a number the story does not have, are dropped
//! (`invented`), and so are those about what the player was never shown
//! ("Walk back to your tent" on a quay with no tent: `unshown`, against the
//! last narrations, the scene, the story's names and the codex of what is
//! here). What the engine knows is possible then completes the set
//! (`complete`): when no choice speaks to anyone here, one puts a question
//! the story has left open to someone who is ("Ask Hesper Vane: \"Why do the
//! ferry lanterns burn green?\""), and when none goes anywhere, one takes a
//! way that is open from here. The player is never left without someone to
//! talk to or somewhere to go that the world has, and what the engine offers
//! is chosen from the turn's id, so a replay offers the same.

use std::sync::LazyLock;

use super::blocked::mid;
use super::check::{self, Reading};
use super::names::{capitalised, known};
use super::rules::destination;

/// Verbs a choice may start with: things a player does
/// (`assets/content/doing_verbs.txt`).
pub(super) static DOING: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| word_list(include_str!("../../../assets/content/doing_verbs.txt")));

/// The words of a word list: whitespace apart, `#` lines left out.
fn word_list(text: &'static str) -> Vec<&'static str> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect()
}

/// Why a choice the model offered is not a move in this story, if it is
/// not: it does not start with something to do, or it names someone,
/// something or a number the story does not have. For the model's choices
/// only: a move the player types is theirs to try.
pub fn invented(text: &str, r: &Reading) -> Option<String> {
    let ws = check::words(text);
    let first = ws.first()?;
    // "Quietly ask …": the verb after a manner word.
    let verb = if first.lower.ends_with("ly") {
        ws.get(1).unwrap_or(first)
    } else {
        first
    };
    if !check::is_any(&verb.lower, &DOING) {
        return Some(format!("\"{}\" is not something to do", first.text));
    }
    for (_, name) in capitalised(&ws) {
        if !known(&name, r) {
            return Some(format!("no one and nothing in the story is called {name}"));
        }
    }
    ws.iter()
        .find(|w| w.text.chars().any(|c| c.is_ascii_digit()) && !known(w.text, r))
        .map(|w| format!("the story has no {}", w.text))
}

/// Words too common to say what a choice is about ("first", "others",
/// "whether", "minute"): only the rest must have been shown
/// (`assets/content/common_words.txt`).
pub(super) static COMMON: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| word_list(include_str!("../../../assets/content/common_words.txt")));

/// A word as the vocabulary keeps it: lower case, no possessive, no -ed,
/// -ing or -es where a stem of four letters is left, no -s where three are.
pub(super) fn stem(word: &str) -> String {
    let lower = word.to_lowercase().replace('\u{2019}', "'");
    let lower = lower.strip_suffix("'s").unwrap_or(&lower);
    // A plural of three letters is still a word ("keys", "bags").
    [("ing", 4), ("ed", 4), ("es", 4), ("s", 3)]
        .iter()
        .find_map(|(end, least)| {
            lower
                .strip_suffix(end)
                .filter(|stem| stem.chars().count() >= *least)
        })
        .unwrap_or(lower)
        .to_owned()
}

/// The words of `text` (letters and apostrophes; a hyphen parts them).
pub(super) fn plain_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphabetic() && c != '\'' && c != '\u{2019}')
        .map(|w| w.trim_matches(['\'', '\u{2019}']))
        .filter(|w| !w.is_empty())
}

/// What the player has been shown, as a vocabulary: the last narrations,
/// the move, the scene, the story's names and what the codex says of the
/// place and the people here.
#[derive(Debug, Default)]
pub struct Shown(std::collections::BTreeSet<String>);

impl Shown {
    pub fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        Self(texts.into_iter().flat_map(plain_words).map(stem).collect())
    }
}

/// Whether a choice the model offered is about something the player has not
/// been shown ("Walk back to your tent" on a flooded quay with no tent,
/// "Check the anemometer in your pocket"): a word of four letters or more,
/// not a name, a common word or a verb of doing, that nothing shown has.
pub fn unshown(text: &str, shown: &Shown) -> Option<String> {
    plain_words(text)
        .skip(1)
        .filter(|w| w.chars().count() >= 4 && !w.starts_with(char::is_uppercase))
        .find(|w| {
            let lower = w.to_lowercase();
            !COMMON.contains(&lower.as_str())
                && !check::is_any(&lower, &DOING)
                && !shown.0.contains(&stem(w))
        })
        .map(|w| {
            format!(
                "nothing the player has been shown has a {}",
                w.to_lowercase()
            )
        })
}

/// What the engine can offer in this scene.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Offers {
    /// An open question put to someone here, or a word with them.
    pub ask: Option<String>,
    /// A way open from here.
    pub go: Option<String>,
}

impl Offers {
    /// The offers for the scene `r` reads, given the story's open questions
    /// (thread titles ending in "?") and the turn's id, which chooses among
    /// the people here, the questions and the ways.
    pub fn of(r: &Reading, questions: &[String], turn: u64) -> Self {
        let pick = |n: usize, salt: u64| {
            let n = u64::try_from(n).unwrap_or(u64::MAX).max(1);
            usize::try_from((turn / salt) % n).unwrap_or(0)
        };
        let here: Vec<String> = r
            .present
            .iter()
            .filter(|p| p.as_str() != crate::campaign::PLAYER)
            .filter_map(|p| {
                r.people
                    .iter()
                    .find(|(id, _)| id == p)
                    .and_then(|(_, ns)| ns.first().cloned())
            })
            .collect();
        let ask = (!here.is_empty()).then(|| {
            // Every question to every person in turn, not each to one.
            let asked = u64::try_from(questions.len()).unwrap_or(1).max(1);
            let who = &here[pick(here.len(), asked)];
            if questions.is_empty() {
                format!("Talk to {who}")
            } else {
                format!("Ask {who}: \"{}\"", questions[pick(questions.len(), 1)])
            }
        });
        let mut ways: Vec<&str> = r
            .routes
            .iter()
            .filter_map(|route| {
                if route.from == r.here {
                    Some(route.to.as_str())
                } else if route.to == r.here {
                    Some(route.from.as_str())
                } else {
                    None
                }
            })
            .collect();
        if r.routes.is_empty() && r.closed.is_empty() {
            // A campaign without routes: every place is one way from here.
            ways = r
                .places
                .iter()
                .map(|(id, _)| *id)
                .filter(|id| *id != r.here)
                .collect();
        }
        ways.sort_unstable();
        ways.dedup();
        let go = (!ways.is_empty())
            .then(|| format!("Go to {}", mid(&r.place_name(ways[pick(ways.len(), 1)]))));
        Self { ask, go }
    }
}

/// The most choices a turn offers.
const MOST: usize = 4;
/// The fewest choices a turn offers, when the engine has enough to offer.
const FEWEST: usize = 3;
/// The choice that is always possible.
const LOOK: &str = "Look around";

/// The model's `kept` choices completed with the engine's `offers`: a
/// question to someone here when no choice speaks to anyone here, a way on
/// when no choice goes anywhere, then up to three choices with a look
/// around; at most four, the model's last giving way. Returns the choices
/// and each one the engine added with why, for the log.
pub fn complete(
    mut kept: Vec<String>,
    offers: Offers,
    r: &Reading,
) -> (Vec<String>, Vec<(String, &'static str)>) {
    let someone_here: Vec<&String> = r
        .present
        .iter()
        .filter(|p| p.as_str() != crate::campaign::PLAYER)
        .collect();
    let talks = kept.iter().any(|c| {
        check::named_people(c, r)
            .iter()
            .any(|id| someone_here.contains(&id))
    });
    let goes = kept
        .iter()
        .any(|c| destination(c, r.here, &r.places).is_some());
    let mut added: Vec<(String, &'static str)> = Vec::new();
    let Offers { ask, go } = offers;
    let mut spare = Vec::new();
    match ask {
        Some(a) if !talks => added.push((a, "no choice spoke to anyone here")),
        Some(a) => spare.push(a),
        None => {}
    }
    match go {
        Some(g) if !goes => added.push((g, "no choice went anywhere")),
        Some(g) => spare.push(g),
        None => {}
    }
    kept.truncate(MOST - added.len());
    for s in spare.into_iter().chain([LOOK.to_owned()]) {
        if kept.len() + added.len() >= FEWEST {
            break;
        }
        if !kept
            .iter()
            .chain(added.iter().map(|(a, _)| a))
            .any(|c| c.eq_ignore_ascii_case(&s))
        {
            added.push((s, "fewer than three choices were left"));
        }
    }
    let mut choices = kept;
    choices.extend(added.iter().map(|(a, _)| a.clone()));
    (choices, added)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::campaign::Route;

    fn people() -> Vec<(String, Vec<String>)> {
        [
            ("hesper_vane", "Hesper Vane", "Hesper"),
            ("tamsin_reed", "Tamsin Reed", "Tamsin"),
        ]
        .iter()
        .map(|(id, n, f)| ((*id).to_owned(), vec![(*n).to_owned(), (*f).to_owned()]))
        .collect()
    }

    fn route(from: &str, to: &str) -> Route {
        Route {
            from: from.into(),
            to: to.into(),
            minutes: 10,
            closed_when: None,
        }
    }

    /// Nobody holds anything in these scenes.
    static NOTHING_HELD: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();

    fn reading<'a>(
        present: &'a [String],
        people: &'a [(String, Vec<String>)],
        routes: &'a [Route],
    ) -> Reading<'a> {
        Reading {
            here: "reedmere_quay",
            present,
            people,
            places: vec![
                ("reedmere_quay", "Reedmere Quay"),
                ("lamp_chapel", "The Lamp Chapel of St Wick"),
                ("toll_house", "The Toll House"),
            ],
            items: vec![("core_k7", "Core K-7"), ("sluice_key", "the Sluice Key")],
            factions: vec!["The Sluice Board"],
            lore: Vec::new(),
            player_name: "Mara",
            inventory: &NOTHING_HELD,
            whereabouts: BTreeMap::new(),
            routes,
            closed: &[],
        }
    }

    #[test]
    fn a_choice_that_invents_is_dropped_with_why() {
        let present = vec!["player".to_owned(), "hesper_vane".to_owned()];
        let people = people();
        let routes = [route("reedmere_quay", "lamp_chapel")];
        let r = reading(&present, &people, &routes);
        let cases = [
            ("Ask Hesper about the green lanterns", None),
            ("Quietly follow Tamsin to the chapel", None),
            ("Show the Sluice Board the Sluice Key", None),
            ("Ask Hesper what Core K-7 holds", None),
            ("Leave in silence", None),
            (
                "Searle the room for a lamp",
                Some("\"Searle\" is not something to do"),
            ),
            (
                "Ask Tamsin what the Jenkins have on them",
                Some("no one and nothing in the story is called Jenkins"),
            ),
            ("Call 781 to your back door", Some("the story has no 781")),
        ];
        for (choice, why) in cases {
            assert_eq!(invented(choice, &r).as_deref(), why, "{choice}");
        }
    }

    #[test]
    fn a_choice_about_what_the_player_was_never_shown_is_found() {
        let shown = Shown::of([
            "You ask Hesper about the lanterns. She points to the yard's gate, where the fog lies.",
            "The key turns.",
            "Reedmere Quay",
        ]);
        let cases = [
            ("Ask Hesper about the lantern", None),
            ("Walk through the gate quietly", None),
            ("Count the keys the gate takes", None),
            (
                "Wait in the fog with the others until the tide is gone",
                Some("tide"),
            ),
            ("Walk back to your tent", Some("tent")),
            ("Check the anemometer in your pocket", Some("anemometer")),
            ("Look for the ferry-man", Some("ferry")),
        ];
        for (choice, word) in cases {
            let expect = word.map(|w| format!("nothing the player has been shown has a {w}"));
            assert_eq!(unshown(choice, &shown), expect, "{choice}");
        }
    }

    #[test]
    fn the_engine_offers_a_question_to_someone_here_and_a_way_on() {
        let present = vec!["player".to_owned(), "hesper_vane".to_owned()];
        let people = people();
        let routes = [
            route("reedmere_quay", "lamp_chapel"),
            route("toll_house", "reedmere_quay"),
            route("lamp_chapel", "toll_house"),
        ];
        let r = reading(&present, &people, &routes);
        let questions = vec![
            "Why do the ferry lanterns burn green?".to_owned(),
            "Which gate will the Board open?".to_owned(),
        ];
        assert_eq!(
            Offers::of(&r, &questions, 0),
            Offers {
                ask: Some("Ask Hesper Vane: \"Why do the ferry lanterns burn green?\"".into()),
                go: Some("Go to the Lamp Chapel of St Wick".into()),
            }
        );
        // Another turn, another question and way; the same turn, the same.
        let next = Offers::of(&r, &questions, 1);
        assert_eq!(
            next.ask.as_deref(),
            Some("Ask Hesper Vane: \"Which gate will the Board open?\"")
        );
        assert_eq!(next.go.as_deref(), Some("Go to the Toll House"));
        assert_eq!(next, Offers::of(&r, &questions, 1));
        // No open question: a word with them. Alone: nobody to ask.
        assert_eq!(
            Offers::of(&r, &[], 0).ask.as_deref(),
            Some("Talk to Hesper Vane")
        );
        let alone = vec!["player".to_owned()];
        assert_eq!(
            Offers::of(&reading(&alone, &people, &routes), &questions, 0).ask,
            None
        );
    }

    #[test]
    fn the_model_choices_are_completed_with_what_they_lack() {
        let present = vec!["player".to_owned(), "hesper_vane".to_owned()];
        let people = people();
        let routes = [route("reedmere_quay", "lamp_chapel")];
        let r = reading(&present, &people, &routes);
        let offers = || Offers {
            ask: Some("Ask Hesper Vane: \"Why?\"".into()),
            go: Some("Go to the Lamp Chapel of St Wick".into()),
        };
        let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();

        // Three choices that neither talk nor go: the last gives way.
        let (choices, added) = complete(
            owned(&["Take the lantern", "Search the yard", "Leave in silence"]),
            offers(),
            &r,
        );
        assert_eq!(
            choices,
            owned(&[
                "Take the lantern",
                "Search the yard",
                "Ask Hesper Vane: \"Why?\"",
                "Go to the Lamp Chapel of St Wick",
            ])
        );
        assert_eq!(added[0].1, "no choice spoke to anyone here");
        assert_eq!(added[1].1, "no choice went anywhere");

        // Choices that talk to Hesper and go to the chapel need nothing.
        let both = owned(&[
            "Ask Hesper about the fog",
            "Walk to the Lamp Chapel",
            "Wait",
        ]);
        let (choices, added) = complete(both.clone(), offers(), &r);
        assert_eq!(choices, both);
        assert!(added.is_empty());

        // One choice that talks: a way on, then the look around.
        let (choices, _) = complete(owned(&["Ask Hesper about the fog"]), offers(), &r);
        assert_eq!(
            choices,
            owned(&[
                "Ask Hesper about the fog",
                "Go to the Lamp Chapel of St Wick",
                "Ask Hesper Vane: \"Why?\"",
            ])
        );

        // Nothing from the model and nothing the engine can offer: the look
        // around alone (the caller then falls back to the generic choices).
        let (choices, _) = complete(Vec::new(), Offers::default(), &r);
        assert_eq!(choices, owned(&[LOOK]));
    }
}
