//! The session turn pipeline as ECS systems, headless: input → model calls polled frame by frame → commit → entities rebuilt, with a scripted model and a real save.

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
    ActiveSession, Baked, Character, ClockState, Entry, Memory, Present, RelationEdge,
    SessionInput, SessionView,
};
use loreloom::llm::scripted::Reply;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::saves::{NewSave, create_save};
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
        let busy = app.world().resource::<SessionView>().busy;
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
    let view = app.world().resource::<SessionView>();
    assert!(view.failure.is_none(), "{:?}", view.failure);
    assert!(
        view.entries.contains(&Entry::Narration(
            "Turn 1: you grip the cold rail as the lanterns flare.".into()
        )),
        "{:#?}",
        view.entries
    );
    assert!(
        view.entries
            .iter()
            .any(|e| matches!(e, Entry::Roll(r) if r.check == "action")),
        "the dice are shown"
    );
    assert_eq!(view.choices.len(), 3);
    assert!(view.log.iter().any(|l| l.starts_with("stage resolve")));
    assert!(view.log.iter().any(|l| l.starts_with("dice ")));
    // What the turn was shown from lore, with scores, for streamers and authors.
    assert!(view.log.iter().any(|l| l.starts_with("recall (")));
    assert!(
        view.log
            .iter()
            .any(|l| l.starts_with("  lore ") && l.contains(" score "))
    );
    assert_eq!(view.scene_index, 1);

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
    assert_eq!(app.world().resource::<SessionView>().scene_index, 2);
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
    let failure = app.world().resource::<SessionView>().failure.clone();
    let failure = failure.expect("the failure is offered to the player");
    assert_eq!(failure.stage, "resolve");
    assert_eq!(
        Store::open(&save).unwrap().session().unwrap().scene_index,
        0
    );

    say(&mut app, "/fallback");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    assert!(view.failure.is_none());
    assert_eq!(view.scene_index, 1, "the fallback is a recorded turn");
    assert!(
        matches!(view.entries.last(), Some(Entry::Narration(t)) if !t.is_empty()),
        "{:?}",
        view.entries.last()
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
    let view = app.world().resource::<SessionView>();
    assert!(view.log.iter().any(|l| l.starts_with("input ignored")));
    drop(app);
    assert_eq!(
        Store::open(&save).unwrap().session().unwrap().scene_index,
        1
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
        let view = app.world().resource::<SessionView>();
        assert_eq!(view.read_through, 0, "a new session's opening is unread");
        let scenes: Vec<i64> = view.moments.iter().map(|m| m.scene).collect();
        assert_eq!(scenes, [0], "the opening is scene 0");
    }
    say(&mut app, "I step aboard and grab the rail.");
    settle(&mut app);
    let first_choices = app.world().resource::<SessionView>().choices.clone();
    assert!(!first_choices.is_empty());
    say(&mut app, "I call to the ferryman.");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    let second_choices = view.choices.clone();
    let scenes: Vec<i64> = view.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1, 2]);
    // Each turn's entries end at its moment, starting with the move.
    let first = view.moments[0].end;
    assert!(
        matches!(&view.entries[first], Entry::Intention { text, .. } if text == "I step aboard and grab the rail.")
    );
    assert_eq!(view.moments[2].end, view.entries.len());
    assert_eq!(
        view.turn_start(),
        view.moments[1].end,
        "the text box shows the last turn"
    );

    say(&mut app, "/save 3");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    assert_eq!(view.slots.len(), 1);
    assert_eq!(
        (view.slots[0].slot.as_str(), view.slots[0].scene_index),
        ("slot-3", 2)
    );

    say(&mut app, "/rewind 1");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    let scenes: Vec<i64> = view.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1], "the second move is off this branch");
    assert_eq!(
        view.choices, first_choices,
        "the scene returned to offers its choices again"
    );
    assert_eq!(
        view.read_through, view.moments[1].end,
        "what was rebuilt from the save was read before"
    );

    say(&mut app, "/load 3");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    let scenes: Vec<i64> = view.moments.iter().map(|m| m.scene).collect();
    assert_eq!(scenes, [0, 1, 2], "back on the kept scene's branch");
    assert_eq!(view.choices, second_choices, "and the kept scene's choices");
    assert!(matches!(view.entries.last(), Some(Entry::Note(n)) if n == "Loaded save slot 3."));
    assert_eq!(view.scene_index, 4);

    say(&mut app, "/load 9");
    settle(&mut app);
    let view = app.world().resource::<SessionView>();
    assert!(
        matches!(view.entries.last(), Some(Entry::Note(n)) if n.contains("save slot, 1 to 6")),
        "{:?}",
        view.entries.last()
    );
}
