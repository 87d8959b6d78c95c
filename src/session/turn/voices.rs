//! An NPC's intention read against the story, and the author's own lines where it invents.
//!
//! A 135M model asked what an NPC does often answers for someone else
//! ("Bram asks Moreau…" as Cass's), under a name the story does not have
//! ("Reedless Crane", "Mayabay"), with someone who is not here, or with what
//! that NPC already meant to do the turn before. Its narration then tells
//! exactly that. Such an intention is not acted on (`misread`): the NPC says
//! one of the lines its author wrote for it instead (its profile's speech
//! examples, the current beat's dialogue), one it has not said in this
//! scene, naming no one who is absent, the likeliest to bear on the move
//! (`pick`); with none left, it stays quiet. An NPC the player speaks to
//! answers in those lines first, without asking the model. The line is told
//! by the engine (`told`), so what the player reads of it is the author's.

use std::collections::BTreeSet;

use super::check::{self, Reading};
use super::names::{TITLES, bare, capitalised, is_thing, known, mentions, names_of, whose};
use super::offers::{COMMON, DOING, plain_words, stem};

/// Words an intention may start with that are not a name.
pub(super) const OPENERS: [&str; 44] = [
    "the", "a", "an", "then", "with", "after", "when", "while", "at", "in", "on", "as", "still",
    "now", "before", "without", "once", "if", "i", "he", "she", "they", "it", "we", "you", "his",
    "her", "their", "its", "not", "no", "one", "both", "all", "for", "from", "to", "so", "but",
    "and", "there", "this", "that", "my",
];

/// The capitalised words a sentence starts with, when they are a name
/// that acts: a verb of the third person follows them ("Reedless reads",
/// not "Arrange the boats" or "Assist Aldous in…"), and the first is not
/// an opening word, an adverb or a verb of doing ("Then", "Quietly");
/// without the titles before it ("Mr Moreau" is Moreau).
pub(super) fn subject<'t>(ws: &[check::Word<'t>]) -> Option<Vec<&'t str>> {
    let run: Vec<&str> = ws
        .iter()
        .take_while(|w| w.text.starts_with(char::is_uppercase))
        .map(|w| w.text)
        .collect();
    let acts = ws.get(run.len()).is_some_and(|w| {
        w.text.starts_with(char::is_lowercase) && w.lower.ends_with('s') && !w.lower.ends_with("ss")
    });
    let first = run.first()?.to_lowercase();
    let a_name = !OPENERS.contains(&first.as_str())
        && !["ly", "ing", "ed"].iter().any(|e| first.ends_with(e))
        && !check::is_any(&first, &DOING);
    let run: Vec<&str> = run
        .into_iter()
        .skip_while(|w| TITLES.contains(&w.to_lowercase().as_str()))
        .collect();
    (acts && a_name && !run.is_empty()).then_some(run)
}

/// How alike two intentions of one NPC may be before the second is the
/// first again (shared words over all words, of four letters or more).
const SAME: f64 = 0.5;

/// The name of someone other than `npc` that `text` names: anyone, or
/// with `absent_only` someone who is not here.
fn other_named<'r>(text: &str, npc: &str, r: &'r Reading, absent_only: bool) -> Option<&'r str> {
    r.people
        .iter()
        .filter(|(id, _)| id != npc && !(absent_only && r.present.contains(id)))
        .find(|(id, _)| names_of(id, r).iter().any(|n| mentions(text, n)))
        .and_then(|(_, names)| names.first().map(String::as_str))
}

/// An item `text` names that someone or somewhere else holds: not `npc`,
/// not anyone here, not this place (an item held nowhere may be anywhere).
fn item_elsewhere<'r>(text: &str, npc: &str, r: &'r Reading) -> Option<&'r str> {
    r.items
        .iter()
        .filter(|(id, name)| {
            let name = name.strip_prefix("the ").unwrap_or(name);
            mentions(text, name) || mentions(text, &id.replace('_', " "))
        })
        .find(|(id, _)| {
            let holders: Vec<&str> = r
                .inventory
                .iter()
                .filter(|(_, held)| held.get(*id).is_some_and(|n| *n > 0))
                .map(|(owner, _)| owner.as_str())
                .collect();
            !holders.is_empty()
                && !holders
                    .iter()
                    .any(|h| *h == npc || *h == r.here || r.present.iter().any(|p| p == h))
        })
        .map(|(_, name)| *name)
}

/// The words that say what a text is about: four letters or more, not
/// common, as stems.
fn gist(text: &str) -> BTreeSet<String> {
    plain_words(text)
        .filter(|w| w.chars().count() >= 4)
        .map(stem)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect()
}

/// Why `npc`'s intention cannot stand, if it cannot: it says nothing
/// readable; it tells what someone else does, or under a name the story
/// does not have; it names a stranger or someone who is not here; or it is
/// what `npc` meant to do before (`earlier`, its past intentions).
pub(super) fn misread(intention: &str, npc: &str, r: &Reading, earlier: &[&str]) -> Option<String> {
    let own = r
        .people
        .iter()
        .find(|(id, _)| id == npc)
        .and_then(|(_, ns)| ns.first())
        .map_or(npc, String::as_str);
    let readable = plain_words(intention)
        .filter(|w| w.chars().all(|c| c.is_ascii_alphabetic() || c == '\''))
        .count();
    if readable < 2 {
        return Some("it says nothing readable".into());
    }
    let ws = check::words(intention);
    let said = intention.trim_start().starts_with(['"', '\u{201c}', '\'']);
    if let Some(run) = subject(&ws).filter(|_| !said) {
        let whole = run.join(" ");
        match whose(&whole, r).or_else(|| whose(run[0], r)) {
            Some(id) if id != npc => {
                let other = names_of(id, r).first().copied().unwrap_or(id);
                return Some(format!("it tells what {other} does, not {own}"));
            }
            // No one's name: a stranger's, or a word of a place's acting
            // ("Reedmore begins to make her way…", a slip of Reedmere).
            None if !is_thing(&whole, r) => {
                if run.len() == 1 && known(run[0], r) {
                    return Some(format!("it tells what {whole} does, not {own}"));
                }
                return Some(format!("no one in the story is called {whole}"));
            }
            // Its own name, or a thing of the story's.
            Some(_) | None => {}
        }
    }
    for (_, name) in capitalised(&ws) {
        if !known(&name, r) {
            return Some(format!("no one in the story is called {name}"));
        }
    }
    if let Some(away) = other_named(intention, npc, r, true) {
        return Some(format!("{away} is not here"));
    }
    if let Some(item) = item_elsewhere(intention, npc, r) {
        return Some(format!("{item} is not here"));
    }
    // Too few words to tell one intention from another: it stands.
    let now = gist(intention);
    if now.len() >= 3 {
        for before in earlier {
            let before = gist(before);
            let shared = now.intersection(&before).count();
            #[allow(clippy::cast_precision_loss, reason = "word counts are small")]
            let alike = shared as f64 / now.union(&before).count() as f64;
            if alike >= SAME {
                return Some(format!("{own} meant the same before"));
            }
        }
    }
    None
}

/// The line `npc` says of `pool` (its author's lines), if one is left: not
/// said in `said` (what the scene has told so far), naming no one who is
/// absent (and, `to_player`, no one but the player); the one sharing the
/// most words with `cues` (the move and what was just told), the turn's id
/// choosing among equals.
pub(super) fn pick<'p>(
    pool: &'p [String],
    said: &str,
    cues: &str,
    npc: &str,
    r: &Reading,
    turn: u64,
    to_player: bool,
) -> Option<&'p str> {
    let said = said.to_lowercase();
    let cues = gist(cues);
    let n = pool.len().max(1);
    let start = usize::try_from(turn % u64::try_from(n).unwrap_or(1)).unwrap_or(0);
    pool.iter()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !said.contains(&line.trim().to_lowercase()))
        .filter(|(_, line)| other_named(line, npc, r, true).is_none())
        // Said to the player, a line spoken to someone else ("The winch
        // key, Sorokina") is not an answer.
        .filter(|(_, line)| !to_player || other_named(line, npc, r, false).is_none())
        .max_by_key(|(i, line)| {
            let score = gist(line).intersection(&cues).count();
            // Among equals, the first from the turn's place in the pool.
            (score, n - (i + n - start) % n)
        })
        .map(|(_, line)| line.trim())
}

/// What a move asks `npc` about, of the subjects its author wrote answers
/// for (`subjects`: thread, character, place or item ids): a thread whose
/// question (`threads`: id and title) shares its telling words with the
/// move (all of them, or two), else a person, place or item the move names
/// (`npc` aside). The thread sharing the most words wins; on a tie, the
/// first.
pub(super) fn asked_about<'s>(
    text: &str,
    npc: &str,
    subjects: impl IntoIterator<Item = &'s str>,
    threads: &[(String, String)],
    r: &Reading,
) -> Option<&'s str> {
    let said = gist(text);
    let mut best: Option<(usize, &str)> = None;
    for subject in subjects {
        if subject == npc {
            continue;
        }
        let score = if let Some((_, title)) = threads.iter().find(|(id, _)| id == subject) {
            let asked = gist(title);
            let shared = asked.intersection(&said).count();
            if shared == 0 || shared < asked.len().min(2) {
                continue;
            }
            shared + 1
        } else {
            let named = names_of(subject, r)
                .into_iter()
                .chain(
                    r.places
                        .iter()
                        .chain(&r.items)
                        .filter(|(id, _)| *id == subject)
                        .map(|(_, n)| *n),
                )
                .any(|n| mentions(text, &bare(n)));
            if !named {
                continue;
            }
            1
        };
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, subject));
        }
    }
    best.map(|(_, s)| s)
}

/// The first of `lines` (an author's answers on one subject, in the order
/// of asking) that `said` (what the story has told so far) does not hold.
pub(super) fn next_answer<'l>(lines: &'l [String], said: &str) -> Option<&'l str> {
    let said = said.to_lowercase();
    lines
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty() && !said.contains(&l.to_lowercase()))
}

/// The narration of `name` saying `line`, turned to the player when it
/// answers them.
pub(super) fn told(name: &str, line: &str, to_player: bool) -> String {
    if to_player {
        return format!("{name} turns to you. \u{201c}{line}\u{201d}");
    }
    let verb = if line.trim_end().ends_with('?') {
        "asks"
    } else {
        "says"
    };
    format!("{name} {verb}, \u{201c}{line}\u{201d}")
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;

    use super::*;

    pub(crate) fn reading<'a>(
        people: &'a [(String, Vec<String>)],
        present: &'a [String],
        inventory: &'a BTreeMap<String, BTreeMap<String, u32>>,
    ) -> Reading<'a> {
        Reading {
            here: "reedmere_quay",
            present,
            people,
            places: vec![
                ("reedmere_quay", "Reedmere Quay"),
                ("toll_house", "the Toll House"),
            ],
            items: vec![("ferry_log", "the ferry log")],
            factions: vec!["the Board"],
            lore: Vec::new(),
            player_name: "the Surveyor",
            inventory,
            whereabouts: BTreeMap::new(),
            routes: &[],
            closed: &[],
        }
    }

    pub(crate) fn people() -> Vec<(String, Vec<String>)> {
        [
            ("hesper_vane", "Hesper Vane", "Hesper"),
            ("aldous_crane", "Aldous Crane", "Aldous"),
            ("tamsin_reed", "Tamsin Reed", "Tamsin"),
            ("brinny_sedge", "Brinny Sedge", "Brinny"),
        ]
        .into_iter()
        .map(|(id, full, first)| (id.to_owned(), vec![full.to_owned(), first.to_owned()]))
        .collect()
    }

    pub(crate) fn here() -> Vec<String> {
        ["player", "hesper_vane", "aldous_crane", "tamsin_reed"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn an_intention_for_someone_else_or_a_stranger_is_misread() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let misread = |text: &str, npc: &str| misread(text, npc, &r, &[]);
        // A title before someone's surname is still them (stop 64's runs).
        assert_eq!(
            misread("Mr Crane asks Tamsin for the key.", "aldous_crane"),
            None
        );
        // A slip of a place's name acting (stop 64's runs): no NPC's deed.
        assert_eq!(
            misread(
                "Reedmore begins to make her way back along the shore.",
                "aldous_crane"
            ),
            Some("it tells what Reedmore does, not Aldous Crane".into())
        );
        // Its own, under its names or a slip of them, or said aloud: it stands.
        assert_eq!(
            misread(
                "Aldous Crane asks Tamsin to let the old man go.",
                "aldous_crane"
            ),
            None
        );
        assert_eq!(
            misread(
                "Hessper Vane walks to the rail with the lantern.",
                "hesper_vane"
            ),
            None
        );
        assert_eq!(
            misread("Crane folds his arms at the rail.", "aldous_crane"),
            None
        );
        assert_eq!(
            misread(
                "Reedmere Quay falls quiet as Tamsin trims the wick.",
                "tamsin_reed"
            ),
            None
        );
        assert_eq!(
            misread("\"Hands off the rail, Surveyor.\"", "hesper_vane"),
            None
        );
        assert_eq!(
            misread("Quietly, Tamsin trims the lantern wick.", "tamsin_reed"),
            None
        );
        // A verb in the imperative is not a name.
        assert_eq!(
            misread("Arrange the boats for the crossing.", "aldous_crane"),
            None
        );
        assert_eq!(
            misread("Assist Aldous in setting out from the quay.", "tamsin_reed"),
            None
        );
        // Someone else's, by name or by a slip of it.
        assert_eq!(
            misread("Hessper Vane writes his own log.", "aldous_crane").as_deref(),
            Some("it tells what Hesper Vane does, not Aldous Crane")
        );
        // Names the story does not have, at the start or later.
        assert_eq!(
            misread(
                "Reedmere Crane asks Aldous to read the log.",
                "aldous_crane"
            )
            .as_deref(),
            Some("no one in the story is called Reedmere Crane")
        );
        assert_eq!(
            misread("Reedless reads the log aloud on the quay.", "aldous_crane").as_deref(),
            Some("no one in the story is called Reedless")
        );
        assert_eq!(
            misread("Aldous offers Bridema a full pint of ale.", "aldous_crane").as_deref(),
            Some("no one in the story is called Bridema")
        );
        // Someone who is not here.
        assert_eq!(
            misread("Tamsin runs to fetch Brinny from her boat.", "tamsin_reed").as_deref(),
            Some("Brinny Sedge is not here")
        );
        // A name the lore has is not a stranger's.
        let mabel = "Tamsin tells Aldous that Mabel coughs when she runs hot.";
        assert_eq!(
            misread(mabel, "tamsin_reed").as_deref(),
            Some("no one in the story is called Mabel")
        );
        let mut lore = reading(&people, &present, &inv);
        lore.lore = vec!["Mabel and Old Pete"];
        assert_eq!(super::misread(mabel, "tamsin_reed", &lore, &[]), None);
        assert_eq!(
            misread(
                "Aldous says I'll see to the gate, and I\u{2019}m sure.",
                "aldous_crane"
            ),
            None
        );
        assert_eq!(
            misread("Ա", "hesper_vane").as_deref(),
            Some("it says nothing readable")
        );
    }

    #[test]
    fn an_intention_using_an_item_held_elsewhere_is_misread() {
        let (people, present) = (people(), here());
        let held = |owner: &str| {
            BTreeMap::from([(
                owner.to_owned(),
                BTreeMap::from([("ferry_log".to_owned(), 1)]),
            )])
        };
        let text = "Hesper Vane opens the ferry log and reads it aloud.";
        for (owner, stands) in [
            ("hesper_vane", true),
            ("tamsin_reed", true),
            ("reedmere_quay", true),
            ("brinny_sedge", false),
            ("toll_house", false),
        ] {
            let inv = held(owner);
            let r = reading(&people, &present, &inv);
            assert_eq!(
                misread(text, "hesper_vane", &r, &[]).is_none(),
                stands,
                "the log held by {owner}"
            );
        }
        let inv = held("toll_house");
        let r = reading(&people, &present, &inv);
        assert_eq!(
            misread(text, "hesper_vane", &r, &[]).as_deref(),
            Some("the ferry log is not here")
        );
    }

    #[test]
    fn an_intention_the_npc_had_before_is_misread() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let before = ["Hesper Vane tells Aldous to keep his log and keep it in Reedmere Quay."];
        assert_eq!(
            misread(
                "Hesper Vane tells Aldous to keep his log and keeps it on the quay, and the boat slips.",
                "hesper_vane",
                &r,
                &before
            )
            .as_deref(),
            Some("Hesper Vane meant the same before")
        );
        assert_eq!(
            misread(
                "Hesper Vane hauls the ferry rope and stares at the green lanterns.",
                "hesper_vane",
                &r,
                &before
            ),
            None
        );
    }

    #[test]
    fn the_line_picked_is_unsaid_names_no_one_absent_and_bears_on_the_move() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let pool: Vec<String> = [
            "Granny Brinny says the water keeps count.",
            "Green's the colour of the deep channel, isn't it?",
            "You're from the Commission? So you can read.",
            "Eel-folk say green means passage owed.",
        ]
        .map(String::from)
        .to_vec();
        let pick =
            |said: &str, cues: &str, turn| pick(&pool, said, cues, "tamsin_reed", &r, turn, false);
        // Most words shared with the move, then the earliest of those.
        assert_eq!(
            pick("", "Ask Tamsin: \"Why do the lanterns burn green?\"", 0),
            Some("Green's the colour of the deep channel, isn't it?")
        );
        // Said already in this scene: the next.
        assert_eq!(
            pick(
                "Tamsin says, \u{201c}Green's the colour of the deep channel, isn't it?\u{201d}",
                "Ask Tamsin why the lanterns burn green",
                0
            ),
            Some("Eel-folk say green means passage owed.")
        );
        // Nothing bears on the move: the turn chooses; Brinny is not here.
        let any = [0, 1, 2, 3].map(|t| pick("", "Talk to Tamsin", t).unwrap_or_default());
        assert!(any.iter().all(|l| !l.contains("Brinny")), "{any:?}");
        assert!(any.iter().any(|l| *l != any[0]), "{any:?}");
        // Said to the player, a line spoken to someone else here is not an answer.
        let to = [
            "Hands off the rail, Aldous.",
            "Green's the colour, isn't it?",
        ]
        .map(String::from);
        let said_to = |to_player| super::pick(&to, "", "rail", "tamsin_reed", &r, 0, to_player);
        assert_eq!(said_to(false), Some("Hands off the rail, Aldous."));
        assert_eq!(said_to(true), Some("Green's the colour, isn't it?"));
        // All said: none left.
        assert_eq!(pick(&pool.join(" "), "Talk to Tamsin", 0), None);
    }

    #[test]
    fn a_question_finds_the_answers_its_author_wrote() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let threads = [
            (
                "the_drowning",
                "What really happened on the night of the Drowning?",
            ),
            ("green_lanterns", "Why do the ferry lanterns burn green?"),
            ("which_gate", "Which gate will the Board open?"),
        ]
        .map(|(id, t)| (id.to_owned(), t.to_owned()));
        let subjects = [
            "the_drowning",
            "green_lanterns",
            "which_gate",
            "tamsin_reed",
            "hesper_vane",
            "ferry_log",
        ];
        let about = |text: &str| asked_about(text, "hesper_vane", subjects, &threads, &r);
        // The offered question, as the choices word it, or in the player's words.
        assert_eq!(
            about("Ask Hesper Vane: \"What really happened on the night of the Drowning?\""),
            Some("the_drowning")
        );
        assert_eq!(
            about("I ask Hesper why the lanterns burn green"),
            Some("green_lanterns")
        );
        // A person, or an item, named; never the one asked.
        assert_eq!(about("Ask Hesper about Tamsin"), Some("tamsin_reed"));
        assert_eq!(about("I ask Hesper about the ferry log"), Some("ferry_log"));
        assert_eq!(about("Talk to Hesper Vane"), None);
        // One word of a thread's question is not the question.
        assert_eq!(about("I ask Hesper which way to go"), None);
        // A thread asked about wins over a person named in passing.
        assert_eq!(
            about("I ask Hesper whether Tamsin knows why the lanterns burn green"),
            Some("green_lanterns")
        );

        let lines = ["First.", "Second.", " "].map(String::from);
        assert_eq!(
            next_answer(&lines, "Hesper says, \u{201c}Nothing.\u{201d}"),
            Some("First.")
        );
        assert_eq!(
            next_answer(&lines, "\u{201c}first.\u{201d}"),
            Some("Second.")
        );
        assert_eq!(next_answer(&lines, "First. Second."), None);
    }

    #[test]
    fn the_engine_tells_a_line_as_said() {
        assert_eq!(
            told("Tamsin Reed", "Wonder who's paying?", false),
            "Tamsin Reed asks, \u{201c}Wonder who's paying?\u{201d}"
        );
        assert_eq!(
            told("Bram Okafor", "That will do, Hadley.", true),
            "Bram Okafor turns to you. \u{201c}That will do, Hadley.\u{201d}"
        );
    }
}
