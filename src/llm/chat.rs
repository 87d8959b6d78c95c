//! The OpenAI-compatible chat API's wire format: the request body, the streamed events read back.
//!
//! Shared by the native HTTP backend (`llm/openai.rs`) and the browser's
//! `fetch` backend: the server-sent events are read back into text.

use serde_json::{Value, json};
use web_time::Instant;

use super::backend::{BackendError, FinishReason, GenerateRequest, Generated, Usage};
use super::stream::TextStream;

/// DRY's growth per token of a repeat, and the repeat it allows unpunished
/// (llama.cpp's defaults; the in-process sampler uses the same).
/// The most one line of a server's event stream may hold: an event is one
/// token's JSON (well under 1 KiB); a longer line is a broken or hostile server.
pub const LINE_CAP: usize = 1 << 20;

/// The most attempts a request gets, whatever `models.ron` says.
pub const MAX_RETRIES: u32 = 8;

/// The error for a stream line over [`LINE_CAP`].
pub fn line_too_long(endpoint: &str) -> BackendError {
    BackendError::Fatal(format!(
        "{endpoint} sent a line of more than {} KiB; that is not an event stream",
        LINE_CAP >> 10
    ))
}

/// A stream's lines, each at most [`LINE_CAP`] bytes (a longer one is an
/// `InvalidData` error, found without holding more than the cap).
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    text: String,
}

impl<R: std::io::BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            line: Vec::new(),
            text: String::new(),
        }
    }

    /// The next line without its ending, or `None` at the end of the stream.
    pub fn next_line(&mut self) -> std::io::Result<Option<&str>> {
        use std::io::{BufRead as _, Read as _};
        self.line.clear();
        let cap = LINE_CAP as u64 + 1;
        let read = (&mut self.reader)
            .take(cap)
            .read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Ok(None);
        }
        if self.line.len() > LINE_CAP && self.line.last() != Some(&b'\n') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line of more than {} KiB", LINE_CAP >> 10),
            ));
        }
        self.text = String::from_utf8_lossy(&self.line).into_owned();
        Ok(Some(self.text.trim_end_matches(['\n', '\r'])))
    }
}

pub const DRY_BASE: f32 = 1.75;
pub const DRY_ALLOWED: i32 = 2;

/// The request body for `request` to `model`.
#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's `Value` index reads give `Null` for what is missing, and the body written here is an object: neither panics"
)]
pub fn body(model: &str, request: &GenerateRequest) -> Value {
    let s = &request.sampling;
    let mut body = json!({
        "model": model,
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
    if let Some(m) = s.dry_multiplier.filter(|m| *m > 0.0) {
        body["dry_multiplier"] = json!(m);
        body["dry_base"] = json!(DRY_BASE);
        body["dry_allowed_length"] = json!(DRY_ALLOWED);
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

/// The request body as sent: [`body`] with the output contract's fields in
/// the order the model should write them ([`super::contract::schema_text`]).
pub fn body_text(model: &str, request: &GenerateRequest) -> String {
    marked_body_text(model, request, serde_json::Map::new())
}

/// [`body_text`] with `marks` added: fields only the page's own model reads
/// (`web/model.js`: the call's stage and lane), never sent to another server.
#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's `Value` index reads give `Null` for what is missing, and the body written here is an object: neither panics"
)]
pub fn marked_body_text(
    model: &str,
    request: &GenerateRequest,
    marks: serde_json::Map<String, Value>,
) -> String {
    const SCHEMA: &str = "\u{0}loreloom-schema\u{0}";
    let mut body = body(model, request);
    if let Some(fields) = body.as_object_mut() {
        fields.extend(marks);
    }
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

/// The body that primes a server's prompt cache with `request`'s prompt
/// (the gateway's [`prime`](super::Gateway::prime) for the page's own model):
/// its messages as the call will send them, one token to write, no output
/// contract (a grammar changes nothing in the cache), and `loreloom_prime`,
/// which tells the page's model to read it only while no call waits and to
/// give it up when one comes. llama-server ignores the field.
#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's `Value` index reads give `Null` for what is missing, and the body written here is an object: neither panics"
)]
pub fn prime_body(model: &str, request: &GenerateRequest) -> String {
    let mut request = request.clone();
    request.json_schema = None;
    request.sampling.max_tokens = 1;
    let mut body = body(model, &request);
    body["loreloom_prime"] = json!(true);
    body["loreloom_stage"] = json!(request.stage);
    body.to_string()
}

/// What a refused request means: worth retrying (timeouts, rate limits,
/// server errors) or not (with a hint for the player); `body` is the server's
/// answer, of which the first 300 characters are kept.
pub fn refused(endpoint: &str, status: u16, body: &str) -> BackendError {
    let detail: String = body.chars().take(300).collect();
    let message = format!("{endpoint} answered HTTP {status}: {}", detail.trim());
    if status == 408 || status == 429 || status >= 500 {
        return BackendError::Transient(message);
    }
    let hint = match status {
        401 | 403 => " (check the API key variable in models.ron)",
        404 => " (check the URL ends in /v1 and the model name)",
        _ => "",
    };
    BackendError::Fatal(format!("{message}{hint}"))
}

/// Whether a stream should go on after a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    More,
    Done,
}

/// Reads a completion's server-sent events, line by line, into text.
#[derive(Debug)]
pub struct EventStream {
    endpoint: String,
    start: Instant,
    stream: TextStream,
    first: Option<std::time::Duration>,
    finish: FinishReason,
    chunks: u32,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    cached_tokens: Option<u64>,
}

impl EventStream {
    /// A stream from `endpoint` (named in errors) that began at `start`.
    pub fn new(endpoint: &str, stops: &[String], start: Instant) -> Self {
        Self {
            endpoint: endpoint.to_owned(),
            start,
            stream: TextStream::new(stops),
            first: None,
            finish: FinishReason::Stop,
            chunks: 0,
            prompt_tokens: None,
            completion_tokens: None,
            cached_tokens: None,
        }
    }

    /// Takes one line of the stream, passing new text to `on_token` (which
    /// returns `false` to cancel).
    #[expect(
        clippy::indexing_slicing,
        reason = "serde_json's `Value` index reads give `Null` for what is missing, and the body written here is an object: neither panics"
    )]
    pub fn line(
        &mut self,
        line: &str,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Flow, BackendError> {
        let Some(data) = line.strip_prefix("data:").map(str::trim) else {
            return Ok(Flow::More);
        };
        if data == "[DONE]" {
            return Ok(Flow::Done);
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
            self.prompt_tokens = u["prompt_tokens"].as_u64();
            self.completion_tokens = u["completion_tokens"].as_u64();
        }
        if let Some(cached) = event["timings"]["cache_n"].as_u64() {
            self.cached_tokens = Some(cached);
        }
        let choice = &event["choices"][0];
        if let Some(text) = choice["delta"]["content"]
            .as_str()
            .filter(|t| !t.is_empty())
        {
            self.chunks += 1;
            let start = self.start;
            self.first.get_or_insert_with(|| start.elapsed());
            let piece = self.stream.push_str(text);
            if !piece.is_empty() && !on_token(&piece) {
                return Err(BackendError::Cancelled);
            }
            if self.stream.stopped() {
                self.finish = FinishReason::StopString;
                return Ok(Flow::Done);
            }
        }
        match choice["finish_reason"].as_str() {
            Some("length") => self.finish = FinishReason::Length,
            Some("stop") if !self.stream.stopped() => self.finish = FinishReason::Stop,
            _ => {}
        }
        Ok(Flow::More)
    }

    /// The whole reply, with what was held back for a stop string streamed.
    pub fn finish(mut self, on_token: &mut dyn FnMut(&str) -> bool) -> Generated {
        let rest = self.stream.finish();
        if !rest.is_empty() {
            on_token(&rest);
        }
        let count = |v: Option<u64>, fallback: u32| {
            v.map_or(fallback, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        Generated {
            text: self.stream.into_text(),
            finish: self.finish,
            usage: Usage {
                tokens_in: count(self.prompt_tokens, 0),
                tokens_out: count(self.completion_tokens, self.chunks),
                cached_tokens: count(self.cached_tokens, 0),
                time_to_first_token: self.first.unwrap_or_else(|| self.start.elapsed()),
                total: self.start.elapsed(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_lines_are_capped() {
        use std::io::Read;
        let mut ok = Lines::new(&b"data: 1\r\ndata: 2\nlast"[..]);
        assert_eq!(ok.next_line().unwrap(), Some("data: 1"));
        assert_eq!(ok.next_line().unwrap(), Some("data: 2"));
        assert_eq!(ok.next_line().unwrap(), Some("last"));
        assert_eq!(ok.next_line().unwrap(), None);
        // A line with no end: an error at the cap, not a growing buffer.
        let endless = std::io::repeat(b'x').take(64 << 20);
        let mut lines = Lines::new(std::io::BufReader::new(endless));
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(lines.line.len() <= LINE_CAP + 1);
        // Exactly at the cap is a line.
        let mut at = vec![b'y'; LINE_CAP];
        at.push(b'\n');
        assert_eq!(
            Lines::new(&at[..]).next_line().unwrap().map(str::len),
            Some(LINE_CAP)
        );
    }

    #[test]
    fn a_primer_reads_the_calls_prompt_and_writes_one_token() {
        use crate::llm::backend::{Message, Role, Sampling};
        let request = GenerateRequest {
            stage: "resolve".into(),
            prompt_id: "resolve@3".into(),
            messages: vec![
                Message::new(Role::System, "rules"),
                Message::new(Role::User, "the move"),
            ],
            sampling: Sampling {
                max_tokens: 200,
                stop: vec!["\n\n".into()],
                ..Sampling::default()
            },
            json_schema: Some(json!({"type": "object"})),
            cache_slot: "resolve".into(),
        };
        let call: Value = serde_json::from_str(&body_text("m", &request)).unwrap();
        let primer: Value = serde_json::from_str(&prime_body("m", &request)).unwrap();
        // The prompt is the call's, token for token: the same messages and template.
        assert_eq!(primer["messages"], call["messages"]);
        assert_eq!(primer["model"], call["model"]);
        assert_eq!(primer["max_tokens"], json!(1));
        assert_eq!(call["max_tokens"], json!(200));
        assert!(call.get("response_format").is_some());
        assert!(primer.get("response_format").is_none());
        assert_eq!(primer["loreloom_prime"], json!(true));
        assert!(call.get("loreloom_prime").is_none());
        assert_eq!(primer["loreloom_stage"], json!("resolve"));
        // The page's own model is told the stage and lane; the body is otherwise the call's.
        let mut marks = serde_json::Map::new();
        marks.insert("loreloom_lane".into(), json!("background"));
        let marked: Value = serde_json::from_str(&marked_body_text("m", &request, marks)).unwrap();
        assert_eq!(marked["loreloom_lane"], json!("background"));
        let mut unmarked = marked.clone();
        unmarked.as_object_mut().unwrap().remove("loreloom_lane");
        assert_eq!(unmarked, call);
    }

    #[test]
    fn refusals_say_whether_to_retry_and_what_to_check() {
        let e = refused("http://x/v1/chat/completions", 503, "  loading model  ");
        assert_eq!(
            e,
            BackendError::Transient(
                "http://x/v1/chat/completions answered HTTP 503: loading model".into()
            )
        );
        let BackendError::Fatal(m) = refused("u", 404, &"n".repeat(400)) else {
            panic!("a 404 is not worth retrying");
        };
        assert!(m.ends_with("(check the URL ends in /v1 and the model name)"));
        assert!(m.contains(&"n".repeat(300)) && !m.contains(&"n".repeat(301)));
        assert!(matches!(refused("u", 401, ""), BackendError::Fatal(m) if m.contains("API key")));
        assert!(matches!(refused("u", 429, ""), BackendError::Transient(_)));
    }

    #[test]
    fn events_stream_text_and_stop_at_a_stop_string() {
        let mut events = EventStream::new("u", &["END".to_owned()], Instant::now());
        let mut seen = String::new();
        let mut on_token = |t: &str| {
            seen.push_str(t);
            true
        };
        let lines = [
            ": a comment",
            r#"data: {"choices":[{"delta":{"content":"Fog on "}}]}"#,
            "",
            r#"data: {"choices":[{"delta":{"content":"the water.EN"}}]}"#,
            r#"data: {"choices":[{"delta":{"content":"D and more"}}],"timings":{"cache_n":7}}"#,
        ];
        let flows: Vec<Flow> = lines
            .iter()
            .map(|l| events.line(l, &mut on_token).unwrap())
            .collect();
        assert_eq!(flows.last(), Some(&Flow::Done));
        let generated = events.finish(&mut on_token);
        assert_eq!(generated.text, "Fog on the water.");
        assert_eq!(seen, "Fog on the water.");
        assert_eq!(generated.finish, FinishReason::StopString);
        assert_eq!(generated.usage.cached_tokens, 7);
        assert_eq!(
            generated.usage.tokens_out, 3,
            "counted in chunks without usage"
        );
    }

    #[test]
    fn a_broken_event_or_a_server_error_is_an_error_naming_the_server() {
        let mut events = EventStream::new("http://s/v1", &[], Instant::now());
        let mut on_token = |_: &str| true;
        let Err(BackendError::Fatal(m)) = events.line("data: {nope", &mut on_token) else {
            panic!("not JSON");
        };
        assert!(m.starts_with("http://s/v1 sent an event that is not JSON"));
        let Err(BackendError::Fatal(m)) =
            events.line(r#"data: {"error":{"message":"boom"}}"#, &mut on_token)
        else {
            panic!("an error event");
        };
        assert!(m.contains("boom"));
        assert_eq!(
            events.line("data: [DONE]", &mut on_token).unwrap(),
            Flow::Done
        );
    }
}
