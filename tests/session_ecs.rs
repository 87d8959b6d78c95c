//! The session turn pipeline as ECS systems, headless, with a scripted model and a real save.
//!
//! Input → model calls polled frame by frame → a commit off the frame thread →
//! entities rebuilt.

#![cfg(feature = "store")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use common::scripted::{reply, turn_replies};
use loreloom::engine::CorePlugin;
use loreloom::engine::llm::LlmGateway;
use loreloom::engine::session::{
    ActiveSession, Baked, Character, ClockState, DebugLog, Entry, Memory, Present, RelationEdge,
    SaveSlots, SceneView, SessionInput, Transcript, TurnProgress, TurnPrompt,
};
use loreloom::llm::scripted::Reply;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::save_files::{NewSave, create_save};
use loreloom::session::turn::Calibration;
use loreloom::store::Store;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn app(dir: &Path, replies: Vec<Reply>) -> (App, PathBuf) {
    let save = dir.join("reach.db");
    create_save(&NewSave {
        campaign: root().join("campaigns/drowned-reach"),
        save: Some(save.clone()),
        scenario: None,
        seed: Some(11),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration: Calibration::default(),
    })
    .unwrap();
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let gateway = Gateway::new(
        prompts,
        root().join("schemas"),
        ModelsConfig::default(),
        dir,
    );
    let backend = ScriptedBackend::new(Script { replies });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
    let mut app = App::new();
    app.add_plugins(MinimalPlugins).add_plugins(CorePlugin);
    app.insert_resource(LlmGateway(Arc::new(gateway)));
    app.insert_resource(ActiveSession::open(save.clone()).unwrap());
    app.finish();
    app.cleanup();
    (app, save)
}

/// Update until the session is idle; returns the frames it took.
fn settle(app: &mut App) -> u32 {
    let start = Instant::now();
    let mut frames = 0;
    loop {
        app.update();
        frames += 1;
        let busy = app.world().resource::<TurnProgress>().busy;
        if !busy && frames > 2 {
            return frames;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the turn never finished"
        );
    }
}

fn say(app: &mut App, line: &str) {
    app.world_mut().write_message(SessionInput(line.into()));
}

/// Update until the turn's commit is under way off the frame thread (true),
/// or the session is idle again (false: the commit landed within one frame).
fn until_committing(app: &mut App) -> bool {
    let start = Instant::now();
    loop {
        app.update();
        if app.world().resource::<ActiveSession>().committing() {
            return true;
        }
        if !app.world().resource::<TurnProgress>().busy {
            return false;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the turn never finished"
        );
    }
}

#[test]
fn a_turn_runs_as_systems_over_many_frames_and_rebuilds_the_world_entities() {
    let dir = tempfile::tempdir().unwrap();
    let mut replies = turn_replies(1);
    replies.extend(turn_replies(2));
    let (mut app, save) = app(dir.path(), replies);
    settle(&mut app);
    {
        let world = app.world_mut();
        let mut present = world.query_filtered::<&Character, With<Present>>();
        let mut names: Vec<String> = present.iter(world).map(|c| c.name.clone()).collect();
        names.sort();
        assert_eq!(names.len(), 5, "the scenario's five people: {names:?}");
        let mut baked = world.query_filtered::<&Character, With<Baked>>();
        assert!(baked.iter(world).count() >= 1, "a baked NPC");
        let mut clocks = world.query::<&ClockState>();
        assert!(clocks.iter(world).count() >= 1, "the campaign's clocks");
        let mut relations = world.query::<&RelationEdge>();
        assert!(
            relations.iter(world).count() >= 1,
            "the campaign's relations"
        );
    }

    say(&mut app, "I step aboard and grab the rail.");
    let frames = settle(&mut app);
    assert!(
        frames > 3,
        "calls are polled across frames, never waited on: {frames}"
    );
    let world = app.world();
    let (transcript, prompt) = (
        world.resource::<Transcript>(),
        world.resource::<TurnPrompt>(),
    );
    let (log, scene) = (world.resource::<DebugLog>(), world.resource::<SceneView>());
    assert!(prompt.failure.is_none(), "{:?}", prompt.failure);
    assert!(
        transcript.entries.contains(&Entry::Narration(
            "Turn 1: you grip the cold rail as the lanterns flare.".into()
        )),
        "{:#?}",
        transcript.entries
    );
    assert!(
        transcript
            .entries
            .iter()
            .any(|e| matches!(e, Entry::Roll(r) if r.check == "action")),
        "the dice are shown"
    );
    // The model's three, and the engine's way on (#42: none of them goes anywhere).
    assert_eq!(prompt.choices.len(), 4, "{:?}", prompt.choices);
    assert!(
        prompt.choices[3].starts_with("Go to "),
        "{:?}",
        prompt.choices
    );
    assert!(log.lines.iter().any(|l| l.starts_with("stage resolve")));
    assert!(log.lines.iter().any(|l| l.starts_with("dice ")));
    // What the turn was shown from lore, with scores, for streamers and authors.
    assert!(log.lines.iter().any(|l| l.starts_with("recall (")));
    assert!(
        log.lines
            .iter()
            .any(|l| l.starts_with("  lore ") && l.contains(" score "))
    );
    assert_eq!(scene.scene_index, 1);

    // The extractor's observation is now a child of Hesper's entity.
    {
        let world = app.world_mut();
        let mut memories = world.query::<(&Memory, &ChildOf)>();
        let owners: Vec<Entity> = memories
            .iter(world)
            .filter(|(m, _)| m.observation.content.contains("The surveyor acted (1)"))
            .map(|(_, parent)| parent.parent())
            .collect();
        assert_eq!(owners.len(), 1);
        let owner = world.get::<Character>(owners[0]).unwrap();
        assert_eq!(owner.id, "hesper_vane");
    }

    // A choice by number, then the save holds both turns.
    say(&mut app, "2");
    settle(&mut app);
    assert_eq!(app.world().resource::<SceneView>().scene_index, 2);
    app.world_mut().resource_mut::<ActiveSession>().close();
    let store = Store::open(&save).unwrap();
    let info = store.session().unwrap();
    assert_eq!(info.scene_index, 2);
    let played = common::save::player_moves(&store);
    assert_eq!(
        played,
        ["I step aboard and grab the rail.", "Watch the quay"]
    );
}

#[test]
fn a_failed_stage_offers_retry_and_fallback_and_keeps_the_save_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    // Resolve answers garbage three times (first, repair, retry): the turn fails.
    let mut replies = vec![
        reply("resolve", "not json"),
        reply("resolve", "still not json"),
        reply("resolve", "never json"),
    ];
    replies.extend(
        turn_replies(1)
            .into_iter()
            .filter(|r| r.stage.as_deref() == Some("extract")),
    );
    let (mut app, save) = app(dir.path(), replies);
    settle(&mut app);
    say(&mut app, "I leap the gap.");
    settle(&mut app);
    let failure = app.world().resource::<TurnPrompt>().failure.clone();
    let failure = failure.expect("the failure is offered to the player");
    assert_eq!(failure.stage, "resolve");
    assert_eq!(
        Store::open(&save).unwrap().session().unwrap().scene_index,
        0
    );

    say(&mut app, "/fallback");
    settle(&mut app);
    let world = app.world();
    let (transcript, prompt) = (
        world.resource::<Transcript>(),
        world.resource::<TurnPrompt>(),
    );
    assert!(prompt.failure.is_none());
    assert_eq!(
        world.resource::<SceneView>().scene_index,
        1,
        "the fallback is a recorded turn"
    );
    assert!(
        matches!(transcript.entries.last(), Some(Entry::Narration(t)) if !t.is_empty()),
        "{:?}",
        transcript.entries.last()
    );
}

#[test]
fn input_during_a_turn_is_not_taken_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, save) = app(dir.path(), turn_replies(1));
    settle(&mut app);
    say(&mut app, "I step aboard.");
    app.update();
    say(&mut app, "I step aboard again.");
    settle(&mut app);
    let log = app.world().resource::<DebugLog>();
    assert!(log.lines.iter().any(|l| l.starts_with("input ignored")));
    drop(app);
    assert_eq!(
        Store::open(&save).unwrap().session().unwrap().scene_index,
        1
    );
}

/// A finished turn is committed on the async compute pool, never in a
/// frame: while the commit runs the session stays busy and input waits, as
/// during the turn; a session closed meanwhile lands the commit first, so
/// the turn is saved. (A commit is caught under way within a few tries: one
/// that lands in the frame it started in is not a failure.)
#[test]
fn a_commit_runs_off_the_frame_thread_and_lands_before_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    let (mut app, save) = app(dir.path(), (1..=6).flat_map(turn_replies).collect());
    settle(&mut app);
    let mut turns = 0;
    let mut caught = false;
    while !caught && turns < 3 {
        turns += 1;
        say(&mut app, &format!("I look at lantern {turns}."));
        caught = until_committing(&mut app);
        if caught {
            say(&mut app, "I wait.");
            app.update();
        }
        settle(&mut app);
    }
    assert!(caught, "a commit under way across frames");
    let log = app.world().resource::<DebugLog>();
    assert!(
        log.lines
            .iter()
            .any(|l| l == "input ignored while a turn runs: I wait."),
        "input waits for the commit"
    );
    assert_eq!(app.world().resource::<SceneView>().scene_index, turns);

    // Closing (leaving the screen, quitting) with a commit under way.
    let mut closed = false;
    for _ in 0..3 {
        turns += 1;
        say(&mut app, &format!("I look at lantern {turns}."));
        if until_committing(&mut app) {
            app.world_mut().resource_mut::<ActiveSession>().close();
            closed = true;
            break;
        }
        settle(&mut app);
    }
    assert!(closed, "a commit under way as the session closed");
    drop(app);
    let store = Store::open(&save).unwrap();
    let info = store.session().unwrap();
    assert_eq!(info.scene_index, turns, "the last turn was saved");
    let sittings = store.play_sessions().unwrap();
    assert_eq!(
        sittings.last().and_then(|s| s.turn_end),
        Some(info.turn_index),
        "and the sitting ended after it"
    );
}

/// #22: the view marks where each committed turn ends and which scene it
/// made (the backlog's "return here"), lists the save slots, and `/save`,
/// `/rewind` and `/load` move the story as the backlog and the slots window
/// ask them to.
#[test]
fn the_view_knows_each_turns_scene_and_the_save_slots() {
    let dir = tempfile::tempdir().unwrap();
    let mut replies = turn_replies(1);
    replies.extend(turn_replies(2));
    let (mut app, _) = app(dir.path(), replies);
    settle(&mut app);
    {
        let transcript = app.world().resource::<Transcript>();
        assert_eq!(
            transcript.read_through, 0,
            "a new session's opening is unread"
        );
        let scenes: Vec<i64> = transcript.moments.iter().map(|m| m.scene).collect();
        assert_eq!(scenes, [0], "the opening is scene 0");
    }
    say(&mut app, "I step aboard and grab the rail.");
    settle(&mut app);
    let first_choices = app.world().resource::<TurnPrompt>().choices.clone();
    assert!(!first_choices.is_empty());
    say(&mut app, "I call to the ferryman.");
    settle(&mut app);
    let transcript = app.world().resource::<Transcript>();
    let second_choices = app.world().resource::<TurnPrompt>().choices.clone();
    let scenes: Vec<i64> = transcript.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1, 2]);
    // Each turn's entries end at its moment, starting with the move.
    let first = transcript.moments[0].end;
    assert!(
        matches!(&transcript.entries[first], Entry::Intention { text, .. } if text == "I step aboard and grab the rail.")
    );
    assert_eq!(transcript.moments[2].end, transcript.entries.len());
    assert_eq!(
        transcript.turn_start(),
        transcript.moments[1].end,
        "the text box shows the last turn"
    );

    say(&mut app, "/save 3");
    settle(&mut app);
    let slots = &app.world().resource::<SaveSlots>().0;
    assert_eq!(slots.len(), 1);
    assert_eq!(
        (slots[0].slot.as_str(), slots[0].scene_index),
        ("slot-3", 2)
    );

    say(&mut app, "/rewind 1");
    settle(&mut app);
    let transcript = app.world().resource::<Transcript>();
    let scenes: Vec<i64> = transcript.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1], "the second move is off this branch");
    assert_eq!(
        app.world().resource::<TurnPrompt>().choices,
        first_choices,
        "the scene returned to offers its choices again"
    );
    assert_eq!(
        transcript.read_through, transcript.moments[1].end,
        "what was rebuilt from the save was read before"
    );

    say(&mut app, "/load 3");
    settle(&mut app);
    let transcript = app.world().resource::<Transcript>();
    let scenes: Vec<i64> = transcript.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1, 2], "back on the kept scene's branch");
    assert_eq!(
        app.world().resource::<TurnPrompt>().choices,
        second_choices,
        "and the kept scene's choices"
    );
    assert!(
        matches!(transcript.entries.last(), Some(Entry::Note(n)) if n == "Loaded save slot 3.")
    );
    assert_eq!(app.world().resource::<SceneView>().scene_index, 4);

    say(&mut app, "/load 9");
    settle(&mut app);
    let transcript = app.world().resource::<Transcript>();
    assert!(
        matches!(transcript.entries.last(), Some(Entry::Note(n)) if n.contains("save slot, 1 to 6")),
        "{:?}",
        transcript.entries.last()
    );
}
