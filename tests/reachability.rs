//! Property tests of reachability against brute force and random play.
//!
//! The projected state walk agrees with brute force, and random play never contradicts validation.

mod common;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use loreloom::story::model::{Choice, Codeword, Passage, StoryFile, StoryMeta};
use loreloom::story::{
    CodewordSet, PassageIx, Player, Rule, Story, Subject, open, reach, validate,
};
use proptest::prelude::*;

/// (target, requires mask, grants mask) per choice, per passage.
type Shape = Vec<Vec<(usize, u8, u8)>>;

fn build(shape: &Shape, codewords: usize) -> Story {
    let names = |mask: u8| -> Vec<String> {
        (0..codewords)
            .filter(|c| mask & (1 << c) != 0)
            .map(|c| format!("c{c}"))
            .collect()
    };
    let passages = shape
        .iter()
        .enumerate()
        .map(|(i, choices)| Passage {
            id: format!("p{i}"),
            prose: format!("Passage {i}."),
            choices: choices
                .iter()
                .enumerate()
                .map(|(j, &(to, requires, grants))| Choice {
                    label: format!("Cross bridge {j}"),
                    to: format!("p{}", to % shape.len()),
                    requires: names(requires),
                    grants: names(grants),
                })
                .collect(),
            ..Passage::default()
        })
        .collect();
    let file = StoryFile {
        format: "loreloom-story".into(),
        version: 1,
        meta: StoryMeta {
            id: "prop".into(),
            title: "Prop".into(),
            ..StoryMeta::default()
        },
        start: Some("p0".into()),
        passages,
        codewords: (0..codewords)
            .map(|c| Codeword {
                id: format!("c{c}"),
                ..Codeword::default()
            })
            .collect(),
        entities: vec![],
        relationships: vec![],
        codex: vec![],
        illustrations: vec![],
        art_direction: None,
        scenes: vec![],
    };
    Story::compile(file).expect("generated stories have valid references")
}

fn shapes() -> impl Strategy<Value = (Shape, usize)> {
    (1usize..=4, 2usize..=10).prop_flat_map(|(codewords, n)| {
        let mask = 0u8..(1 << codewords);
        let choice = (0..n, prop_oneof![3 => Just(0u8), 2 => mask.clone()], mask);
        (
            prop::collection::vec(prop::collection::vec(choice, 0..=3), n),
            Just(codewords),
        )
    })
}

/// What brute force finds: reachable passages, usable choices, dead-end passages, trapped passages.
type Truth = (
    BTreeSet<usize>,
    BTreeSet<usize>,
    BTreeSet<usize>,
    BTreeSet<usize>,
);

/// Brute force: every (passage, full held set) state, no projection.
fn brute_force(story: &Story) -> Truth {
    let mut reachable = BTreeSet::new();
    let mut usable = BTreeSet::new();
    let mut dead = BTreeSet::new();
    let mut edges: HashMap<(PassageIx, CodewordSet), Vec<(PassageIx, CodewordSet)>> =
        HashMap::new();
    let mut finished = HashSet::new();
    let mut queue = VecDeque::from([(story.start(), story.no_codewords())]);
    while let Some((p, held)) = queue.pop_front() {
        if edges.contains_key(&(p, held.clone())) {
            continue;
        }
        reachable.insert(p.index());
        let mut open = false;
        let mut next_states = Vec::new();
        for (i, choice) in story.choices(p).iter().enumerate() {
            if choice.requires.is_subset(&held) {
                open = true;
                usable.insert(story.choice_number(p, i));
                let mut next = held.clone();
                next.union_with(&choice.grants);
                next_states.push((choice.to, next.clone()));
                queue.push_back((choice.to, next));
            }
        }
        if !open {
            finished.insert((p, held.clone()));
            if !story.is_ending(p) {
                dead.insert(p.index());
            }
        }
        edges.insert((p, held), next_states);
    }
    // Fixpoint: a state can finish if it is finished or a successor can.
    let mut can_finish = finished;
    loop {
        let before = can_finish.len();
        for (state, next) in &edges {
            if next.iter().any(|n| can_finish.contains(n)) {
                can_finish.insert(state.clone());
            }
        }
        if can_finish.len() == before {
            break;
        }
    }
    let trapped = edges
        .keys()
        .filter(|s| !can_finish.contains(*s))
        .map(|(p, _)| p.index())
        .collect();
    (reachable, usable, dead, trapped)
}

/// Brute force: is there a reachable state holding all of `goal`?
fn brute_force_holds(story: &Story, goal: &CodewordSet) -> bool {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(story.start(), story.no_codewords())]);
    while let Some((p, held)) = queue.pop_front() {
        if goal.is_subset(&held) {
            return true;
        }
        if !seen.insert((p, held.clone())) {
            continue;
        }
        for choice in story.choices(p) {
            if choice.requires.is_subset(&held) {
                let mut next = held.clone();
                next.union_with(&choice.grants);
                queue.push_back((choice.to, next));
            }
        }
    }
    false
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn the_projected_walk_is_exact((shape, codewords) in shapes()) {
        let story = build(&shape, codewords);
        let live = reach::live_codewords(&story);
        let walk = reach::walk(&story, &live, None);
        let (reachable, usable, dead, trapped) = brute_force(&story);
        prop_assert!(walk.complete);
        prop_assert_eq!(walk.reachable.ones().collect::<BTreeSet<_>>(), reachable);
        prop_assert_eq!(walk.usable_choices.ones().collect::<BTreeSet<_>>(), usable);
        prop_assert_eq!(walk.dead_ends.iter().map(|(p, _)| p.index()).collect::<BTreeSet<_>>(), dead);
        prop_assert_eq!(walk.trapped.iter().map(|(p, _)| p.index()).collect::<BTreeSet<_>>(), trapped);
    }

    #[test]
    fn holding_codewords_together_agrees_with_brute_force((shape, codewords) in shapes(), goal in 1u8..16) {
        let story = build(&shape, codewords);
        let goal_ids: Vec<String> = (0..codewords).filter(|c| goal & (1 << c) != 0).map(|c| format!("c{c}")).collect();
        let Some(set) = story.codeword_set(goal_ids.iter().map(String::as_str)) else {
            return Ok(());
        };
        let live = reach::live_codewords(&story);
        let expected = brute_force_holds(&story, &set);
        prop_assert_eq!(reach::can_hold_together(&story, &live, &set), Some(expected));
    }

    #[test]
    fn random_play_never_contradicts_validation((shape, codewords) in shapes(), picks in prop::collection::vec(any::<prop::sample::Index>(), 0..40)) {
        let story = Arc::new(build(&shape, codewords));
        check_random_play(&story, &picks)?;
    }
}

/// Play `picks` (each an index into the open choices); every passage reached must not be
/// called unreachable, and being stuck must have been reported as a dead end.
fn check_random_play(
    story: &Arc<Story>,
    picks: &[prop::sample::Index],
) -> Result<(), TestCaseError> {
    let report = validate(story);
    let flagged = |rule: Rule, id: &str| {
        report
            .diagnostics
            .iter()
            .any(|d| d.rule == rule && d.subject == Subject::Passage(id.to_owned()))
    };
    let mut player = Player::new(story.clone());
    for pick in picks {
        let id = story.passage(player.current()).id.clone();
        prop_assert!(
            !flagged(Rule::UnreachablePassage, &id),
            "reached `{}`, called unreachable",
            id
        );
        let open: Vec<usize> = player.open_choices().map(|(i, _)| i).collect();
        if player.is_ended() {
            break;
        }
        if open.is_empty() {
            prop_assert!(
                flagged(Rule::DeadEnd, &id),
                "stuck at `{}`, not reported",
                id
            );
            break;
        }
        player
            .choose(open[pick.index(open.len())])
            .expect("open choices can be taken");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_play_of_the_real_stories_stays_in_validated_territory(which in 0usize..3, picks in prop::collection::vec(any::<prop::sample::Index>(), 0..60)) {
        let path = match which {
            0 => common::fixture("keepers-bargain.json"),
            1 => common::fixture("small-kindnesses.json"),
            _ => common::default_story(),
        };
        let package = open(&path).expect("the story opens");
        check_random_play(&package.story, &picks)?;
    }
}
