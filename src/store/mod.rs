//! The save file: one SQLite database per save (WAL, bundled SQLite), migrated in code, one transaction per turn (seed 003's Turn Transaction Contract).
//!
//! A save holds one session (seed 003: a scenario instance with its small and
//! large model keys) and its scenes, each a full snapshot with its parent, so a
//! rewind branches instead of deleting. [`Store::commit_turn`] writes a whole
//! turn or nothing: it takes an immediate write lock, returns the stored result
//! for a repeated `user_action_id` (idempotency), refuses with
//! [`StoreError::Conflict`] if another turn moved the session past the scene the
//! turn started from (optimistic concurrency), then inserts the scene, turn,
//! messages, actions, observations, relations and events and moves the
//! session's pointer, all in one transaction. Timestamps come from SQLite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod memory;

use crate::memory::MemoryEvent;
use crate::rules::{Change, Target, WorldState};
use crate::session::{Kind, Message, MessageId, Observation};

/// The schema this build writes.
pub const SCHEMA_VERSION: i64 = 5;

/// Migrations: entry `i` takes a save from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("schema.sql"),
    include_str!("schema_2.sql"),
    include_str!("schema_3.sql"),
    include_str!("schema_4.sql"),
    include_str!("schema_5.sql"),
];

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

/// What can go wrong with a save. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: cannot open the save: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path}: not a Loreloom save, or damaged ({reason}); your other saves are untouched")]
    Corrupt { path: PathBuf, reason: String },
    #[error(
        "{path}: made by a newer Loreloom (save schema {found}, this build reads up to {SCHEMA_VERSION}); update Loreloom to open it"
    )]
    TooNew { path: PathBuf, found: i64 },
    #[error(
        "{path}: another turn was committed first (the turn started at {expected}, the save is at {found}); retry from the fresh state"
    )]
    Conflict {
        path: PathBuf,
        expected: String,
        found: String,
    },
    #[error("{path}: no scene {index} on this branch of the story")]
    NoScene { path: PathBuf, index: i64 },
    #[error(
        "{path}: save slot {slot} is empty; save to it first, or pick a slot that shows a scene"
    )]
    NoSlot { path: PathBuf, slot: String },
    #[error("{path}: {context}: {source}")]
    Sql {
        path: PathBuf,
        context: &'static str,
        source: rusqlite::Error,
    },
    #[error("{path}: {context}: stored JSON does not read back: {source}")]
    Json {
        path: PathBuf,
        context: &'static str,
        source: serde_json::Error,
    },
    #[error(
        "{path}: the browser did not keep the save ({source}); the turn stays in the open page"
    )]
    Keep {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl StoreError {
    /// Seed 003: an optimistic-concurrency conflict is retried from fresh state.
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Conflict { .. })
    }
}

/// How a scene came to be.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SceneKind {
    /// The scenario's opening scene.
    Start,
    /// A played turn.
    Play,
    /// A turn narrated by the fallback templates after a stage failed (DESIGN.md).
    Fallback,
    /// A copy of an earlier scene, branching the story (`/rewind`).
    Rewind,
}

impl SceneKind {
    fn name(self) -> &'static str {
        match self {
            SceneKind::Start => "start",
            SceneKind::Play => "play",
            SceneKind::Fallback => "fallback",
            SceneKind::Rewind => "rewind",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::Start, Self::Play, Self::Fallback, Self::Rewind]
            .into_iter()
            .find(|k| k.name() == s)
    }
}

/// A new save's session.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub id: String,
    pub campaign_id: String,
    pub campaign_path: PathBuf,
    pub scenario_id: Option<String>,
    pub ruleset_id: String,
    /// (character id, role: `user_persona` or `npc`).
    pub characters: Vec<(String, String)>,
    pub small_model_key: String,
    pub large_model_key: String,
    pub calibration: Value,
    pub prompt_versions: Value,
    pub seed: u64,
    /// The opening scene and world.
    pub scene: Map<String, Value>,
    pub world: WorldState,
    /// Messages of the opening (a scene marker, the intro narration), turn 0.
    pub messages: Vec<Message>,
}

/// The session row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub campaign_id: String,
    pub campaign_path: PathBuf,
    pub scenario_id: Option<String>,
    pub ruleset_id: String,
    pub character_ids: Vec<String>,
    pub current_scene_id: String,
    pub scene_index: i64,
    pub turn_index: i64,
    pub small_model_key: String,
    pub large_model_key: String,
    pub calibration: Value,
    pub prompt_versions: Value,
    pub seed: u64,
    pub play_minutes: f64,
}

/// One scene snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub id: String,
    pub scene_index: i64,
    pub parent_id: Option<String>,
    pub turn_index: i64,
    pub kind: SceneKind,
    pub state: Map<String, Value>,
    pub world: WorldState,
}

/// One character's action this turn (seed 003 `actions`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRecord {
    pub character_id: String,
    pub action_text: String,
    pub resolved_outcome: Value,
}

/// One event of a turn (seed 003 `turn_events`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnEvent {
    /// `user_action`, `model_output`, `tool_call`, `state_apply`, `error`.
    pub event_type: String,
    pub step_name: String,
    pub payload: Value,
    pub model_key: Option<String>,
    pub prompt_version: Option<String>,
}

impl TurnEvent {
    /// An event of the engine itself (no model call).
    pub fn engine(event_type: &str, step_name: &str, payload: Value) -> Self {
        Self {
            event_type: event_type.to_owned(),
            step_name: step_name.to_owned(),
            payload,
            model_key: None,
            prompt_version: None,
        }
    }
}

/// Everything one turn commits.
#[derive(Clone, Debug)]
pub struct TurnCommit {
    /// The idempotency key (with the session id): the same submission twice commits once.
    pub user_action_id: String,
    /// The scene the turn started from: the optimistic-concurrency guard.
    pub expected_scene_id: String,
    pub kind: SceneKind,
    /// The player's action, verbatim.
    pub action_text: String,
    /// The new scene's parent: the expected scene, or for a rewind the scene rewound to.
    pub parent_scene_id: Option<String>,
    pub scene: Map<String, Value>,
    pub world: WorldState,
    /// The state operations applied, for the projections and the event log.
    pub changes: Vec<Change>,
    pub messages: Vec<Message>,
    pub actions: Vec<ActionRecord>,
    pub observations: Vec<Observation>,
    pub events: Vec<TurnEvent>,
    /// The play clock after the turn.
    pub play_minutes: f64,
    /// What the caller shows for this turn; handed back on a duplicate submission.
    pub result: Value,
    /// The turn's memory event and its vector (seed 002 §7.1 step 7), written with the turn.
    pub memory: Option<(MemoryEvent, Option<Vec<f32>>)>,
}

/// A save slot of a session: a scene of this file, kept under a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bookmark {
    pub slot: String,
    pub scene_id: String,
    pub scene_index: i64,
    /// Where and when, in the player's words ("Reedmere Quay, turn 12").
    pub summary: String,
    /// Seconds since the Unix epoch.
    pub saved_at: u64,
}

/// A committed turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Committed {
    pub turn_index: i64,
    pub scene_id: String,
    pub scene_index: i64,
    pub result: Value,
    /// True when this submission had been committed before and nothing new was written.
    pub duplicate: bool,
}

/// An open save.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    session_id: String,
    /// In the browser: the connection's change count when it was last kept.
    #[cfg(target_family = "wasm")]
    kept_at: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

fn connect(path: &Path) -> Result<Connection, StoreError> {
    let open = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    #[cfg(not(target_family = "wasm"))]
    let conn = Connection::open(path).map_err(open)?;
    // In the browser the save is a snapshot the page keeps (IndexedDB), read
    // into memory here and written back by `Store::keep`.
    #[cfg(target_family = "wasm")]
    let conn = {
        let mut conn = Connection::open_in_memory().map_err(open)?;
        if let Ok(bytes) = crate::files::read_binary(path) {
            conn.deserialize_read_exact(rusqlite::MAIN_DB, bytes.as_slice(), bytes.len(), false)
                .map_err(open)?;
        }
        conn
    };
    conn.busy_timeout(Duration::from_secs(10)).map_err(open)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(open)?;
    Ok(conn)
}

impl Store {
    /// Create a new save at `path` (which must not exist) with its opening scene.
    pub fn create(path: &Path, new: &NewSession) -> Result<Self, StoreError> {
        if path.exists() || crate::files::is_file(path) {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source: rusqlite::Error::InvalidPath(path.to_path_buf()),
            });
        }
        let mut conn = connect(path)?;
        let sql = |context| {
            let path = path.to_path_buf();
            move |source| StoreError::Sql {
                path,
                context,
                source,
            }
        };
        // WAL needs shared memory the browser's in-memory database lacks.
        #[cfg(not(target_family = "wasm"))]
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql("enabling WAL"))?;
        migrate(&mut conn, path)?;
        let tx = conn.transaction().map_err(sql("starting the new save"))?;
        let scene_id = scene_id(0);
        let ids: Vec<&String> = new.characters.iter().map(|(id, _)| id).collect();
        tx.execute(
            &format!(
                "INSERT INTO sessions (id, campaign_id, campaign_path, scenario_id, ruleset_id,
                   character_ids, current_scene_id, scene_index, turn_index, small_model_key,
                   large_model_key, calibration_json, prompt_versions_json, seed, play_minutes,
                   created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 0, 0, ?8, ?9, ?10, ?11, ?12, 0, {NOW}, {NOW})"
            ),
            params![
                new.id,
                new.campaign_id,
                new.campaign_path.to_string_lossy(),
                new.scenario_id,
                new.ruleset_id,
                json(&ids),
                scene_id,
                new.small_model_key,
                new.large_model_key,
                new.calibration.to_string(),
                new.prompt_versions.to_string(),
                i64::from_ne_bytes(new.seed.to_ne_bytes()),
            ],
        )
        .map_err(sql("writing the session"))?;
        for (id, role) in &new.characters {
            tx.execute(
                &format!(
                    "INSERT INTO session_characters (session_id, character_id, role, created_at)
                     VALUES (?1, ?2, ?3, {NOW})"
                ),
                params![new.id, id, role],
            )
            .map_err(sql("writing the characters"))?;
        }
        insert_scene(
            &tx,
            &new.id,
            &scene_id,
            0,
            None,
            0,
            SceneKind::Start,
            &new.scene,
            &new.world,
        )
        .map_err(sql("writing the opening scene"))?;
        insert_messages(&tx, &new.id, &scene_id, &new.messages)
            .map_err(sql("writing the opening messages"))?;
        insert_relations(&tx, &new.id, &scene_id, &new.world).map_err(sql("writing relations"))?;
        rebuild_projections(&tx, &new.id, &scene_id, &new.world)
            .map_err(sql("writing the world tables"))?;
        tx.commit().map_err(sql("committing the new save"))?;
        #[cfg_attr(
            not(target_family = "wasm"),
            expect(unused_mut, reason = "kept in the browser only")
        )]
        let mut store = Self {
            conn,
            path: path.to_path_buf(),
            session_id: new.id.clone(),
            #[cfg(target_family = "wasm")]
            kept_at: u64::MAX,
        };
        #[cfg(target_family = "wasm")]
        store.keep()?;
        Ok(store)
    }

    /// In the browser, where no disk holds the database: writes a snapshot
    /// of it to the page's storage when anything changed since the last call
    /// (natively every commit is on disk already). The session calls it each
    /// frame; it costs a counter read when nothing changed.
    #[cfg(target_family = "wasm")]
    pub fn keep(&mut self) -> Result<(), StoreError> {
        let changes = self.conn.total_changes();
        if changes == self.kept_at {
            return Ok(());
        }
        let data = self
            .conn
            .serialize(rusqlite::MAIN_DB)
            .map_err(|source| StoreError::Sql {
                path: self.path.clone(),
                context: "taking a snapshot of the save",
                source,
            })?;
        crate::files::write_binary(&self.path, &data).map_err(|source| StoreError::Keep {
            path: self.path.clone(),
            source,
        })?;
        self.kept_at = changes;
        Ok(())
    }

    /// Open an existing save: check it is one, is whole, and migrate it to this build's schema.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        if !crate::files::is_file(path) {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                source: rusqlite::Error::InvalidPath(path.to_path_buf()),
            });
        }
        let mut conn = connect(path)?;
        let corrupt = |reason: String| StoreError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| corrupt(e.to_string()))?;
        if check != "ok" {
            return Err(corrupt(format!("integrity check: {check}")));
        }
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| corrupt(e.to_string()))?;
        if version == 0 {
            return Err(corrupt("it has no Loreloom schema".into()));
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
            });
        }
        migrate(&mut conn, path)?;
        let session_id: String = conn
            .query_row("SELECT id FROM sessions LIMIT 1", [], |r| r.get(0))
            .map_err(|e| corrupt(format!("no session: {e}")))?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            session_id,
            #[cfg(target_family = "wasm")]
            kept_at: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, context: &'static str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |source| StoreError::Sql {
            path: self.path.clone(),
            context,
            source,
        }
    }

    fn json_err(&self, context: &'static str) -> impl Fn(serde_json::Error) -> StoreError + '_ {
        move |source| StoreError::Json {
            path: self.path.clone(),
            context,
            source,
        }
    }

    /// The session row.
    pub fn session(&self) -> Result<SessionInfo, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT id, campaign_id, campaign_path, scenario_id, ruleset_id, character_ids,
                        current_scene_id, scene_index, turn_index, small_model_key, large_model_key,
                        calibration_json, prompt_versions_json, seed, play_minutes
                 FROM sessions WHERE id = ?1",
                [&self.session_id],
                |r| {
                    Ok((
                        (
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, String>(4)?,
                            r.get::<_, String>(5)?,
                            r.get::<_, String>(6)?,
                        ),
                        (
                            r.get::<_, i64>(7)?,
                            r.get::<_, i64>(8)?,
                            r.get::<_, String>(9)?,
                            r.get::<_, String>(10)?,
                            r.get::<_, String>(11)?,
                            r.get::<_, String>(12)?,
                            r.get::<_, i64>(13)?,
                            r.get::<_, f64>(14)?,
                        ),
                    ))
                },
            )
            .map_err(self.sql("reading the session"))?;
        let ((id, campaign_id, campaign_path, scenario_id, ruleset_id, ids, current), rest) = row;
        let (scene_index, turn_index, small, large, calibration, prompts, seed, minutes) = rest;
        let parse = |text: &str| serde_json::from_str::<Value>(text);
        Ok(SessionInfo {
            id,
            campaign_id,
            campaign_path: PathBuf::from(campaign_path),
            scenario_id,
            ruleset_id,
            character_ids: serde_json::from_str(&ids).map_err(self.json_err("character ids"))?,
            current_scene_id: current,
            scene_index,
            turn_index,
            small_model_key: small,
            large_model_key: large,
            calibration: parse(&calibration).map_err(self.json_err("calibration"))?,
            prompt_versions: parse(&prompts).map_err(self.json_err("prompt versions"))?,
            seed: u64::from_ne_bytes(seed.to_ne_bytes()),
            play_minutes: minutes,
        })
    }

    /// A scene by id.
    pub fn scene(&self, id: &str) -> Result<Scene, StoreError> {
        let (scene_index, parent_id, turn_index, kind, state, world) = self
            .conn
            .query_row(
                "SELECT scene_index, parent_scene_id, turn_index, kind, state_json, world_json
                 FROM scenes WHERE id = ?1",
                [id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                    ))
                },
            )
            .map_err(self.sql("reading a scene"))?;
        Ok(Scene {
            id: id.to_owned(),
            scene_index,
            parent_id,
            turn_index,
            kind: SceneKind::parse(&kind).unwrap_or(SceneKind::Play),
            state: serde_json::from_str(&state).map_err(self.json_err("scene state"))?,
            world: serde_json::from_str(&world).map_err(self.json_err("world state"))?,
        })
    }

    /// The scene the session is at.
    pub fn current_scene(&self) -> Result<Scene, StoreError> {
        let id = self.session()?.current_scene_id;
        self.scene(&id)
    }

    /// Scene ids of the current branch, oldest first (the opening scene … the current one).
    pub fn branch(&self) -> Result<Vec<String>, StoreError> {
        self.branch_to(&self.session()?.current_scene_id)
    }

    /// Scene ids from the opening scene to `scene_id`, oldest first.
    pub fn branch_to(&self, scene_id: &str) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "WITH RECURSIVE chain(id, parent, idx) AS (
                   SELECT s.id, s.parent_scene_id, s.scene_index FROM scenes s WHERE s.id = ?1
                   UNION ALL
                   SELECT s.id, s.parent_scene_id, s.scene_index FROM scenes s
                     JOIN chain ON s.id = chain.parent
                 )
                 SELECT id FROM chain ORDER BY idx",
            )
            .map_err(self.sql("reading the branch"))?;
        let ids = stmt
            .query_map([scene_id], |r| r.get::<_, String>(0))
            .map_err(self.sql("reading the branch"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.sql("reading the branch"))?;
        Ok(ids)
    }

    /// The message stream of the current branch, in order.
    pub fn messages(&self) -> Result<Vec<Message>, StoreError> {
        self.messages_on(&json(&self.branch()?))
    }

    /// The messages of the scenes on `branch` (a JSON array of scene ids), in order.
    fn messages_on(&self, branch: &str) -> Result<Vec<Message>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT turn_id, seq, owner, kind, target, content FROM messages
                 WHERE session_id = ?1 AND scene_id IN (SELECT value FROM json_each(?2))
                 ORDER BY turn_id, seq",
            )
            .map_err(self.sql("reading messages"))?;
        let rows = stmt
            .query_map(params![self.session_id, branch], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })
            .map_err(self.sql("reading messages"))?;
        let mut out = Vec::new();
        for row in rows {
            let (turn_id, seq, owner, kind, target, content) =
                row.map_err(self.sql("reading messages"))?;
            out.push(Message {
                id: MessageId {
                    turn_id: u64::try_from(turn_id).unwrap_or(0),
                    seq: u32::try_from(seq).unwrap_or(0),
                },
                owner,
                kind: Kind::parse(&kind).unwrap_or(Kind::System),
                content,
                target,
            });
        }
        Ok(out)
    }

    /// A character's observations on the current branch.
    pub fn observations(&self, character_id: &str) -> Result<Vec<Observation>, StoreError> {
        self.observations_on(&json(&self.branch()?), Some(character_id))
    }

    /// Observations on `branch` (a JSON array of scene ids), of one character or of all.
    fn observations_on(
        &self,
        branch: &str,
        character_id: Option<&str>,
    ) -> Result<Vec<Observation>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT character_id, content, importance, reinforcement_count, created_minute
                 FROM observations
                 WHERE session_id = ?1 AND (?2 IS NULL OR character_id = ?2)
                   AND scene_id IN (SELECT value FROM json_each(?3))
                 ORDER BY id",
            )
            .map_err(self.sql("reading observations"))?;
        let rows = stmt
            .query_map(params![self.session_id, character_id, branch], |r| {
                Ok(Observation {
                    character_id: r.get(0)?,
                    content: r.get(1)?,
                    importance: r.get(2)?,
                    reinforcement_count: r.get(3)?,
                    created_minute: r.get(4)?,
                })
            })
            .map_err(self.sql("reading observations"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(self.sql("reading observations"))
    }

    /// Commit one turn atomically (seed 003's Turn Transaction Contract).
    pub fn commit_turn(&mut self, turn: &TurnCommit) -> Result<Committed, StoreError> {
        let path = self.path.clone();
        let sql = self.sql_detached();
        let session = self.session_id.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql("locking the save for the turn"))?;
        // Idempotency: a repeated submission returns what it returned the first time.
        let previous = tx
            .query_row(
                "SELECT t.turn_index, t.scene_id, s.scene_index, t.result_json
                 FROM turns t JOIN scenes s ON s.id = t.scene_id
                 WHERE t.session_id = ?1 AND t.user_action_id = ?2",
                params![session, turn.user_action_id],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, String>(3)?,
                    ))
                },
            )
            .optional()
            .map_err(sql("checking the idempotency key"))?;
        if let Some((turn_index, scene_id, scene_index, result)) = previous {
            return Ok(Committed {
                turn_index,
                scene_id,
                scene_index,
                result: serde_json::from_str(&result).unwrap_or(Value::Null),
                duplicate: true,
            });
        }
        // Optimistic concurrency: the session must still be where the turn started.
        let (current, scene_index, turn_index): (String, i64, i64) = tx
            .query_row(
                "SELECT current_scene_id, scene_index, turn_index FROM sessions WHERE id = ?1",
                [&session],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql("reading the session"))?;
        if current != turn.expected_scene_id {
            return Err(StoreError::Conflict {
                path,
                expected: turn.expected_scene_id.clone(),
                found: current,
            });
        }
        let (scene_index, turn_index) = (scene_index + 1, turn_index + 1);
        let new_id = scene_id(scene_index);
        let parent = turn.parent_scene_id.as_deref().unwrap_or(&current);
        insert_scene(
            &tx,
            &session,
            &new_id,
            scene_index,
            Some(parent),
            turn_index,
            turn.kind,
            &turn.scene,
            &turn.world,
        )
        .map_err(sql("writing the scene"))?;
        tx.execute(
            &format!(
                "INSERT INTO turns (session_id, turn_index, user_action_id, scene_before_id,
                   scene_id, kind, action_text, result_json, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
            ),
            params![
                session,
                turn_index,
                turn.user_action_id,
                current,
                new_id,
                turn.kind.name(),
                turn.action_text,
                turn.result.to_string(),
            ],
        )
        .map_err(sql("writing the turn"))?;
        insert_messages(&tx, &session, &new_id, &turn.messages).map_err(sql("writing messages"))?;
        {
            let mut stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO actions (session_id, scene_id, character_id, action_text,
                       resolved_outcome, created_at) VALUES (?1, ?2, ?3, ?4, ?5, {NOW})"
                ))
                .map_err(sql("writing actions"))?;
            for a in &turn.actions {
                stmt.execute(params![
                    session,
                    new_id,
                    a.character_id,
                    a.action_text,
                    a.resolved_outcome.to_string()
                ])
                .map_err(sql("writing actions"))?;
            }
            let mut stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO observations (session_id, scene_id, character_id, content,
                       importance, reinforcement_count, created_minute, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW})"
                ))
                .map_err(sql("writing observations"))?;
            for o in &turn.observations {
                stmt.execute(params![
                    session,
                    new_id,
                    o.character_id,
                    o.content,
                    o.importance,
                    o.reinforcement_count,
                    o.created_minute
                ])
                .map_err(sql("writing observations"))?;
            }
            let mut stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO turn_events (session_id, scene_id, turn_index, event_type,
                       step_name, payload_json, model_key, prompt_version, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
                ))
                .map_err(sql("writing turn events"))?;
            for e in &turn.events {
                stmt.execute(params![
                    session,
                    new_id,
                    turn_index,
                    e.event_type,
                    e.step_name,
                    e.payload.to_string(),
                    e.model_key,
                    e.prompt_version
                ])
                .map_err(sql("writing turn events"))?;
            }
        }
        if let Some((event, vector)) = &turn.memory {
            memory::insert_memory(&tx, &session, &new_id, turn_index, event, vector.as_deref())
                .map_err(sql("writing the memory event"))?;
        }
        insert_relations(&tx, &session, &new_id, &turn.world).map_err(sql("writing relations"))?;
        if turn.kind == SceneKind::Rewind {
            rebuild_projections(&tx, &session, &new_id, &turn.world)
                .map_err(sql("rebuilding the world tables"))?;
        } else {
            update_projections(&tx, &session, &new_id, &turn.world, &turn.changes)
                .map_err(sql("updating the world tables"))?;
        }
        tx.execute(
            &format!(
                "UPDATE sessions SET current_scene_id = ?2, scene_index = ?3, turn_index = ?4,
                   play_minutes = ?5, updated_at = {NOW} WHERE id = ?1"
            ),
            params![session, new_id, scene_index, turn_index, turn.play_minutes],
        )
        .map_err(sql("moving the session to the new scene"))?;
        tx.commit().map_err(sql("committing the turn"))?;
        Ok(Committed {
            turn_index,
            scene_id: new_id,
            scene_index,
            result: turn.result.clone(),
            duplicate: false,
        })
    }

    /// The scene with this index on the current branch.
    pub fn scene_on_branch(&self, index: i64) -> Result<Scene, StoreError> {
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM scenes WHERE session_id = ?1 AND scene_index = ?2
                   AND id IN (SELECT value FROM json_each(?3))",
                params![self.session_id, index, json(&self.branch()?)],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sql("finding a scene"))?;
        match id {
            Some(id) => self.scene(&id),
            None => Err(StoreError::NoScene {
                path: self.path.clone(),
                index,
            }),
        }
    }

    /// `/rewind`: a new scene copying scene `index` of the current branch, branching from it.
    pub fn rewind(&mut self, index: i64, user_action_id: &str) -> Result<Committed, StoreError> {
        let target = self.scene_on_branch(index)?;
        self.branch_from(target, &format!("/rewind {index}"), user_action_id)
    }

    /// A new scene copying `target` (a scene of any branch), branching from it.
    fn branch_from(
        &mut self,
        target: Scene,
        action_text: &str,
        user_action_id: &str,
    ) -> Result<Committed, StoreError> {
        let session = self.session()?;
        let index = target.scene_index;
        // The scene returned to offers the choices it was left with again.
        let choices = self
            .turn_result(&target.id)?
            .map_or(serde_json::Value::Null, |r| r["choices"].clone());
        let turn = TurnCommit {
            user_action_id: user_action_id.to_owned(),
            expected_scene_id: session.current_scene_id,
            kind: SceneKind::Rewind,
            action_text: action_text.to_owned(),
            parent_scene_id: Some(target.id.clone()),
            scene: target.state,
            world: target.world,
            changes: Vec::new(),
            messages: Vec::new(),
            actions: Vec::new(),
            observations: Vec::new(),
            events: vec![TurnEvent::engine(
                "rewind",
                "orchestrator",
                serde_json::json!({"to_scene": target.id, "to_index": index}),
            )],
            play_minutes: session.play_minutes,
            result: serde_json::json!({"rewound_to": index, "choices": choices}),
            memory: None,
        };
        self.commit_turn(&turn)
    }

    /// The scene each turn of the current branch was committed in (turn id →
    /// scene index): the scene the backlog's "return here" rewinds to.
    pub fn turn_scenes(&self) -> Result<BTreeMap<u64, i64>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT m.turn_id, s.scene_index FROM messages m
                   JOIN scenes s ON s.id = m.scene_id
                 WHERE m.session_id = ?1 AND m.scene_id IN (SELECT value FROM json_each(?2))",
            )
            .map_err(self.sql("reading the turns' scenes"))?;
        let rows = stmt
            .query_map(params![self.session_id, json(&self.branch()?)], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(self.sql("reading the turns' scenes"))?;
        let mut out = BTreeMap::new();
        for row in rows {
            let (turn, scene) = row.map_err(self.sql("reading the turns' scenes"))?;
            out.insert(u64::try_from(turn).unwrap_or(0), scene);
        }
        Ok(out)
    }

    /// The campaign lore recalled into the turns of the current branch, in
    /// the order they were played (each turn's `recall` event).
    pub fn recalled_lore(&self) -> Result<Vec<crate::memory::LoreHit>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT payload_json FROM turn_events
                 WHERE session_id = ?1 AND event_type = 'recall'
                   AND scene_id IN (SELECT value FROM json_each(?2))
                 ORDER BY id",
            )
            .map_err(self.sql("reading recalled lore"))?;
        let rows = stmt
            .query_map(params![self.session_id, json(&self.branch()?)], |r| {
                r.get::<_, String>(0)
            })
            .map_err(self.sql("reading recalled lore"))?;
        let mut out = Vec::new();
        for row in rows {
            let payload = row.map_err(self.sql("reading recalled lore"))?;
            let recalled: crate::memory::Recalled =
                serde_json::from_str(&payload).map_err(self.json_err("a turn's recall"))?;
            out.extend(recalled.lore);
        }
        Ok(out)
    }

    /// Keep the current scene in save slot `slot` (replacing what the slot held).
    pub fn bookmark(&mut self, slot: &str, summary: &str) -> Result<Bookmark, StoreError> {
        let scene = self.current_scene()?;
        let saved_at = web_time::SystemTime::now()
            .duration_since(web_time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.conn
            .execute(
                "INSERT INTO bookmarks (session_id, slot, scene_id, summary, saved_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (session_id, slot) DO UPDATE SET
                   scene_id = excluded.scene_id, summary = excluded.summary,
                   saved_at = excluded.saved_at",
                params![
                    self.session_id,
                    slot,
                    scene.id,
                    summary,
                    i64::try_from(saved_at).unwrap_or(i64::MAX)
                ],
            )
            .map_err(self.sql("saving to a slot"))?;
        Ok(Bookmark {
            slot: slot.to_owned(),
            scene_id: scene.id,
            scene_index: scene.scene_index,
            summary: summary.to_owned(),
            saved_at,
        })
    }

    /// The session's save slots, by slot name.
    pub fn bookmarks(&self) -> Result<Vec<Bookmark>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT b.slot, b.scene_id, s.scene_index, b.summary, b.saved_at
                   FROM bookmarks b JOIN scenes s ON s.id = b.scene_id
                 WHERE b.session_id = ?1 ORDER BY b.slot",
            )
            .map_err(self.sql("reading the save slots"))?;
        let rows = stmt
            .query_map([&self.session_id], |r| {
                Ok(Bookmark {
                    slot: r.get(0)?,
                    scene_id: r.get(1)?,
                    scene_index: r.get(2)?,
                    summary: r.get(3)?,
                    saved_at: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                })
            })
            .map_err(self.sql("reading the save slots"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(self.sql("reading the save slots"))
    }

    /// Load save slot `slot`: a new scene branching from the one it keeps, as
    /// `/rewind` does (the branch played since stays in the file).
    pub fn load_bookmark(
        &mut self,
        slot: &str,
        user_action_id: &str,
    ) -> Result<Committed, StoreError> {
        let Some(mark) = self.bookmarks()?.into_iter().find(|b| b.slot == slot) else {
            return Err(StoreError::NoSlot {
                path: self.path.clone(),
                slot: slot.to_owned(),
            });
        };
        let target = self.scene(&mark.scene_id)?;
        self.branch_from(target, &format!("/load {slot}"), user_action_id)
    }

    /// SQLite's full integrity check: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .map_err(self.sql("checking integrity"))
    }

    /// Run a read-only query for tests and tools (`PRAGMA integrity_check`, counts).
    pub fn query_i64(&self, sql: &str) -> Result<i64, StoreError> {
        self.conn
            .query_row(sql, [], |r| r.get(0))
            .map_err(self.sql("running a query"))
    }
}

fn scene_id(index: i64) -> String {
    format!("scene-{index:05}")
}

fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let sql = |context| {
        let path = path.to_path_buf();
        move |source| StoreError::Sql {
            path,
            context,
            source,
        }
    };
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql("reading the schema version"))?;
    for (from, migration) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(usize::try_from(version).unwrap_or(0))
    {
        let tx = conn.transaction().map_err(sql("migrating"))?;
        tx.execute_batch(migration).map_err(sql("migrating"))?;
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(from + 1).unwrap_or(SCHEMA_VERSION),
        )
        .map_err(sql("migrating"))?;
        tx.commit().map_err(sql("migrating"))?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments, reason = "one row's columns")]
fn insert_scene(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    id: &str,
    index: i64,
    parent: Option<&str>,
    turn_index: i64,
    kind: SceneKind,
    state: &Map<String, Value>,
    world: &WorldState,
) -> rusqlite::Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO scenes (id, session_id, scene_index, parent_scene_id, turn_index, kind,
               state_json, world_json, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
        ),
        params![
            id,
            session,
            index,
            parent,
            turn_index,
            kind.name(),
            json(state),
            json(world)
        ],
    )?;
    Ok(())
}

fn insert_messages(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    messages: &[Message],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO messages (session_id, scene_id, turn_id, seq, owner, kind, target, content,
           created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
    ))?;
    for m in messages {
        stmt.execute(params![
            session,
            scene,
            i64::try_from(m.id.turn_id).unwrap_or(i64::MAX),
            m.id.seq,
            m.owner,
            m.kind.name(),
            m.target,
            m.content
        ])?;
    }
    Ok(())
}

/// One edge per unordered pair: `a` is the lower id.
fn insert_relations(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO scene_relations (session_id, scene_id, character_a_id, character_b_id,
           trust, tension, closeness, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW})
         ON CONFLICT (scene_id, character_a_id, character_b_id) DO UPDATE SET
           trust = excluded.trust, tension = excluded.tension, closeness = excluded.closeness"
    ))?;
    for r in &world.relations {
        let (a, b) = if r.a <= r.b {
            (&r.a, &r.b)
        } else {
            (&r.b, &r.a)
        };
        stmt.execute(params![
            session,
            scene,
            a,
            b,
            r.trust,
            r.tension,
            r.closeness
        ])?;
    }
    Ok(())
}

fn rebuild_projections(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
) -> rusqlite::Result<()> {
    for table in ["facts", "clocks", "inventory", "threads"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE session_id = ?1"),
            [session],
        )?;
    }
    for id in world.clocks.keys() {
        write_clock(tx, session, world, id)?;
    }
    for (owner, items) in &world.inventory {
        for item in items.keys() {
            write_inventory(tx, session, world, owner, item)?;
        }
    }
    for f in &world.facts {
        write_fact(tx, session, scene, world, &f.subject, &f.predicate)?;
    }
    for id in world.threads.keys() {
        write_thread(tx, session, world, id)?;
    }
    Ok(())
}

/// Rewrite only the rows the turn's state ops touched.
fn update_projections(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
    changes: &[Change],
) -> rusqlite::Result<()> {
    for change in changes {
        match Target::parse(&change.op.path) {
            Ok(Target::Clock(id)) => write_clock(tx, session, world, &id)?,
            Ok(Target::Inventory { owner, item }) => {
                write_inventory(tx, session, world, &owner, &item)?;
            }
            Ok(Target::Fact { subject, predicate }) => {
                write_fact(tx, session, scene, world, &subject, &predicate)?;
            }
            Ok(Target::ThreadStatus(id) | Target::ThreadStakes(id)) => {
                write_thread(tx, session, world, &id)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn write_clock(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    id: &str,
) -> rusqlite::Result<()> {
    let Some(c) = world.clocks.get(id) else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO clocks (session_id, id, name, value, max, triggers_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session,
        id,
        c.name,
        c.value,
        c.max,
        json(&c.triggers)
    ])?;
    Ok(())
}

fn write_inventory(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    owner: &str,
    item: &str,
) -> rusqlite::Result<()> {
    match world.inventory.get(owner).and_then(|i| i.get(item)) {
        Some(&qty) if qty > 0 => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO inventory (session_id, owner_id, item_id, qty)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![session, owner, item, qty])?;
        }
        _ => {
            tx.prepare_cached(
                "DELETE FROM inventory WHERE session_id = ?1 AND owner_id = ?2 AND item_id = ?3",
            )?
            .execute(params![session, owner, item])?;
        }
    }
    Ok(())
}

fn write_fact(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
    subject: &str,
    predicate: &str,
) -> rusqlite::Result<()> {
    let Some(f) = world
        .facts
        .iter()
        .find(|f| f.subject == subject && f.predicate == predicate)
    else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO facts (session_id, subject_id, predicate, object_json, visibility,
           scene_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session,
        subject,
        predicate,
        f.object.to_string(),
        json(&f.visibility).trim_matches('"'),
        scene
    ])?;
    Ok(())
}

fn write_thread(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    id: &str,
) -> rusqlite::Result<()> {
    let Some(t) = world.threads.get(id) else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO threads (session_id, id, title, status, stakes_json)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        session,
        id,
        t.title,
        t.status,
        t.stakes.to_string()
    ])?;
    Ok(())
}

impl Store {
    /// The session as the turn runner needs it, for a campaign already loaded.
    pub fn state(
        &self,
        campaign: std::sync::Arc<crate::campaign::Campaign>,
    ) -> Result<crate::session::turn::SessionState, StoreError> {
        let current = self.session()?.current_scene_id;
        self.state_at(campaign, &current)
    }

    /// The session as it stood at scene `scene_id` (for replay). The play
    /// clock is the session's (it is not kept per scene).
    pub fn state_at(
        &self,
        campaign: std::sync::Arc<crate::campaign::Campaign>,
        scene_id: &str,
    ) -> Result<crate::session::turn::SessionState, StoreError> {
        let info = self.session()?;
        let scene = self.scene(scene_id)?;
        let turn_index = scene.turn_index;
        let mut world = scene.world;
        world.scene = scene.state;
        let branch = json(&self.branch_to(scene_id)?);
        let mut observations: std::collections::BTreeMap<String, Vec<Observation>> =
            std::collections::BTreeMap::new();
        for o in self.observations_on(&branch, None)? {
            observations
                .entry(o.character_id.clone())
                .or_default()
                .push(o);
        }
        let calibration: crate::session::turn::Calibration =
            serde_json::from_value(info.calibration.clone()).unwrap_or_default();
        let scenario = info
            .scenario_id
            .as_deref()
            .and_then(|id| campaign.scenarios.get(id));
        let tone = crate::session::play::session_tone(&campaign, scenario);
        Ok(crate::session::turn::SessionState {
            stream: crate::session::Stream::new(self.messages_on(&branch)?),
            campaign,
            world,
            observations,
            calibration,
            small_model: info.small_model_key,
            large_model: info.large_model_key,
            seed: info.seed,
            turn_index: u64::try_from(turn_index).unwrap_or(0),
            play_minutes: info.play_minutes,
            recalled: crate::memory::Recalled::default(),
            earlier: Vec::new(),
            summarised_through: 0,
            states: std::collections::BTreeMap::new(),
            tone,
            skills: crate::session::skills::SessionSkills::default(),
        })
    }
}

impl TurnCommit {
    /// What a finished turn commits: its scene, messages, observations, actions, and an event per model call, roll and refusal.
    pub fn from_result(
        result: &crate::session::turn::TurnResult,
        input: &crate::session::turn::PlayerInput,
        expected_scene_id: &str,
        kind: SceneKind,
    ) -> Self {
        let mut events = vec![TurnEvent::engine(
            "user_action",
            "persona_intent",
            serde_json::json!({"text": input.text, "whisper_to": input.whisper_to, "ruling": input.ruling}),
        )];
        for r in &result.records {
            events.push(TurnEvent {
                event_type: "model_output".into(),
                step_name: r.stage.clone(),
                payload: serde_json::to_value(r).unwrap_or(Value::Null),
                model_key: Some(r.model_key.clone()),
                prompt_version: Some(r.prompt_version.clone()),
            });
        }
        if result.recalled != crate::memory::Recalled::default() {
            events.push(TurnEvent::engine(
                "recall",
                "memory_recall",
                serde_json::to_value(&result.recalled).unwrap_or(Value::Null),
            ));
        }
        events.push(TurnEvent::engine(
            "metrics",
            "turn_budget",
            serde_json::to_value(&result.budget).unwrap_or(Value::Null),
        ));
        for roll in &result.rolls {
            events.push(TurnEvent::engine(
                "tool_call",
                "dice",
                serde_json::to_value(roll).unwrap_or(Value::Null),
            ));
        }
        if !result.changes.is_empty() {
            events.push(TurnEvent::engine(
                "state_apply",
                "engine_apply",
                serde_json::to_value(&result.changes).unwrap_or(Value::Null),
            ));
        }
        for attempt in &result.skills {
            events.push(TurnEvent::engine(
                "tool_call",
                "skills",
                serde_json::to_value(attempt).unwrap_or(Value::Null),
            ));
        }
        if let Some(fallback) = &result.skill_fallback {
            events.push(TurnEvent::engine(
                "error",
                "skills",
                serde_json::json!({"fallback": fallback}),
            ));
        }
        for choice in &result.drafts {
            events.push(TurnEvent::engine(
                "tool_call",
                "narrate_drafts",
                serde_json::to_value(choice).unwrap_or(Value::Null),
            ));
        }
        for refusal in &result.refused {
            events.push(TurnEvent::engine(
                "error",
                "engine_apply",
                serde_json::json!({"refused": refusal}),
            ));
        }
        let narration: Vec<&str> = result
            .messages
            .iter()
            .filter(|m| m.kind == Kind::Narration)
            .map(|m| m.content.as_str())
            .collect();
        let actions = result
            .messages
            .iter()
            .filter(|m| m.kind == Kind::Intention)
            .map(|m| ActionRecord {
                character_id: m.owner.clone(),
                action_text: m.content.clone(),
                resolved_outcome: if m.owner == crate::session::turn::PERSONA {
                    serde_json::to_value(&result.rolls).unwrap_or(Value::Null)
                } else {
                    Value::Null
                },
            })
            .collect();
        let mut world = result.world.clone();
        let scene = std::mem::take(&mut world.scene);
        Self {
            user_action_id: input.action_id.clone(),
            expected_scene_id: expected_scene_id.to_owned(),
            kind,
            action_text: input.text.clone(),
            parent_scene_id: None,
            scene,
            world,
            changes: result.changes.clone(),
            messages: result.messages.clone(),
            actions,
            observations: result.observations.clone(),
            events,
            play_minutes: result.play_minutes,
            memory: None,
            result: serde_json::json!({
                "narration": narration,
                "rolls": result.rolls,
                "choices": result.choices,
                "acted": result.acted,
                "skipped": result.skipped,
            }),
        }
    }
}

impl Store {
    /// The stored result of the turn that made the current scene (its narration, rolls, choices).
    /// The result of the turn that made a scene (none for a save's first scene).
    fn turn_result(&self, scene_id: &str) -> Result<Option<Value>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT result_json FROM turns WHERE session_id = ?1 AND scene_id = ?2",
                [&self.session_id, scene_id],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sql("reading a turn's result"))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// The result of the turn that made the current scene.
    pub fn last_result(&self) -> Result<Option<Value>, StoreError> {
        self.turn_result(&self.session()?.current_scene_id)
    }
}

/// One sitting at the game inside a save (seed 001 v1 `SessionManager`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlaySession {
    pub id: i64,
    /// The first turn id played in it.
    pub turn_start: i64,
    pub turn_end: Option<i64>,
    pub recap: Option<String>,
}

/// A summary of a stretch of turns (seed 004 stream summarisation).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub scope: String,
    pub scope_id: String,
    pub text: String,
    pub turn_start: i64,
    pub turn_end: i64,
}

impl Store {
    /// Like `sql`, but not borrowing the store (for use while a transaction holds it).
    fn sql_detached(
        &self,
    ) -> impl Fn(&'static str) -> Box<dyn Fn(rusqlite::Error) -> StoreError> + use<> {
        let path = self.path.clone();
        move |context| {
            let path = path.clone();
            Box::new(move |source| StoreError::Sql {
                path: path.clone(),
                context,
                source,
            })
        }
    }

    /// Begin a play session: closes any left open (a crash or a closed window
    /// ends a sitting too) at the turns it saw, and opens a new one.
    pub fn start_play_session(&mut self) -> Result<PlaySession, StoreError> {
        let turn = self.session()?.turn_index;
        let sql = self.sql_detached();
        let session_id = self.session_id.clone();
        let tx = self
            .conn
            .transaction()
            .map_err(sql("starting a play session"))?;
        tx.execute(
            &format!(
                "UPDATE play_sessions SET ended_at = {NOW}, turn_range_end = ?2
                 WHERE session_id = ?1 AND ended_at IS NULL"
            ),
            params![session_id, turn],
        )
        .map_err(sql("closing the previous play session"))?;
        tx.execute(
            &format!(
                "INSERT INTO play_sessions (session_id, started_at, turn_range_start)
                 VALUES (?1, {NOW}, ?2)"
            ),
            params![session_id, turn + 1],
        )
        .map_err(sql("opening a play session"))?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(sql("starting a play session"))?;
        Ok(PlaySession {
            id,
            turn_start: turn + 1,
            turn_end: None,
            recap: None,
        })
    }

    /// End a play session at the turns played so far.
    pub fn end_play_session(&self, id: i64) -> Result<(), StoreError> {
        let turn = self.session()?.turn_index;
        self.conn
            .execute(
                &format!(
                    "UPDATE play_sessions SET ended_at = {NOW}, turn_range_end = ?3
                     WHERE session_id = ?1 AND id = ?2"
                ),
                params![self.session_id, id, turn],
            )
            .map_err(self.sql("ending a play session"))?;
        Ok(())
    }

    /// Every play session, oldest first.
    pub fn play_sessions(&self) -> Result<Vec<PlaySession>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, turn_range_start, turn_range_end, recap FROM play_sessions
                 WHERE session_id = ?1 ORDER BY id",
            )
            .map_err(self.sql("reading play sessions"))?;
        stmt.query_map([&self.session_id], |r| {
            Ok(PlaySession {
                id: r.get(0)?,
                turn_start: r.get(1)?,
                turn_end: r.get(2)?,
                recap: r.get(3)?,
            })
        })
        .and_then(Iterator::collect)
        .map_err(self.sql("reading play sessions"))
    }

    /// Keep the "Previously…" shown when a play session began, and the summary
    /// it makes of the turns before it, in one transaction.
    pub fn record_recap(
        &mut self,
        play_session: i64,
        recap: &str,
        summary: Option<&Summary>,
    ) -> Result<(), StoreError> {
        let sql = self.sql_detached();
        let session_id = self.session_id.clone();
        let tx = self.conn.transaction().map_err(sql("recording a recap"))?;
        tx.execute(
            "UPDATE play_sessions SET recap = ?3 WHERE session_id = ?1 AND id = ?2",
            params![session_id, play_session, recap],
        )
        .map_err(sql("recording a recap"))?;
        if let Some(s) = summary {
            tx.execute(
                "INSERT INTO summaries (session_id, scope, scope_id, text, turn_range_start, turn_range_end)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![session_id, s.scope, s.scope_id, s.text, s.turn_start, s.turn_end],
            )
            .map_err(sql("recording a summary"))?;
        }
        tx.commit().map_err(sql("recording a recap"))
    }

    /// Store one summary (stream compression).
    pub fn add_summary(&self, s: &Summary) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO summaries (session_id, scope, scope_id, text, turn_range_start, turn_range_end)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![self.session_id, s.scope, s.scope_id, s.text, s.turn_start, s.turn_end],
            )
            .map(|_| ())
            .map_err(self.sql("recording a summary"))
    }

    /// Every summary, by the turns they cover.
    pub fn summaries(&self) -> Result<Vec<Summary>, StoreError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT scope, scope_id, text, turn_range_start, turn_range_end FROM summaries
                 WHERE session_id = ?1 ORDER BY turn_range_end, id",
            )
            .map_err(self.sql("reading summaries"))?;
        stmt.query_map([&self.session_id], |r| {
            Ok(Summary {
                scope: r.get(0)?,
                scope_id: r.get(1)?,
                text: r.get(2)?,
                turn_start: r.get(3)?,
                turn_end: r.get(4)?,
            })
        })
        .and_then(Iterator::collect)
        .map_err(self.sql("reading summaries"))
    }
}

/// A committed turn as stored, for replay.
#[derive(Clone, Debug)]
pub struct StoredTurn {
    pub user_action_id: String,
    pub scene_before_id: String,
    pub scene_id: String,
    pub kind: String,
    pub action_text: String,
    pub result: Value,
    pub events: Vec<TurnEvent>,
    /// The messages the turn appended.
    pub messages: Vec<Message>,
}

impl Store {
    /// The turn that made scene `scene_id`, with its events and messages.
    pub fn stored_turn(&self, scene_id: &str) -> Result<StoredTurn, StoreError> {
        let (user_action_id, scene_before_id, kind, action_text, result) = self
            .conn
            .query_row(
                "SELECT user_action_id, scene_before_id, kind, action_text, result_json
                 FROM turns WHERE session_id = ?1 AND scene_id = ?2",
                params![self.session_id, scene_id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                    ))
                },
            )
            .map_err(self.sql("reading the turn"))?;
        let mut stmt = self
            .conn
            .prepare(
                "SELECT event_type, step_name, payload_json, model_key, prompt_version FROM turn_events
                 WHERE session_id = ?1 AND scene_id = ?2 ORDER BY id",
            )
            .map_err(self.sql("reading the turn's events"))?;
        let rows = stmt
            .query_map(params![self.session_id, scene_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(self.sql("reading the turn's events"))?;
        let mut events = Vec::new();
        for (event_type, step_name, payload, model_key, prompt_version) in rows {
            events.push(TurnEvent {
                event_type,
                step_name,
                payload: serde_json::from_str(&payload).map_err(self.json_err("a turn event"))?,
                model_key,
                prompt_version,
            });
        }
        let messages = self.messages_on(&json(&[scene_id]))?;
        Ok(StoredTurn {
            user_action_id,
            scene_before_id,
            scene_id: scene_id.to_owned(),
            kind,
            action_text,
            result: serde_json::from_str(&result).map_err(self.json_err("a turn's result"))?,
            events,
            messages,
        })
    }
}
