//! The narrator adapter, measured on held-out prompts against the base default model.
//!
//! Held-out prompts (whole settings the corpus's training never saw, `training/split.json`) are
//! played through the base default model and the tuned one (the shipped `LoRA`), in one run, with
//! the corpus's checks per stage.
//!
//! `cargo bench --bench tuned` (`PER_STAGE=n` prompts per stage, default 40; `ADAPTER=file.gguf`
//! measures another adapter; `MERGED=a.gguf,b.gguf` also measures models with the adapter merged
//! into their weights, as the browser build ships it (`web/build.sh`); `SEEDS=n` samples per narration prompt, default 3: one draft against
//! the best of three; `ONLY=tuned` skips the base model; `MISSES=n` lists the tuned misses and
//! why).
//!
//! Narrate: in voice (prose, no assistant/meta/script talk, no first-person narrator outside
//! quotes, the player's in the second person), grounded (names a person or place of the prompt, or
//! a thing it names: `session::voice::prompt_names`), length within 12–90 words, no repeated
//! sentence, outcome honoured (failures and blocked moves never narrated as success, judged with
//! the hand-labelled cues of `benches/data/outcomes.json`), and copying: the share of generated
//! six-word runs found verbatim in the training answers. Choices: valid against the contract, and a
//! turn that would fall back to the generic choices (nothing readable offered). NPC intent: valid,
//! an intention in the third person or in quotes.

#![expect(clippy::cast_precision_loss, reason = "counts and shares in a report")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use loreloom::llm::PromptRegistry;
use loreloom::llm::backend::{Backend, GenerateRequest, Message, Sampling};
use loreloom::llm::config::{DEFAULT_ADAPTER_FILE, DEFAULT_MODEL_FILE, default_threads};
use loreloom::llm::contract::looks_like_prose;
use loreloom::llm::llama::LlamaCppBackend;
use loreloom::session::voice::{check_narration, prompt_names};
use loreloom::tune::{Example, Shingles, read_jsonl};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Hand-labelled outcome cues: for a held-out prompt (setting, index), words
/// that would mean a failed or blocked move succeeded.
#[derive(serde::Deserialize)]
struct OutcomeLabel {
    setting: String,
    index: usize,
    /// Lower-case phrases that narrate the move as done.
    success: Vec<String>,
}

#[derive(Default)]
struct Narrate {
    n: usize,
    /// Prompts, and those whose first sample (one draft) or any sample
    /// (the best of `SEEDS` drafts) is in voice.
    prompts: usize,
    first_in_voice: usize,
    any_in_voice: usize,
    in_voice: usize,
    grounded: usize,
    length_ok: usize,
    repeats: usize,
    labelled: usize,
    honoured: usize,
    copied: usize,
    runs: usize,
    time: Duration,
    tokens_out: u64,
}

#[derive(Default)]
struct Structured {
    n: usize,
    valid: usize,
    fallback: usize,
    in_voice: usize,
    time: Duration,
}

struct Report {
    narrate: Narrate,
    choices: Structured,
    intent: Structured,
    samples: Vec<String>,
    /// Narrations out of voice or naming nothing of the prompt, and why.
    misses: Vec<String>,
}

fn pct(a: usize, b: usize) -> String {
    if b == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * a as f64 / b as f64)
    }
}

fn request(registry: &PromptRegistry, example: &Example, seed: u32) -> GenerateRequest {
    let info = registry.stage(&example.stage).expect("the stage exists");
    let mut sampling = Sampling::default();
    let o = &info.sampling;
    sampling.temperature = o.temperature.unwrap_or(sampling.temperature);
    sampling.max_tokens = o.max_tokens.unwrap_or(sampling.max_tokens);
    sampling.stop = o.stop.clone().unwrap_or_default();
    sampling.seed = seed;
    let schema = info.contract.as_ref().map(|c| {
        let text = std::fs::read_to_string(root().join("schemas").join(c)).expect("contract");
        serde_json::from_str::<Value>(&text).expect("contract JSON")
    });
    let messages: Vec<Message> = example.messages[..example.messages.len() - 1].to_vec();
    GenerateRequest {
        stage: example.stage.clone(),
        prompt_id: format!("{}@bench", example.stage),
        messages,
        sampling,
        json_schema: schema,
        cache_slot: example.stage.clone(),
    }
}

fn run(
    backend: &mut LlamaCppBackend,
    registry: &PromptRegistry,
    examples: &[&Example],
    labels: &[OutcomeLabel],
    shingles: &Shingles,
    seeds: u32,
) -> Report {
    let mut report = Report {
        narrate: Narrate::default(),
        choices: Structured::default(),
        intent: Structured::default(),
        samples: Vec::new(),
        misses: Vec::new(),
    };
    for example in examples {
        // Several samples per narration prompt show what drafts would buy;
        // the structured stages are sampled once.
        let seeds = if example.stage == "narrate" { seeds } else { 1 };
        let mut any_in_voice = false;
        for seed in 0..seeds {
            let req = request(registry, example, 11 + seed);
            let start = Instant::now();
            let out = backend.generate(&req, &mut |_| true).expect("generation");
            let sample = Sample {
                example,
                seed,
                took: start.elapsed(),
                text: out.text.trim().to_owned(),
                tokens_out: u64::from(out.usage.tokens_out),
            };
            if example.stage == "narrate" {
                let in_voice = report.count_narration(&sample, labels, shingles);
                if in_voice && !any_in_voice {
                    any_in_voice = true;
                    report.narrate.any_in_voice += 1;
                }
            } else {
                report.count_structured(&sample);
            }
        }
    }
    report
}

/// One sample of a held-out prompt: which, the reply, and what it took.
struct Sample<'a> {
    example: &'a Example,
    seed: u32,
    text: String,
    took: Duration,
    tokens_out: u64,
}

impl Sample<'_> {
    /// The prompt's last user message (the reply answers it).
    fn user(&self) -> &str {
        let messages = &self.example.messages;
        &messages[messages.len() - 2].content
    }
}

impl Report {
    /// A narration checked with the corpus's checks and counted; a miss (out of voice or
    /// naming nothing of the prompt) is noted with why. Whether it is in voice.
    fn count_narration(
        &mut self,
        sample: &Sample,
        labels: &[OutcomeLabel],
        shingles: &Shingles,
    ) -> bool {
        let Sample {
            example,
            seed,
            text,
            ..
        } = sample;
        let user = sample.user();
        let player = user.contains("\nNow: you ");
        let c = check_narration(text, player, &prompt_names(user));
        let n = &mut self.narrate;
        n.n += 1;
        n.in_voice += usize::from(c.in_voice);
        if *seed == 0 {
            n.prompts += 1;
            n.first_in_voice += usize::from(c.in_voice);
        }
        n.grounded += usize::from(c.grounded);
        if !(c.in_voice && c.grounded) {
            let why = [
                (!c.prose, "not prose"),
                (c.assistant, "assistant talk"),
                (c.first_person, "first person"),
                (player && !c.second_person, "no second person"),
                (!c.grounded, "names nothing of the prompt"),
            ]
            .iter()
            .filter(|(f, _)| *f)
            .map(|(_, w)| *w)
            .collect::<Vec<_>>()
            .join(", ");
            self.misses.push(format!(
                "[{} #{} seed {seed}] {why}: {}\n    -> {text}",
                example.setting,
                example.index,
                user.lines().rev().nth(2).unwrap_or_default()
            ));
        }
        n.length_ok += usize::from(c.length_ok);
        n.repeats += usize::from(c.repeats);
        let (found, all) = shingles.copied(text);
        n.copied += found;
        n.runs += all;
        n.time += sample.took;
        n.tokens_out += sample.tokens_out;
        if let Some(label) = labels
            .iter()
            .find(|l| l.setting == example.setting && l.index == example.index)
        {
            n.labelled += 1;
            let lower = text.to_lowercase();
            n.honoured += usize::from(!label.success.iter().any(|s| lower.contains(s)));
        }
        if self.samples.len() < 6 && *seed == 0 {
            self.samples.push(format!(
                "[{} #{}] {}\n    -> {text}",
                example.setting,
                example.index,
                user.lines().rev().nth(2).unwrap_or_default()
            ));
        }
        c.in_voice
    }

    /// A choices or NPC-intent reply counted: valid JSON, and for choices whether any is
    /// readable (else the turn falls back), for an intent whether it is in voice.
    fn count_structured(&mut self, sample: &Sample) {
        let stage = sample.example.stage.as_str();
        let s = if stage == "choices" {
            &mut self.choices
        } else {
            &mut self.intent
        };
        s.n += 1;
        s.time += sample.took;
        let value: Option<Value> = serde_json::from_str(&sample.text).ok();
        s.valid += usize::from(value.is_some());
        if stage == "choices" {
            let readable = value
                .as_ref()
                .and_then(|v| v["choices"].as_array())
                .is_some_and(|a| a.iter().filter_map(Value::as_str).any(looks_like_prose));
            s.fallback += usize::from(!readable);
        } else {
            let intention = value
                .as_ref()
                .and_then(|v| v["intention"].as_str())
                .unwrap_or_default();
            let c = check_narration(intention, false, &[]);
            s.in_voice += usize::from(c.prose && !c.assistant && !c.first_person);
        }
    }
}

fn print(label: &str, r: &Report) {
    let n = &r.narrate;
    println!(
        "{label:6} narrate n={:3}  in voice {:>4}  grounded {:>4}  length ok {:>4}  repeats {:>4}  outcome honoured {:>4} (of {})  copied 6-word runs {:>5}  {:.2} s/call  {:.0} tokens/call",
        n.n,
        pct(n.in_voice, n.n),
        pct(n.grounded, n.n),
        pct(n.length_ok, n.n),
        pct(n.repeats, n.n),
        pct(n.honoured, n.labelled),
        n.labelled,
        pct(n.copied, n.runs),
        n.time.as_secs_f64() / n.n.max(1) as f64,
        n.tokens_out as f64 / n.n.max(1) as f64,
    );
    println!(
        "{label:6} drafts  one draft in voice {:>4}, best of the samples in voice {:>4} ({} prompts)",
        pct(n.first_in_voice, n.prompts),
        pct(n.any_in_voice, n.prompts),
        n.prompts
    );
    let c = &r.choices;
    println!(
        "{label:6} choices n={:3}  valid {:>4}  generic fallback {:>4}  {:.2} s/call",
        c.n,
        pct(c.valid, c.n),
        pct(c.fallback, c.n),
        c.time.as_secs_f64() / c.n.max(1) as f64
    );
    let i = &r.intent;
    println!(
        "{label:6} intent  n={:3}  valid {:>4}  intention in voice {:>4}  {:.2} s/call",
        i.n,
        pct(i.valid, i.n),
        pct(i.in_voice, i.n),
        i.time.as_secs_f64() / i.n.max(1) as f64
    );
}

/// `MERGED=a.gguf,b.gguf`: models with the adapter merged into their weights
/// (the page's, `web/build.sh`), measured on the same prompts.
fn merged(
    threads: u32,
    registry: &PromptRegistry,
    examples: &[&Example],
    labels: &[OutcomeLabel],
    shingles: &Shingles,
    seeds: u32,
) {
    for file in std::env::var("MERGED").unwrap_or_default().split(',') {
        if file.is_empty() {
            continue;
        }
        let mut model = LlamaCppBackend::open(std::path::Path::new(file), 2048, threads, 4)
            .expect("a merged model");
        let rep = run(&mut model, registry, examples, labels, shingles, seeds);
        print(&format!("merged {file}"), &rep);
    }
}

fn main() {
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    let adapter = std::env::var_os("ADAPTER").map_or_else(
        || root().join("assets/models").join(DEFAULT_ADAPTER_FILE),
        PathBuf::from,
    );
    if !model.is_file() || !adapter.is_file() {
        eprintln!(
            "tuned: needs {} and {} (./run.sh test installs the model)",
            model.display(),
            adapter.display()
        );
        return;
    }
    // `cargo test --benches` runs this once in test mode: one prompt per
    // stage and one sample, to show it works; the figures need `cargo bench`.
    let measuring = std::env::args().any(|a| a == "--bench");
    let per_stage: usize = std::env::var("PER_STAGE")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|_| measuring)
        .unwrap_or(if measuring { 40 } else { 1 });
    let seeds: u32 = std::env::var("SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|_| measuring)
        .unwrap_or(if measuring { 3 } else { 1 });
    let threads = std::env::var("THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(default_threads);
    let registry = PromptRegistry::load(root().join("prompts")).expect("prompts");
    let heldout = read_jsonl(&root().join("training/data/heldout.jsonl")).expect("held-out split");
    let train = read_jsonl(&root().join("training/data/train.jsonl")).expect("train split");
    let shingles = Shingles::of(&train);
    let labels: Vec<OutcomeLabel> = serde_json::from_str(
        &std::fs::read_to_string(root().join("benches/data/outcomes.json"))
            .unwrap_or_else(|_| "[]".into()),
    )
    .expect("outcome labels");
    // An even spread over the held-out settings: every k-th example of each stage.
    let mut picked: Vec<&Example> = Vec::new();
    for stage in ["narrate", "choices", "npc_intent"] {
        let all: Vec<&Example> = heldout.iter().filter(|e| e.stage == stage).collect();
        let step = (all.len() / per_stage.max(1)).max(1);
        picked.extend(all.iter().step_by(step).take(per_stage));
    }
    // Labelled prompts are always measured.
    for l in labels.iter().filter(|_| measuring) {
        if let Some(e) = heldout
            .iter()
            .find(|e| e.stage == "narrate" && e.setting == l.setting && e.index == l.index)
            && !picked.iter().any(|p| std::ptr::eq(*p, e))
        {
            picked.push(e);
        }
    }
    println!(
        "held-out prompts: {} (narration prompts sampled {seeds} times), {threads} threads, adapter {}",
        picked.len(),
        adapter.display()
    );
    // `ONLY=tuned` skips the base model (quicker while tuning; the figures
    // compare both).
    let r = if std::env::var("ONLY").is_ok_and(|v| v == "tuned") {
        None
    } else {
        let mut base = LlamaCppBackend::open(&model, 2048, threads, 4).expect("the base model");
        let r = run(&mut base, &registry, &picked, &labels, &shingles, seeds);
        print("base", &r);
        Some(r)
    };
    let mut tuned = LlamaCppBackend::open_with(&model, Some(&adapter), 2048, threads, 4)
        .expect("the tuned model");
    assert!(tuned.has_adapter(), "{:?}", tuned.adapter_error());
    let t = run(&mut tuned, &registry, &picked, &labels, &shingles, seeds);
    print("tuned", &t);
    merged(threads, &registry, &picked, &labels, &shingles, seeds);
    for (label, rep) in [("base", r.as_ref()), ("tuned", Some(&t))] {
        let Some(rep) = rep else { continue };
        println!("\n{label} samples:");
        for s in &rep.samples {
            println!("  {s}");
        }
    }
    // `MISSES=N` lists the tuned model's first N misses, with the reason.
    let misses: usize = std::env::var("MISSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if misses > 0 {
        println!(
            "\ntuned misses ({} of {} narrations):",
            t.misses.len(),
            t.narrate.n
        );
        for m in t.misses.iter().take(misses) {
            println!("  {m}");
        }
    }
}
