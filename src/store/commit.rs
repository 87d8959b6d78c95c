//! The turn transaction: one turn's rows written whole or not at all (seed 003's contract).
//!
//! [`Store::commit_turn`] takes an immediate write lock, returns the stored
//! result for a repeated `user_action_id` (idempotency), refuses with
//! [`StoreError::Conflict`] if another turn moved the session past the scene the
//! turn started from (optimistic concurrency), then inserts the scene, turn,
//! messages, actions, observations, relations and events, updates the world
//! tables and moves the session's pointer, all in one transaction.

use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};
use serde_json::{Map, Value};

use super::projections::{rebuild_projections, update_projections};
use super::{ActionRecord, Committed, NOW, SceneKind, Store, StoreError, TurnCommit, TurnEvent};
use super::{json, memory, scene_id};
use crate::rules::WorldState;
use crate::transcript::{Message, Observation};

impl Store {
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
        if let Some(first) = committed_before(&tx, &session, &turn.user_action_id)
            .map_err(sql("checking the idempotency key"))?
        {
            return Ok(first);
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
        let (Some(scene_index), Some(turn_index)) = (
            scene_index.checked_add(1).filter(|i| *i > 0),
            turn_index.checked_add(1).filter(|i| *i > 0),
        ) else {
            return Err(StoreError::Corrupt {
                path,
                reason: format!(
                    "the session's scene index ({scene_index}) or turn index ({turn_index}) is out of range"
                ),
            });
        };
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
            turn.play_minutes,
        )
        .map_err(sql("writing the scene"))?;
        insert_turn(&tx, &session, &new_id, turn_index, &current, turn)
            .map_err(sql("writing the turn"))?;
        insert_messages(&tx, &session, &new_id, &turn.messages).map_err(sql("writing messages"))?;
        insert_actions(&tx, &session, &new_id, &turn.actions).map_err(sql("writing actions"))?;
        insert_observations(&tx, &session, &new_id, &turn.observations)
            .map_err(sql("writing observations"))?;
        insert_events(&tx, &session, &new_id, turn_index, &turn.events)
            .map_err(sql("writing turn events"))?;
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
}

/// What the submission `user_action_id` committed, if it was committed before.
fn committed_before(
    tx: &Transaction<'_>,
    session: &str,
    user_action_id: &str,
) -> rusqlite::Result<Option<Committed>> {
    let previous = tx
        .query_row(
            "SELECT t.turn_index, t.scene_id, s.scene_index, t.result_json
             FROM turns t JOIN scenes s ON s.id = t.scene_id
             WHERE t.session_id = ?1 AND t.user_action_id = ?2",
            params![session, user_action_id],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, String>(3)?,
                ))
            },
        )
        .optional()?;
    Ok(
        previous.map(|(turn_index, scene_id, scene_index, result)| Committed {
            turn_index,
            scene_id,
            scene_index,
            result: serde_json::from_str(&result).unwrap_or(Value::Null),
            duplicate: true,
        }),
    )
}

/// The turn itself: its key, the scenes before and after, what it showed.
fn insert_turn(
    tx: &Transaction<'_>,
    session: &str,
    scene: &str,
    turn_index: i64,
    scene_before: &str,
    turn: &TurnCommit,
) -> rusqlite::Result<()> {
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
            scene_before,
            scene,
            turn.kind.name(),
            turn.action_text,
            turn.result.to_string(),
        ],
    )?;
    Ok(())
}

fn insert_actions(
    tx: &Transaction<'_>,
    session: &str,
    scene: &str,
    actions: &[ActionRecord],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO actions (session_id, scene_id, character_id, action_text,
           resolved_outcome, created_at) VALUES (?1, ?2, ?3, ?4, ?5, {NOW})"
    ))?;
    for a in actions {
        stmt.execute(params![
            session,
            scene,
            a.character_id,
            a.action_text,
            a.resolved_outcome.to_string()
        ])?;
    }
    Ok(())
}

fn insert_observations(
    tx: &Transaction<'_>,
    session: &str,
    scene: &str,
    observations: &[Observation],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO observations (session_id, scene_id, character_id, content,
           importance, reinforcement_count, created_minute, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, {NOW})"
    ))?;
    for o in observations {
        stmt.execute(params![
            session,
            scene,
            o.character_id,
            o.content,
            o.importance,
            o.reinforcement_count,
            o.created_minute
        ])?;
    }
    Ok(())
}

fn insert_events(
    tx: &Transaction<'_>,
    session: &str,
    scene: &str,
    turn_index: i64,
    events: &[TurnEvent],
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(&format!(
        "INSERT INTO turn_events (session_id, scene_id, turn_index, event_type,
           step_name, payload_json, model_key, prompt_version, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, {NOW})"
    ))?;
    for e in events {
        stmt.execute(params![
            session,
            scene,
            turn_index,
            e.event_type,
            e.step_name,
            e.payload.to_string(),
            e.model_key,
            e.prompt_version
        ])?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments, reason = "one row's columns")]
pub(super) fn insert_scene(
    tx: &Transaction<'_>,
    session: &str,
    id: &str,
    index: i64,
    parent: Option<&str>,
    turn_index: i64,
    kind: SceneKind,
    state: &Map<String, Value>,
    world: &WorldState,
    play_minutes: f64,
) -> rusqlite::Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO scenes (id, session_id, scene_index, parent_scene_id, turn_index, kind,
               state_json, world_json, play_minutes, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, {NOW})"
        ),
        params![
            id,
            session,
            index,
            parent,
            turn_index,
            kind.name(),
            json(state),
            json(world),
            play_minutes
        ],
    )?;
    Ok(())
}

pub(super) fn insert_messages(
    tx: &Transaction<'_>,
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
pub(super) fn insert_relations(
    tx: &Transaction<'_>,
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
