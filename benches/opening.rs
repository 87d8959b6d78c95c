//! The engine's opening (#42), measured on held-out moves: failed, costly, ruled out, or done.
//!
//! Held-out narration prompts (`training/split.json`: settings the corpus
//! never trained on) are narrated twice by the default model with the shipped
//! adapter, and written, both arms side by side, to `$OUT/opening.jsonl`
//! (default `target/opening/`) for a blind sheet (`tools/opening_sheet.py`).
//!
//! - `MOVES=failed` (the default): moves that failed, worked at a cost or
//!   were ruled out. *Before*, the narrator as it was (temperature 0.8, the
//!   repeat penalty, the model writes the whole answer); *after*, as it ships
//!   (the narrate stage's sampling with DRY, and the engine's opening, "You
//!   try to …, but", continued by the model). Each narration is checked with
//!   the continuity check's outcome rule (`continuity::honours`).
//! - `MOVES=done`: moves that succeeded or rolled nothing. *Before*, the
//!   shipped sampling with the model writing the whole answer (as these moves
//!   were told until the opening covered them); *after*, the same sampling
//!   continuing the engine's opening for them ("You …."). A blind sheet of
//!   40 prompts rated the move carried out in 25% before and 100% after,
//!   coherence 1.73 before, 2.02 with "You …, and", 2.17 with "You …."
//!   (closing note of #42).
//!
//! `cargo bench --bench opening` (`LIMIT=n` prompts, default all; `SEED=n`; `MOVES`).

#![expect(clippy::cast_precision_loss, reason = "shares in a report")]

use std::io::Write as _;
use std::path::PathBuf;

use loreloom::llm::PromptRegistry;
use loreloom::llm::backend::{Backend, GenerateRequest, Message, Role, Sampling};
use loreloom::llm::config::{DEFAULT_ADAPTER_FILE, DEFAULT_MODEL_FILE, default_threads};
use loreloom::llm::llama::LlamaCppBackend;
use loreloom::llm::policy::continued;
use loreloom::session::continuity::{Outcome, honours, opening};
use loreloom::tune::read_jsonl;
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The line of a compact narrate prompt that begins with `label`, without it.
fn line<'a>(prompt: &'a str, label: &str) -> Option<&'a str> {
    prompt
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .map(str::trim)
}

/// What the prompt says was decided, and the move as a verb phrase.
fn decided(prompt: &str) -> Option<(Outcome, String)> {
    let phrase = line(prompt, "Now: you ")?.trim_end_matches('.').to_owned();
    let outcome = if line(prompt, "It cannot happen:").is_some() {
        Outcome::Blocked
    } else if line(prompt, "It simply happens.").is_some() {
        Outcome::Unrolled
    } else {
        let band = line(prompt, "How it goes:")?.split('.').next()?;
        Outcome::of_band(band)
    };
    Some((outcome, phrase))
}

/// Whether the engine's decision went against the move.
fn went_wrong(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Blocked | Outcome::Failure | Outcome::Mixed
    )
}

fn generate(backend: &mut LlamaCppBackend, messages: Vec<Message>, sampling: Sampling) -> String {
    let request = GenerateRequest {
        stage: "narrate".into(),
        prompt_id: "narrate@bench".into(),
        messages,
        sampling,
        json_schema: None,
        cache_slot: "narrate".into(),
    };
    backend
        .generate(&request, &mut |_| true)
        .map_or_else(|e| format!("(failed: {e})"), |g| g.text)
}

fn main() {
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    let adapter = root().join("assets/models").join(DEFAULT_ADAPTER_FILE);
    if !model.is_file() || !adapter.is_file() {
        eprintln!(
            "opening: needs {} and {} (./run.sh test installs the model)",
            model.display(),
            adapter.display()
        );
        return;
    }
    // `cargo test --benches` runs it once in test mode: two prompts.
    let measuring = std::env::args().any(|a| a == "--bench");
    let limit: usize = std::env::var("LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|_| measuring)
        .unwrap_or(if measuring { usize::MAX } else { 2 });
    let seed: u32 = std::env::var("SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let registry = PromptRegistry::load(root().join("prompts")).expect("prompts");
    let shipped = registry.stage("narrate").expect("narrate").sampling.clone();
    let after = Sampling {
        seed,
        ..Sampling::default().merged(&shipped)
    };
    let done = std::env::var("MOVES").is_ok_and(|m| m == "done");
    let before = if done {
        after.clone()
    } else {
        Sampling {
            temperature: 0.8,
            dry_multiplier: None,
            ..after.clone()
        }
    };
    assert!(
        after.dry_multiplier.is_some(),
        "the shipped narrate stage samples with DRY: {shipped:?}"
    );
    let heldout = read_jsonl(&root().join("training/data/heldout.jsonl")).expect("held out");
    let picked: Vec<_> = heldout
        .iter()
        .filter(|e| e.stage == "narrate")
        .filter_map(|e| {
            let user = &e.messages.get(1)?.content;
            decided(user)
                .filter(|(outcome, _)| went_wrong(*outcome) != done)
                .map(|d| (e, d))
        })
        .take(limit)
        .collect();
    let mut backend =
        LlamaCppBackend::open_with(&model, Some(&adapter), 2048, default_threads(), 4)
            .expect("the default model");
    assert!(backend.has_adapter(), "{:?}", backend.adapter_error());
    let out = std::env::var_os("OUT").map_or_else(|| root().join("target/opening"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("the output folder");
    let mut file = std::fs::File::create(out.join("opening.jsonl")).expect("opening.jsonl");
    let (mut kept_before, mut kept_after) = (0usize, 0usize);
    for (e, (outcome, phrase)) in &picked {
        let asked: Vec<Message> = e.messages[..2].to_vec();
        let whole = generate(&mut backend, asked.clone(), before.clone());
        let start = opening(*outcome, phrase);
        let mut begun = asked.clone();
        begun.push(Message::new(Role::Assistant, start.clone()));
        let told = continued(&start, &generate(&mut backend, begun, after.clone()));
        let mv = format!("I {phrase}");
        let (b, a) = (
            honours(*outcome, &mv, &whole),
            honours(*outcome, &mv, &told),
        );
        kept_before += usize::from(b);
        kept_after += usize::from(a);
        let row = json!({"setting": e.setting, "index": e.index, "outcome": outcome,
            "move": phrase, "prompt": e.messages[1].content, "before": whole, "after": told,
            "honoured_before": b, "honoured_after": a});
        writeln!(file, "{row}").expect("a row written");
    }
    let n = picked.len().max(1) as f64;
    let which = if done {
        "that succeeded or rolled nothing"
    } else {
        "that failed, cost or were ruled out"
    };
    println!(
        "{} held-out prompts {which}; outcome kept (continuity::honours): before {:.0}%, after {:.0}%; narrations in {}",
        picked.len(),
        100.0 * kept_before as f64 / n,
        100.0 * kept_after as f64 / n,
        out.join("opening.jsonl").display()
    );
}
