//! What one turn was shown from memory and lore (and which skills it called for), kept with it.
//!
//! A per-turn record, assembled by `session/remember.rs` and committed as the
//! turn's `recall` event, so a replay shows the model exactly the same context.
//! It lives in the session, not in `memory/`, because it also carries the
//! skill routing (`skills/` stands above `memory/`).

use serde::{Deserialize, Serialize};

use crate::memory::{LoreHit, MemoryHit};
use crate::skills::route::Routing;

/// What one turn was shown from memory and lore; recorded with the turn so it replays.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Recalled {
    pub query: String,
    pub lore: Vec<LoreHit>,
    pub memories: Vec<MemoryHit>,
    /// Whether an episodic memory relevant to this action was recalled (seed 002 §7.6: +1).
    pub episodic_bonus: bool,
    pub took_ms: f64,
    /// The scene lore cache this turn was shown (seed 001 `SceneLoreCache`); null when none.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub scene: serde_json::Value,
    /// `scene` came from the cache (seed 001 `lore_cache_hit_rate`), not made for this turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scene_cached: bool,
    /// Which skills the move calls for (#25); absent when no router judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Routing>,
}

impl Recalled {
    /// Lore tokens shown.
    pub fn lore_tokens(&self) -> usize {
        self.lore.iter().map(|h| h.token_count).sum()
    }
}
