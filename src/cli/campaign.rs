//! `loreloom campaign validate|show|enrich` and `loreloom dice`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use crate::campaign::enrich;
use crate::llm::{Gateway, Script, ScriptedBackend};

use crate::campaign::{self, system_rulesets};
use crate::rules::{Dice, Modifiers};

/// Print every finding, one per line, then the counts; exit 1 on errors.
pub(super) fn validate(dir: &Path) -> ExitCode {
    let report = campaign::validate(dir);
    println!("{report}");
    if report.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Load a campaign and print what it is made of.
pub(super) fn show(dir: &Path) -> ExitCode {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    let Some(c) = loaded else {
        println!("{report}");
        eprintln!(
            "error: {}: the campaign does not load; fix the errors above",
            dir.display()
        );
        return ExitCode::FAILURE;
    };
    println!("{}", c.summary());
    if c.is_sparse() {
        println!("sparse: fewer than 3 content files; a session enriches it first");
    }
    if let Some(s) = c.default_scenario() {
        println!("default scenario: {} ({})", s.id, s.title);
    }
    for (id, ch) in &c.characters {
        println!(
            "  {id:<28} {:?}, {}, chattiness {:.2}{}",
            ch.kind,
            ch.name,
            ch.chattiness,
            if ch.baked { ", baked" } else { "" },
        );
    }
    for (id, clock) in &c.world.clocks {
        println!("  clock {id}: {}/{}", clock.value, clock.max);
    }
    let (errors, warnings) = (report.errors().count(), report.warnings().count());
    if errors + warnings + report.notices.len() > 0 {
        println!("{report}");
    }
    ExitCode::SUCCESS
}

/// Roll a dice expression: `2d6+wits --mod wits=1 --seed 7`.
pub(super) fn dice(expr: &str, mods: &[String], seed: Option<u64>, times: u32) -> ExitCode {
    let mut modifiers = Modifiers::new();
    for m in mods {
        let Some((name, value)) = m.split_once('=') else {
            eprintln!("error: --mod wants NAME=VALUE, got `{m}`");
            return ExitCode::FAILURE;
        };
        let Ok(value) = value.trim().parse::<i64>() else {
            eprintln!("error: --mod {name}: `{value}` is not a whole number");
            return ExitCode::FAILURE;
        };
        modifiers.insert(name.trim().to_owned(), value);
    }
    let seed = seed.unwrap_or_else(rand::random);
    let mut dice = Dice::seeded(seed);
    for _ in 0..times.max(1) {
        match dice.roll_str(expr, &modifiers) {
            Ok(roll) => match serde_json::to_string(&roll) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    eprintln!("seed {seed}: the same seed gives the same rolls");
    ExitCode::SUCCESS
}

/// Options of `campaign enrich`.
#[derive(clap::Args, Debug)]
pub(super) struct EnrichArgs {
    /// The campaign folder (the one with manifest.json)
    pub dir: PathBuf,
    /// Model key (default: the large tier)
    #[arg(long, default_value = "local-large")]
    pub model: String,
    /// Seed for sampling
    #[arg(long, default_value_t = 1)]
    pub seed: u32,
    /// Answer from a reply script (the scripted backend) instead of a model
    #[arg(long)]
    pub model_script: Option<PathBuf>,
    /// Enrich even when the campaign is not sparse (human-authored files are still never touched)
    #[arg(long)]
    pub force: bool,
}

pub(super) fn enrich(args: &EnrichArgs) -> ExitCode {
    let gateway = match Gateway::open() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(file) = &args.model_script {
        match Script::read(file) {
            Ok(s) => gateway.register_script(&args.model, ScriptedBackend::new(s)),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    match enrich_with(&gateway, &args.dir, &args.model, args.seed, args.force) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Enrich `dir` if it is sparse (or `force`): one model call, then the
/// `_generated` files. Prints what it wrote; returns the paths.
pub(super) fn enrich_with(
    gateway: &Gateway,
    dir: &Path,
    model: &str,
    seed: u32,
    force: bool,
) -> Result<Vec<PathBuf>, String> {
    let c = load_or_explain(dir)?;
    if !c.is_sparse() && !force {
        println!(
            "{}: {} content files; enrichment is for campaigns with fewer than 3",
            dir.display(),
            c.content_files
        );
        return Ok(Vec::new());
    }
    println!(
        "{} is sparse ({} content files): the model ({model}) is writing people, beats, lore and rules…",
        c.manifest.title, c.content_files
    );
    let started = Instant::now();
    let outcome = gateway.call(enrich::request(&c, model, seed)).wait();
    let answer = outcome.result.map_err(|e| {
        format!(
            "{}: enrichment failed at stage `enrich`: {e}; nothing was written",
            dir.display()
        )
    })?;
    let source = enrich::Source {
        model: format!("{model} ({})", outcome.record.backend),
        prompt: outcome.record.prompt_id.clone(),
        seed,
    };
    let files =
        enrich::files(&c, &answer, &source).map_err(|e| format!("{}: {e}", dir.display()))?;
    let written = enrich::write(dir, &files).map_err(|e| format!("{}: {e}", dir.display()))?;
    for p in &written {
        println!("  wrote {}", p.strip_prefix(dir).unwrap_or(p).display());
    }
    println!(
        "enriched in {:.1} s; review or edit the `_generated` files, or rename one without the suffix to make it yours",
        started.elapsed().as_secs_f64()
    );
    // The campaign must load with what was written.
    load_or_explain(dir)?;
    Ok(written)
}

fn load_or_explain(dir: &Path) -> Result<crate::campaign::Campaign, String> {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    loaded.ok_or_else(|| {
        format!(
            "{report}\nerror: {}: the campaign has errors; `loreloom campaign validate` lists them",
            dir.display()
        )
    })
}
