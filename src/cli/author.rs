//! `loreloom author …`: make a project, run its stages with a human gate after each, review.
//!
//! Also approve, roll back, edit at a gate and read the audit. Errors are said in words here,
//! at the CLI's edge.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::author::discuss::{Author, Unattended};
use crate::author::dress::Budget;
use crate::author::illustrate::Sketch;
use crate::author::ontology::LAST_BUILT;
use crate::author::project::io;
use crate::author::stages::{self, DressStep, FillStep};
use crate::author::{Project, ProjectError, Scope, Stage, review};
use crate::llm::{Gateway, Script, ScriptedBackend};

/// Why an `author` command failed (said on stderr).
#[derive(Debug, thiserror::Error)]
enum CommandError {
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The model gateway or the reply script could not be set up (said in its words).
    #[error("{0}")]
    Model(Box<dyn std::error::Error + Send + Sync>),
    #[error(
        "SHIP is deterministic and has its own command: `loreloom ship DIR --format F` (package, questfoundry, html, ink, twee, markdown, epub)"
    )]
    Ship,
    #[error(
        "{0} is not built yet in this version of Loreloom (the authoring pipeline stops after {LAST_BUILT})"
    )]
    NotBuilt(Stage),
    /// A stage's run failed and the graph is as it was before it.
    #[error(
        "{source}\n(the graph is as it was before this run of {stage}: restored from {})",
        .snapshot.display()
    )]
    Undone {
        source: ProjectError,
        stage: Stage,
        snapshot: PathBuf,
    },
}

/// `loreloom author …`
#[derive(clap::Subcommand, Debug)]
pub enum AuthorCommand {
    /// Make a project folder from a spark: graph.db, snapshots/, exports/
    New {
        dir: PathBuf,
        /// The idea the story grows from ("a noir mystery on a space station")
        #[arg(long)]
        spark: String,
        #[arg(long, value_enum, default_value = "short")]
        scope: Scope,
    },
    /// Run the next stages up to STAGE, stopping at each stage's gate for review unless --yes
    Run(RunArgs),
    /// Write exports/graph.yaml and exports/graph.md (what the stage under review changed)
    Review { dir: PathBuf },
    /// Approve the stage under review so the next may run
    Approve {
        dir: PathBuf,
        /// At DRESS's gate 2, which illustrations to draw: none, priority-1,
        /// priority-2, priority-3 (every brief up to that priority), top-N
        /// or all
        #[arg(long, value_name = "BUDGET")]
        render: Option<Budget>,
    },
    /// Restore the graph to the snapshot taken before STAGE ran
    Rollback { dir: PathBuf, stage: Stage },
    /// Where the project stands and what is next
    Status { dir: PathBuf },
    /// Change a node the stage under review made, at its gate: FIELD=VALUE
    /// (VALUE is JSON, or else text; `null` removes the field), with your reason
    Set {
        dir: PathBuf,
        /// The node id (as in exports/graph.yaml)
        id: String,
        #[arg(required = true, value_name = "FIELD=VALUE")]
        fields: Vec<String>,
        /// Why (kept in the audit)
        #[arg(long, default_value = "edited by the author at the gate")]
        why: String,
    },
    /// Re-apply an edited exports/graph.yaml at the gate: every difference
    /// from the graph becomes the stage's change, held to its rules, audited
    Apply {
        dir: PathBuf,
        /// The edited file (default: DIR/exports/graph.yaml)
        #[arg(long)]
        file: Option<PathBuf>,
        /// Why (kept in the audit)
        #[arg(long, default_value = "edited by the author in graph.yaml")]
        why: String,
    },
    /// The mutation audit: every change, by which stage and phase, and why
    Audit {
        dir: PathBuf,
        /// Only this stage's changes
        #[arg(long)]
        stage: Option<Stage>,
    },
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    dir: PathBuf,
    /// The last stage to run (default: the next one)
    #[arg(long)]
    to: Option<Stage>,
    /// Run without asking: no discussion, each gate approved as it is reached
    #[arg(long)]
    yes: bool,
    /// The model key (see `loreloom models`)
    #[arg(long, default_value = "local-small")]
    model: String,
    /// Answer from a reply script instead of the model (tests, demos)
    #[arg(long)]
    model_script: Option<PathBuf>,
    /// With --yes: the image budget DRESS's gate 2 is approved with
    /// (none, priority-1, priority-2, priority-3, top-N, all)
    #[arg(long, value_name = "BUDGET")]
    render: Option<Budget>,
}

pub fn run(command: AuthorCommand) -> ExitCode {
    match command_result(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn command_result(command: AuthorCommand) -> Result<(), CommandError> {
    let result = match command {
        AuthorCommand::New { dir, spark, scope } => Project::create(&dir, &spark, scope).map(|p| {
            println!(
                "made {}\nnext: `loreloom author run {} --to dream`",
                p.dir.display(),
                dir.display()
            );
        }),
        AuthorCommand::Run(args) => return run_stages(&args),
        AuthorCommand::Review { dir } => write_review(&dir),
        AuthorCommand::Approve { dir, render } => Project::open(&dir).and_then(|mut p| {
            if let Some(budget) = &render {
                p.set_budget(budget)?;
            }
            let stage = p.approve()?;
            println!("{stage} approved\n{}", p.status()?);
            Ok(())
        }),
        AuthorCommand::Rollback { dir, stage } => Project::open(&dir)
            .and_then(|p| p.rollback(stage))
            .and_then(|p| {
                println!("restored the graph from before {stage}\n{}", p.status()?);
                Ok(())
            }),
        AuthorCommand::Set {
            dir,
            id,
            fields,
            why,
        } => Project::open(&dir).and_then(|mut p| {
            let stage = p.edit(&id, &fields, &why)?;
            println!("{stage} gate: `{id}` changed ({why})");
            Ok(())
        }),
        AuthorCommand::Apply { dir, file, why } => Project::open(&dir).and_then(|mut p| {
            let file = file.unwrap_or_else(|| dir.join("exports/graph.yaml"));
            let (stage, n) = p.apply_yaml(&file, &why)?;
            if n == 0 {
                println!(
                    "{stage} gate: {} is the graph as it stands; nothing to apply",
                    file.display()
                );
            } else {
                println!(
                    "{stage} gate: {n} changes from {} applied ({why})",
                    file.display()
                );
                write_review(&dir)?;
            }
            Ok(())
        }),
        AuthorCommand::Status { dir } => Project::open(&dir).and_then(|p| {
            println!("{}", p.status()?);
            Ok(())
        }),
        AuthorCommand::Audit { dir, stage } => Project::open(&dir).and_then(|p| {
            for row in p.graph.audit(stage)? {
                println!(
                    "{:>4} {:<10} {:<9} {:<6} {}  ({})",
                    row.seq, row.stage, row.phase, row.operation, row.target, row.rationale
                );
            }
            Ok(())
        }),
    };
    Ok(result?)
}

/// Writes a project's graph as `exports/story/story.json`; the package folder.
pub fn export_package(dir: &Path) -> Result<PathBuf, ProjectError> {
    let project = Project::open(dir)?;
    let id = dir
        .file_name()
        .map_or_else(|| "story".to_owned(), |n| n.to_string_lossy().into_owned());
    let file = crate::author::export::story_file(&project.graph, &id)?;
    let package = dir.join("exports").join("story");
    std::fs::create_dir_all(&package).map_err(io(&package))?;
    // DRESS's pictures go with the package (content-addressed: a file
    // already there is the same picture).
    for asset in file
        .illustrations
        .iter()
        .map(|i| &i.asset)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (from, to) = (dir.join(asset), package.join(asset));
        if !to.is_file() {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::copy(&from, &to).map_err(io(&from))?;
        }
    }
    let path = package.join("story.json");
    let text = serde_json::to_string_pretty(&file).unwrap_or_default();
    std::fs::write(&path, text).map_err(io(&path))?;
    Ok(package)
}

fn write_review(dir: &Path) -> Result<(), ProjectError> {
    let project = Project::open(dir)?;
    let exports = dir.join("exports");
    std::fs::create_dir_all(&exports).map_err(io(&exports))?;
    let yaml = exports.join("graph.yaml");
    std::fs::write(&yaml, review::yaml(&project.graph)?).map_err(io(&yaml))?;
    let md = exports.join("graph.md");
    let text = review::markdown(&project.graph, &project.spark()?, project.in_review()?)?;
    std::fs::write(&md, &text).map_err(io(&md))?;
    println!("{text}\nwrote {} and {}", yaml.display(), md.display());
    Ok(())
}

/// The author at the terminal: each proposal printed, a reply read; an
/// empty line ends the discussion.
struct AtTerminal;

impl Author for AtTerminal {
    fn reply(&mut self, stage: Stage, said: &str) -> Option<String> {
        println!("\n{said}\n");
        print!("{stage} (your reply; an empty line ends the discussion)> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        let line = line.trim().to_owned();
        (!line.is_empty()).then_some(line)
    }
}

fn inner_words(gate: crate::author::project::Inner) -> &'static str {
    match gate.waiting {
        "voice" => "the voice document waits for review",
        "prose" => {
            "the prose waits for your reading (`author review` writes it out); approve, and the next run reviews and revises it"
        }
        "art" => "the art direction and the visual profiles wait for review (gate 1)",
        "briefs" => {
            "the briefs and the codex wait for review; approve with the image budget: --render none|priority-1|priority-2|priority-3|top-N|all (gate 2)"
        }
        _ => "the sample illustration waits for you to confirm its style",
    }
}

/// Prints what a DRESS run did; the inner gate it stops at, if any.
fn say_dress(step: &DressStep) -> Option<&'static str> {
    let (report, gate) = match step {
        DressStep::Art(r) => {
            println!("  art direction and {} visual profiles", r.visuals);
            (r, Some("art"))
        }
        DressStep::Briefs(r) => {
            let [p1, p2, p3, skip] = r.priorities;
            println!(
                "  {} briefs (priority 1: {p1}, 2: {p2}, 3: {p3}, skipped: {skip}); {} codex entries",
                r.briefs, r.codex_entries
            );
            (r, Some("briefs"))
        }
        DressStep::Sample(r) | DressStep::Batch(r) => {
            for id in &r.drawn {
                println!("  drew {id}");
            }
            if !r.failed.is_empty() {
                println!("  not drawn: {}", r.failed.join(", "));
            }
            let more = matches!(step, DressStep::Sample(_)) && !r.done;
            (r, more.then_some("sample"))
        }
    };
    say_notes(&report.notes);
    gate
}

fn not_built(stage: Stage) -> CommandError {
    if stage == Stage::Ship {
        CommandError::Ship
    } else {
        CommandError::NotBuilt(stage)
    }
}

fn run_stages(args: &RunArgs) -> Result<(), CommandError> {
    let mut project = Project::open(&args.dir)?;
    let gateway = Gateway::open().map_err(|e| CommandError::Model(e.into()))?;
    if let Some(file) = &args.model_script {
        let script = Script::read(file).map_err(|e| CommandError::Model(e.into()))?;
        gateway.register_script(&args.model, ScriptedBackend::new(script));
    }
    let interactive = !args.yes && std::io::stdin().is_terminal();
    loop {
        if args.yes
            && let Some(waiting) = project.in_review()?
        {
            if let Some(budget) = &args.render
                && project.waiting_inner(waiting)?.map(|g| g.waiting) == Some("briefs")
            {
                project.set_budget(budget)?;
            }
            project.approve()?;
            println!("{waiting} approved (--yes)");
        }
        let Some(stage) = project.next_stage()? else {
            println!("{}", project.status()?);
            return Ok(());
        };
        if args.to.is_some_and(|to| stage > to) {
            println!("{}", project.status()?);
            return Ok(());
        }
        if stage > LAST_BUILT {
            // Nothing to snapshot or restore: say so before touching the graph.
            if args.yes && args.to.is_none() {
                println!("{}", project.status()?);
                return Ok(());
            }
            return Err(not_built(stage));
        }
        project = run_one(args, project, stage, &gateway, interactive)?;
        if !args.yes {
            println!("{}", project.status()?);
            return Ok(());
        }
        if args.to.is_none() {
            project.approve()?;
            println!("{}", project.status()?);
            return Ok(());
        }
    }
}

/// Runs one stage (or the next part of one) and stops it at its gate; a run that failed
/// leaves nothing behind: the graph from before it (or, going on after an inner gate, from
/// that gate).
fn run_one(
    args: &RunArgs,
    project: Project,
    stage: Stage,
    gateway: &Gateway,
    interactive: bool,
) -> Result<Project, CommandError> {
    let resumed = project.resuming(stage)?;
    let mut project = project.begin(stage)?;
    let part = match project.passed_inner(stage)?.map(|g| g.waiting) {
        Some("voice") => " (the prose)",
        Some("prose") => " (the review and revision)",
        Some("art") => " (briefs and codex)",
        Some("briefs") => " (the sample illustration)",
        Some("sample") => " (the other illustrations)",
        _ => "",
    };
    println!("running {stage}{part}…");
    let mut author: Box<dyn Author> = if interactive {
        Box::new(AtTerminal)
    } else {
        Box::new(Unattended)
    };
    let paused = match run_stage(&mut project, stage, gateway, &args.model, author.as_mut()) {
        Ok(paused) => paused,
        Err(e) => {
            drop(project);
            let snapshot = Project::open(&args.dir)?.undo_run(stage, resumed)?;
            return Err(match e {
                CommandError::Project(source) => CommandError::Undone {
                    source,
                    stage,
                    snapshot,
                },
                other => other,
            });
        }
    };
    if let Some(gate) = paused {
        project.pause(stage, gate)?;
        if let Some(inner) = project.waiting_inner(stage)? {
            println!("{stage}: {}", inner_words(inner));
        }
    } else {
        project.finish(stage)?;
        println!("{stage} done");
    }
    Ok(project)
}

/// Runs `stage` and says what it did; the inner gate it stops at, if any.
fn run_stage(
    project: &mut Project,
    stage: Stage,
    gateway: &Gateway,
    model: &str,
    author: &mut dyn Author,
) -> Result<Option<&'static str>, CommandError> {
    match stage {
        Stage::Dream => stages::dream(project, gateway, model, author)?,
        Stage::Brainstorm => stages::brainstorm(project, gateway, model, author)?,
        Stage::Seed => stages::seed(project, gateway, model)?,
        Stage::Grow => say_grow(&stages::grow(project, gateway, model)?),
        Stage::Fill => return Ok(say_fill(&stages::fill(project, gateway, model)?)),
        Stage::Dress => {
            let step = stages::dress(project, gateway, model, author, &Sketch)?;
            return Ok(say_dress(&step));
        }
        later @ Stage::Ship => return Err(not_built(later)),
    }
    Ok(None)
}

/// Prints what GROW made.
fn say_grow(grown: &crate::author::grow::Grown) {
    say_notes(&grown.notes);
    println!(
        "  {} arcs, {} passages, {} choices, {} codewords, {} endings",
        grown.arcs.len(),
        grown.passages.len(),
        grown.choices.len(),
        grown.codewords.len(),
        grown.endings.len()
    );
}

/// Prints a run's notes, one a line.
fn say_notes(notes: &[String]) {
    for note in notes {
        println!("  note: {note}");
    }
}

/// Prints what a FILL run did; the inner gate it stops at, if any.
fn say_fill(step: &FillStep) -> Option<&'static str> {
    match step {
        FillStep::Voice(voice) => {
            println!(
                "  voice: \"{}\", {} person, {} tense, {}",
                voice.story_title,
                voice.pov.name().replace('_', " "),
                voice.tense.name(),
                voice.register
            );
            Some("voice")
        }
        FillStep::Reviewed(report) => {
            say_notes(&report.notes);
            println!(
                "  {} review cycles, {} revised ({} mended by a repair), {} still flagged, {} without prose",
                report.cycles,
                report.revised,
                report.repaired,
                report.flagged.len(),
                report.missing.len()
            );
            None
        }
        FillStep::Prose(report) => {
            say_notes(&report.notes);
            println!(
                "  {} passages written ({} mended by a repair), {} without prose",
                report.written,
                report.repaired,
                report.missing.len()
            );
            let sizes: Vec<u32> = report
                .prompt_tokens
                .iter()
                .copied()
                .filter(|t| *t > 0)
                .collect();
            if let (Some(least), Some(most)) = (sizes.iter().min(), sizes.iter().max()) {
                let mean = sizes.iter().map(|t| u64::from(*t)).sum::<u64>() / sizes.len() as u64;
                println!(
                    "  prose prompts: {} calls, {least}–{most} tokens in (mean {mean})",
                    sizes.len()
                );
            }
            Some("prose")
        }
    }
}
