//! GROW's deterministic core (seed 000 "Stage 4"), plain data in and out, no model and no database: one global weave of the beats by topological sort, arcs from the explored paths (spine from canonical answers), worlds split per convergence policy, passages 1:1 from beats within a world, codewords from consequences granted at commits, choice edges from comparing arc sequences, and the "residue must be read" pruning.

use std::collections::{BTreeMap, BTreeSet};

use super::graph::topological;

/// How a dilemma's branches may come back together (seed 000 topology layer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Policy {
    /// Same structure, different colour: converge at once.
    Flavor,
    /// Converge after `payoff_budget` beats of their own.
    #[default]
    Soft,
    /// Never converge.
    Hard,
}

impl Policy {
    pub fn parse(s: &str) -> Self {
        match s {
            "hard" => Policy::Hard,
            "flavor" => Policy::Flavor,
            _ => Policy::Soft,
        }
    }
}

/// How much the shared passages after branches come back together show a
/// dilemma's choice (seed 000 prose layer, `residue_weight`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Residue {
    /// They must: the passage where they come back is split per answer.
    Heavy,
    /// They may.
    #[default]
    Light,
    /// They must not.
    Cosmetic,
}

impl Residue {
    pub fn parse(s: &str) -> Self {
        match s {
            "heavy" => Residue::Heavy,
            "cosmetic" => Residue::Cosmetic,
            _ => Residue::Light,
        }
    }
}

/// How much the endings differ by a dilemma's choice (seed 000 prose layer,
/// `ending_salience`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Salience {
    /// They must: every ending is split per answer (ending families).
    High,
    /// They may.
    #[default]
    Low,
    /// They must not.
    None,
}

impl Salience {
    pub fn parse(s: &str) -> Self {
        match s {
            "high" => Salience::High,
            "none" => Salience::None,
            _ => Salience::Low,
        }
    }
}

/// A beat as GROW reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Beat {
    pub id: String,
    /// The paths it serves.
    pub paths: Vec<String>,
    pub summary: String,
    pub entities: Vec<String>,
    pub location: Option<String>,
    /// Other places the same action could happen.
    pub alternatives: Vec<String>,
    /// The dilemmas this beat commits (an impact with effect `commits`).
    pub commits: Vec<String>,
    /// Made by GROW to fill a gap (never part of an intersection).
    pub is_gap: bool,
}

/// A path as GROW reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path {
    pub id: String,
    pub dilemma: String,
    pub answer: String,
    pub canonical: bool,
    /// Consequence ids, in order.
    pub consequences: Vec<String>,
}

/// A dilemma's convergence contract (topology and prose layers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dilemma {
    pub id: String,
    pub policy: Policy,
    pub payoff_budget: usize,
    pub residue: Residue,
    pub ending: Salience,
}

/// What SEED left: beats (in SEED's order), paths, dilemmas, and the
/// `sequenced_after` pairs `(after, before)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seeded {
    pub beats: Vec<Beat>,
    pub paths: Vec<Path>,
    pub dilemmas: Vec<Dilemma>,
    pub order: Vec<(String, String)>,
}

/// An arc: one explored path per dilemma, woven.
#[derive(Clone, Debug, PartialEq)]
pub struct Arc {
    pub id: String,
    pub spine: bool,
    pub paths: Vec<String>,
    /// Beat ids in story order.
    pub sequence: Vec<String>,
    /// Passage ids in story order (the beats, each in this arc's world).
    pub passages: Vec<String>,
    /// The last passage shared with the spine before it parts, if any.
    pub diverges_at: Option<String>,
    /// The passage from which the rest is the spine's, if it comes back.
    pub converges_at: Option<String>,
}

/// A passage made from a beat in one world.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    pub id: String,
    /// The primary beat (the first, for a merged passage).
    pub beat: String,
    /// The hard (or not yet converged) choices that set this passage apart: answer ids.
    pub world: Vec<String>,
    /// Answers this passage was split by after its branches came back
    /// together (seed 000 variant routing: heavy residue, high ending salience).
    pub routed: Vec<String>,
    /// For a passage merged from a linear run: every beat, in order, and the
    /// passages it was merged from (empty for a single-beat passage).
    pub beats: Vec<String>,
    pub merged_from: Vec<String>,
}

impl Passage {
    /// Its beats in order (one, unless merged).
    pub fn all_beats(&self) -> Vec<String> {
        if self.beats.is_empty() {
            vec![self.beat.clone()]
        } else {
            self.beats.clone()
        }
    }
}

/// A codeword tracking a consequence (or, for a path without any, the path).
#[derive(Clone, Debug, PartialEq)]
pub struct Codeword {
    pub id: String,
    pub tracks: Option<String>,
    pub path: String,
    /// The beats whose completion grants it.
    pub granted_by: Vec<String>,
}

/// A Choice edge between passages (its label comes later).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub from: String,
    pub to: String,
    pub requires: Vec<String>,
    pub grants: Vec<String>,
}

/// GROW's deterministic result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Grown {
    /// Every beat, in one order respecting every `sequenced_after`.
    pub weave: Vec<String>,
    pub arcs: Vec<Arc>,
    pub passages: Vec<Passage>,
    pub codewords: Vec<Codeword>,
    pub choices: Vec<Choice>,
    /// The passage every arc starts from.
    pub start: String,
    /// Passages no choice leaves.
    pub endings: Vec<String>,
    /// Codewords granted but never read, removed ("residue must be read").
    pub unread: Vec<String>,
    /// What the engine decided that the author should know.
    pub notes: Vec<String>,
}

/// Why GROW's deterministic core cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrowError {
    #[error("`sequenced_after` has a cycle through `{0}`")]
    Cycle(String),
    #[error(
        "{0} arcs from the explored paths (at most {MAX_ARCS}); explore fewer non-canonical answers in SEED"
    )]
    TooManyArcs(usize),
    #[error("path `{0}` has no beats")]
    EmptyPath(String),
    #[error(
        "arc `{arc}` starts at `{first}`, the spine at `{spine}`: every arc must open on the same beat (give them a shared opening beat in SEED)"
    )]
    ManyStarts {
        arc: String,
        first: String,
        spine: String,
    },
    #[error("the spine has no beats")]
    NoBeats,
    #[error(
        "arc `{arc}` cannot go from `{from}` to `{to}` with the codewords it holds there (variant routing is not collectively exhaustive)"
    )]
    Uncovered {
        arc: String,
        from: String,
        to: String,
    },
}

/// The most arcs GROW weaves.
pub const MAX_ARCS: usize = 64;

/// Runs GROW's deterministic phases on what SEED left.
pub fn grow(seeded: &Seeded) -> Result<Grown, GrowError> {
    let mut notes = Vec::new();
    let beats: BTreeMap<&str, &Beat> = seeded.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let ids: Vec<String> = seeded.beats.iter().map(|b| b.id.clone()).collect();
    if let Some(on_cycle) = super::graph::cycle_member(&seeded.order) {
        return Err(GrowError::Cycle(on_cycle));
    }
    let weave = topological(&ids, &seeded.order);

    // Paths by dilemma, canonical first.
    let path_of: BTreeMap<&str, &Path> = seeded.paths.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut by_dilemma: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
    for p in &seeded.paths {
        by_dilemma.entry(p.dilemma.as_str()).or_default().push(p);
    }
    for list in by_dilemma.values_mut() {
        list.sort_by_key(|p| (!p.canonical, p.id.clone()));
    }
    for p in &seeded.paths {
        if !seeded.beats.iter().any(|b| b.paths.contains(&p.id)) {
            return Err(GrowError::EmptyPath(p.id.clone()));
        }
    }
    // Each dilemma's contract: convergence policy and budget, residue, endings.
    let contract: BTreeMap<&str, &Dilemma> =
        seeded.dilemmas.iter().map(|d| (d.id.as_str(), d)).collect();
    let count: usize = by_dilemma.values().map(Vec::len).product();
    if count > MAX_ARCS {
        return Err(GrowError::TooManyArcs(count));
    }

    // Arcs: the Cartesian product of one explored path per dilemma.
    let mut combos: Vec<Vec<&Path>> = vec![Vec::new()];
    for list in by_dilemma.values() {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                list.iter().map(move |p| {
                    let mut c = c.clone();
                    c.push(p);
                    c
                })
            })
            .collect();
    }
    // A beat is on an arc when, for every dilemma its paths touch, the
    // arc's path for that dilemma is one of them.
    let on_arc = |beat: &Beat, arc: &[&Path]| {
        let touched: BTreeSet<&str> = beat
            .paths
            .iter()
            .filter_map(|p| path_of.get(p.as_str()).map(|p| p.dilemma.as_str()))
            .collect();
        !touched.is_empty()
            && touched.iter().all(|d| {
                arc.iter()
                    .find(|p| p.dilemma == *d)
                    .is_some_and(|p| beat.paths.contains(&p.id))
            })
    };
    // Which of a dilemma's explored paths a beat serves: all of them (shared) or some.
    let exclusive_to = |beat: &Beat, dilemma: &str| {
        let theirs = &by_dilemma[dilemma];
        let serves = theirs.iter().filter(|p| beat.paths.contains(&p.id)).count();
        serves > 0 && serves < theirs.len()
    };

    // Where in the weave each dilemma's last beat of a branch's own lies.
    let at: BTreeMap<&str, usize> = weave
        .iter()
        .enumerate()
        .map(|(i, b)| (b.as_str(), i))
        .collect();
    let mut last_own: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in weave.iter().enumerate() {
        for d in by_dilemma.keys() {
            if exclusive_to(beats[b.as_str()], d) {
                last_own.insert(d, i);
            }
        }
    }
    // Variant routing needs something that tells the answers apart: a
    // dilemma is routable when each explored answer has a beat of its own
    // (where its codewords are granted).
    let routable: BTreeSet<&str> = by_dilemma
        .iter()
        .filter(|(d, list)| {
            list.len() > 1
                && list.iter().all(|p| {
                    seeded
                        .beats
                        .iter()
                        .any(|b| b.paths.contains(&p.id) && exclusive_to(b, d))
                })
        })
        .map(|(d, _)| *d)
        .collect();
    let mut arcs: Vec<Arc> = Vec::new();
    let mut passages: BTreeMap<String, Passage> = BTreeMap::new();
    for combo in &combos {
        let sequence: Vec<String> = weave
            .iter()
            .filter(|b| on_arc(beats[b.as_str()], combo))
            .cloned()
            .collect();
        // The world of each beat: the choices this arc made that have not
        // (yet) come back together with the other branches.
        let mut committed: BTreeMap<&str, usize> = BTreeMap::new(); // dilemma → own beats since commit
        let mut converged: BTreeSet<&str> = BTreeSet::new();
        let mut passage_ids = Vec::new();
        for (at_beat, b) in sequence.iter().enumerate() {
            let beat = beats[b.as_str()];
            let mut landed: Vec<&str> = Vec::new();
            for (d, seen) in &mut committed {
                if exclusive_to(beat, d) {
                    *seen += 1;
                }
            }
            // A branch comes back only where no branch of its dilemma has
            // anything of its own left in the weave (so what follows is the
            // same whichever answer was chosen): at once for flavor, after
            // `payoff_budget` beats of its own for soft, never for hard.
            for (d, seen) in &committed {
                let (pol, budget) = contract
                    .get(d)
                    .map_or((Policy::Soft, 2), |c| (c.policy, c.payoff_budget.max(1)));
                let rest_shared = last_own.get(d).is_none_or(|last| at[b.as_str()] > *last);
                let together = match pol {
                    Policy::Flavor => rest_shared,
                    Policy::Soft => *seen >= budget && rest_shared,
                    Policy::Hard => false,
                };
                if together && converged.insert(d) {
                    landed.push(d);
                }
            }
            let world: Vec<String> = combo
                .iter()
                .filter(|p| committed.contains_key(p.dilemma.as_str()))
                .filter(|p| !converged.contains(p.dilemma.as_str()))
                .filter(|p| by_dilemma[p.dilemma.as_str()].len() > 1)
                .filter(|p| !beat.paths.contains(&p.id) || !exclusive_to(beat, &p.dilemma))
                .map(|p| p.answer.clone())
                .collect();
            // Seed 000 `split_and_reroute`: where a heavy-residue dilemma's
            // branches come back together, and at every ending of a
            // high-salience one, the passage is one per answer; the arcs
            // arriving there are routed to theirs (gated where they arrive
            // from a passage they share, by the codewords of their answer).
            let last = at_beat + 1 == sequence.len();
            let routed: Vec<String> = combo
                .iter()
                .filter(|p| {
                    let d = p.dilemma.as_str();
                    routable.contains(d)
                        && converged.contains(d)
                        && contract.get(d).is_some_and(|info| {
                            (info.residue == Residue::Heavy && landed.contains(&d))
                                || (last && info.ending == Salience::High)
                        })
                })
                .map(|p| p.answer.clone())
                .collect();
            let name = b.strip_prefix("beat::").unwrap_or(b);
            let tags: Vec<&String> = world.iter().chain(&routed).collect();
            let id = if tags.is_empty() {
                format!("passage::{name}")
            } else {
                format!(
                    "passage::{name}--{}",
                    tags.iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join("--")
                )
            };
            passages.entry(id.clone()).or_insert_with(|| Passage {
                id: id.clone(),
                beat: b.clone(),
                world,
                routed,
                beats: Vec::new(),
                merged_from: Vec::new(),
            });
            passage_ids.push(id);
            for d in &beat.commits {
                if by_dilemma.contains_key(d.as_str()) && !committed.contains_key(d.as_str()) {
                    let d = by_dilemma
                        .get_key_value(d.as_str())
                        .map(|(k, _)| *k)
                        .unwrap_or_default();
                    committed.insert(d, 1);
                }
            }
        }
        let spine = combo.iter().all(|p| p.canonical);
        let paths: Vec<String> = combo.iter().map(|p| p.id.clone()).collect();
        let id = if spine {
            "arc::spine".to_owned()
        } else {
            format!(
                "arc::{}",
                combo
                    .iter()
                    .filter(|p| !p.canonical)
                    .map(|p| p.answer.as_str())
                    .collect::<Vec<_>>()
                    .join("+")
            )
        };
        arcs.push(Arc {
            id,
            spine,
            paths,
            sequence,
            passages: passage_ids,
            diverges_at: None,
            converges_at: None,
        });
    }
    arcs.sort_by_key(|a| (!a.spine, a.id.clone()));
    let spine = arcs.first().cloned().ok_or(GrowError::NoBeats)?;
    let start = spine.passages.first().cloned().ok_or(GrowError::NoBeats)?;
    for arc in &mut arcs {
        if arc.passages.first() != Some(&start) {
            return Err(GrowError::ManyStarts {
                arc: arc.id.clone(),
                first: arc.sequence.first().cloned().unwrap_or_default(),
                spine: spine.sequence.first().cloned().unwrap_or_default(),
            });
        }
        if arc.spine {
            continue;
        }
        let common = arc
            .passages
            .iter()
            .zip(&spine.passages)
            .take_while(|(a, b)| a == b)
            .count();
        arc.diverges_at = arc.passages.get(common.saturating_sub(1)).cloned();
        // The first passage from which the rest is the spine's rest (a
        // passage split by variant routing is still the same place in the
        // structure: its variants differ in what the prose shows).
        let shape = |ids: &[String]| -> Vec<(String, Vec<String>)> {
            ids.iter()
                .map(|id| (passages[id].beat.clone(), passages[id].world.clone()))
                .collect()
        };
        let (mine, theirs) = (shape(&arc.passages), shape(&spine.passages));
        arc.converges_at = (common..arc.passages.len())
            .find(|&i| {
                let rest = &mine[i..];
                theirs.len() >= rest.len() && theirs[theirs.len() - rest.len()..] == *rest
            })
            .map(|i| arc.passages[i].clone());
    }

    // Codewords: per consequence of a path whose dilemma has a branch,
    // granted by the beats that commit that dilemma on that path only.
    let mut codewords = Vec::new();
    for (d, list) in &by_dilemma {
        if list.len() < 2 {
            continue;
        }
        for p in list {
            let granted_by: Vec<String> = weave
                .iter()
                .filter(|b| {
                    let beat = beats[b.as_str()];
                    beat.commits.iter().any(|c| c == d)
                        && beat.paths.contains(&p.id)
                        && exclusive_to(beat, d)
                })
                .cloned()
                .collect();
            let granted_by = if granted_by.is_empty() {
                // No beat of its own commits it: the first beat of its own does.
                let first: Vec<String> = weave
                    .iter()
                    .filter(|b| {
                        let beat = beats[b.as_str()];
                        beat.paths.contains(&p.id) && exclusive_to(beat, d)
                    })
                    .take(1)
                    .cloned()
                    .collect();
                if first.is_empty() {
                    notes.push(format!(
                        "`{}` has no beat of its own: nothing tells it apart from the other answer",
                        p.id
                    ));
                    continue;
                }
                notes.push(format!(
                    "`{}` commits on a shared beat; its codewords are granted at its first own beat `{}`",
                    p.id, first[0]
                ));
                first
            } else {
                granted_by
            };
            if p.consequences.is_empty() {
                codewords.push(Codeword {
                    id: p.id.trim_start_matches("path::").to_owned(),
                    tracks: None,
                    path: p.id.clone(),
                    granted_by,
                });
            } else {
                for c in &p.consequences {
                    codewords.push(Codeword {
                        id: c.trim_start_matches("consequence::").to_owned(),
                        tracks: Some(c.clone()),
                        path: p.id.clone(),
                        granted_by: granted_by.clone(),
                    });
                }
            }
        }
    }
    let grants_of = |beat: &str| -> Vec<String> {
        codewords
            .iter()
            .filter(|c| c.granted_by.iter().any(|b| b == beat))
            .map(|c| c.id.clone())
            .collect()
    };

    // Choices: consecutive passages of every arc; where arcs part, each
    // way is gated by the codewords all its arcs hold and not all hold.
    // From passage → to passage → what each arc taking that step holds.
    let mut ways: BTreeMap<String, BTreeMap<String, Vec<BTreeSet<String>>>> = BTreeMap::new();
    for arc in &arcs {
        let mut held = BTreeSet::new();
        for (i, pair) in arc.passages.windows(2).enumerate() {
            held.extend(grants_of(&arc.sequence[i]));
            ways.entry(pair[0].clone())
                .or_default()
                .entry(pair[1].clone())
                .or_default()
                .push(held.clone());
        }
    }
    let mut choices = Vec::new();
    for (from, targets) in &ways {
        let all: Vec<&BTreeSet<String>> = targets.values().flatten().collect();
        let everyone = intersect(all.iter().copied());
        for (to, steps) in targets {
            let requires: Vec<String> = if targets.len() == 1 {
                Vec::new()
            } else {
                intersect(steps.iter())
                    .difference(&everyone)
                    .cloned()
                    .collect()
            };
            let beat = &passages[to].beat;
            choices.push(Choice {
                from: from.clone(),
                to: to.clone(),
                requires,
                grants: grants_of(beat),
            });
        }
    }

    let (passages, mut choices) = collapse(passages, choices, &mut arcs, &beats, MAX_RUN);

    // Residue must be read: a codeword no gate reads is removed.
    let read: BTreeSet<String> = choices
        .iter()
        .flat_map(|c| c.requires.iter().cloned())
        .collect();
    let unread: Vec<String> = codewords
        .iter()
        .filter(|c| !read.contains(&c.id))
        .map(|c| c.id.clone())
        .collect();
    codewords.retain(|c| read.contains(&c.id));
    for c in &mut choices {
        c.grants.retain(|g| read.contains(g));
    }
    check_routing(&arcs, &passages, &choices, &mut notes)?;
    let leaving: BTreeSet<&String> = choices.iter().map(|c| &c.from).collect();
    let endings: Vec<String> = passages
        .keys()
        .filter(|p| !leaving.contains(p))
        .cloned()
        .collect();
    let unused: Vec<&String> = ids
        .iter()
        .filter(|b| !arcs.iter().any(|a| a.sequence.contains(b)))
        .collect();
    if !unused.is_empty() {
        notes.push(format!(
            "beats on no arc (their paths never meet on one): {}",
            unused
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Grown {
        weave,
        arcs,
        passages: passages.into_values().collect(),
        codewords,
        choices,
        start,
        endings,
        unread,
        notes,
    })
}

/// Seed 000 `check_routing_coverage`, on every step of every arc: the arc
/// can take it with the codewords its earlier choices granted (collectively
/// exhaustive: an error, GROW would ship a dead end), and no other variant
/// of the passage it goes to is open to it (mutually exclusive: said in the
/// notes, the player could pick a world that is not theirs).
fn check_routing(
    arcs: &[Arc],
    passages: &BTreeMap<String, Passage>,
    choices: &[Choice],
    notes: &mut Vec<String>,
) -> Result<(), GrowError> {
    let mut leaving: BTreeMap<&str, Vec<&Choice>> = BTreeMap::new();
    for c in choices {
        leaving.entry(c.from.as_str()).or_default().push(c);
    }
    let none = Vec::new();
    let mut overlapping = BTreeSet::new();
    for arc in arcs {
        let mut held: BTreeSet<&String> = BTreeSet::new();
        for pair in arc.passages.windows(2) {
            let here = leaving.get(pair[0].as_str()).unwrap_or(&none);
            let open = |c: &Choice| c.requires.iter().all(|r| held.contains(r));
            let step = here
                .iter()
                .find(|c| c.to == pair[1])
                .filter(|c| open(c))
                .ok_or_else(|| GrowError::Uncovered {
                    arc: arc.id.clone(),
                    from: pair[0].clone(),
                    to: pair[1].clone(),
                })?;
            let beat = &passages[&pair[1]].beat;
            for rival in here
                .iter()
                .filter(|c| open(c) && c.to != pair[1] && &passages[&c.to].beat == beat)
            {
                overlapping.insert((pair[1].clone(), rival.to.clone()));
            }
            held.extend(&step.grants);
        }
    }
    for (mine, rival) in overlapping {
        notes.push(format!(
            "a player on the way to `{mine}` may also open `{rival}` (nothing they hold tells the two apart)"
        ));
    }
    Ok(())
}

/// A pair of beats that could be one scene (seed 000 "Intersection
/// Operations", merge): from different dilemmas, neither a gap beat, each
/// serving every explored answer of its own dilemmas (so the merged beat
/// lies on exactly the arcs both did: no path is infected), neither ordered
/// before the other, sharing an entity or a place (a location or an
/// alternative). The model only picks among these.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub a: String,
    pub b: String,
    /// The place the scene would be at, if they share one.
    pub place: Option<String>,
    /// The entities both have.
    pub shared: Vec<String>,
}

/// Every intersection candidate, in the weave's order.
pub fn intersection_candidates(seeded: &Seeded) -> Vec<Candidate> {
    let dilemma_of: BTreeMap<&str, &str> = seeded
        .paths
        .iter()
        .map(|p| (p.id.as_str(), p.dilemma.as_str()))
        .collect();
    let explored = |d: &str| seeded.paths.iter().filter(|p| p.dilemma == d).count();
    let dilemmas = |b: &Beat| -> BTreeSet<String> {
        b.paths
            .iter()
            .filter_map(|p| dilemma_of.get(p.as_str()).map(|d| (*d).to_owned()))
            .collect()
    };
    // Serves every explored answer of each dilemma it touches.
    let neutral = |b: &Beat| {
        dilemmas(b).iter().all(|d| {
            b.paths
                .iter()
                .filter(|p| dilemma_of.get(p.as_str()) == Some(&d.as_str()))
                .count()
                == explored(d)
        })
    };
    // What each beat must come after, directly or not.
    let mut before: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let ids: Vec<String> = seeded.beats.iter().map(|b| b.id.clone()).collect();
    for id in topological(&ids, &seeded.order) {
        let mut all = BTreeSet::new();
        for (after, earlier) in &seeded.order {
            if *after == id {
                all.insert(earlier.as_str());
                all.extend(before.get(earlier.as_str()).cloned().unwrap_or_default());
            }
        }
        let key = ids.iter().find(|x| **x == id).map_or("", String::as_str);
        before.insert(key, all);
    }
    let ordered = |a: &str, b: &str| {
        before.get(a).is_some_and(|s| s.contains(b)) || before.get(b).is_some_and(|s| s.contains(a))
    };
    let eligible: Vec<&Beat> = seeded
        .beats
        .iter()
        .filter(|b| !b.is_gap && !b.paths.is_empty() && neutral(b))
        .collect();
    let mut out = Vec::new();
    for (i, a) in eligible.iter().enumerate() {
        for b in &eligible[i + 1..] {
            if !dilemmas(a).is_disjoint(&dilemmas(b)) || ordered(&a.id, &b.id) {
                continue;
            }
            let places_a: Vec<&String> = a.location.iter().chain(&a.alternatives).collect();
            let places_b: Vec<&String> = b.location.iter().chain(&b.alternatives).collect();
            let place = if a.location.is_some() && a.location == b.location {
                a.location.clone()
            } else {
                places_a
                    .iter()
                    .find(|p| places_b.contains(p))
                    .map(|p| (*p).clone())
            };
            let shared: Vec<String> = a
                .entities
                .iter()
                .filter(|e| b.entities.contains(e))
                .cloned()
                .collect();
            if place.is_some() || !shared.is_empty() {
                out.push(Candidate {
                    a: a.id.clone(),
                    b: b.id.clone(),
                    place,
                    shared,
                });
            }
        }
    }
    out
}

/// The most beats one merged passage holds.
pub const MAX_RUN: usize = 4;

/// Seed 000 Phase 9d: linear runs collapse into one passage. A passage whose
/// only way on is an ungated choice that grants nothing, into a passage
/// nothing else leads to, at the same place, absorbs it (up to `max_run`
/// beats); the merged passage keeps the first passage's id and every beat.
fn collapse(
    mut passages: BTreeMap<String, Passage>,
    choices: Vec<Choice>,
    arcs: &mut [Arc],
    beats: &BTreeMap<&str, &Beat>,
    max_run: usize,
) -> (BTreeMap<String, Passage>, Vec<Choice>) {
    let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut into: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in choices.iter().enumerate() {
        out.entry(c.from.as_str()).or_default().push(i);
        *into.entry(c.to.as_str()).or_default() += 1;
    }
    // A link that may merge: neither end has another way in or out, and
    // nothing is gated or granted on it, at one place. Merging never
    // changes these facts for other links, so they are found once.
    let location = |p: &str| beats[passages[p].beat.as_str()].location.clone();
    let next: BTreeMap<String, (usize, String)> = choices
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            out[c.from.as_str()].len() == 1
                && into.get(c.to.as_str()) == Some(&1)
                && c.requires.is_empty()
                && c.grants.is_empty()
                && c.from != c.to
                && location(&c.from) == location(&c.to)
        })
        .map(|(i, c)| (c.from.clone(), (i, c.to.clone())))
        .collect();
    let tails: BTreeSet<&String> = next.values().map(|(_, to)| to).collect();
    let mut merged_into: BTreeMap<String, String> = BTreeMap::new();
    let mut folds: Vec<(String, String)> = Vec::new(); // (tail, head), in chain order
    let mut dropped: BTreeSet<usize> = BTreeSet::new();
    // Walk each chain from a passage no mergeable link enters, `max_run` beats a passage.
    let heads: Vec<String> = next
        .keys()
        .filter(|p| !tails.contains(p))
        .cloned()
        .collect();
    for first in heads {
        let mut head = first;
        let mut at = head.clone();
        let mut run = vec![head.clone()];
        while let Some((link, to)) = next.get(&at) {
            if run.len() < max_run {
                dropped.insert(*link);
                merged_into.insert(to.clone(), head.clone());
                folds.push((to.clone(), head.clone()));
                run.push(to.clone());
            } else {
                head.clone_from(to);
                run = vec![head.clone()];
            }
            at.clone_from(to);
        }
    }
    // Fold each tail into its head, in chain order.
    for (tail_id, head_id) in &folds {
        let tail = passages.remove(tail_id).expect("chains join passages");
        let head = passages.get_mut(head_id).expect("chains join passages");
        if head.beats.is_empty() {
            head.beats.push(head.beat.clone());
            head.merged_from.push(head.id.clone());
        }
        head.beats.push(tail.beat.clone());
        head.merged_from.push(tail.id.clone());
        for answer in tail.routed {
            if !head.routed.contains(&answer) {
                head.routed.push(answer);
            }
        }
    }
    let choices: Vec<Choice> = choices
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(_, mut c)| {
            if let Some(head) = merged_into.get(&c.from) {
                c.from.clone_from(head);
            }
            c
        })
        .collect();
    for arc in arcs.iter_mut() {
        arc.passages.retain(|p| !merged_into.contains_key(p));
        for at in [&mut arc.diverges_at, &mut arc.converges_at] {
            if let Some(head) = at.as_ref().and_then(|p| merged_into.get(p)) {
                *at = Some(head.clone());
            }
        }
    }
    (passages, choices)
}

fn intersect<'a>(mut sets: impl Iterator<Item = &'a BTreeSet<String>>) -> BTreeSet<String> {
    let Some(first) = sets.next() else {
        return BTreeSet::new();
    };
    sets.fold(first.clone(), |acc, s| {
        acc.intersection(s).cloned().collect()
    })
}

/// A diegetic label for the way to a passage, from its beat's summary: its
/// first sentence, without the full stop, at most 80 characters.
pub fn label_from(summary: &str) -> String {
    let first = summary
        .split_inclusive(['.', '!', '?'])
        .next()
        .unwrap_or(summary)
        .trim()
        .trim_end_matches('.')
        .trim();
    let mut label: String = first.chars().take(80).collect();
    if first.chars().count() > 80 {
        if let Some(cut) = label.rfind(' ') {
            label.truncate(cut);
        }
        label.push('…');
    }
    if label.is_empty() {
        "Go on".to_owned()
    } else {
        label
    }
}

/// The grown topology as a story file (summaries as prose, labels from
/// summaries): what the player's validation reads, without a graph.
pub fn to_story(grown: &Grown, seeded: &Seeded) -> crate::story::model::StoryFile {
    use crate::story::model as m;
    let beats: BTreeMap<&str, &Beat> = seeded.beats.iter().map(|b| (b.id.as_str(), b)).collect();
    let passages = grown
        .passages
        .iter()
        .map(|p| m::Passage {
            id: p.id.clone(),
            prose: p
                .all_beats()
                .iter()
                .map(|b| beats[b.as_str()].summary.as_str())
                .collect::<Vec<_>>()
                .join("\n\n"),
            choices: grown
                .choices
                .iter()
                .filter(|c| c.from == p.id)
                .map(|c| {
                    let to = grown
                        .passages
                        .iter()
                        .find(|q| q.id == c.to)
                        .map_or("", |q| q.beat.as_str());
                    m::Choice {
                        label: label_from(&beats[to].summary),
                        to: c.to.clone(),
                        requires: c.requires.clone(),
                        grants: c.grants.clone(),
                    }
                })
                .collect(),
            ..m::Passage::default()
        })
        .collect();
    m::StoryFile {
        format: m::STORY_FORMAT.to_owned(),
        version: m::STORY_FORMAT_VERSION,
        meta: m::StoryMeta {
            id: "grown".into(),
            title: "Grown".into(),
            ..m::StoryMeta::default()
        },
        start: Some(grown.start.clone()),
        passages,
        codewords: grown
            .codewords
            .iter()
            .map(|c| m::Codeword {
                id: c.id.clone(),
                tracks: c.tracks.clone(),
                ..m::Codeword::default()
            })
            .collect(),
        entities: Vec::new(),
        relationships: Vec::new(),
        codex: Vec::new(),
        illustrations: Vec::new(),
        art_direction: None,
        scenes: Vec::new(),
    }
}

/// A synthetic SEED graph for benchmarks: `dilemmas` dilemmas, both answers
/// explored, policies in turn hard, soft and flavor; each with `shared`
/// beats before its commit and `own` beats per path (the first commits);
/// dilemmas one after another, all after a shared opening.
pub fn synthetic(dilemmas: usize, shared: usize, own: usize) -> Seeded {
    let mut s = Seeded::default();
    let mut paths_all = Vec::new();
    for d in 0..dilemmas {
        let dilemma = format!("dilemma::d{d}");
        s.dilemmas.push(Dilemma {
            id: dilemma.clone(),
            policy: [Policy::Hard, Policy::Soft, Policy::Flavor][d % 3],
            payoff_budget: 2,
            residue: [Residue::Light, Residue::Heavy][d % 2],
            ending: if d == 2 {
                Salience::High
            } else {
                Salience::Low
            },
        });
        for a in 0..2 {
            let id = format!("path::d{d}__a{d}_{a}");
            s.paths.push(Path {
                id: id.clone(),
                dilemma: dilemma.clone(),
                answer: format!("a{d}_{a}"),
                canonical: a == 0,
                consequences: vec![format!("consequence::c{d}_{a}")],
            });
            paths_all.push(id);
        }
    }
    s.beats.push(Beat {
        id: "beat::opening".into(),
        paths: paths_all,
        summary: "The story opens.".into(),
        ..Beat::default()
    });
    let mut last_of_previous = vec!["beat::opening".to_owned()];
    for d in 0..dilemmas {
        let dilemma = format!("dilemma::d{d}");
        let both = vec![format!("path::d{d}__a{d}_0"), format!("path::d{d}__a{d}_1")];
        let mut prev: Vec<String> = last_of_previous.clone();
        for k in 0..shared {
            let id = format!("beat::d{d}_s{k}");
            s.beats.push(Beat {
                id: id.clone(),
                paths: both.clone(),
                summary: format!("Dilemma {d} deepens ({k})."),
                ..Beat::default()
            });
            for p in &prev {
                s.order.push((id.clone(), p.clone()));
            }
            prev = vec![id];
        }
        let mut ends = Vec::new();
        for (a, path) in both.iter().enumerate() {
            let mut before = prev.clone();
            for k in 0..own {
                let id = format!("beat::d{d}_a{a}_{k}");
                s.beats.push(Beat {
                    id: id.clone(),
                    paths: vec![path.clone()],
                    summary: format!("Answer {a} of dilemma {d}, step {k}."),
                    commits: if k == 0 {
                        vec![dilemma.clone()]
                    } else {
                        Vec::new()
                    },
                    ..Beat::default()
                });
                for p in &before {
                    s.order.push((id.clone(), p.clone()));
                }
                before = vec![id];
            }
            ends.extend(before);
        }
        last_of_previous = ends;
    }
    s
}
