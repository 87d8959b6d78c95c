//! A save for store tests: a session with a few characters, and turns as the pipeline commits them.

use loreloom::memory::{MemoryEvent, Significance};
use std::path::Path;

use loreloom::rules::{Change, OpKind, StateOp, WorldState};
use loreloom::store::{ActionRecord, NewSession, SceneKind, Store, TurnCommit, TurnEvent};
use loreloom::transcript::stream::{NARRATOR, SYSTEM};
use loreloom::transcript::{Kind, Message, MessageId, Observation};
use serde_json::{Map, Value, json};

pub fn world() -> WorldState {
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

pub fn scene(minute: i64) -> Map<String, Value> {
    json!({"location": "quay", "minute": minute})
        .as_object()
        .unwrap()
        .clone()
}

pub fn new_save(path: &Path) -> Store {
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
pub fn turn(store: &Store, action_id: &str, n: u64) -> TurnCommit {
    let session = store.session().unwrap();
    let current = store.current_scene().unwrap();
    let mut w = current.world.clone();
    if let Some(tide) = w.clocks.get_mut("tide") {
        tide.value = i64::try_from(n).unwrap().min(6);
    }
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
        memory: Some((
            MemoryEvent {
                summary: format!("memory {n}"),
                characters: vec!["player".into(), "ada".into()],
                location: "quay".into(),
                significance: Significance::Medium,
                episodic: n.is_multiple_of(5),
                action_type: "action".into(),
                turn: n,
                play_session: 1,
                scene_id: String::new(),
            },
            Some(vec![0.05; loreloom::memory::DIM]),
        )),
    }
}

pub fn count(store: &Store, sql: &str) -> i64 {
    store.query_i64(sql).unwrap()
}

/// What the player wrote or picked on the current branch, in order.
pub fn player_moves(store: &Store) -> Vec<String> {
    store
        .messages()
        .unwrap()
        .into_iter()
        .filter(|m| m.owner == "player")
        .map(|m| m.content)
        .collect()
}

/// A real save of the minimal campaign at `path` (made as `session new`
/// makes one, with `calibration`) with `turns` turns committed onto it, its
/// WAL checkpointed so the file alone is the save.
pub fn played_save(
    path: &Path,
    seed: u64,
    calibration: loreloom::session::turn::Calibration,
    turns: u64,
) {
    loreloom::session::save_files::create_save(&loreloom::session::save_files::NewSave {
        campaign: Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/minimal-lighthouse"),
        save: Some(path.to_path_buf()),
        scenario: None,
        seed: Some(seed),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration,
    })
    .unwrap();
    let mut store = Store::open(path).unwrap();
    for n in 1..=turns {
        let t = turn(&store, &format!("t{n}"), n);
        store.commit_turn(&t).unwrap();
    }
    drop(store);
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
}

/// The schema files as they were written, one per version (each unchanged
/// since its version shipped: migrations only append).
const SCHEMAS: [&str; 6] = [
    include_str!("../../src/store/schema.sql"),
    include_str!("../../src/store/schema_2.sql"),
    include_str!("../../src/store/schema_3.sql"),
    include_str!("../../src/store/schema_4.sql"),
    include_str!("../../src/store/schema_5.sql"),
    include_str!("../../src/store/schema_6.sql"),
];

/// `from` (a save of today's schema) as a save of schema `version` would
/// hold it: a file made from that version's schema files, with the rows of
/// each of its tables copied for the columns it had then.
pub fn at_version(from: &Path, to: &Path, version: usize) {
    let conn = rusqlite::Connection::open(to).unwrap();
    for sql in &SCHEMAS[..version] {
        conn.execute_batch(sql).unwrap();
    }
    conn.pragma_update(None, "user_version", i64::try_from(version).unwrap())
        .unwrap();
    conn.execute("ATTACH DATABASE ?1 AS now", [from.to_string_lossy()])
        .unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'lore_fts%' AND sql NOT LIKE 'CREATE VIRTUAL%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
    for table in tables {
        let columns: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let list = columns.join(", ");
        conn.execute(
            &format!("INSERT INTO main.{table} ({list}) SELECT {list} FROM now.{table}"),
            [],
        )
        .unwrap();
    }
    conn.execute_batch("DETACH DATABASE now").unwrap();
}
