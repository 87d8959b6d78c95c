//! `loreloom tune render`: the corpus (settings and authoring chains) rendered into training chats.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::llm::prompts::PromptRegistry;
use crate::tune::{self as corpus, Example, Split};

#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// The folder of setting files
    #[arg(long, default_value = "training/settings")]
    settings: PathBuf,
    /// The folder of authoring chains (DREAM, BRAINSTORM, SEED)
    #[arg(long, default_value = "training/authoring")]
    authoring: PathBuf,
    /// Which settings are held out of training (JSON: {"heldout": [ids]})
    #[arg(long, default_value = "training/split.json")]
    split: PathBuf,
    /// Where train.jsonl and heldout.jsonl go
    #[arg(long, default_value = "training/data")]
    out: PathBuf,
}

fn write_jsonl(path: &std::path::Path, examples: &[&Example]) -> Result<(), String> {
    let mut text = String::new();
    for e in examples {
        text.push_str(&serde_json::to_string(e).map_err(|e| e.to_string())?);
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn render(args: &RenderArgs) -> ExitCode {
    match try_render(args) {
        Ok(summary) => {
            print!("{summary}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("loreloom: {message}");
            ExitCode::FAILURE
        }
    }
}

fn try_render(args: &RenderArgs) -> Result<String, String> {
    let settings = corpus::load_settings(&args.settings).map_err(|e| e.to_string())?;
    let split: Split = serde_json::from_str(
        &std::fs::read_to_string(&args.split)
            .map_err(|e| format!("{}: {e}", args.split.display()))?,
    )
    .map_err(|e| format!("{}: {e}", args.split.display()))?;
    let chains = corpus::load_chains(&args.authoring).map_err(|e| e.to_string())?;
    for id in &split.heldout {
        if !settings.iter().any(|s| &s.id == id) && !chains.iter().any(|c| &c.id == id) {
            return Err(format!(
                "{}: held-out `{id}` is neither a setting in {} nor a chain in {}",
                args.split.display(),
                args.settings.display(),
                args.authoring.display()
            ));
        }
    }
    let registry =
        PromptRegistry::load(crate::files::resource_dir("prompts")).map_err(|e| e.to_string())?;
    let rulesets = vec![crate::files::resource_dir("campaigns/rulesets")];
    let mut examples =
        corpus::render(&settings, &registry, &rulesets).map_err(|e| e.to_string())?;
    examples.extend(corpus::render_chains(&chains, &registry).map_err(|e| e.to_string())?);
    let (heldout, train): (Vec<&Example>, Vec<&Example>) = examples
        .iter()
        .partition(|e| split.heldout.contains(&e.setting));
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    write_jsonl(&args.out.join("train.jsonl"), &train)?;
    write_jsonl(&args.out.join("heldout.jsonl"), &heldout)?;
    Ok(format!(
        "{} settings and {} authoring chains ({} held out) -> {}\n{}",
        settings.len(),
        chains.len(),
        split.heldout.len(),
        args.out.display(),
        corpus::summary(&train, &heldout)
    ))
}
