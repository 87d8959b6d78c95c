//! Sittings at the game inside a save: play sessions, the recap each began with, and summaries.

use rusqlite::{Connection, params};

use super::{NOW, PlaySession, Store, StoreError, Summary};

impl Store {
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
        self.rows(
            "SELECT id, turn_range_start, turn_range_end, recap FROM play_sessions
             WHERE session_id = ?1 ORDER BY id",
            [&self.session_id],
            "reading play sessions",
            |r| {
                Ok(PlaySession {
                    id: r.get(0)?,
                    turn_start: r.get(1)?,
                    turn_end: r.get(2)?,
                    recap: r.get(3)?,
                })
            },
        )
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
            insert_summary(&tx, &session_id, s).map_err(sql("recording a summary"))?;
        }
        tx.commit().map_err(sql("recording a recap"))
    }

    /// Store one summary (stream compression).
    pub fn add_summary(&self, s: &Summary) -> Result<(), StoreError> {
        insert_summary(&self.conn, &self.session_id, s).map_err(self.sql("recording a summary"))
    }

    /// Every summary, by the turns they cover.
    pub fn summaries(&self) -> Result<Vec<Summary>, StoreError> {
        self.rows(
            "SELECT scope, scope_id, text, turn_range_start, turn_range_end FROM summaries
             WHERE session_id = ?1 ORDER BY turn_range_end, id",
            [&self.session_id],
            "reading summaries",
            |r| {
                Ok(Summary {
                    scope: r.get(0)?,
                    scope_id: r.get(1)?,
                    text: r.get(2)?,
                    turn_start: r.get(3)?,
                    turn_end: r.get(4)?,
                })
            },
        )
    }
}

/// One summary row (a transaction derefs to its connection).
fn insert_summary(conn: &Connection, session_id: &str, s: &Summary) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO summaries (session_id, scope, scope_id, text, turn_range_start, turn_range_end)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![session_id, s.scope, s.scope_id, s.text, s.turn_start, s.turn_end],
    )?;
    Ok(())
}
