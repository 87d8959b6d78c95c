//! Unit tests of the store on real SQLite files: branches, projections, sittings, replay reads.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{NewSession, SceneKind, Store, Summary, TurnCommit, TurnEvent};
use crate::rules::{Change, OpKind, StateOp, WorldState};
use crate::transcript::{Kind, Message, MessageId, Observation};

fn world() -> WorldState {
    serde_json::from_value(json!({
        "scene": {},
        "characters": {"player": {"stats": {}}, "ada": {"stats": {}}},
        "clocks": {"tide": {"id": "tide", "name": "The tide", "value": 0, "max": 6}},
        "relations": [{"a": "player", "b": "ada", "trust": 5}],
        "inventory": {"player": {"lantern": 1}},
        "facts": [{"subject": "ferry", "predicate": "lanterns", "object": "yellow"}],
        "threads": {"ledger": {"id": "ledger", "title": "The missing page", "status": "open"}}
    }))
    .unwrap()
}

fn place(location: &str) -> Map<String, Value> {
    json!({"location": location}).as_object().unwrap().clone()
}

fn message(turn_id: u64, kind: Kind, content: &str) -> Message {
    Message {
        id: MessageId { turn_id, seq: 1 },
        owner: "narrator".into(),
        kind,
        content: content.into(),
        target: None,
    }
}

fn new_save(path: &Path) -> Store {
    Store::create(
        path,
        &NewSession {
            id: "session-1".into(),
            campaign_id: "test".into(),
            campaign_path: "campaigns/test".into(),
            scenario_id: None,
            ruleset_id: "default-2d6".into(),
            characters: vec![
                ("player".into(), "user_persona".into()),
                ("ada".into(), "npc".into()),
            ],
            small_model_key: "small".into(),
            large_model_key: "large".into(),
            calibration: json!({}),
            prompt_versions: json!({}),
            seed: 7,
            scene: place("quay"),
            world: world(),
            messages: vec![message(0, Kind::Narration, "Fog on the quay.")],
        },
    )
    .unwrap()
}

fn change(op: OpKind, path: &str) -> Change {
    Change {
        op: StateOp::new(op, path, 1),
        before: Value::Null,
        after: Value::Null,
        triggered: vec![],
    }
}

/// Turn `n` from the current scene: its world, the changes it names, one
/// narration and one of Ada's observations.
fn turn(store: &Store, n: u64, world: WorldState, changes: Vec<Change>) -> TurnCommit {
    TurnCommit {
        user_action_id: format!("act-{n}"),
        expected_scene_id: store.session().unwrap().current_scene_id,
        kind: SceneKind::Play,
        action_text: format!("action {n}"),
        parent_scene_id: None,
        scene: place("quay"),
        world,
        changes,
        messages: vec![message(n, Kind::Narration, &format!("narration {n}"))],
        actions: Vec::new(),
        observations: vec![Observation {
            character_id: "ada".into(),
            content: format!("saw {n}"),
            importance: 3,
            reinforcement_count: 0,
            created_minute: 0.0,
        }],
        events: Vec::new(),
        play_minutes: 0.0,
        result: json!({"choices": [format!("choice after {n}")]}),
        memory: None,
    }
}

fn plain_turn(store: &Store, n: u64) -> TurnCommit {
    turn(store, n, store.current_scene().unwrap().world, Vec::new())
}

fn text(store: &Store, sql: &str) -> String {
    store
        .conn
        .query_row(sql, [], |r| r.get::<_, String>(0))
        .unwrap()
}

fn count(store: &Store, sql: &str) -> i64 {
    store.query_i64(sql).unwrap()
}

#[test]
fn a_commit_rewrites_only_the_world_rows_its_changes_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let mut w = world();
    w.clocks.get_mut("tide").unwrap().value = 2;
    w.inventory
        .get_mut("player")
        .unwrap()
        .insert("lantern".into(), 0);
    w.inventory
        .get_mut("player")
        .unwrap()
        .insert("rope".into(), 2);
    w.threads.get_mut("ledger").unwrap().status = "resolved".into();
    w.facts[0].object = json!("red");
    let changes = vec![
        change(OpKind::TickClock, "clocks.tide"),
        change(OpKind::Inventory, "inventory.player.lantern"),
        change(OpKind::Inventory, "inventory.player.rope"),
        change(OpKind::Thread, "threads.ledger.status"),
    ];
    let t = turn(&store, 1, w, changes);
    store.commit_turn(&t).unwrap();
    assert_eq!(
        count(&store, "SELECT value FROM clocks WHERE id = 'tide'"),
        2
    );
    // A quantity of nothing is no row; a new item is one.
    assert_eq!(
        count(
            &store,
            "SELECT count(*) FROM inventory WHERE item_id = 'lantern'"
        ),
        0
    );
    assert_eq!(
        count(&store, "SELECT qty FROM inventory WHERE item_id = 'rope'"),
        2
    );
    assert_eq!(
        text(&store, "SELECT status FROM threads WHERE id = 'ledger'"),
        "resolved"
    );
    // The fact changed in the world but no change named it: its row is as it was.
    assert_eq!(
        text(
            &store,
            "SELECT object_json FROM facts WHERE subject_id = 'ferry'"
        ),
        "\"yellow\""
    );
}

#[test]
fn a_rewind_rebuilds_the_world_tables_from_the_scene_it_returns_to() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let mut w = world();
    w.clocks.get_mut("tide").unwrap().value = 5;
    w.inventory
        .get_mut("player")
        .unwrap()
        .insert("lantern".into(), 0);
    let changes = vec![
        change(OpKind::TickClock, "clocks.tide"),
        change(OpKind::Inventory, "inventory.player.lantern"),
    ];
    let t = turn(&store, 1, w, changes);
    store.commit_turn(&t).unwrap();
    assert_eq!(count(&store, "SELECT count(*) FROM inventory"), 0);
    let back = store.rewind(0, "rewind-1").unwrap();
    assert_eq!(back.scene_index, 2);
    assert_eq!(
        count(&store, "SELECT value FROM clocks WHERE id = 'tide'"),
        0
    );
    assert_eq!(
        count(
            &store,
            "SELECT qty FROM inventory WHERE item_id = 'lantern'"
        ),
        1
    );
    assert_eq!(count(&store, "SELECT count(*) FROM facts"), 1);
    assert_eq!(count(&store, "SELECT count(*) FROM threads"), 1);
}

#[test]
fn a_rewind_branches_and_each_branch_reads_only_its_own_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    for n in 1..=2 {
        let t = plain_turn(&store, n);
        store.commit_turn(&t).unwrap();
    }
    let rewound = store.rewind(1, "rewind-1").unwrap();
    // The scene returned to offers its choices again.
    assert_eq!(rewound.result["choices"], json!(["choice after 1"]));
    let t = plain_turn(&store, 3);
    store.commit_turn(&t).unwrap();

    let copy = store.scene("scene-00003").unwrap();
    assert_eq!(copy.kind, SceneKind::Rewind);
    assert_eq!(copy.parent_id.as_deref(), Some("scene-00001"));
    assert_eq!(
        store.branch().unwrap(),
        ["scene-00000", "scene-00001", "scene-00003", "scene-00004"]
    );
    assert_eq!(
        store.branch_to("scene-00002").unwrap(),
        ["scene-00000", "scene-00001", "scene-00002"]
    );
    let words = |messages: Vec<Message>| -> Vec<String> {
        messages.into_iter().map(|m| m.content).collect()
    };
    assert_eq!(
        words(store.messages().unwrap()),
        ["Fog on the quay.", "narration 1", "narration 3"]
    );
    assert_eq!(
        words(store.messages_at("scene-00002").unwrap()),
        ["Fog on the quay.", "narration 1", "narration 2"]
    );
    let seen = |observations: Vec<Observation>| -> Vec<String> {
        observations.into_iter().map(|o| o.content).collect()
    };
    assert_eq!(seen(store.observations("ada").unwrap()), ["saw 1", "saw 3"]);
    assert_eq!(
        seen(store.observations_at("scene-00002").unwrap()),
        ["saw 1", "saw 2"]
    );
    assert!(store.observations("player").unwrap().is_empty());
    // Turn 2's scene is off the branch: it cannot be rewound to by index.
    assert_eq!(store.turn_scenes().unwrap().get(&2), None);
    assert_eq!(store.turn_scenes().unwrap().get(&3), Some(&4));
}

#[test]
fn a_recap_and_its_summary_are_kept_together_and_summaries_list_by_turns() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let sitting = store.start_play_session().unwrap();
    assert_eq!((sitting.turn_start, sitting.turn_end), (1, None));
    let summary = |text: &str, turn_end| Summary {
        scope: "compression".into(),
        scope_id: "stream".into(),
        text: text.into(),
        turn_start: 1,
        turn_end,
    };
    store.add_summary(&summary("later", 9)).unwrap();
    store
        .record_recap(sitting.id, "Previously…", Some(&summary("earlier", 4)))
        .unwrap();
    let texts: Vec<String> = store
        .summaries()
        .unwrap()
        .into_iter()
        .map(|s| s.text)
        .collect();
    assert_eq!(texts, ["earlier", "later"]);
    let t = plain_turn(&store, 1);
    store.commit_turn(&t).unwrap();
    // A new sitting closes the one left open at the turns it saw.
    let next = store.start_play_session().unwrap();
    let sittings = store.play_sessions().unwrap();
    assert_eq!(sittings.len(), 2);
    assert_eq!(sittings[0].recap.as_deref(), Some("Previously…"));
    assert_eq!(sittings[0].turn_end, Some(1));
    assert_eq!((next.turn_start, sittings[1].turn_end), (2, None));
}

#[test]
fn recalled_lore_reads_the_lore_of_each_recall_on_the_branch() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = new_save(&dir.path().join("s.db"));
    let hit = |id: &str| {
        json!({
            "chunk_id": id, "file_path": "lore/ferry.md", "section_path": "Ferry",
            "text": "The ferry runs at dusk.", "score": 0.5, "semantic": 0.5,
            "keyword": 0.0, "metadata": false, "token_count": 5
        })
    };
    for (n, payload) in (1..).zip([
        // As the session writes it ...
        json!({"query": "q", "lore": [hit("lore-1")], "memories": [],
               "episodic_bonus": false, "took_ms": 1.0}),
        // ... and one with only its lore: the store reads nothing else of a recall.
        json!({"lore": [hit("lore-2"), hit("lore-3")]}),
    ]) {
        let mut t = plain_turn(&store, n);
        t.events
            .push(TurnEvent::engine("recall", "memory_recall", payload));
        store.commit_turn(&t).unwrap();
    }
    let ids: Vec<String> = store
        .recalled_lore()
        .unwrap()
        .into_iter()
        .map(|h| h.chunk_id)
        .collect();
    assert_eq!(ids, ["lore-1", "lore-2", "lore-3"]);
    // The stored turn replays with its events and messages.
    let stored = store.stored_turn("scene-00002").unwrap();
    assert_eq!(stored.user_action_id, "act-2");
    assert_eq!(stored.scene_before_id, "scene-00001");
    assert_eq!(stored.events.len(), 1);
    assert_eq!(stored.messages.len(), 1);
    assert_eq!(stored.messages[0].content, "narration 2");
}
