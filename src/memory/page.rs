//! The page's embedder: all-MiniLM-L6-v2 on candle in the wasm, its files from the page's cache.
//!
//! `web/model.js` (`loreloomModel.embedderFiles`) fetches the three files from
//! the page's own origin once, checks each against the hash its manifest
//! names, keeps them in Cache Storage and hands their bytes over; they are
//! loaded here once and serve every session the page opens. The page asks
//! for them when a session is first opened ([`request`]); the session waits
//! while they load ([`PageEmbedder::Loading`]) and opens without them, lore
//! and memory recalled by their words, when the page has none or they cannot
//! load ([`PageEmbedder::Unavailable`], with the reason).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::embed::MiniLm;
use super::memo::Memo;
use super::{EmbedError, Embedder};

/// Where the page's embedder comes from, for messages.
const ORIGIN: &str = "the page's models/all-MiniLM-L6-v2";

#[wasm_bindgen]
extern "C" {
    /// Resolves to `{config, tokenizer, weights}` (bytes), or `null` when the
    /// page was built without the embedder; rejects with the reason.
    #[wasm_bindgen(js_namespace = loreloomModel, js_name = embedderFiles, catch)]
    fn embedder_files() -> Result<js_sys::Promise, JsValue>;
}

/// The page's embedder, as far as it has come.
#[derive(Clone, Default)]
pub enum PageEmbedder {
    /// No session has asked for it yet.
    #[default]
    NotAsked,
    /// Its files are being fetched (or read from the cache) and loaded.
    Loading,
    /// Loaded, behind a memo the session's opening reads a new save's lore into.
    Ready(Arc<Memo>),
    /// The page has none, or it could not load: why, for the player.
    Unavailable(String),
}

static STATE: Mutex<PageEmbedder> = Mutex::new(PageEmbedder::NotAsked);

fn set(state: PageEmbedder) {
    *STATE.lock().unwrap_or_else(PoisonError::into_inner) = state;
}

/// Where the page's embedder stands now.
pub fn state() -> PageEmbedder {
    STATE.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The page's embedder, for [`super::default_embedder`].
pub(super) fn embedder() -> Result<Arc<dyn Embedder>, EmbedError> {
    let reason = match state() {
        PageEmbedder::Ready(e) => return Ok(e as Arc<dyn Embedder>),
        PageEmbedder::Unavailable(why) => why,
        PageEmbedder::NotAsked | PageEmbedder::Loading => "not loaded yet".to_owned(),
    };
    Err(EmbedError::Load {
        path: ORIGIN.into(),
        reason,
    })
}

/// The page's embedder's memo, once loaded: the opening reads ahead into it.
pub fn memo() -> Option<Arc<Memo>> {
    match state() {
        PageEmbedder::Ready(m) => Some(m),
        _ => None,
    }
}

/// Ask the page for the embedder's files and load them (once: later calls
/// do nothing). [`state`] is [`PageEmbedder::Loading`] until they are in.
pub fn request() {
    {
        let mut now = STATE.lock().unwrap_or_else(PoisonError::into_inner);
        if !matches!(*now, PageEmbedder::NotAsked) {
            return;
        }
        *now = PageEmbedder::Loading;
    }
    let promise = match embedder_files() {
        Ok(p) => p,
        Err(e) => {
            set(PageEmbedder::Unavailable(format!(
                "the page cannot fetch it ({})",
                describe(&e)
            )));
            return;
        }
    };
    wasm_bindgen_futures::spawn_local(async move {
        let loaded = match JsFuture::from(promise).await {
            Ok(files) if files.is_null() || files.is_undefined() => PageEmbedder::Unavailable(
                "this page was built without it (web/build.sh: LORELOOM_PAGE_EMBEDDER)".into(),
            ),
            Ok(files) => match load(&files) {
                Ok(e) => PageEmbedder::Ready(Arc::new(Memo::new(Arc::new(e)))),
                Err(e) => {
                    tracing::error!("{e}");
                    PageEmbedder::Unavailable(e.to_string())
                }
            },
            Err(e) => PageEmbedder::Unavailable(describe(&e)),
        };
        set(loaded);
    });
}

/// The model from the page's `{config, tokenizer, weights}`.
fn load(files: &JsValue) -> Result<MiniLm, EmbedError> {
    let bytes = |name: &str| -> Result<Vec<u8>, EmbedError> {
        let v = js_sys::Reflect::get(files, &JsValue::from_str(name)).ok();
        match v.and_then(|v| v.dyn_into::<js_sys::Uint8Array>().ok()) {
            Some(array) => Ok(array.to_vec()),
            None => Err(EmbedError::Load {
                path: ORIGIN.into(),
                reason: format!("the page handed over no `{name}` bytes"),
            }),
        }
    };
    let config = bytes("config")?;
    let tokenizer = bytes("tokenizer")?;
    let weights = bytes("weights")?;
    MiniLm::from_bytes(Path::new(ORIGIN), &config, &tokenizer, weights)
}

/// A thrown JavaScript value in words.
fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
