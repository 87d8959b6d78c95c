//! What the engine's checks read: the world's names, places, holdings and ways, and a move's words.
//!
//! Below the move check (`check`), the names (`names`), the NPCs' voices and
//! the narration cut: each reads the same [`Reading`] of the world and the
//! same [`Word`]s of a text.

use std::collections::{BTreeMap, VecDeque};

use crate::campaign::{DEFAULT_ROUTE_MINUTES, Route};

/// What the check reads of the world: names, places, items, who holds what.
pub struct Reading<'a> {
    /// The scene's place id.
    pub here: &'a str,
    /// Character ids in the scene.
    pub present: &'a [String],
    /// NPCs by id, with the names a player may use (`people::names`).
    pub people: &'a [(String, Vec<String>)],
    /// Places, items and factions by id, with their names.
    pub places: Vec<(&'a str, &'a str)>,
    pub items: Vec<(&'a str, &'a str)>,
    pub factions: Vec<&'a str>,
    /// The titles of the campaign's lore ("Mabel and Old Pete"): names a
    /// model may take from it that are no one's and nothing's in the world.
    pub lore: Vec<&'a str>,
    /// The player's own name, if the campaign gives one.
    pub player_name: &'a str,
    /// Quantities by owner, then item.
    pub inventory: &'a BTreeMap<String, BTreeMap<String, u32>>,
    /// Where each character not in the scene was left (id → place id).
    pub whereabouts: BTreeMap<String, String>,
    /// The ways open now, and those a clock has shut (`Route::closed_when`).
    pub routes: &'a [Route],
    pub closed: &'a [Route],
}

impl Reading<'_> {
    pub(super) fn place_name(&self, id: &str) -> String {
        self.places
            .iter()
            .find(|(p, _)| *p == id)
            .map_or_else(|| id.replace('_', " "), |(_, n)| (*n).to_owned())
    }

    pub(super) fn person_name(&self, id: &str) -> String {
        self.people
            .iter()
            .find(|(p, _)| p == id)
            .and_then(|(_, ns)| ns.first().cloned())
            .or_else(|| {
                self.places
                    .iter()
                    .chain(&self.items)
                    .find(|(p, _)| *p == id)
                    .map(|(_, n)| (*n).to_owned())
            })
            .unwrap_or_else(|| id.replace('_', " "))
    }

    /// Minutes from here to `to`, and the first step when it is further
    /// than one route (`None`: no way at all).
    pub fn way(&self, to: &str) -> Option<(i64, Option<String>)> {
        if self.routes.is_empty() && self.closed.is_empty() {
            return Some((DEFAULT_ROUTE_MINUTES, None));
        }
        let mut next: BTreeMap<&str, Vec<(&str, i64)>> = BTreeMap::new();
        for r in self.routes {
            next.entry(&r.from).or_default().push((&r.to, r.minutes));
            next.entry(&r.to).or_default().push((&r.from, r.minutes));
        }
        if let Some((_, m)) = next
            .get(self.here)
            .and_then(|n| n.iter().find(|(p, _)| *p == to))
        {
            return Some((*m, None));
        }
        // The first step of a shortest way (fewest routes).
        let mut first: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = VecDeque::new();
        for (p, _) in next.get(self.here).into_iter().flatten() {
            if first.insert(p, p).is_none() {
                queue.push_back(*p);
            }
        }
        while let Some(at) = queue.pop_front() {
            if at == to {
                return Some((0, first.get(at).map(|s| (*s).to_owned())));
            }
            let step = first.get(at).copied().unwrap_or(at);
            for (p, _) in next.get(at).into_iter().flatten() {
                if *p != self.here && !first.contains_key(p) {
                    first.insert(p, step);
                    queue.push_back(p);
                }
            }
        }
        None
    }

    pub(super) fn holds(&self, owner: &str, item: &str) -> bool {
        self.inventory
            .get(owner)
            .and_then(|h| h.get(item))
            .is_some_and(|n| *n > 0)
    }

    pub(super) fn holder(&self, item: &str) -> Option<&str> {
        self.inventory
            .iter()
            .find(|(_, h)| h.get(item).is_some_and(|n| *n > 0))
            .map(|(o, _)| o.as_str())
    }
}

/// One word of a move, as written, with whether a sentence starts there.
pub(super) struct Word<'t> {
    pub(super) text: &'t str,
    pub(super) lower: String,
    pub(super) starts_sentence: bool,
}

pub(super) fn words(text: &str) -> Vec<Word<'_>> {
    let mut out = Vec::new();
    let mut starts = true;
    let mut rest = text;
    let mut from = 0;
    for (i, c) in text.char_indices() {
        let part = c.is_alphanumeric() || c == '\'' || c == '-';
        if !part {
            if from < i {
                let w = &text[from..i];
                out.push(Word {
                    text: w,
                    lower: w.to_lowercase(),
                    starts_sentence: starts,
                });
                starts = false;
            }
            if matches!(c, '.' | '!' | '?' | '"' | '\u{201c}' | ':') {
                starts = true;
            }
            from = i + c.len_utf8();
        }
        rest = &text[from..];
    }
    if !rest.is_empty() {
        out.push(Word {
            text: rest,
            lower: rest.to_lowercase(),
            starts_sentence: starts,
        });
    }
    out
}

/// The verb or its -s, -es, -ed, -ing forms.
fn inflects(w: &str, verb: &str) -> bool {
    w == verb
        || ["s", "es", "ed", "d", "ing"].iter().any(|end| {
            w.strip_suffix(end).is_some_and(|stem| {
                stem == verb
                    || stem == verb.trim_end_matches('e')
                    || (stem.len() > 2
                        && stem.ends_with(|c: char| verb.ends_with(c))
                        && &stem[..stem.len() - 1] == verb)
            })
        })
}

/// Whether `w` is one of `verbs` or its -s, -es, -ed, -ing forms ("goes",
/// "rowing", "hugged"), not a word that merely starts like one ("gold").
pub(super) fn is_any(w: &str, verbs: &[&str]) -> bool {
    verbs.iter().any(|v| inflects(w, v))
}
