//! `loreloom session new|play`: open-ended terminal sessions, saved each turn to one SQLite file.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use crate::llm::{Gateway, Script, ScriptedBackend};
use crate::session::controller::{Controller, Report, Step};
use crate::session::play::{Progress, run_turn};
use crate::session::remember::Difficulty;
use crate::session::save_files::{NewSave, create_save, load_campaign};
use crate::session::turn::Calibration;
use crate::store::SceneKind;
use crate::transcript::marker::SceneMarker;
use crate::transcript::{Kind, player_view};

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
    /// Session zero: gentle, standard or hard
    #[arg(long, default_value = "standard", value_parser = ["gentle", "standard", "hard"])]
    difficulty: String,
    /// At most this many NPCs act in one turn (default: the campaign's, else 2); fewer is faster
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=16))]
    npcs_per_turn: Option<u32>,
    /// Session zero: content that must never appear (repeatable)
    #[arg(long = "line")]
    lines: Vec<String>,
    /// Session zero: content kept off-screen (repeatable)
    #[arg(long = "veil")]
    veils: Vec<String>,
    /// Play the new session at once (in the terminal, or with --window in the window)
    #[arg(long)]
    play: bool,
    /// With --play: in the game window
    #[arg(long, requires = "play")]
    window: bool,
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
    /// Play in the game window instead of the terminal
    #[arg(long)]
    window: bool,
    /// With --window and --script: save a screenshot when the script is done, then quit
    #[arg(long, value_name = "FILE", requires = "window")]
    screenshot: Option<PathBuf>,
    /// With --window and --script: quit when the script is done
    #[arg(long, requires = "window")]
    exit: bool,
    /// With --model-script: pause MS milliseconds between the scripted
    /// model's words, so narration streams as a real model's does
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 0,
        requires = "model_script"
    )]
    model_pace: u64,
    /// With --window: write measurements (first screen, frame times while a
    /// turn streams and types out, memory, turns) as JSON to FILE at exit
    #[arg(long, value_name = "FILE", requires = "window")]
    measure: Option<PathBuf>,
    /// With --window and --script: read each turn at the text speed of the
    /// settings, page by page, before the next line (else it shows at once)
    #[arg(long, requires = "script")]
    read_along: bool,
    /// Window size in logical pixels
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = super::parse_size)]
    size: (u32, u32),
    /// With --window: panels to open at start (debug: the F12 overlay with the last turn's timeline)
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PANEL,...",
        requires = "window"
    )]
    show: Vec<super::Panel>,
}

pub(super) fn new(args: NewArgs) -> ExitCode {
    let mut calibration = Calibration {
        tone: args.tone,
        difficulty: args.difficulty,
        lines: args.lines,
        veils: args.veils,
        npcs_per_turn: args.npcs_per_turn,
    };
    let asked =
        calibration.tone.is_empty() && calibration.lines.is_empty() && calibration.veils.is_empty();
    if asked && std::io::stdin().is_terminal() {
        match load_campaign(&args.campaign) {
            Ok(c) => session_zero(&c, &mut calibration),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    // Seed 002 §6.2.12: a sparse campaign is enriched before its first session.
    if load_campaign(&args.campaign).is_ok_and(|c| c.is_sparse()) {
        let enriched = Gateway::open().map_err(|e| e.to_string()).and_then(|g| {
            super::campaign::enrich_with(
                &g,
                &args.campaign,
                &args.large,
                u32::try_from(args.seed.unwrap_or(1) & 0xFFFF_FFFF).unwrap_or(1),
                false,
            )
        });
        if let Err(e) = enriched {
            eprintln!("error: {e}");
            eprintln!(
                "The campaign is too sparse to play without enrichment; `./run.sh play` installs the default model."
            );
            return ExitCode::FAILURE;
        }
    }
    let new = NewSave {
        campaign: args.campaign.clone(),
        save: args.save,
        scenario: args.scenario,
        seed: args.seed,
        small_model: args.small,
        large_model: args.large,
        calibration,
    };
    match create_save(&new) {
        Ok((path, state)) => {
            for m in player_view(&state.stream.messages, crate::session::turn::PERSONA, false) {
                println!("{}\n", m.content);
            }
            println!("Saved to {}", path.display());
            if !args.play {
                println!("Play it: loreloom session play {}", path.display());
                return ExitCode::SUCCESS;
            }
            play(PlayArgs {
                save: path,
                script: None,
                model_script: None,
                window: args.window,
                screenshot: None,
                exit: false,
                model_pace: 0,
                measure: None,
                read_along: false,
                size: (1280, 720),
                show: Vec::new(),
            })
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Session zero in the terminal: tone, difficulty, and a line or veil for each of the campaign's content warnings.
fn session_zero(campaign: &crate::campaign::Campaign, calibration: &mut Calibration) {
    let stdin = std::io::stdin();
    let ask = |question: &str| -> String {
        print!("{question} ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = stdin.lock().read_line(&mut answer);
        answer.trim().to_owned()
    };
    println!("Session zero: {}", campaign.manifest.title);
    calibration.tone = ask("What tone would you like (a few words, Enter for the campaign's own)?");
    let difficulty = ask("Difficulty: gentle, standard or hard [standard]?");
    calibration.difficulty = match difficulty.as_str() {
        "gentle" | "hard" => difficulty,
        _ => "standard".into(),
    };
    for warning in &campaign.manifest.content_warnings {
        match ask(&format!(
            "`{warning}`: fine, veil (off-screen) or line (never) [fine]?"
        ))
        .as_str()
        {
            "line" | "l" => calibration.lines.push(warning.clone()),
            "veil" | "v" => calibration.veils.push(warning.clone()),
            _ => {}
        }
    }
    let more = ask("Anything else that must never appear (comma-separated, Enter for none)?");
    calibration.lines.extend(
        more.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
}

pub(super) fn play(args: PlayArgs) -> ExitCode {
    if args.window {
        #[cfg(feature = "gui")]
        return super::session_window(
            crate::ui::SessionLaunch {
                save: args.save,
                script: args.script,
                model_script: args.model_script,
                screenshot: args.screenshot,
                exit: args.exit,
                model_pace_ms: args.model_pace,
                read_along: args.read_along,
            },
            args.measure,
            args.size,
            super::start_panels(&args.show),
        );
        #[cfg(not(feature = "gui"))]
        eprintln!(
            "this Loreloom was built without the window (feature `gui`); playing in the terminal"
        );
    }
    match play_inner(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A campaign's skills that wait for approval (#43): asked about one by
/// one when the player is at the terminal, else named with the command
/// that approves them; what is approved joins the session.
fn approve_waiting(ctl: &mut Controller, campaign: &std::path::Path, interactive: bool) {
    let waiting = ctl.state.skills.found.waiting.clone();
    if waiting.is_empty() {
        return;
    }
    let mut approved = false;
    for w in &waiting {
        if interactive {
            match super::skills::ask(w, false) {
                Ok(yes) => approved |= yes,
                Err(e) => eprintln!("{e}"),
            }
        } else {
            eprintln!(
                "note: this campaign's skill `{}` stays off until you approve it: `loreloom skills approve {} --dir {}`",
                w.skill.manifest.name,
                w.skill.manifest.name,
                campaign.join("skills").display()
            );
        }
    }
    if approved {
        ctl.state.skills = ctl.state.skills.refreshed(crate::skills::discover(
            &crate::session::skills::skill_dirs(campaign),
        ));
    }
}

fn play_inner(args: &PlayArgs) -> Result<(), String> {
    let mut ctl = Controller::open(&args.save).map_err(|e| e.to_string())?;
    let info = ctl.info().map_err(|e| e.to_string())?;
    for change in &ctl.prompt_changes {
        eprintln!("note: {change}");
    }
    approve_waiting(&mut ctl, &info.campaign_path, args.script.is_none());
    let gateway = Gateway::open().map_err(|e| e.to_string())?;
    if let Some(file) = &args.model_script {
        let backend = ScriptedBackend::new(Script::read(file).map_err(|e| e.to_string())?);
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
    print_choices(&ctl.choices, &ctl.choice_marks);
    // #21: the next turn's prompts are read into the model while the player reads.
    crate::session::play::prime(&gateway, &ctl.state);
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
        print_report(&report, &ctl.choices, &ctl.choice_marks);
        // Seed 004 stream summarisation: old turns are compressed between turns.
        if matches!(report, Report::Committed { .. }) {
            ctl.compress_with(&gateway);
        }
        if matches!(
            report,
            Report::Committed { .. } | Report::Rewound { .. } | Report::Loaded { .. }
        ) {
            crate::session::play::prime(&gateway, &ctl.state);
        }
    }
    ctl.close();
    Ok(())
}

/// What the turn's skills did (#25): each tool's end and summary, assets
/// kept, and seed 002's fallback line when every plan failed.
fn print_skills(result: &crate::session::turn::TurnResult) {
    for run in result.skills.iter().filter_map(|a| a.run.as_ref()) {
        for tool in &run.result.tool_results {
            let why = tool.error.as_ref().map(|f| f.message.as_str());
            let said = tool.summary().or(why).unwrap_or_default();
            // No timing: a transcript reads the same on every run.
            println!("  [{} {}: {said}]", tool.skill, tool.state.words());
        }
        for asset in &run.assets {
            println!("  [{} kept: {}]", asset.stored.kind, asset.stored.file);
        }
    }
    if let Some(fallback) = &result.skill_fallback {
        println!("  [the skills failed; {fallback}]");
    }
}

fn print_report(report: &Report, choices: &[String], marks: &[Option<Difficulty>]) {
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
                .any(|m| SceneMarker::of(m) == Some(SceneMarker::Close))
            {
                println!("(the scene closes; what you do next opens the next one)");
            }
            for notice in result
                .messages
                .iter()
                .filter_map(crate::transcript::marker::Notice::of)
            {
                match notice {
                    crate::transcript::marker::Notice::World(t) => println!("  [the world: {t}]"),
                    crate::transcript::marker::Notice::Blocked(t) => {
                        println!("  [you cannot: {t}]");
                    }
                }
            }
            for roll in &result.rolls {
                // The player's own roll plainly; an NPC's and a resisting roll say whose.
                let whose = match (&roll.against, roll.actor.as_str()) {
                    (Some(npc), _) => format!("resisting {npc}: "),
                    (None, crate::campaign::PLAYER) => String::new(),
                    (None, npc) => format!("{npc}: "),
                };
                println!(
                    "  [{whose}{} {}: {:?} {:+} = {} — {}]",
                    roll.check,
                    roll.stat.as_deref().unwrap_or(""),
                    roll.roll.rolls,
                    roll.roll.modifier,
                    roll.roll.total,
                    roll.label
                );
            }
            print_skills(result);
            println!();
            print_choices(choices, marks);
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
        Report::Loaded { slot, scene_index } => {
            println!(
                "(loaded save slot {}; now scene {scene_index}, a new branch: what was played since stays saved)",
                slot.trim_start_matches("slot-")
            );
        }
        Report::Saved(kept) => println!("({})", crate::session::controller::saved_words(kept)),
        Report::Note(n) => println!("({n})"),
    }
}

fn print_choices(choices: &[String], marks: &[Option<Difficulty>]) {
    for (i, c) in choices.iter().enumerate() {
        match marks.get(i).and_then(Option::as_ref) {
            Some(mark) => println!("  {}. {c}  ({mark})", i + 1),
            None => println!("  {}. {c}", i + 1),
        }
    }
    if !choices.is_empty() {
        println!("  (or write what you do)");
    }
}

pub(super) fn replay(save: &std::path::Path, scene: i64) -> ExitCode {
    match crate::session::replay::replay(save, scene) {
        Ok(r) if r.differences.is_empty() => {
            println!(
                "scene {}: replayed identically ({} model calls, {} dice rolls)",
                r.scene_index, r.model_calls, r.dice
            );
            ExitCode::SUCCESS
        }
        Ok(r) => {
            println!("scene {}: the replay differs:", r.scene_index);
            for d in &r.differences {
                println!("  {d}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
