//! Plot beats at scene transitions (seed 002 §6.2.5, §7.5): open, ready, triggered or skipped.
//!
//! Which beats open, become ready, trigger (within two scenes, by priority) or
//! are skipped as unreachable, and the beat the narrator steers toward.
//!
//! Plain Rust over the world snapshot: a beat's progress is a [`BeatStatus`]
//! in `WorldState::beats`, so a rewind restores it and a replay sees it. The
//! structural conditions (`scene_count`, `requires_beat`, `requires_any_beat`,
//! `timeout`) are decided exactly; the story conditions written in words
//! (`player_choice(s)`, `player_state`, `npc_state`, `world_state`, `custom`)
//! are judged by a caller-supplied `support` score in 0..=1: in a session,
//! how closely the branch's remembered events match the condition's text
//! (`SessionMemory::support`).

use std::collections::BTreeMap;

use crate::campaign::format::{Beat, Priority};
use crate::rules::{BeatStatus, WorldState};

/// Scenes a satisfied beat may wait before it must trigger (seed 002 §7.5).
pub const TRIGGER_WITHIN: u32 = 2;

/// What one transition did to one beat, for the log and the overlay.
#[derive(Clone, Debug, PartialEq)]
pub struct BeatEvent {
    pub id: String,
    pub title: String,
    pub status: BeatStatus,
}

/// The scene number the stream is in: 1 plus the scenes closed so far.
pub fn scene_number(stream: &crate::transcript::Stream) -> u32 {
    let closed = crate::transcript::marker::markers(&stream.messages)
        .filter(|m| *m == crate::transcript::marker::SceneMarker::Close)
        .count();
    u32::try_from(closed).unwrap_or(u32::MAX).saturating_add(1)
}

/// The story conditions of a beat, each as text to judge.
fn story_conditions(beat: &Beat) -> Vec<String> {
    let c = &beat.conditions;
    let mut out: Vec<String> = c
        .player_choice
        .iter()
        .chain(&c.player_choices)
        .chain(&c.player_state)
        .chain(&c.world_state)
        .chain(&c.custom)
        .cloned()
        .collect();
    out.extend(
        c.npc_state
            .iter()
            .map(|(npc, s)| format!("{} {s}", npc.replace('_', " "))),
    );
    out
}

enum Gate {
    NotYet,
    Open,
    Unreachable(String),
}

fn structural(beat: &Beat, beats: &BTreeMap<String, BeatStatus>, scene: u32) -> Gate {
    let c = &beat.conditions;
    let triggered = |id: &str| matches!(beats.get(id), Some(BeatStatus::Triggered { .. }));
    let skipped = |id: &str| matches!(beats.get(id), Some(BeatStatus::Skipped { .. }));
    if let Some(r) = &c.requires_beat {
        if skipped(r) {
            return Gate::Unreachable(format!("it requires `{r}`, which was skipped"));
        }
        if !triggered(r) {
            return Gate::NotYet;
        }
    }
    if !c.requires_any_beat.is_empty() {
        if c.requires_any_beat.iter().all(|r| skipped(r)) {
            return Gate::Unreachable(format!(
                "it requires one of {}, all skipped",
                c.requires_any_beat.join(", ")
            ));
        }
        if !c.requires_any_beat.iter().any(|r| triggered(r)) {
            return Gate::NotYet;
        }
    }
    if let Some(w) = &c.scene_count {
        if let Some(max) = w.max
            && scene > max
        {
            return Gate::Unreachable(format!("its scenes (up to {max}) have passed"));
        }
        if w.min.is_some_and(|min| scene < min) {
            return Gate::NotYet;
        }
    }
    Gate::Open
}

/// Decide every beat on entering scene `scene`. `support(text)` scores how
/// well the story so far bears out a condition; `threshold` is the bar.
pub fn transition(
    beats: &[Beat],
    world: &mut WorldState,
    scene: u32,
    support: impl Fn(&str) -> f32,
    threshold: f32,
) -> Vec<BeatEvent> {
    let mut events = Vec::new();
    let mut set = |world: &mut WorldState, beat: &Beat, status: BeatStatus| {
        world.beats.insert(beat.id.clone(), status.clone());
        events.push(BeatEvent {
            id: beat.id.clone(),
            title: beat.title.clone(),
            status,
        });
    };
    // 1. Open, ready or skip, in file order (a skip can make later beats unreachable).
    for beat in beats {
        let now = world.beats.get(&beat.id).cloned();
        if matches!(
            now,
            Some(
                BeatStatus::Triggered { .. }
                    | BeatStatus::Skipped { .. }
                    | BeatStatus::Ready { .. }
            )
        ) {
            continue;
        }
        match structural(beat, &world.beats, scene) {
            Gate::NotYet => continue,
            Gate::Unreachable(why) => {
                set(world, beat, BeatStatus::Skipped { scene, why });
                continue;
            }
            Gate::Open => {}
        }
        let since = match now {
            Some(BeatStatus::Open { since }) => since,
            _ => scene,
        };
        if let Some(t) = &beat.timeout
            && scene.saturating_sub(since) >= t.after_scenes
        {
            let why = format!("it waited {} scenes for its conditions", t.after_scenes);
            set(world, beat, BeatStatus::Skipped { scene, why });
            if let Some(f) = &t.fallback_beat
                && let Some(fallback) = beats.iter().find(|b| &b.id == f)
                && !matches!(
                    world.beats.get(f),
                    Some(BeatStatus::Triggered { .. } | BeatStatus::Skipped { .. })
                )
            {
                let why = format!("fallback of `{}`", beat.id);
                set(world, fallback, BeatStatus::Ready { since: scene, why });
            }
            continue;
        }
        let unmet: Vec<String> = story_conditions(beat)
            .into_iter()
            .filter(|c| support(c) < threshold)
            .collect();
        let last_chance = beat
            .conditions
            .scene_count
            .as_ref()
            .and_then(|w| w.max)
            .is_some_and(|max| scene >= max);
        let status = if unmet.is_empty() {
            BeatStatus::Ready {
                since: scene,
                why: "its conditions hold".into(),
            }
        } else if last_chance && !beat.skippable {
            // An essential beat is not lost to a missed judgement: it plays
            // in the last scene of its window.
            BeatStatus::Ready {
                since: scene,
                why: "essential, last scene of its window".into(),
            }
        } else if now.is_none() {
            BeatStatus::Open { since }
        } else {
            continue;
        };
        set(world, beat, status);
    }
    // 2. Trigger: the highest-priority ready beat, and any that has waited its two scenes.
    let mut ready: Vec<(Priority, u32, usize, String)> = beats
        .iter()
        .enumerate()
        .filter_map(|(i, b)| match world.beats.get(&b.id) {
            Some(BeatStatus::Ready { since, why }) => Some((b.priority, *since, i, why.clone())),
            _ => None,
        })
        .collect();
    ready.sort_unstable();
    for (n, (_, since, i, why)) in ready.into_iter().enumerate() {
        if n == 0 || scene >= since + TRIGGER_WITHIN {
            set(world, &beats[i], BeatStatus::Triggered { scene, why });
        }
    }
    events
}

/// The beats triggered for `scene`, highest priority first: what the narrator steers toward.
pub fn current<'a>(beats: &'a [Beat], world: &WorldState, scene: u32) -> Vec<&'a Beat> {
    let mut now: Vec<&Beat> = beats
        .iter()
        .filter(|b| matches!(world.beats.get(&b.id), Some(BeatStatus::Triggered { scene: s, .. }) if *s == scene))
        .collect();
    now.sort_by_key(|b| b.priority);
    now
}
