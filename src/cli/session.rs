//! `loreloom session new|play`: open-ended sessions in the terminal, saved turn by turn to one SQLite file.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::llm::{Gateway, Script, ScriptedBackend};
use crate::session::controller::{Controller, Report, Step, load_campaign, unique};
use crate::session::play::{Progress, opening, run_turn};
use crate::session::turn::{Calibration, SCENE_CLOSE};
use crate::session::{Kind, player_view};
use crate::store::{NewSession, SceneKind, Store};

/// Options of `session new`.
#[derive(clap::Args, Debug)]
pub(super) struct NewArgs {
    /// The campaign folder (with manifest.json)
    campaign: PathBuf,
    /// Where to write the save (default: a new file under the data dir's saves/)
    #[arg(long)]
    save: Option<PathBuf>,
    /// The scenario to start (default: the campaign's default)
    #[arg(long)]
    scenario: Option<String>,
    /// Seed for dice and sampling (default: random)
    #[arg(long)]
    seed: Option<u64>,
    /// Model key for the small tier (rules, intents, extractors)
    #[arg(long, default_value = "local-small")]
    small: String,
    /// Model key for the large tier (the narrator)
    #[arg(long, default_value = "local-large")]
    large: String,
    /// Session zero: the tone you want, in a few words
    #[arg(long, default_value = "")]
    tone: String,
    /// Session zero: content that must never appear (repeatable)
    #[arg(long = "line")]
    lines: Vec<String>,
    /// Session zero: content kept off-screen (repeatable)
    #[arg(long = "veil")]
    veils: Vec<String>,
}

/// Options of `session play`.
#[derive(clap::Args, Debug)]
pub(super) struct PlayArgs {
    /// The save file
    save: PathBuf,
    /// Read the player's lines from FILE instead of stdin
    #[arg(long)]
    script: Option<PathBuf>,
    /// Answer every model call from a reply script (the scripted backend)
    #[arg(long)]
    model_script: Option<PathBuf>,
}

fn free_save_path(campaign_id: &str) -> PathBuf {
    let dir = crate::saves::data_dir().join("saves");
    (1..=10_000)
        .map(|n| dir.join(format!("{campaign_id}-{n}.db")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("{campaign_id}-{}.db", unique())))
}

pub(super) fn new(args: NewArgs) -> ExitCode {
    let campaign = match load_campaign(&args.campaign) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let id = args
        .campaign
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "campaign".into());
    let seed = args.seed.unwrap_or_else(rand::random);
    let calibration = Calibration {
        tone: args.tone,
        difficulty: "normal".into(),
        lines: args.lines,
        veils: args.veils,
    };
    let state = match opening(
        campaign.clone(),
        args.scenario.as_deref(),
        &args.small,
        &args.large,
        seed,
        calibration.clone(),
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}: {e}", args.campaign.display());
            return ExitCode::FAILURE;
        }
    };
    let path = args.save.unwrap_or_else(|| free_save_path(&id));
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let mut world = state.world.clone();
    let scene = std::mem::take(&mut world.scene);
    let scenario = args
        .scenario
        .clone()
        .or_else(|| campaign.default_scenario().map(|s| s.id.clone()));
    let characters = campaign
        .characters
        .values()
        .map(|c| {
            let role = if c.kind == crate::campaign::CharacterKind::Player {
                "user_persona"
            } else {
                "npc"
            };
            (c.id.clone(), role.to_owned())
        })
        .collect();
    let new = NewSession {
        id: format!("{id}-{seed:016x}"),
        campaign_id: id,
        campaign_path: args
            .campaign
            .canonicalize()
            .unwrap_or(args.campaign.clone()),
        scenario_id: scenario,
        ruleset_id: campaign.ruleset.id.clone(),
        characters,
        small_model_key: args.small,
        large_model_key: args.large,
        calibration: serde_json::to_value(&calibration).unwrap_or_default(),
        prompt_versions: serde_json::json!({}),
        seed,
        scene,
        world,
        messages: state.stream.messages.clone(),
    };
    match Store::create(&path, &new) {
        Ok(_) => {
            for m in player_view(&state.stream.messages, crate::session::turn::PERSONA, false) {
                println!("{}\n", m.content);
            }
            println!("Saved to {}", path.display());
            println!("Play it: loreloom session play {}", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(super) fn play(args: PlayArgs) -> ExitCode {
    match play_inner(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn play_inner(args: &PlayArgs) -> Result<(), String> {
    let mut ctl = Controller::open(&args.save)?;
    let info = ctl.info()?;
    let gateway = Gateway::standard()?;
    if let Some(file) = &args.model_script {
        let backend = ScriptedBackend::new(Script::load(file)?);
        gateway.register_script(&info.small_model_key, backend.clone());
        gateway.register_script(&info.large_model_key, backend);
    }
    let lines: Box<dyn Iterator<Item = String>> = match &args.script {
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            Box::new(
                text.lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
                    .into_iter(),
            )
        }
        None => Box::new(std::io::stdin().lock().lines().map_while(Result::ok)),
    };
    if let Some(request) = ctl.recap_request() {
        let outcome = gateway.call(request).wait();
        let written = outcome
            .result
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .map_err(|e| e.to_string());
        println!("Previously…\n{}\n", ctl.finish_recap(written));
    }
    if let Some(last) = ctl
        .transcript()
        .into_iter()
        .rev()
        .find(|m| m.kind == Kind::Narration)
    {
        println!("{}\n", last.content);
    }
    print_choices(&ctl.choices);
    for line in lines {
        let line = line.trim().to_owned();
        if line.is_empty() {
            continue;
        }
        println!("> {line}");
        let report = match ctl.handle(&line) {
            Step::Quit => break,
            Step::Report(report) => report,
            Step::Run(input) => {
                let mut out = std::io::stdout();
                let mut streamed = false;
                let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |p| match p {
                    Progress::Stage("narrate") if streamed => {
                        let _ = write!(out, "\n\n");
                    }
                    Progress::Token(t) => {
                        streamed = true;
                        let _ = write!(out, "{t}");
                        let _ = out.flush();
                    }
                    Progress::Stage(_) => {}
                });
                println!();
                ctl.finish(&input, result)
            }
        };
        print_report(&report, &ctl.choices);
    }
    ctl.close();
    Ok(())
}

fn print_report(report: &Report, choices: &[String]) {
    match report {
        Report::Committed { result, kind, .. } => {
            if *kind == SceneKind::Fallback {
                for m in result.messages.iter().filter(|m| m.kind == Kind::Narration) {
                    println!("{}\n", m.content);
                }
            }
            if result
                .messages
                .iter()
                .any(|m| m.kind == Kind::SceneMarker && m.content == SCENE_CLOSE)
            {
                println!("(the scene closes; what you do next opens the next one)");
            }
            for roll in &result.rolls {
                println!(
                    "  [{} {}: {:?} {:+} = {} — {}]",
                    roll.check,
                    roll.stat.as_deref().unwrap_or(""),
                    roll.roll.rolls,
                    roll.roll.modifier,
                    roll.roll.total,
                    roll.label
                );
            }
            println!();
            print_choices(choices);
        }
        Report::Question(q) => println!(
            "(a question before this happens) {q}\n(answer it, or say what you do instead)"
        ),
        Report::Failed(e) => println!(
            "(the turn did not happen: {e}. Nothing was saved. Type /retry to try again, or /fallback to go on with a simple narration.)"
        ),
        Report::NotSaved(e) => println!(
            "(the turn could not be saved: {e}. Nothing of it was kept; type /retry to play it again.)"
        ),
        Report::Rewound { to, scene_index } => {
            println!("(rewound to scene {to}; now scene {scene_index})");
        }
        Report::Note(n) => println!("({n})"),
    }
}

fn print_choices(choices: &[String]) {
    for (i, c) in choices.iter().enumerate() {
        println!("  {}. {c}", i + 1);
    }
    if !choices.is_empty() {
        println!("  (or write what you do)");
    }
}
