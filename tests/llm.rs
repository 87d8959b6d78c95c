//! The model gateway end to end with the scripted backend: the shipped prompts and
//! contracts, streaming, the repair → retry → typed error policy, call records and replay.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use loreloom::llm::REPAIR_STAGE;
use loreloom::llm::{
    AttemptKind, CallRequest, Contract, Gateway, LlmError, LlmEvent, ModelsConfig, PromptRegistry,
    Role, Script, ScriptedBackend,
};
use serde_json::{Value, json};

const KEY: &str = "local-small";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gateway(data: &Path) -> Gateway {
    let prompts = PromptRegistry::load(root().join("prompts")).expect("shipped prompts load");
    Gateway::new(
        prompts,
        root().join("schemas"),
        ModelsConfig::default(),
        data,
    )
}

fn scripted(gateway: &Gateway, replies: &[&str]) -> ScriptedBackend {
    let backend = ScriptedBackend::new(Script::in_order(replies.iter().copied()));
    gateway.register_script(KEY, backend.clone());
    backend
}

/// A model key that reads its replies from `file` in the data dir.
fn scripted_key(file: &str, drafts: u32) -> loreloom::llm::ModelConfig {
    loreloom::llm::ModelConfig {
        backend: loreloom::llm::BackendConfig::Scripted { file: file.into() },
        sampling: loreloom::llm::backend::SamplingOverride::default(),
        description: String::new(),
        compact_prompts: false,
        drafts,
        lanes: 1,
        continues_answers: false,
    }
}

fn reflection_vars() -> Value {
    json!({
        "character_profile": {"id": "mara", "name": "Mara", "traits": ["wary"]},
        "stat_block": {"hp": 7},
        "scene_state": {"location": "the ferry"},
        "resolved_outcome": "The lantern goes out.",
        "observations": [{"content": "The stranger lied about the toll.", "priority": 0.8}],
    })
}

const VALID: &str =
    r#"{"action_text": "Mara relights the lantern with a steady hand.", "intent_tags": ["calm"]}"#;

#[test]
fn every_shipped_stage_loads_documents_its_variables_and_has_a_compiling_contract() {
    let prompts = PromptRegistry::load(root().join("prompts")).expect("prompts/ loads");
    let stages: Vec<_> = prompts
        .stages()
        .map(|(name, _, _)| name.to_owned())
        .collect();
    for required in [
        "chat",
        "narrator",
        "reflection",
        "repair",
        "ruleset_resolution",
    ] {
        assert!(
            stages.iter().any(|s| s == required),
            "missing stage {required}: {stages:?}"
        );
    }
    for (name, info, versions) in prompts.stages() {
        assert!(!versions.is_empty(), "{name} has no template");
        assert!(!info.description.is_empty(), "{name} has no description");
        assert!(!info.variables.is_empty(), "{name} documents no variables");
        if let Some(contract) = &info.contract {
            Contract::load(&root().join("schemas"), contract)
                .unwrap_or_else(|e| panic!("{name}'s contract {contract}: {e}"));
        }
    }
}

#[test]
fn a_valid_structured_reply_is_parsed_streamed_and_recorded() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let script = scripted(&gw, &[VALID]);
    let handle = gw.call(CallRequest::new("reflection", KEY, reflection_vars()).seed(42));
    let mut streamed = String::new();
    let outcome = handle.wait_streaming(|t| streamed.push_str(t));
    let value = outcome.result.expect("valid output is accepted");
    assert_eq!(
        value["action_text"],
        "Mara relights the lantern with a steady hand."
    );
    assert_eq!(streamed, VALID, "every token reaches the caller");
    assert_eq!(script.unused(), 0);

    let r = &outcome.record;
    assert_eq!(r.stage, "reflection");
    assert_eq!(r.prompt_id, "reflection@v1");
    assert_eq!(r.model_key, KEY);
    assert_eq!(r.backend, "scripted");
    assert_eq!(r.contract.as_deref(), Some("stages/reflection.schema.json"));
    assert_eq!(r.output.as_ref(), Some(&value));
    assert!(r.error.is_none());
    assert_eq!(r.attempts.len(), 1);
    let first = &r.attempts[0];
    assert_eq!(first.kind, AttemptKind::First);
    assert_eq!(first.raw_output, VALID);
    assert_eq!(first.sampling.seed, 42);
    // Stage defaults from stage.ron reach the sampler.
    assert_eq!(first.sampling.max_tokens, 160);
    assert!((first.sampling.temperature - 0.8).abs() < 1e-6);
    // The rendered prompt is kept, with the caller's values in it.
    assert_eq!(first.messages[0].role, Role::System);
    let user = &first.messages.last().unwrap().content;
    assert!(user.contains("The stranger lied about the toll."), "{user}");
    assert!(first.usage.tokens_out > 0);

    // The record survives a round trip through JSON (how the store keeps it).
    let text = serde_json::to_string(r).unwrap();
    let back: loreloom::llm::CallRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(back.attempts[0].raw_output, VALID);
    assert_eq!(back.output, r.output);
}

/// The reflection call, whose answer is the valid one; its record.
fn accepted(gw: &Gateway) -> loreloom::llm::CallRecord {
    let outcome = gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()))
        .wait();
    assert_eq!(
        outcome.result.unwrap()["action_text"],
        "Mara relights the lantern with a steady hand."
    );
    outcome.record
}

#[test]
fn invalid_output_gets_one_repair_with_the_errors_then_is_accepted() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    scripted(&gw, &[r#"{"intent_tags": ["calm"]}"#, VALID]);
    let r = &accepted(&gw);
    let kinds: Vec<_> = r.attempts.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, [AttemptKind::First, AttemptKind::Repair]);
    assert!(
        r.attempts[0]
            .errors
            .iter()
            .any(|e| e.contains("action_text")),
        "{:?}",
        r.attempts[0].errors
    );
    let repair = &r.attempts[1];
    assert_eq!(repair.prompt_id, format!("{REPAIR_STAGE}@v1"));
    let shown = &repair.messages.last().unwrap().content;
    assert!(
        shown.contains(r#"{"intent_tags": ["calm"]}"#),
        "the invalid output is shown: {shown}"
    );
    assert!(
        shown.contains("action_text"),
        "the errors are shown: {shown}"
    );
    assert!(repair.errors.is_empty());
}

/// A repair the backend cannot take (a small model's repair prompt, carrying the whole
/// contract and the invalid answer, outgrew its context) does not end the call: the
/// stage's own fresh retry still runs.
#[test]
fn a_repair_the_backend_refuses_goes_on_to_the_fresh_retry() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let reply = |text: &str| loreloom::llm::scripted::Reply {
        stage: Some("reflection".into()),
        prompt: Some("reflection@v1".into()),
        text: text.into(),
    };
    // No reply for the repair prompt: the scripted backend fails it, as llama.cpp
    // fails a prompt longer than its context.
    let backend = ScriptedBackend::new(Script {
        replies: vec![reply(r#"{"intent_tags": ["calm"]}"#), reply(VALID)],
    });
    gw.register_script(KEY, backend.clone());
    let r = &accepted(&gw);
    let kinds: Vec<_> = r.attempts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [AttemptKind::First, AttemptKind::Repair, AttemptKind::Retry]
    );
    assert_eq!(r.attempts[1].prompt_id, format!("{REPAIR_STAGE}@v1"));
    assert!(
        r.attempts[1]
            .errors
            .iter()
            .any(|e| e.contains("the repair attempt failed") && e.contains("no reply left")),
        "{:?}",
        r.attempts[1].errors
    );
    assert_eq!(backend.unused(), 0);
}

#[test]
fn output_that_stays_invalid_is_retried_once_then_fails_with_a_typed_error() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let script = scripted(
        &gw,
        &[
            "The lantern? I relight it.",
            "```json\n{\"action_text\": \"\"}\n```",
            r#"{"action_text": "x", "mood": "grim"}"#,
            "left over for the next call",
        ],
    );
    let outcome = gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()).seed(7))
        .wait();
    let err = outcome.result.unwrap_err();
    match &err {
        LlmError::InvalidOutput {
            stage,
            model_key,
            reason,
        } => {
            assert_eq!(stage, "reflection");
            assert_eq!(model_key, KEY);
            assert!(reason.contains("mood"), "{reason}");
        }
        other => panic!("expected InvalidOutput, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("reflection") && message.contains(KEY),
        "{message}"
    );
    let r = &outcome.record;
    let kinds: Vec<_> = r.attempts.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [AttemptKind::First, AttemptKind::Repair, AttemptKind::Retry]
    );
    assert!(r.attempts.iter().all(|a| !a.errors.is_empty()));
    assert_eq!(
        r.attempts[2].sampling.seed, 8,
        "the retry uses the next seed"
    );
    assert_eq!(
        r.attempts[2].messages, r.attempts[0].messages,
        "the retry is the stage's own prompt"
    );
    assert!(r.output.is_none());
    assert_eq!(r.error.as_deref(), Some(message.as_str()));
    assert_eq!(script.unused(), 1, "exactly three generations: no more");
}

#[test]
fn free_text_stages_stream_tokens_that_a_poller_sees_before_the_end() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let mut backend = ScriptedBackend::new(Script::in_order([
        "Once upon a time, a ferry crossed the river.",
    ]));
    backend.word_delay = Duration::from_millis(5);
    gw.register_script(KEY, backend);
    let handle = gw.call(CallRequest::new(
        "chat",
        KEY,
        json!({"prompt": "Tell me a story.", "system": ""}),
    ));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut tokens = Vec::new();
    let mut finished = None;
    while finished.is_none() && Instant::now() < deadline {
        for event in handle.poll() {
            match event {
                LlmEvent::Token(t) => tokens.push(t),
                LlmEvent::Finished(outcome) => finished = Some(outcome),
                LlmEvent::AttemptStarted(kind) => assert_eq!(kind, AttemptKind::First),
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let outcome = finished.expect("the call finishes");
    assert!(tokens.len() > 5, "streamed piece by piece: {tokens:?}");
    assert_eq!(
        tokens.concat(),
        "Once upon a time, a ferry crossed the river."
    );
    assert_eq!(
        outcome.result.unwrap(),
        Value::String("Once upon a time, a ferry crossed the river.".into())
    );
    let system = &outcome.record.attempts[0].messages[0];
    assert!(
        system.content.contains("storyteller"),
        "the default system message: {system:?}"
    );
}

/// `models.ron` `drafts`: a call that asks for drafts gets that many samples
/// (seeds `seed`, `seed + 1` …) as one array, none of them streamed; a call
/// that does not ask, or a key registered with a script, gets one string.
#[test]
fn a_drafted_call_answers_with_every_draft_in_seed_order_and_streams_none() {
    let data = tempfile::tempdir().unwrap();
    let mut models = ModelsConfig::default();
    models
        .models
        .insert("drafter".into(), scripted_key("drafts.json", 3));
    std::fs::write(
        data.path().join("drafts.json"),
        json!({"replies": [{"text": "One."}, {"text": "Two."}, {"text": "Three."}, {"text": "Alone."}]})
            .to_string(),
    )
    .unwrap();
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let gw = Gateway::new(prompts, root().join("schemas"), models, data.path());
    assert_eq!(gw.drafts_for("drafter"), 3);
    let chat = || json!({"prompt": "Go on.", "system": ""});
    let handle = gw.call(
        CallRequest::new("chat", "drafter", chat())
            .seed(40)
            .drafted(),
    );
    let mut tokens = 0;
    let outcome = handle.wait_streaming(|_| tokens += 1);
    assert_eq!(tokens, 0, "drafts do not stream");
    assert_eq!(outcome.result.unwrap(), json!(["One.", "Two.", "Three."]));
    let record = &outcome.record;
    assert_eq!(record.attempts.len(), 3);
    assert!(record.attempts.iter().all(|a| a.kind == AttemptKind::Draft));
    let seeds: Vec<u32> = record.attempts.iter().map(|a| a.sampling.seed).collect();
    assert_eq!(seeds, [40, 41, 42]);

    // Not asked for: one sample, streamed.
    let mut streamed = String::new();
    let plain = gw
        .call(CallRequest::new("chat", "drafter", chat()))
        .wait_streaming(|t| streamed.push_str(t));
    assert_eq!(plain.result.unwrap(), json!("Alone."));
    assert_eq!(streamed, "Alone.");

    // A script answers one reply per call; replay sets the recorded count.
    gw.register_script(
        "drafter",
        ScriptedBackend::new(Script::in_order(["Scripted."])),
    );
    assert_eq!(gw.drafts_for("drafter"), 1);
    let scripted = gw
        .call(CallRequest::new("chat", "drafter", chat()).drafted())
        .wait();
    assert_eq!(scripted.result.unwrap(), json!("Scripted."));
    gw.set_drafts("drafter", 2);
    assert_eq!(gw.drafts_for("drafter"), 2);
}

/// #42: the engine opens an answer (`CallRequest::answer_start`) and a key
/// that continues answers is asked to go on from it: the opening is the
/// assistant's begun turn in the attempt's messages, it streams first, and
/// the answer is the opening and the continuation, joined by a space before a
/// word and by nothing before a stop. A key that does not continue answers
/// never sees it.
#[test]
fn a_begun_answer_is_continued_streamed_first_and_recorded() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    assert!(ModelsConfig::default().models[KEY].continues_answers);
    scripted(&gw, &["the bolt is rusted fast.", ", and the bolt holds."]);
    let chat = || json!({"prompt": "Go on.", "system": ""});
    let start = "You try to pull the bolt, but";
    let mut streamed = String::new();
    let outcome = gw
        .call(CallRequest::new("chat", KEY, chat()).starting_with(start))
        .wait_streaming(|t| streamed.push_str(t));
    let told = "You try to pull the bolt, but the bolt is rusted fast.";
    assert_eq!(outcome.result.unwrap(), json!(told));
    assert_eq!(
        streamed, told,
        "the opening streams before the model's words"
    );
    let messages = &outcome.record.attempts[0].messages;
    let last = messages.last().unwrap();
    assert_eq!((last.role, last.content.as_str()), (Role::Assistant, start));
    assert_eq!(
        outcome.record.attempts[0].raw_output,
        "the bolt is rusted fast."
    );
    let stop = gw
        .call(CallRequest::new("chat", KEY, chat()).starting_with(start))
        .wait();
    assert_eq!(
        stop.result.unwrap(),
        json!("You try to pull the bolt, but, and the bolt holds.")
    );

    // A key whose model writes whole answers (a remote server's) ignores it.
    let mut models = ModelsConfig::default();
    models
        .models
        .insert("whole".into(), scripted_key("whole.json", 1));
    std::fs::write(
        data.path().join("whole.json"),
        json!({"replies": [{"text": "The bolt holds."}]}).to_string(),
    )
    .unwrap();
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let gw = Gateway::new(prompts, root().join("schemas"), models, data.path());
    let whole = gw
        .call(CallRequest::new("chat", "whole", chat()).starting_with(start))
        .wait();
    assert_eq!(whole.result.unwrap(), json!("The bolt holds."));
    let last = whole.record.attempts[0].messages.last().unwrap().clone();
    assert_eq!(last.role, Role::User);
}

#[test]
fn a_cancelled_call_stops_streaming_and_says_so() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let long = "word ".repeat(2000);
    let mut backend = ScriptedBackend::new(Script::in_order([long.as_str()]));
    backend.word_delay = Duration::from_millis(2);
    gw.register_script(KEY, backend);
    let mut request = CallRequest::new("chat", KEY, json!({"prompt": "Go on.", "system": ""}));
    request.sampling.max_tokens = Some(5000);
    let handle = gw.call(request);
    handle.cancel();
    let outcome = handle.wait();
    assert_eq!(
        outcome.result.unwrap_err(),
        LlmError::Cancelled {
            stage: "chat".into()
        }
    );
}

#[test]
fn recorded_calls_replay_to_the_same_output() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    scripted(&gw, &[r#"{"oops": 1}"#, VALID]);
    let original = gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()))
        .wait();
    assert!(original.result.is_ok());

    let replay_gw = gateway(data.path());
    let replay = ScriptedBackend::new(Script::from_records([&original.record]));
    replay_gw.register_script(KEY, replay.clone());
    let again = replay_gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()))
        .wait();
    assert_eq!(again.result, original.result);
    assert_eq!(again.record.attempts.len(), original.record.attempts.len());
    for (a, b) in again.record.attempts.iter().zip(&original.record.attempts) {
        assert_eq!(a.raw_output, b.raw_output);
        assert_eq!(a.messages, b.messages);
    }
    assert_eq!(replay.unused(), 0);
}

#[test]
fn setup_problems_are_errors_naming_the_stage_not_panics() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    scripted(&gw, &[VALID]);

    let missing_var = gw
        .call(CallRequest::new(
            "reflection",
            KEY,
            json!({"scene_state": {}}),
        ))
        .wait();
    let err = missing_var.result.unwrap_err().to_string();
    assert!(err.contains("reflection"), "{err}");

    let unknown_stage = gw
        .call(CallRequest::new("no_such_stage", KEY, json!({})))
        .wait();
    let err = unknown_stage.result.unwrap_err().to_string();
    assert!(err.contains("no_such_stage"), "{err}");

    let unknown_key = gw
        .call(CallRequest::new(
            "reflection",
            "huge-model",
            reflection_vars(),
        ))
        .wait();
    let err = unknown_key.result.unwrap_err().to_string();
    assert!(
        err.contains("huge-model") && err.contains("models.ron"),
        "{err}"
    );

    // A model key whose GGUF is missing fails with the path, on the worker, not in the caller.
    let missing_model = gw
        .call(CallRequest::new(
            "reflection",
            "local-large",
            reflection_vars(),
        ))
        .wait();
    let err = missing_model.result.unwrap_err().to_string();
    assert!(err.contains("local-large"), "{err}");
}

#[test]
fn an_exhausted_script_is_a_backend_error_naming_the_stage() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    scripted(&gw, &[]);
    let err = gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()))
        .wait()
        .result
        .unwrap_err();
    assert!(
        matches!(&err, LlmError::Backend { stage, .. } if stage == "reflection"),
        "{err:?}"
    );
}

#[test]
fn a_scripted_model_key_reads_its_script_file_from_the_data_dir() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("demo.json"),
        json!({"replies": [{"stage": "reflection", "text": VALID}]}).to_string(),
    )
    .unwrap();
    let mut models = ModelsConfig::default();
    models
        .models
        .insert("demo".into(), scripted_key("demo.json", 1));
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let gw = Gateway::new(prompts, root().join("schemas"), models, data.path());
    let outcome = gw
        .call(CallRequest::new("reflection", "demo", reflection_vars()))
        .wait();
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
}

fn resolve_vars() -> Value {
    json!({
        "place": "Reedmere Quay",
        "calibration": {"tone": "", "difficulty": "standard", "lines": [], "veils": []},
        "rulebook_text": "Roll when it matters.",
        "checks": [{"id": "action", "when": "something risky", "binds_stat": true, "stats": ["nerve"], "modifiers": []}],
        "scene": {"time": "dusk"},
        "actor": {"id": "player", "name": "The Surveyor"},
        "intention": "I follow Tamsin to the lantern store.",
        "stats": {"nerve": 1},
        "present": [{"id": "player", "name": "The Surveyor"}, {"id": "tamsin_reed", "name": "Tamsin Reed"}],
        "inventory": {},
        "facts": [],
    })
}

#[test]
fn a_compact_models_referee_only_picks_the_check_and_a_full_one_may_rule_a_move_out() {
    let ruled_out = r#"{"possible": false, "blocked_reason": "The letter of commission has been burned.", "clarification_question": "", "check": "", "stat": "", "modifiers": []}"#;
    let rolled = r#"{"possible": true, "blocked_reason": "", "clarification_question": "", "check": "action", "stat": "nerve", "modifiers": []}"#;
    // The default local key asks for compact prompts: its contract holds
    // `possible` to true and both texts empty, so the ruling is repaired.
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    scripted(&gw, &[ruled_out, rolled]);
    let outcome = gw
        .call(CallRequest::new("resolve", KEY, resolve_vars()))
        .wait();
    assert_eq!(outcome.result.unwrap()["check"], "action");
    let first = &outcome.record.attempts[0];
    assert!(
        first.errors.iter().any(|e| e.contains("possible")),
        "{:?}",
        first.errors
    );
    // A model with full prompts keeps the referee's whole say.
    let full = "server-default";
    let gw = gateway(data.path());
    gw.register_script(
        full,
        ScriptedBackend::new(Script::in_order([ruled_out].iter().copied())),
    );
    let outcome = gw
        .call(CallRequest::new("resolve", full, resolve_vars()))
        .wait();
    let ruling = outcome.result.unwrap();
    assert_eq!(ruling["possible"], false);
    assert_eq!(outcome.record.attempts.len(), 1);
}

/// A backend that takes its time priming and logs what it did.
struct Priming {
    inner: ScriptedBackend,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl loreloom::llm::Backend for Priming {
    fn name(&self) -> &'static str {
        "priming"
    }

    fn generate(
        &mut self,
        request: &loreloom::llm::backend::GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<loreloom::llm::Generated, loreloom::llm::BackendError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("call {}", request.stage));
        self.inner.generate(request, on_token)
    }

    fn prefill(
        &mut self,
        request: &loreloom::llm::backend::GenerateRequest,
    ) -> Result<(), loreloom::llm::BackendError> {
        std::thread::sleep(Duration::from_millis(300));
        self.log
            .lock()
            .unwrap()
            .push(format!("prime {}", request.cache_slot));
        Ok(())
    }
}

/// #21: primes wait behind calls and make way for them: a call sent while
/// primes are queued runs next (at most the prime already under way first),
/// and the primes it overtook are dropped, their receivers told.
#[test]
fn a_call_overtakes_queued_primes_and_they_are_dropped() {
    let data = tempfile::tempdir().unwrap();
    let gw = gateway(data.path());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let script = ScriptedBackend::new(Script::in_order([VALID]));
    let shared = log.clone();
    gw.register_lanes(KEY, 1, move || {
        Ok(Box::new(Priming {
            inner: script.clone(),
            log: shared.clone(),
        }) as Box<dyn loreloom::llm::Backend>)
    });
    let primes: Vec<_> = (0..4)
        .map(|i| {
            let mut r = CallRequest::new("reflection", KEY, reflection_vars());
            r.cache_slot = Some(format!("slot{i}"));
            gw.prime(r)
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let outcome = gw
        .call(CallRequest::new("reflection", KEY, reflection_vars()))
        .wait();
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    for done in &primes {
        done.recv_timeout(Duration::from_secs(5))
            .expect("every prime's receiver hears");
    }
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log.last().map(String::as_str),
        Some("call reflection"),
        "{log:?}"
    );
    assert!(
        log.iter().filter(|l| l.starts_with("prime")).count() <= 1,
        "only the prime under way ran: {log:?}"
    );
    // Alone, primes all run.
    let gw = gateway(data.path());
    let log2 = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let shared = log2.clone();
    gw.register_lanes(KEY, 1, move || {
        Ok(Box::new(Priming {
            inner: ScriptedBackend::new(Script::in_order([VALID])),
            log: shared.clone(),
        }) as Box<dyn loreloom::llm::Backend>)
    });
    for i in 0..2 {
        let mut r = CallRequest::new("reflection", KEY, reflection_vars());
        r.cache_slot = Some(format!("slot{i}"));
        gw.prime(r).recv_timeout(Duration::from_secs(5)).unwrap();
    }
    assert_eq!(*log2.lock().unwrap(), ["prime slot0", "prime slot1"]);
}
