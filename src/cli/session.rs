//! `loreloom session new|play`: open-ended sessions in the terminal, saved turn by turn to one SQLite file.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use crate::campaign::{self, Campaign, system_rulesets};
use crate::llm::{Gateway, Script, ScriptedBackend};
use crate::session::play::{Progress, fallback_templates, fallback_turn, opening, run_turn};
use crate::session::turn::{Calibration, PlayerInput};
use crate::session::{Kind, player_view};
use crate::store::{NewSession, SceneKind, Store, TurnCommit};

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

fn load_campaign(dir: &Path) -> Result<Arc<Campaign>, String> {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    loaded.map(Arc::new).ok_or_else(|| {
        format!(
            "{report}\nerror: {}: the campaign has errors; `loreloom campaign validate` lists them",
            dir.display()
        )
    })
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
            let role = if c.kind == campaign::CharacterKind::Player {
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
    let mut store = Store::open(&args.save).map_err(|e| e.to_string())?;
    let info = store.session().map_err(|e| e.to_string())?;
    let campaign = load_campaign(&info.campaign_path)?;
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
    // Where the story stands: read once, then carried forward turn by turn in memory.
    let mut state = store.state(campaign.clone()).map_err(|e| e.to_string())?;
    let mut current = info.current_scene_id.clone();
    if let Some(last) = player_view(&state.stream.messages, crate::session::turn::PERSONA, false)
        .into_iter()
        .rev()
        .find(|m| m.kind == Kind::Narration)
    {
        println!("{}\n", last.content);
    }
    let mut choices: Vec<String> = store
        .last_result()
        .map_err(|e| e.to_string())?
        .and_then(|r| serde_json::from_value(r["choices"].clone()).ok())
        .unwrap_or_default();
    print_choices(&choices);
    let mut clarified = false;
    let mut last_input: Option<String> = None;
    let mut failed: Option<String> = None;
    let templates =
        std::fs::read_to_string(crate::resource_dir("prompts").join("fallback_narration.txt"))
            .map(|t| fallback_templates(&t))
            .unwrap_or_default();
    for line in lines {
        let line = line.trim().to_owned();
        if line.is_empty() {
            continue;
        }
        println!("> {line}");
        let (text, whisper_to) = match line.split_once(' ') {
            _ if line == "/quit" => break,
            _ if line == "/retry" => {
                let Some(t) = &last_input else {
                    println!("(nothing to retry)");
                    continue;
                };
                (t.clone(), None)
            }
            Some(("/rewind", n)) => {
                let Ok(n) = n.trim().parse::<i64>() else {
                    println!("(/rewind N: N is a scene number)");
                    continue;
                };
                match store.rewind(n, &format!("rewind-{}", unique())) {
                    Ok(c) => {
                        println!("(rewound to scene {n}; now scene {})", c.scene_index);
                        // Another branch: the state comes from the save again.
                        state = store.state(campaign.clone()).map_err(|e| e.to_string())?;
                        current = c.scene_id;
                    }
                    Err(e) => println!("(cannot rewind: {e})"),
                }
                choices.clear();
                continue;
            }
            Some(("/whisper", rest)) => {
                let Some((npc, text)) = rest.trim().split_once(' ') else {
                    println!("(/whisper NPC what you say)");
                    continue;
                };
                (text.to_owned(), Some(npc.to_owned()))
            }
            _ if line == "/fallback" => {
                let Some(text) = failed.take() else {
                    println!("(nothing failed; /fallback continues after a failed turn)");
                    continue;
                };
                let input = PlayerInput {
                    text,
                    whisper_to: None,
                    action_id: format!("action-{}", unique()),
                    clarified: true,
                };
                let r = fallback_turn(&state, &input, &templates);
                let commit = TurnCommit::from_result(&r, &input, &current, SceneKind::Fallback);
                match store.commit_turn(&commit) {
                    Ok(c) => {
                        state.advance(&r);
                        current = c.scene_id;
                        for m in r.messages.iter().filter(|m| m.kind == Kind::Narration) {
                            println!("{}\n", m.content);
                        }
                        choices.clear();
                    }
                    Err(e) => println!("(the turn could not be saved: {e})"),
                }
                continue;
            }
            _ if line.starts_with('/') => {
                println!("(commands: /retry, /fallback, /rewind N, /whisper NPC text, /quit)");
                continue;
            }
            _ => match line.parse::<usize>() {
                Ok(n) if n >= 1 && n <= choices.len() => (choices[n - 1].clone(), None),
                Ok(_) => {
                    println!("(choose 1 to {}, or write what you do)", choices.len());
                    continue;
                }
                Err(_) => (line.clone(), None),
            },
        };
        last_input = Some(text.clone());
        let input = PlayerInput {
            text,
            whisper_to,
            action_id: format!("action-{}", unique()),
            clarified,
        };
        let mut out = std::io::stdout();
        let mut streamed = false;
        let result = run_turn(&gateway, state.clone(), input.clone(), |p| match p {
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
        match result {
            Ok(r) if r.clarification.is_some() => {
                println!(
                    "(a question before this happens) {}\n(answer it, or say what you do instead)",
                    r.clarification.unwrap_or_default()
                );
                clarified = true;
            }
            Ok(r) => {
                clarified = false;
                for roll in &r.rolls {
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
                let commit = TurnCommit::from_result(&r, &input, &current, SceneKind::Play);
                match store.commit_turn(&commit) {
                    Ok(c) => {
                        state.advance(&r);
                        current = c.scene_id;
                        choices.clone_from(&r.choices);
                        println!();
                        print_choices(&choices);
                    }
                    Err(e) => {
                        println!(
                            "(the turn could not be saved: {e}. Nothing of it was kept; type /retry to play it again.)"
                        );
                        // Another process may have moved the save on: start again from it.
                        state = store.state(campaign.clone()).map_err(|e| e.to_string())?;
                        current = store.session().map_err(|e| e.to_string())?.current_scene_id;
                    }
                }
            }
            Err(e) => {
                println!(
                    "(the turn did not happen: {e}. Nothing was saved. Type /retry to try again, or /fallback to go on with a simple narration.)"
                );
                failed.clone_from(&last_input);
            }
        }
    }
    Ok(())
}

fn print_choices(choices: &[String]) {
    for (i, c) in choices.iter().enumerate() {
        println!("  {}. {c}", i + 1);
    }
    if !choices.is_empty() {
        println!("  (or write what you do)");
    }
}

fn unique() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{now:x}-{:x}", rand::random::<u32>())
}
