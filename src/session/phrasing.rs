//! How the engine words things for prompts: moves as verb phrases, outcomes without dice, briefs.
//!
//! Shared by the turn's prompt variables (`session::stages`) and the corpus
//! renderer, so the tuned model is trained on the words the game sends; also the
//! narration's echo cut, which reads a prompt to find where a reply recites it.

/// A player's typed move as a verb phrase the narrator can address them
/// with: "I ask Hesper about my letter" → "ask Hesper about your letter",
/// "Ask Tamsin to help" → "ask Tamsin to help", speech → `say "…"`. Used as
/// "you tried to …" in memories and "you …" in compact narrator prompts.
pub fn verb_phrase(action: &str) -> String {
    let text = action.trim().trim_end_matches(['.', ',', ';', ':']).trim();
    let first_person = text.starts_with("I ") || text.starts_with("I'");
    let addressed = text
        .split_whitespace()
        .next()
        .is_some_and(|w| w.ends_with(','));
    if !first_person && (text.starts_with(['"', '\u{201c}']) || text.ends_with('?') || addressed) {
        return format!("say \"{}\"", unquoted(text));
    }
    let body = if let Some(rest) = text
        .strip_prefix("I'm ")
        .or_else(|| text.strip_prefix("I am "))
    {
        format!("be {rest}")
    } else {
        ["I'll ", "I will ", "I "]
            .iter()
            .find_map(|p| text.strip_prefix(p))
            .unwrap_or(text)
            .to_owned()
    };
    // Quoted speech stays as typed ("Can you help me?" is not "help you"), and
    // the colon before it is prose's comma (`ask Bram, "Where is Elias?"`):
    // a capitalised phrase and a colon read as a script's speaker label.
    let mut quoted = false;
    let swapped: Vec<String> = body
        .split(' ')
        .map(|w| {
            let opens = w.starts_with(['"', '\u{201c}']);
            let inside = quoted || opens;
            let closes = w
                .trim_end_matches(['.', ',', '!', '?'])
                .ends_with(['"', '\u{201d}'])
                && (!opens || w.chars().count() > 1);
            quoted = if inside { !closes } else { false };
            if inside {
                return w.to_owned();
            }
            let end = w
                .find(|c: char| !c.is_alphanumeric() && c != '\'')
                .unwrap_or(w.len());
            let (core, tail) = w.split_at(end);
            let to = match core {
                "I" | "me" => "you",
                "my" => "your",
                "mine" => "yours",
                "myself" => "yourself",
                "I'm" => "you're",
                "I've" => "you've",
                other => other,
            };
            format!("{to}{tail}")
        })
        .collect();
    let swapped: Vec<String> = swapped
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let speech_next = swapped
                .get(i + 1)
                .is_some_and(|n| n.starts_with(['"', '\u{201c}']));
            match w.strip_suffix(':') {
                Some(head) if speech_next => format!("{head},"),
                _ => w.clone(),
            }
        })
        .collect();
    let joined = swapped.join(" ");
    let mut chars = joined.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().collect::<String>() + chars.as_str()
    })
}

/// A move whispered to `to` as a verb phrase: the player's own words,
/// quoted as typed (`whisper to Tamsin Reed, "Meet me at the chapel."`),
/// where [`verb_phrase`] would turn "me" into "you".
pub fn whispered(action: &str, to: &str) -> String {
    format!("whisper to {to}, \"{}\"", unquoted(action.trim()))
}

/// Speech without the quotation marks around it.
fn unquoted(text: &str) -> &str {
    text.trim_matches(['"', '\u{201c}', '\u{201d}'])
}

/// How a memory summary introduces the player's move (written by
/// `remember::memory_event`, read back by [`remembered_move`]).
pub const TRIED: &str = "you tried to ";

/// The player's move a memory summary records ("At X, you tried to ask
/// Hesper … (success)." → "Ask Hesper …"), as a choice could offer it again;
/// empty when the summary is not in that form.
pub fn remembered_move(summary: &str) -> String {
    let Some((_, rest)) = summary.split_once(TRIED) else {
        return String::new();
    };
    let end = rest
        .find(" (")
        .or_else(|| rest.find(". "))
        .unwrap_or(rest.len());
    let phrase = rest[..end].trim_end_matches('.');
    let mut chars = phrase.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().collect::<String>() + chars.as_str()
    })
}

/// An outcome in words without its roll ("Failure (6 on 2d6+stat). It does
/// not work…" → "Failure. It does not work…"): small models copy dice
/// notation into the story.
pub fn without_roll(outcome: &str) -> String {
    match (outcome.find(" ("), outcome.find(')')) {
        (Some(open), Some(close)) if open < close && outcome[open..close].contains(" on ") => {
            format!("{}{}", &outcome[..open], &outcome[close + 1..])
        }
        _ => outcome.to_owned(),
    }
}

/// The first `sentences` sentences of `text`, at most `max` characters (cut
/// at a word), for prompts that can only take a line of each thing.
pub fn brief(text: &str, sentences: usize, max: usize) -> String {
    let joined = crate::memory::chunk::sentences(text)
        .into_iter()
        .take(sentences)
        .collect::<Vec<_>>()
        .join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let cut: String = joined.chars().take(max).collect();
    let at = cut.rfind(' ').unwrap_or(cut.len());
    format!("{}…", cut[..at].trim_end_matches([',', ';', ':']))
}

/// A narration up to the first line that recites its prompt (small models
/// sometimes go on to repeat their instructions, the headings of their
/// background or the labelled lines of the question): a line that begins as
/// a line of `system` begins (the first 24 characters, list markers aside),
/// or that opens with a label the prompt uses (`Just before:`, `Known:`: a
/// capitalised phrase of at most four words before a colon, at the start of
/// a line of `system` or `user`). When it opens by reciting, the recited
/// lines are skipped and the story after them kept, if there is any.
/// Retelling the story so far is not echo.
pub fn cut_echo<'a>(text: &'a str, system: &str, user: &str) -> &'a str {
    fn body(line: &str) -> &str {
        line.trim().trim_start_matches(['-', '*', '•', ' '])
    }
    let head = |line: &str| -> Option<String> {
        let h: String = body(line).chars().take(24).collect();
        (h.chars().count() == 24).then_some(h)
    };
    let label = |line: &str| -> Option<String> {
        let (before, _) = body(line).split_once(':')?;
        let words = before.split_whitespace().count();
        let capital = before.chars().next().is_some_and(char::is_uppercase);
        (capital && (1..=4).contains(&words) && before.len() <= 32).then(|| before.to_lowercase())
    };
    let starts: std::collections::BTreeSet<String> = system.lines().filter_map(head).collect();
    let labels: std::collections::BTreeSet<String> = system
        .lines()
        .chain(user.lines())
        .filter_map(label)
        .collect();
    let recites = |line: &str| {
        head(line).is_some_and(|h| starts.contains(&h))
            || label(line).is_some_and(|l| labels.contains(&l))
    };
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if recites(line) {
            break;
        }
        offset += line.len();
    }
    let kept = text[..offset].trim();
    if !kept.is_empty() || offset == text.len() {
        return kept;
    }
    // It opened by reciting: what follows the recited lines, up to the next
    // one that recites, may still be the story.
    let mut rest = text;
    for line in text.split_inclusive('\n') {
        if !recites(line) {
            break;
        }
        rest = &rest[line.len()..];
    }
    if rest.is_empty() {
        return "";
    }
    cut_echo(rest, system, user)
}

#[cfg(test)]
mod tests {
    use super::{cut_echo, remembered_move, without_roll};

    #[test]
    fn a_narration_is_cut_where_it_starts_reciting_its_prompt() {
        let prompt = "Background for you alone.\nWhat is true in this world: The Lamp Chapel keeps the Mother Flame.\nWhat has happened before: The lanterns flare; someone moves in the fog.";
        let echoed = "Hesper looks at you a long moment.\n- What is true in this world (weave it out):\nThe Northfields are islands.";
        assert_eq!(
            cut_echo(echoed, prompt, ""),
            "Hesper looks at you a long moment."
        );
        let clean = "The fog thickens.\nThe lanterns flare; someone moves in the fog.";
        assert_eq!(cut_echo(clean, prompt, ""), clean);
        assert_eq!(
            cut_echo("What is true in this world: the end", prompt, ""),
            ""
        );
    }

    #[test]
    fn an_outcome_in_words_loses_its_dice_notation() {
        assert_eq!(
            without_roll("Failure (6 on 2d6+stat+skill). It does not work."),
            "Failure. It does not work."
        );
        assert_eq!(without_roll("Success."), "Success.");
    }

    #[test]
    fn a_remembered_move_can_be_offered_again() {
        assert_eq!(
            remembered_move(
                "At Reedmere Quay, you tried to ask Hesper about the ledger (success). She looks away."
            ),
            "Ask Hesper about the ledger"
        );
        assert_eq!(
            remembered_move("At the quay, you tried to wait. Fog."),
            "Wait"
        );
        assert_eq!(remembered_move("The Surveyor tried: I wait"), "");
    }

    #[test]
    fn a_compact_narration_is_cut_where_it_recites_a_labelled_line() {
        let user = "Place: Reedmere Quay, dusk.\nLast time: at Reedmere Quay you tried to ask Hesper.\nJust before: The fog thickens.\nNow: you ask Hesper again.\nHow it goes: success\nWhat happens next?";
        let told =
            "Hesper turns the ledger to the lamp.\nJust before: She had a choice.\nLater: more.";
        assert_eq!(
            cut_echo(told, "", user),
            "Hesper turns the ledger to the lamp."
        );
        let speech = "Hesper lowers her voice.\nHesper: \"Not here.\"";
        assert_eq!(
            cut_echo(speech, "", user),
            speech,
            "dialogue is not a label of the prompt"
        );
        assert_eq!(cut_echo("Now: you ask again.", "", user), "");
        assert_eq!(
            cut_echo(
                "Now: you ask again.\nHesper shakes her head.\nJust before: x",
                "",
                user
            ),
            "Hesper shakes her head."
        );
    }
}
