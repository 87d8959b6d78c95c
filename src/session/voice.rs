//! How a narration reads: in voice, grounded in what its prompt named, of a readable length.
//!
//! The narrator corpus is written to these checks (`training/README.md`), the
//! tuned model is measured by them (`benches/tuned.rs`, `tests/tuned.rs`), and
//! they lean on the draft judge's own (`session::drafts`).

use serde::Serialize;

/// How one generated narration reads, by the checks the narrator corpus is
/// written to (`training/README.md`) and the draft judge uses.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent findings about one narration, reported as they are"
)]
pub struct NarrationCheck {
    /// Prose, no assistant/meta/script talk, no first-person narrator outside
    /// quotes, and for the player's narration the second person.
    pub in_voice: bool,
    pub prose: bool,
    pub assistant: bool,
    pub first_person: bool,
    pub second_person: bool,
    /// Names a person, place or thing the prompt named.
    pub grounded: bool,
    /// 12 to 90 words.
    pub length_ok: bool,
    /// A sentence said twice.
    pub repeats: bool,
    pub words: usize,
}

/// Judges a narration written for a prompt that named `names`.
pub fn check_narration(text: &str, player: bool, names: &[String]) -> NarrationCheck {
    use super::drafts::{first_person, off_voice, reads_as_prose};
    let words = text.split_whitespace().count();
    let second_person = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .any(|w| {
            matches!(
                w.to_lowercase().as_str(),
                "you" | "your" | "you're" | "yourself"
            )
        });
    let sentences = crate::memory::chunk::sentences(text);
    let mut seen = std::collections::HashSet::new();
    let repeats = sentences
        .iter()
        .any(|s| s.split_whitespace().count() >= 3 && !seen.insert(s.to_lowercase()));
    let prose = reads_as_prose(text);
    let assistant = off_voice(text);
    let first = first_person(text);
    NarrationCheck {
        in_voice: prose && !assistant && !first && (!player || second_person),
        prose,
        assistant,
        first_person: first,
        second_person,
        grounded: mentions(text, names),
        length_ok: (12..=90).contains(&words),
        repeats,
        words,
    }
}

/// The proper names a narrate prompt shows: the place, the people present, the
/// acting character, those whose regard it states, and the capitalised words
/// inside its other lines (not a sentence's first word, which any sentence
/// capitalises). Names of three letters count (`Pim`, `Fen`).
pub fn prompt_names(user_prompt: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in user_prompt.lines() {
        // `Vera Lisle is warm toward you.`: the line opens with a name.
        let mut first = !line.trim_end_matches('.').ends_with(" toward you");
        for raw in line.split_whitespace() {
            let w = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            let w = w.trim_end_matches("'s");
            if raw.ends_with(':') {
                // `Place:`, `Also here:`, `Now:` and `… tries:` are followed by
                // names; other labels by sentences.
                first = !matches!(w, "Place" | "here" | "Now" | "tries");
                continue;
            }
            if !first && w.chars().next().is_some_and(char::is_uppercase) && w.chars().count() >= 3
            {
                names.push(w.to_owned());
            }
            first = raw.ends_with(['.', '!', '?']);
        }
    }
    names.sort();
    names.dedup();
    names
}

/// Whether `text` says one of `names` (a whole word, as capitalised, or its
/// possessive).
pub fn mentions(text: &str, names: &[String]) -> bool {
    let said: std::collections::HashSet<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-')
        .map(|w| w.trim_matches('\'').trim_end_matches("'s"))
        .collect();
    names.iter().any(|n| said.contains(n.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narration_checks_tell_voice_and_grounding() {
        let names = vec!["Hesper".to_owned(), "Reedmere".to_owned()];
        let good = check_narration(
            "Hesper Vane looks at the green lantern and shrugs. \"Ask the Reeve,\" she says, and you feel the deck tilt.",
            true,
            &names,
        );
        assert!(
            good.in_voice && good.grounded && good.length_ok && !good.repeats,
            "{good:?}"
        );
        let bad = check_narration(
            "I hope this helps! The story continues with a dragon. The story continues with a dragon.",
            true,
            &names,
        );
        assert!(
            !bad.in_voice && bad.assistant && bad.first_person && bad.repeats && !bad.grounded,
            "{bad:?}"
        );
        let npc = check_narration(
            "Hesper Vane hauls on the chain until the ferry groans.",
            false,
            &names,
        );
        assert!(npc.in_voice, "an NPC's narration need not say you: {npc:?}");
    }

    #[test]
    fn prompt_names_are_the_capitalised_words_inside_lines() {
        let names = prompt_names(
            "Place: Reedmere Quay, dusk. Also here: Hesper Vane.\nNow: you ask Hesper about the Patience.",
        );
        for n in ["Reedmere", "Quay", "Hesper", "Vane", "Patience"] {
            assert!(names.contains(&n.to_owned()), "{n} in {names:?}");
        }
        assert!(!names.contains(&"Also".to_owned()) && !names.contains(&"Place".to_owned()));
        let npc = prompt_names(
            "Vera Lisle is warm toward you.\nNow: Tommy Baird tries: Pim tries to cut the rag.\nThe rain falls.",
        );
        for n in ["Vera", "Lisle", "Tommy", "Baird", "Pim"] {
            assert!(npc.contains(&n.to_owned()), "{n} in {npc:?}");
        }
        assert!(!npc.contains(&"The".to_owned()), "{npc:?}");
    }

    #[test]
    fn mentions_match_whole_names_and_possessives() {
        let names = vec!["Pim".to_owned(), "Hesper".to_owned()];
        assert!(mentions("You hand Pim's knife back.", &names));
        assert!(mentions("'Hesper,' you say.", &names));
        assert!(!mentions(
            "A pimple of rust; hesper is not said as a name.",
            &names
        ));
    }
}
