//! Lines and veils (seed 001 calibration): a local check of generated text against player limits.
//!
//! At session zero the player marks each content warning as fine, a *veil*
//! (may happen off-screen, only implied) or a *line* (never in the story).
//! [`Guard::new`] compiles those marks once per session against the lexicon in
//! `assets/content/lines_and_veils.ron`; [`Guard::check`] scans each narration,
//! intention and choice. A warning maps to every lexicon category whose `keys`
//! it names (the longest key wins where keys overlap). A line is crossed by any
//! `mention` or `depict` term of its categories, a veil only by a `depict` term.
//! A warning that names several categories ("death of children") crosses only
//! where each of them has a term in one sentence. A warning that names none
//! falls back to its own content words as mentions; a veil on it never crosses,
//! since without words for showing there is no telling showing from implying.
//!
//! Terms match whole words; a single word, or a phrase's last word, also
//! matches with -s, -es, -ed, -ing or -ly (and a dropped final e), and phrases
//! match across any spaces and punctuation. A term in capitalised words that do
//! not open a sentence or quotation ("the Drowned Reach") is a name, not
//! content. Negation is not special-cased: the player asked for none of it.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// The shipped lexicon of categories.
const SOURCE: &str = include_str!("../../assets/content/lines_and_veils.ron");

/// The lexicon, compiled on first use. Were the shipped file ever unreadable
/// it would be empty, and every warning would fall back to its own words.
static LEXICON: LazyLock<Lexicon> =
    LazyLock::new(|| Lexicon::compile(ron::from_str(SOURCE).unwrap_or_default()));

/// Endings a single word, or a phrase's last word, may carry.
const SUFFIXES: [&str; 5] = ["s", "es", "ed", "ing", "ly"];

/// Words of a warning that never name its subject (the fallback path keeps
/// words of four letters or more, so shorter ones are listed for the reader).
const STOP_WORDS: &str = "the of and or with without past shown showing not no in on off any \
    only screen onscreen offscreen scene scenes content graphic explicit implied depiction \
    depictions mention mentions reference references about against from into onto that this \
    these those their them they there some very please being other stuff things theme themes \
    including especially also when where which while what your";

/// Bits per category and sentence: some term seen, a depicting term seen.
const ANY: u8 = 1;
const SHOWN: u8 = 2;

/// Whether a line (never) or a veil (off-screen only) was crossed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    /// Never in the story at all.
    Line,
    /// May happen off-screen, only implied; never shown.
    Veil,
}

impl Limit {
    fn word(self) -> &'static str {
        match self {
            Self::Line => "line",
            Self::Veil => "veil",
        }
    }
}

/// A text that crossed one of the player's limits: which, and the category's display name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Crossing {
    /// Which kind of limit was crossed.
    pub limit: Limit,
    /// The category's display name: "drowning", "death involving children", or
    /// the warning itself, lowercased, where it names no lexicon category.
    pub category: String,
    /// The player's own words for it (the calibration entry).
    pub warning: String,
}

impl Crossing {
    /// For the regeneration prompt: what to avoid, in plain words, without
    /// quoting the text ("keep drowning out of the story entirely").
    pub fn instruction(&self) -> String {
        match self.limit {
            Limit::Line => format!("keep {} out of the story entirely", self.category),
            Limit::Veil => format!("keep {} off-screen: imply it, never show it", self.category),
        }
    }

    /// For the overlay: "line: drowning", "veil: gore". Never the text itself.
    pub fn label(&self) -> String {
        format!("{}: {}", self.limit.word(), self.category)
    }
}

/// The player's limits, compiled once per session from the calibration's `lines` and `veils`.
#[derive(Clone, Debug, Default)]
pub struct Guard {
    terms: Terms,
    rules: Vec<Rule>,
    groups: usize,
}

impl Guard {
    /// Compile the calibration's warnings: `lines` never in the story, `veils`
    /// off-screen only. Warnings with no content words are dropped.
    pub fn new(lines: &[String], veils: &[String]) -> Self {
        let lexicon = &*LEXICON;
        let mut guard = Self::default();
        let mut group_of: HashMap<usize, usize> = HashMap::new();
        let marks =
            (lines.iter().map(|w| (Limit::Line, w))).chain(veils.iter().map(|w| (Limit::Veil, w)));
        for (limit, warning) in marks {
            let warning = warning.trim();
            let categories = lexicon.categories_of(warning);
            let (category, groups) = if categories.is_empty() {
                let words = fallback_words(warning);
                if words.is_empty() {
                    continue;
                }
                let group = guard.group();
                for word in &words {
                    guard.terms.add(word, group, Kind::Mention);
                }
                (warning.to_lowercase(), vec![group])
            } else {
                let groups = categories
                    .iter()
                    .map(|&c| {
                        *group_of.entry(c).or_insert_with(|| {
                            let group = guard.group();
                            guard.compile(lexicon, c, group);
                            group
                        })
                    })
                    .collect();
                (lexicon.display(&categories), groups)
            };
            let warning = warning.to_owned();
            guard.rules.push(Rule {
                limit,
                category,
                warning,
                groups,
            });
        }
        guard
    }

    /// Whether the player set no limits (or none with words to check).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The first limit `text` crosses (lines before veils, then calibration
    /// order), if any. One pass over the text's words; memory linear in its length.
    pub fn check(&self, text: &str) -> Option<Crossing> {
        if self.rules.is_empty() {
            return None;
        }
        let text = Text::new(text);
        let mut scan = Scan {
            seen: vec![0; self.groups],
            exempt: vec![0; self.groups],
            touched: Vec::new(),
            first: None,
        };
        let mut sentence = 0;
        for (i, token) in text.tokens.iter().enumerate() {
            if token.sentence != sentence {
                self.settle(&mut scan);
                if scan.first == Some(0) {
                    break;
                }
                sentence = token.sentence;
            }
            for (term, n) in self.terms.at(&text, i) {
                if term.kind == Kind::Except
                    && let Some(end) = scan.exempt.get_mut(term.group)
                {
                    *end = (*end).max(i + n);
                }
            }
            for (term, n) in self.terms.at(&text, i) {
                let exempt = scan.exempt.get(term.group).is_some_and(|&end| i + n <= end);
                if term.kind == Kind::Except || exempt || text.is_name(i, n) {
                    continue;
                }
                let bits = if term.kind == Kind::Depict {
                    ANY | SHOWN
                } else {
                    ANY
                };
                if let Some(seen) = scan.seen.get_mut(term.group) {
                    if *seen == 0 {
                        scan.touched.push(term.group);
                    }
                    *seen |= bits;
                }
            }
        }
        self.settle(&mut scan);
        let rule = self.rules.get(scan.first?)?;
        Some(Crossing {
            limit: rule.limit,
            category: rule.category.clone(),
            warning: rule.warning.clone(),
        })
    }

    /// A new category group for this guard's terms.
    fn group(&mut self) -> usize {
        self.groups += 1;
        self.groups - 1
    }

    /// Add the terms of lexicon category `c` under `group`.
    fn compile(&mut self, lexicon: &Lexicon, c: usize, group: usize) {
        let Some(category) = lexicon.categories.get(c) else {
            return;
        };
        for (terms, kind) in [
            (&category.mention, Kind::Mention),
            (&category.depict, Kind::Depict),
            (&category.except, Kind::Except),
        ] {
            for term in terms {
                self.terms.add(term, group, kind);
            }
        }
    }

    /// At a sentence's end: note the earliest rule it crosses, then forget it.
    fn settle(&self, scan: &mut Scan) {
        if scan.touched.is_empty() {
            return;
        }
        let before = scan.first.unwrap_or(self.rules.len());
        let rules = self.rules.get(..before).unwrap_or_default();
        if let Some(r) = rules.iter().position(|rule| rule.crossed(&scan.seen)) {
            scan.first = Some(r);
        }
        for group in scan.touched.drain(..) {
            if let Some(seen) = scan.seen.get_mut(group) {
                *seen = 0;
            }
        }
    }
}

/// One calibration entry, compiled.
#[derive(Clone, Debug)]
struct Rule {
    limit: Limit,
    category: String,
    warning: String,
    /// The guard's groups for its categories: each must have a term in one sentence.
    groups: Vec<usize>,
}

impl Rule {
    fn crossed(&self, seen: &[u8]) -> bool {
        let bits = |group: &usize| seen.get(*group).copied().unwrap_or(0);
        self.groups.iter().all(|g| bits(g) & ANY != 0)
            && (self.limit == Limit::Line || self.groups.iter().any(|g| bits(g) & SHOWN != 0))
    }
}

/// The state of one [`Guard::check`].
struct Scan {
    /// Per group, the [`ANY`] and [`SHOWN`] bits of the current sentence.
    seen: Vec<u8>,
    /// Per group, the token index before which an `except` phrase hides terms.
    exempt: Vec<usize>,
    /// The groups with bits set in the current sentence.
    touched: Vec<usize>,
    /// The earliest rule crossed so far.
    first: Option<usize>,
}

/// What a term does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Names the category in a player's warning.
    Key,
    /// Puts the subject in the story.
    Mention,
    /// Shows it on screen.
    Depict,
    /// Looks like a term but is not; hides the terms it covers.
    Except,
}

/// A term's words after its first (which is the index's key), each with the
/// forms it may take, and what it stands for.
#[derive(Clone, Debug)]
struct Term {
    rest: Vec<Vec<String>>,
    group: usize,
    kind: Kind,
}

/// Terms indexed by the forms of their first word.
#[derive(Clone, Debug, Default)]
struct Terms {
    by_first: HashMap<String, Vec<usize>>,
    list: Vec<Term>,
}

impl Terms {
    fn add(&mut self, term: &str, group: usize, kind: Kind) {
        let lower = term.to_lowercase();
        let words: Vec<&str> = words_of(&lower).collect();
        let last = words.len().saturating_sub(1);
        let mut forms = words.iter().enumerate().map(|(k, word)| {
            if k == last && kind != Kind::Except {
                forms(word)
            } else {
                vec![(*word).to_owned()]
            }
        });
        let Some(first) = forms.next() else {
            return;
        };
        let id = self.list.len();
        for form in first {
            self.by_first.entry(form).or_default().push(id);
        }
        let rest = forms.collect();
        self.list.push(Term { rest, group, kind });
    }

    /// The terms that match at token `i`, each with its length in tokens.
    fn at<'a>(&'a self, text: &'a Text, i: usize) -> impl Iterator<Item = (&'a Term, usize)> {
        let ids = self
            .by_first
            .get(text.word(i))
            .map_or(&[][..], Vec::as_slice);
        ids.iter().filter_map(move |&id| {
            let term = self.list.get(id)?;
            let follows = (term.rest.iter().enumerate())
                .all(|(k, forms)| forms.iter().any(|f| f == text.word(i + 1 + k)));
            follows.then_some((term, term.rest.len() + 1))
        })
    }
}

/// A word of a text, as a byte range of [`Text::lower`].
struct Token {
    start: usize,
    end: usize,
    sentence: usize,
    /// Capitalised with lowercase after ("Drowned", not "DROWNED" or "I").
    titled: bool,
    /// First of its sentence or quotation, where a capital says nothing.
    opens: bool,
}

/// A text split into lowercase words.
struct Text {
    lower: String,
    tokens: Vec<Token>,
}

impl Text {
    fn new(text: &str) -> Self {
        let mut lower = String::with_capacity(text.len());
        let mut tokens: Vec<Token> = Vec::new();
        let (mut sentence, mut opens, mut inside, mut has_lower) = (0, true, false, false);
        for c in text.chars() {
            if c.is_alphanumeric() {
                if inside {
                    has_lower |= c.is_lowercase();
                } else {
                    let start = lower.len();
                    let titled = c.is_uppercase();
                    tokens.push(Token {
                        start,
                        end: start,
                        sentence,
                        titled,
                        opens,
                    });
                    (inside, opens, has_lower) = (true, false, false);
                }
                lower.extend(c.to_lowercase());
                continue;
            }
            if inside {
                close(&mut tokens, lower.len(), has_lower);
                inside = false;
            }
            match c {
                '.' | '!' | '?' | '\n' | '\u{2026}' => {
                    sentence += 1;
                    opens = true;
                }
                '"' | '\'' | '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}' | '\u{ab}'
                | '\u{bb}' | '(' | '[' => opens = true,
                _ => {}
            }
        }
        if inside {
            close(&mut tokens, lower.len(), has_lower);
        }
        Self { lower, tokens }
    }

    fn word(&self, i: usize) -> &str {
        let token = self.tokens.get(i);
        token
            .and_then(|t| self.lower.get(t.start..t.end))
            .unwrap_or_default()
    }

    /// Whether tokens `i..i + n` are a name: all capitalised, not opening a sentence.
    fn is_name(&self, i: usize, n: usize) -> bool {
        let span = self.tokens.get(i..i + n).unwrap_or_default();
        span.first().is_some_and(|t| !t.opens) && span.iter().all(|t| t.titled)
    }
}

/// End the last token at `end`; it is titled only with lowercase after its capital.
fn close(tokens: &mut [Token], end: usize, has_lower: bool) {
    if let Some(token) = tokens.last_mut() {
        token.end = end;
        token.titled &= has_lower;
    }
}

/// The words of an already lowercased term or warning.
fn words_of(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// A word and its simple inflections: "drown" → drowns, drowned, drowning…;
/// "strangle" also → strangled, strangling (the final e dropped, stems of three
/// letters or more only, so "die" does not take "ding").
fn forms(word: &str) -> Vec<String> {
    let mut forms = vec![word.to_owned()];
    forms.extend(SUFFIXES.iter().map(|s| format!("{word}{s}")));
    if let Some(stem) = word.strip_suffix('e')
        && stem.chars().count() >= 3
    {
        forms.extend(["ed", "ing"].map(|s| format!("{stem}{s}")));
    }
    forms.sort_unstable();
    forms.dedup();
    forms
}

/// The content words of a warning that names no category: lowercase, four
/// letters or more, no stop words; a plural also gives its singular ("clowns"
/// → clowns, clown).
fn fallback_words(warning: &str) -> Vec<String> {
    let lower = warning.to_lowercase();
    let mut words = Vec::new();
    for word in words_of(&lower) {
        let numeric = word.chars().all(char::is_numeric);
        let stop = STOP_WORDS.split_whitespace().any(|s| s == word);
        if word.chars().count() < 4 || numeric || stop {
            continue;
        }
        words.push(word.to_owned());
        if let Some(stem) = word.strip_suffix('s')
            && stem.chars().count() >= 3
            && !stem.ends_with(['s', 'u', 'i'])
        {
            words.push(stem.to_owned());
        }
    }
    words.sort_unstable();
    words.dedup();
    words
}

/// The lexicon file: see its header for the fields.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LexiconFile {
    categories: Vec<Category>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Category {
    id: String,
    name: String,
    #[serde(default)]
    subject: bool,
    keys: Vec<String>,
    mention: Vec<String>,
    #[serde(default)]
    depict: Vec<String>,
    #[serde(default)]
    except: Vec<String>,
}

/// The categories, with their keys (and ids) indexed for reading warnings.
struct Lexicon {
    categories: Vec<Category>,
    keys: Terms,
}

impl Lexicon {
    fn compile(file: LexiconFile) -> Self {
        let mut keys = Terms::default();
        for (c, category) in file.categories.iter().enumerate() {
            keys.add(&category.id, c, Kind::Key);
            for key in &category.keys {
                keys.add(key, c, Kind::Key);
            }
        }
        Self {
            categories: file.categories,
            keys,
        }
    }

    /// The categories a warning names, in lexicon order: at each word the
    /// longest key wins ("self-harm" is self-harm, not harm).
    fn categories_of(&self, warning: &str) -> Vec<usize> {
        let text = Text::new(warning);
        let mut found = Vec::new();
        let mut i = 0;
        while i < text.tokens.len() {
            let longest = self.keys.at(&text, i).map(|(_, n)| n).max().unwrap_or(0);
            let named = self.keys.at(&text, i).filter(|&(_, n)| n == longest);
            found.extend(named.map(|(term, _)| term.group));
            i += longest.max(1);
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The display name of categories named together: acts, then the
    /// subjects they befall ("death involving children").
    fn display(&self, categories: &[usize]) -> String {
        let named = |subject: bool| -> Vec<&str> {
            (categories.iter().filter_map(|&c| self.categories.get(c)))
                .filter(|c| c.subject == subject)
                .map(|c| c.name.as_str())
                .collect()
        };
        let (acts, subjects) = (named(false), named(true));
        if acts.is_empty() || subjects.is_empty() {
            [acts, subjects].concat().join(" and ")
        } else {
            format!(
                "{} involving {}",
                acts.join(" and "),
                subjects.join(" and ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(lines: &[&str], veils: &[&str]) -> Guard {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        Guard::new(&own(lines), &own(veils))
    }

    fn label(guard: &Guard, text: &str) -> Option<String> {
        guard.check(text).map(|c| c.label())
    }

    fn lexicon() -> LexiconFile {
        ron::from_str(SOURCE).unwrap_or_else(|e| panic!("lines_and_veils.ron: {e}"))
    }

    #[test]
    fn shipped_lexicon_parses_and_every_category_has_keys_and_mentions() {
        let file = lexicon();
        assert!(
            file.categories.len() >= 20,
            "{} categories",
            file.categories.len()
        );
        let mut ids: Vec<&str> = file.categories.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), file.categories.len(), "category ids are unique");
        for c in &file.categories {
            assert!(!c.keys.is_empty() && !c.mention.is_empty(), "{}", c.id);
            assert!(!c.name.is_empty(), "{}", c.id);
            let all = c
                .keys
                .iter()
                .chain(&c.mention)
                .chain(&c.depict)
                .chain(&c.except);
            for term in all {
                assert_eq!(term, &term.to_lowercase(), "{}: lowercase terms", c.id);
                assert!(words_of(term).next().is_some(), "{}: empty term", c.id);
            }
            // The first key names this category alone.
            let first = c.keys.first().map_or("", String::as_str);
            let found: Vec<&str> = (LEXICON.categories_of(first).iter())
                .filter_map(|&i| LEXICON.categories.get(i))
                .map(|c| c.id.as_str())
                .collect();
            assert_eq!(found, [c.id.as_str()], "key {first:?}");
        }
        assert_eq!(LEXICON.categories.len(), file.categories.len());
    }

    #[test]
    fn every_term_crosses_as_it_should() {
        for c in &lexicon().categories {
            let key = c.keys.first().map_or("", String::as_str);
            let (line, veil) = (guard(&[key], &[]), guard(&[], &[key]));
            for term in &c.depict {
                let text = format!("{term}.");
                assert_eq!(
                    veil.check(&text).map(|x| x.limit),
                    Some(Limit::Veil),
                    "{term}"
                );
                assert!(line.check(&text).is_some(), "{term}");
            }
            for term in &c.mention {
                let text = format!("{term}.");
                assert!(line.check(&text).is_some(), "{}: {term}", c.id);
                assert_eq!(veil.check(&text), None, "{}: mention {term} shows", c.id);
            }
        }
    }

    #[test]
    fn a_line_forbids_mentions_a_veil_only_depiction() {
        let line = guard(&["drowning"], &[]);
        let veil = guard(&[], &["drowning"]);
        let mention = "Ned went under and did not come up.";
        let shown = "Ned thrashed in the water, and the water filled his lungs.";
        assert_eq!(label(&line, mention).as_deref(), Some("line: drowning"));
        assert_eq!(label(&line, shown).as_deref(), Some("line: drowning"));
        assert_eq!(veil.check(mention), None);
        assert_eq!(veil.check("Nobody drowned that night, they said."), None);
        assert_eq!(label(&veil, shown).as_deref(), Some("veil: drowning"));
        let calm = "The fog lifts off the marsh and the ferry bell rings twice.";
        assert_eq!(line.check(calm), None);
        // Negation is not special-cased.
        assert!(
            line.check("Nobody drowned that night, they said.")
                .is_some()
        );
    }

    #[test]
    fn simple_inflections_match() {
        let line = guard(&["drowning"], &[]);
        for text in [
            "Men drown here every spring.",
            "The ferryman drowns his sorrows, then himself.",
            "They found her drowned in the reeds.",
            "A drowning man grabs at anything.",
        ] {
            assert!(line.check(text).is_some(), "{text}");
        }
        let violence = guard(&["violence"], &[]);
        assert!(violence.check("He strangled the watchman.").is_some());
        assert!(
            violence
                .check("The strangling rope hangs by the door.")
                .is_some()
        );
        assert!(violence.check("The guards attacked at dawn.").is_some());
        assert!(
            violence
                .check("She struck violently at the lock.")
                .is_some()
        );
        // Phrases match across punctuation, their last word inflected.
        let fire = guard(&["fire"], &[]);
        assert!(fire.check("Someone set fires along the dyke.").is_some());
        assert!(
            guard(&["self-harm"], &[])
                .check("She cut—herself, once.")
                .is_some()
        );
    }

    #[test]
    fn terms_never_match_inside_other_words() {
        let cases = [
            (
                "rape",
                "She peeled a grapefruit and watched the rapeseed fields.",
            ),
            (
                "rape",
                "The therapist in Saltmere listens more than she speaks.",
            ),
            ("sex", "The sexton of Sussex rings the bell at noon."),
            ("scars", "A scarab brooch glints on her collar."),
            (
                "violence",
                "It takes skill to steer a skiff through the reeds.",
            ),
            (
                "gore",
                "A bloodhound bays somewhere past the Gorse Hill turning.",
            ),
            ("bigotry", "His words slurred as the night wore on."),
            (
                "death",
                "The ding of the ferry bell carries over the dietary kitchens.",
            ),
            (
                "insects",
                "Beetroot soup and a beeswax taper wait on the sill.",
            ),
            (
                "animals",
                "The cathedral doors stand open; dogma rules here.",
            ),
        ];
        for (warning, text) in cases {
            assert_eq!(
                guard(&[warning], &[]).check(text),
                None,
                "{warning}: {text}"
            );
        }
        assert!(
            guard(&["scars"], &[])
                .check("A scar runs down his cheek.")
                .is_some()
        );
        assert!(guard(&["rape"], &[]).check("He was a rapist.").is_some());
    }

    #[test]
    fn proper_names_are_not_content() {
        let line = guard(&["drowning"], &[]);
        for text in [
            "The ferry lanterns burn green over the Drowned Reach.",
            "They rowed out onto the Drowned Reach at dusk.",
            "The Drowned Reach is quiet tonight.",
        ] {
            assert_eq!(line.check(text), None, "{text}");
        }
        let gore = guard(&["gore"], &[]);
        assert_eq!(
            gore.check("Bloodmoor lies east, past the Bloody Fen."),
            None
        );
        // At a sentence's or a quotation's start, or shouted, it is content.
        for text in [
            "Drowned men tell no tales.",
            "She whispered, \u{201c}Drowned, all of them.\u{201d}",
            "The whole crew DROWNED.",
            "The reach is calm. Drowned, they say, the lot of them.",
        ] {
            assert!(line.check(text).is_some(), "{text}");
        }
    }

    #[test]
    fn except_phrases_hide_what_they_cover() {
        let line = guard(&["death", "gore"], &[]);
        assert_eq!(
            line.check("In the dead of night a murder of crows lifts off."),
            None
        );
        assert_eq!(line.check("A blood-red sun sinks behind the dyke."), None);
        assert_eq!(
            label(&line, "A blood-red sun lights the blood on the step.").as_deref(),
            Some("line: gore")
        );
    }

    #[test]
    fn a_compound_warning_needs_each_category_in_one_sentence() {
        let warning = "death of children (in the past, not shown)";
        let line = guard(&[warning], &[]);
        assert_eq!(line.check("A child waves from the quay."), None);
        assert_eq!(line.check("The old ferryman died last winter."), None);
        let apart = "A child waves from the quay. The old ferryman died last winter.";
        assert_eq!(line.check(apart), None);
        let crossing = line.check("The miller's boy drowned in the spring flood.");
        let crossing = crossing.unwrap_or_else(|| panic!("a child's death crosses"));
        assert_eq!(crossing.category, "death involving children");
        assert_eq!(crossing.warning, warning);
        assert_eq!(crossing.label(), "line: death involving children");
        // A veil on it lets the death be told, not shown.
        let veil = guard(&[], &[warning]);
        assert_eq!(
            veil.check("The miller's boy drowned in the spring flood."),
            None
        );
        assert!(
            veil.check("They pulled the boy's corpse from the sluice.")
                .is_some()
        );
    }

    #[test]
    fn warnings_map_to_categories_by_their_longest_keys() {
        let named = |w: &str| LEXICON.display(&LEXICON.categories_of(w));
        assert_eq!(named("self-harm"), "self-harm");
        assert_eq!(named("sexual violence"), "sexual violence");
        assert_eq!(named("domestic violence"), "abuse");
        assert_eq!(named("animal cruelty"), "abuse involving animals");
        assert_eq!(named("flood peril"), "floods");
        assert_eq!(named("class injustice"), "class injustice");
        assert_eq!(named("Spiders!"), "spiders");
        let animals = guard(&["animal cruelty"], &[]);
        assert_eq!(animals.check("A dog sleeps by the stove."), None);
        assert!(animals.check("The carter kicked the dog again.").is_some());
    }

    #[test]
    fn an_unknown_warning_falls_back_to_its_words() {
        let line = guard(&["Clowns and their painted masks"], &[]);
        let crossing = line.check("A clown juggles by the well.");
        assert_eq!(
            crossing.map(|c| c.label()).as_deref(),
            Some("line: clowns and their painted masks")
        );
        assert!(line.check("Painted masks hang in the window.").is_some());
        assert_eq!(line.check("The ferry is late again."), None);
        // With no depicting words a veil on it never crosses.
        let veil = guard(&[], &["clowns"]);
        assert!(!veil.is_empty());
        assert_eq!(veil.check("A clown juggles by the well."), None);
    }

    #[test]
    fn lines_come_before_veils_then_calibration_order() {
        let guard = guard(&["grief", "gore"], &["drowning"]);
        let text = "Ned thrashed in the water. Later, blood on the quay. A widow waits.";
        let crossing = guard.check(text);
        assert_eq!(crossing.as_ref().map(|c| c.limit), Some(Limit::Line));
        assert_eq!(crossing.map(|c| c.category).as_deref(), Some("grief"));
        let only_veil = "Ned thrashed in the water and was gone.";
        assert_eq!(label(&guard, only_veil).as_deref(), Some("veil: drowning"));
    }

    #[test]
    fn an_empty_guard_never_crosses() {
        for g in [
            Guard::default(),
            guard(&[], &[]),
            guard(&["", "  the  "], &["of"]),
        ] {
            assert!(g.is_empty());
            assert_eq!(g.check("Ned drowned in a pool of blood, screaming."), None);
        }
    }

    #[test]
    fn instructions_and_labels_name_the_category_only() {
        let crossing = |limit, category: &str| Crossing {
            limit,
            category: category.to_owned(),
            warning: "drowning please".to_owned(),
        };
        let line = crossing(Limit::Line, "drowning");
        assert_eq!(
            line.instruction(),
            "keep drowning out of the story entirely"
        );
        assert_eq!(line.label(), "line: drowning");
        let veil = crossing(Limit::Veil, "gore");
        assert_eq!(
            veil.instruction(),
            "keep gore off-screen: imply it, never show it"
        );
        assert_eq!(veil.label(), "veil: gore");
    }

    #[test]
    fn long_texts_scan_in_one_pass() {
        let guard = guard(&["drowning", "death of children"], &["gore", "spiders"]);
        let calm = "The tide turns and the ferry waits by the Drowned Reach. ".repeat(20_000);
        assert_eq!(guard.check(&calm), None);
        let late = format!("{calm}Then Ned went under.");
        assert_eq!(label(&guard, &late).as_deref(), Some("line: drowning"));
    }
}
