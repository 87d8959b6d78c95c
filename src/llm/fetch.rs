//! The browser's model backend (issue #26): an OpenAI-compatible server called with `fetch`.
//!
//! By default the page's own `/v1`, which the page answers itself with the
//! narrator model running in WebAssembly (`web/model.js`), or a server the
//! player names; the server-sent events are read from the response's stream
//! as they arrive.
//!
//! The page has no threads to block, so this backend is a [`Generate`]: the
//! gateway runs its call policy as a task of the page and the frame polls the
//! call's channel as it does natively. Transient failures (the server is not
//! up yet, 408, 429, 5xx) are retried with backoff before any text streams.

use std::time::Duration;

use js_sys::{Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_time::Instant;

use super::backend::{BackendError, Generate, GenerateRequest, Generated};
use super::chat::{EventStream, Flow};
use super::config::BackendConfig;

/// A chat-completions endpoint, reached from the page.
#[derive(Debug)]
pub struct FetchBackend {
    endpoint: String,
    model: String,
    retries: u32,
    backoff: Duration,
    /// Runs on the model key's background lane (told to the page's own model).
    background: bool,
}

impl FetchBackend {
    /// The backend a model key names; only a server can answer a page.
    pub fn open(config: &BackendConfig) -> Result<Self, BackendError> {
        match config {
            BackendConfig::OpenAi {
                url,
                model,
                retries,
                ..
            } => Ok(Self {
                endpoint: format!("{}/chat/completions", url.trim_end_matches('/')),
                model: model.clone(),
                retries: (*retries).clamp(1, super::chat::MAX_RETRIES),
                backoff: Duration::from_millis(500),
                background: false,
            }),
            _ => Err(BackendError::Fatal(
                "in the browser a model key must name an OpenAI-compatible endpoint (OpenAi { url: \"/v1\", … } in models.ron: the page's own model, or a server's URL): llama.cpp in-process and script files do not run in a page".into(),
            )),
        }
    }

    /// Calls made through this backend run on the background lane: the page's
    /// own model reads them while no foreground call runs (its one or two
    /// threads would otherwise split between the lanes, and the player's
    /// first words wait for both).
    pub fn on_lane(mut self, background: bool) -> Self {
        self.background = background;
        self
    }

    /// Whether this is the page's own model (a path on the page's origin),
    /// not a server the player named.
    pub fn is_the_pages(&self) -> bool {
        !self.endpoint.contains("://") && !self.endpoint.starts_with("//")
    }

    /// Reads `request`'s prompt into the page's model's cache, writing one
    /// token ([`super::chat::prime_body`]); the page's model runs primers
    /// only while no call waits. A server the player named is never primed:
    /// it may bill each call, and its cache is its own business.
    pub async fn prefill(&self, request: &GenerateRequest) -> Result<(), BackendError> {
        if !self.is_the_pages() {
            return Ok(());
        }
        let response = self
            .post(&super::chat::prime_body(&self.model, request))
            .await?;
        if let Ok(text) = response.text() {
            let _ = JsFuture::from(text).await;
        }
        Ok(())
    }

    async fn post(&self, body: &str) -> Result<web_sys::Response, BackendError> {
        let window = web_sys::window()
            .ok_or_else(|| BackendError::Fatal("no window to fetch from".into()))?;
        let mut last = BackendError::Transient("no attempt made".into());
        for attempt in 0..self.retries {
            if attempt > 0 {
                sleep(
                    &window,
                    self.backoff.saturating_mul(1 << (attempt - 1).min(6)),
                )
                .await;
            }
            let init = web_sys::RequestInit::new();
            init.set_method("POST");
            init.set_body(&JsValue::from_str(body));
            let headers = Object::new();
            let _ = Reflect::set(&headers, &"Content-Type".into(), &"application/json".into());
            let _ = Reflect::set(&headers, &"Accept".into(), &"text/event-stream".into());
            init.set_headers(&headers);
            let answer =
                JsFuture::from(window.fetch_with_str_and_init(&self.endpoint, &init)).await;
            match answer.map(JsCast::dyn_into::<web_sys::Response>) {
                Ok(Ok(response)) if response.ok() => return Ok(response),
                Ok(Ok(response)) => {
                    let status = response.status();
                    let body = match response.text() {
                        Ok(text) => JsFuture::from(text)
                            .await
                            .ok()
                            .and_then(|t| t.as_string())
                            .unwrap_or_default(),
                        Err(_) => String::new(),
                    };
                    match super::chat::refused(&self.endpoint, status, &body) {
                        e @ BackendError::Transient(_) => last = e,
                        e => return Err(e),
                    }
                }
                Ok(Err(_)) => {
                    return Err(BackendError::Fatal(format!(
                        "{} answered with something that is not a response",
                        self.endpoint
                    )));
                }
                Err(e) => {
                    // A refused connection and a missing CORS header look alike to a page.
                    last = BackendError::Transient(format!(
                        "cannot reach {} ({}): is the model server running, and does it allow this page's origin?",
                        self.endpoint,
                        describe(&e)
                    ));
                }
            }
            tracing::warn!(
                "model server attempt {} of {} failed: {last}",
                attempt + 1,
                self.retries
            );
        }
        Err(last)
    }
}

impl Generate for FetchBackend {
    fn name(&self) -> &'static str {
        "openai (fetch)"
    }

    async fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        let start = Instant::now();
        let body = if self.is_the_pages() {
            let mut marks = serde_json::Map::new();
            marks.insert("loreloom_stage".into(), request.stage.clone().into());
            let lane = if self.background {
                "background"
            } else {
                "foreground"
            };
            marks.insert("loreloom_lane".into(), lane.into());
            super::chat::marked_body_text(&self.model, request, marks)
        } else {
            super::chat::body_text(&self.model, request)
        };
        let response = self.post(&body).await?;
        let broke = |e: &JsValue| {
            BackendError::Transient(format!(
                "the stream from {} broke: {}",
                self.endpoint,
                describe(e)
            ))
        };
        let reader: web_sys::ReadableStreamDefaultReader = response
            .body()
            .ok_or_else(|| BackendError::Fatal(format!("{} sent no body", self.endpoint)))?
            .get_reader()
            .unchecked_into();
        let mut events = EventStream::new(&self.endpoint, &request.sampling.stop, start);
        let mut pending: Vec<u8> = Vec::new();
        'read: loop {
            let chunk = JsFuture::from(reader.read()).await.map_err(|e| broke(&e))?;
            if Reflect::get(&chunk, &"done".into())
                .ok()
                .and_then(|d| d.as_bool())
                .unwrap_or(true)
            {
                break;
            }
            let bytes: Uint8Array = Reflect::get(&chunk, &"value".into())
                .map_err(|e| broke(&e))?
                .unchecked_into();
            pending.extend(bytes.to_vec());
            if pending.len() > super::chat::LINE_CAP && !pending.contains(&b'\n') {
                let _ = reader.cancel();
                return Err(super::chat::line_too_long(&self.endpoint));
            }
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                match events.line(line.trim_end(), on_token) {
                    Ok(Flow::More) => {}
                    Ok(Flow::Done) => break 'read,
                    Err(e) => {
                        let _ = reader.cancel();
                        return Err(e);
                    }
                }
            }
        }
        let _ = reader.cancel();
        Ok(events.finish(on_token))
    }
}

/// Runs `task` as a task of the page (the gateway's calls in the browser).
pub fn spawn(task: impl Future<Output = ()> + 'static) {
    wasm_bindgen_futures::spawn_local(task);
}

/// Waits `wait` without blocking the page.
async fn sleep(window: &web_sys::Window, wait: Duration) {
    let ms = i32::try_from(wait.as_millis()).unwrap_or(i32::MAX);
    let timer = Promise::new(&mut |resolve, _| {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
    });
    let _ = JsFuture::from(timer).await;
}

/// A JavaScript error's message.
fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
