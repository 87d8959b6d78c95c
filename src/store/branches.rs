//! Reading the story's branches: the session row, scenes, a branch's messages and observations.
//!
//! Every scene keeps its parent, so the story is a tree and "the current
//! branch" is the chain from the opening scene to the session's current one.
//! A rewind or a loaded save slot adds a scene copying an earlier one
//! ([`Store::rewind`], [`Store::load_bookmark`]): the branch played since stays
//! in the file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rusqlite::{OptionalExtension, params};
use serde_json::Value;

use super::{Bookmark, Committed, Scene, SceneKind, SessionInfo, Store, StoreError, TurnCommit};
use super::{TurnEvent, json};
use crate::transcript::{Kind, Message, MessageId, Observation};

impl Store {
    /// The session row.
    pub fn session(&self) -> Result<SessionInfo, StoreError> {
        let (mut info, [ids, calibration, prompts]) = self
            .conn
            .query_row(
                "SELECT id, campaign_id, campaign_path, scenario_id, ruleset_id, character_ids,
                        current_scene_id, scene_index, turn_index, small_model_key, large_model_key,
                        calibration_json, prompt_versions_json, seed, play_minutes
                 FROM sessions WHERE id = ?1",
                [&self.session_id],
                |r| {
                    let text = |i| r.get::<_, String>(i);
                    let info = SessionInfo {
                        id: r.get(0)?,
                        campaign_id: r.get(1)?,
                        campaign_path: PathBuf::from(text(2)?),
                        scenario_id: r.get(3)?,
                        ruleset_id: r.get(4)?,
                        // The JSON columns (5, 11, 12) are parsed below.
                        character_ids: Vec::new(),
                        current_scene_id: r.get(6)?,
                        scene_index: r.get(7)?,
                        turn_index: r.get(8)?,
                        small_model_key: r.get(9)?,
                        large_model_key: r.get(10)?,
                        calibration: Value::Null,
                        prompt_versions: Value::Null,
                        seed: u64::from_ne_bytes(r.get::<_, i64>(13)?.to_ne_bytes()),
                        play_minutes: r.get(14)?,
                    };
                    Ok((info, [text(5)?, text(11)?, text(12)?]))
                },
            )
            .map_err(self.sql("reading the session"))?;
        info.character_ids = serde_json::from_str(&ids).map_err(self.json_err("character ids"))?;
        info.calibration =
            serde_json::from_str(&calibration).map_err(self.json_err("calibration"))?;
        info.prompt_versions =
            serde_json::from_str(&prompts).map_err(self.json_err("prompt versions"))?;
        Ok(info)
    }

    /// Keeps the prompt versions the session pins (`prompt_versions`).
    pub fn set_prompt_versions(&self, pins: &Value) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE sessions SET prompt_versions_json = ?2 WHERE id = ?1",
                rusqlite::params![self.session_id, pins.to_string()],
            )
            .map_err(self.sql("pinning the prompt versions"))?;
        Ok(())
    }

    /// A scene by id.
    pub fn scene(&self, id: &str) -> Result<Scene, StoreError> {
        let (scene_index, parent_id, turn_index, kind, state, world, play_minutes) = self
            .conn
            .query_row(
                "SELECT scene_index, parent_scene_id, turn_index, kind, state_json, world_json,
                        play_minutes
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
                        r.get::<_, Option<f64>>(6)?,
                    ))
                },
            )
            .map_err(self.sql("reading a scene"))?;
        Ok(Scene {
            id: id.to_owned(),
            scene_index,
            parent_id,
            turn_index,
            kind: SceneKind::parse(&kind).ok_or_else(|| StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!("scene `{id}` is of an unknown kind `{kind:.40}`"),
            })?,
            state: serde_json::from_str(&state).map_err(self.json_err("scene state"))?,
            world: serde_json::from_str(&world).map_err(self.json_err("world state"))?,
            play_minutes,
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

    /// Scene ids from the opening scene to `scene_id`, oldest first. A save
    /// whose parents form a cycle (#44: a crafted file) is an error, not a
    /// walk without end: `UNION` stops at the first repeated scene, and a
    /// branch must begin at a scene without a parent.
    pub fn branch_to(&self, scene_id: &str) -> Result<Vec<String>, StoreError> {
        let chain: Vec<(String, Option<String>)> = self.rows(
            "WITH RECURSIVE chain(id, parent, idx) AS (
               SELECT s.id, s.parent_scene_id, s.scene_index FROM scenes s WHERE s.id = ?1
               UNION
               SELECT s.id, s.parent_scene_id, s.scene_index FROM scenes s
                 JOIN chain ON s.id = chain.parent
             )
             SELECT id, parent FROM chain ORDER BY idx",
            [scene_id],
            "reading the branch",
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?)),
        )?;
        if !chain.is_empty() && !chain.iter().any(|(_, parent)| parent.is_none()) {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
                reason: format!(
                    "the scenes before {scene_id} lead back to themselves (a cycle of {} scenes); the save was made or changed by something other than Loreloom",
                    chain.len()
                ),
            });
        }
        Ok(chain.into_iter().map(|(id, _)| id).collect())
    }

    /// The message stream of the current branch, in order.
    pub fn messages(&self) -> Result<Vec<Message>, StoreError> {
        self.messages_on(&json(&self.branch()?))
    }

    /// The message stream of the branch that ends at scene `scene_id`, in order.
    pub fn messages_at(&self, scene_id: &str) -> Result<Vec<Message>, StoreError> {
        self.messages_on(&json(&self.branch_to(scene_id)?))
    }

    /// The messages of the scenes on `branch` (a JSON array of scene ids), in order.
    pub(super) fn messages_on(&self, branch: &str) -> Result<Vec<Message>, StoreError> {
        self.rows(
            "SELECT turn_id, seq, owner, kind, target, content FROM messages
             WHERE session_id = ?1 AND scene_id IN (SELECT value FROM json_each(?2))
             ORDER BY turn_id, seq",
            params![self.session_id, branch],
            "reading messages",
            |r| {
                Ok(Message {
                    id: MessageId {
                        turn_id: super::unsigned(0, r.get::<_, i64>(0)?)?,
                        seq: r.get::<_, u32>(1)?,
                    },
                    owner: r.get(2)?,
                    kind: super::known(3, &r.get::<_, String>(3)?, Kind::parse)?,
                    target: r.get(4)?,
                    content: r.get(5)?,
                })
            },
        )
    }

    /// A character's observations on the current branch.
    pub fn observations(&self, character_id: &str) -> Result<Vec<Observation>, StoreError> {
        self.observations_on(&json(&self.branch()?), Some(character_id))
    }

    /// Every character's observations on the branch that ends at scene `scene_id`.
    pub fn observations_at(&self, scene_id: &str) -> Result<Vec<Observation>, StoreError> {
        self.observations_on(&json(&self.branch_to(scene_id)?), None)
    }

    /// Observations on `branch` (a JSON array of scene ids), of one character or of all.
    fn observations_on(
        &self,
        branch: &str,
        character_id: Option<&str>,
    ) -> Result<Vec<Observation>, StoreError> {
        self.rows(
            "SELECT character_id, content, importance, reinforcement_count, created_minute
             FROM observations
             WHERE session_id = ?1 AND (?2 IS NULL OR character_id = ?2)
               AND scene_id IN (SELECT value FROM json_each(?3))
             ORDER BY id",
            params![self.session_id, character_id, branch],
            "reading observations",
            |r| {
                Ok(Observation {
                    character_id: r.get(0)?,
                    content: r.get(1)?,
                    importance: r.get(2)?,
                    reinforcement_count: r.get(3)?,
                    created_minute: r.get(4)?,
                })
            },
        )
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
        let choices = self.turn_result(&target.id)?.map_or(Value::Null, |r| {
            r.get("choices").cloned().unwrap_or(Value::Null)
        });
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
        let rows = self.rows(
            "SELECT DISTINCT m.turn_id, s.scene_index FROM messages m
               JOIN scenes s ON s.id = m.scene_id
             WHERE m.session_id = ?1 AND m.scene_id IN (SELECT value FROM json_each(?2))",
            params![self.session_id, json(&self.branch()?)],
            "reading the turns' scenes",
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )?;
        Ok(rows
            .into_iter()
            .map(|(turn, scene)| (u64::try_from(turn).unwrap_or(0), scene))
            .collect())
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
        self.rows(
            "SELECT b.slot, b.scene_id, s.scene_index, b.summary, b.saved_at
               FROM bookmarks b JOIN scenes s ON s.id = b.scene_id
             WHERE b.session_id = ?1 ORDER BY b.slot",
            [&self.session_id],
            "reading the save slots",
            |r| {
                Ok(Bookmark {
                    slot: r.get(0)?,
                    scene_id: r.get(1)?,
                    scene_index: r.get(2)?,
                    summary: r.get(3)?,
                    saved_at: u64::try_from(r.get::<_, i64>(4)?).unwrap_or(0),
                })
            },
        )
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

    /// The result of the turn that made the current scene (its narration, rolls, choices).
    pub fn last_result(&self) -> Result<Option<Value>, StoreError> {
        self.turn_result(&self.session()?.current_scene_id)
    }
}
