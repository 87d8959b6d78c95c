//! The save file against seed 003's required invariants, on real SQLite files.
//!
//! The save file against seed 003's required invariants, on real SQLite files: one scene advance
//! per concurrent pair, idempotency, monotonic scenes, the current pointer, one edge per pair,
//! rewinds that branch, damaged saves (SIGKILL during commits: `store_crash.rs`).
#![cfg(feature = "store")]

mod common;

use std::sync::{Arc, Barrier};

use common::save::{count, new_save, scene, turn, world};
use loreloom::store::{SceneKind, Store, StoreError};
use serde_json::json;

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

/// #22: a save slot keeps a scene of any branch; loading it branches from
/// there as a rewind does, so the branch left behind stays in the file. The
/// backlog knows which scene each turn made, and what lore each turn recalled.
#[test]
fn save_slots_keep_scenes_across_branches_and_the_backlog_knows_each_turns_scene() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.db");
    let mut store = new_save(&path);
    for n in 1..=3 {
        let mut t = turn(&store, &format!("act-{n}"), n);
        let hit = loreloom::memory::LoreHit {
            chunk_id: format!("lore-{n}"),
            file_path: "lore/ferry.md".into(),
            section_path: "Ferry > Lanterns".into(),
            text: format!("lore text {n}"),
            score: 0.5,
            semantic: 0.5,
            keyword: 0.0,
            metadata: false,
            token_count: 4,
        };
        let recalled = loreloom::session::recalled::Recalled {
            lore: vec![hit],
            ..Default::default()
        };
        t.events.push(loreloom::store::TurnEvent::engine(
            "recall",
            "memory_recall",
            serde_json::to_value(&recalled).unwrap(),
        ));
        store.commit_turn(&t).unwrap();
    }
    let scenes = store.turn_scenes().unwrap();
    assert_eq!(
        scenes.into_iter().collect::<Vec<_>>(),
        [(0, 0), (1, 1), (2, 2), (3, 3)]
    );
    let kept = store.bookmark("slot-2", "the quay, scene 3").unwrap();
    assert_eq!(
        (kept.scene_index, kept.scene_id.as_str()),
        (3, "scene-00003")
    );
    // A slot saved again keeps the newer scene.
    store.rewind(1, "rewind-1").unwrap();
    assert_eq!(
        store
            .recalled_lore()
            .unwrap()
            .iter()
            .map(|h| h.chunk_id.as_str())
            .collect::<Vec<_>>(),
        ["lore-1"],
        "the rewound branch recalled only the first turn's lore"
    );
    store.bookmark("slot-5", "back at the start").unwrap();
    let err = store.load_bookmark("slot-4", "load-empty").unwrap_err();
    assert!(
        matches!(&err, StoreError::NoSlot { slot, .. } if slot == "slot-4"),
        "{err}"
    );
    // Slot 2 keeps a scene of the branch the rewind left: loading it branches there.
    let c = store.load_bookmark("slot-2", "load-2").unwrap();
    assert_eq!(c.scene_index, 5);
    assert_eq!(
        store.branch().unwrap(),
        [
            "scene-00000",
            "scene-00001",
            "scene-00002",
            "scene-00003",
            "scene-00005"
        ]
    );
    assert_eq!(store.current_scene().unwrap().state, scene(3));
    assert_eq!(store.recalled_lore().unwrap().len(), 3);
    // Both slots survive reopening the file, by slot name.
    drop(store);
    let store = Store::open(&path).unwrap();
    let slots: Vec<(String, i64)> = store
        .bookmarks()
        .unwrap()
        .into_iter()
        .map(|b| (b.slot, b.scene_index))
        .collect();
    assert_eq!(slots, [("slot-2".to_owned(), 3), ("slot-5".to_owned(), 4)]);
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

/// #44: a crafted save that carries a trigger (which would delete the
/// player's messages on every turn) is refused, its rows untouched; one whose
/// scenes' parents form a cycle is a clear error at once, not a walk
/// without end.
#[test]
fn a_save_with_a_trigger_or_a_cycle_of_scenes_is_refused_not_obeyed() {
    let dir = tempfile::tempdir().unwrap();
    let rigged = dir.path().join("rigged.db");
    let store = new_save(&rigged);
    turn(&store, "a1", 1);
    turn(&store, "a2", 2);
    let messages = count(&store, "SELECT count(*) FROM messages");
    drop(store);
    rusqlite::Connection::open(&rigged)
        .unwrap()
        .execute_batch("CREATE TRIGGER wipe AFTER INSERT ON turns BEGIN DELETE FROM messages; END;")
        .unwrap();
    let err = Store::open(&rigged).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("trigger wipe"), "{err}");
    let conn = rusqlite::Connection::open(&rigged).unwrap();
    let kept: i64 = conn
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(kept, messages);

    let looped = dir.path().join("looped.db");
    let store = new_save(&looped);
    turn(&store, "a1", 1);
    turn(&store, "a2", 2);
    drop(store);
    // The opening scene's parent becomes the last scene.
    rusqlite::Connection::open(&looped)
        .unwrap()
        .execute_batch(
            "UPDATE scenes SET parent_scene_id = (SELECT id FROM scenes ORDER BY scene_index DESC LIMIT 1)
             WHERE parent_scene_id IS NULL",
        )
        .unwrap();
    let started = std::time::Instant::now();
    let store = Store::open(&looped).unwrap();
    let err = store.branch().unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    assert!(err.to_string().contains("lead back to themselves"), "{err}");
}
