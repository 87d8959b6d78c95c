//! `loreloom eval …`: the evaluation harness's commands (replay, play, sheet, score).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::eval::play::{PlayOptions, saves_dir};
use crate::eval::report::PlayReport;
use crate::llm::{Gateway, Script, ScriptedBackend};
use crate::session::replay::Overrides;

/// `loreloom eval …`
#[derive(clap::Subcommand, Debug)]
pub enum EvalCommand {
    /// Replay scenes of a save exactly, or with another prompt version,
    /// model or seed; says per turn what differs; exit 1 if an exact replay differs
    Replay(ReplayArgs),
    /// Play a campaign unattended (choices, typed moves and a planted share
    /// of invalid ones) and report seed 001's metrics and ours
    Play(PlayArgs),
    /// Write a blind judging sheet of narrations from several reports
    /// (sources hidden; the key kept apart in DIR/key/)
    Sheet {
        /// Report folders (or their report.json)
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
        /// How many narrations in all (the same number from each report)
        #[arg(long, default_value_t = 30)]
        count: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Rate whole turns (the player's narration and the others' after
        /// it, the engine's words included), not the player's narrations
        #[arg(long)]
        whole_turns: bool,
    },
    /// Join a filled sheet's ratings to their sources: per-source means and distributions
    Score {
        /// The sheet's folder (with ratings.tsv and key/key.json)
        dir: PathBuf,
    },
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// The save file
    save: PathBuf,
    /// The scenes to replay, `A..B` (or one scene `N`); default: every played scene
    #[arg(long, value_parser = parse_scenes)]
    scenes: Option<(i64, i64)>,
    /// Render STAGE at VERSION instead of the save's pin (repeatable); its calls go to the live model
    #[arg(long = "prompt", value_name = "STAGE=VERSION", value_parser = parse_pin)]
    prompts: Vec<(String, String)>,
    /// Answer every call with this model key (from models.ron), live
    #[arg(long)]
    model: Option<String>,
    /// Another session seed (dice, picks)
    #[arg(long)]
    seed: Option<u64>,
    /// Answer every call with the live model, even where the prompt is unchanged
    #[arg(long)]
    live: bool,
    /// Write report.json and report.md here
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// The campaign folder
    campaign: PathBuf,
    #[arg(long)]
    scenario: Option<String>,
    #[arg(long, default_value_t = 12)]
    turns: usize,
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Typed moves, one per line (then the player makes its own)
    #[arg(long)]
    moves: Option<PathBuf>,
    /// The model key for every call (from models.ron); default: the local models
    #[arg(long)]
    model: Option<String>,
    /// A reply script (JSON) answering every call instead of a model (for tests)
    #[arg(long, conflicts_with = "model")]
    model_script: Option<PathBuf>,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Every Nth move is planted invalid (0: none)
    #[arg(long, default_value_t = 4)]
    invalid_every: usize,
    /// Lore and memory by keywords and recency only (no sentence embedder)
    #[arg(long)]
    no_embedder: bool,
    /// The report folder (report.json, report.md, saves/)
    #[arg(long)]
    out: PathBuf,
    /// A report to compare with: what got worse is printed, and exit 1 if anything did
    #[arg(long)]
    baseline: Option<PathBuf>,
}

fn parse_scenes(s: &str) -> Result<(i64, i64), String> {
    let bad = || format!("`{s}`: scenes are A..B or N");
    if let Some((a, b)) = s.split_once("..") {
        return Ok((
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        ));
    }
    let n = s.trim().parse().map_err(|_| bad())?;
    Ok((n, n))
}

fn parse_pin(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .map(|(a, b)| (a.trim().to_owned(), b.trim().to_owned()))
        .filter(|(a, b)| !a.is_empty() && !b.is_empty())
        .ok_or_else(|| format!("`{s}`: a prompt override is STAGE=VERSION (narrate=v3)"))
}

pub fn run(command: EvalCommand) -> ExitCode {
    let outcome = match command {
        EvalCommand::Replay(args) => replay(&args),
        EvalCommand::Play(args) => play(&args),
        EvalCommand::Sheet {
            reports,
            out,
            count,
            seed,
            whole_turns,
        } => crate::eval::sheet::write(&reports, &out, count, seed, whole_turns)
            .map(|n| {
                println!(
                    "{n} narrations in {}: give the rater sheet.md and ratings.tsv only (the key is in key/)",
                    out.display()
                );
                ExitCode::SUCCESS
            })
            .map_err(|e| e.to_string()),
        EvalCommand::Score { dir } => score(&dir),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("{e}");
        ExitCode::from(2)
    })
}

fn replay(args: &ReplayArgs) -> Result<ExitCode, String> {
    let overrides = Overrides {
        prompts: args.prompts.iter().cloned().collect(),
        model: args.model.clone(),
        seed: args.seed,
        live: args.live,
    };
    let (first, last) = args.scenes.unwrap_or((1, i64::MAX));
    let last = if last == i64::MAX {
        crate::store::Store::open(&args.save)
            .and_then(|s| s.session())
            .map_err(|e| e.to_string())?
            .scene_index
    } else {
        last
    };
    let report = crate::eval::replay::replay(&args.save, first, last, &overrides)
        .map_err(|e| e.to_string())?;
    let md = report.markdown();
    match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let json = serde_json::to_string_pretty(&report).unwrap_or_default();
            std::fs::write(dir.join("report.json"), json)
                .and_then(|()| std::fs::write(dir.join("report.md"), &md))
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            println!(
                "{} of {} turns differ; report in {}",
                report.differing(),
                report.turns.len(),
                dir.display()
            );
        }
        None => print!("{md}"),
    }
    let exact = report.overrides.is_empty();
    Ok(if exact && report.differing() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn play(args: &PlayArgs) -> Result<ExitCode, String> {
    let gateway = Gateway::open().map_err(|e| e.to_string())?;
    let model = match &args.model_script {
        Some(file) => {
            let backend = ScriptedBackend::new(Script::read(file).map_err(|e| e.to_string())?);
            gateway.register_script("eval-script", backend);
            Some("eval-script".to_owned())
        }
        None => args.model.clone(),
    };
    let moves = match &args.moves {
        Some(f) => std::fs::read_to_string(f)
            .map_err(|e| format!("{}: {e}", f.display()))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    };
    let embedder = if args.no_embedder {
        None
    } else {
        crate::memory::default_embedder()
            .map_err(|e| eprintln!("{e}; lore and memory recall fall back to keywords"))
            .ok()
    };
    let baseline = args
        .baseline
        .as_deref()
        .map(PlayReport::read)
        .transpose()
        .map_err(|e| e.to_string())?;
    let campaign = enriched(&gateway, args, model.as_deref())?;
    let options = PlayOptions {
        campaign,
        scenario: args.scenario.clone(),
        turns: args.turns,
        runs: args.runs,
        moves,
        model,
        seed: args.seed,
        invalid_every: args.invalid_every,
        saves: saves_dir(&args.out),
        embedder,
    };
    let report = crate::eval::play::play(&gateway, &options).map_err(|e| e.to_string())?;
    report
        .write(&args.out, baseline.as_ref())
        .map_err(|e| e.to_string())?;
    print!(
        "{}",
        crate::eval::report::metrics_table(&report.metrics, baseline.as_ref().map(|b| &b.metrics))
    );
    println!("report in {} ({:.0} s)", args.out.display(), report.seconds);
    if let Some(b) = &baseline {
        let worse = crate::eval::report::worse(&report.metrics, &b.metrics);
        for w in &worse {
            println!("worse: {w}");
        }
        if !worse.is_empty() {
            return Ok(ExitCode::FAILURE);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The campaign to play: `args.campaign`, or, when it is sparse (seed 002
/// §6.2.12), a copy of it in the report folder enriched by the model first,
/// as `session new` does for a player (the original is left as it is).
fn enriched(gateway: &Gateway, args: &PlayArgs, model: Option<&str>) -> Result<PathBuf, String> {
    let sparse = crate::session::save_files::load_campaign(&args.campaign)
        .map_err(|e| e.to_string())?
        .is_sparse();
    if !sparse {
        return Ok(args.campaign.clone());
    }
    let copy = args.out.join("campaign");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).map_err(|e| format!("{}: {e}", copy.display()))?;
    }
    copy_dir(&args.campaign, &copy)
        .map_err(|e| format!("copying the campaign to {}: {e}", copy.display()))?;
    let key = model.map_or_else(|| gateway.models().large.clone(), str::to_owned);
    let seed = u32::try_from(args.seed & 0xFFFF_FFFF).unwrap_or(0);
    super::campaign::enrich_with(gateway, &copy, &key, seed, false)?;
    Ok(copy)
}

/// Copies the folder `from` (files and folders, no links) to `to`.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn score(dir: &std::path::Path) -> Result<ExitCode, String> {
    let scores = crate::eval::sheet::score(dir).map_err(|e| e.to_string())?;
    println!("| source | rated | coherence mean | 1 | 2 | 3 | 4 | 5 | in voice | grounded |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (source, s) in &scores {
        println!(
            "| {source} | {} | {:.2} | {} | {} | {} | {} | {} | {:.0}% | {:.0}% |",
            s.rated,
            s.coherence_mean,
            s.coherence[0],
            s.coherence[1],
            s.coherence[2],
            s.coherence[3],
            s.coherence[4],
            s.in_voice * 100.0,
            s.grounded * 100.0
        );
    }
    Ok(ExitCode::SUCCESS)
}
