//! The save file: one SQLite database per save (WAL, bundled SQLite), migrated in code.
//!
//! A save holds one session (seed 003: a scenario instance with its small and
//! large model keys) and its scenes, each a full snapshot with its parent, so a
//! rewind branches instead of deleting. One transaction per turn (seed 003's Turn
//! Transaction Contract, [`Store::commit_turn`]). Timestamps come from SQLite.
//!
//! The store knows rows, not turns: it stands on `transcript/` (messages,
//! observations), `rules/` (the world), `memory/` (events, lore) and nothing
//! above; the session translates its results into [`TurnCommit`]s.
//!
//! - this file: [`Store`], [`StoreError`], opening, creating and migrating a save;
//! - `records`: the row types that go in and come out;
//! - `branches`: the session row, scenes, branches, rewinds and save slots;
//! - `commit`: the turn transaction and its inserts;
//! - `projections`: the world tables kept beside each scene;
//! - `sittings`: play sessions, recaps and summaries;
//! - `replay`: a stored turn read back, and the lore turns recalled;
//! - `memory`: the memory events, the lore index and the scene lore cache.

// These modules read what others wrote (files, saves, model and skill
// output): no unwrap, expect or indexing that could panic on it (#44); an
// invariant that truly holds says so with `#[expect(.., reason)]`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, Params, Row, params};
use serde::Serialize;

mod branches;
mod commit;
mod memory;
mod projections;
mod records;
mod replay;
mod sittings;
#[cfg(test)]
mod tests;

pub use records::{
    ActionRecord, Bookmark, Committed, NewSession, PlaySession, Scene, SceneKind, SessionInfo,
    StoredTurn, Summary, TurnCommit, TurnEvent,
};

use commit::{insert_messages, insert_relations, insert_scene};
use projections::rebuild_projections;

/// The schema this build writes.
pub const SCHEMA_VERSION: i64 = 6;

/// Migrations: entry `i` takes a save from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("schema.sql"),
    include_str!("schema_2.sql"),
    include_str!("schema_3.sql"),
    include_str!("schema_4.sql"),
    include_str!("schema_5.sql"),
    include_str!("schema_6.sql"),
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
        "this turn was not kept: the browser did not store {path} ({source}); it stays in the open page and is tried again"
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
    // A save is a file from anywhere (#44): its schema may not call
    // functions with side effects, nor may SQL corrupt it on purpose.
    conn.pragma_update(None, "trusted_schema", "OFF")
        .map_err(open)?;
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(open)?;
    Ok(conn)
}

/// A turn the game acknowledged survives a power cut: in WAL mode that
/// takes a sync of the log at every commit (`synchronous=FULL`; NORMAL syncs
/// only at checkpoints). Pinned rather than left to the build's default;
/// `tests/power_cuts.rs` holds it to that. (Set once the file is known to be
/// a database: the pragma reads its header.)
fn durable(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "synchronous", "FULL")
}

/// The file a save is copied to before it is migrated from schema `version`:
/// `<name>.schema-<version>.backup` beside it.
pub fn migration_backup(path: &Path, version: i64) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".schema-{version}.backup"));
    PathBuf::from(name)
}

/// Copies the save, whole and consistent (`VACUUM INTO`), before a
/// migration changes it, so a migration that goes wrong (or is killed)
/// leaves the old save to go back to. A backup already there (from a
/// migration that was interrupted) is kept: it is the older one. In the
/// browser the snapshot in `IndexedDB` is only replaced once the migrated save
/// is kept, which is its backup.
fn backup_before_migrating(conn: &Connection, path: &Path, version: i64) -> Result<(), StoreError> {
    if cfg!(target_family = "wasm") {
        return Ok(());
    }
    let backup = migration_backup(path, version);
    if backup.exists() {
        return Ok(());
    }
    let mut part = backup.as_os_str().to_owned();
    part.push(".part");
    let part = PathBuf::from(part);
    let _ = std::fs::remove_file(&part);
    let sql = |source| StoreError::Sql {
        path: path.to_path_buf(),
        context: "copying the save before migrating it",
        source,
    };
    conn.execute("VACUUM INTO ?1", [part.to_string_lossy()])
        .map_err(sql)?;
    let io = |e: std::io::Error| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason: format!(
            "could not keep a backup at {} before migrating ({e}); nothing was changed",
            backup.display()
        ),
    };
    std::fs::File::open(&part)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&part, &backup).map_err(io)?;
    if let Some(dir) = backup.parent() {
        let _ = std::fs::File::open(dir).and_then(|f| f.sync_all());
    }
    Ok(())
}

/// The schema this build makes, as `(type, name)` and each table's columns.
fn schema_of(conn: &Connection) -> rusqlite::Result<BTreeMap<(String, String), Vec<String>>> {
    let mut objects = conn.prepare(
        "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let names: Vec<(String, String)> = objects
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut columns = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    names
        .into_iter()
        .map(|(kind, name)| {
            let cols = if kind == "table" {
                columns
                    .query_map([&name], |r| r.get(0))?
                    .collect::<Result<_, _>>()?
            } else {
                Vec::new()
            };
            Ok(((kind, name), cols))
        })
        .collect()
}

/// What is missing from, or different in, a save's schema compared with the
/// one this build makes (a table dropped or rebuilt without a column), in
/// words; `None` when every table, index and column is there. Extra tables
/// and indexes are let be (triggers and views were refused already).
fn unexpected_schema(conn: &Connection) -> rusqlite::Result<Option<String>> {
    // This build's schema, made once per process (in memory, from the migrations).
    static EXPECTED: std::sync::OnceLock<BTreeMap<(String, String), Vec<String>>> =
        std::sync::OnceLock::new();
    let expected = if let Some(e) = EXPECTED.get() {
        e
    } else {
        let fresh = Connection::open_in_memory()?;
        for migration in MIGRATIONS {
            fresh.execute_batch(migration)?;
        }
        let made = schema_of(&fresh)?;
        EXPECTED.get_or_init(|| made)
    };
    let found = schema_of(conn)?;
    for (object, columns) in expected {
        match found.get(object) {
            None => return Ok(Some(format!("its {} `{}` is missing", object.0, object.1))),
            Some(have) if have != columns => {
                return Ok(Some(format!(
                    "its table `{}` has the columns ({}), not ({})",
                    object.1,
                    have.join(", "),
                    columns.join(", ")
                )));
            }
            Some(_) => {}
        }
    }
    Ok(None)
}

/// The first row that names a row that is not there (`PRAGMA
/// foreign_key_check`), in words.
fn broken_reference(conn: &Connection) -> rusqlite::Result<Option<String>> {
    conn.query_row("PRAGMA foreign_key_check", [], |r| {
        Ok(format!(
            "row {} of `{}` refers to a row of `{}` that is not there",
            r.get::<_, Option<i64>>(1)?.unwrap_or(0),
            r.get::<_, String>(0)?,
            r.get::<_, String>(2)?
        ))
    })
    .optional()
}

/// A stored number that must not be negative, or a conversion error.
pub(crate) fn unsigned(column: usize, n: i64) -> rusqlite::Result<u64> {
    u64::try_from(n).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(column, n))
}

/// A stored name that must be one of a known set (a message's kind), or a
/// conversion error naming it: never a silent default.
pub(crate) fn known<T>(
    column: usize,
    text: &str,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    parse(text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Text,
            format!("`{text:.40}` is not a kind Loreloom writes").into(),
        )
    })
}

/// Refuses a save carrying triggers or views: Loreloom makes none, and a
/// trigger would run on every commit (`DELETE FROM messages` after each turn).
fn foreign_schema(conn: &Connection) -> Result<Option<String>, rusqlite::Error> {
    let mut statement = conn.prepare(
        "SELECT type || ' ' || name FROM sqlite_schema WHERE type IN ('trigger', 'view') ORDER BY name",
    )?;
    let found: Vec<String> = statement
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok((!found.is_empty()).then(|| found.join(", ")))
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
        durable(&conn).map_err(sql("making commits durable"))?;
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
            0.0,
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
        // A write handed to the page earlier that did not reach IndexedDB:
        // said now, and the snapshot written again.
        if let Some(source) = crate::files::failed_write(&self.path) {
            self.kept_at = u64::MAX;
            return Err(StoreError::Keep {
                path: self.path.clone(),
                source,
            });
        }
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

    /// Whether a snapshot handed to the page is still on its way to IndexedDB.
    #[cfg(target_family = "wasm")]
    pub fn keep_pending(&self) -> bool {
        crate::files::write_pending(&self.path)
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
        durable(&conn).map_err(|e| corrupt(e.to_string()))?;
        if let Some(found) = foreign_schema(&conn).map_err(|e| corrupt(e.to_string()))? {
            return Err(corrupt(format!(
                "it carries SQL that Loreloom did not write ({found}), which would run on every turn; it was not opened"
            )));
        }
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| corrupt(e.to_string()))?;
        if version == 0 {
            return Err(corrupt("it has no Loreloom schema".into()));
        }
        if version < 0 {
            return Err(corrupt(format!("its schema version is {version}")));
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
            });
        }
        if version < SCHEMA_VERSION {
            backup_before_migrating(&conn, path, version)?;
        }
        migrate(&mut conn, path)?;
        if let Some(wrong) = unexpected_schema(&conn).map_err(|e| corrupt(e.to_string()))? {
            return Err(corrupt(wrong));
        }
        if let Some(broken) = broken_reference(&conn).map_err(|e| corrupt(e.to_string()))? {
            return Err(corrupt(broken));
        }
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

    /// The rows `sql` yields for `params`, each made by `row`; `context` names
    /// the read in the error.
    fn rows<T>(
        &self,
        sql: &str,
        params: impl Params,
        context: &'static str,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(self.sql(context))?;
        stmt.query_map(params, row)
            .and_then(Iterator::collect)
            .map_err(self.sql(context))
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
