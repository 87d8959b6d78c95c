//! GROW's codewords: one per consequence of a branching path, and "residue must be read".

use std::collections::BTreeSet;

use super::types::{Choice, Codeword};
use super::weave::Weave;

/// Codewords: per consequence of a path whose dilemma has a branch, granted by the beats
/// that commit that dilemma on that path only (or, if none does, by its first beat of its
/// own; a path with no beat of its own gets none, and the notes say so).
pub(super) fn codewords(weave: &Weave, notes: &mut Vec<String>) -> Vec<Codeword> {
    let mut codewords = Vec::new();
    for (d, list) in &weave.by_dilemma {
        if list.len() < 2 {
            continue;
        }
        for p in list {
            let own = |b: &&String| {
                let beat = weave.beat(b);
                beat.paths.contains(&p.id) && weave.exclusive_to(beat, d)
            };
            let granted_by: Vec<String> = weave
                .order
                .iter()
                .filter(|b| own(b) && weave.beat(b).commits.iter().any(|c| c == d))
                .cloned()
                .collect();
            let granted_by = if granted_by.is_empty() {
                // No beat of its own commits it: the first beat of its own does.
                let first: Vec<String> = weave.order.iter().filter(own).take(1).cloned().collect();
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
    codewords
}

/// The codewords granted where a beat is completed.
pub(super) fn grants_of(codewords: &[Codeword], beat: &str) -> Vec<String> {
    codewords
        .iter()
        .filter(|c| c.granted_by.iter().any(|b| b == beat))
        .map(|c| c.id.clone())
        .collect()
}

/// Residue must be read: a codeword no gate reads is removed (and no choice grants it).
/// Returns the ones removed.
pub(super) fn prune_unread(codewords: &mut Vec<Codeword>, choices: &mut [Choice]) -> Vec<String> {
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
    for c in choices {
        c.grants.retain(|g| read.contains(g));
    }
    unread
}
