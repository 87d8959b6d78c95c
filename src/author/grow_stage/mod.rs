//! GROW on a project's graph: reads what SEED left, runs the core, writes the result in phases.
//!
//! Reads the graph into [`crate::author::grow::Seeded`] (`read`), lets the model pick
//! intersections (`intersections`) and pace the beats (`pacing`), runs the deterministic core,
//! and applies its result as GROW's mutations, phase by phase, each all or nothing: arcs,
//! passages, pruning, codewords (`write`), entity overlays (`overlays`) and choices with
//! diegetic labels (`labels`). A failed model call leaves the engine's own choice and a note.

mod intersections;
mod labels;
mod overlays;
mod pacing;
mod read;
mod write;

pub use intersections::MAX_INTERSECTIONS;
pub use labels::diegetic;
pub use pacing::MAX_GAPS;
pub use read::{scene_type, seeded};

use crate::author::ask::{Ask, StageError};
use crate::author::graph::Graph;
use crate::author::grow::{self, GrowError, Grown};

/// Runs GROW on the graph: intersections, pacing (scene types, bridging
/// beats), then the weave, arcs, passages, codewords, overlays and choices. When the arcs
/// do not open on one beat, GROW adds an opening gap beat every path shares. Returns the
/// grown topology.
pub fn run(graph: &mut Graph, spark: &str, ask: &mut Ask) -> Result<Grown, StageError> {
    let mut notes: Vec<String> = Vec::new();
    let mut seed = seeded(graph)?;
    if seed.beats.is_empty() {
        return Err(StageError::NoBeats);
    }

    // The engine lists the compatible pairs, the model picks, the engine merges what stays
    // acyclic.
    let candidates = grow::intersection_candidates(&seed);
    if !candidates.is_empty() {
        intersections::merge_intersections(graph, &mut seed, &candidates, ask, &mut notes)?;
    }

    // Scene types, and bridging beats in the gaps the engine finds, as far as the model
    // writes them.
    pacing::pacing(graph, &seed, ask, &mut notes)?;
    seed = seeded(graph)?;

    // The weave; an opening beat when the arcs would start apart.
    let grown = match grow::grow(&seed) {
        Err(GrowError::ManyStarts { .. }) => {
            write::opening(graph, &seed, spark)?;
            seed = seeded(graph)?;
            grow::grow(&seed)?
        }
        other => other?,
    };

    write::arcs(graph, &grown)?;
    write::passages(graph, &seed, &grown)?;
    write::prune(graph, &mut notes)?;
    write::codewords(graph, &grown)?;
    overlays::overlays(graph, &seed, &grown, ask, &mut notes)?;

    let mut all_notes = grown.notes.clone();
    all_notes.append(&mut notes);
    labels::choices(graph, &seed, &grown, ask, &mut all_notes)?;
    Ok(Grown {
        notes: all_notes,
        ..grown
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::author::grow::label_from;

    #[test]
    fn labels_say_what_the_player_does_not_what_the_story_is() {
        for good in [
            "Wait for the tide",
            "Row to the next island",
            "Take the lantern down",
        ] {
            assert!(diegetic(good), "{good}");
        }
        for bad in [
            "Continue",
            "Go on",
            "Next",
            "Choose this option",
            "Read the next passage",
            "",
        ] {
            assert!(!diegetic(bad), "{bad}");
        }
        assert_eq!(
            label_from("Mara gives the sea her years. Then the storm."),
            "Mara gives the sea her years"
        );
        assert!(label_from(&"word ".repeat(40)).ends_with('…'));
    }
}
