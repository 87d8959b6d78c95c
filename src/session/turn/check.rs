//! The engine's move check (seed 001 validator): presence, possession, reach, before the referee.
//!
//! A typed move is read against the world, for every model: whoever it acts
//! on must be here, what it uses must be held, where it goes must be known
//! and one way from here. A move that fails is [`Blocked`]: nothing happens
//! in the world, the narrator is told why in the story's terms, and the
//! choices offer what can be done instead. What the check cannot read (a
//! lower-case "the window", a verb it does not know) goes on to the referee
//! as before: the engine blocks only what it is sure of.

use std::collections::BTreeSet;

pub use super::blocked::Blocked;
use super::names::{TITLES, capitalised, is_person, is_place, known};
pub use super::reading::Reading;
pub(super) use super::reading::{Word, is_any, words};
use crate::campaign::Route;

/// Verbs that act on a person directly before their name ("I ask Hesper",
/// "I turn to Ned", "I hand the key to Tamsin").
const ACTS_ON: [&str; 39] = [
    "ask", "tell", "turn", "speak", "talk", "say", "call", "greet", "hug", "hand", "give", "show",
    "offer", "help", "follow", "grab", "push", "shake", "kiss", "thank", "beg", "warn", "question",
    "whisper", "signal", "wave", "touch", "stop", "fight", "strike", "hit", "attack", "confront",
    "accuse", "bribe", "pay", "join", "approach", "walk",
];
/// Words that may stand between such a verb and the name.
const BETWEEN: [&str; 12] = [
    "to", "at", "toward", "towards", "with", "the", "over", "up", "on", "old", "young", "and",
];
/// Words after which a name is what the move is about, not whom it acts on.
const ABOUT: [&str; 12] = [
    "about", "of", "for", "find", "seek", "where", "remember", "mention", "search", "wait",
    "fetch", "whether",
];

/// Words before a verb that undo it.
const NOT: [&str; 7] = [
    "without", "not", "never", "avoid", "avoiding", "don't", "no",
];

/// Verbs that use what one carries, and the particles that may follow.
const USES: [&str; 22] = [
    "use", "show", "hand", "give", "offer", "light", "unlock", "wave", "read", "drink", "throw",
    "wear", "burn", "pour", "raise", "brandish", "produce", "draw", "unfold", "open", "ring",
    "blow",
];
/// Moves that bring a thing out from one's own person: it must be held.
const FROM_ONESELF: [&str; 5] = ["take", "pull", "draw", "produce", "fish"];
/// Where an object phrase ends.
const PHRASE_END: [&str; 18] = [
    "and", "to", "with", "at", "on", "from", "into", "onto", "so", "then", "for", "in", "toward",
    "towards", "before", "while", "over", "under",
];
const ARTICLES: [&str; 8] = ["the", "a", "an", "my", "some", "this", "that", "our"];

const GOING: [&str; 16] = [
    "go", "walk", "head", "row", "run", "hurry", "sail", "pole", "ride", "wade", "swim", "travel",
    "return", "climb", "make", "set",
];
const INTO: [&str; 5] = ["to", "onto", "into", "toward", "towards"];

/// The check: the first thing the move cannot do, if any.
pub fn check(text: &str, whisper_to: Option<&str>, r: &Reading) -> Option<Blocked> {
    if let Some(to) = whisper_to
        && !r.present.iter().any(|p| p == to)
    {
        return Some(absent(to, r));
    }
    let ws = words(text);
    people(&ws, r)
        .or_else(|| things(&ws, r))
        .or_else(|| places(&ws, r))
        .or_else(|| strangers(&ws, r))
}

fn absent(id: &str, r: &Reading) -> Blocked {
    Blocked::Absent {
        id: id.to_owned(),
        name: r.person_name(id),
        at: r.whereabouts.get(id).map(|p| r.place_name(p)),
    }
}

/// Whether the word before `at` (skipping fillers) is a verb acting on a
/// person, or, after "to" or "with", one a few words further back ("I hand
/// the key to Tamsin", "I walk out with Ned").
fn acted_on(ws: &[Word], at: usize) -> bool {
    let mut linked = false;
    let mut words_back = 0;
    for (k, w) in ws[..at].iter().enumerate().rev() {
        let l = w.lower.as_str();
        if ABOUT.contains(&l) {
            return false;
        }
        if is_any(l, &ACTS_ON) {
            // "without asking Aldous", "I do not follow Ned": not acted on.
            let undone = k
                .checked_sub(1)
                .and_then(|b| ws.get(b))
                .is_some_and(|b| NOT.contains(&b.lower.as_str()));
            return !undone;
        }
        if ["to", "with"].contains(&l) && words_back == 0 {
            linked = true;
        }
        if !BETWEEN.contains(&l) {
            words_back += 1;
            if !linked || words_back > 4 || w.starts_sentence {
                return false;
            }
        }
        if w.starts_sentence {
            return false;
        }
    }
    false
}

/// Where `name`'s words start in `ws`, as whole words.
fn find_name(ws: &[Word], name: &str) -> Option<usize> {
    let parts: Vec<String> = words(name).iter().map(|w| w.lower.clone()).collect();
    if parts.is_empty() || ws.len() < parts.len() {
        return None;
    }
    (0..=ws.len() - parts.len())
        .find(|&i| parts.iter().enumerate().all(|(j, p)| ws[i + j].lower == *p))
}

/// Presence: a named NPC acted on must be here.
fn people(ws: &[Word], r: &Reading) -> Option<Blocked> {
    for (id, names) in r.people {
        let at = names
            .iter()
            .chain(std::iter::once(id))
            .filter_map(|n| find_name(ws, n))
            .min();
        if let Some(at) = at
            && acted_on(ws, at)
            && !r.present.iter().any(|p| p == id)
        {
            return Some(absent(id, r));
        }
    }
    None
}

/// A capitalised name acted on must be someone's ("I turn to Ysolde
/// Farrant"), every word of it: one known word does not make the name
/// known ("Captain Bram Oakhollow" is not Bram Okafor). Titles, "of" and
/// "the" aside.
fn strangers(ws: &[Word], r: &Reading) -> Option<Blocked> {
    for (at, name) in capitalised(ws) {
        let each_known = name
            .split_whitespace()
            .filter(|w| {
                let lower = w.to_lowercase();
                let lower = lower.trim_end_matches("'s");
                lower.chars().count() > 2
                    && !TITLES.contains(&lower)
                    && !["of", "the", "and"].contains(&lower)
            })
            .all(|w| known(w, r));
        if acted_on(ws, at) && !(known(&name, r) && each_known) {
            return Some(Blocked::Stranger { name });
        }
    }
    None
}

/// Verbs of speech: a choice that speaks to someone starts with one.
pub(super) const SPEAKS: [&str; 13] = [
    "ask", "tell", "talk", "speak", "question", "greet", "thank", "beg", "warn", "accuse", "bribe",
    "persuade", "convince",
];

/// Whether a choice the model offered speaks to no one who could answer,
/// and why, for the log: a place spoken to as if it were a person ("Ask
/// Reedmere Quay whether he has a room"), or anyone at all where the player
/// is alone ("Ask the vault manager what it cost", in an empty room). For
/// the model's choices only: a move the player types is theirs to try.
pub fn speaks_to_no_one(text: &str, r: &Reading) -> Option<String> {
    let ws = words(text);
    let verb = ws.iter().take(2).position(|w| is_any(&w.lower, &SPEAKS))?;
    if r.present.iter().all(|p| p == crate::campaign::PLAYER) {
        return Some("no one is here to speak to".to_owned());
    }
    let to = ws
        .iter()
        .enumerate()
        .skip(verb + 1)
        .find(|(_, w)| !BETWEEN.contains(&w.lower.as_str()))?
        .0;
    let (_, name) = capitalised(&ws)
        .into_iter()
        .find(|(start, _)| (verb + 1..=to).contains(start))?;
    (is_place(&name, r) && !is_person(&name, r))
        .then(|| format!("{name} is a place, and a place does not answer"))
}

/// The object phrase after word `at`: words up to a phrase end, articles
/// dropped; whether it was "my …".
fn object_after(ws: &[Word], at: usize) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut mine = false;
    for w in ws.iter().skip(at + 1) {
        let l = w.lower.as_str();
        if w.starts_sentence || PHRASE_END.contains(&l) || out.len() >= 6 {
            break;
        }
        if ["out", "up", "forth"].contains(&l) && out.is_empty() {
            continue;
        }
        if ARTICLES.contains(&l) {
            mine |= l == "my";
            if out.is_empty() {
                continue;
            }
        }
        if l == "it" || l == "them" || l == "him" || l == "her" {
            break;
        }
        out.push(w.lower.clone());
    }
    (out, mine)
}

/// Item ids the phrase names: by whole name or id words first, else by head noun.
fn items_named<'a>(phrase: &[String], r: &Reading<'a>) -> (Vec<&'a str>, Vec<&'a str>) {
    let text = phrase.join(" ");
    let mut whole = Vec::new();
    let mut head = Vec::new();
    for (id, name) in &r.items {
        let name = name.to_lowercase();
        let bare = name.strip_prefix("the ").unwrap_or(&name).to_owned();
        let id_words = id.rsplit(':').next().unwrap_or(id).replace('_', " ");
        if [bare.as_str(), id_words.as_str()]
            .iter()
            .any(|f| !f.is_empty() && (text.contains(*f) || (f.contains(&text) && text.len() > 3)))
        {
            whole.push(*id);
        } else if let Some(last) = phrase.last()
            && [&bare, &id_words].iter().any(|f| {
                f.split([' ', '-'])
                    .filter(|w| !["of", "the"].contains(w))
                    .any(|w| w == last || format!("{w}s") == *last)
            })
        {
            head.push(*id);
        }
    }
    (whole, head)
}

/// Possession: what a move uses or brings out must be held.
fn things(ws: &[Word], r: &Reading) -> Option<Blocked> {
    for (at, w) in ws.iter().enumerate() {
        // A verb in the past is something told ("I let them believe Ned
        // burned the page"), not the player's doing now.
        if w.lower.ends_with("ed") && !USES.contains(&w.lower.as_str()) {
            continue;
        }
        // "take out the key", "take the key out of my coat": from one's
        // person; "take the skiff out onto the water" is not.
        let from_oneself = is_any(&w.lower, &FROM_ONESELF)
            && (ws.get(at + 1).is_some_and(|n| n.lower == "out")
                || ws.get(at + 1..).is_some_and(|rest| {
                    rest.windows(3).take(6).any(|x| {
                        matches!(
                            (
                                x[0].lower.as_str(),
                                x[1].lower.as_str(),
                                x[2].lower.as_str()
                            ),
                            ("out", "of", "my" | "your") | ("from", "my" | "your", _)
                        )
                    })
                }));
        let using = is_any(&w.lower, &USES);
        if !(from_oneself || using) {
            continue;
        }
        let (phrase, mine) = object_after(ws, at);
        if phrase.is_empty() {
            continue;
        }
        let (whole, head) = items_named(&phrase, r);
        // A whole name says which item; a head noun alone ("the lantern")
        // any item it fits.
        let is_held = |id: &&str| r.holds(crate::campaign::PLAYER, id);
        let candidates = if whole.is_empty() { &head } else { &whole };
        if candidates.iter().any(is_held) {
            continue;
        }
        if let Some(id) = whole.first() {
            // Using what lies here (the ferry's lanterns on her deck) is no
            // possession: only bringing it out of one's pocket is.
            // Using what lies about the world (the ferry's lanterns on her
            // deck, a thing nobody holds) is the referee's to judge; only
            // bringing it out of one's own pocket, or what a person keeps, is
            // the engine's.
            let holder = r.holder(id);
            let a_place = holder.is_none_or(|h| r.places.iter().any(|(p, _)| *p == h));
            if a_place && !from_oneself && !mine {
                continue;
            }
            let holder_here =
                holder.is_some_and(|h| h == r.here || r.present.iter().any(|p| p == h));
            let name = r.person_name(id);
            let bare = ["the ", "The "]
                .iter()
                .find_map(|a| name.strip_prefix(a))
                .unwrap_or(&name);
            return Some(Blocked::NotHeld {
                item: the(bare),
                holder: holder.map(|h| r.person_name(h)),
                holder_here,
            });
        }
        if from_oneself || mine {
            let item = phrase.join(" ");
            let article = if mine { "your" } else { "a" };
            return Some(Blocked::NotHeld {
                item: format!("{article} {item}"),
                holder: None,
                holder_here: false,
            });
        }
    }
    None
}

/// Reach: a capitalised place the move goes to must be known, and a known
/// one must be one way from here.
fn places(ws: &[Word], r: &Reading) -> Option<Blocked> {
    let going = |upto: usize| ws[..upto].iter().any(|w| is_any(&w.lower, &GOING));
    for (at, w) in ws.iter().enumerate() {
        if !INTO.contains(&w.lower.as_str()) || !going(at) {
            continue;
        }
        let mut next = at + 1;
        while ws.get(next).is_some_and(|n| n.lower == "the") {
            next += 1;
        }
        let Some((_, name)) = capitalised(ws).into_iter().find(|(s, _)| *s == next) else {
            continue;
        };
        if known(&name, r) {
            continue;
        }
        return Some(Blocked::UnknownPlace {
            place: if ws[next - 1].lower == "the" {
                format!("the {name}")
            } else {
                name
            },
        });
    }
    None
}

/// A known place the move goes to that is not one way from here.
pub fn far(to: &str, r: &Reading) -> Option<Blocked> {
    let way = r.way(to);
    if let Some((_, None)) = way {
        return None;
    }
    let joins = |x: &Route| (x.from == r.here && x.to == to) || (x.to == r.here && x.from == to);
    if let Some(shut) = r.closed.iter().find(|x| joins(x)) {
        return Some(Blocked::Closed {
            id: to.to_owned(),
            place: r.place_name(to),
            why: shut
                .closed_when
                .as_ref()
                .map_or_else(String::new, |c| c.why.clone()),
            via: way
                .and_then(|(_, via)| via)
                .map(|via| (via.clone(), r.place_name(&via))),
        });
    }
    match way {
        Some((_, None)) => None,
        Some((_, Some(via))) => Some(Blocked::Far {
            id: to.to_owned(),
            place: r.place_name(to),
            via: Some((via.clone(), r.place_name(&via))),
        }),
        None => Some(Blocked::Far {
            id: to.to_owned(),
            place: r.place_name(to),
            via: None,
        }),
    }
}

/// An item's name with "the" before it, unless it is someone's ("Bram's
/// own logbook", not "the Bram's own logbook").
fn the(bare: &str) -> String {
    let first = bare.split_whitespace().next().unwrap_or_default();
    if first.ends_with("'s") || first.ends_with("\u{2019}s") {
        bare.to_owned()
    } else {
        format!("the {bare}")
    }
}

/// The ids of people a move names who are known (for tests and callers).
pub fn named_people(text: &str, r: &Reading) -> BTreeSet<String> {
    let ws = words(text);
    r.people
        .iter()
        .filter(|(id, ns)| {
            ns.iter()
                .chain(std::iter::once(id))
                .any(|n| find_name(&ws, n).is_some())
        })
        .map(|(id, _)| id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    struct World {
        present: Vec<String>,
        people: Vec<(String, Vec<String>)>,
        inventory: BTreeMap<String, BTreeMap<String, u32>>,
        routes: Vec<Route>,
    }

    fn world() -> World {
        let people = [
            ("hesper_vane", "Hesper Vane", "Hesper"),
            ("ned_fallow", "Ned Fallow", "Ned"),
            ("aldous_crane", "Aldous Crane", "Aldous"),
        ]
        .iter()
        .map(|(id, n, f)| ((*id).to_owned(), vec![(*n).to_owned(), (*f).to_owned()]))
        .collect();
        let mut inventory: BTreeMap<String, BTreeMap<String, u32>> = BTreeMap::new();
        inventory
            .entry("player".into())
            .or_default()
            .insert("hand_lantern".into(), 1);
        inventory
            .entry("aldous_crane".into())
            .or_default()
            .insert("sluice_key".into(), 1);
        inventory
            .entry("patience_deck".into())
            .or_default()
            .insert("ferry_lantern".into(), 6);
        let route = |from: &str, to: &str| Route {
            from: from.into(),
            to: to.into(),
            minutes: 10,
            closed_when: None,
        };
        World {
            present: vec!["player".into(), "hesper_vane".into(), "aldous_crane".into()],
            people,
            inventory,
            routes: vec![
                route("reedmere_quay", "patience_deck"),
                route("patience_deck", "drowned_reach"),
                route("reedmere_quay", "toll_house"),
            ],
        }
    }

    fn reading(w: &World) -> Reading<'_> {
        Reading {
            here: "reedmere_quay",
            present: &w.present,
            people: &w.people,
            places: vec![
                ("reedmere_quay", "Reedmere Quay"),
                ("patience_deck", "The Ferry Patience"),
                ("drowned_reach", "The Drowned Reach"),
                ("toll_house", "The Toll House"),
            ],
            items: vec![
                ("hand_lantern", "Hand lantern"),
                ("sluice_key", "Sluice key"),
                ("ferry_lantern", "Ferry lantern"),
            ],
            factions: vec!["The Sluice Board"],
            lore: Vec::new(),
            player_name: "",
            inventory: &w.inventory,
            whereabouts: [("ned_fallow".to_owned(), "toll_house".to_owned())].into(),
            routes: &w.routes,
            closed: &[],
        }
    }

    #[test]
    fn a_choice_speaking_to_a_place_or_to_an_empty_room_is_found() {
        let w = world();
        let r = reading(&w);
        let said = |text: &str| speaks_to_no_one(text, &r);
        assert_eq!(
            said("Ask Reedmere Quay whether he has a new room").as_deref(),
            Some("Reedmere Quay is a place, and a place does not answer")
        );
        assert!(said("Ask The Toll House to read it aloud").is_some());
        assert!(
            said("Talk to the Ferry Patience").is_some(),
            "a start of its name"
        );
        // People, topics and places that are only where the move goes are not.
        assert_eq!(said("Ask Hesper about Reedmere Quay"), None);
        assert_eq!(said("Ask Aldous whether the dock is too dark"), None);
        assert_eq!(said("Walk to The Toll House"), None);
        assert_eq!(said("Search Reedmere Quay for the ledger page"), None);
        let mut alone = world();
        alone.present = vec!["player".into()];
        let r = reading(&alone);
        assert_eq!(
            speaks_to_no_one("Ask the vault manager what it cost", &r).as_deref(),
            Some("no one is here to speak to")
        );
        assert_eq!(
            speaks_to_no_one("Search the quay for the ledger page", &r),
            None
        );
    }

    #[test]
    fn an_absent_person_acted_on_is_blocked_and_a_topic_is_not() {
        let w = world();
        let r = reading(&w);
        let b = check("I turn to Ned and ask him to help me.", None, &r);
        assert_eq!(
            b,
            Some(Blocked::Absent {
                id: "ned_fallow".into(),
                name: "Ned Fallow".into(),
                at: Some("The Toll House".into())
            })
        );
        assert_eq!(
            b.map(|b| b.instead(&[])),
            Some(vec!["Go to the Toll House to find Ned Fallow".to_owned()])
        );
        assert_eq!(check("I ask Hesper about Ned Fallow.", None, &r), None);
        assert_eq!(check("I go looking for Ned.", None, &r), None);
        assert!(check("Hesper, where is Ned?", Some("ned_fallow"), &r).is_some());
        assert_eq!(check("I ask Hesper to help me.", None, &r), None);
    }

    #[test]
    fn a_stranger_is_blocked_but_known_names_are_not() {
        let w = world();
        let r = reading(&w);
        assert_eq!(
            check(
                "I turn to Ysolde Farrant and ask them to help me.",
                None,
                &r
            ),
            Some(Blocked::Stranger {
                name: "Ysolde Farrant".into()
            })
        );
        // One known word does not make a name known (the harness's planted
        // "Captain Bram Oakhollow" passed until stop 64).
        assert_eq!(
            check("I turn to Captain Hesper Oakhollow and ask her.", None, &r),
            Some(Blocked::Stranger {
                name: "Captain Hesper Oakhollow".into()
            })
        );
        assert_eq!(check("I turn to Captain Hesper Vane.", None, &r), None);
        assert_eq!(check("I speak to the Sluice Board.", None, &r), None);
        assert_eq!(check("I greet Hesper Vane warmly.", None, &r), None);
        // A slip of the pen is no stranger; a move that avoids someone does not act on them.
        assert_eq!(check("I tell Aldus how I found it.", None, &r), None);
        assert_eq!(
            check("I run into the shed without asking Ned.", None, &r),
            None
        );
    }

    #[test]
    fn an_items_name_takes_the_unless_it_is_someones() {
        assert_eq!(the("Sluice key"), "the Sluice key");
        assert_eq!(the("Bram's own logbook"), "Bram's own logbook");
    }

    #[test]
    fn what_is_used_must_be_held() {
        let w = world();
        let r = reading(&w);
        assert_eq!(check("I raise my hand lantern.", None, &r), None);
        assert_eq!(
            check("I take out the sluice key and open the gate.", None, &r),
            Some(Blocked::NotHeld {
                item: "the Sluice key".into(),
                holder: Some("Aldous Crane".into()),
                holder_here: true
            })
        );
        let held_here = check("I take out the sluice key and open the gate.", None, &r).unwrap();
        assert_eq!(
            held_here.instead(&["Aldous Crane".to_owned()]),
            vec!["Ask Aldous Crane for the Sluice key".to_owned()]
        );
        // Here, but with no one here: it lies at the place, to be picked up.
        assert_eq!(
            held_here.instead(&[]),
            vec!["Pick up the Sluice key".to_owned()]
        );
        assert_eq!(
            check("I take out a loaded pistol and use it.", None, &r),
            Some(Blocked::NotHeld {
                item: "a loaded pistol".into(),
                holder: None,
                holder_here: false
            })
        );
        // A whole name says which: holding a hand lantern is not holding the ferry's.
        assert!(matches!(
            check("I take out the ferry lantern and use it.", None, &r),
            Some(Blocked::NotHeld { .. })
        ));
        // What lies on the deck may be used; the window is scenery.
        assert_eq!(check("I light the ferry lantern.", None, &r), None);
        assert_eq!(check("I open the window.", None, &r), None);
        assert_eq!(check("I pull the rope hard.", None, &r), None);
        assert_eq!(
            check(
                "I let the town believe Aldous burned the sluice key.",
                None,
                &r
            ),
            None
        );
        assert_eq!(
            check("I take the skiff out onto the water.", None, &r),
            None
        );
        assert!(matches!(
            check("I take the sluice key out of my coat.", None, &r),
            Some(Blocked::NotHeld { .. })
        ));
    }

    #[test]
    fn unknown_and_far_places_are_blocked() {
        let w = world();
        let r = reading(&w);
        assert_eq!(
            check("I walk to the Ninth Catacomb.", None, &r),
            Some(Blocked::UnknownPlace {
                place: "the Ninth Catacomb".into()
            })
        );
        assert_eq!(
            check("I walk to Port Vellimar.", None, &r).map(|b| b.reason()),
            Some("no one here knows of any place called Port Vellimar".into())
        );
        assert_eq!(check("I walk to the Toll House.", None, &r), None);
        assert_eq!(check("I walk to the window.", None, &r), None);
        assert_eq!(far("toll_house", &r), None);
        assert_eq!(
            far("drowned_reach", &r),
            Some(Blocked::Far {
                id: "drowned_reach".into(),
                place: "The Drowned Reach".into(),
                via: Some(("patience_deck".into(), "The Ferry Patience".into()))
            })
        );
        assert_eq!(r.way("patience_deck"), Some((10, None)));
    }

    #[test]
    fn a_way_a_clock_shut_is_closed_and_the_way_round_offered() {
        let w = world();
        let shut = vec![Route {
            from: "reedmere_quay".into(),
            to: "drowned_reach".into(),
            minutes: 5,
            closed_when: Some(crate::campaign::ClosedWhen {
                clock: "flood_rising".into(),
                at_least: 2,
                why: "the plank walks are under the flood".into(),
            }),
        }];
        let mut r = reading(&w);
        r.closed = &shut;
        let blocked = far("drowned_reach", &r).unwrap();
        assert_eq!(
            blocked.reason(),
            "the way to the Drowned Reach is shut: the plank walks are under the flood; \
             the way round goes by the Ferry Patience"
        );
        assert_eq!(
            blocked.narration().unwrap(),
            "You make for the Drowned Reach, but the way is shut: the plank walks are under \
             the flood. The way round goes by the Ferry Patience."
        );
        assert_eq!(
            blocked.instead(&[]),
            vec!["Go to the Ferry Patience".to_owned()]
        );
        // Nothing open beside it: shut, with no way round.
        let alone = vec![];
        r.routes = &alone;
        assert_eq!(
            far("drowned_reach", &r).map(|b| b.reason()),
            Some(
                "the way to the Drowned Reach is shut: the plank walks are under the flood".into()
            )
        );
        // Open again (the clock below it): one step.
        r.routes = &shut;
        r.closed = &[];
        assert_eq!(far("drowned_reach", &r), None);
    }

    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "I", "go", "to", "the", "ask", "give", "Ned", "Hesper", "Vane", "Fallow", "Aldous",
        "Crane", "Ysolde", "Farrant", "Toll", "House", "Drowned", "Reach", "Ferry", "Patience",
        "lantern", "sluice", "key", "Sluice", "Board", "into", "toward", "her", "him", "my",
        "take", "from",
    ];

    fn text() -> impl Strategy<Value = String> {
        crate::session::moves_strategy::text(WORDS)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// Any move is read without a panic; what blocks it names one of the
        /// campaign's people or places, or a capitalised name in the move.
        #[test]
        fn any_move_is_checked_without_a_panic(move_text in text(), whisper in any::<bool>()) {
            let w = world();
            let r = reading(&w);
            let _ = check(&move_text, whisper.then_some("ned_fallow"), &r);
            for id in named_people(&move_text, &r) {
                prop_assert!(w.people.iter().any(|(p, _)| *p == id), "{id}");
            }
            let _ = far(&move_text, &r);
        }
    }
}
