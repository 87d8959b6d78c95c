//! Reading a save's texts ahead (as the page does, a few a frame) leaves its open nothing to embed.
//!
//! The page embeds on the frame's thread, so a new save's lore embedded in
//! one call held the frame for 19 s. `Controller::texts_to_embed` says what
//! the open would embed; the page warms a `Memo` with them and then opens.
//! Checked here with a counting embedder: everything the open embeds was
//! read ahead, and a save whose index is made asks only for its small rest.
#![cfg(feature = "store")]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::play::new_save;
use loreloom::memory::memo::Memo;
use loreloom::memory::{DIM, EmbedError, Embedder};
use loreloom::session::controller::Controller;

/// A unit vector per text from its bytes; counts the texts it was asked for.
struct Counting {
    key: &'static str,
    asked: AtomicUsize,
}

impl Embedder for Counting {
    fn key(&self) -> &str {
        self.key
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.asked.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; DIM];
                for (i, b) in t.bytes().enumerate() {
                    v[(i * 31 + usize::from(b)) % DIM] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

fn counting(key: &'static str) -> Arc<Counting> {
    Arc::new(Counting {
        key,
        asked: AtomicUsize::new(0),
    })
}

#[test]
fn a_new_save_read_ahead_opens_without_embedding_and_a_made_index_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", None, 3);
    let inner = counting("test-embedder");
    let memo = Arc::new(Memo::new(inner.clone()));

    let first = Controller::texts_to_embed(&save, memo.key()).unwrap();
    for text in &first {
        memo.warm(text).unwrap();
    }
    let read_ahead = inner.asked.load(Ordering::SeqCst);
    assert!(
        read_ahead > 50,
        "the Drowned Reach's lore: {read_ahead} texts"
    );

    let ctl = Controller::open_with(&save, Some(memo.clone() as Arc<dyn Embedder>)).unwrap();
    assert_eq!(
        inner.asked.load(Ordering::SeqCst),
        read_ahead,
        "the open embedded something that was not read ahead"
    );
    assert!(
        ctl.memory.lore.len() > 50,
        "the lore index was made from the warmed vectors"
    );
    drop(ctl);
    let stored = loreloom::store::Store::open(&save)
        .unwrap()
        .query_i64("SELECT count(*) FROM lore_chunks WHERE embedding IS NOT NULL")
        .unwrap();
    assert!(stored > 50, "{stored} lore chunks kept with their vectors");

    // The save now holds this embedder's index: only the stat cues (and any
    // offered choices) are left to read ahead, a small share of the first.
    let again = Controller::texts_to_embed(&save, memo.key()).unwrap();
    assert!(
        again.len() * 4 < first.len(),
        "{} texts again, {} the first time",
        again.len(),
        first.len()
    );
    // Another embedder's key: the lore is read again, as the open would remake it.
    let other = Controller::texts_to_embed(&save, "another-embedder").unwrap();
    assert_eq!(other.len(), first.len());
}
