//! Plot beats at scene transitions (seed 002 §6.2.5, §7.5): their rules, and a narrator they steer.
//!
//! Windows, prerequisites, priority, the two-scene trigger rule, unreachable and timed-out beats,
//! and a Drowned Reach session whose narrator is steered by the beat its story bore out.

mod common;

use loreloom::campaign::format::{Beat, Conditions, Priority, SceneWindow, Timeout};
use loreloom::rules::{BeatStatus, WorldState};
use loreloom::session::beats::{current, transition};

fn beat(id: &str, priority: Priority) -> Beat {
    Beat {
        id: id.into(),
        title: id.to_uppercase(),
        description: format!("{id} happens"),
        conditions: Conditions::default(),
        priority,
        consequences: Vec::new(),
        skippable: true,
        mood: None,
        music: None,
        outcomes: Vec::new(),
        dialogue: Vec::new(),
        timeout: None,
    }
}

fn window(min: Option<u32>, max: Option<u32>) -> SceneWindow {
    SceneWindow { min, max }
}

fn status<'a>(w: &'a WorldState, id: &str) -> Option<&'a BeatStatus> {
    w.beats.get(id)
}

fn triggered_at(w: &WorldState, id: &str) -> Option<u32> {
    match w.beats.get(id) {
        Some(BeatStatus::Triggered { scene, .. }) => Some(*scene),
        _ => None,
    }
}

/// Nothing in the story bears anything out.
fn nothing(_: &str) -> f32 {
    0.0
}

#[test]
fn ready_beats_trigger_by_priority_and_none_waits_more_than_two_scenes() {
    let beats = vec![
        beat("low", Priority::Low),
        beat("critical", Priority::Critical),
        beat("optional", Priority::Optional),
        beat("high", Priority::High),
    ];
    let mut w = WorldState::default();
    transition(&beats, &mut w, 2, nothing, 0.5);
    assert_eq!(triggered_at(&w, "critical"), Some(2));
    assert!(matches!(
        status(&w, "high"),
        Some(BeatStatus::Ready { since: 2, .. })
    ));
    assert_eq!(current(&beats, &w, 2)[0].id, "critical");
    transition(&beats, &mut w, 3, nothing, 0.5);
    assert_eq!(triggered_at(&w, "high"), Some(3));
    transition(&beats, &mut w, 4, nothing, 0.5);
    // Scene 4 is two scenes after both became ready: both play now.
    assert_eq!(triggered_at(&w, "low"), Some(4));
    assert_eq!(triggered_at(&w, "optional"), Some(4));
    let now: Vec<&str> = current(&beats, &w, 4)
        .iter()
        .map(|b| b.id.as_str())
        .collect();
    assert_eq!(now, ["low", "optional"], "highest priority first");
}

#[test]
fn prerequisites_windows_and_story_conditions_gate_a_beat() {
    let first = beat("first", Priority::High);
    let mut second = beat("second", Priority::High);
    second.conditions.requires_beat = Some("first".into());
    second.conditions.scene_count = Some(window(Some(3), None));
    second.conditions.player_choice = Some("reads the ledger".into());
    let beats = vec![first, second];
    let mut w = WorldState::default();
    transition(&beats, &mut w, 1, nothing, 0.5);
    assert_eq!(triggered_at(&w, "first"), Some(1));
    assert_eq!(status(&w, "second"), None, "its window starts at scene 3");
    transition(&beats, &mut w, 3, nothing, 0.5);
    assert!(matches!(
        status(&w, "second"),
        Some(BeatStatus::Open { since: 3 })
    ));
    let read = |c: &str| if c == "reads the ledger" { 0.8 } else { 0.0 };
    transition(&beats, &mut w, 4, read, 0.5);
    assert_eq!(triggered_at(&w, "second"), Some(4));
}

#[test]
fn unreachable_beats_are_skipped_with_the_reason() {
    let mut early = beat("early", Priority::High);
    early.conditions.scene_count = Some(window(Some(1), Some(2)));
    early.conditions.player_state = Some("on the ferry".into());
    let mut after_early = beat("after_early", Priority::High);
    after_early.conditions.requires_beat = Some("early".into());
    let mut either = beat("either", Priority::Medium);
    either.conditions.requires_any_beat = vec!["early".into(), "after_early".into()];
    let beats = vec![early, after_early, either];
    let mut w = WorldState::default();
    for scene in 1..=3 {
        transition(&beats, &mut w, scene, nothing, 0.5);
    }
    let Some(BeatStatus::Skipped { scene: 3, why }) = status(&w, "early") else {
        panic!("{:?}", w.beats)
    };
    assert!(why.contains("have passed"), "{why}");
    let Some(BeatStatus::Skipped { why, .. }) = status(&w, "after_early") else {
        panic!("{:?}", w.beats)
    };
    assert!(why.contains("`early`, which was skipped"), "{why}");
    assert!(
        matches!(status(&w, "either"), Some(BeatStatus::Skipped { .. })),
        "{:?}",
        w.beats
    );
}

#[test]
fn an_essential_beat_plays_in_the_last_scene_of_its_window() {
    let mut essential = beat("essential", Priority::Critical);
    essential.skippable = false;
    essential.conditions.scene_count = Some(window(Some(1), Some(2)));
    essential.conditions.player_state = Some("aboard after dark".into());
    let beats = vec![essential];
    let mut w = WorldState::default();
    transition(&beats, &mut w, 1, nothing, 0.5);
    assert!(matches!(
        status(&w, "essential"),
        Some(BeatStatus::Open { .. })
    ));
    transition(&beats, &mut w, 2, nothing, 0.5);
    assert_eq!(triggered_at(&w, "essential"), Some(2));
    let Some(BeatStatus::Triggered { why, .. }) = status(&w, "essential") else {
        panic!()
    };
    assert!(why.contains("last scene of its window"), "{why}");
}

#[test]
fn a_beat_that_times_out_gives_way_to_its_fallback() {
    let mut slow = beat("slow", Priority::High);
    slow.conditions.custom = Some("the player listens to every name".into());
    slow.timeout = Some(Timeout {
        after_scenes: 2,
        fallback_beat: Some("fallback".into()),
    });
    let mut fallback = beat("fallback", Priority::Medium);
    fallback.conditions.player_choice = Some("never chosen".into());
    let beats = vec![slow, fallback];
    let mut w = WorldState::default();
    transition(&beats, &mut w, 1, nothing, 0.5);
    transition(&beats, &mut w, 2, nothing, 0.5);
    assert!(matches!(
        status(&w, "slow"),
        Some(BeatStatus::Open { since: 1 })
    ));
    transition(&beats, &mut w, 3, nothing, 0.5);
    assert!(
        matches!(
            status(&w, "slow"),
            Some(BeatStatus::Skipped { scene: 3, .. })
        ),
        "{:?}",
        w.beats
    );
    assert_eq!(triggered_at(&w, "fallback"), Some(3));
}

/// The Drowned Reach through the controller with the real embedder: after a
/// scene aboard the Patience at night, `/end-scene` triggers "The Lanterns
/// Burn Green" and the next turn's narrator is told where the scene is heading;
/// a beat whose prerequisites never happen stays waiting.
#[cfg(all(feature = "embed", feature = "store"))]
#[test]
fn a_session_triggers_the_beat_its_story_bore_out_and_steers_the_narrator() {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use common::play::{gateway, new_save, turn};
    use common::scripted;
    use loreloom::memory::embed::MiniLm;
    use loreloom::memory::{Embedder, default_model_dir};
    use loreloom::session::controller::{Controller, Report, Step};

    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("green_night"), 21);
    let embedder: Arc<dyn Embedder> = Arc::new(
        MiniLm::load(&default_model_dir())
            .unwrap_or_else(|e| panic!("{e} (run `./run.sh test`, which installs it)")),
    );
    let gateway = gateway(dir.path());
    let mut ctl = Controller::open_with(&save, Some(embedder)).unwrap();
    let opened: BTreeMap<String, BeatStatus> = ctl.state.world.beats.clone();
    assert!(
        matches!(
            opened.get("beat_green_lanterns"),
            Some(BeatStatus::Open { since: 1 })
        ),
        "{opened:?}"
    );
    let play = |ctl: &mut Controller, n: usize, line: &str, narration: &str| {
        let mut replies = scripted::turn_replies(n);
        let at = replies
            .iter()
            .position(|r| r.stage.as_deref() == Some("narrate"))
            .unwrap();
        replies[at] = scripted::reply("narrate", narration);
        turn(ctl, &gateway, line, replies).1
    };
    play(
        &mut ctl,
        0,
        "I board the Patience and stand at the rail as Hesper hauls us out across the Reach",
        "You stand aboard the Patience as she crosses the Reach after dark, the chain groaning under the fog.",
    );
    let scores: Vec<(String, f32)> = [
        "aboard the Patience, crossing the Reach after dark",
        "looks into the official account of the Drowning, or the toll records",
        "has crossed to Lowmarsh",
    ]
    .iter()
    .map(|c| ((*c).to_owned(), ctl.memory.support(c)))
    .collect();
    println!("support after the crossing: {scores:?}");
    assert!(
        scores[0].1 >= ctl.memory.config.beat_threshold,
        "{scores:?}"
    );
    assert!(scores[1].1 < ctl.memory.config.beat_threshold, "{scores:?}");
    assert!(matches!(
        ctl.handle("/end-scene"),
        Step::Report(Report::Committed { .. })
    ));
    assert_eq!(
        ctl.state.world.beats.get("beat_green_lanterns"),
        Some(&BeatStatus::Triggered {
            scene: 2,
            why: "its conditions hold".into()
        }),
        "triggered by what the story bore out, not forced at the end of its window"
    );
    assert!(
        !matches!(
            ctl.state.world.beats.get("beat_ledger_gap"),
            Some(BeatStatus::Ready { .. } | BeatStatus::Triggered { .. })
        ),
        "nobody has looked at the ledgers yet: {:?}",
        ctl.state.world.beats
    );
    let prompt = play(
        &mut ctl,
        1,
        "I watch the lanterns",
        "The lanterns gutter and turn a cold bottle-green.",
    );
    assert!(
        prompt.contains("Where this scene is heading (The Lanterns Burn Green)"),
        "{prompt}"
    );
    assert!(prompt.contains("Hands off the rail"), "{prompt}");
    // Rewinding to before the scene change takes the beat back with it.
    assert!(matches!(
        ctl.handle("/rewind 1"),
        Step::Report(Report::Rewound { .. })
    ));
    assert!(
        matches!(
            ctl.state.world.beats.get("beat_green_lanterns"),
            Some(BeatStatus::Open { .. })
        ),
        "{:?}",
        ctl.state.world.beats
    );
}
