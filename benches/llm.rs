//! Model benchmark (a bench binary printing figures and ratios): llama.cpp in-process
//! vs llama-server over HTTP, threads, grammar cost, and prompt-prefix reuse.
//!
//! Targets (issue #4): with a 1,500-token prefix already evaluated, a call that adds
//! fewer than 100 tokens reaches its first token in under 300 ms; in-process
//! generation is at least as fast as llama-server on the same model and threads.
//! Needs the default model (`./run.sh test` installs it) and, for the server
//! figures, `LORELOOM_LLAMA_SERVER` (also set up by `./run.sh test`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use loreloom::llm::PromptRegistry;
use loreloom::llm::backend::{Backend, GenerateRequest, Generated, Sampling};
use loreloom::llm::config::DEFAULT_MODEL_FILE;
use loreloom::llm::llama::LlamaCppBackend;
use loreloom::llm::openai::OpenAiBackend;
use serde_json::json;

const PREFIX_TOKENS: usize = 1500;
const GENERATE: u32 = 128;
const RUNS: usize = 3;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Story prose from the bundled campaign: world context of realistic text.
fn lore() -> Vec<String> {
    let package = loreloom::story::open(&root().join("campaigns/the-glass-orchard"))
        .expect("the bundled story opens");
    let story = &package.story;
    story
        .passages()
        .map(|p| story.passage(p).prose.clone())
        .collect()
}

/// A request through the real `chat` prompt: `system` = world context, `prompt` = a passage.
fn request(prompts: &PromptRegistry, context: &str, question: &str, seed: u32) -> GenerateRequest {
    let rendered = prompts
        .render(
            "chat",
            None,
            &json!({"system": context, "prompt": question}),
        )
        .expect("the chat prompt renders");
    GenerateRequest {
        stage: "bench".into(),
        prompt_id: rendered.id(),
        messages: rendered.messages,
        sampling: Sampling {
            temperature: 0.7,
            max_tokens: GENERATE,
            seed,
            ..Sampling::default()
        },
        json_schema: None,
        cache_slot: "bench".into(),
    }
}

/// Generation speed after the first token.
fn gen_rate(g: &Generated) -> f64 {
    let secs = g
        .usage
        .total
        .saturating_sub(g.usage.time_to_first_token)
        .as_secs_f64();
    f64::from(g.usage.tokens_out.saturating_sub(1)) / secs.max(1e-9)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(bin: &Path, model: &Path, threads: u32) -> (Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(bin)
        .arg("-m")
        .arg(model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "4096", "-t", &threads.to_string(), "-np", "1"])
        .args(["--no-webui", "--log-disable"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_mins(2);
    while !ureq::get(format!("http://127.0.0.1:{port}/health"))
        .call()
        .is_ok_and(|r| r.status() == 200)
    {
        assert!(Instant::now() < deadline, "llama-server did not start");
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, format!("http://127.0.0.1:{port}/v1"))
}

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let model = loreloom::files::data_dir()
        .join("models")
        .join(DEFAULT_MODEL_FILE);
    assert!(
        model.is_file(),
        "the default model is missing at {}: run ./run.sh test first",
        model.display()
    );
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let passages = lore();
    println!("model: {}", model.display());
    let (context, openings) = material(&model, &passages);
    let tail: Vec<&String> = openings.iter().take(RUNS * 2).collect();
    assert!(
        tail.len() > RUNS,
        "the story has short passages to ask about"
    );
    let (threads, best_rate) = fastest_threads(&model, &prompts, &tail);
    let mut llama = LlamaCppBackend::open(&model, 4096, threads, 4).unwrap();
    let prompt_rate = prefix_reuse(&mut llama, &prompts, &context, &tail);
    grammar_cost(&mut llama, &prompts, &tail);

    // Step 4: the same work through llama-server (OpenAI-compatible HTTP, streaming).
    let Some(bin) = std::env::var_os("LORELOOM_LLAMA_SERVER").map(PathBuf::from) else {
        println!("llama-server: skipped (set LORELOOM_LLAMA_SERVER; ./run.sh test builds it)");
        return;
    };
    let (_server, url) = start_server(&bin, &model, threads);
    let mut http = OpenAiBackend::new(&url, "default", None, Duration::from_mins(2), 1).unwrap();
    let server_rates: Vec<f64> = (0..RUNS)
        .map(|i| {
            let r = request(&prompts, "", tail[i], u32::try_from(i).unwrap_or(0));
            gen_rate(&http.generate(&r, &mut |_| true).unwrap())
        })
        .collect();
    let server_rate = median(server_rates);
    let mut server_prompt = Vec::new();
    let mut server_warm = Vec::new();
    for i in 0..RUNS {
        // A prefix the server has not seen: vary its first passage.
        let fresh = format!("{}\n\n{context}", passages[i % passages.len()]);
        let mut r = request(&prompts, &fresh, tail[i], 1);
        r.sampling.max_tokens = 1;
        let g = http.generate(&r, &mut |_| true).unwrap();
        server_prompt
            .push(f64::from(g.usage.tokens_in) / g.usage.time_to_first_token.as_secs_f64());
        let mut r = request(&prompts, &fresh, tail[i + 1], 1);
        r.sampling.max_tokens = 1;
        server_warm.push(ms(http
            .generate(&r, &mut |_| true)
            .unwrap()
            .usage
            .time_to_first_token));
    }
    let server_prompt = median(server_prompt);
    println!(
        "llama-server, {threads} thread(s): generation {server_rate:.1} tok/s, prompt {server_prompt:.0} tok/s, warm first token {:.0} ms (HTTP included)",
        median(server_warm)
    );
    println!(
        "in-process / server: generation {:.2}x, prompt {:.2}x",
        best_rate / server_rate,
        prompt_rate / server_prompt
    );
}

/// A 1,500-token world context, and short questions (< 100 tokens) to ask after it.
fn material(model: &Path, passages: &[String]) -> (String, Vec<String>) {
    let probe = LlamaCppBackend::open(model, 4096, 1, 4).unwrap();
    let mut context = String::new();
    for p in passages.iter().cycle() {
        if probe.tokenize(&context).len() >= PREFIX_TOKENS {
            break;
        }
        context.push_str(p);
        context.push_str("\n\n");
    }
    // Short questions: the opening of each passage, cut at a word boundary (< 100 tokens).
    let openings: Vec<String> = passages
        .iter()
        .map(|p| {
            let cut = p
                .char_indices()
                .take_while(|(i, _)| *i < 240)
                .filter(|(_, c)| c.is_whitespace())
                .last()
                .map_or(p.len(), |(i, _)| i);
            p[..cut].to_string()
        })
        .filter(|p| !p.is_empty())
        .collect();
    (context, openings)
}

/// Step 1, threads: generation speed with 1 and 2 inference threads; the
/// fastest thread count and its rate.
fn fastest_threads(model: &Path, prompts: &PromptRegistry, tail: &[&String]) -> (u32, f64) {
    let mut best = (1, 0.0);
    for threads in [1u32, 2] {
        let mut llama = LlamaCppBackend::open(model, 4096, threads, 4).unwrap();
        let rates: Vec<f64> = (0..RUNS)
            .map(|i| {
                let r = request(prompts, "", tail[i], u32::try_from(i).unwrap_or(0));
                gen_rate(&llama.generate(&r, &mut |_| true).unwrap())
            })
            .collect();
        let rate = median(rates);
        println!("in-process generation, {threads} thread(s): {rate:.1} tok/s");
        if rate > best.1 {
            best = (threads, rate);
        }
    }
    println!("fastest thread count here: {}", best.0);
    best
}

/// Step 2, prefix reuse: cold (everything evaluated) vs warm (only the
/// suffix); the in-process prompt evaluation rate.
fn prefix_reuse(
    llama: &mut LlamaCppBackend,
    prompts: &PromptRegistry,
    context: &str,
    tail: &[&String],
) -> f64 {
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    let mut prompt_rate = Vec::new();
    let mut suffix_tokens = 0;
    for i in 0..RUNS {
        llama.clear_caches();
        let mut r = request(prompts, context, tail[i], 1);
        r.sampling.max_tokens = 1;
        let g = llama.generate(&r, &mut |_| true).unwrap();
        cold.push(ms(g.usage.time_to_first_token));
        prompt_rate.push(f64::from(g.usage.tokens_in) / g.usage.time_to_first_token.as_secs_f64());
        let mut r = request(prompts, context, tail[i + 1], 1);
        r.sampling.max_tokens = 1;
        let g = llama.generate(&r, &mut |_| true).unwrap();
        suffix_tokens = g.usage.tokens_in - g.usage.cached_tokens;
        warm.push(ms(g.usage.time_to_first_token));
    }
    let (cold, warm) = (median(cold), median(warm));
    let prompt_rate = median(prompt_rate);
    println!(
        "prompt evaluation in-process: {prompt_rate:.0} tok/s (cold {PREFIX_TOKENS}-token prefix)"
    );
    println!(
        "time to first token, {PREFIX_TOKENS}-token prefix + {suffix_tokens}-token suffix: cold {cold:.0} ms, warm {warm:.0} ms, ratio {:.1}x; target warm < 300 ms: {}",
        cold / warm,
        if warm < 300.0 { "PASS" } else { "FAIL" }
    );
    prompt_rate
}

/// Step 3, grammar: constrained generation vs free.
fn grammar_cost(llama: &mut LlamaCppBackend, prompts: &PromptRegistry, tail: &[&String]) {
    let schema = json!({
        "type": "object", "additionalProperties": false, "required": ["action_text", "intent_tags"],
        "properties": {
            "action_text": {"type": "string", "minLength": 1, "maxLength": 400},
            "intent_tags": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 32}}
        }
    });
    let mut free = Vec::new();
    let mut constrained = Vec::new();
    for (i, passage) in tail.iter().take(RUNS).enumerate() {
        let seed = u32::try_from(i).unwrap_or(0);
        free.push(gen_rate(
            &llama
                .generate(&request(prompts, "", passage, seed), &mut |_| true)
                .unwrap(),
        ));
        let mut r = request(prompts, "", passage, seed);
        r.json_schema = Some(schema.clone());
        r.cache_slot = "json".into();
        constrained.push(gen_rate(&llama.generate(&r, &mut |_| true).unwrap()));
    }
    let (free, constrained) = (median(free), median(constrained));
    println!(
        "grammar-constrained generation: {constrained:.1} tok/s vs free {free:.1} tok/s (ratio {:.2})",
        constrained / free
    );
}
