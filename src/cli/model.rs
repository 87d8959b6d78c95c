//! `loreloom llm`, `loreloom models` and `loreloom prompts`: try a model from the
//! terminal, see which models are installed and how to add one, list the prompts.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::llm::config::{DEFAULT_MODEL_FILE, MODELS_FILE};
use crate::llm::{CallRequest, Contract, Gateway, ModelsConfig, PromptRegistry};

/// Options of `loreloom llm`.
#[derive(clap::Args, Debug)]
pub struct LlmArgs {
    /// What to ask the model
    pub prompt: String,
    /// Model key from `loreloom models` (default: the small tier's)
    #[arg(long, short)]
    pub model: Option<String>,
    /// Constrain the reply to this JSON Schema file (grammar-constrained on llama.cpp)
    /// and validate it, with one repair and one retry like every structured stage
    #[arg(long, value_name = "FILE")]
    pub schema: Option<PathBuf>,
    /// A system message instead of the default one
    #[arg(long)]
    pub system: Option<String>,
    #[arg(long, default_value_t = 0)]
    pub seed: u32,
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// 0 samples greedily
    #[arg(long, value_name = "T")]
    pub temperature: Option<f32>,
    /// Print the whole call record (prompt, sampling, attempts, timings) as JSON at the end
    #[arg(long)]
    pub record: bool,
}

fn open_gateway() -> Result<Gateway, ExitCode> {
    Gateway::open().map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}

/// `loreloom llm "prompt"`: streams the reply to stdout, a summary to stderr.
pub fn llm(args: LlmArgs) -> ExitCode {
    let gateway = match open_gateway() {
        Ok(g) => g,
        Err(code) => return code,
    };
    let key = args.model.unwrap_or_else(|| gateway.models().small.clone());
    let mut request = CallRequest::new(
        "chat",
        key,
        serde_json::json!({"prompt": args.prompt, "system": args.system.unwrap_or_default()}),
    )
    .seed(args.seed);
    request.sampling.max_tokens = args.max_tokens;
    request.sampling.temperature = args.temperature;
    if let Some(file) = &args.schema {
        match load_schema(file) {
            Ok(contract) => request.contract = Some(contract),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    let outcome = gateway.call(request).wait_streaming(|token| {
        let _ = stdout.write_all(token.as_bytes());
        let _ = stdout.flush();
    });
    let _ = writeln!(stdout);
    drop(stdout);
    if !outcome.record.attempts.is_empty() {
        eprintln!("{}", outcome.record.summary());
    }
    if args.record {
        println!(
            "{}",
            serde_json::to_string_pretty(&outcome.record).unwrap_or_default()
        );
    }
    match outcome.result {
        Ok(value) => {
            if args.schema.is_some() {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&value).unwrap_or_default()
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn load_schema(file: &Path) -> Result<Contract, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read the schema {}: {e}", file.display()))?;
    let schema =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
    Contract::new(file.display().to_string(), schema).map_err(|e| e.to_string())
}

/// `loreloom models`: every model key, whether its model is there, and how to add one.
pub fn models(init: bool) -> ExitCode {
    let data_dir = crate::files::data_dir();
    let path = ModelsConfig::path(&data_dir);
    if init {
        if path.exists() {
            eprintln!(
                "{} already exists; edit it, or delete it to start again from the defaults",
                path.display()
            );
            return ExitCode::FAILURE;
        }
        let text = ModelsConfig::default().to_ron();
        if let Err(e) = crate::files::write_atomically(&path, text.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {} with the default models", path.display());
    }
    let config = match ModelsConfig::load(&data_dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let source = if path.exists() {
        path.display().to_string()
    } else {
        format!(
            "built-in defaults (no {} yet; `loreloom models --init` writes one to edit)",
            path.display()
        )
    };
    println!("Model keys, from {source}:\n");
    for (key, model) in &config.models {
        let mut tiers = Vec::new();
        if *key == config.small {
            tiers.push("small tier");
        }
        if *key == config.large {
            tiers.push("large tier");
        }
        let tiers = if tiers.is_empty() {
            String::new()
        } else {
            format!(" [{}]", tiers.join(", "))
        };
        println!("  {key}{tiers}");
        println!("      {}", model.backend.describe(&data_dir));
        if !model.description.is_empty() {
            println!("      {}", model.description);
        }
    }
    let models_dir = data_dir.join("models");
    let mut files: Vec<_> = std::fs::read_dir(&models_dir)
        .map(|dir| {
            dir.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    println!("\nGGUF files in {}:", models_dir.display());
    if files.is_empty() {
        println!("  none (`./run.sh play` fetches {DEFAULT_MODEL_FILE})");
    }
    for file in files {
        let size = std::fs::metadata(&file).map_or(0, |m| m.len());
        #[allow(clippy::cast_precision_loss)]
        let mb = size as f64 / 1e6;
        println!(
            "  {} ({mb:.0} MB)",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    println!(
        "\nTo add a model: put any instruct GGUF (a 1.5B–4B model at Q4_K_M writes much better prose \
         than the default) in {}, run `loreloom models --init` once, and in {MODELS_FILE} point a key \
         at it, e.g. local-large: (backend: Llama(file: \"your-model.gguf\"), compact_prompts: false, drafts: 1) \
         (compact prompts suit models under ~1B parameters, such as the default). For a server \
         (llama-server, Ollama, vLLM, a hosted API) use OpenAi(url: \"http://host:port/v1\", model: \"name\", \
         api_key_env: Some(\"VAR\")). Try it with `loreloom llm --model KEY \"Hello\"`.",
        models_dir.display()
    );
    ExitCode::SUCCESS
}

/// `loreloom prompts`: every stage, its versions, contract and variables.
pub fn prompts() -> ExitCode {
    let registry = match PromptRegistry::load(crate::files::resource_dir("prompts")) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("Prompts in {}:", registry.root().display());
    for (name, info, versions) in registry.stages() {
        println!(
            "\n{name} ({} tier) · versions {} · {}",
            match info.tier {
                crate::llm::prompts::Tier::Small => "small",
                crate::llm::prompts::Tier::Large => "large",
            },
            versions.join(", "),
            info.contract.as_deref().map_or_else(
                || "free text".to_owned(),
                |c| format!("contract schemas/{c}")
            )
        );
        println!("  {}", info.description);
        for (var, what) in &info.variables {
            println!("  - {var}: {what}");
        }
    }
    ExitCode::SUCCESS
}
