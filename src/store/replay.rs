//! Reads for replay and the session codex: a committed turn as stored, and the lore turns recalled.

use rusqlite::params;
use serde::Deserialize;

use super::{Store, StoreError, StoredTurn, TurnEvent, json};
use crate::memory::LoreHit;

/// The part of a turn's `recall` event the codex needs: the lore it was shown.
/// (The whole record is the session's `Recalled`; the store reads only this.)
#[derive(Deserialize)]
struct RecalledLore {
    lore: Vec<LoreHit>,
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
        let rows = self.rows(
            "SELECT event_type, step_name, payload_json, model_key, prompt_version FROM turn_events
             WHERE session_id = ?1 AND scene_id = ?2 ORDER BY id",
            params![self.session_id, scene_id],
            "reading the turn's events",
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                ))
            },
        )?;
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

    /// The campaign lore recalled into the turns of the current branch, in
    /// the order they were played (each turn's `recall` event).
    pub fn recalled_lore(&self) -> Result<Vec<LoreHit>, StoreError> {
        let payloads = self.rows(
            "SELECT payload_json FROM turn_events
             WHERE session_id = ?1 AND event_type = 'recall'
               AND scene_id IN (SELECT value FROM json_each(?2))
             ORDER BY id",
            params![self.session_id, json(&self.branch()?)],
            "reading recalled lore",
            |r| r.get::<_, String>(0),
        )?;
        let mut out = Vec::new();
        for payload in payloads {
            let recalled: RecalledLore =
                serde_json::from_str(&payload).map_err(self.json_err("a turn's recall"))?;
            out.extend(recalled.lore);
        }
        Ok(out)
    }
}
