//! Retrieval: lore by metadata, meaning and keywords under a token budget, and memories recalled.
//!
//! Retrieval (seed 001 three-stage hybrid retrieval, seed 002 §4.1.3 recall): lore by metadata →
//! semantic + keyword ranking → token budget; memory events by filters → similarity threshold.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::chunk::{Chunk, Corpus};
use super::{DIM, VectorIndex};

/// How much a memory event matters (seed 002 §4.1.3 `significance`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Significance {
    Low,
    #[default]
    Medium,
    High,
}

impl Significance {
    pub fn as_str(self) -> &'static str {
        match self {
            Significance::Low => "low",
            Significance::Medium => "medium",
            Significance::High => "high",
        }
    }

    pub fn parse(s: &str) -> Self {
        match s {
            "low" => Significance::Low,
            "high" => Significance::High,
            _ => Significance::Medium,
        }
    }
}

/// One stored memory event (seed 002 §6.1.1), scoped to the scene that made it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MemoryEvent {
    pub summary: String,
    pub characters: Vec<String>,
    pub location: String,
    pub significance: Significance,
    /// A major triumph or failure (seed 002 §7.6): always surfaced when relevant, +1 in related rolls.
    pub episodic: bool,
    /// `action`, `fallback`, `summary` (a compressed stretch of older turns).
    pub action_type: String,
    pub turn: u64,
    /// The sitting (play session) it happened in.
    pub play_session: i64,
    /// The scene it belongs to: recall only sees the current branch.
    pub scene_id: String,
}

/// What to recall.
#[derive(Clone, Debug)]
pub struct MemoryQuery {
    pub text: String,
    pub location: Option<String>,
    /// Every listed character must be involved.
    pub characters: Vec<String>,
    /// Inclusive turn range.
    pub turns: Option<(u64, u64)>,
    pub limit: usize,
    /// Seed 002's default similarity threshold is 0.7.
    pub threshold: f32,
}

impl MemoryQuery {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            location: None,
            characters: Vec::new(),
            turns: None,
            limit: 3,
            threshold: DEFAULT_THRESHOLD,
        }
    }
}

/// Seed 002 §4.1.3.
pub const DEFAULT_THRESHOLD: f32 = 0.7;

/// Episodic memories surface at a lower bar than ordinary ones (seed 002 §7.6:
/// "always retrieved when relevant"), and beyond the limit.
pub const EPISODIC_THRESHOLD: f32 = 0.3;

/// A recalled memory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MemoryHit {
    pub turn: u64,
    pub summary: String,
    pub relevance: f32,
    pub episodic: bool,
    pub location: String,
    pub characters: Vec<String>,
}

/// Memory events of a save with their vectors.
#[derive(Clone, Debug, Default)]
pub struct MemoryIndex {
    pub events: Vec<MemoryEvent>,
    vectors: VectorIndex,
}

impl MemoryIndex {
    pub fn push(&mut self, event: MemoryEvent, vector: Option<&[f32]>) {
        self.events.push(event);
        self.vectors.push(vector);
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Drop events that are not on `branch` (after a rewind).
    pub fn retain_branch(&mut self, branch: &HashSet<String>) {
        let mut kept = Self::default();
        for (i, e) in self.events.iter().enumerate() {
            if branch.contains(&e.scene_id) {
                let v = self.vectors.slot(i);
                kept.push(e.clone(), v);
            }
        }
        *self = kept;
    }

    /// Seed 002 `recall`: the events on `branch` that pass the filters, ranked
    /// by similarity to `query_vector` above the threshold; episodic ones at a
    /// lower bar and on top of the limit. Without a vector (no embedder), the
    /// most recent significant events that pass the filters.
    pub fn recall(
        &self,
        q: &MemoryQuery,
        query_vector: Option<&[f32]>,
        branch: Option<&HashSet<String>>,
    ) -> Vec<MemoryHit> {
        let passes = |e: &MemoryEvent| {
            branch.is_none_or(|b| b.contains(&e.scene_id))
                && q.location.as_ref().is_none_or(|l| &e.location == l)
                && q.characters.iter().all(|c| e.characters.contains(c))
                && q.turns
                    .is_none_or(|(from, to)| (from..=to).contains(&e.turn))
        };
        let hit = |e: &MemoryEvent, relevance: f32| MemoryHit {
            turn: e.turn,
            summary: e.summary.clone(),
            relevance,
            episodic: e.episodic,
            location: e.location.clone(),
            characters: e.characters.clone(),
        };
        let Some(qv) = query_vector.filter(|v| v.len() == DIM) else {
            let mut recent: Vec<&MemoryEvent> = self
                .events
                .iter()
                .filter(|e| passes(e) && e.significance >= Significance::Medium)
                .collect();
            recent.sort_by_key(|e| std::cmp::Reverse(e.turn));
            return recent
                .into_iter()
                .take(q.limit)
                .map(|e| hit(e, 0.0))
                .collect();
        };
        let scores = self.vectors.scores(qv);
        let mut ranked: Vec<(usize, f32)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(i, s)| {
                let e = &self.events[i];
                let bar = if e.episodic {
                    EPISODIC_THRESHOLD.min(q.threshold)
                } else {
                    q.threshold
                };
                s >= bar && passes(e)
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut out: Vec<MemoryHit> = Vec::new();
        for &(i, s) in &ranked {
            let e = &self.events[i];
            if out.len() < q.limit && s >= q.threshold {
                out.push(hit(e, s));
            }
        }
        // Episodic memories always surface when relevant (at most two beyond the limit).
        let extra: Vec<MemoryHit> = ranked
            .iter()
            .filter(|&&(i, _)| self.events[i].episodic)
            .filter(|&&(i, _)| !out.iter().any(|h| h.turn == self.events[i].turn))
            .take(2)
            .map(|&(i, s)| hit(&self.events[i], s))
            .collect();
        out.extend(extra);
        out
    }
}

/// What the lore retriever is asked (seed 001 `LoreRetrievalQuery`).
#[derive(Clone, Debug)]
pub struct LoreQuery {
    /// The text to match: the player's action and the scene, built by [`query_text`].
    pub text: String,
    pub location: Option<String>,
    pub entities: Vec<String>,
    pub factions: Vec<String>,
    pub threads: Vec<String>,
    pub tags: Vec<String>,
    pub corpus: Corpus,
    /// Seed 001's budget cap (default 3000 tokens).
    pub max_tokens: usize,
    pub limit: usize,
    /// Only chunks that match the metadata (seed 001 stage 1 as a hard filter);
    /// otherwise matching chunks are preferred but others may rank above them.
    pub strict: bool,
    /// NPC secrets are for that NPC's own stages, never the narrator's.
    pub include_secrets: bool,
    /// How semantic and keyword rankings are combined.
    pub fusion: Fusion,
    /// Added to chunks that match the metadata (seed 001 stage 1 as a preference).
    pub metadata_bonus: f32,
}

/// How the semantic and keyword rankings become one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fusion {
    /// `0.7 · cosine + 0.3 · BM25 / best BM25`.
    #[default]
    Weighted,
    /// Reciprocal rank fusion: `Σ 1 / (60 + rank)` over both rankings.
    Rrf,
}

/// Reciprocal rank fusion's constant.
const RRF_K: f32 = 60.0;

impl Default for LoreQuery {
    fn default() -> Self {
        Self {
            text: String::new(),
            location: None,
            entities: Vec::new(),
            factions: Vec::new(),
            threads: Vec::new(),
            tags: Vec::new(),
            corpus: Corpus::All,
            max_tokens: 3000,
            limit: 5,
            strict: false,
            include_secrets: false,
            fusion: Fusion::Weighted,
            metadata_bonus: METADATA_BONUS,
        }
    }
}

/// A retrieved lore chunk with its scores.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LoreHit {
    pub chunk_id: String,
    pub file_path: String,
    pub section_path: String,
    pub text: String,
    /// The combined score the ranking used.
    pub score: f32,
    pub semantic: f32,
    pub keyword: f32,
    pub metadata: bool,
    pub token_count: usize,
}

/// Weights of the combined ranking (semantic similarity, normalised BM25, metadata match).
pub const SEMANTIC_WEIGHT: f32 = 0.7;
pub const KEYWORD_WEIGHT: f32 = 0.3;
pub const METADATA_BONUS: f32 = 0.05;

/// Authored chunks with their vectors.
#[derive(Clone, Debug, Default)]
pub struct LoreIndex {
    pub chunks: Vec<Chunk>,
    vectors: VectorIndex,
    slots: HashMap<String, usize>,
}

impl LoreIndex {
    pub fn push(&mut self, chunk: Chunk, vector: Option<&[f32]>) {
        self.slots.insert(chunk.id.clone(), self.chunks.len());
        self.chunks.push(chunk);
        self.vectors.push(vector);
    }

    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Seed 001's three stages. `keyword` holds BM25 scores by chunk id (from
    /// FTS5; higher is better), `query_vector` the embedded query text.
    pub fn retrieve(
        &self,
        q: &LoreQuery,
        query_vector: Option<&[f32]>,
        keyword: &[(String, f32)],
    ) -> Vec<LoreHit> {
        if !q.corpus.includes_authored() {
            return Vec::new();
        }
        // Stage 1: metadata.
        let wanted: BTreeSet<&str> = q
            .location
            .iter()
            .chain(&q.entities)
            .chain(&q.factions)
            .chain(&q.threads)
            .map(String::as_str)
            .collect();
        let tags: BTreeSet<&str> = q.tags.iter().map(String::as_str).collect();
        let matches_meta = |c: &Chunk| {
            let m = &c.meta;
            m.location_ids
                .iter()
                .chain(&m.entity_ids)
                .chain(&m.faction_ids)
                .chain(&m.thread_ids)
                .any(|id| wanted.contains(id.as_str()))
                || m.tags.iter().any(|t| tags.contains(t.as_str()))
        };
        // Stage 2: ranking.
        let kw = self.keyword_scores(keyword);
        let semantic = query_vector
            .filter(|v| v.len() == DIM)
            .map(|v| self.vectors.scores(v));
        let eligible = |i: usize| {
            let c = &self.chunks[i];
            (q.include_secrets || c.meta.kind != "secret") && (!q.strict || matches_meta(c))
        };
        // Ranks (0-based) among eligible chunks, for reciprocal rank fusion.
        let rank_of = |scores: &[f32]| -> Vec<Option<usize>> {
            let mut order: Vec<usize> = (0..scores.len())
                .filter(|&i| eligible(i) && scores[i] > 0.0)
                .collect();
            order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            let mut ranks = vec![None; scores.len()];
            for (r, i) in order.into_iter().enumerate() {
                ranks[i] = Some(r);
            }
            ranks
        };
        let sem_rank = semantic.as_deref().map(rank_of);
        let kw_rank = rank_of(&kw);
        let rrf = |r: Option<usize>| {
            #[allow(clippy::cast_precision_loss, reason = "a rank")]
            r.map_or(0.0, |r| 1.0 / (RRF_K + r as f32 + 1.0))
        };
        let mut ranked: Vec<LoreHit> = (0..self.chunks.len())
            .filter(|&i| eligible(i))
            .filter_map(|i| {
                let c = &self.chunks[i];
                let metadata = matches_meta(c);
                let sem = semantic.as_ref().map_or(0.0, |s| s[i]);
                let fused = match (&semantic, q.fusion) {
                    (Some(_), Fusion::Weighted) => SEMANTIC_WEIGHT * sem + KEYWORD_WEIGHT * kw[i],
                    (Some(_), Fusion::Rrf) => {
                        (rrf(sem_rank.as_ref().and_then(|r| r[i])) + rrf(kw_rank[i])) * RRF_K
                    }
                    (None, _) => kw[i],
                };
                let score = fused + if metadata { q.metadata_bonus } else { 0.0 };
                (semantic.is_some() || kw[i] > 0.0).then(|| LoreHit {
                    chunk_id: c.id.clone(),
                    file_path: c.file_path.clone(),
                    section_path: c.section_path.clone(),
                    text: c.text.clone(),
                    score,
                    semantic: sem,
                    keyword: kw[i],
                    metadata,
                    token_count: c.token_count,
                })
            })
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score));
        // Stage 3: the budget.
        within_budget(ranked, q.limit, q.max_tokens)
    }

    /// Each chunk's BM25 score as a share of the best one (0 for chunks that did not match).
    fn keyword_scores(&self, keyword: &[(String, f32)]) -> Vec<f32> {
        let best_keyword = keyword.iter().map(|k| k.1).fold(0.0_f32, f32::max);
        let mut kw = vec![0.0_f32; self.chunks.len()];
        if best_keyword > 0.0 {
            for (id, s) in keyword {
                if let Some(&slot) = self.slots.get(id) {
                    kw[slot] = s / best_keyword;
                }
            }
        }
        kw
    }
}

/// The best hits, in order, up to `limit` of them and `max_tokens` in all;
/// the first that does not fit ends the list.
fn within_budget(ranked: Vec<LoreHit>, limit: usize, max_tokens: usize) -> Vec<LoreHit> {
    let mut budget = max_tokens;
    let mut out = Vec::new();
    for hit in ranked {
        if out.len() >= limit || hit.token_count > budget {
            break;
        }
        budget -= hit.token_count;
        out.push(hit);
    }
    out
}

/// Seed 001's retrieval query construction: where, who, what the player does, which threads, and what just happened.
pub fn query_text(
    location: &str,
    present: &[String],
    player_input: &str,
    threads: &[String],
    recent: Option<&str>,
) -> String {
    let mut parts = vec![player_input.trim().to_owned()];
    if !location.is_empty() {
        parts.push(format!("Location: {location}"));
    }
    if !present.is_empty() {
        parts.push(format!("Present: {}", present.join(", ")));
    }
    if !threads.is_empty() {
        parts.push(format!("Threads: {}", threads.join(", ")));
    }
    if let Some(r) = recent.filter(|r| !r.is_empty()) {
        parts.push(format!("Recent: {r}"));
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::chunk::ChunkMeta;

    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; DIM];
        v[i] = 1.0;
        v
    }

    fn event(turn: u64, scene: &str, location: &str, episodic: bool) -> MemoryEvent {
        MemoryEvent {
            summary: format!("turn {turn}"),
            characters: vec!["player".into(), "hesper_vane".into()],
            location: location.into(),
            significance: Significance::High,
            episodic,
            action_type: "action".into(),
            turn,
            play_session: 1,
            scene_id: scene.into(),
        }
    }

    #[test]
    fn recall_filters_thresholds_and_surfaces_episodic_memories() {
        let mut index = MemoryIndex::default();
        let near = {
            let mut v = unit(0);
            v[1] = 0.3;
            let n = super::super::dot(&v, &v).sqrt();
            v.iter().map(|x| x / n).collect::<Vec<_>>()
        };
        index.push(event(1, "s1", "quay", false), Some(&unit(0)));
        index.push(event(2, "s2", "toll_house", false), Some(&near));
        index.push(event(3, "s3", "quay", false), Some(&unit(1)));
        let mut half = unit(0);
        half[1] = 1.0;
        let half: Vec<f32> = half.iter().map(|x| x / 2f32.sqrt()).collect();
        index.push(event(4, "s4", "quay", true), Some(&half));
        let q = MemoryQuery::new("x");
        let hits = index.recall(&q, Some(&unit(0)), None);
        let turns: Vec<u64> = hits.iter().map(|h| h.turn).collect();
        // 1 (1.0), 2 (0.96); 4 is episodic at 0.71 → in; 3 (0.0) out.
        assert_eq!(turns, [1, 2, 4]);
        let q = MemoryQuery {
            location: Some("quay".into()),
            ..MemoryQuery::new("x")
        };
        let turns: Vec<u64> = index
            .recall(&q, Some(&unit(0)), None)
            .iter()
            .map(|h| h.turn)
            .collect();
        assert_eq!(turns, [1, 4]);
        let branch: HashSet<String> = ["s2".to_owned(), "s3".to_owned()].into();
        let turns: Vec<u64> = index
            .recall(&MemoryQuery::new("x"), Some(&unit(0)), Some(&branch))
            .iter()
            .map(|h| h.turn)
            .collect();
        assert_eq!(turns, [2], "nothing from another branch");
        let q = MemoryQuery {
            turns: Some((2, 3)),
            threshold: 0.0,
            ..MemoryQuery::new("x")
        };
        let turns: Vec<u64> = index
            .recall(&q, Some(&unit(0)), None)
            .iter()
            .map(|h| h.turn)
            .collect();
        assert_eq!(turns, [2, 3]);
    }

    fn chunk(id: &str, tokens: usize, location: &str, kind: &str) -> Chunk {
        Chunk {
            id: id.into(),
            file_path: "f".into(),
            section_path: String::new(),
            chunk_index: 0,
            paragraph_id: 0,
            method: "paragraph".into(),
            text: id.into(),
            meta: ChunkMeta {
                kind: kind.into(),
                location_ids: vec![location.into()],
                ..ChunkMeta::default()
            },
            token_count: tokens,
        }
    }

    #[test]
    fn lore_ranks_semantic_with_keywords_filters_and_caps_the_budget() {
        let mut index = LoreIndex::default();
        index.push(chunk("a", 100, "quay", "lore"), Some(&unit(0)));
        index.push(chunk("b", 100, "hall", "lore"), Some(&unit(1)));
        index.push(chunk("c", 100, "quay", "secret"), Some(&unit(0)));
        index.push(chunk("d", 500, "hall", "lore"), Some(&unit(2)));
        let mut q = LoreQuery {
            location: Some("quay".into()),
            max_tokens: 3000,
            limit: 5,
            ..LoreQuery::default()
        };
        let ids = |hits: Vec<LoreHit>| hits.into_iter().map(|h| h.chunk_id).collect::<Vec<_>>();
        // Semantic on `a`, a keyword hit on `b`; the secret is never shown.
        let hits = index.retrieve(&q, Some(&unit(0)), &[("b".into(), 4.0)]);
        assert_eq!(ids(hits.clone())[..2], ["a", "b"]);
        assert!(!ids(hits.clone()).contains(&"c".to_owned()));
        assert!(hits[0].metadata && !hits[1].metadata);
        // The budget stops before `d` would overflow it.
        q.max_tokens = 250;
        assert_eq!(ids(index.retrieve(&q, Some(&unit(0)), &[])), ["a", "b"]);
        // Strict: only chunks at the location.
        q.strict = true;
        q.max_tokens = 3000;
        assert_eq!(ids(index.retrieve(&q, Some(&unit(1)), &[])), ["a"]);
        // Without vectors, keywords alone, and only chunks they hit.
        q.strict = false;
        assert_eq!(ids(index.retrieve(&q, None, &[("d".into(), 1.0)])), ["d"]);
        q.corpus = Corpus::History;
        assert!(index.retrieve(&q, Some(&unit(0)), &[]).is_empty());
    }
}
