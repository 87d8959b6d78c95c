//! The `loreloom` command line: play, validate and count stories.

mod check;
mod terminal;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The story the play command opens when given no path.
pub const DEFAULT_STORY: &str = "campaigns/the-glass-orchard";

/// Loreloom plays interactive fiction: authored story graphs (Loreloom story
/// packages or `questfoundry-runtime` exports) and, later, open-ended sessions.
///
/// A story PATH is a story package folder, its story.json, or a
/// questfoundry-runtime .json file.
#[derive(Parser, Debug)]
#[command(
    name = "loreloom",
    version,
    after_help = "Examples:\n  loreloom play --headless\n  loreloom play --headless campaigns/the-glass-orchard --choices 1,2,1\n  loreloom validate my-story/\n  loreloom stats story.json --json"
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
        #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
        choices: Option<Vec<usize>>,
    },
    /// Check a story: errors (exit 1) and warnings, one per line
    Validate {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
    },
    /// Count passages, choices, endings, codewords and what is reachable
    Stats {
        /// Story package folder, story.json, or questfoundry-runtime .json
        path: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
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

/// Parse arguments and run a subcommand.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Play {
            path,
            headless,
            choices,
        } => {
            if !headless {
                tracing::info!("the windowed player is not built yet; playing in the terminal");
            }
            let path = path.unwrap_or_else(default_story);
            terminal::play(&path, choices)
        }
        Command::Validate { path } => check::validate(&path),
        Command::Stats { path, json } => check::stats(&path, json),
    }
}
