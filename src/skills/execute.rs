//! Running a plan (seed 002 §2.2–§2.3): tools in order with retries, skill health, the replan loop.
//!
//! Running a plan (seed 002 §2.2–§2.3): tools in dependency order, `parallel` + `async` ones
//! concurrently up to the core count, retries with `backoffMs × 2^(attempt−1)`, `required`/optional
//! semantics, a per-plan deadline; the execution result with per-tool traces; skill health
//! (§2.3.3); the bounded replan loop (at most 5 plans, failed skills disabled) and its fallback
//! narration.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::invoke::{Category, Failure, Limits, Request, interpreter, invoke};
use super::manifest::Discovery;
use super::merge::deep_merge;
use super::plan::{Plan, PlannerError, RetryPolicy, ToolCall, skill_of};
use super::protocol::{Event, ToolInput};

/// At most this many plans a turn (seed: a hard limit).
pub const MAX_ATTEMPTS: u32 = 5;

/// How a tool ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolState {
    Success,
    Failed,
    Skipped,
    Timeout,
}

/// One tool's trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_id: String,
    pub skill: String,
    pub state: ToolState,
    pub events: Vec<Event>,
    pub stderr: String,
    pub execution_time_ms: u64,
    pub retry_count: u32,
    pub error: Option<Failure>,
}

/// A plan's trace (seed §2.2.4).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecutionResult {
    pub plan_id: String,
    pub success: bool,
    pub can_replan: bool,
    pub failed_tools: Vec<String>,
    pub disabled_skills: Vec<String>,
    pub tool_results: Vec<ToolResult>,
    /// The skill state after every successful tool's patches.
    pub aggregated_state: Map<String, Value>,
    /// `asset` events of successful tools.
    pub aggregated_assets: Vec<Event>,
    pub execution_time_ms: u64,
    pub attempt_number: u32,
    /// Why the plan was refused before anything ran.
    pub refused: Option<Failure>,
}

impl ToolState {
    /// How the player is told it ended.
    pub fn words(self) -> &'static str {
        match self {
            ToolState::Success => "ok",
            ToolState::Failed => "failed",
            ToolState::Skipped => "skipped",
            ToolState::Timeout => "timed out",
        }
    }
}

impl ToolResult {
    /// What the tool's `done` said it did.
    pub fn summary(&self) -> Option<&str> {
        self.events.iter().find_map(|e| match e {
            Event::Done { summary, .. } => summary.as_deref(),
            _ => None,
        })
    }
}

impl ExecutionResult {
    /// The choices a `narrative_choice` event offered, the last one's.
    pub fn choices(&self) -> Option<Vec<String>> {
        self.tool_results
            .iter()
            .filter(|t| t.state == ToolState::Success)
            .flat_map(|t| &t.events)
            .filter_map(|e| match e {
                Event::UiEvent { event, payload } if event == "narrative_choice" => {
                    payload["choices"].as_array().map(|a| {
                        a.iter()
                            .filter_map(|c| c.as_str().map(str::to_owned))
                            .collect()
                    })
                }
                _ => None,
            })
            .next_back()
    }
}

/// What a tool is doing, as it happens (the tool execution panel).
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// An attempt began (0: the first; more are retries).
    Started {
        tool_id: String,
        skill: String,
        attempt: u32,
    },
    /// An event the script wrote, as it was read.
    Event { tool_id: String, event: Event },
    /// The tool ended.
    Finished {
        tool_id: String,
        state: ToolState,
        ms: u64,
        retries: u32,
    },
}

/// Runs plans against the discovered skills.
pub struct Executor<'a> {
    pub skills: &'a Discovery,
    /// Caps and limits for every invocation (the timeout is each script's).
    pub limits: Limits,
    pub plan_timeout: Duration,
    pub max_parallel: usize,
    pub cancel: Option<Arc<AtomicBool>>,
    /// Extra environment for a skill's scripts.
    pub env: &'a (dyn Fn(&str) -> Vec<(String, String)> + Sync),
    /// The `loreloom` binary that confines scripts (see `sandbox`).
    pub sandbox: Option<std::path::PathBuf>,
    /// Where each tool's progress is sent as it happens.
    pub progress: Option<crossbeam_channel::Sender<Progress>>,
}

fn no_env(_: &str) -> Vec<(String, String)> {
    Vec::new()
}

/// This program, when it is `loreloom` (whose `__skill-sandbox` confines
/// scripts); none in other programs (tests set theirs).
fn own_launcher() -> Option<std::path::PathBuf> {
    std::env::current_exe().ok().filter(|p| {
        p.file_stem()
            .is_some_and(|n| n.to_string_lossy() == "loreloom")
    })
}

impl<'a> Executor<'a> {
    pub fn new(skills: &'a Discovery) -> Self {
        Self {
            skills,
            limits: Limits::default(),
            plan_timeout: Duration::from_mins(1),
            max_parallel: std::thread::available_parallelism().map_or(1, usize::from),
            cancel: None,
            env: &no_env,
            sandbox: own_launcher(),
            progress: None,
        }
    }

    fn known(&self, path: &str) -> bool {
        self.skills
            .get(skill_of(path))
            .is_some_and(|s| s.script(path).is_some())
    }

    /// Runs `plan` on top of the skill state `state`.
    pub fn execute(&self, plan: &Plan, state: &Map<String, Value>) -> ExecutionResult {
        let started = Instant::now();
        let mut result = ExecutionResult {
            plan_id: plan.request_id.clone(),
            attempt_number: plan.metadata.generation_attempt,
            aggregated_state: state.clone(),
            ..ExecutionResult::default()
        };
        let order = match plan.order(&|p| self.known(p)) {
            Ok(order) => order,
            Err(e) => {
                result.refused = Some(Failure {
                    category: e.category(),
                    message: e.to_string(),
                });
                result.can_replan = true;
                return result;
            }
        };
        let done = self.run_in_order(plan, &order, state, started + self.plan_timeout);
        gather(&mut result, plan, &order, &done);
        cap_state(&mut result, state);
        result.execution_time_ms = ms(started.elapsed());
        result
    }

    /// Every tool of `plan`, each once its dependencies are done; a tool
    /// whose required dependency failed does not run.
    #[expect(
        clippy::indexing_slicing,
        reason = "tool indices come from the plan's own list (checked when the plan was read)"
    )]
    fn run_in_order(
        &self,
        plan: &Plan,
        order: &[usize],
        state: &Map<String, Value>,
        deadline: Instant,
    ) -> BTreeMap<usize, ToolResult> {
        // Tool ids are unique (the order checked it): each id's index.
        let index: BTreeMap<&str, usize> = plan
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool_id.as_str(), i))
            .collect();
        let at = |d: &String| index[d.as_str()];
        let mut done: BTreeMap<usize, ToolResult> = BTreeMap::new();
        while done.len() < plan.tools.len() {
            let ready: Vec<usize> = order
                .iter()
                .copied()
                .filter(|i| !done.contains_key(i))
                .filter(|i| {
                    plan.tools[*i]
                        .dependencies
                        .iter()
                        .all(|d| done.contains_key(&at(d)))
                })
                .collect();
            // A tool whose required dependency failed does not run.
            let mut batch = Vec::new();
            for i in ready {
                let call = &plan.tools[i];
                let blocked = call.dependencies.iter().find(|d| {
                    let j = at(d);
                    plan.tools[j].required && done[&j].state != ToolState::Success
                });
                if let Some(dep) = blocked {
                    done.insert(
                        i,
                        skipped(
                            call,
                            &format!("its required dependency `{dep}` did not succeed"),
                        ),
                    );
                    continue;
                }
                batch.push(i);
            }
            if !batch.is_empty() {
                self.run_batch(plan, &batch, &mut done, state, deadline);
            }
        }
        done
    }

    /// The first tool ready to run; or, in a `parallel` plan, its `async`
    /// ones side by side (up to `max_parallel`).
    #[expect(
        clippy::indexing_slicing,
        reason = "tool indices come from the plan's own list (checked when the plan was read)"
    )]
    fn run_batch(
        &self,
        plan: &Plan,
        batch: &[usize],
        done: &mut BTreeMap<usize, ToolResult>,
        state: &Map<String, Value>,
        deadline: Instant,
    ) {
        let concurrent: Vec<usize> = if plan.parallel {
            batch
                .iter()
                .copied()
                .filter(|i| plan.tools[*i].is_async)
                .take(self.max_parallel.max(1))
                .collect()
        } else {
            Vec::new()
        };
        if concurrent.len() > 1 {
            let before: &BTreeMap<usize, ToolResult> = done;
            let results: Vec<(usize, ToolResult)> = std::thread::scope(|scope| {
                let handles: Vec<_> = concurrent
                    .iter()
                    .map(|&i| {
                        scope.spawn(move || (i, self.run_tool(plan, i, before, state, deadline)))
                    })
                    .collect();
                handles.into_iter().filter_map(|h| h.join().ok()).collect()
            });
            for (i, r) in results {
                done.insert(i, r);
            }
        } else {
            let i = batch[0];
            let r = self.run_tool(plan, i, done, state, deadline);
            done.insert(i, r);
        }
    }

    /// One tool, with its retries, within the plan's deadline.
    #[expect(
        clippy::indexing_slicing,
        reason = "tool indices come from the plan's own list (checked when the plan was read)"
    )]
    fn run_tool(
        &self,
        plan: &Plan,
        i: usize,
        done: &BTreeMap<usize, ToolResult>,
        state: &Map<String, Value>,
        deadline: Instant,
    ) -> ToolResult {
        let call = &plan.tools[i];
        let skill_name = skill_of(&call.tool_path).to_owned();
        let (Some(skill), started) = (self.skills.get(&skill_name), Instant::now()) else {
            return skipped(call, "no such skill");
        };
        let Some(script) = skill.script(&call.tool_path) else {
            return skipped(call, "no such script");
        };
        let deps = given_by_dependencies(call, done);
        let mut input = call.input.clone();
        if !deps.is_empty() {
            if !input.is_object() {
                input = json!({});
            }
            input["dependencies"] = Value::Object(deps);
        }
        // Its configuration, resolved; only its own variables are read
        // (`${VAR}` in a saved value included) and only mapped ones reach it.
        let lookup = |var: &str| {
            super::config::own_variable(&skill_name, var)
                .then(|| std::env::var(var).ok())
                .flatten()
        };
        let config = super::config::resolve(skill.config_schema.as_ref(), &skill.config, &lookup);
        let mut env = super::config::child_env(skill.config_schema.as_ref(), &config);
        env.extend((self.env)(&skill_name));
        let stdin = serde_json::to_vec(&ToolInput {
            request_id: plan.request_id.clone(),
            tool: call.tool_path.clone(),
            operation: script.name.clone(),
            input,
            config,
            state: state.get(&skill_name).cloned().unwrap_or(Value::Null),
        })
        .unwrap_or_default();
        let path = skill.dir.join(&script.path);
        let (program, args) = match interpreter(&path) {
            Some(run) => (run.into(), vec![script.path.clone()]),
            None => (path.clone(), Vec::new()),
        };
        let request = Request {
            program,
            args,
            dir: skill.dir.clone(),
            env,
            stdin,
            cancel: self.cancel.clone(),
            sandbox: self.sandbox.clone(),
            untrusted: !skill.bundled,
            ..Request::default()
        };
        let policy = call.retry_policy.unwrap_or(skill.manifest.retry_policy);
        let timeout = Duration::from_millis(script.timeout);
        self.with_retries(
            call, skill_name, &request, timeout, policy, started, deadline,
        )
    }

    /// Invokes `request` until it succeeds or its retries, the plan's
    /// deadline or the player's patience (cancel) run out.
    fn with_retries(
        &self,
        call: &ToolCall,
        skill_name: String,
        request: &Request,
        timeout: Duration,
        policy: RetryPolicy,
        started: Instant,
        deadline: Instant,
    ) -> ToolResult {
        let mut attempt = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut limits = self.limits.clone();
            limits.timeout = timeout.min(left);
            self.tell(|| Progress::Started {
                tool_id: call.tool_id.clone(),
                skill: skill_name.clone(),
                attempt,
            });
            let live = self.live_log(&call.tool_id);
            let run = invoke(&Request {
                limits,
                live,
                ..request.clone()
            });
            let failed = run.failure.clone();
            let retry = failed.is_some()
                && attempt < policy.max_retries
                && Instant::now() + policy.delay(attempt + 1) < deadline
                && !self.cancelled();
            if !retry {
                let state = match &failed {
                    None => ToolState::Success,
                    Some(f) if f.category == Category::Timeout => ToolState::Timeout,
                    Some(_) => ToolState::Failed,
                };
                self.tell(|| Progress::Finished {
                    tool_id: call.tool_id.clone(),
                    state,
                    ms: ms(started.elapsed()),
                    retries: attempt,
                });
                return ToolResult {
                    tool_id: call.tool_id.clone(),
                    skill: skill_name,
                    state,
                    events: run.events,
                    stderr: run.stderr,
                    execution_time_ms: ms(started.elapsed()),
                    retry_count: attempt,
                    error: failed,
                };
            }
            attempt += 1;
            tracing::info!(target: "skills", tool = %call.tool_id, attempt, "retrying: {}", failed.map(|f| f.message).unwrap_or_default());
            std::thread::sleep(policy.delay(attempt));
        }
    }

    /// Where the script's events go as they are read: on to the progress
    /// receiver as this tool's (none when nobody listens).
    fn live_log(&self, tool_id: &str) -> Option<crossbeam_channel::Sender<Event>> {
        self.progress.clone().map(|progress| {
            let (tx, rx) = crossbeam_channel::unbounded::<Event>();
            let tool_id = tool_id.to_owned();
            std::thread::spawn(move || {
                for event in rx {
                    let tool_id = tool_id.clone();
                    let _ = progress.send(Progress::Event { tool_id, event });
                }
            });
            tx
        })
    }

    fn tell(&self, progress: impl FnOnce() -> Progress) {
        if let Some(tx) = &self.progress {
            let _ = tx.send(progress());
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// The plan's outcome from its tools' results: the patches and assets of
/// those that succeeded (in plan order), what failed, and whether it succeeded.
#[expect(
    clippy::indexing_slicing,
    reason = "tool indices come from the plan's own list (checked when the plan was read)"
)]
fn gather(
    result: &mut ExecutionResult,
    plan: &Plan,
    order: &[usize],
    done: &BTreeMap<usize, ToolResult>,
) {
    for &i in order {
        let r = &done[&i];
        if r.state != ToolState::Success {
            continue;
        }
        for e in &r.events {
            match e {
                Event::StatePatch { patch } => deep_merge(&mut result.aggregated_state, patch),
                Event::Asset { .. } => result.aggregated_assets.push(e.clone()),
                _ => {}
            }
        }
    }
    result.tool_results = order.iter().map(|i| done[i].clone()).collect();
    let failed: Vec<&ToolResult> = result
        .tool_results
        .iter()
        .filter(|r| matches!(r.state, ToolState::Failed | ToolState::Timeout))
        .collect();
    result.failed_tools = failed.iter().map(|r| r.tool_id.clone()).collect();
    let disabled: BTreeSet<String> = failed.iter().map(|r| r.skill.clone()).collect();
    result.disabled_skills = disabled.into_iter().collect();
    // Success: every required tool succeeded (optional ones may fail).
    result.success = order
        .iter()
        .all(|i| done[i].state == ToolState::Success || !plan.tools[*i].required);
    result.can_replan = !result.success;
}

/// The most skill state a session keeps, serialized (#43): it is copied
/// into every scene of the save, so a skill that grows it without end would
/// grow the save quadratically.
pub const MAX_STATE_BYTES: usize = 256 << 10;

/// A plan whose patches would take the skill state past [`MAX_STATE_BYTES`]
/// keeps none of them: the state stays as it was, the plan fails, and the
/// skills that patched are switched off for the session.
fn cap_state(result: &mut ExecutionResult, before: &Map<String, Value>) {
    let size = serde_json::to_vec(&result.aggregated_state).map_or(usize::MAX, |v| v.len());
    if size <= MAX_STATE_BYTES {
        return;
    }
    result.aggregated_state.clone_from(before);
    let patched: BTreeSet<String> = result
        .tool_results
        .iter()
        .filter(|r| {
            r.events
                .iter()
                .any(|e| matches!(e, Event::StatePatch { .. }))
        })
        .map(|r| r.skill.clone())
        .collect();
    result.refused = Some(Failure {
        category: Category::ToolFailure,
        message: format!(
            "the skill state would be {} KiB, over the {} KiB a session keeps; {} switched off, the state left as it was",
            size >> 10,
            MAX_STATE_BYTES >> 10,
            patched.iter().cloned().collect::<Vec<_>>().join(", ")
        ),
    });
    result.disabled_skills.extend(patched);
    result.disabled_skills.sort();
    result.disabled_skills.dedup();
    result.success = false;
    result.can_replan = false;
}

/// What a tool's dependencies gave: their summaries and patches (null for
/// an optional one that failed).
fn given_by_dependencies(
    call: &ToolCall,
    done: &BTreeMap<usize, ToolResult>,
) -> Map<String, Value> {
    let mut deps = Map::new();
    for d in &call.dependencies {
        let given = done
            .values()
            .find(|r| &r.tool_id == d)
            .map_or(Value::Null, |r| {
                if r.state == ToolState::Success {
                    let patches: Vec<&Map<String, Value>> = r
                        .events
                        .iter()
                        .filter_map(|e| match e {
                            Event::StatePatch { patch } => Some(patch),
                            _ => None,
                        })
                        .collect();
                    json!({"summary": r.summary(), "patches": patches})
                } else {
                    Value::Null
                }
            });
        deps.insert(d.clone(), given);
    }
    deps
}

fn skipped(call: &ToolCall, why: &str) -> ToolResult {
    ToolResult {
        tool_id: call.tool_id.clone(),
        skill: skill_of(&call.tool_path).to_owned(),
        state: ToolState::Skipped,
        events: Vec::new(),
        stderr: String::new(),
        execution_time_ms: 0,
        retry_count: 0,
        error: Some(Failure {
            category: Category::ToolFailure,
            message: why.to_owned(),
        }),
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A skill's health (seed §2.3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HealthState {
    #[default]
    Healthy,
    Degraded,
    TemporaryFailure,
    PermanentFailure,
}

/// How a tool of a skill ended, as health counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// Failed after its retries.
    Failure,
    Timeout,
}

/// Every skill's health this session (all healthy again on a new session).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    states: BTreeMap<String, (HealthState, u32)>,
}

/// Failures in a row that move a skill down a state.
const STRIKES: u32 = 3;

impl Health {
    pub fn state(&self, skill: &str) -> HealthState {
        self.states.get(skill).map_or(HealthState::Healthy, |s| s.0)
    }

    /// The seed's transitions.
    pub fn record(&mut self, skill: &str, outcome: Outcome) {
        use HealthState as H;
        let (state, strikes) = self.states.entry(skill.to_owned()).or_default();
        (*state, *strikes) = match (*state, outcome) {
            (H::PermanentFailure, _) => (H::PermanentFailure, *strikes),
            (_, Outcome::Success) => (H::Healthy, 0),
            (H::Healthy, Outcome::Timeout) => (H::TemporaryFailure, 0),
            (H::TemporaryFailure, _) => (H::PermanentFailure, 0),
            (H::Healthy, Outcome::Failure) if *strikes + 1 >= STRIKES => (H::Degraded, 0),
            (H::Degraded, _) if *strikes + 1 >= STRIKES => (H::PermanentFailure, 0),
            (s, _) => (s, *strikes + 1),
        };
    }

    /// Records every tool of a result.
    pub fn record_result(&mut self, result: &ExecutionResult) {
        for r in &result.tool_results {
            let outcome = match r.state {
                ToolState::Success => Outcome::Success,
                ToolState::Timeout => Outcome::Timeout,
                ToolState::Failed => Outcome::Failure,
                ToolState::Skipped => continue,
            };
            self.record(&r.skill, outcome);
        }
    }

    /// Skills the planner must not choose.
    pub fn disabled(&self) -> Vec<String> {
        self.states
            .iter()
            .filter(|(_, s)| s.0 == HealthState::PermanentFailure)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The player asked to try a failed skill again: healthy from now.
    pub fn heal(&mut self, skill: &str) {
        self.states.remove(skill);
    }

    /// A new session: everything healthy.
    pub fn reset(&mut self) {
        self.states.clear();
    }
}

/// What the planner is told for one attempt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlanRequest {
    pub attempt: u32,
    pub disabled_skills: Vec<String>,
    pub parent_plan_id: Option<String>,
}

/// One attempt of the loop, for the analytics log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Attempt {
    pub attempt: u32,
    pub plan: Option<Plan>,
    /// Why no plan came (the planner's error).
    pub planner_error: Option<String>,
    pub result: Option<ExecutionResult>,
}

/// What a turn's skills came to.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Turn {
    pub attempts: Vec<Attempt>,
    /// Seed §2.3.4: what the player reads when every attempt failed.
    pub fallback: Option<String>,
}

impl Turn {
    /// The successful plan's result (the last attempt's, when it succeeded).
    pub fn result(&self) -> Option<&ExecutionResult> {
        self.attempts
            .last()
            .and_then(|a| a.result.as_ref())
            .filter(|r| r.success)
    }
}

/// The seed's fallback templates (`prompts/fallback_narration.txt`, as the
/// session's own fallback reads them), `{input}` replaced; which one by the
/// attempt count, so a replay says the same.
pub fn fallback_narration(input: &str, salt: usize) -> String {
    let templates: Vec<&str> = include_str!("../../prompts/fallback_narration.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    templates
        .get(salt % templates.len().max(1))
        .unwrap_or(&"{input}")
        .replace("{input}", input.trim())
}

/// The replan loop (seed §2.3.2): up to five plans, each failed skill
/// disabled for the next; then the fallback narration.
pub fn replan(
    planner: &mut dyn FnMut(&PlanRequest) -> Result<Plan, PlannerError>,
    executor: &Executor,
    health: &mut Health,
    state: &Map<String, Value>,
    input: &str,
) -> Turn {
    let mut turn = Turn::default();
    let mut disabled: BTreeSet<String> = health.disabled().into_iter().collect();
    let mut parent = None;
    for attempt in 1..=MAX_ATTEMPTS {
        let request = PlanRequest {
            attempt,
            disabled_skills: disabled.iter().cloned().collect(),
            parent_plan_id: parent.clone(),
        };
        let mut plan = match planner(&request) {
            Ok(plan) => plan,
            Err(e) => {
                tracing::info!(target: "skills", attempt, "no plan: {e}");
                turn.attempts.push(Attempt {
                    attempt,
                    plan: None,
                    planner_error: Some(e.to_string()),
                    result: None,
                });
                continue;
            }
        };
        plan.metadata.generation_attempt = attempt;
        plan.metadata.parent_plan_id.clone_from(&parent);
        plan.disabled_skills = disabled.iter().cloned().collect();
        let result = executor.execute(&plan, state);
        health.record_result(&result);
        tracing::info!(target: "skills", attempt, plan = %plan.request_id, success = result.success,
            failed = ?result.failed_tools, "plan executed");
        parent = Some(plan.request_id.clone());
        disabled.extend(result.disabled_skills.iter().cloned());
        disabled.extend(health.disabled());
        let success = result.success;
        turn.attempts.push(Attempt {
            attempt,
            plan: Some(plan),
            planner_error: None,
            result: Some(result),
        });
        if success {
            return turn;
        }
    }
    turn.fallback = Some(fallback_narration(input, turn.attempts.len()));
    turn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_follows_the_seeds_transitions() {
        let mut h = Health::default();
        h.record("a", Outcome::Failure);
        h.record("a", Outcome::Failure);
        assert_eq!(h.state("a"), HealthState::Healthy);
        h.record("a", Outcome::Failure);
        assert_eq!(h.state("a"), HealthState::Degraded);
        h.record("a", Outcome::Success);
        assert_eq!(h.state("a"), HealthState::Healthy);
        for _ in 0..3 {
            h.record("a", Outcome::Failure);
        }
        for _ in 0..3 {
            h.record("a", Outcome::Failure);
        }
        assert_eq!(h.state("a"), HealthState::PermanentFailure);
        h.record("a", Outcome::Success);
        assert_eq!(
            h.state("a"),
            HealthState::PermanentFailure,
            "only a new session heals it"
        );
        h.record("b", Outcome::Timeout);
        assert_eq!(h.state("b"), HealthState::TemporaryFailure);
        h.record("b", Outcome::Success);
        assert_eq!(h.state("b"), HealthState::Healthy);
        h.record("b", Outcome::Timeout);
        h.record("b", Outcome::Failure);
        assert_eq!(h.state("b"), HealthState::PermanentFailure);
        assert_eq!(h.disabled(), ["a", "b"]);
        h.reset();
        assert!(h.disabled().is_empty());
    }

    #[test]
    fn the_fallback_says_the_players_words() {
        assert_eq!(
            fallback_narration(" open the door ", 0),
            "The narrator pauses, considering your words: 'open the door'"
        );
        assert!(fallback_narration("x", 4).contains("'x'"));
    }
}
