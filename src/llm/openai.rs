//! The OpenAI-compatible HTTP backend: `POST {url}/chat/completions` with
//! streaming server-sent events, for llama.cpp's llama-server, Ollama, vLLM or a
//! hosted endpoint.
//!
//! Output contracts travel as `response_format: json_schema` (the server
//! constrains its own sampling). Transient failures (connection refused, 408,
//! 429, 5xx) are retried with exponential backoff before any token streams. The
//! API key is read from the environment variable the model key names and is
//! never logged or put in an error.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::backend::{Backend, BackendError, FinishReason, GenerateRequest, Generated};
use super::stream::TextStream;

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
            retries: retries.max(1),
            backoff: Duration::from_millis(500),
        })
    }

    /// Uses `key` as the API key (for keys that come from somewhere other than
    /// an environment variable, e.g. a keyring). It is never logged either.
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into()).filter(|k| !k.is_empty());
        self
    }

    /// The request body as sent: [`Self::body`] with the output contract's
    /// fields in the order the model should write them
    /// ([`super::contract::schema_text`]).
    pub fn body_text(&self, request: &GenerateRequest) -> String {
        const SCHEMA: &str = "\u{0}loreloom-schema\u{0}";
        let mut body = self.body(request);
        let Some(schema) = request.json_schema.as_ref() else {
            return body.to_string();
        };
        body["response_format"]["json_schema"]["schema"] = json!(SCHEMA);
        body.to_string().replacen(
            &json!(SCHEMA).to_string(),
            &super::contract::schema_text(schema),
            1,
        )
    }

    /// The request body for `request`.
    pub fn body(&self, request: &GenerateRequest) -> Value {
        let s = &request.sampling;
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(|m| json!({"role": m.role.as_str(), "content": m.content})).collect::<Vec<_>>(),
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,
            "seed": s.seed,
        });
        if let Some(p) = s.top_p {
            body["top_p"] = json!(p);
        }
        // Not in OpenAI's own API; llama-server, Ollama and vLLM accept them.
        if let Some(k) = s.top_k {
            body["top_k"] = json!(k);
        }
        if let Some(r) = s.repeat_penalty {
            body["repeat_penalty"] = json!(r);
        }
        if !s.stop.is_empty() {
            body["stop"] = json!(s.stop);
        }
        if let Some(schema) = &request.json_schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": {"name": "output", "strict": true, "schema": schema},
            });
        }
        body
    }

    fn post(&self, body: &str) -> Result<ureq::http::Response<ureq::Body>, BackendError> {
        let mut last = BackendError::Transient("no attempt made".into());
        for attempt in 0..self.retries {
            if attempt > 0 {
                std::thread::sleep(self.backoff * 2u32.pow(attempt - 1));
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
                    let detail = resp
                        .into_body()
                        .read_to_string()
                        .unwrap_or_default()
                        .chars()
                        .take(300)
                        .collect::<String>();
                    let message = format!(
                        "{} answered HTTP {status}: {}",
                        self.endpoint,
                        detail.trim()
                    );
                    if status == 408 || status == 429 || status >= 500 {
                        last = BackendError::Transient(message);
                    } else {
                        let hint = match status {
                            401 | 403 => " (check the API key variable in models.ron)",
                            404 => " (check the URL ends in /v1 and the model name)",
                            _ => "",
                        };
                        return Err(BackendError::Fatal(format!("{message}{hint}")));
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
        let mut stream = TextStream::new(&request.sampling.stop);
        let mut first = None;
        let mut finish = FinishReason::Stop;
        let mut chunks = 0u32;
        let mut usage = (None, None, None);
        for line in reader.lines() {
            let line = line.map_err(|e| {
                BackendError::Transient(format!("the stream from {} broke: {e}", self.endpoint))
            })?;
            let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                continue;
            };
            if data == "[DONE]" {
                break;
            }
            let event: Value = serde_json::from_str(data).map_err(|e| {
                BackendError::Fatal(format!(
                    "{} sent an event that is not JSON ({e}): {data:.200}",
                    self.endpoint
                ))
            })?;
            if let Some(error) = event.get("error") {
                return Err(BackendError::Fatal(format!(
                    "{} reported: {error}",
                    self.endpoint
                )));
            }
            if let Some(u) = event.get("usage").filter(|u| u.is_object()) {
                usage.0 = u["prompt_tokens"].as_u64();
                usage.1 = u["completion_tokens"].as_u64();
            }
            if let Some(cached) = event["timings"]["cache_n"].as_u64() {
                usage.2 = Some(cached);
            }
            let choice = &event["choices"][0];
            if let Some(text) = choice["delta"]["content"]
                .as_str()
                .filter(|t| !t.is_empty())
            {
                chunks += 1;
                first.get_or_insert_with(|| start.elapsed());
                let piece = stream.push_str(text);
                if !piece.is_empty() && !on_token(&piece) {
                    return Err(BackendError::Cancelled);
                }
                if stream.stopped() {
                    finish = FinishReason::StopString;
                    break;
                }
            }
            match choice["finish_reason"].as_str() {
                Some("length") => finish = FinishReason::Length,
                Some("stop") if !stream.stopped() => finish = FinishReason::Stop,
                _ => {}
            }
        }
        let rest = stream.finish();
        if !rest.is_empty() {
            on_token(&rest);
        }
        let count = |v: Option<u64>, fallback: u32| {
            v.map_or(fallback, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        Ok(Generated {
            text: stream.into_text(),
            finish,
            tokens_in: count(usage.0, 0),
            tokens_out: count(usage.1, chunks),
            cached_tokens: count(usage.2, 0),
            time_to_first_token: first.unwrap_or_else(|| start.elapsed()),
            total: start.elapsed(),
        })
    }
}
