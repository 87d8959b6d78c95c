//! Names in moves and narrations: capitalised runs, titles, slips, and whose a name is.
//!
//! Shared by the move check (`check`), the NPCs' voices (`voices`), the
//! narration cut (`cuts`) and the engine's offers: one reading of what a
//! name is, so a name the check lets through is one the cut knows too.

use super::reading::{Reading, Word};

/// Words of a name that say what someone is, not who ("Dr", "Old"): never
/// a stranger's, and not the name ("Mr Moreau" is Moreau).
pub(super) const TITLES: [&str; 11] = [
    "dr", "mr", "mrs", "ms", "miss", "sir", "lady", "lord", "captain", "old", "young",
];

/// Runs of capitalised words not at a sentence's start ("Ysolde Farrant",
/// "the Silver Lighthouse of Qarn"), with where they start.
pub(super) fn capitalised(ws: &[Word]) -> Vec<(usize, String)> {
    let cap = |w: &Word| {
        // "I", "I'll", "I’m": the speaker, not a name.
        let speaker = w.text == "I" || w.text.starts_with("I'") || w.text.starts_with("I\u{2019}");
        w.text.chars().next().is_some_and(char::is_uppercase) && !speaker && !w.starts_sentence
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        if !cap(&ws[i]) {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        while end < ws.len() {
            if cap(&ws[end]) {
                end += 1;
            } else if ["of", "the"].contains(&ws[end].lower.as_str())
                && ws.get(end + 1).is_some_and(cap)
            {
                end += 2;
            } else {
                break;
            }
        }
        let name: Vec<&str> = ws[start..end].iter().map(|w| w.text).collect();
        runs.push((start, name.join(" ")));
        i = end;
    }
    runs
}

/// `name` without a leading "the", in lower case.
pub(super) fn bare(name: &str) -> String {
    let lower = name.to_lowercase().replace('_', " ");
    lower
        .strip_prefix("the ")
        .unwrap_or(&lower)
        .trim()
        .to_owned()
}

/// Whether `name` is a place of the story, or the start of one's name
/// ("The Lamp Chapel" of "The Lamp Chapel of St Wick").
pub(super) fn is_place(name: &str, r: &Reading) -> bool {
    let name = bare(name);
    !name.is_empty()
        && r.places.iter().any(|(id, place)| {
            let place = bare(place);
            bare(id) == name || place == name || place.starts_with(&format!("{name} "))
        })
}

/// Whether `name` is one of the names of someone in the story.
pub(super) fn is_person(name: &str, r: &Reading) -> bool {
    let name = bare(name);
    r.people
        .iter()
        .any(|(id, names)| bare(id) == name || names.iter().any(|n| bare(n) == name))
}

/// Two words in lower case the same, or one slip apart where the first has
/// four letters or more ("aldus" for "aldous").
pub(super) fn close(a: &str, b: &str) -> bool {
    a == b || (a.chars().count() >= 4 && strsim::damerau_levenshtein(a, b) <= 1)
}

/// Whether a capitalised name belongs to anyone or anything the story knows.
pub(super) fn known(name: &str, r: &Reading) -> bool {
    let lower = name.to_lowercase();
    let lower = lower.trim_end_matches("'s");
    // A word of the name is a word of a known name, or one slip from one
    // ("Aldus" for Aldous: a misspelling is not a stranger).
    let matches = |known: &str| {
        let k = bare(known);
        !k.is_empty()
            && (k == lower
                || k.split_whitespace().any(|w| close(w, lower))
                || lower.split_whitespace().any(|w| {
                    w.len() > 2 && (k.contains(w) || k.split_whitespace().any(|kw| close(kw, w)))
                }))
    };
    r.people
        .iter()
        .flat_map(|(id, ns)| ns.iter().map(String::as_str).chain([id.as_str()]))
        .chain(r.places.iter().flat_map(|(id, n)| [*id, *n]))
        .chain(r.items.iter().flat_map(|(id, n)| [*id, *n]))
        .chain(r.factions.iter().copied())
        .chain(r.lore.iter().copied())
        .chain([r.player_name])
        .any(matches)
}

/// The names someone goes by: those the move check knows (full, first),
/// and the last word of the full name ("Okafor" of "Bram Okafor").
pub(super) fn names_of<'r>(id: &str, r: &'r Reading) -> Vec<&'r str> {
    let Some((_, names)) = r.people.iter().find(|(p, _)| p == id) else {
        return Vec::new();
    };
    let mut out: Vec<&str> = names.iter().map(String::as_str).collect();
    if let Some(full) = names.first()
        && let Some(last) = full.split_whitespace().last()
        && last.len() > 2
        && last != full
    {
        out.push(last);
    }
    out
}

/// One slip apart, or the same, whatever the case ("Hessper" for "Hesper").
pub(super) fn close_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_lowercase(), b.to_lowercase());
    close(a.trim_end_matches("'s"), &b)
}

/// Whose name `name` is, if it is a person's.
pub(super) fn whose<'r>(name: &str, r: &'r Reading) -> Option<&'r str> {
    r.people
        .iter()
        .find(|(id, _)| names_of(id, r).iter().any(|n| close_name(name, n)))
        .map(|(id, _)| id.as_str())
}

/// Whether `name` is the whole name of a place, an item or a faction.
pub(super) fn is_thing(name: &str, r: &Reading) -> bool {
    let name = bare(name);
    r.places
        .iter()
        .chain(&r.items)
        .flat_map(|(id, n)| [*id, *n])
        .chain(r.factions.iter().copied())
        .any(|n| close_name(&name, &bare(n)))
}

/// Whether `text` names `name`, as whole words.
pub(super) fn mentions(text: &str, name: &str) -> bool {
    let pad = |t: &str| {
        let t: String = t
            .to_lowercase()
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { ' ' })
            .collect();
        format!(" {} ", t.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let name = pad(name);
    name.trim().len() > 2 && pad(text).contains(&name)
}

/// Saints, and names of days and months: never a stranger's.
pub(super) const CALENDAR: [&str; 18] = [
    "st",
    "saint",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
];
