//! The real default model (SmolLM2-135M-Instruct) in-process through llama.cpp:
//! free text streams, every stage contract becomes a grammar llama.cpp accepts,
//! constrained output validates, prefixes are reused, seeds reproduce.
//!
//! `./run.sh test` installs the model first; run alone, these tests look in
//! `$LORELOOM_DATA_DIR/models/` (or the user's data dir) and say how to get it.
#![cfg(feature = "llama")]

use std::path::{Path, PathBuf};

use loreloom::llm::backend::{Backend, GenerateRequest, Sampling};
use loreloom::llm::config::DEFAULT_MODEL_FILE;
use loreloom::llm::llama::LlamaCppBackend;
use loreloom::llm::{
    AttemptKind, BackendConfig, CallRequest, Contract, Gateway, Message, ModelConfig, ModelsConfig,
    PromptRegistry, Role,
};
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn model_path() -> PathBuf {
    let path = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    assert!(
        path.is_file(),
        "the default model is not installed at {}: run `./run.sh test` (it fetches it), or set LORELOOM_DATA_DIR to a data dir holding models/{DEFAULT_MODEL_FILE}",
        path.display()
    );
    path
}

fn backend() -> LlamaCppBackend {
    LlamaCppBackend::open(&model_path(), 2048, 1, 4).expect("the default model loads")
}

fn request(slot: &str, messages: Vec<Message>, sampling: Sampling) -> GenerateRequest {
    GenerateRequest {
        stage: "test".into(),
        prompt_id: "test@v1".into(),
        messages,
        sampling,
        json_schema: None,
        cache_slot: slot.into(),
    }
}

fn story_messages(question: &str) -> Vec<Message> {
    vec![
        Message::new(
            Role::System,
            "You narrate a ghost story set on a river ferry at night. The ferryman, Old Tobin, \
             has carried the dead across for forty years. The lantern at the bow burns green \
             when a spirit is aboard. Tonight a girl in a wet grey coat has paid with a coin \
             from a century ago. Keep every reply to two sentences.",
        ),
        Message::new(Role::User, question),
    ]
}

#[test]
fn free_text_streams_and_a_seed_reproduces_it() {
    let mut llama = backend();
    let sampling = Sampling {
        temperature: 0.8,
        max_tokens: 40,
        seed: 1234,
        ..Sampling::default()
    };
    let mut pieces = Vec::new();
    let a = llama
        .generate(
            &request(
                "a",
                story_messages("What does Tobin see?"),
                sampling.clone(),
            ),
            &mut |t| {
                pieces.push(t.to_owned());
                true
            },
        )
        .expect("generation works");
    assert!(!a.text.trim().is_empty(), "{a:?}");
    assert_eq!(pieces.concat(), a.text, "streamed pieces make the text");
    assert!(pieces.len() > 3, "streamed token by token: {pieces:?}");
    assert!(a.usage.tokens_in > 50 && a.usage.tokens_out > 0, "{a:?}");
    assert_eq!(a.usage.cached_tokens, 0, "a new slot has nothing cached");

    // The same seed in a fresh slot gives the same text.
    let b = llama
        .generate(
            &request("b", story_messages("What does Tobin see?"), sampling),
            &mut |_| true,
        )
        .unwrap();
    assert_eq!(a.text, b.text);
}

#[test]
fn a_shared_prefix_is_evaluated_once_per_slot() {
    let mut llama = backend();
    let sampling = Sampling {
        temperature: 0.0,
        max_tokens: 8,
        ..Sampling::default()
    };
    let first = llama
        .generate(
            &request(
                "narrator",
                story_messages("Who is the girl?"),
                sampling.clone(),
            ),
            &mut |_| true,
        )
        .unwrap();
    let second = llama
        .generate(
            &request(
                "narrator",
                story_messages("Why is the lantern green?"),
                sampling,
            ),
            &mut |_| true,
        )
        .unwrap();
    let system_tokens = llama.tokenize(&story_messages("")[0].content).len();
    assert_eq!(first.usage.cached_tokens, 0);
    assert!(
        second.usage.cached_tokens as usize >= system_tokens,
        "the system prompt ({system_tokens} tokens) is reused: {second:?}"
    );
    assert!(
        second.usage.cached_tokens < second.usage.tokens_in,
        "the new question is evaluated"
    );
}

#[test]
fn every_stage_contract_becomes_a_grammar_llama_cpp_accepts() {
    let mut llama = backend();
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let mut checked = 0;
    for (name, info, _) in prompts.stages() {
        let Some(file) = &info.contract else { continue };
        let contract = Contract::load(&root().join("schemas"), file).unwrap();
        let gbnf = llama
            .grammar_for(contract.schema())
            .unwrap_or_else(|e| panic!("{name}'s contract {file}: {e}"));
        assert!(gbnf.contains("root ::="), "{name}: {gbnf}");
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} structured stages");
}

#[test]
fn constrained_output_is_json_that_satisfies_the_contract() {
    let schema = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "mood", "age"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 24},
            "mood": {"enum": ["calm", "afraid", "angry"]},
            "age": {"type": "integer", "minimum": 1, "maximum": 120},
            "items": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 16}}
        }
    });
    let contract = Contract::new("test", schema.clone()).unwrap();
    let mut llama = backend();
    for seed in [1, 2, 3] {
        let mut req = request(
            "json",
            vec![Message::new(Role::User, "Describe the ferryman as JSON.")],
            Sampling {
                temperature: 0.9,
                max_tokens: 120,
                seed,
                ..Sampling::default()
            },
        );
        req.json_schema = Some(schema.clone());
        let out = llama.generate(&req, &mut |_| true).unwrap();
        let value = contract
            .check(&out.text)
            .unwrap_or_else(|e| panic!("seed {seed}: {:?} refused: {e:?}", out.text));
        assert!(value["name"].is_string());
        // The fields come in the order `required` lists them, not alphabetically.
        let at = |field: &str| out.text.find(&format!("\"{field}\"")).unwrap();
        assert!(
            at("name") < at("mood") && at("mood") < at("age"),
            "seed {seed}: {}",
            out.text
        );
    }
}

#[test]
fn the_gateway_runs_a_structured_stage_on_the_real_model() {
    let data = tempfile::tempdir().unwrap();
    let mut models = ModelsConfig::default();
    models.models.insert(
        "real".into(),
        ModelConfig {
            backend: BackendConfig::Llama {
                file: model_path(),
                context: 2048,
                threads: Some(1),
                slots: 2,
                lora: None,
                lora_stages: None,
            },
            sampling: loreloom::llm::backend::SamplingOverride::default(),
            description: String::new(),
            compact_prompts: false,
            drafts: 1,
            lanes: 1,
            continues_answers: false,
        },
    );
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let gateway = Gateway::new(prompts, root().join("schemas"), models, data.path());
    let vars = json!({
        "character_profile": {"id": "tobin", "name": "Old Tobin", "role": "ferryman"},
        "stat_block": {"nerve": 3},
        "scene_state": {"location": "the ferry", "time": "midnight"},
        "resolved_outcome": "The green lantern flares and the girl vanishes.",
        "observations": [{"content": "The girl paid with a coin a century old.", "priority": 0.9}],
    });
    let mut streamed = String::new();
    let outcome = gateway
        .call(CallRequest::new("reflection", "real", vars).seed(5))
        .wait_streaming(|t| streamed.push_str(t));
    let value = outcome
        .result
        .expect("grammar-constrained output passes the contract");
    assert!(value["action_text"].as_str().is_some_and(|s| !s.is_empty()));
    let record = &outcome.record;
    assert_eq!(record.backend, "llama.cpp");
    assert_eq!(record.attempts[0].kind, AttemptKind::First);
    assert_eq!(
        record.attempts.len(),
        1,
        "the grammar makes the first attempt valid"
    );
    assert_eq!(streamed, record.attempts[0].raw_output);
    assert!(record.time_to_first_token() > std::time::Duration::ZERO);
    assert!(record.tokens_out() > 0);
}

#[test]
fn a_file_that_is_not_a_model_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake.gguf");
    std::fs::write(&fake, b"not a gguf").unwrap();
    let err = LlamaCppBackend::open(&fake, 512, 1, 1)
        .unwrap_err()
        .to_string();
    assert!(err.contains("fake.gguf"), "{err}");
    let err = LlamaCppBackend::open(Path::new("/nonexistent/model.gguf"), 512, 1, 1)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("/nonexistent/model.gguf") && err.contains("loreloom models"),
        "{err}"
    );
}

#[test]
fn a_primed_prompt_is_answered_from_the_cache() {
    let mut llama = backend();
    let messages = vec![
        Message::new(
            Role::System,
            "You are the narrator of a story set on a foggy quay.",
        ),
        Message::new(Role::User, "The ferry is late. What happens next?"),
    ];
    let req = request(
        "primed",
        messages,
        Sampling {
            max_tokens: 8,
            ..Sampling::default()
        },
    );
    llama.prefill(&req).unwrap();
    let out = llama.generate(&req, &mut |_| true).unwrap();
    // Everything but the last token (evaluated again for its logits) was read before.
    assert_eq!(out.usage.cached_tokens + 1, out.usage.tokens_in, "{out:?}");
}
