//! The save's memory and lore tables: memory events, the lore index and the scene lore cache.
//!
//! Memory events are written with their vectors inside the turn's transaction;
//! the campaign's lore chunks carry an FTS5 keyword index.

use std::collections::HashSet;

use rusqlite::{OptionalExtension, params};

use super::{NOW, Store, StoreError, json};
use crate::memory::recall::{LoreIndex, MemoryIndex};
use crate::memory::{Chunk, ChunkMeta, MemoryEvent, Significance, from_blob, to_blob};

pub(super) fn insert_memory(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene_id: &str,
    turn_index: i64,
    e: &MemoryEvent,
    vector: Option<&[f32]>,
) -> rusqlite::Result<()> {
    tx.execute(
        &format!(
            "INSERT INTO memories (session_id, scene_id, turn_index, play_session, summary,
               characters_json, location, significance, episodic, action_type, embedding,
               embedding_model, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, {NOW})"
        ),
        params![
            session,
            scene_id,
            turn_index,
            e.play_session,
            e.summary,
            serde_json::to_string(&e.characters).unwrap_or_else(|_| "[]".into()),
            e.location,
            e.significance.as_str(),
            e.episodic,
            e.action_type,
            vector.map(to_blob),
            vector.map(|_| crate::memory::EMBEDDING_MODEL),
        ],
    )?;
    Ok(())
}

fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn count(n: i64) -> usize {
    usize::try_from(n).unwrap_or(0)
}

/// Words for an FTS5 query: each quoted, any may match (BM25 ranks by how many and how rare).
pub fn fts_query(text: &str) -> Option<String> {
    const STOP: &[&str] = &[
        "the", "and", "for", "with", "that", "this", "from", "what", "who", "about", "into",
        "your", "you", "are", "was", "were", "has", "have", "had", "his", "her", "its", "our",
        "their", "them", "they", "she", "him", "not", "but", "all", "any", "can", "did", "does",
        "how", "why", "when", "where", "which", "there", "then", "than", "out", "off", "over",
        "location", "present", "threads", "recent",
    ];
    let mut words: Vec<String> = Vec::new();
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        if w.chars().count() > 2 && !STOP.contains(&w.as_str()) && !words.contains(&w) {
            words.push(w);
        }
    }
    (!words.is_empty()).then(|| {
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

impl Store {
    /// The fingerprint and embedding model the lore index was built with.
    pub fn lore_index_info(&self) -> Result<(Option<String>, Option<String>), StoreError> {
        let get = |key: &str| {
            self.conn
                .query_row("SELECT value FROM lore_index WHERE key = ?1", [key], |r| {
                    r.get::<_, String>(0)
                })
                .optional()
                .map_err(self.sql("reading the lore index"))
        };
        Ok((get("fingerprint")?, get("embedding_model")?))
    }

    /// Replace the lore index with `chunks` (and their vectors, when there is an embedder), in one transaction.
    pub fn index_lore(
        &mut self,
        chunks: &[Chunk],
        vectors: Option<&[Vec<f32>]>,
        fingerprint: &str,
        model: Option<&str>,
    ) -> Result<(), StoreError> {
        let sql = self.sql_detached();
        let tx = self.conn.transaction().map_err(sql("indexing the lore"))?;
        tx.execute_batch(
            "DELETE FROM lore_chunks; INSERT INTO lore_fts(lore_fts) VALUES('delete-all'); DELETE FROM lore_index;",
        )
        .map_err(sql("clearing the lore index"))?;
        {
            let mut stmt = tx
                .prepare(
                    "INSERT INTO lore_chunks (id, corpus, file_path, section_path, chunk_index,
                       paragraph_id, method, text, metadata_json, token_count, embedding, context)
                     VALUES (?1, 'authored', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                )
                .map_err(sql("indexing the lore"))?;
            let mut fts = tx
                .prepare("INSERT INTO lore_fts (rowid, context, text) VALUES (?1, ?2, ?3)")
                .map_err(sql("indexing the lore"))?;
            for (i, c) in chunks.iter().enumerate() {
                let vector = vectors.and_then(|v| v.get(i)).map(|v| to_blob(v));
                stmt.execute(params![
                    c.id,
                    c.file_path,
                    c.section_path,
                    int(c.chunk_index),
                    int(c.paragraph_id),
                    c.method,
                    c.text,
                    serde_json::to_string(&c.meta).unwrap_or_else(|_| "{}".into()),
                    int(c.token_count),
                    vector,
                    c.keyword_context(),
                ])
                .map_err(sql("indexing the lore"))?;
                fts.execute(params![tx.last_insert_rowid(), c.keyword_context(), c.text])
                    .map_err(sql("indexing the lore keywords"))?;
            }
        }
        tx.execute(
            "INSERT INTO lore_index (key, value) VALUES ('fingerprint', ?1)",
            [fingerprint],
        )
        .map_err(sql("indexing the lore"))?;
        if let Some(m) = model {
            tx.execute(
                "INSERT INTO lore_index (key, value) VALUES ('embedding_model', ?1)",
                [m],
            )
            .map_err(sql("indexing the lore"))?;
        }
        tx.commit().map_err(sql("indexing the lore"))
    }

    /// The lore index, with vectors where they were stored.
    pub fn lore_index(&self) -> Result<LoreIndex, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, file_path, section_path, chunk_index, paragraph_id, method, text,
                   metadata_json, token_count, embedding FROM lore_chunks ORDER BY rowid",
            )
            .map_err(self.sql("reading the lore index"))?;
        let mut rows = stmt.query([]).map_err(self.sql("reading the lore index"))?;
        let mut index = LoreIndex::default();
        while let Some(r) = rows.next().map_err(self.sql("reading the lore index"))? {
            let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(Chunk, Option<Vec<u8>>)> {
                let meta: String = r.get(7)?;
                Ok((
                    Chunk {
                        id: r.get(0)?,
                        file_path: r.get(1)?,
                        section_path: r.get(2)?,
                        chunk_index: count(r.get(3)?),
                        paragraph_id: count(r.get(4)?),
                        method: r.get(5)?,
                        text: r.get(6)?,
                        meta: serde_json::from_str::<ChunkMeta>(&meta).unwrap_or_default(),
                        token_count: count(r.get(8)?),
                    },
                    r.get(9)?,
                ))
            };
            let (chunk, blob) = read(r).map_err(self.sql("reading the lore index"))?;
            let vector = blob.as_deref().and_then(from_blob);
            index.push(chunk, vector.as_deref());
        }
        Ok(index)
    }

    /// BM25 keyword scores (higher is better) of the chunks that match any
    /// word of `text`; a word in a chunk's context (section path, tags)
    /// counts half as much as one in its text.
    pub fn lore_keywords(
        &self,
        text: &str,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, StoreError> {
        let Some(query) = fts_query(text) else {
            return Ok(Vec::new());
        };
        let rows = self.rows(
            "SELECT c.id, -bm25(lore_fts, 0.5, 1.0) FROM lore_fts JOIN lore_chunks c ON c.rowid = lore_fts.rowid
             WHERE lore_fts MATCH ?1 ORDER BY bm25(lore_fts, 0.5, 1.0) LIMIT ?2",
            params![query, i64::try_from(limit).unwrap_or(i64::MAX)],
            "searching the lore",
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, f64>(1)?)),
        )?;
        #[allow(clippy::cast_possible_truncation, reason = "a score")]
        Ok(rows.into_iter().map(|(id, s)| (id, s as f32)).collect())
    }

    /// Memory events of the current branch with their vectors.
    pub fn memory_index(&self) -> Result<MemoryIndex, StoreError> {
        let branch = self.branch()?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT summary, characters_json, location, significance, episodic, action_type,
                   turn_index, play_session, scene_id, embedding
                 FROM memories
                 WHERE session_id = ?1 AND scene_id IN (SELECT value FROM json_each(?2))
                 ORDER BY id",
            )
            .map_err(self.sql("reading memories"))?;
        let mut rows = stmt
            .query(params![self.session_id, json(&branch)])
            .map_err(self.sql("reading memories"))?;
        let mut index = MemoryIndex::default();
        while let Some(r) = rows.next().map_err(self.sql("reading memories"))? {
            let read = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(MemoryEvent, Option<Vec<u8>>)> {
                let characters: String = r.get(1)?;
                let significance: String = r.get(3)?;
                let turn: i64 = r.get(6)?;
                Ok((
                    MemoryEvent {
                        summary: r.get(0)?,
                        characters: serde_json::from_str(&characters).unwrap_or_default(),
                        location: r.get(2)?,
                        significance: Significance::parse(&significance),
                        episodic: r.get(4)?,
                        action_type: r.get(5)?,
                        turn: u64::try_from(turn).unwrap_or(0),
                        play_session: r.get::<_, Option<i64>>(7)?.unwrap_or(0),
                        scene_id: r.get(8)?,
                    },
                    r.get(9)?,
                ))
            };
            let (event, blob) = read(r).map_err(self.sql("reading memories"))?;
            let vector = blob.as_deref().and_then(from_blob);
            index.push(event, vector.as_deref());
        }
        Ok(index)
    }

    /// Scene ids of the current branch, as a set (for recall's scope).
    pub fn branch_set(&self) -> Result<HashSet<String>, StoreError> {
        Ok(self.branch()?.into_iter().collect())
    }

    /// The scene lore cache (seed 001 `SceneLoreCache`) under `key`, if materialised.
    pub fn scene_lore(&self, key: &str) -> Result<Option<serde_json::Value>, StoreError> {
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT lore_json FROM scene_lore WHERE cache_key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.sql("reading the scene lore"))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Materialise the scene lore cache under `key`, noting the scene snapshot it was made at.
    pub fn put_scene_lore(
        &self,
        key: &str,
        scene_id: &str,
        lore: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                &format!(
                    "INSERT OR REPLACE INTO scene_lore (cache_key, scene_id, lore_json, retrieved_at)
                     VALUES (?1, ?2, ?3, {NOW})"
                ),
                params![key, scene_id, lore.to_string()],
            )
            .map_err(self.sql("writing the scene lore"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::fts_query;

    #[test]
    fn fts_queries_quote_words_and_drop_stopwords() {
        assert_eq!(
            fts_query("Who cut the page from the ledger?").as_deref(),
            Some("\"cut\" OR \"page\" OR \"ledger\"")
        );
        assert_eq!(fts_query("a an of"), None);
        assert_eq!(
            fts_query("\"quotes\" AND NEAR(x)").as_deref(),
            Some("\"quotes\" OR \"near\"")
        );
    }
}
