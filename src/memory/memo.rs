//! An embedder that keeps what it embedded, so texts read ahead in small steps cost nothing later.
//!
//! The page embeds on the frame's thread (about 770 tokens a second in
//! headless Chromium): a new save's lore, embedded in one call when the save
//! opens, held the frame for 19 s. The page instead reads the texts ahead
//! one at a time, a few each frame ([`Memo::warm`]), while a window shows how
//! far it has come; the open then finds every vector kept here. Natively
//! nothing uses it: the embedder there is fast enough to embed in one call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::{EmbedError, Embedder};

/// How many vectors a memo keeps (1.5 KB each) before it forgets them all
/// and starts again: a campaign's lore is a few hundred chunks.
pub const MEMO_LIMIT: usize = 4096;

/// An [`Embedder`] in front of another that keeps every vector it made.
pub struct Memo {
    inner: Arc<dyn Embedder>,
    kept: Mutex<HashMap<String, Vec<f32>>>,
}

impl Memo {
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        Self {
            inner,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// Embed `text` now, unless it is kept already, so that a later
    /// [`Embedder::embed`] of it costs nothing.
    pub fn warm(&self, text: &str) -> Result<(), EmbedError> {
        self.embed(&[text]).map(drop)
    }

    /// Whether `text`'s vector is kept.
    pub fn is_kept(&self, text: &str) -> bool {
        self.lock().contains_key(text)
    }

    fn keep(&self, text: &str, vector: Vec<f32>) {
        let mut kept = self.lock();
        if kept.len() >= MEMO_LIMIT && !kept.contains_key(text) {
            kept.clear();
        }
        kept.insert(text.to_owned(), vector);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<f32>>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Embedder for Memo {
    fn key(&self) -> &str {
        self.inner.key()
    }

    /// The kept vectors as they are; the rest embedded in one call and kept.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Option<Vec<f32>>> = {
            let kept = self.lock();
            texts.iter().map(|t| kept.get(*t).cloned()).collect()
        };
        let missing: Vec<&str> = texts
            .iter()
            .zip(&out)
            .filter(|(_, v)| v.is_none())
            .map(|(t, _)| *t)
            .collect();
        if !missing.is_empty() {
            let made = self.inner.embed(&missing)?;
            if made.len() != missing.len() {
                return Err(EmbedError::Run(format!(
                    "the embedder returned {} vectors for {} texts",
                    made.len(),
                    missing.len()
                )));
            }
            let mut made = made.into_iter();
            for (text, slot) in texts.iter().zip(out.iter_mut()) {
                if slot.is_none()
                    && let Some(v) = made.next()
                {
                    self.keep(text, v.clone());
                    *slot = Some(v);
                }
            }
        }
        Ok(out.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A vector per text from its first two bytes; counts the texts it was asked for.
    struct Counting {
        asked: AtomicUsize,
    }

    impl Embedder for Counting {
        fn key(&self) -> &'static str {
            "counting"
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.asked.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts
                .iter()
                .map(|t| t.bytes().take(2).map(f32::from).collect())
                .collect())
        }
    }

    #[test]
    fn warmed_texts_are_not_embedded_again_and_order_is_kept() {
        let inner = Arc::new(Counting {
            asked: AtomicUsize::new(0),
        });
        let memo = Memo::new(inner.clone());
        assert_eq!(memo.key(), "counting");
        memo.warm("the ferryman").unwrap();
        memo.warm("a lantern").unwrap();
        memo.warm("the ferryman").unwrap();
        assert_eq!(inner.asked.load(Ordering::SeqCst), 2);
        assert!(memo.is_kept("a lantern") && !memo.is_kept("the quay"));

        // Kept and new texts mixed: only the new one is asked for, in the caller's order.
        let got = memo
            .embed(&["a lantern", "the quay", "the ferryman"])
            .unwrap();
        assert_eq!(inner.asked.load(Ordering::SeqCst), 3);
        assert_eq!(
            got,
            inner
                .embed(&["a lantern", "the quay", "the ferryman"])
                .unwrap()
        );
        assert!(memo.is_kept("the quay"));
    }

    #[test]
    fn a_full_memo_starts_again_rather_than_growing() {
        let memo = Memo::new(Arc::new(Counting {
            asked: AtomicUsize::new(0),
        }));
        for i in 0..=MEMO_LIMIT {
            memo.warm(&format!("text {i}")).unwrap();
        }
        assert!(memo.lock().len() <= MEMO_LIMIT);
        assert!(memo.is_kept(&format!("text {MEMO_LIMIT}")));
        assert!(!memo.is_kept("text 0"));
    }
}
