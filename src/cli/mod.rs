//! The `loreloom` command line: play, validate and count stories.

#[cfg(feature = "store")]
mod author;
mod campaign;
mod check;
#[cfg(all(feature = "store", not(target_family = "wasm")))]
mod eval;
mod model;
#[cfg(feature = "store")]
mod session;
mod skills;
mod terminal;
#[cfg(feature = "tune")]
mod tune;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The story the play command opens when given no path.
pub const DEFAULT_STORY: &str = "campaigns/the-glass-orchard";

/// Loreloom plays interactive fiction: authored story graphs (Loreloom story
/// packages or `questfoundry-runtime` exports) and open-ended sessions played
/// turn by turn with a local model.
///
/// A story PATH is a story package folder, its story.json, or a
/// questfoundry-runtime .json file.
#[derive(Parser, Debug)]
#[command(
    name = "loreloom",
    version,
    after_help = "Examples:\n  loreloom play --headless\n  loreloom play --headless campaigns/the-glass-orchard --choices 1,2,1\n  loreloom validate my-story/\n  loreloom stats story.json --json\n  loreloom llm \"Describe a haunted ferry.\" --max-tokens 80\n  loreloom models"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Play a story (default: the bundled one)
    Play {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: Option<PathBuf>,
        /// Play in the terminal: numbered choices, one per line on stdin;
        /// also `:undo [N]`, `:codex`, `:state`, `:why`, `:save FILE`, `:load FILE`, `:quit`.
        #[arg(long)]
        headless: bool,
        /// Play these choice numbers (comma-separated) instead of reading stdin;
        /// exits 2 if they run out before an ending.
        #[arg(
            long,
            value_delimiter = ',',
            value_name = "N,N,...",
            requires = "headless"
        )]
        choices: Option<Vec<usize>>,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// Preview a story as its author: the window with a sidebar to jump to any
    /// passage, toggle codewords, and see every tier, picture and problem
    Preview {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// Check a story: errors (exit 1) and warnings, one per line
    Validate {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
    },
    /// Export a story (a project, package, story.json or questfoundry-runtime
    /// file) to another format; a story with validation errors is refused
    Ship {
        /// Authoring project, story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
        #[arg(long, value_enum)]
        format: crate::ship::Format,
        /// The folder to write into (default: DIR/exports/ship for a project, else ./shipped)
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Count passages, choices, endings, codewords and what is reachable
    Stats {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Ask a model something and stream its reply (try a backend or a schema)
    Llm(model::LlmArgs),
    /// List model keys, which models are installed, and how to add one
    Models {
        /// Write the default models.ron to the data dir, to edit
        #[arg(long)]
        init: bool,
    },
    /// List the prompt stages, their versions, contracts and variables
    Prompts,
    /// Check or inspect an open-ended campaign folder
    #[command(subcommand)]
    Campaign(CampaignCommand),
    /// Start or continue an open-ended session in the terminal
    #[cfg(feature = "store")]
    #[command(subcommand)]
    Session(SessionCommand),
    /// The evaluation harness (seed 001): replay ranges with overrides, play unattended, blind sheets
    #[cfg(all(feature = "store", not(target_family = "wasm")))]
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Make a story graph: DREAM → BRAINSTORM → SEED → GROW with a human gate after each stage
    #[cfg(feature = "store")]
    #[command(subcommand)]
    Author(author::AuthorCommand),
    /// The fine-tuning corpus: render `training/settings` into the chats the model is tuned on
    #[cfg(feature = "tune")]
    #[command(subcommand)]
    Tune(TuneCommand),
    /// Skills: external programs a turn can call (list, check, run one)
    #[command(subcommand)]
    Skills(skills::SkillsCommand),
    /// Runs a skill script confined (used by the skill invoker, not by hand)
    #[command(name = "__skill-sandbox", hide = true)]
    SkillSandbox {
        /// A cgroup to join (the supervisor; repeatable)
        #[arg(long)]
        cgroup: Vec<PathBuf>,
        #[arg(long)]
        read: Vec<PathBuf>,
        #[arg(long)]
        write: Vec<PathBuf>,
        #[arg(long, default_value_t = 30)]
        cpu: u64,
        #[arg(long, default_value_t = 1 << 30)]
        address_space: u64,
        #[arg(long, default_value_t = 64 << 20)]
        file_size: u64,
        #[arg(long, default_value_t = 64)]
        processes: u64,
        /// A campaign's skill: refuse to run unless fully confined
        #[arg(long)]
        untrusted: bool,
        /// The confined stage (started by the supervisor)
        #[arg(long)]
        inner: bool,
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// Roll dice: `2d6+3`, `1d20+wits --mod wits=2`; prints each roll as JSON
    Dice {
        /// `NdM` terms, constants and named modifiers joined by + and -
        expr: String,
        /// A named modifier's value, NAME=VALUE (repeatable)
        #[arg(long = "mod", value_name = "NAME=VALUE")]
        mods: Vec<String>,
        /// Seed the dice (the same seed gives the same rolls); random if omitted
        #[arg(long)]
        seed: Option<u64>,
        /// Roll this many times
        #[arg(long, default_value_t = 1)]
        times: u32,
    },
}

/// `loreloom session …`
#[cfg(feature = "store")]
#[derive(clap::Subcommand, Debug)]
enum SessionCommand {
    /// Start a session of a campaign: session zero, then the opening scene, saved to a new file
    New(session::NewArgs),
    /// Continue a saved session: free text or a choice number per line; /retry, /fallback, /rewind N, /end-scene, /whisper NPC text, /quit
    Play(session::PlayArgs),
    /// Replay the turn that made scene N from its recorded model outputs and dice; exit 1 if anything differs
    Replay {
        /// The save file
        save: PathBuf,
        /// The scene number (as `/rewind` counts them)
        #[arg(long)]
        scene: i64,
    },
}

/// `loreloom tune …` (built with the `tune` feature)
#[cfg(feature = "tune")]
#[derive(clap::Subcommand, Debug)]
enum TuneCommand {
    /// Render every setting's situations into chats (system, user, the answer) with the newest prompts: `train.jsonl` and `heldout.jsonl`
    Render(tune::RenderArgs),
}

/// `loreloom campaign …`
#[derive(clap::Subcommand, Debug)]
enum CampaignCommand {
    /// Check every file: errors name the file and line (exit 1); missing assets are warnings
    Validate {
        /// The campaign folder (the one with manifest.json)
        dir: PathBuf,
    },
    /// Load a campaign and list its characters, clocks and scenarios
    Show {
        /// The campaign folder (the one with manifest.json)
        dir: PathBuf,
    },
    /// Enrich a sparse campaign (fewer than 3 content files): the model writes people, beats, lore and rules as `_generated` files with provenance
    Enrich(campaign::EnrichArgs),
}

/// Options of the game window.
#[derive(clap::Args, Debug)]
struct WindowArgs {
    /// Play these choice numbers in the window, then stop (with --exit, quit)
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    autoplay: Option<Vec<usize>>,
    /// Save a screenshot of the last passage shown to FILE.png
    #[arg(long, value_name = "FILE")]
    screenshot: Option<PathBuf>,
    /// Save a screenshot of every passage shown into DIR
    #[arg(long, value_name = "DIR")]
    screenshot_each: Option<PathBuf>,
    /// Quit when the scripted play is done
    #[arg(long)]
    exit: bool,
    /// Window size in logical pixels
    #[arg(long, value_name = "WxH", default_value = "1280x720", value_parser = parse_size)]
    size: (u32, u32),
    /// Panels to open at start
    #[arg(long, value_delimiter = ',', value_name = "PANEL,...")]
    show: Vec<Panel>,
    /// Write measurements (time to first screen, frame times, memory) as JSON to FILE at exit
    #[arg(long, value_name = "FILE", hide = true)]
    measure: Option<PathBuf>,
    /// Stay this many seconds after scripted play before quitting
    #[arg(long, value_name = "SECS", default_value_t = 0.0, hide = true)]
    hold: f32,
}

/// A panel of the game window.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Panel {
    Codex,
    Backlog,
    /// The debug overlay (F12)
    Debug,
    Settings,
}

pub(super) fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("`{text}` is not WIDTHxHEIGHT, like 1280x720"))?;
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("`{v}` is not a size in pixels"))
    };
    let size = (parse(w)?, parse(h)?);
    if size.0 < 320 || size.1 < 240 {
        return Err("the window must be at least 320x240".to_owned());
    }
    Ok(size)
}

/// Where the title screen looks for stories.
#[cfg(feature = "gui")]
fn campaigns_dir() -> PathBuf {
    default_story()
        .parent()
        .map_or_else(|| PathBuf::from("campaigns"), PathBuf::from)
}

#[cfg(feature = "gui")]
fn window(path: Option<PathBuf>, args: WindowArgs, preview: bool) -> ExitCode {
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        eprintln!(
            "error: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); \
             play in the terminal with `loreloom play --headless`, or run under xvfb-run for screenshots"
        );
        return ExitCode::FAILURE;
    }
    // Scripted play without a path plays the default story; a lone --screenshot shows the title screen.
    let open = path.or_else(|| args.autoplay.is_some().then(default_story));
    crate::ui::run(crate::ui::GuiOptions {
        library: vec![campaigns_dir()],
        open,
        autoplay: args.autoplay,
        screenshot: args.screenshot,
        screenshot_each: args.screenshot_each,
        exit: args.exit,
        preview,
        window: args.size,
        show: start_panels(&args.show),
        measure: args.measure,
        hold: args.hold,
        started: bevy::platform::time::Instant::now(),
        session: None,
    })
}

/// Play a session save in the window.
#[cfg(feature = "gui")]
pub(super) fn session_window(
    launch: crate::ui::SessionLaunch,
    measure: Option<PathBuf>,
    size: (u32, u32),
    show: crate::ui::StartPanels,
) -> ExitCode {
    if cfg!(target_os = "linux")
        && std::env::var_os("DISPLAY").is_none()
        && std::env::var_os("WAYLAND_DISPLAY").is_none()
    {
        eprintln!(
            "error: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset); \
             play in the terminal without --window, or run under xvfb-run for screenshots"
        );
        return ExitCode::FAILURE;
    }
    crate::ui::run(crate::ui::GuiOptions {
        library: vec![campaigns_dir()],
        open: None,
        autoplay: None,
        screenshot: None,
        screenshot_each: None,
        exit: launch.exit,
        preview: false,
        window: size,
        show,
        measure,
        hold: 0.0,
        started: bevy::platform::time::Instant::now(),
        session: Some(launch),
    })
}

#[cfg(not(feature = "gui"))]
fn window(path: Option<PathBuf>, _args: WindowArgs, _preview: bool) -> ExitCode {
    eprintln!(
        "this Loreloom was built without the window (feature `gui`); playing in the terminal"
    );
    terminal::play(&path.unwrap_or_else(default_story), None)
}

/// Resolve the default story relative to the working directory, then to the source tree.
fn default_story() -> PathBuf {
    let here = PathBuf::from(DEFAULT_STORY);
    if here.exists() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_STORY)
    }
}

/// A story path as given, or, for an authoring project folder (one with a
/// `graph.db`), its graph written now as `exports/story/story.json`.
#[cfg_attr(
    not(feature = "store"),
    expect(clippy::unnecessary_wraps, reason = "projects need the store feature")
)]
fn story_path(path: PathBuf) -> Result<PathBuf, ExitCode> {
    #[cfg(feature = "store")]
    if path.join("graph.db").is_file() {
        return author::export_package(&path).map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        });
    }
    Ok(path)
}

/// Parse arguments and run a subcommand.
pub fn run() -> ExitCode {
    let mut cli = Cli::parse();
    let resolved = match &mut cli.command {
        Command::Play { path: Some(p), .. }
        | Command::Preview { path: p, .. }
        | Command::Validate { path: p }
        | Command::Stats { path: p, .. } => story_path(p.clone()).map(|new| *p = new),
        Command::Ship { path, out, .. } => {
            if out.is_none() {
                *out = Some(if path.join("graph.db").is_file() {
                    path.join("exports/ship")
                } else {
                    PathBuf::from("shipped")
                });
            }
            story_path(path.clone()).map(|new| *path = new)
        }
        _ => Ok(()),
    };
    if let Err(code) = resolved {
        return code;
    }
    match cli.command {
        Command::Play {
            path,
            headless: true,
            choices,
            ..
        } => terminal::play(&path.unwrap_or_else(default_story), choices),
        Command::Play {
            path, window: args, ..
        } => window(path, args, false),
        Command::Preview { path, window: args } => window(Some(path), args, true),
        Command::Validate { path } => check::validate(&path),
        Command::Stats { path, json } => check::stats(&path, json),
        Command::Ship { path, format, out } => check::ship(
            &path,
            format,
            &out.unwrap_or_else(|| PathBuf::from("shipped")),
        ),
        Command::Llm(args) => model::llm(args),
        Command::Models { init } => model::models(init),
        Command::Prompts => model::prompts(),
        #[cfg(feature = "tune")]
        Command::Tune(TuneCommand::Render(args)) => tune::render(&args),
        Command::Campaign(CampaignCommand::Validate { dir }) => campaign::validate(&dir),
        Command::Campaign(CampaignCommand::Show { dir }) => campaign::show(&dir),
        Command::Campaign(CampaignCommand::Enrich(args)) => campaign::enrich(&args),
        #[cfg(feature = "store")]
        Command::Author(command) => author::run(command),
        #[cfg(feature = "store")]
        Command::Session(SessionCommand::New(args)) => session::new(args),
        #[cfg(feature = "store")]
        Command::Session(SessionCommand::Play(args)) => session::play(args),
        #[cfg(feature = "store")]
        Command::Session(SessionCommand::Replay { save, scene }) => session::replay(&save, scene),
        #[cfg(all(feature = "store", not(target_family = "wasm")))]
        Command::Eval(command) => eval::run(command),
        Command::Skills(command) => skills::run(command),
        Command::SkillSandbox {
            cgroup,
            read,
            write,
            cpu,
            address_space,
            file_size,
            processes,
            untrusted,
            inner,
            command,
        } => {
            use crate::skills::sandbox;
            let code = if inner {
                let confinement = sandbox::Confinement {
                    read,
                    write,
                    limits: sandbox::Rlimits {
                        cpu_seconds: cpu,
                        address_space,
                        file_size,
                        processes,
                    },
                    untrusted,
                };
                sandbox::enter(&confinement, &command[0], &command[1..])
            } else {
                sandbox::supervise(&cgroup)
            };
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
        Command::Dice {
            expr,
            mods,
            seed,
            times,
        } => campaign::dice(&expr, &mods, seed, times),
    }
}

/// The panels `--show` opens at start.
#[cfg(feature = "gui")]
fn start_panels(show: &[Panel]) -> crate::ui::StartPanels {
    crate::ui::StartPanels {
        codex: show.contains(&Panel::Codex),
        backlog: show.contains(&Panel::Backlog),
        debug: show.contains(&Panel::Debug),
        settings: show.contains(&Panel::Settings),
    }
}
