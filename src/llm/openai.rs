//! The OpenAI-compatible HTTP backend: `POST {url}/chat/completions` with
//! streaming server-sent events, for llama.cpp's llama-server, Ollama, vLLM or a
//! hosted endpoint.
//!
//! Output contracts travel as `response_format: json_schema` (the server
//! constrains its own sampling). Transient failures (connection refused, 408,
//! 429, 5xx) are retried with exponential backoff before any token streams. The
//! API key is read from the environment variable the model key names and is
//! never logged or put in an error.

use std::io::BufReader;
use std::time::Duration;

use serde_json::Value;
use web_time::Instant;

use super::backend::{Backend, BackendError, GenerateRequest, Generated};
use super::chat::{EventStream, Flow};

/// The HTTP backend.
pub struct OpenAiBackend {
    agent: ureq::Agent,
    endpoint: String,
    model: String,
    api_key: Option<String>,
    retries: u32,
    /// First backoff delay (doubles each retry).
    pub backoff: Duration,
}

impl std::fmt::Debug for OpenAiBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiBackend")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .finish_non_exhaustive()
    }
}

impl OpenAiBackend {
    /// `url` is the base up to `/v1`; `api_key_env` names the variable with the key.
    pub fn new(
        url: &str,
        model: &str,
        api_key_env: Option<&str>,
        timeout: Duration,
        retries: u32,
    ) -> Result<Self, BackendError> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(BackendError::Fatal(format!(
                "`{url}` is not an http(s) URL; give the server's base URL, e.g. http://127.0.0.1:8080/v1"
            )));
        }
        let api_key = api_key_env
            .and_then(|var| std::env::var(var).ok())
            .filter(|k| !k.is_empty());
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_recv_response(Some(timeout))
            .timeout_recv_body(Some(timeout))
            .build()
            .into();
        Ok(Self {
            agent,
            endpoint: format!("{}/chat/completions", url.trim_end_matches('/')),
            model: model.to_owned(),
            api_key,
            retries: retries.clamp(1, super::chat::MAX_RETRIES),
            backoff: Duration::from_millis(500),
        })
    }

    /// Uses `key` as the API key (for keys that come from somewhere other than
    /// an environment variable, e.g. a keyring). It is never logged either.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into()).filter(|k| !k.is_empty());
        self
    }

    /// The request body as sent ([`super::chat::body_text`]).
    pub fn body_text(&self, request: &GenerateRequest) -> String {
        super::chat::body_text(&self.model, request)
    }

    /// The request body for `request` ([`super::chat::body`]).
    pub fn body(&self, request: &GenerateRequest) -> Value {
        super::chat::body(&self.model, request)
    }

    fn post(&self, body: &str) -> Result<ureq::http::Response<ureq::Body>, BackendError> {
        let mut last = BackendError::Transient("no attempt made".into());
        for attempt in 0..self.retries {
            if attempt > 0 {
                std::thread::sleep(self.backoff.saturating_mul(1 << (attempt - 1).min(6)));
            }
            let mut req = self
                .agent
                .post(&self.endpoint)
                .header("Accept", "text/event-stream")
                .content_type("application/json");
            if let Some(key) = &self.api_key {
                req = req.header("Authorization", &format!("Bearer {key}"));
            }
            match req.send(body) {
                Ok(resp) if resp.status().is_success() => return Ok(resp),
                Ok(resp) => {
                    let status = resp.status().as_u16();
                    let body = resp.into_body().read_to_string().unwrap_or_default();
                    match super::chat::refused(&self.endpoint, status, &body) {
                        e @ BackendError::Transient(_) => last = e,
                        e => return Err(e),
                    }
                }
                Err(e) => {
                    last = BackendError::Transient(format!("cannot reach {}: {e}", self.endpoint));
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

impl Backend for OpenAiBackend {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn generate(
        &mut self,
        request: &GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generated, BackendError> {
        let start = Instant::now();
        let body = self.body_text(request);
        let response = self.post(&body)?;
        let reader = BufReader::new(response.into_body().into_reader());
        let mut events = EventStream::new(&self.endpoint, &request.sampling.stop, start);
        let mut lines = super::chat::Lines::new(reader);
        while let Some(line) = lines.next_line().map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData {
                super::chat::line_too_long(&self.endpoint)
            } else {
                BackendError::Transient(format!("the stream from {} broke: {e}", self.endpoint))
            }
        })? {
            if events.line(line, on_token)? == Flow::Done {
                break;
            }
        }
        Ok(events.finish(on_token))
    }
}
