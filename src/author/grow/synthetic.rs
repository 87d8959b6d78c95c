//! A synthetic SEED graph for GROW's benchmarks and tests (not used by the game itself).

use super::types::{Beat, Dilemma, Path, Policy, Residue, Salience, Seeded};

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
