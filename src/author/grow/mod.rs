//! GROW's deterministic core (seed 000 "Stage 4"): plain data in and out, no model, no database.
//!
//! One global weave of the beats by topological sort (`weave`), arcs from the explored paths
//! with the spine from canonical answers and worlds split per convergence policy (`arcs`),
//! passages 1:1 from beats within a world, codewords from consequences granted at commits
//! (`codewords`), choice edges from comparing arc sequences (`choices`), linear runs
//! collapsed (`passages`), the "residue must be read" pruning and the routing check
//! (`routing`). The model-driven part that runs this on a project's graph is `grow_stage`.

mod arcs;
mod choices;
mod codewords;
mod intersect;
mod passages;
mod routing;
mod synthetic;
mod to_story;
pub mod types;
mod weave;

use std::collections::BTreeSet;

pub use choices::label_from;
pub use intersect::{Candidate, intersection_candidates};
pub use passages::MAX_RUN;
pub use synthetic::synthetic;
pub use to_story::to_story;
pub use types::{
    Arc, Beat, Choice, Codeword, Dilemma, GrowError, Grown, MAX_ARCS, Passage, Path, Policy,
    Residue, Salience, Seeded,
};

/// Runs GROW's deterministic phases on what SEED left.
pub fn grow(seeded: &Seeded) -> Result<Grown, GrowError> {
    let mut notes = Vec::new();
    let weave = weave::Weave::new(seeded)?;
    let (mut arcs, passages) = arcs::arcs(&weave);
    let start = arcs::place(&mut arcs, &passages)?;
    let mut codewords = codewords::codewords(&weave, &mut notes);
    let choices = choices::choices(&arcs, &passages, &codewords);
    let (passages, mut choices) =
        passages::collapse(passages, choices, &mut arcs, &weave.beats, MAX_RUN);
    let unread = codewords::prune_unread(&mut codewords, &mut choices);
    routing::check_routing(&arcs, &passages, &choices, &mut notes)?;
    let leaving: BTreeSet<&String> = choices.iter().map(|c| &c.from).collect();
    let endings: Vec<String> = passages
        .keys()
        .filter(|p| !leaving.contains(p))
        .cloned()
        .collect();
    let unused: Vec<&String> = weave
        .ids
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
        weave: weave.order,
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
