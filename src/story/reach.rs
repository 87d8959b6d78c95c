//! Reachability under codeword semantics: a walk over (passage, held codewords) states.
//!
//! The walk cannot explode on codewords that no longer matter: at each passage
//! the held set is projected onto the codewords that some gate downstream still
//! tests ("live" codewords, as in a compiler's liveness analysis). That keeps the
//! walk exact for gates while merging states that differ only in residue.

use std::collections::HashMap;

use fixedbitset::FixedBitSet;

use super::graph::{CodewordSet, PassageIx, Story};

/// Upper bound on distinct walk states before the walk gives up.
pub const STATE_LIMIT: usize = 2_000_000;

/// The memory one walk may use for its states (#44: a story with thousands of
/// codewords makes each state big, so the limit in states shrinks with it).
pub const MEMORY_BUDGET: usize = 128 << 20;

/// What one walk state costs in memory with `codewords` codewords: the held
/// set twice (the state list and the id map's key; each a bit set on the
/// heap with its header) and the map entry, id, stack slot and predecessor
/// list (measured: ~415 bytes a state with 80 codewords).
pub fn state_bytes(codewords: usize) -> usize {
    let set = codewords.div_ceil(128) * 16 + 48;
    2 * set + 300
}

/// The most states a walk of `story` may visit within [`MEMORY_BUDGET`]
/// (never more than [`STATE_LIMIT`]).
pub fn state_limit(story: &Story) -> usize {
    (MEMORY_BUDGET / state_bytes(story.codeword_count())).clamp(1, STATE_LIMIT)
}

/// Per passage, the codewords some gate reachable from it (itself included) tests.
#[expect(
    clippy::indexing_slicing,
    reason = "indices are this story's (made by its compile) or the walk's own states"
)]
pub fn live_codewords(story: &Story) -> Vec<CodewordSet> {
    let n = story.passage_count();
    let mut own: Vec<CodewordSet> = story
        .passages()
        .map(|p| {
            let mut set = story.no_codewords();
            for choice in story.choices(p) {
                set.union_with(&choice.requires);
            }
            set
        })
        .collect();
    let mut predecessors = vec![Vec::new(); n];
    for p in story.passages() {
        for choice in story.choices(p) {
            predecessors[choice.to.index()].push(p);
        }
    }
    // Backward data-flow to a fixpoint: live(p) = own(p) ∪ live(successors).
    let mut queued = FixedBitSet::with_capacity(n);
    queued.insert_range(..);
    let mut work: Vec<PassageIx> = story.passages().collect();
    while let Some(p) = work.pop() {
        queued.set(p.index(), false);
        let live = own[p.index()].clone();
        for &pred in &predecessors[p.index()] {
            let before = own[pred.index()].len();
            own[pred.index()].union_with(&live);
            if own[pred.index()].len() != before && !queued.put(pred.index()) {
                work.push(pred);
            }
        }
    }
    own
}

/// What one walk found.
#[derive(Debug, Default)]
pub struct Walk {
    /// Passages visited in at least one state.
    pub reachable: FixedBitSet,
    /// Choices (by [`Story::choice_number`]) taken in at least one state.
    pub usable_choices: FixedBitSet,
    /// Reachable states at a non-ending passage where no choice is open, with the held codewords.
    pub dead_ends: Vec<(PassageIx, CodewordSet)>,
    /// Reachable states with open choices from which no ending (and no dead end) can be reached:
    /// the player is caught in a loop. Computed by full walks only.
    pub trapped: Vec<(PassageIx, CodewordSet)>,
    /// Distinct states explored.
    pub states: usize,
    /// False when the state limit stopped the walk early.
    pub complete: bool,
    /// For a goal walk: whether the goal set was ever held at once.
    pub goal_reached: bool,
}

/// Walk every reachable state. With `goal`, codewords in it are kept in every
/// state and the walk stops as soon as all of them are held together.
pub fn walk(story: &Story, live: &[CodewordSet], goal: Option<&CodewordSet>) -> Walk {
    walk_limited(story, live, goal, state_limit(story))
}

/// [`walk`] with a state limit of one's own.
#[expect(
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "the state limit is far below 2^32"
)]
pub fn walk_limited(
    story: &Story,
    live: &[CodewordSet],
    goal: Option<&CodewordSet>,
    limit: usize,
) -> Walk {
    let mut out = Walk {
        reachable: FixedBitSet::with_capacity(story.passage_count()),
        usable_choices: FixedBitSet::with_capacity(story.choice_count()),
        complete: true,
        ..Walk::default()
    };
    if goal.is_some_and(CodewordSet::is_empty) {
        out.goal_reached = true;
        return out;
    }
    let keep = |p: PassageIx| {
        let mut keep = live[p.index()].clone();
        if let Some(goal) = goal {
            keep.union_with(goal);
        }
        keep
    };
    let start = (story.start(), story.no_codewords());
    // State ids, the states themselves, and (for full walks) predecessor edges.
    let mut ids: HashMap<(PassageIx, CodewordSet), u32> = HashMap::from([(start.clone(), 0)]);
    let mut states = vec![start];
    let mut preds: Vec<Vec<u32>> = vec![Vec::new()];
    let mut finished: Vec<u32> = Vec::new();
    let mut stack = vec![0u32];
    while let Some(id) = stack.pop() {
        let (p, held) = states[id as usize].clone();
        out.reachable.insert(p.index());
        let choices = story.choices(p);
        let mut open = false;
        // Depth-first, so a goal walk tries the choices that grant goal codewords
        // first (pushed last) and usually stops after one deep dive.
        let mut order: Vec<usize> = (0..choices.len()).collect();
        if let Some(goal) = goal {
            order.sort_by_key(|&i| choices[i].grants.intersects(goal));
        }
        for i in order {
            let choice = &choices[i];
            if !choice.requires.is_subset(&held) {
                continue;
            }
            open = true;
            out.usable_choices.insert(story.choice_number(p, i));
            let mut next = held.clone();
            next.union_with(&choice.grants);
            if goal.is_some_and(|g| g.is_subset(&next)) {
                out.goal_reached = true;
                out.states = states.len();
                return out;
            }
            next.intersect_with(&keep(choice.to));
            let state = (choice.to, next);
            let next_id = if let Some(&known) = ids.get(&state) {
                known
            } else {
                if states.len() >= limit {
                    out.complete = false;
                    out.states = states.len();
                    return out;
                }
                let new = u32::try_from(states.len()).expect("the state limit is below 2^32");
                ids.insert(state.clone(), new);
                states.push(state);
                preds.push(Vec::new());
                stack.push(new);
                new
            };
            if goal.is_none() {
                preds[next_id as usize].push(id);
            }
        }
        if choices.is_empty() {
            finished.push(id);
        } else if !open {
            out.dead_ends.push((p, held));
            finished.push(id);
        }
    }
    out.states = states.len();
    if goal.is_none() {
        out.trapped = trapped(&states, &preds, &finished);
    }
    out
}

/// States that cannot reach an ending or a dead end: walk predecessor edges back from those.
#[expect(
    clippy::indexing_slicing,
    reason = "indices are this story's (made by its compile) or the walk's own states"
)]
fn trapped(
    states: &[(PassageIx, CodewordSet)],
    preds: &[Vec<u32>],
    finished: &[u32],
) -> Vec<(PassageIx, CodewordSet)> {
    let mut can_finish = FixedBitSet::with_capacity(states.len());
    let mut work: Vec<u32> = finished.to_vec();
    for &id in finished {
        can_finish.insert(id as usize);
    }
    while let Some(id) = work.pop() {
        for &pred in &preds[id as usize] {
            if !can_finish.put(pred as usize) {
                work.push(pred);
            }
        }
    }
    let mut stuck = can_finish;
    stuck.toggle_range(..);
    stuck.ones().map(|id| states[id].clone()).collect()
}

/// Can every codeword of `set` be held at once in some reachable state?
/// `None` when the walk hit the state limit before deciding.
pub fn can_hold_together(story: &Story, live: &[CodewordSet], set: &CodewordSet) -> Option<bool> {
    can_hold_together_within(story, live, set, state_limit(story)).0
}

/// [`can_hold_together`] within `limit` states, with how many it walked.
pub fn can_hold_together_within(
    story: &Story,
    live: &[CodewordSet],
    set: &CodewordSet,
    limit: usize,
) -> (Option<bool>, usize) {
    let walk = walk_limited(story, live, Some(set), limit);
    let answer = if walk.goal_reached {
        Some(true)
    } else if walk.complete {
        Some(false)
    } else {
        None
    };
    (answer, walk.states)
}
