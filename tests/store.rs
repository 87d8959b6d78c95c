//! The save file against seed 003's required invariants, on real SQLite files: one scene advance per concurrent pair, idempotency, monotonic scenes, the current pointer, one edge per pair, rewinds that branch, damaged saves, and SIGKILL during commits.
#![cfg(feature = "store")]

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use loreloom::rules::{Change, OpKind, StateOp, WorldState};
use loreloom::session::stream::{NARRATOR, SYSTEM};
use loreloom::session::{Kind, Message, MessageId, Observation};
use loreloom::store::{
    ActionRecord, NewSession, SceneKind, Store, StoreError, TurnCommit, TurnEvent,
};
use serde_json::{Map, Value, json};

fn world() -> WorldState {
    serde_json::from_value(json!({
        "scene": {},
        "characters": {"player": {"stats": {}}, "ada": {"stats": {}}, "bo": {"stats": {}}},
        "clocks": {"tide": {"id": "tide", "name": "The tide", "value": 0, "max": 6}},
        "relations": [{"a": "player", "b": "ada", "trust": 5}, {"a": "bo", "b": "ada", "tension": 2}],
        "inventory": {"player": {"lantern": 1}},
        "facts": [{"subject": "ferry", "predicate": "lanterns", "object": "yellow"}],
        "threads": {"ledger": {"id": "ledger", "title": "The missing page"}}
    }))
    .unwrap()
}

fn scene(minute: i64) -> Map<String, Value> {
    json!({"location": "quay", "minute": minute})
        .as_object()
        .unwrap()
        .clone()
}

fn new_save(path: &Path) -> Store {
    let opening = Message {
        id: MessageId { turn_id: 0, seq: 1 },
        owner: NARRATOR.into(),
        kind: Kind::Narration,
        content: "The coach door opens on fog.".into(),
        target: None,
    };
    Store::create(
        path,
        &NewSession {
            id: "session-1".into(),
            campaign_id: "drowned-reach".into(),
            campaign_path: "campaigns/drowned-reach".into(),
            scenario_id: Some("green_night".into()),
            ruleset_id: "default-2d6".into(),
            characters: vec![
                ("player".into(), "user_persona".into()),
                ("ada".into(), "npc".into()),
                ("bo".into(), "npc".into()),
            ],
            small_model_key: "local-small".into(),
            large_model_key: "local-large".into(),
            calibration: json!({"tone": "melancholy", "lines": ["harm to children"]}),
            prompt_versions: json!({"narrator": "v1"}),
            seed: u64::MAX - 7,
            scene: scene(0),
            world: world(),
            messages: vec![opening],
        },
    )
    .unwrap()
}

/// A turn the way the pipeline commits one: intention, narration, an action, an observation, an event, a clock tick.
fn turn(store: &Store, action_id: &str, n: u64) -> TurnCommit {
    let session = store.session().unwrap();
    let current = store.current_scene().unwrap();
    let mut w = current.world.clone();
    w.clocks.get_mut("tide").unwrap().value = i64::try_from(n).unwrap().min(6);
    let turn_id = u64::try_from(session.turn_index).unwrap() + 1;
    let msg = |seq, owner: &str, kind, content: String| Message {
        id: MessageId { turn_id, seq },
        owner: owner.into(),
        kind,
        content,
        target: None,
    };
    TurnCommit {
        user_action_id: action_id.into(),
        expected_scene_id: session.current_scene_id,
        kind: SceneKind::Play,
        action_text: format!("action {n}"),
        parent_scene_id: None,
        scene: scene(i64::try_from(n).unwrap()),
        world: w,
        changes: vec![Change {
            op: StateOp::new(OpKind::TickClock, "clocks.tide", 1),
            before: json!(0),
            after: json!(1),
            triggered: vec![],
        }],
        messages: vec![
            msg(1, "player", Kind::Intention, format!("intention {n}")),
            msg(2, NARRATOR, Kind::Narration, format!("narration {n}")),
            msg(3, SYSTEM, Kind::System, format!("extractor {n}")),
        ],
        actions: vec![ActionRecord {
            character_id: "player".into(),
            action_text: format!("action {n}"),
            resolved_outcome: json!({"band": "partial"}),
        }],
        observations: vec![Observation {
            character_id: "ada".into(),
            content: format!("saw {n}"),
            importance: 3,
            reinforcement_count: 0,
            created_minute: f64::from(u32::try_from(n).unwrap()),
        }],
        events: vec![TurnEvent {
            event_type: "tool_call".into(),
            step_name: "ruleset_resolution".into(),
            payload: json!({"expression": "2d6+1", "rolls": [3, 4], "seed": 42}),
            model_key: None,
            prompt_version: None,
        }],
        play_minutes: f64::from(u32::try_from(n).unwrap()) * 2.0,
        result: json!({"narration": format!("narration {n}")}),
    }
}

fn count(store: &Store, sql: &str) -> i64 {
    store.query_i64(sql).unwrap()
}

#[test]
fn a_new_save_reopens_with_its_session_scene_and_opening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reach.db");
    drop(new_save(&path));
    let store = Store::open(&path).unwrap();
    let s = store.session().unwrap();
    assert_eq!(s.small_model_key, "local-small");
    assert_eq!(s.large_model_key, "local-large");
    assert_eq!(s.seed, u64::MAX - 7, "seeds survive the i64 column");
    assert_eq!(s.character_ids, ["player", "ada", "bo"]);
    assert_eq!(s.calibration["tone"], "melancholy");
    let current = store.current_scene().unwrap();
    assert_eq!(current.scene_index, 0);
    assert_eq!(current.kind, SceneKind::Start);
    assert_eq!(current.world, world());
    assert_eq!(
        store.messages().unwrap()[0].content,
        "The coach door opens on fog."
    );
    assert_eq!(count(&store, "SELECT count(*) FROM clocks"), 1);
    assert_eq!(count(&store, "SELECT count(*) FROM facts"), 1);
    assert_eq!(
        count(&store, "PRAGMA user_version"),
        loreloom::store::SCHEMA_VERSION
    );
}

#[test]
fn turns_advance_one_scene_each_and_the_pointer_follows() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    for n in 1..=5 {
        let t = turn(&store, &format!("act-{n}"), n);
        let c = store.commit_turn(&t).unwrap();
        assert!(!c.duplicate);
        assert_eq!(c.scene_index, i64::try_from(n).unwrap());
        assert_eq!(store.session().unwrap().current_scene_id, c.scene_id);
    }
    // scene_index strictly monotonic; current_scene_id the latest.
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM scenes a JOIN scenes b ON a.session_id = b.session_id
             AND a.scene_index >= b.scene_index AND a.created_at < b.created_at"
        ),
        0
    );
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM sessions WHERE current_scene_id =
               (SELECT id FROM scenes ORDER BY scene_index DESC LIMIT 1)"
        ),
        1
    );
    assert_eq!(store.messages().unwrap().len(), 1 + 5 * 3);
    assert_eq!(store.observations("ada").unwrap().len(), 5);
    assert_eq!(
        count(&store, "SELECT value FROM clocks WHERE id = 'tide'"),
        5
    );
    assert!((store.session().unwrap().play_minutes - 10.0).abs() < 1e-9);
}

#[test]
fn the_same_submission_twice_commits_once_and_returns_the_stored_result() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let t = turn(&store, "act-1", 1);
    let first = store.commit_turn(&t).unwrap();
    let again = store.commit_turn(&t).unwrap();
    assert!(again.duplicate);
    assert_eq!(again.scene_id, first.scene_id);
    assert_eq!(again.result, json!({"narration": "narration 1"}));
    assert_eq!(count(&store, "SELECT count(*) FROM scenes"), 2);
    assert_eq!(count(&store, "SELECT count(*) FROM messages"), 4);
}

#[test]
fn a_stale_turn_is_a_retryable_conflict_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let stale = turn(&store, "act-a", 1);
    store.commit_turn(&turn(&store, "act-b", 1)).unwrap();
    let err = store.commit_turn(&stale).unwrap_err();
    assert!(err.is_retryable(), "{err}");
    assert!(err.to_string().contains("s.db"), "names the save: {err}");
    assert!(matches!(err, StoreError::Conflict { .. }));
    assert_eq!(count(&store, "SELECT count(*) FROM scenes"), 2);
    assert_eq!(count(&store, "SELECT count(*) FROM turns"), 1);
}

#[test]
fn simultaneous_turns_on_one_session_commit_one_scene_advance() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    drop(new_save(&path));
    for round in 0..10 {
        let barrier = Arc::new(Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|who| {
                let (path, barrier) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let mut store = Store::open(&path).unwrap();
                    let t = turn(&store, &format!("round-{round}-player-{who}"), round + 1);
                    barrier.wait();
                    store.commit_turn(&t)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let conflicts = results
            .iter()
            .filter(|r| matches!(r, Err(StoreError::Conflict { .. })))
            .count();
        assert_eq!((ok, conflicts), (1, 1), "round {round}: {results:?}");
    }
    let store = Store::open(&path).unwrap();
    assert_eq!(count(&store, "SELECT count(*) FROM scenes"), 11);
    assert_eq!(store.session().unwrap().scene_index, 10);
}

#[test]
fn relations_are_one_normalized_edge_per_unordered_pair_per_scene() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let mut t = turn(&store, "act-1", 1);
    // The same pair written both ways round collapses into one edge.
    t.world
        .relations
        .push(serde_json::from_value(json!({"a": "ada", "b": "player", "trust": 7})).unwrap());
    store.commit_turn(&t).unwrap();
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM scene_relations WHERE character_a_id >= character_b_id"
        ),
        0
    );
    assert_eq!(
        count(
            &store,
            "SELECT max(n) FROM (SELECT count(*) AS n FROM scene_relations
               GROUP BY scene_id, character_a_id, character_b_id)"
        ),
        1
    );
    assert_eq!(
        count(
            &store,
            "SELECT trust FROM scene_relations WHERE scene_id = 'scene-00001'
               AND character_a_id = 'ada' AND character_b_id = 'player'"
        ),
        7
    );
}

#[test]
fn a_rewind_branches_from_an_earlier_scene_and_the_branch_forgets_what_came_after() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    for n in 1..=3 {
        store
            .commit_turn(&turn(&store, &format!("act-{n}"), n))
            .unwrap();
    }
    let c = store.rewind(1, "rewind-1").unwrap();
    assert_eq!(c.scene_index, 4, "indices keep increasing across branches");
    let now = store.current_scene().unwrap();
    assert_eq!(now.kind, SceneKind::Rewind);
    assert_eq!(now.parent_id.as_deref(), Some("scene-00001"));
    assert_eq!(now.state, scene(1));
    assert_eq!(
        store.branch().unwrap(),
        ["scene-00000", "scene-00001", "scene-00004"]
    );
    let texts: Vec<String> = store
        .messages()
        .unwrap()
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert!(texts.contains(&"narration 1".to_owned()));
    assert!(
        !texts
            .iter()
            .any(|t| t == "narration 2" || t == "narration 3")
    );
    assert_eq!(store.observations("ada").unwrap().len(), 1);
    assert_eq!(
        count(&store, "SELECT value FROM clocks WHERE id = 'tide'"),
        1
    );
    // Play goes on from the rewound scene.
    let c = store.commit_turn(&turn(&store, "act-after", 9)).unwrap();
    assert_eq!(c.scene_index, 5);
    assert_eq!(store.branch().unwrap().len(), 4);
    let err = store.rewind(3, "rewind-2").unwrap_err();
    assert!(
        matches!(err, StoreError::NoScene { index: 3, .. }),
        "scene 3 is on the abandoned branch: {err}"
    );
}

#[test]
fn a_turn_that_fails_midway_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let mut t = turn(&store, "act-1", 1);
    t.observations[0].importance = 9; // breaks the CHECK after the scene and messages are inserted
    let err = store.commit_turn(&t).unwrap_err();
    assert!(err.to_string().contains("writing observations"), "{err}");
    assert_eq!(count(&store, "SELECT count(*) FROM scenes"), 1);
    assert_eq!(count(&store, "SELECT count(*) FROM messages"), 1);
    assert_eq!(count(&store, "SELECT count(*) FROM turns"), 0);
    assert_eq!(store.session().unwrap().scene_index, 0);
    // And the same turn, fixed, commits.
    t.observations[0].importance = 3;
    assert_eq!(store.commit_turn(&t).unwrap().scene_index, 1);
}

#[test]
fn damaged_foreign_and_future_saves_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"this is not a database at all, not even close").unwrap();
    let err = Store::open(&junk).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("junk.db"), "{err}");

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let err = Store::open(&foreign).unwrap_err();
    assert!(err.to_string().contains("no Loreloom schema"), "{err}");

    let future = dir.path().join("future.db");
    drop(new_save(&future));
    rusqlite::Connection::open(&future)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = Store::open(&future).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");

    let missing = Store::open(&dir.path().join("missing.db")).unwrap_err();
    assert!(missing.to_string().contains("missing.db"));
    assert!(
        !dir.path().join("missing.db").exists(),
        "opening never creates a save"
    );
}

/// The child of the crash test: commit turns as fast as possible until killed.
#[test]
#[ignore = "run by crash_safety_under_sigkill as a child process"]
fn crash_child() {
    let Some(path) = std::env::var_os("LORELOOM_CRASH_SAVE") else {
        return;
    };
    let mut store = Store::open(Path::new(&path)).unwrap();
    for n in 1.. {
        let t = turn(&store, &format!("{}-{n}", std::process::id()), n);
        store.commit_turn(&t).unwrap();
    }
}

#[test]
fn crash_safety_under_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    drop(new_save(&path));
    let exe = std::env::current_exe().unwrap();
    let mut total_turns = 0;
    for (round, delay_ms) in [35u64, 60, 90, 20, 130, 75, 45, 110]
        .into_iter()
        .enumerate()
    {
        let mut child = Command::new(&exe)
            .args(["--ignored", "--exact", "crash_child", "--nocapture"])
            .env("LORELOOM_CRASH_SAVE", &path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let store = Store::open(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(store.integrity_check().unwrap(), "ok", "round {round}");
        let turns = count(&store, "SELECT count(*) FROM turns");
        let s = store.session().unwrap();
        // Whole turns only: every turn has its scene, its 3 messages, its action,
        // observation and event; the session points at the last one.
        assert_eq!(count(&store, "SELECT count(*) FROM scenes"), turns + 1);
        assert_eq!(
            count(&store, "SELECT count(*) FROM messages"),
            1 + 3 * turns
        );
        assert_eq!(count(&store, "SELECT count(*) FROM actions"), turns);
        assert_eq!(count(&store, "SELECT count(*) FROM observations"), turns);
        assert_eq!(count(&store, "SELECT count(*) FROM turn_events"), turns);
        assert_eq!(s.turn_index, turns);
        assert_eq!(s.scene_index, turns);
        assert!(turns >= total_turns, "nothing committed is lost");
        eprintln!("round {round}: killed after {delay_ms} ms; {turns} whole turns in the save");
        total_turns = turns;
    }
    assert!(
        total_turns > 0,
        "the child committed turns before being killed"
    );
}
