//! GROW's deterministic core on generated SEED graphs (#23), checked against seed 000's promises.
//!
//! Random dilemmas, explored answers, policies, beats, ordering and locations; the weave, the
//! arcs, the choices and codeword gates keep seed 000's promises, and the player's own
//! validation finds nothing wrong with the result.

#![cfg(feature = "store")]

use std::collections::{BTreeMap, BTreeSet};

use loreloom::author::grow::{
    Beat, Dilemma, Path, Policy, Residue, Salience, Seeded, grow, to_story,
};
use proptest::prelude::*;

/// A dilemma as generated: whether its other answer is explored, its policy
/// and budget, how many shared beats precede its commit, and how many beats
/// of its own each path has.
#[derive(Clone, Debug)]
struct Plan {
    explored: bool,
    policy: Policy,
    budget: usize,
    shared: usize,
    own: [usize; 2],
    residue: Residue,
    ending: Salience,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        any::<bool>(),
        prop_oneof![Just(Policy::Hard), Just(Policy::Soft), Just(Policy::Flavor)],
        2usize..5,
        0usize..3,
        [1usize..4, 1usize..4],
        prop_oneof![
            Just(Residue::Heavy),
            Just(Residue::Light),
            Just(Residue::Cosmetic)
        ],
        prop_oneof![
            Just(Salience::High),
            Just(Salience::Low),
            Just(Salience::None)
        ],
    )
        .prop_map(
            |(explored, policy, budget, shared, own, residue, ending)| Plan {
                explored,
                policy,
                budget,
                shared,
                own,
                residue,
                ending,
            },
        )
}

/// A SEED graph: an opening every path shares, then per dilemma its shared
/// beats and each path's own beats (the first of which commits), chained;
/// extra cross-dilemma orderings where they keep the order acyclic.
fn seeded(plans: &[Plan], cross: &[(usize, usize)], places: &[usize]) -> Seeded {
    let mut s = Seeded::default();
    let mut all_paths = Vec::new();
    for (d, plan) in plans.iter().enumerate() {
        let dilemma = format!("dilemma::d{d}");
        s.dilemmas.push(Dilemma {
            id: dilemma.clone(),
            policy: plan.policy,
            payoff_budget: plan.budget,
            residue: plan.residue,
            ending: plan.ending,
        });
        let answers = if plan.explored { 2 } else { 1 };
        for a in 0..answers {
            let id = format!("path::d{d}__a{d}_{a}");
            s.paths.push(Path {
                id: id.clone(),
                dilemma: dilemma.clone(),
                answer: format!("a{d}_{a}"),
                canonical: a == 0,
                consequences: vec![format!("consequence::c{d}_{a}")],
            });
            all_paths.push(id);
        }
    }
    let place = |i: usize| {
        Some(format!(
            "place{}",
            places.get(i % places.len().max(1)).copied().unwrap_or(0)
        ))
    };
    s.beats.push(Beat {
        id: "beat::opening".into(),
        paths: all_paths.clone(),
        summary: "The story opens.".into(),
        location: place(0),
        ..Beat::default()
    });
    let mut n = 0;
    for (d, plan) in plans.iter().enumerate() {
        let dilemma = format!("dilemma::d{d}");
        let mine: Vec<String> = all_paths
            .iter()
            .filter(|p| p.starts_with(&format!("path::d{d}__")))
            .cloned()
            .collect();
        let mut last = "beat::opening".to_owned();
        for k in 0..plan.shared {
            let id = format!("beat::d{d}_shared{k}");
            s.beats.push(Beat {
                id: id.clone(),
                paths: mine.clone(),
                summary: format!("Dilemma {d} grows ({k})."),
                location: place(n),
                ..Beat::default()
            });
            s.order.push((id.clone(), last.clone()));
            last = id;
            n += 1;
        }
        for (a, path) in mine.iter().enumerate() {
            let mut prev = last.clone();
            for k in 0..plan.own[a] {
                let id = format!("beat::d{d}_a{a}_{k}");
                s.beats.push(Beat {
                    id: id.clone(),
                    paths: vec![path.clone()],
                    summary: format!("On path {a} of dilemma {d}, step {k}."),
                    location: place(n),
                    commits: if k == 0 {
                        vec![dilemma.clone()]
                    } else {
                        Vec::new()
                    },
                    ..Beat::default()
                });
                s.order.push((id.clone(), prev.clone()));
                prev = id;
                n += 1;
            }
        }
    }
    // Cross orderings between beats, kept only when acyclic.
    let ids: Vec<String> = s.beats.iter().map(|b| b.id.clone()).collect();
    for (x, y) in cross {
        let (after, before) = (&ids[x % ids.len()], &ids[y % ids.len()]);
        if after == before {
            continue;
        }
        let mut trial = s.order.clone();
        trial.push((after.clone(), before.clone()));
        if after != "beat::opening" && loreloom::author::graph::cycle_member(&trial).is_none() {
            s.order = trial;
        }
    }
    s
}

proptest! {
    // 96 cases in CI; `PROPTEST_CASES=N` for a longer hunt.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(96),
        .. ProptestConfig::default()
    })]

    #[test]
    fn grow_keeps_the_seeds_promises(
        plans in prop::collection::vec(plan(), 1..4),
        cross in prop::collection::vec((0usize..40, 0usize..40), 0..6),
        places in prop::collection::vec(0usize..3, 1..5),
    ) {
        let s = seeded(&plans, &cross, &places);
        let grown = grow(&s).expect("a well-formed SEED graph grows");

        // The weave respects every `sequenced_after`.
        let at: BTreeMap<&str, usize> = grown.weave.iter().enumerate().map(|(i, b)| (b.as_str(), i)).collect();
        for (after, before) in &s.order {
            prop_assert!(at[before.as_str()] < at[after.as_str()], "{before} before {after}");
        }
        // Every arc is a total order drawn from the weave, and one per
        // combination of explored paths.
        let combos: usize = plans.iter().map(|p| if p.explored { 2 } else { 1 }).product();
        prop_assert_eq!(grown.arcs.len(), combos);
        prop_assert!(grown.arcs[0].spine);
        for arc in &grown.arcs {
            let positions: Vec<usize> = arc.sequence.iter().map(|b| at[b.as_str()]).collect();
            prop_assert!(positions.windows(2).all(|w| w[0] < w[1]));
            // Passages cover the arc's beats in order (merged runs hold several).
            let covered: Vec<String> = arc
                .passages
                .iter()
                .flat_map(|p| grown.passages.iter().find(|q| &q.id == p).unwrap().all_beats())
                .collect();
            prop_assert_eq!(&covered, &arc.sequence);
        }
        // Every step of every arc is a choice the arc can take with the
        // codewords it holds there (collectively exhaustive), and every
        // arc ends on an ending.
        let grants: BTreeMap<&str, Vec<&str>> = grown
            .codewords
            .iter()
            .flat_map(|c| c.granted_by.iter().map(move |b| (b.as_str(), c.id.as_str())))
            .fold(BTreeMap::new(), |mut m, (b, c)| { m.entry(b).or_insert_with(Vec::new).push(c); m });
        for arc in &grown.arcs {
            let mut held: BTreeSet<&str> = BTreeSet::new();
            for pair in arc.passages.windows(2) {
                let here = grown.passages.iter().find(|q| q.id == pair[0]).unwrap();
                for b in here.all_beats() {
                    held.extend(grants.get(b.as_str()).into_iter().flatten());
                }
                let choice = grown.choices.iter().find(|c| c.from == pair[0] && c.to == pair[1]);
                let choice = choice.expect("each step is a choice");
                prop_assert!(choice.requires.iter().all(|r| held.contains(r.as_str())),
                    "{} cannot take {} → {} (needs {:?}, holds {:?})", arc.id, pair[0], pair[1], choice.requires, held);
            }
            prop_assert!(grown.endings.contains(arc.passages.last().unwrap()));
        }
        // Residue is read: every codeword kept is some gate's.
        for c in &grown.codewords {
            prop_assert!(grown.choices.iter().any(|ch| ch.requires.contains(&c.id)));
        }
        // Hard dilemmas never come back together: each arc's passages
        // after its hard commits belong to it alone.
        for arc in &grown.arcs {
            for other in &grown.arcs {
                if arc.id == other.id {
                    continue;
                }
                let differs_hard = arc.paths.iter().zip(&other.paths).any(|(a, b)| {
                    a != b && s.dilemmas.iter().any(|d| a.starts_with(&format!("path::{}__", d.id.trim_start_matches("dilemma::"))) && d.policy == Policy::Hard)
                });
                if differs_hard && let Some(last) = arc.passages.last() {
                    prop_assert!(!other.passages.contains(last), "{} and {} share the ending {}", arc.id, other.id, last);
                }
            }
        }
        // Variant routing puts every arc in its own variant: no arc reads a
        // passage set apart for (or split by) an answer it did not choose.
        for arc in &grown.arcs {
            let answers: Vec<&str> = arc.paths.iter().map(|p| p.rsplit("__").next().unwrap()).collect();
            for id in &arc.passages {
                let p = grown.passages.iter().find(|q| &q.id == id).unwrap();
                for a in p.world.iter().chain(&p.routed) {
                    prop_assert!(answers.contains(&a.as_str()), "{} reads {} set apart for {a}", arc.id, p.id);
                }
            }
        }
        // High ending salience: arcs that answered such a dilemma
        // differently never end on the same passage (ending families).
        for (d, plan) in plans.iter().enumerate() {
            if !plan.explored || plan.ending != Salience::High {
                continue;
            }
            let answer = |arc: &loreloom::author::grow::Arc| {
                arc.paths.iter().find(|p| p.starts_with(&format!("path::d{d}__"))).cloned()
            };
            for a in &grown.arcs {
                for b in &grown.arcs {
                    if answer(a) != answer(b) {
                        prop_assert_ne!(a.passages.last(), b.passages.last(), "d{} is high salience", d);
                    }
                }
            }
        }
        // Heavy residue: where such a dilemma's branches come back
        // together, each arc first reads a passage split by its answer.
        for (d, plan) in plans.iter().enumerate() {
            if !plan.explored || plan.residue != Residue::Heavy || plan.policy == Policy::Hard {
                continue;
            }
            let answer = |arc: &loreloom::author::grow::Arc| {
                arc.paths.iter().find_map(|p| p.strip_prefix(&format!("path::d{d}__"))).unwrap().to_owned()
            };
            let passage = |id: &String| grown.passages.iter().find(|q| &q.id == id).unwrap();
            for a in &grown.arcs {
                let mine = answer(a);
                let Some(apart) = a.passages.iter().position(|id| passage(id).world.contains(&mine)) else {
                    continue;
                };
                for b in grown.arcs.iter().filter(|b| answer(b) != mine) {
                    if let Some(met) = (apart..a.passages.len()).find(|&j| b.passages.contains(&a.passages[j])) {
                        prop_assert!(
                            a.passages[apart..met].iter().any(|id| passage(id).routed.contains(&mine)),
                            "{} meets {} at {} without a passage split by {mine}", a.id, b.id, a.passages[met]
                        );
                    }
                }
            }
        }
        // Mutually exclusive: every answer here has a beat of its own, so no
        // player can open a variant that is not theirs.
        prop_assert!(!grown.notes.iter().any(|n| n.contains("may also open")), "{:#?}", grown.notes);
        // The player's validation: one start, everything reachable, no
        // dead ends, gates satisfiable, every granted codeword read.
        let story = to_story(&grown, &s);
        let (compiled, report) = loreloom::story::validate_file(story);
        prop_assert!(compiled.is_some());
        let errors: Vec<String> = report
            .diagnostics
            .iter()
            .filter(|d| d.severity == loreloom::story::Severity::Error)
            .map(ToString::to_string)
            .collect();
        prop_assert!(errors.is_empty(), "{errors:#?}");
    }
}
