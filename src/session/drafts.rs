//! Choosing among drafts of a narration: the turn keeps the one that reads best.
//!
//! A model that writes several samples of the player's narration (`models.ron`
//! `drafts`) has them judged here.
//!
//! A tiny model's samples of one prompt differ more than its prompts can
//! steer: one is clean prose about the scene, the next slips into talk about
//! "the story", the third recites its background. The judge prefers, in this
//! order: prose (seed 003: narration is prose), no chat-assistant talk, a
//! narration that calls back to what the prompt recalled (the memory shown
//! and the lore shown, by a word of theirs the player's move did not already
//! use), one that names someone or something of the campaign, and one the
//! echo cut left whole. Ties go to the earlier draft (the first seed), so one
//! draft behaves as no drafts. Deterministic: replay keeps the same draft.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::campaign::Campaign;
use crate::llm::contract::looks_like_prose;
use crate::memory::campaign_chunks;

/// Phrases of a chat assistant, or of a model talking about its task or the
/// story's structure, that never belong in a narration. A passage is the
/// story's structure only beside a word that points at the text ("this
/// passage", "the passages below"): a ferry's passage is the story's own.
const ASSISTANT: [&str; 27] = [
    "as an ai",
    "i hope",
    "let me know",
    "feel free",
    "here's",
    "here is",
    "i'm glad",
    "i'd love",
    "absolutely right",
    "this story",
    "the story",
    "a story",
    "the narrator",
    "the player",
    "this passage",
    "next passage",
    "passage below",
    "passages below",
    "previous passage",
    "chapter",
    "next scene",
    "in the next",
    "the following",
    "next time",
    "npc",
    "the actor",
    "the reader",
];

/// Words of a first-person narrator: a narration speaks to the player as
/// "you" (outside its dialogue).
const FIRST_PERSON: [&str; 7] = ["i", "i'm", "i'd", "i've", "i'll", "me", "my"];

/// Words too common to count as calling back to anything.
const COMMON: [&str; 48] = [
    "about", "after", "again", "also", "been", "before", "being", "could", "does", "down", "each",
    "even", "from", "have", "here", "into", "just", "know", "like", "made", "make", "more", "much",
    "only", "over", "said", "some", "such", "than", "that", "their", "them", "then", "there",
    "they", "this", "tried", "very", "what", "when", "where", "which", "while", "with", "would",
    "your", "mixed", "fortune",
];

/// What a narration should call back to, and the names that ground it.
#[derive(Clone, Debug, Default)]
pub struct Cues {
    /// Content words of the memory the prompt recalled first.
    memory: HashSet<String>,
    /// Content words of the lore the prompt showed first.
    lore: HashSet<String>,
    /// The campaign's people, places, items and factions.
    names: Vec<String>,
}

impl Cues {
    /// Cues from what the prompt showed (`memory`: the recalled memory's
    /// recap; `lore`: the lore brief): their rare words, less those of
    /// `said_anyway` (the player's move and the place, which any narration of
    /// this move may use) and of the people's names (a name is grounding, not
    /// a callback). Rare: not one of English's everyday words (a single
    /// `cl100k_base` token among its first 20,000: "little", "water",
    /// "page") nor one of the campaign's own (in more than a tenth of its
    /// lore chunks).
    pub fn new(campaign: &Campaign, memory: &str, lore: &str, said_anyway: &str) -> Self {
        let people: Vec<String> = campaign
            .characters
            .values()
            .map(|c| c.name.clone())
            .collect();
        let said = format!("{said_anyway} {}", people.join(" "));
        let spread = Spread::of(campaign);
        Self::with_names(campaign_names(campaign), &spread, memory, lore, &said)
    }

    /// [`Cues::new`] with the names and the campaign's word spread given.
    pub fn with_names(
        names: Vec<String>,
        spread: &Spread,
        memory: &str,
        lore: &str,
        said_anyway: &str,
    ) -> Self {
        let campaign_everyday = (spread.chunks / 10).max(2);
        let common: HashSet<String> = words(said_anyway).collect();
        let fresh = |text: &str| -> HashSet<String> {
            words(text)
                .filter(|w| {
                    !common.contains(w)
                        && !everyday(w)
                        && spread
                            .seen_in
                            .get(w)
                            .is_none_or(|&n| n <= campaign_everyday)
                })
                .collect()
        };
        Self {
            memory: fresh(memory),
            lore: fresh(lore),
            names,
        }
    }
}

/// In how many of a campaign's lore chunks each word appears.
#[derive(Debug, Default)]
pub struct Spread {
    chunks: usize,
    seen_in: HashMap<String, usize>,
}

impl Spread {
    /// The spread of `campaign`'s words: counted once per campaign and lore
    /// (4.7 ms for the Drowned Reach, in the window's frame), not on every
    /// drafted narration.
    pub fn of(campaign: &Campaign) -> Arc<Spread> {
        type Key = (std::path::PathBuf, usize, usize, usize);
        static CACHE: Mutex<Option<(Key, Arc<Spread>)>> = Mutex::new(None);
        let key = (
            campaign.root.clone(),
            campaign.lore.iter().map(|d| d.text.len()).sum(),
            campaign.packs.len(),
            campaign.characters.len(),
        );
        if let Ok(cache) = CACHE.lock()
            && let Some((k, spread)) = cache.as_ref()
            && *k == key
        {
            return spread.clone();
        }
        let chunks = campaign_chunks(campaign);
        let mut seen_in: HashMap<String, usize> = HashMap::new();
        for chunk in &chunks {
            for w in words(&chunk.text).collect::<HashSet<_>>() {
                *seen_in.entry(w).or_default() += 1;
            }
        }
        let spread = Arc::new(Spread {
            chunks: chunks.len(),
            seen_in,
        });
        if let Ok(mut cache) = CACHE.lock() {
            *cache = Some((key, spread.clone()));
        }
        spread
    }
}

/// How one draft reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent findings about one draft, logged and stored as they are"
)]
pub struct Verdict {
    pub prose: bool,
    /// It talks like a chat assistant, about the story, or in labelled
    /// lines like a script (`Nemesis: …`).
    pub assistant: bool,
    /// Its narrator says "I" outside the dialogue.
    pub first_person: bool,
    /// Words it shares with the recalled memory.
    pub recalls: Vec<String>,
    /// Words it shares with the lore shown.
    pub lore: Vec<String>,
    /// It names someone or something of the campaign (by a proper noun).
    pub grounded: bool,
    /// The echo cut removed part of it (it began reciting its prompt).
    pub cut: bool,
    /// How many times it contradicts the world or the decided outcome
    /// (`session::continuity`; 0 where it was not checked).
    pub contradicts: usize,
    pub score: u32,
}

impl Verdict {
    /// With `contradicts` contradictions of the world, scored again.
    pub fn contradicting(mut self, contradicts: usize) -> Self {
        self.contradicts = contradicts;
        self.score = self.scored();
        self
    }

    /// Lexicographic: prose first, then consistency with the world, then
    /// voice, person, callbacks, grounding, and an uncut draft.
    fn scored(&self) -> u32 {
        64 * u32::from(self.prose)
            + 32 * u32::from(self.contradicts == 0)
            + 16 * u32::from(!self.assistant)
            + 8 * u32::from(!self.first_person)
            + 4 * u32::from(!self.recalls.is_empty() || !self.lore.is_empty())
            + 2 * u32::from(self.grounded)
            + u32::from(!self.cut)
    }
}

/// Judges one draft (`kept`: after the echo cut; `cut`: whether the cut took anything).
pub fn judge(kept: &str, cut: bool, cues: &Cues) -> Verdict {
    let said: HashSet<String> = words(kept).collect();
    let shared = |cue: &HashSet<String>| -> Vec<String> {
        let mut w: Vec<String> = cue.intersection(&said).cloned().collect();
        w.sort();
        w
    };
    let mut v = Verdict {
        prose: reads_as_prose(kept),
        assistant: off_voice(kept),
        first_person: first_person(kept),
        recalls: shared(&cues.memory),
        lore: shared(&cues.lore),
        grounded: names_any(kept, &cues.names),
        cut,
        contradicts: 0,
        score: 0,
    };
    v.score = v.scored();
    if kept.trim().is_empty() {
        v.score = 0;
    }
    v
}

/// A narration up to the end of its last finished sentence (the token limit
/// can stop a model mid-word); a narration without one is kept as it is.
pub fn whole_sentences(text: &str) -> &str {
    const CLOSERS: [char; 4] = ['"', '\u{201d}', '\'', ')'];
    let t = text.trim_end();
    if t.ends_with(|c: char| matches!(c, '.' | '!' | '?' | '\u{2026}') || CLOSERS.contains(&c)) {
        return t;
    }
    let mut cut = None;
    for (i, c) in t.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\u{2026}') {
            let mut end = i + c.len_utf8();
            for q in t[end..].chars().take_while(|q| CLOSERS.contains(q)) {
                end += q.len_utf8();
            }
            if t[end..].starts_with(char::is_whitespace) {
                cut = Some(end);
            }
        }
    }
    cut.map_or(t, |end| &t[..end])
}

/// Whether a narration talks like a chat assistant or about the story
/// (`ASSISTANT`), or opens a line with a label like a script or a form
/// (`Nemesis:`, `The following passage:`) outside its dialogue.
pub fn off_voice(text: &str) -> bool {
    let lower = text.to_lowercase();
    ASSISTANT.iter().any(|a| says_phrase(&lower, a))
        || text.lines().any(|line| {
            let line = line.trim();
            !line.starts_with(['"', '\u{201c}'])
                && line.split_once(':').is_some_and(|(label, _)| {
                    let words = label.split_whitespace().count();
                    (1..=4).contains(&words) && label.starts_with(char::is_uppercase)
                })
        })
}

/// Whether `lower` says `phrase` from the start of a word ("there's" does not
/// say "here's"; "passages" says "passage").
fn says_phrase(lower: &str, phrase: &str) -> bool {
    lower.match_indices(phrase).any(|(at, _)| {
        !lower[..at]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    })
}

/// Whether the narrator says "I", "me" or "my" outside quoted dialogue.
pub fn first_person(text: &str) -> bool {
    let narration: String = text
        .split(['"', '\u{201c}', '\u{201d}'])
        .step_by(2)
        .collect::<Vec<_>>()
        .join(" ");
    narration
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
        .map(|w| w.replace('\u{2019}', "'").to_lowercase())
        .any(|w| FIRST_PERSON.contains(&w.as_str()))
}

/// Whether a narration reads as prose: [`looks_like_prose`], where a
/// narration's dialogue may quote, of a sentence's length at least.
pub fn reads_as_prose(text: &str) -> bool {
    looks_like_prose(&text.replace(['"', '\u{201c}', '\u{201d}'], ""))
        && text.split_whitespace().count() >= MIN_WORDS
        && text.chars().any(char::is_lowercase)
}

/// The fewest words a narration has (`NEDFALL SALVATON BEAN` is not one).
const MIN_WORDS: usize = 6;

/// The draft to keep: the highest score, the earliest on a tie.
pub fn pick(verdicts: &[Verdict]) -> usize {
    let mut best = 0;
    for (i, v) in verdicts.iter().enumerate() {
        if v.score > verdicts[best].score {
            best = i;
        }
    }
    best
}

/// One line for the debug overlay: which draft was kept and what each was.
pub fn explain(kept: usize, verdicts: &[Verdict]) -> String {
    let each: Vec<String> = verdicts
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut traits = Vec::new();
            traits.push(if v.prose { "prose" } else { "not prose" }.to_owned());
            if v.assistant {
                traits.push("assistant talk".into());
            }
            if v.first_person {
                traits.push("first person".into());
            }
            if v.contradicts > 0 {
                traits.push(format!("contradicts the world ×{}", v.contradicts));
            }
            if !v.recalls.is_empty() {
                traits.push(format!("recalls {}", v.recalls.join("/")));
            }
            if !v.lore.is_empty() {
                traits.push(format!("lore {}", v.lore.join("/")));
            }
            if v.grounded {
                traits.push("named".into());
            }
            if v.cut {
                traits.push("recited".into());
            }
            format!("{}: {}", i + 1, traits.join(", "))
        })
        .collect();
    format!(
        "narrate: kept draft {} of {} ({})",
        kept + 1,
        verdicts.len(),
        each.join("; ")
    )
}

/// Whether `word` is one of English's everyday words: a single `cl100k_base`
/// token (with its leading space) among the first `EVERYDAY_RANK`, which
/// byte-pair encoding gives the most frequent words.
pub(crate) fn everyday(word: &str) -> bool {
    let tokens = tiktoken_rs::cl100k_base_singleton().encode_ordinary(&format!(" {word}"));
    matches!(tokens.as_slice(), [t] if *t < EVERYDAY_RANK)
}

/// See [`everyday`]: "thin" (15,792) and "colour" (12,745) are everyday;
/// "coat" (23,724), "ledger" (48,033) and "lantern" (74,265) are not.
const EVERYDAY_RANK: u32 = 20_000;

/// Lower-case content words of at least four letters (a plural's `s` dropped,
/// so "lanterns" meets "lantern").
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .map(|w| {
            let w = w.to_lowercase();
            match w.strip_suffix('s') {
                Some(stem) if !stem.ends_with('s') && stem.chars().count() >= 4 => stem.to_owned(),
                _ => w,
            }
        })
        .filter(|w| !COMMON.contains(&w.as_str()))
}

/// Whether a text reads as prose, in the story's voice ([`off_voice`]), and
/// names something of this campaign by its proper name (a person, place, item
/// or faction): a weak model's inventions (names the campaign never had) and
/// its talk about the story ("In the next passage, you will see how Hesper…")
/// do not count.
pub fn grounded(sentence: &str, names: &[String]) -> bool {
    looks_like_prose(sentence) && !off_voice(sentence) && names_any(sentence, names)
}

/// Whether `text` uses a proper noun of one of `names` ("Hesper",
/// "Patience"), not its common words ("ledger", "page"), which any story may use.
pub fn names_any(text: &str, names: &[String]) -> bool {
    let key = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .trim_end_matches("'s")
            .to_lowercase()
    };
    let said: HashSet<String> = text.split_whitespace().map(key).collect();
    names.iter().any(|n| {
        n.split_whitespace()
            .filter(|w| w.starts_with(char::is_uppercase))
            .map(key)
            .any(|w| w.chars().count() >= 4 && said.contains(&w))
    })
}

/// The names a grounded text may use: the campaign's people, places, items and factions.
pub fn campaign_names(campaign: &Campaign) -> Vec<String> {
    campaign
        .characters
        .values()
        .map(|c| c.name.clone())
        .chain(
            [&campaign.locations, &campaign.items, &campaign.factions]
                .into_iter()
                .flat_map(|m| m.values().map(|e| e.name.clone())),
        )
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cues(memory: &str, lore: &str, action: &str) -> Cues {
        let names = vec!["Hesper Vane".to_owned(), "Reedmere Quay".to_owned()];
        Cues::with_names(
            names,
            &Spread::default(),
            memory,
            lore,
            &format!("{action} Hesper Vane"),
        )
    }

    #[test]
    fn prose_that_calls_back_beats_assistant_talk_and_bare_prose() {
        let c = cues(
            "At Reedmere Quay, you tried to ask Hesper about the page cut from the crossing ledger.",
            "The green lanterns burn on lamp oil bought from the fen smugglers.",
            "I ask Hesper again who cut it",
        );
        let drafts = [
            "I hope you enjoy this story! Let me know what you do next.",
            "Rain drums on the roof while you wait for an answer.",
            "Hesper glances at the crossing ledger, at the torn stub where the page was.",
        ];
        let verdicts: Vec<Verdict> = drafts.iter().map(|d| judge(d, false, &c)).collect();
        assert!(verdicts[0].assistant, "{:?}", verdicts[0]);
        assert!(verdicts[1].recalls.is_empty() && !verdicts[1].grounded);
        assert_eq!(verdicts[2].recalls, ["crossing", "ledger"]);
        assert!(verdicts[2].grounded);
        assert_eq!(pick(&verdicts), 2);
        let line = explain(2, &verdicts);
        assert!(
            line.starts_with("narrate: kept draft 3 of 3 (1: prose, assistant talk, first person;"),
            "{line}"
        );
        assert!(line.contains("recalls crossing/ledger"), "{line}");
    }

    #[test]
    fn assistant_phrases_count_from_the_start_of_a_word() {
        assert!(!off_voice(
            "There's nothing behind her, and where is the key? You look again."
        ));
        assert!(off_voice("Here's what happens next: you open the door."));
        assert!(off_voice("The passages below are yours to explore."));
        assert!(off_voice("In this passage, you cross the quay."));
        // A ferry's passage is the story's own (Drowned Reach, stop 64).
        assert!(!off_voice(
            "The fog is over the quay, and the lowmarsh plank walks under and asks for passage."
        ));
        // The engine's own opening quotes the player with a comma, as prose
        // does; a colon after a name is a script's label.
        assert!(!off_voice(
            "You ask Bram Okafor, \"Where is Elias Wren?\" He looks down."
        ));
        assert!(off_voice("Bram Okafor: Where is Elias Wren?"));
    }

    #[test]
    fn words_of_the_move_itself_are_no_callback_and_ties_keep_the_first_draft() {
        let c = cues(
            "At Reedmere Quay, you tried to ask Hesper about the lamp oil.",
            "",
            "I ask Tamsin about the lamp oil",
        );
        let a = judge("Tamsin shrugs at the lamp oil question.", false, &c);
        assert!(a.recalls.is_empty(), "{a:?}");
        let b = judge("Tamsin shrugs and turns away from you.", false, &c);
        assert_eq!(a.score, b.score);
        assert_eq!(pick(&[a, b]), 0);
    }

    #[test]
    fn garbled_or_empty_drafts_lose_to_any_prose() {
        let c = cues("", "", "I wait");
        let json = judge("{\"narration\": \"Hesper Vane\"}", false, &c);
        assert!(!judge("NEDFALL\nSALVATON BEAN", false, &c).prose);
        assert!(judge("Nemesis: you say he has a sword.", false, &c).assistant);
        let empty = judge("", true, &c);
        let plain = judge("\"Wait,\" Hesper says. The fog thickens.", true, &c);
        assert!(plain.prose, "dialogue is prose: {plain:?}");
        assert!(!json.prose);
        assert_eq!(empty.score, 0);
        assert_eq!(pick(&[json, empty, plain]), 2);
    }

    #[test]
    fn a_first_person_narrator_or_talk_of_passages_loses_to_second_person_story() {
        let c = cues("", "", "I wait");
        let first = judge(
            "The next day, I was in a bar and my glass was empty.",
            false,
            &c,
        );
        let meta = judge("In the next passage, you will see the quay.", false, &c);
        let quoted = judge("\"I saw my brother,\" Hesper says, and you nod.", false, &c);
        assert!(first.first_person && !first.assistant, "{first:?}");
        assert!(meta.assistant && !meta.first_person, "{meta:?}");
        assert!(!quoted.first_person, "dialogue may say I: {quoted:?}");
        assert_eq!(pick(&[first, meta, quoted]), 2);
    }

    #[test]
    fn a_narration_stopped_mid_sentence_ends_at_its_last_whole_one() {
        assert_eq!(
            whole_sentences("You wait. \"Not yet,\" she says. The next day, you"),
            "You wait. \"Not yet,\" she says."
        );
        assert_eq!(whole_sentences("She nods!  "), "She nods!");
        assert_eq!(whole_sentences("No end in sight"), "No end in sight");
        assert_eq!(
            whole_sentences("It reads 3.5 fathoms. Then the"),
            "It reads 3.5 fathoms."
        );
    }

    #[test]
    fn plurals_meet_their_singular() {
        let said: Vec<String> = words("The lanterns; a glass; Hesper's").collect();
        assert_eq!(said, ["lantern", "glass", "hesper"]);
    }

    #[test]
    fn the_campaigns_everyday_words_are_no_callback_its_rare_ones_are() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (campaign, report) = crate::campaign::load(
            &root.join("campaigns/drowned-reach"),
            &[crate::campaign::system_rulesets()],
        );
        let campaign = campaign.unwrap_or_else(|| panic!("{report}"));
        let c = Cues::new(
            &campaign,
            "At Reedmere Quay, you tried to ask Hesper about the page cut from the crossing ledger.",
            "A little water runs under the Three Eels, where the smugglers drink.",
            "I ask Hesper again at Reedmere Quay",
        );
        for rare in ["ledger", "crossing", "eels", "smuggler"] {
            assert!(
                c.memory.contains(rare) || c.lore.contains(rare),
                "{rare}: {c:?}"
            );
        }
        for everyday in ["little", "water", "page", "hesper", "again", "quay"] {
            assert!(
                !c.memory.contains(everyday) && !c.lore.contains(everyday),
                "{everyday}: {c:?}"
            );
        }
    }

    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "You",
        "you",
        "I",
        "my",
        "Hesper",
        "Vane",
        "Reedmere",
        "Quay",
        "ledger",
        "crossing",
        "Certainly",
        "assistant",
        "story",
        "Here",
        "is",
        "the",
        "As",
        "an",
        "AI",
        "narration",
        "walk",
        "says",
        "\"I",
        "said.\"",
    ];

    fn text() -> impl Strategy<Value = String> {
        crate::session::moves_strategy::text(WORDS)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// `whole_sentences` cuts only at the end: what it keeps is the start
        /// of the text, and cutting again changes nothing.
        #[test]
        fn whole_sentences_keeps_a_prefix_and_is_settled(narration in text()) {
            let kept = whole_sentences(&narration);
            prop_assert!(narration.starts_with(kept));
            prop_assert_eq!(whole_sentences(kept), kept);
            prop_assert_eq!(kept.is_empty(), narration.trim_end().is_empty());
        }

        /// Any draft is judged without a panic; a blank one scores nothing,
        /// and the pick is always one of the drafts.
        #[test]
        fn any_draft_is_judged_and_one_is_picked(drafts in prop::collection::vec(text(), 1..5), cut in any::<bool>()) {
            let c = cues("At Reedmere Quay, you asked Hesper about the ledger.", "The crossing ledger is kept in the toll house.", "I ask");
            let verdicts: Vec<Verdict> = drafts.iter().map(|d| judge(whole_sentences(d), cut, &c)).collect();
            for (d, v) in drafts.iter().zip(&verdicts) {
                if whole_sentences(d).trim().is_empty() {
                    prop_assert_eq!(v.score, 0);
                }
            }
            let picked = pick(&verdicts);
            prop_assert!(picked < verdicts.len());
            let _ = explain(picked, &verdicts);
        }
    }
}
