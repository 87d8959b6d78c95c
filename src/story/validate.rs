//! Validation of a story graph: references, reachability under codeword gates, residue, overlays, codex.

use std::collections::HashMap;

use super::diagnostic::{Diagnostic, Rule, Subject};
use super::graph::{CodewordIx, CodewordSet, CodexIx, PassageIx, Story};
use super::model::{Overlay, StoryFile};
use super::reach::{self, Walk};

/// Every finding about one story, errors first.
#[derive(Debug, Default)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
    /// The reachability walk, when the story compiled.
    pub walk: Option<Walk>,
}

impl Report {
    pub fn errors(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    pub fn warnings(&self) -> usize {
        self.diagnostics.len() - self.errors()
    }

    fn sort(&mut self) {
        self.diagnostics.sort_by(|a, b| {
            (a.severity, a.rule, &a.subject).cmp(&(b.severity, b.rule, &b.subject))
        });
        self.diagnostics.dedup();
    }
}

/// Labels that describe the interface rather than the world.
const NON_DIEGETIC_LABELS: &[&str] =
    &["continue", "next", "go on", "ok", "okay", "proceed", "more"];

/// Compile and check a story file; a story that does not compile reports why.
pub fn validate_file(file: StoryFile) -> (Option<Story>, Report) {
    match Story::compile(file) {
        Ok(story) => {
            let report = validate(&story);
            (Some(story), report)
        }
        Err(diagnostics) => {
            let mut report = Report {
                diagnostics,
                walk: None,
            };
            report.sort();
            (None, report)
        }
    }
}

/// Check a compiled story against every semantic rule.
pub fn validate(story: &Story) -> Report {
    let mut diags = Vec::new();
    check_text(story, &mut diags);
    check_codeword_use(story, &mut diags);
    check_entities(story, &mut diags);

    let live = reach::live_codewords(story);
    let walk = reach::walk(story, &live, None);
    let mut queries = TogetherQueries {
        story,
        live: &live,
        cache: HashMap::new(),
    };
    if walk.complete {
        check_reachability(story, &walk, &mut diags);
        check_overlays(story, &mut queries, &mut diags);
        check_codex_gates(story, &mut queries, &mut diags);
    } else {
        diags.push(Diagnostic::new(
            Rule::StateSpaceTooLarge,
            Subject::Story,
            format!(
                "the walk over codeword states passed {} states; reachability, dead ends and gates were not verified",
                reach::STATE_LIMIT
            ),
        ));
    }
    let mut report = Report {
        diagnostics: diags,
        walk: Some(walk),
    };
    report.sort();
    report
}

/// Cached "can these codewords be held together" walks.
struct TogetherQueries<'a> {
    story: &'a Story,
    live: &'a [CodewordSet],
    cache: HashMap<CodewordSet, Option<bool>>,
}

impl TogetherQueries<'_> {
    fn ask(&mut self, set: &CodewordSet) -> Option<bool> {
        if let Some(&answer) = self.cache.get(set) {
            return answer;
        }
        let answer = reach::can_hold_together(self.story, self.live, set);
        self.cache.insert(set.clone(), answer);
        answer
    }
}

fn ids(story: &Story, set: &CodewordSet) -> String {
    set.iter()
        .map(|c| format!("`{}`", story.codeword_id(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_text(story: &Story, diags: &mut Vec<Diagnostic>) {
    for passage in &story.file().passages {
        if passage.prose.trim().is_empty() {
            diags.push(Diagnostic::new(
                Rule::EmptyProse,
                Subject::Passage(passage.id.clone()),
                "has no prose; a passage ships only once its prose is written",
            ));
        }
        for (index, choice) in passage.choices.iter().enumerate() {
            let label = choice.label.trim().trim_end_matches(['.', '…', '!']);
            if label.is_empty() || NON_DIEGETIC_LABELS.contains(&label.to_lowercase().as_str()) {
                diags.push(Diagnostic::new(
                    Rule::NonDiegeticLabel,
                    Subject::Choice {
                        passage: passage.id.clone(),
                        index,
                    },
                    format!(
                        "label {:?} says nothing in the story's voice; name what the character does",
                        choice.label
                    ),
                ));
            }
        }
    }
}

fn check_codeword_use(story: &Story, diags: &mut Vec<Diagnostic>) {
    let mut granted = story.no_codewords();
    let mut required = story.no_codewords();
    for p in story.passages() {
        for choice in story.choices(p) {
            granted.union_with(&choice.grants);
            required.union_with(&choice.requires);
        }
    }
    let mut observed = story.no_codewords();
    for e in story.entities() {
        for overlay in &story.entity(e).overlays {
            if let Some(set) = story.codeword_set(overlay.when.iter().map(String::as_str)) {
                observed.union_with(&set);
            }
        }
    }
    for tier in 0..story.file().codex.len() {
        observed.union_with(story.codex_gate(CodexIx::from_index(tier)));
    }
    for (i, codeword) in story.file().codewords.iter().enumerate() {
        let c = CodewordIx::from_index(i);
        let subject = Subject::Codeword(codeword.id.clone());
        if granted.contains(c) && !required.contains(c) {
            diags.push(Diagnostic::new(
                Rule::ResidueNeverRead,
                subject,
                "is granted but no choice requires it (residue must be read)",
            ));
        } else if !granted.contains(c) && !required.contains(c) && !observed.contains(c) {
            diags.push(Diagnostic::new(
                Rule::UnusedCodeword,
                subject,
                "is declared but never granted, required or tested",
            ));
        }
    }
}

fn check_entities(story: &Story, diags: &mut Vec<Diagnostic>) {
    let file = story.file();
    let mut mentioned = vec![false; file.entities.len()];
    let mut mark = |id: &str| {
        if let Some(e) = story.entity_ix(id) {
            mentioned[e.index()] = true;
        }
    };
    for passage in &file.passages {
        passage.appears.iter().for_each(|a| mark(&a.entity));
    }
    for rel in &file.relationships {
        mark(&rel.from);
        mark(&rel.to);
    }
    file.codex.iter().for_each(|c| mark(&c.entity));
    for (entity, mentioned) in file.entities.iter().zip(mentioned) {
        if !mentioned {
            diags.push(Diagnostic::new(
                Rule::OrphanEntity,
                Subject::Entity(entity.id.clone()),
                "appears in no passage and has no codex entry or relationship",
            ));
        }
    }
    for e in story.entities() {
        let tiers = story.codex_tiers(e);
        for pair in tiers.windows(2) {
            let (a, b) = (story.codex_entry(pair[0]), story.codex_entry(pair[1]));
            if a.rank == b.rank {
                diags.push(Diagnostic::new(
                    Rule::DuplicateCodexRank,
                    Subject::Codex(b.id.clone()),
                    format!(
                        "has rank {} like `{}` of the same entity; give each tier its own rank",
                        b.rank, a.id
                    ),
                ));
            }
        }
    }
}

fn check_reachability(story: &Story, walk: &Walk, diags: &mut Vec<Diagnostic>) {
    let start_id = &story.passage(story.start()).id;
    let mut granted_anywhere = story.no_codewords();
    for p in story.passages() {
        for choice in story.choices(p) {
            granted_anywhere.union_with(&choice.grants);
        }
    }
    let mut any_ending = false;
    for p in story.passages() {
        let id = &story.passage(p).id;
        if !walk.reachable.contains(p.index()) {
            diags.push(Diagnostic::new(
                Rule::UnreachablePassage,
                Subject::Passage(id.clone()),
                format!("cannot be reached from `{start_id}` under any codeword state"),
            ));
            continue;
        }
        any_ending |= story.is_ending(p);
        for (index, choice) in story.choices(p).iter().enumerate() {
            if walk.usable_choices.contains(story.choice_number(p, index)) {
                continue;
            }
            let never = choice.requires.difference(&granted_anywhere);
            let why = if never.is_empty() {
                format!(
                    "requires {} but no route reaches this passage holding all of them",
                    ids(story, &choice.requires)
                )
            } else {
                format!("requires {}, which no choice grants", ids(story, &never))
            };
            diags.push(Diagnostic::new(
                Rule::ImpossibleGate,
                Subject::Choice {
                    passage: id.clone(),
                    index,
                },
                why,
            ));
        }
    }
    let mut dead: Vec<(PassageIx, &CodewordSet)> = Vec::new();
    for (p, held) in &walk.dead_ends {
        if !dead.iter().any(|(q, _)| q == p) {
            dead.push((*p, held));
        }
    }
    for (p, held) in dead {
        let holding = if held.is_empty() {
            "no relevant codewords".to_owned()
        } else {
            ids(story, held)
        };
        diags.push(Diagnostic::new(
            Rule::DeadEnd,
            Subject::Passage(story.passage(p).id.clone()),
            format!(
                "a player arriving holding {holding} finds every choice closed, and it is not an ending"
            ),
        ));
    }
    if !any_ending {
        diags.push(Diagnostic::new(
            Rule::NoReachableEnding,
            Subject::Story,
            format!("no ending (a passage without choices) can be reached from `{start_id}`"),
        ));
    }
}

/// Conflicts between overlays of one entity or relationship that can be active together.
fn overlay_conflicts(
    story: &Story,
    overlays: &[Overlay],
    subject: &Subject,
    queries: &mut TogetherQueries<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    let gates: Vec<Option<CodewordSet>> = overlays
        .iter()
        .map(|o| story.codeword_set(o.when.iter().map(String::as_str)))
        .collect();
    for (a, first) in overlays.iter().enumerate() {
        for (b, second) in overlays.iter().enumerate().skip(a + 1) {
            let (Some(ga), Some(gb)) = (&gates[a], &gates[b]) else {
                continue;
            };
            if ga.is_subset(gb) || gb.is_subset(ga) {
                continue; // a refinement, resolved by specificity on purpose
            }
            let mut both = ga.clone();
            both.union_with(gb);
            for (key, value) in &first.details {
                let Some(other) = second.details.get(key) else {
                    continue;
                };
                if other == value {
                    continue;
                }
                let resolved = overlays.iter().zip(&gates).any(|(o, g)| {
                    g.as_ref().is_some_and(|g| both.is_subset(g)) && o.details.contains_key(key)
                });
                if resolved || queries.ask(&both) != Some(true) {
                    continue;
                }
                let winner = if gb.len() >= ga.len() { b } else { a };
                diags.push(Diagnostic::new(
                    Rule::OverlayConflict,
                    subject.clone(),
                    format!(
                        "overlays {} (when {}) and {} (when {}) can be active together and set `{key}` differently; overlay {} wins. Make the codewords exclusive or add an overlay for both",
                        a + 1,
                        ids(story, ga),
                        b + 1,
                        ids(story, gb),
                        winner + 1
                    ),
                ));
            }
        }
    }
}

fn check_overlays(story: &Story, queries: &mut TogetherQueries<'_>, diags: &mut Vec<Diagnostic>) {
    for entity in &story.file().entities {
        let subject = Subject::Entity(entity.id.clone());
        overlay_conflicts(story, &entity.overlays, &subject, queries, diags);
    }
    for rel in &story.file().relationships {
        let subject = Subject::Relationship(rel.id.clone());
        overlay_conflicts(story, &rel.overlays, &subject, queries, diags);
    }
}

fn check_codex_gates(
    story: &Story,
    queries: &mut TogetherQueries<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    for (i, entry) in story.file().codex.iter().enumerate() {
        let gate = story.codex_gate(CodexIx::from_index(i));
        if !gate.is_empty() && queries.ask(gate) == Some(false) {
            diags.push(Diagnostic::new(
                Rule::CodexNeverVisible,
                Subject::Codex(entry.id.clone()),
                format!(
                    "needs {} together, which no playthrough holds",
                    ids(story, gate)
                ),
            ));
        }
    }
}
