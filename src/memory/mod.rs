//! Memory and lore: embeddings, lore chunks, memory events and the ranking that picks what to show.
//!
//! Memory and lore (seed 002 §4.1.3, §5.2, §6.2.7; seed 001 hybrid retrieval): sentence embeddings,
//! lore chunks, memory events and the ranking that picks what a stage is shown.
//!
//! Plain Rust except [`embed`] (the only module that touches candle, feature
//! `embed`) and, in the browser build, `page` (the embedder's files from the page,
//! behind a [`memo::Memo`] so a new save's lore is read ahead a few texts a frame). Vectors live in memory as one contiguous `f32` slab per index
//! ([`VectorIndex`]) and are searched exactly: at 384 dimensions a scan over
//! 10,000 vectors is a few million multiply-adds. The save (feature `store`)
//! keeps the rows, the vectors as blobs and an FTS5 index for keywords; this
//! module decides what is relevant.

pub mod chunk;
#[cfg(feature = "embed")]
pub mod embed;
pub mod memo;
#[cfg(all(feature = "embed", target_family = "wasm"))]
pub mod page;
pub mod recall;

use std::path::PathBuf;
use std::sync::Arc;

pub use chunk::{Chunk, ChunkMeta, Corpus, campaign_chunks, token_count};
pub use recall::{LoreHit, MemoryEvent, MemoryHit, Significance};

/// all-MiniLM-L6-v2's vector length.
pub const DIM: usize = 384;

/// The model every vector in a save comes from (seed 002: it must be this one).
pub const EMBEDDING_MODEL: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// Why text could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "the embedding model is missing at {0} (model.safetensors, tokenizer.json, config.json); `./run.sh play` or `./run.sh test` fetches it"
    )]
    Missing(PathBuf),
    #[error("the embedding model at {path} could not be loaded: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("embedding failed: {0}")]
    Run(String),
}

/// Text in, unit-length vectors out.
pub trait Embedder: Send + Sync {
    /// Which model made the vectors (stored with them).
    fn key(&self) -> &str;
    /// One L2-normalised [`DIM`]-vector per text.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}

/// Where the default embedding model is installed: `<data dir>/models/all-MiniLM-L6-v2/`.
pub fn default_model_dir() -> PathBuf {
    crate::files::data_dir()
        .join("models")
        .join("all-MiniLM-L6-v2")
}

/// The default embedder when this build has one and its files are installed
/// (in the page: when the page has loaded it, [`page`]).
pub fn default_embedder() -> Result<Arc<dyn Embedder>, EmbedError> {
    #[cfg(all(feature = "embed", target_family = "wasm"))]
    {
        page::embedder()
    }
    #[cfg(all(feature = "embed", not(target_family = "wasm")))]
    {
        embed::MiniLm::load(&default_model_dir()).map(|m| Arc::new(m) as Arc<dyn Embedder>)
    }
    #[cfg(not(feature = "embed"))]
    {
        Err(EmbedError::Load {
            path: default_model_dir(),
            reason: "this build has no embedding support (feature `embed`)".into(),
        })
    }
}

/// Dot product; for unit vectors, the cosine similarity.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity of any two vectors (0 when either is zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let na = dot(a, a).sqrt();
    let nb = dot(b, b).sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot(a, b) / (na * nb)
    }
}

/// Vectors as a little-endian blob, for the save.
pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A blob back into a vector; `None` when its length is not a whole [`DIM`]-vector.
pub fn from_blob(b: &[u8]) -> Option<Vec<f32>> {
    (b.len() == DIM * 4).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// Unit vectors in one contiguous slab, searched exactly.
#[derive(Clone, Debug, Default)]
pub struct VectorIndex {
    data: Vec<f32>,
}

impl VectorIndex {
    pub fn len(&self) -> usize {
        self.data.len() / DIM
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Append a vector (a zero vector when the row has none); returns its slot.
    pub fn push(&mut self, v: Option<&[f32]>) -> usize {
        let slot = self.len();
        match v {
            Some(v) if v.len() == DIM => self.data.extend_from_slice(v),
            _ => self.data.extend(std::iter::repeat_n(0.0, DIM)),
        }
        slot
    }

    /// The similarity of `query` to the vector in `slot`.
    pub fn score(&self, slot: usize, query: &[f32]) -> f32 {
        self.data
            .get(slot * DIM..(slot + 1) * DIM)
            .map_or(0.0, |v| dot(v, query))
    }

    /// The vector in `slot`.
    pub fn slot(&self, slot: usize) -> Option<&[f32]> {
        self.data.get(slot * DIM..(slot + 1) * DIM)
    }

    /// Similarities of `query` to every slot, in slot order.
    pub fn scores(&self, query: &[f32]) -> Vec<f32> {
        self.data.chunks_exact(DIM).map(|v| dot(v, query)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_wrong_lengths_are_refused() {
        let v: Vec<f32> = (0..DIM)
            .map(|i| f32::from(u16::try_from(i).unwrap()) / 7.0)
            .collect();
        assert_eq!(from_blob(&to_blob(&v)), Some(v));
        assert_eq!(from_blob(&[0; 12]), None);
    }

    #[test]
    fn the_index_scores_by_dot_product() {
        let mut a = vec![0.0; DIM];
        a[0] = 1.0;
        let mut b = vec![0.0; DIM];
        b[1] = 1.0;
        let mut index = VectorIndex::default();
        index.push(Some(&a));
        index.push(Some(&b));
        index.push(None);
        assert_eq!(index.len(), 3);
        assert_eq!(index.scores(&a), vec![1.0, 0.0, 0.0]);
        assert!((cosine(&[3.0, 4.0], &[6.0, 8.0]) - 1.0).abs() < 1e-6);
    }
}
