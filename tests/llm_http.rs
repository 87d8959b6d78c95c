//! The OpenAI-compatible backend against a real llama-server on loopback (streaming,
//! `response_format` `json_schema`, usage and cache figures) and against a scripted
//! loopback server (retries with backoff, errors, the API key header).
//!
//! `./run.sh test` builds llama-server once and exports `LORELOOM_LLAMA_SERVER`.
#![cfg(feature = "http")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loreloom::llm::backend::{Backend, BackendError, GenerateRequest, Sampling};
use loreloom::llm::config::DEFAULT_MODEL_FILE;
use loreloom::llm::openai::OpenAiBackend;
use loreloom::llm::{
    BackendConfig, CallRequest, Gateway, LlmError, Message, ModelConfig, ModelsConfig,
    PromptRegistry, Role,
};
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// llama-server, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn llama_server() -> Server {
    let bin = PathBuf::from(std::env::var_os("LORELOOM_LLAMA_SERVER").expect(
        "LORELOOM_LLAMA_SERVER is not set: run `./run.sh test` (it builds llama-server once and sets it), or point it at a llama-server binary",
    ));
    assert!(
        bin.is_file(),
        "llama-server is not built at {}: run `./run.sh test` (it builds it once) or set LORELOOM_LLAMA_SERVER",
        bin.display()
    );
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    assert!(
        model.is_file(),
        "the default model is missing at {}: run `./run.sh test`",
        model.display()
    );
    let port = free_port();
    let child = Command::new(&bin)
        .args(["-m"])
        .arg(&model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args([
            "-c",
            "2048",
            "-t",
            "1",
            "-np",
            "1",
            "--no-webui",
            "--log-disable",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let mut server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/v1"),
    };
    let deadline = Instant::now() + Duration::from_mins(2);
    loop {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!(
                "llama-server ({}) exited before it was ready: {status}",
                bin.display()
            );
        }
        let ready = ureq::get(format!("http://127.0.0.1:{port}/health"))
            .call()
            .is_ok_and(|r| r.status() == 200);
        if ready {
            return server;
        }
        assert!(
            Instant::now() < deadline,
            "llama-server did not become ready in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn gateway_for(url: &str, data: &std::path::Path) -> Gateway {
    let mut models = ModelsConfig::default();
    models.models.insert(
        "server".into(),
        ModelConfig {
            backend: BackendConfig::OpenAi {
                url: url.to_owned(),
                model: "smollm2".into(),
                api_key_env: None,
                timeout_secs: 60,
                retries: 2,
            },
            sampling: loreloom::llm::backend::SamplingOverride::default(),
            description: String::new(),
            compact_prompts: false,
            drafts: 1,
            lanes: 1,
            continues_answers: false,
        },
    );
    // The same server, continuing the answers the engine opens (#42).
    let mut continuing = models.models["server"].clone();
    continuing.continues_answers = true;
    models.models.insert("server-continues".into(), continuing);
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    Gateway::new(prompts, root().join("schemas"), models, data)
}

#[test]
fn a_real_llama_server_streams_text_and_honours_json_schema() {
    let server = llama_server();
    let data = tempfile::tempdir().unwrap();
    let gateway = gateway_for(&server.url, data.path());

    // Free text streams in pieces.
    let mut pieces = Vec::new();
    let mut chat = CallRequest::new(
        "chat",
        "server",
        json!({"prompt": "Name three things found on a ferry.", "system": ""}),
    )
    .seed(3);
    chat.sampling.max_tokens = Some(40);
    let outcome = gateway
        .call(chat)
        .wait_streaming(|t| pieces.push(t.to_owned()));
    let text = outcome.result.expect("llama-server answers");
    assert!(pieces.len() > 3, "streamed: {pieces:?}");
    assert_eq!(text.as_str(), Some(pieces.concat().as_str()));
    let record = &outcome.record;
    assert_eq!(record.backend, "openai");
    assert!(record.tokens_in() > 10, "usage is read: {record:?}");
    assert!(record.tokens_out() > 0);

    // A structured stage: the server constrains output to the contract.
    let vars = json!({
        "character_profile": {"id": "tobin", "name": "Old Tobin"},
        "stat_block": {"nerve": 3},
        "scene_state": {"location": "the ferry"},
        "resolved_outcome": "The lantern flares green.",
        "observations": [],
    });
    let outcome = gateway
        .call(CallRequest::new("reflection", "server", vars.clone()).seed(9))
        .wait();
    let value = outcome
        .result
        .expect("constrained output passes the contract");
    assert!(value["action_text"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(
        outcome.record.attempts.len(),
        1,
        "valid on the first attempt"
    );

    // An answer the engine opens: llama-server continues the assistant's
    // begun turn (its prefill), answering only what follows; DRY is accepted.
    let start = "You try to lift the ferry's chain, but";
    let mut begun = CallRequest::new(
        "chat",
        "server-continues",
        json!({"prompt": "Tell what happens on the ferry.", "system": ""}),
    )
    .seed(5)
    .starting_with(start);
    begun.sampling.max_tokens = Some(30);
    begun.sampling.dry_multiplier = Some(0.8);
    let mut streamed = String::new();
    let outcome = gateway.call(begun).wait_streaming(|t| streamed.push_str(t));
    let text = outcome.result.expect("llama-server continues");
    let text = text.as_str().unwrap_or_default();
    assert!(text.starts_with(start), "{text}");
    assert_eq!(streamed, text);
    // llama-server answers with the opening it was given and then the rest;
    // the answer holds the opening once, and something after it.
    let raw = &outcome.record.attempts[0].raw_output;
    assert!(raw.starts_with(start), "prefill: {raw:?}");
    assert_eq!(text.matches("You try to lift").count(), 1, "{text}");
    assert!(text.len() > start.len() + 3, "{text}");

    // The same prompt again: llama-server reports the reused prefix.
    let again = gateway
        .call(CallRequest::new("reflection", "server", vars).seed(10))
        .wait();
    assert!(again.result.is_ok());
    assert!(again.record.cached_tokens() > 0, "{:?}", again.record);
}

/// A loopback server that answers each request with the next canned response,
/// counting requests and keeping their headers.
fn scripted_server(responses: Vec<String>) -> (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let headers = Arc::new(Mutex::new(Vec::new()));
    let (c, h) = (count.clone(), headers.clone());
    std::thread::spawn(move || {
        for (stream, response) in listener.incoming().zip(responses) {
            let Ok(mut stream) = stream else { break };
            read_request(&mut stream, &h);
            c.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(response.as_bytes());
        }
    });
    (url, count, headers)
}

fn read_request(stream: &mut TcpStream, headers: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        headers.lock().unwrap().push(line.trim().to_owned());
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
}

fn http(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn sse(words: &[&str]) -> String {
    let mut events: Vec<String> = words
        .iter()
        .map(|w| json!({"choices": [{"delta": {"content": w}, "finish_reason": null}]}).to_string())
        .collect();
    events.push(
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 12, "completion_tokens": words.len()}})
            .to_string(),
    );
    events.push("[DONE]".to_owned());
    let body = events.iter().fold(String::new(), |mut body, e| {
        body.push_str("data: ");
        body.push_str(e);
        body.push_str("\n\n");
        body
    });
    http("200 OK", "text/event-stream", &body)
}

fn chat_request() -> GenerateRequest {
    GenerateRequest {
        stage: "chat".into(),
        prompt_id: "chat@v1".into(),
        messages: vec![Message::new(Role::User, "Hello")],
        sampling: Sampling::default(),
        json_schema: None,
        cache_slot: "chat".into(),
    }
}

fn backend(url: &str, key_env: Option<&str>, retries: u32) -> OpenAiBackend {
    let mut b = OpenAiBackend::new(url, "m", key_env, Duration::from_secs(10), retries).unwrap();
    b.backoff = Duration::from_millis(10);
    b
}

#[test]
fn overloaded_servers_are_retried_with_backoff_then_stream() {
    let (url, count, _) = scripted_server(vec![
        http("503 Service Unavailable", "text/plain", "loading model"),
        http("429 Too Many Requests", "text/plain", "slow down"),
        sse(&["The ", "ferry ", "waits."]),
    ]);
    let mut tokens = Vec::new();
    let out = backend(&url, None, 3)
        .generate(&chat_request(), &mut |t| {
            tokens.push(t.to_owned());
            true
        })
        .expect("the third attempt succeeds");
    assert_eq!(count.load(Ordering::SeqCst), 3);
    assert_eq!(out.text, "The ferry waits.");
    assert_eq!(tokens.concat(), out.text);
    assert_eq!((out.usage.tokens_in, out.usage.tokens_out), (12, 3));
}

#[test]
fn retries_run_out_with_a_transient_error_naming_the_server() {
    let (url, count, _) = scripted_server(vec![
        http("503 Service Unavailable", "text/plain", "busy"),
        http("502 Bad Gateway", "text/plain", "still busy"),
    ]);
    let err = backend(&url, None, 2)
        .generate(&chat_request(), &mut |_| true)
        .unwrap_err();
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert!(
        matches!(&err, BackendError::Transient(m) if m.contains("502") && m.contains(&url)),
        "{err}"
    );

    let closed = format!("http://127.0.0.1:{}/v1", free_port());
    let err = backend(&closed, None, 2)
        .generate(&chat_request(), &mut |_| true)
        .unwrap_err();
    assert!(
        matches!(&err, BackendError::Transient(m) if m.contains("cannot reach")),
        "{err}"
    );
}

#[test]
fn a_refused_key_fails_at_once_and_the_key_never_appears_in_errors() {
    let secret = "sk-loreloom-test-secret-4711";
    let (url, count, headers) = scripted_server(vec![
        http(
            "401 Unauthorized",
            "application/json",
            r#"{"error":"bad key"}"#,
        ),
        sse(&["never"]),
    ]);
    let b = backend(&url, None, 3).with_api_key(secret);
    assert!(!format!("{b:?}").contains(secret), "Debug hides the key");
    let mut b = b;
    let err = b.generate(&chat_request(), &mut |_| true).unwrap_err();
    assert_eq!(count.load(Ordering::SeqCst), 1, "a 401 is not retried");
    let message = err.to_string();
    assert!(
        message.contains("401") && message.contains("API key"),
        "{message}"
    );
    assert!(!message.contains(secret));
    let sent = headers.lock().unwrap().join("\n");
    assert!(
        sent.to_ascii_lowercase()
            .contains(&format!("authorization: bearer {secret}")),
        "{sent}"
    );
}

#[test]
fn an_unset_key_variable_sends_no_authorization_header() {
    let (url, _, headers) = scripted_server(vec![sse(&["ok"])]);
    let out = backend(&url, Some("LORELOOM_TEST_KEY_THAT_IS_NEVER_SET"), 1)
        .generate(&chat_request(), &mut |_| true)
        .unwrap();
    assert_eq!(out.text, "ok");
    let sent = headers.lock().unwrap().join("\n").to_ascii_lowercase();
    assert!(sent.contains("content-type: application/json"), "{sent}");
    assert!(!sent.contains("authorization"), "{sent}");
}

#[test]
fn a_server_that_is_not_openai_compatible_is_named_in_the_error() {
    let (url, _, _) = scripted_server(vec![http(
        "200 OK",
        "text/event-stream",
        "data: <html>\n\n",
    )]);
    let err = backend(&url, None, 1)
        .generate(&chat_request(), &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not JSON") && err.contains(&url), "{err}");
    let err = OpenAiBackend::new("localhost:8080", "m", None, Duration::from_secs(1), 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("http"), "{err}");
}

#[test]
fn the_gateway_marks_unreachable_servers_retryable_and_refusals_not() {
    let data = tempfile::tempdir().unwrap();
    let closed = format!("http://127.0.0.1:{}/v1", free_port());
    let outcome = gateway_for(&closed, data.path())
        .call(CallRequest::new(
            "chat",
            "server",
            json!({"prompt": "hi", "system": ""}),
        ))
        .wait();
    let err = outcome.result.unwrap_err();
    assert!(
        matches!(&err, LlmError::Backend { stage, model_key, transient: true, .. }
            if stage == "chat" && model_key == "server"),
        "{err}"
    );
    assert!(err.is_retryable());

    let (url, _, _) = scripted_server(vec![http(
        "401 Unauthorized",
        "application/json",
        r#"{"error":"bad key"}"#,
    )]);
    let outcome = gateway_for(&url, data.path())
        .call(CallRequest::new(
            "chat",
            "server",
            json!({"prompt": "hi", "system": ""}),
        ))
        .wait();
    let err = outcome.result.unwrap_err();
    assert!(
        matches!(
            &err,
            LlmError::Backend {
                transient: false,
                ..
            }
        ),
        "{err}"
    );
    assert!(!err.is_retryable());
}
