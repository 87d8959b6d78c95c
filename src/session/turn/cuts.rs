//! A model's narration read before it is kept: names set right, cut where it strays.
//!
//! Each narration the model writes ends before its first sentence (after
//! the first) that copies the skills' notes, brings in someone or something
//! the story does not have, tells again what the scene already told, or, in
//! an NPC's narration, has someone else act (`cut`); names it misspelt by a
//! letter are set right first (`mend_names`).

use std::collections::BTreeSet;

use super::check::{self, Reading};
use super::names::{CALENDAR, TITLES, bare, capitalised, close_name, known, names_of, whose};
use super::voices::{OPENERS, subject};

/// The name in `sentence` of someone or something the story does not
/// have: a word of a capitalised name that no name of the story has and
/// its authored text never uses (`words`: "Haste" of "Haste Vane", not the
/// "Ferry Street" a clock's trigger names), where the name acts or stands
/// inside the sentence.
fn stranger_in(sentence: &str, r: &Reading, words: &BTreeSet<String>) -> Option<String> {
    let ws = check::words(sentence);
    let runs = subject(&ws)
        .map(|run| run.join(" "))
        .into_iter()
        .chain(capitalised(&ws).into_iter().map(|(_, name)| name));
    for name in runs {
        let unknown = name.split_whitespace().any(|w| {
            let lower = w.to_lowercase();
            let lower = lower.trim_end_matches("'s");
            lower.chars().count() > 2
                && !TITLES.contains(&lower)
                && !CALENDAR.contains(&lower)
                && !OPENERS.contains(&lower)
                && !["of", "the", "and"].contains(&lower)
                && !words.contains(lower)
                && !known(w, r)
        });
        if unknown {
            return Some(name);
        }
    }
    None
}

/// `text` with each name the model misspelt by one letter set right
/// ("Eldous Crane" → "Aldous Crane", "Reedmore" → "Reedmere"), and what was
/// changed. A word is a slip when it is capitalised, of four letters or
/// more, used nowhere in the campaign's text (`words`), no everyday English
/// word, and one slip from exactly one word of the story's names.
pub(super) fn mend_names(
    text: &str,
    r: &Reading,
    words: &BTreeSet<String>,
) -> (String, Vec<(String, String)>) {
    let names: BTreeSet<&str> = r
        .people
        .iter()
        .flat_map(|(_, ns)| ns.iter().map(String::as_str))
        .chain(r.places.iter().map(|(_, n)| *n))
        .chain(r.items.iter().map(|(_, n)| *n))
        .chain(r.factions.iter().copied())
        .chain(r.lore.iter().copied())
        .chain([r.player_name])
        .flat_map(str::split_whitespace)
        .filter(|w| w.chars().count() >= 4 && w.starts_with(char::is_uppercase))
        .collect();
    let mut mended = String::with_capacity(text.len());
    let mut changes: Vec<(String, String)> = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        let (word, after) = rest.split_at(end.max(rest.chars().next().map_or(1, char::len_utf8)));
        let is_word = word.starts_with(char::is_alphanumeric);
        let lower = word.to_lowercase();
        let slip = (is_word
            && word.starts_with(char::is_uppercase)
            && word.chars().count() >= 4
            && !words.contains(&lower)
            && !names.contains(word)
            && !crate::session::drafts::everyday(&lower))
        .then(|| {
            let mut near = names.iter().filter(|n| close_name(word, n));
            match (near.next(), near.next()) {
                (Some(one), None) => Some(*one),
                _ => None,
            }
        })
        .flatten();
        match slip {
            Some(name) => {
                mended.push_str(name);
                changes.push((word.to_owned(), name.to_owned()));
            }
            None => mended.push_str(word),
        }
        rest = after;
    }
    changes.dedup();
    (mended, changes)
}

/// How many words in a row a narration may share with what was told
/// before it in the scene before it is telling it again.
const RETOLD: usize = 6;

/// The runs of [`RETOLD`] words of `text`, in lower case.
fn shingles(text: &str) -> Vec<String> {
    let ws: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('\u{2019}', "'"))
        .collect();
    ws.windows(RETOLD).map(|w| w.join(" ")).collect()
}

/// What the scene has told, for [`cut`] to find a narration telling again.
pub(super) fn told_before<'a>(narrations: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    narrations.into_iter().flat_map(shingles).collect()
}

/// Why a narration ends early: a stranger came in, or it told again.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Cut {
    /// It names someone or something the story does not have.
    Stranger(String),
    /// It repeats what was told before in the scene (a line someone said
    /// put in another's mouth, a sentence of the turn before).
    Retold,
    /// It copies the game's notes to the narrator: a skill's label
    /// (`weather:`) or a figure from them (`19:40`).
    Notes,
    /// In an NPC's narration, someone else acts: another NPC, or the
    /// player by name (each tells their own deeds).
    Other(String),
}

impl Cut {
    /// Why, for the overlay ("narrate Hesper Vane: cut where it …").
    pub(super) fn why(&self) -> String {
        match self {
            Self::Stranger(name) => format!("named {name}, whom the story does not have"),
            Self::Retold => "told again what the scene had told".to_owned(),
            Self::Other(name) => format!("told what {name} does"),
            Self::Notes => "copied the game's notes".to_owned(),
        }
    }

    /// What `who`'s narration, asked for again, must leave out (`avoid`).
    pub(super) fn avoid(&self, who: &str) -> String {
        match self {
            Self::Stranger(name) => {
                format!("no one and nothing in the story is called {name}: leave it out")
            }
            Self::Retold => "tell what happens now: do not repeat what was told before".to_owned(),
            Self::Other(name) => format!("tell only what {who} does: {name} is told apart"),
            Self::Notes => {
                "tell the hour and the weather in words: do not copy the game's notes".to_owned()
            }
        }
    }
}

/// A narration up to its first sentence (after the first) that names
/// someone or something the story does not have (the sentences from a
/// stranger's entrance on are about the stranger), or that tells again
/// [`RETOLD`] words in a row of what the scene told before (`told`); and
/// why; or that copies the skills' `notes` to the narrator (`weather: Dusk,
/// 19:40; fog.`: their labels, or a figure of theirs such as a clock).
/// In `npc`'s narration, it also ends before a sentence in which someone
/// else acts ([`other_acting`]). A quote left open by the cut is closed.
/// `None` when it does none of these.
pub(super) fn cut(
    text: &str,
    npc: Option<&str>,
    r: &Reading,
    words: &BTreeSet<String>,
    told: &BTreeSet<String>,
    notes: &[String],
) -> Option<(String, Cut)> {
    let sentences = crate::memory::chunk::sentences(text);
    for sentence in sentences.iter().skip(1) {
        let why = copies_notes(sentence, notes)
            .then_some(Cut::Notes)
            .or_else(|| stranger_in(sentence, r, words).map(Cut::Stranger))
            .or_else(|| {
                npc.and_then(|npc| other_acting(sentence, npc, r))
                    .map(Cut::Other)
            })
            .or_else(|| {
                shingles(sentence)
                    .iter()
                    .any(|s| told.contains(s))
                    .then_some(Cut::Retold)
            });
        let Some(why) = why else {
            continue;
        };
        let at = text.find(sentence).unwrap_or(text.len());
        let mut kept = text[..at].trim_end().to_owned();
        if kept.matches('"').count() % 2 == 1 {
            kept.push('"');
        }
        if kept.matches('\u{201c}').count() > kept.matches('\u{201d}').count() {
            kept.push('\u{201d}');
        }
        return Some((kept, why));
    }
    None
}

/// Who acts in `sentence` when it is not `npc`: another NPC, or the player
/// by name, opening the sentence with a verb of the third person ("Tamsin
/// watches you", "Noor reads the logbook"); their full name.
fn other_acting(sentence: &str, npc: &str, r: &Reading) -> Option<String> {
    let ws = check::words(sentence);
    let run = subject(&ws)?;
    let whole = run.join(" ");
    if let Some(id) = whose(&whole, r).or_else(|| whose(run[0], r)) {
        return (id != npc).then(|| names_of(id, r).first().map_or(id, |n| *n).to_owned());
    }
    let player = bare(r.player_name);
    let first = player.split_whitespace().next().unwrap_or_default();
    (first.chars().count() > 2 && close_name(run[0], first)).then(|| r.player_name.to_owned())
}

/// Whether `sentence` copies a note of the skills: says its label and a
/// colon (`weather:`, `weather.sky:`), or a figure of it that mixes digits
/// with other signs (`19:40`, `2d6`), which prose does not write.
fn copies_notes(sentence: &str, notes: &[String]) -> bool {
    let lower = sentence.to_lowercase();
    notes.iter().any(|note| {
        let Some((label, value)) = note.split_once(": ") else {
            return false;
        };
        let label = label.trim().to_lowercase();
        let labelled = !label.contains(' ') && lower.contains(&format!("{label}:"));
        let figure = value
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')'))
            .map(|w| w.trim_end_matches('.'))
            .filter(|w| {
                w.chars().any(|c| c.is_ascii_digit()) && w.chars().any(|c| !c.is_ascii_digit())
            })
            .any(|w| lower.contains(&w.to_lowercase()));
        labelled || figure
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::session::turn::voices::tests::{here, people, reading};

    #[test]
    fn a_narration_is_cut_where_a_stranger_enters() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let words: BTreeSet<String> = ["ferry", "street"].map(String::from).into();
        let none = BTreeSet::new();
        let cut = |text: &str| super::cut(text, None, &r, &words, &none, &[]);
        // Known names, titles, days and a stranger in the first sentence: kept whole.
        assert_eq!(
            cut("You ask Hesper. Hesper Vane nods to Old Aldous at the Toll House on Sunday."),
            None
        );
        assert_eq!(cut("Reeve nods to you. Hesper turns away."), None);
        // A name the campaign's text uses is not a stranger's.
        assert_eq!(cut("You wait. A crowd comes down Ferry Street."), None);
        // A stranger acting, or named inside a sentence: cut from there.
        assert_eq!(
            cut("You ask Hesper. Haste Vane stands by Ned. He turns."),
            Some(("You ask Hesper.".into(), Cut::Stranger("Haste Vane".into())))
        );
        assert_eq!(
            cut("You wait. The crew looks to Mayabay for orders. She laughs."),
            Some(("You wait.".into(), Cut::Stranger("Mayabay".into())))
        );
        // A quote the cut leaves open is closed.
        assert_eq!(
            cut("\u{201c}The log is here. Reeve reads it,\u{201d} Hesper says."),
            Some((
                "\u{201c}The log is here.\u{201d}".into(),
                Cut::Stranger("Reeve".into())
            ))
        );
    }

    #[test]
    fn a_name_misspelt_by_one_letter_is_set_right() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let words: BTreeSet<String> = ["aldous", "hesper", "reedmere", "quay", "reed"]
            .map(String::from)
            .into();
        let (text, changes) = mend_names(
            "Eldous Crane walks to Reedmore Quay; Hessper's lantern, Tamsin and Reed wait.",
            &r,
            &words,
        );
        assert_eq!(
            text,
            "Aldous Crane walks to Reedmere Quay; Hesper's lantern, Tamsin and Reed wait."
        );
        assert_eq!(
            changes,
            [
                ("Eldous".to_owned(), "Aldous".to_owned()),
                ("Reedmore".into(), "Reedmere".into()),
                ("Hessper".into(), "Hesper".into())
            ]
        );
        // English words, the campaign's words and short words stay as written.
        let kept = "Then Bram came. Tamsen? No: Red lanterns, Mabel.";
        let (same, none) = mend_names(kept, &r, &["tamsen".to_owned()].into());
        assert_eq!((same.as_str(), none.len()), (kept, 0));
    }

    #[test]
    fn an_npcs_narration_is_cut_where_someone_else_acts() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let none = BTreeSet::new();
        let words: BTreeSet<String> = ["lantern", "quay", "surveyor"].map(String::from).into();
        let cut = |text: &str, npc| super::cut(text, npc, &r, &words, &none, &[]);
        // Seen in stop 64's runs: Tamsin acts in Hesper's narration.
        let text = "Hesper turns the lantern on the quay. She looks at you. Tamsin watches you from the rail. Hesper nods.";
        assert_eq!(
            cut(text, Some("hesper_vane")),
            Some((
                "Hesper turns the lantern on the quay. She looks at you.".into(),
                Cut::Other("Tamsin Reed".into())
            ))
        );
        // The player by name acts in an NPC's narration.
        assert_eq!(
            cut(
                "Aldous waits. Surveyor reads the log.",
                Some("aldous_crane")
            ),
            Some(("Aldous waits.".into(), Cut::Other("the Surveyor".into())))
        );
        // Its own deeds, others named but not acting, or the player's own
        // narration: kept.
        assert_eq!(
            cut(
                "Hesper waits. Hesper asks Tamsin for the lantern.",
                Some("hesper_vane")
            ),
            None
        );
        assert_eq!(cut(text, None), None);
    }

    #[test]
    fn a_narration_is_cut_where_it_copies_the_skills_notes() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let none = BTreeSet::new();
        let notes = [
            "weather: Dusk, 19:40; fog.".to_owned(),
            "dice.last: 2d6".to_owned(),
        ];
        let cut = |text: &str| super::cut(text, None, &r, &none, &none, &notes);
        // Seen in stop 63's runs: the note's label, and its clock.
        assert_eq!(
            cut("You ask Aldous. He nods. The night is dusk; weather: Dusk, fog."),
            Some(("You ask Aldous. He nods.".into(), Cut::Notes))
        );
        assert_eq!(
            cut("You take the book. Then the weather is Dusk at 19:40."),
            Some(("You take the book.".into(), Cut::Notes))
        );
        assert_eq!(
            cut("You roll. The 2D6 land."),
            Some(("You roll.".into(), Cut::Notes))
        );
        // The weather in words, or a plain number, is the story's.
        assert_eq!(
            cut("You wait. The fog thickens over 40 boats at twenty to eight."),
            None
        );
    }

    #[test]
    fn a_narration_is_cut_where_it_tells_again_what_was_told() {
        let (people, present, inv) = (people(), here(), BTreeMap::new());
        let r = reading(&people, &present, &inv);
        let told = told_before([
            "Hesper Vane says, \u{201c}Green, yellow, what's it to the water? She crosses.\u{201d}",
        ]);
        let words = BTreeSet::new();
        // Hesper's words in Tamsin's mouth: cut from there.
        assert_eq!(
            cut(
                "You ask Tamsin. She laughs. \"Green, yellow, what's it to the water?\" she says.",
                None,
                &r,
                &words,
                &told,
                &[]
            ),
            Some(("You ask Tamsin. She laughs.".into(), Cut::Retold))
        );
        // Fewer words in a row, or only in the first sentence: kept.
        assert_eq!(
            cut(
                "Green, yellow, what's it to the water, you wonder. Tamsin says the water is yellow.",
                None,
                &r,
                &words,
                &told,
                &[]
            ),
            None
        );
    }
}
