//! Validation of a story graph: references, reachability, residue, overlays and the codex.
//!
//! Reachability is judged under the codeword gates.

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
        spent: walk.states,
        budget: reach::state_limit(story).saturating_mul(4),
    };
    if walk.complete {
        check_reachability(story, &walk, &mut diags);
        check_overlays(story, &mut queries, &mut diags);
        check_codex_gates(story, &mut queries, &mut diags);
        let unanswered = queries.cache.values().filter(|a| a.is_none()).count();
        if unanswered > 0 {
            diags.push(Diagnostic::new(
                Rule::StateSpaceTooLarge,
                Subject::Story,
                format!(
                    "the story is too large to check exhaustively: {unanswered} question(s) of which codewords can be held together (overlays, codex gates) went past the checker's budget and were not verified"
                ),
            ));
        }
    } else {
        diags.push(Diagnostic::new(
            Rule::StateSpaceTooLarge,
            Subject::Story,
            format!(
                "the story is too large to check exhaustively: the walk over codeword states passed {} states (what {} codewords allow in {} MiB); reachability, dead ends and gates were not verified",
                walk.states,
                story.codeword_count(),
                reach::MEMORY_BUDGET >> 20
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
    /// States walked so far in this validation, and how many it may walk in
    /// all (past that, further questions go unanswered, `None`, and say so).
    spent: usize,
    budget: usize,
}

impl TogetherQueries<'_> {
    fn ask(&mut self, set: &CodewordSet) -> Option<bool> {
        if let Some(&answer) = self.cache.get(set) {
            return answer;
        }
        let left = self.budget.saturating_sub(self.spent);
        let answer = if left == 0 {
            None
        } else {
            let (answer, states) = reach::can_hold_together_within(
                self.story,
                self.live,
                set,
                left.min(reach::state_limit(self.story)),
            );
            self.spent += states;
            answer
        };
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

fn describe_held(story: &Story, held: &CodewordSet) -> String {
    if held.is_empty() {
        "no relevant codewords".to_owned()
    } else {
        ids(story, held)
    }
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
    let granted = story.granted_anywhere();
    let required = story.required_anywhere();
    let mut observed = story.no_codewords();
    let file = story.file();
    let overlays = file
        .entities
        .iter()
        .flat_map(|e| &e.overlays)
        .chain(file.relationships.iter().flat_map(|r| &r.overlays));
    for overlay in overlays {
        if let Some(set) = story.codeword_set(overlay.when.iter().map(String::as_str)) {
            observed.union_with(&set);
        }
    }
    for tier in 0..file.codex.len() {
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

#[expect(
    clippy::indexing_slicing,
    reason = "indices are this story's own, made by its compile"
)]
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
}

fn check_reachability(story: &Story, walk: &Walk, diags: &mut Vec<Diagnostic>) {
    let start_id = &story.passage(story.start()).id;
    let granted_anywhere = story.granted_anywhere();
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
        let holding = describe_held(story, held);
        diags.push(Diagnostic::new(
            Rule::DeadEnd,
            Subject::Passage(story.passage(p).id.clone()),
            format!(
                "a player arriving holding {holding} finds every choice closed, and it is not an ending"
            ),
        ));
    }
    let mut trapped: Vec<(PassageIx, &CodewordSet)> = Vec::new();
    for (p, held) in &walk.trapped {
        if !trapped.iter().any(|(q, _)| q == p) {
            trapped.push((*p, held));
        }
    }
    for (p, held) in trapped {
        diags.push(Diagnostic::new(
            Rule::Trapped,
            Subject::Passage(story.passage(p).id.clone()),
            format!(
                "a player here holding {} can only go round in circles: no route leads on to an ending",
                describe_held(story, held)
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
#[expect(
    clippy::indexing_slicing,
    reason = "indices are this story's own, made by its compile"
)]
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
            if ga != gb && (ga.is_subset(gb) || gb.is_subset(ga)) {
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
                // Resolved on purpose by a compound overlay for exactly both gates.
                let resolved = ga != gb
                    && overlays
                        .iter()
                        .zip(&gates)
                        .any(|(o, g)| g.as_ref() == Some(&both) && o.details.contains_key(key));
                if resolved || queries.ask(&both) != Some(true) {
                    continue;
                }
                let winner = if gb.len() >= ga.len() { b } else { a };
                let whens = if ga == gb {
                    format!("both when {}", ids(story, ga))
                } else {
                    format!("when {} and when {}", ids(story, ga), ids(story, gb))
                };
                diags.push(Diagnostic::new(
                    Rule::OverlayConflict,
                    subject.clone(),
                    format!(
                        "overlays {} and {} ({whens}) can be active together and set `{key}` differently; overlay {} wins. Make the codewords exclusive or add an overlay for both",
                        a + 1,
                        b + 1,
                        winner + 1
                    ),
                ));
            }
        }
    }
}

fn check_overlays(story: &Story, queries: &mut TogetherQueries<'_>, diags: &mut Vec<Diagnostic>) {
    let file = story.file();
    let owners = file
        .entities
        .iter()
        .map(|e| (Subject::Entity(e.id.clone()), &e.overlays))
        .chain(
            file.relationships
                .iter()
                .map(|r| (Subject::Relationship(r.id.clone()), &r.overlays)),
        );
    for (subject, overlays) in owners {
        for (i, overlay) in overlays.iter().enumerate() {
            let Some(gate) = story.codeword_set(overlay.when.iter().map(String::as_str)) else {
                continue;
            };
            if queries.ask(&gate) == Some(false) {
                diags.push(Diagnostic::new(
                    Rule::OverlayNeverApplies,
                    subject.clone(),
                    format!(
                        "overlay {} needs {} together, which no playthrough holds",
                        i + 1,
                        ids(story, &gate)
                    ),
                ));
            }
        }
        overlay_conflicts(story, overlays, &subject, queries, diags);
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::story::diagnostic::Severity;
    use crate::story::testing::{codewords, file, passage, story};

    /// Rule codes and subjects found in a story, for compact assertions.
    fn findings(parts: Value) -> Vec<String> {
        let (_, report) = validate_file(file(parts));
        report
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.rule.code(), d.subject))
            .collect()
    }

    fn has(parts: Value, expected: &str) -> bool {
        let found = findings(parts);
        assert!(
            found.iter().any(|f| f == expected),
            "expected `{expected}` among {found:#?}"
        );
        true
    }

    /// The first diagnostic of `rule`.
    fn first_of(parts: Value, rule: Rule) -> Diagnostic {
        let (_, report) = validate_file(file(parts));
        report
            .diagnostics
            .into_iter()
            .find(|d| d.rule == rule)
            .unwrap_or_else(|| panic!("no {rule:?} finding"))
    }

    fn ending(id: &str) -> Value {
        json!({"id": id, "prose": "The end."})
    }

    #[test]
    fn a_sound_story_has_no_findings() {
        let found = findings(json!({
            "codewords": codewords(&["k"]),
            "passages": [
                passage("a", &[("Take the key", "b", &[], &["k"]), ("Walk past", "b", &[], &[])]),
                passage("b", &[("Unlock the gate", "c", &["k"], &[]), ("Climb the wall", "c", &[], &[])]),
                ending("c"),
            ],
        }));
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn duplicate_ids() {
        assert!(has(
            json!({"passages": [passage("a", &[("Go", "b", &[], &[])]), ending("b"), ending("b")]}),
            "duplicate-id passage `b`"
        ));
    }

    #[test]
    fn choices_to_unknown_passages() {
        assert!(has(
            json!({"passages": [passage("a", &[("Go", "nowhere", &[], &[])])]}),
            "unknown-passage passage `a` choice 1"
        ));
    }

    #[test]
    fn unknown_codewords_in_gates_grants_overlays_and_codex() {
        let parts = json!({
            "passages": [passage("a", &[("Go", "b", &["ghost"], &["phantom"])]), ending("b")],
            "entities": [{"id": "e", "type": "character", "name": "E",
                          "overlays": [{"when": ["spectre"], "details": {"x": "y"}}]}],
            "codex": [{"id": "c1", "entity": "e", "rank": 1, "visible_when": ["wraith"], "content": "."}],
        });
        let found = findings(parts);
        assert_eq!(
            found
                .iter()
                .filter(|f| f.starts_with("unknown-codeword"))
                .count(),
            4,
            "{found:#?}"
        );
        assert!(found.contains(&"unknown-codeword entity `e`".to_owned()));
        assert!(found.contains(&"unknown-codeword codex entry `c1`".to_owned()));
    }

    #[test]
    fn unknown_entities_relationships_and_scenes() {
        let parts = json!({
            "passages": [{
                "id": "a", "prose": "x",
                "appears": [{"entity": "nobody"}],
                "involves": ["no-bond"],
                "scene": "no-scene",
            }],
            "codex": [{"id": "c1", "entity": "nobody", "rank": 1, "content": "."}],
            "relationships": [{"id": "r", "from": "nobody", "to": "noone"}],
            "illustrations": [{"id": "i", "asset": "art/x.png", "caption": "c", "depicts": ["nowhere"]}],
        });
        let found = findings(parts);
        for expected in [
            "unknown-entity passage `a`",
            "unknown-entity codex entry `c1`",
            "unknown-entity relationship `r`",
            "unknown-relationship passage `a`",
            "unknown-scene passage `a`",
            "unknown-passage illustration `i`",
        ] {
            assert!(
                found.contains(&expected.to_owned()),
                "{expected} in {found:#?}"
            );
        }
    }

    #[test]
    fn start_must_exist_and_be_unambiguous() {
        assert!(has(
            json!({"start": "zzz", "passages": [ending("a")]}),
            "no-start story"
        ));
        assert!(has(
            json!({"passages": [passage("a", &[("Go", "b", &[], &[])]), passage("b", &[("Back", "a", &[], &[])])]}),
            "no-start story"
        ));
        assert!(has(
            json!({"passages": [ending("a"), ending("b")]}),
            "ambiguous-start story"
        ));
    }

    #[test]
    fn empty_prose() {
        assert!(has(
            json!({"passages": [{"id": "a", "prose": "  "}]}),
            "empty-prose passage `a`"
        ));
    }

    #[test]
    fn passages_behind_gates_that_never_open_are_unreachable() {
        let parts = json!({
            "start": "a",
            "codewords": codewords(&["k"]),
            "passages": [
                passage("a", &[("Open the vault", "vault", &["k"], &[]), ("Leave", "out", &[], &[])]),
                passage("vault", &[("Take the gold", "out", &[], &["k"])]),
                ending("out"),
                ending("island"),
            ],
        });
        let found = findings(parts.clone());
        assert!(found.contains(&"unreachable-passage passage `vault`".to_owned()));
        assert!(found.contains(&"unreachable-passage passage `island`".to_owned()));
        assert!(found.contains(&"impossible-gate passage `a` choice 1".to_owned()));
        // `k` is granted only inside the vault, which is never reached.
        let gate = first_of(parts, Rule::ImpossibleGate);
        assert!(
            gate.message.contains("no route reaches"),
            "{}",
            gate.message
        );
        assert_eq!(gate.severity, Severity::Error);
    }

    #[test]
    fn gates_on_codewords_nothing_grants_say_so() {
        let gate = first_of(
            json!({
                "codewords": codewords(&["k"]),
                "passages": [
                    passage("a", &[("Open", "b", &["k"], &[]), ("Leave", "b", &[], &[])]),
                    ending("b"),
                ],
            }),
            Rule::ImpossibleGate,
        );
        assert!(
            gate.message.contains("which no choice grants"),
            "{}",
            gate.message
        );
    }

    #[test]
    fn gates_needing_codewords_from_exclusive_branches_are_impossible() {
        assert!(has(
            json!({
                "codewords": codewords(&["x", "y"]),
                "passages": [
                    passage("a", &[("Left", "b", &[], &["x"]), ("Right", "b", &[], &["y"])]),
                    passage("b", &[("Both", "c", &["x", "y"], &[]), ("Either", "c", &[], &[])]),
                    ending("c"),
                ],
            }),
            "impossible-gate passage `b` choice 1"
        ));
    }

    #[test]
    fn dead_ends_depend_on_the_route() {
        // Arriving at b without k leaves no open choice; with k it is fine.
        assert!(has(
            json!({
                "codewords": codewords(&["k"]),
                "passages": [
                    passage("a", &[("Take the key", "b", &[], &["k"]), ("Run", "b", &[], &[])]),
                    passage("b", &[("Unlock", "c", &["k"], &[])]),
                    ending("c"),
                ],
            }),
            "dead-end passage `b`"
        ));
    }

    #[test]
    fn a_loop_without_an_exit_has_no_reachable_ending() {
        let found = findings(json!({
            "start": "a",
            "passages": [passage("a", &[("On", "b", &[], &[])]), passage("b", &[("Round", "a", &[], &[])])],
        }));
        assert!(
            found.contains(&"no-reachable-ending story".to_owned()),
            "{found:#?}"
        );
    }

    #[test]
    fn residue_must_be_read_and_unused_codewords_are_noted() {
        let found = findings(json!({
            "codewords": codewords(&["read", "unread", "idle"]),
            "passages": [
                passage("a", &[("Go", "b", &[], &["read", "unread"])]),
                passage("b", &[("Use it", "c", &["read"], &[]), ("Skip", "c", &[], &[])]),
                ending("c"),
            ],
        }));
        assert_eq!(
            found,
            [
                "residue-never-read codeword `unread`",
                "unused-codeword codeword `idle`"
            ]
        );
    }

    fn overlay_story(branching: bool, overlays: Value) -> Value {
        // With `branching`, x and y are exclusive; otherwise both can be held.
        let first: Vec<(&str, &str, &[&str], &[&str])> = if branching {
            vec![("Left", "b", &[], &["x"]), ("Right", "b", &[], &["y"])]
        } else {
            vec![("Both", "b", &[], &["x", "y"]), ("Neither", "b", &[], &[])]
        };
        json!({
            "codewords": codewords(&["x", "y"]),
            "passages": [
                passage("a", &first),
                passage("b", &[("Use x", "c", &["x"], &[]), ("Use y", "c", &["y"], &[]), ("Go", "c", &[], &[])]),
                {"id": "c", "prose": "End.", "appears": [{"entity": "e"}]},
            ],
            "entities": [{"id": "e", "type": "character", "name": "E", "base": {"mood": "calm"}, "overlays": overlays}],
        })
    }

    #[test]
    fn overlays_that_can_clash_are_warned_about() {
        let clash = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["y"], "details": {"mood": "grim"}},
        ]);
        assert!(has(
            overlay_story(false, clash.clone()),
            "overlay-conflict entity `e`"
        ));
        // Exclusive codewords cannot both be held: no conflict.
        assert!(findings(overlay_story(true, clash)).is_empty());
        // A compound overlay for both resolves it.
        let resolved = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["y"], "details": {"mood": "grim"}},
            {"when": ["x", "y"], "details": {"mood": "torn"}},
        ]);
        assert!(findings(overlay_story(false, resolved)).is_empty());
        // A refinement ([x] then [x, y]) is intended, as is agreeing on a value.
        let refine = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["x", "y"], "details": {"mood": "torn"}},
        ]);
        assert!(findings(overlay_story(false, refine)).is_empty());
        let agree = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["y"], "details": {"mood": "glad"}},
        ]);
        assert!(findings(overlay_story(false, agree)).is_empty());
    }

    #[test]
    fn codex_tiers_that_can_never_unlock() {
        let mut parts = overlay_story(true, json!([]));
        parts["codex"] = json!([
            {"id": "e-1", "entity": "e", "rank": 1, "content": "."},
            {"id": "e-2", "entity": "e", "rank": 2, "visible_when": ["x"], "content": "."},
            {"id": "e-3", "entity": "e", "rank": 3, "visible_when": ["x", "y"], "content": "."},
        ]);
        assert_eq!(findings(parts), ["codex-never-visible codex entry `e-3`"]);
    }

    #[test]
    fn orphan_entities() {
        let found = findings(json!({
            "passages": [ending("a")],
            "entities": [
                {"id": "e", "type": "character", "name": "E"},
                {"id": "lonely", "type": "object", "name": "L"},
            ],
            "codex": [{"id": "e-1", "entity": "e", "rank": 1, "content": "."}],
        }));
        assert_eq!(found, ["orphan-entity entity `lonely`"]);
    }

    #[test]
    fn loops_without_a_way_out_trap_the_player() {
        // Without k, a and b only lead to each other; the exit needs k.
        let found = findings(json!({
            "start": "s",
            "codewords": codewords(&["k"]),
            "passages": [
                passage("s", &[("Take the lamp", "a", &[], &["k"]), ("Go in the dark", "a", &[], &[])]),
                passage("a", &[("Down the stair", "b", &[], &[])]),
                passage("b", &[("Up the stair", "a", &[], &[]), ("Light the way out", "out", &["k"], &[])]),
                ending("out"),
            ],
        }));
        assert_eq!(
            found,
            ["trapped passage `a`", "trapped passage `b`"],
            "{found:#?}"
        );
    }

    #[test]
    fn overlays_with_the_same_gate_that_disagree_clash() {
        let same = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["x"], "details": {"mood": "grim"}},
        ]);
        assert!(has(
            overlay_story(true, same),
            "overlay-conflict entity `e`"
        ));
    }

    #[test]
    fn a_wider_compound_overlay_does_not_resolve_a_clash() {
        let wider = json!([
            {"when": ["x"], "details": {"mood": "glad"}},
            {"when": ["y"], "details": {"mood": "grim"}},
            {"when": ["x", "y", "z"], "details": {"mood": "torn"}},
        ]);
        let mut parts = overlay_story(false, wider);
        parts["codewords"] = codewords(&["x", "y", "z"]);
        parts["passages"][1]["choices"][2]["grants"] = json!(["z"]);
        parts["passages"][1]["choices"][2]["to"] = json!("c");
        let found = findings(parts);
        assert!(
            found.contains(&"overlay-conflict entity `e`".to_owned()),
            "{found:#?}"
        );
    }

    #[test]
    fn overlays_that_can_never_apply() {
        let never = json!([{"when": ["x", "y"], "details": {"mood": "torn"}}]);
        assert_eq!(
            findings(overlay_story(true, never)),
            ["overlay-never-applies entity `e`"]
        );
    }

    #[test]
    fn relationship_overlays_resolve_and_clash_like_entities() {
        let mut parts = overlay_story(false, json!([]));
        parts["entities"] = json!([
            {"id": "e", "type": "character", "name": "E"},
            {"id": "f", "type": "character", "name": "F"},
        ]);
        parts["relationships"] = json!([{
            "id": "bond", "from_entity": "e", "to_entity": "f",
            "base": {"nature": "strangers"},
            "overlays": [
                {"when": ["x"], "details": {"nature": "friends"}},
                {"when": ["y"], "details": {"nature": "rivals"}},
            ],
        }]);
        parts["passages"][2]["involves"] = json!(["bond"]);
        assert_eq!(
            findings(parts.clone()),
            ["overlay-conflict relationship `bond`"]
        );
        let s = story(parts);
        let held = s.codeword_set(["x"]).unwrap();
        assert_eq!(s.relationship_state(0, &held)["nature"], "friends");
        let held = s.codeword_set(["x", "y"]).unwrap();
        assert_eq!(s.relationship_state(0, &held)["nature"], "rivals");
    }

    #[test]
    fn interface_labels_are_not_diegetic() {
        assert!(has(
            json!({"passages": [passage("a", &[("Continue...", "b", &[], &[])]), ending("b")]}),
            "non-diegetic-label passage `a` choice 1"
        ));
    }

    #[test]
    fn the_walk_gives_up_past_its_limit_and_says_so() {
        let s = story(json!({
            "codewords": codewords(&["x"]),
            "passages": [
                passage("a", &[("Go", "b", &[], &["x"]), ("Stay", "b", &[], &[])]),
                passage("b", &[("On", "c", &["x"], &[]), ("Off", "c", &[], &[])]),
                ending("c"),
            ],
        }));
        let live = reach::live_codewords(&s);
        let walk = reach::walk_limited(&s, &live, None, 2);
        assert!(!walk.complete);
        assert!(reach::walk_limited(&s, &live, None, 100).complete);
    }

    #[test]
    fn errors_come_before_warnings() {
        let (_, report) = validate_file(file(json!({
            "start": "a",
            "codewords": codewords(&["unread"]),
            "passages": [passage("a", &[("Go", "b", &[], &["unread"])]), ending("b"), ending("island")],
        })));
        let severities: Vec<Severity> = report.diagnostics.iter().map(|d| d.severity).collect();
        let mut sorted = severities.clone();
        sorted.sort();
        assert_eq!(severities, sorted);
        assert_eq!(
            (report.errors(), report.warnings()),
            (1, 1),
            "{:#?}",
            report.diagnostics
        );
    }
}
