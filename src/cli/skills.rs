//! `loreloom skills …`: list, check, configure, plan and run the discovered skills.
//!
//! `list` and `check` cover the manifests, scripts and configs; `approve` shows a campaign's skill
//! (what it is, what it asks for) and asks the player before it may run, `revoke` takes that back;
//! `run` runs one script with JSON input, printing each event as it is read.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::skills::execute::{Executor, ToolState};
use crate::skills::manifest::{Discovery, discover};
use crate::skills::plan::Plan;

/// `loreloom skills …`
#[derive(clap::Subcommand, Debug)]
pub enum SkillsCommand {
    /// Every skill found (name, version, scripts, description) and every folder skipped
    List(Dirs),
    /// Exit 1 if a skill folder is broken (each problem names its file)
    Check(Dirs),
    /// A skill's settings (from its config-schema.json), or change them: --set FIELD=VALUE
    Config {
        name: String,
        /// FIELD=VALUE (VALUE as JSON, else text); checked against the schema before saving
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        set: Vec<String>,
        #[command(flatten)]
        dirs: Dirs,
    },
    /// Ask the model to plan skills for a move and run the plan (the replan
    /// loop: at most five plans, then the fallback narration)
    Plan {
        /// The player's move
        #[arg(value_name = "MOVE")]
        player_move: String,
        /// What the rules made of it
        #[arg(long, default_value = "")]
        outcome: String,
        /// The model key (see `loreloom models`)
        #[arg(long, default_value = "local-small")]
        model: String,
        /// Answer from a reply script instead of the model (tests, demos)
        #[arg(long)]
        model_script: Option<PathBuf>,
        /// Offer the model every enabled skill, without routing the move by
        /// the moves skills list (what a turn does without the embedding model)
        #[arg(long)]
        no_route: bool,
        #[command(flatten)]
        dirs: Dirs,
    },
    /// Show a campaign's skill (what it runs, what it asks for) and approve it
    /// as it is now: a changed skill asks again
    Approve {
        /// The skill (one of those `list` shows as waiting)
        name: String,
        /// Approve without asking (after reading `list`)
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        dirs: Dirs,
    },
    /// Withdraw every approval of a campaign's skill
    Revoke { name: String },
    /// Run one script of a skill with JSON input and print its events and the state it leaves
    Run {
        /// The skill, or SKILL/SCRIPT
        name: String,
        /// The `input` object the script reads (JSON)
        #[arg(long, default_value = "{}")]
        input: String,
        #[command(flatten)]
        dirs: Dirs,
    },
}

/// Where skills are looked for.
#[derive(clap::Args, Debug)]
pub struct Dirs {
    /// Also these skill folders (a campaign's `skills/`), after the bundled `skills/`
    #[arg(long = "dir", value_name = "DIR")]
    dirs: Vec<PathBuf>,
}

impl Dirs {
    fn discover(&self) -> Discovery {
        let mut dirs = vec![crate::files::resource_dir("skills")];
        dirs.extend(self.dirs.iter().cloned());
        discover(&dirs)
    }
}

pub fn run(command: SkillsCommand) -> ExitCode {
    match command {
        SkillsCommand::List(dirs) => list(&dirs.discover()),
        SkillsCommand::Check(dirs) => check(&dirs.discover()),
        SkillsCommand::Config { name, set, dirs } => config(&dirs.discover(), &name, &set),
        SkillsCommand::Plan {
            player_move,
            outcome,
            model,
            model_script,
            no_route,
            dirs,
        } => plan(
            &dirs.discover(),
            &player_move,
            &outcome,
            &model,
            model_script.as_deref(),
            !no_route,
        ),
        SkillsCommand::Approve { name, yes, dirs } => approve(&dirs.discover(), &name, yes),
        SkillsCommand::Revoke { name } => {
            match crate::skills::consent::Approvals::revoke(
                &crate::skills::consent::approvals_path(),
                &name,
            ) {
                Ok(()) => {
                    println!("{name}: no longer approved; it waits for approval again");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        SkillsCommand::Run { name, input, dirs } => run_script(&dirs.discover(), &name, &input),
    }
}

/// Asks at the terminal whether `waiting` may run, after showing what it
/// asks for; records the approval when the player says yes. Not a
/// terminal and not `yes`: nothing is approved.
pub fn ask(waiting: &crate::skills::manifest::Waiting, yes: bool) -> Result<bool, String> {
    use std::io::{BufRead, IsTerminal, Write};
    println!("A campaign's skill asks to run on this machine:");
    for line in waiting.skill.asks() {
        println!("  {line}");
    }
    let approved = if yes {
        true
    } else if std::io::stdin().is_terminal() {
        print!("Let it run? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
    } else {
        println!(
            "  (not asked: no terminal; `loreloom skills approve {} --yes` approves it)",
            waiting.skill.manifest.name
        );
        false
    };
    if approved {
        crate::skills::consent::Approvals::approve(
            &crate::skills::consent::approvals_path(),
            &waiting.skill.manifest.name,
            &waiting.hash,
        )?;
        println!("  approved as it is now; if it changes, it asks again");
    } else {
        println!("  it stays off");
    }
    Ok(approved)
}

fn approve(found: &Discovery, name: &str, yes: bool) -> ExitCode {
    if found.get(name).is_some_and(|s| !s.bundled) {
        println!("{name}: already approved as it is now");
        return ExitCode::SUCCESS;
    }
    let Some(waiting) = found.waiting.iter().find(|w| w.skill.manifest.name == name) else {
        eprintln!(
            "{name}: no campaign skill of that name waits for approval (bundled skills need none; give the campaign's skills folder with --dir)"
        );
        return ExitCode::FAILURE;
    };
    match ask(waiting, yes) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn list(found: &Discovery) -> ExitCode {
    for s in &found.skills {
        let m = &s.manifest;
        println!(
            "{} {} ({}): {}\n  scripts: {}",
            m.name,
            m.version,
            s.dir.display(),
            m.description,
            s.tool_paths().join(", ")
        );
    }
    for w in &found.waiting {
        let m = &w.skill.manifest;
        println!(
            "{} {} ({}): waits for your approval (`loreloom skills approve {} --dir …`)",
            m.name,
            m.version,
            w.skill.dir.display(),
            m.name
        );
    }
    for w in &found.warnings {
        eprintln!("skipped: {w}");
    }
    ExitCode::SUCCESS
}

fn check(found: &Discovery) -> ExitCode {
    for w in &found.warnings {
        eprintln!("{w}");
    }
    eprintln!(
        "{} skills, {} folders skipped",
        found.skills.len(),
        found.warnings.len()
    );
    if found.warnings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `skills run`: one script (`SKILL/SCRIPT`, or the skill's first) as a one-tool plan.
fn run_script(found: &Discovery, name: &str, input: &str) -> ExitCode {
    let input: Value = match serde_json::from_str(input) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("--input is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let skill_name = crate::skills::plan::skill_of(name);
    let Some(skill) = found.get(skill_name) else {
        if found
            .waiting
            .iter()
            .any(|w| w.skill.manifest.name == skill_name)
        {
            eprintln!(
                "`{skill_name}` is a campaign's skill that waits for your approval: `loreloom skills approve {skill_name} --dir …` shows what it asks for"
            );
        } else {
            eprintln!("no skill `{name}` (see `loreloom skills list`)");
        }
        return ExitCode::from(2);
    };
    let path = if name.contains('/') {
        name.to_owned()
    } else {
        skill.tool_paths().first().cloned().unwrap_or_default()
    };
    let plan: Plan = match serde_json::from_value(json!({
        "requestId": "cli",
        "tools": [{"toolId": "run", "toolPath": path, "input": input, "retryPolicy": {"maxRetries": 0, "backoffMs": 0}}]
    })) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = Executor::new(found).execute(&plan, &Map::new());
    if let Some(refused) = &result.refused {
        eprintln!("{}", refused.message);
        return ExitCode::FAILURE;
    }
    for r in &result.tool_results {
        for e in &r.events {
            println!("{}", serde_json::to_string(e).unwrap_or_default());
        }
        if !r.stderr.trim().is_empty() {
            eprintln!("stderr:\n{}", r.stderr.trim_end());
        }
        eprintln!(
            "{}: {:?} in {} ms{}",
            r.tool_id,
            r.state,
            r.execution_time_ms,
            r.error
                .as_ref()
                .map(|f| format!(" ({:?}: {})", f.category, f.message))
                .unwrap_or_default()
        );
    }
    if !result.aggregated_state.is_empty() {
        println!("state: {}", Value::Object(result.aggregated_state.clone()));
    }
    if result
        .tool_results
        .iter()
        .all(|r| r.state == ToolState::Success)
    {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn config(found: &Discovery, name: &str, set: &[String]) -> ExitCode {
    use crate::skills::config::{fields, save, shown};
    let Some(skill) = found.get(name) else {
        eprintln!("no skill `{name}` (see `loreloom skills list`)");
        return ExitCode::from(2);
    };
    let schema = skill.config_schema.as_ref();
    if !set.is_empty() {
        let mut config = skill.config.clone();
        for pair in set {
            let Some((key, value)) = pair.split_once('=') else {
                eprintln!("`{pair}`: write FIELD=VALUE");
                return ExitCode::from(2);
            };
            let value =
                serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_owned()));
            config[key.trim()] = value;
        }
        if let Err(problems) = save(&skill.dir, schema, &config) {
            for p in problems {
                eprintln!("{name}: {p}");
            }
            eprintln!("nothing saved");
            return ExitCode::FAILURE;
        }
        eprintln!("saved {}", skill.dir.join("config.json").display());
        return ExitCode::SUCCESS;
    }
    let Some(schema) = schema else {
        println!("{name} has no settings");
        return ExitCode::SUCCESS;
    };
    let mut listed = fields(schema);
    listed.sort_by(|a, b| a.category.cmp(&b.category));
    let mut category = None;
    for f in &listed {
        if f.category != category {
            category.clone_from(&f.category);
            println!("[{}]", f.category.as_deref().unwrap_or("General"));
        }
        let value = skill.config.get(&f.key).or(f.default.as_ref());
        println!(
            "  {} = {}{}{}",
            f.key,
            shown(f, value),
            f.env_var
                .as_ref()
                .map(|v| format!(" (from ${v})"))
                .unwrap_or_default(),
            f.description
                .as_ref()
                .map(|d| format!("  # {d}"))
                .unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}

fn plan(
    found: &Discovery,
    player_move: &str,
    outcome: &str,
    model: &str,
    script: Option<&std::path::Path>,
    route: bool,
) -> ExitCode {
    use crate::llm::{Gateway, Script, ScriptedBackend};
    use crate::skills::execute::{Health, replan};
    let gateway = match Gateway::open() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(file) = script {
        match Script::read(file) {
            Ok(s) => gateway.register_script(model, ScriptedBackend::new(s)),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(2);
            }
        }
    }
    let routing = route_move(found, player_move, route);
    let executor = Executor::new(found);
    let mut planner = |req: &crate::skills::execute::PlanRequest| {
        crate::skills::planner::ask(
            &gateway,
            found,
            model,
            player_move,
            outcome,
            req,
            routing.as_ref(),
            &format!("plan-{}", req.attempt),
        )
    };
    let turn = replan(
        &mut planner,
        &executor,
        &mut Health::default(),
        &Map::new(),
        player_move,
    );
    for a in &turn.attempts {
        print_attempt(a);
    }
    print_outcome(&turn);
    ExitCode::SUCCESS
}

/// The move routed as a turn routes it (when the embedding model is installed), the fits printed.
fn route_move(
    found: &Discovery,
    player_move: &str,
    route: bool,
) -> Option<crate::skills::route::Routing> {
    let routing = if route {
        crate::memory::default_embedder()
            .and_then(|e| crate::skills::route::Router::new(e).route(found, player_move))
            .map_err(|e| println!("not routed ({e}): the model decides alone"))
            .ok()
    } else {
        println!("not routed (--no-route): the model decides alone");
        None
    };
    if let Some(r) = &routing {
        for f in &r.fits {
            println!("routed: {} ({:.2}, close to “{}”)", f.skill, f.score, f.cue);
        }
        if !r.passed.is_empty() {
            println!("passed over: {}", r.passed.join(", "));
        }
    }
    routing
}

/// One line per attempt: its plan, each tool with the input the planner wrote and how it ended.
fn print_attempt(a: &crate::skills::execute::Attempt) {
    match (&a.plan, &a.result) {
        (Some(plan), Some(result)) => {
            let tools: Vec<String> = result
                .tool_results
                .iter()
                .map(|t| {
                    let input = plan
                        .tools
                        .iter()
                        .find(|c| c.tool_id == t.tool_id)
                        .map(|c| c.input.to_string())
                        .unwrap_or_default();
                    format!(
                        "{} {} {input} → {}{}",
                        t.tool_id,
                        t.skill,
                        t.state.words(),
                        t.summary().map(|s| format!(": {s}")).unwrap_or_default()
                    )
                })
                .collect();
            println!(
                "attempt {}: {} ({}){}",
                a.attempt,
                plan.request_id,
                if tools.is_empty() {
                    "no tools".to_owned()
                } else {
                    tools.join(", ")
                },
                result
                    .refused
                    .as_ref()
                    .map(|r| format!(": refused, {}", r.message))
                    .unwrap_or_default()
            );
        }
        _ => println!(
            "attempt {}: no plan: {}",
            a.attempt,
            a.planner_error.as_deref().unwrap_or("?")
        ),
    }
}

/// The successful plan's events and state, or the fallback narration.
fn print_outcome(turn: &crate::skills::execute::Turn) {
    if let Some(result) = turn.result() {
        for t in &result.tool_results {
            for e in &t.events {
                println!("{}", serde_json::to_string(e).unwrap_or_default());
            }
        }
        if !result.aggregated_state.is_empty() {
            println!("state: {}", Value::Object(result.aggregated_state.clone()));
        }
    }
    if let Some(text) = &turn.fallback {
        println!("fallback: {text}");
    }
}
