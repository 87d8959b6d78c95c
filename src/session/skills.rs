//! A turn's skills (#25): what a session offers the planner, running a plan, and its record.
//!
//! What a session offers the planner: the discovered skills less those the player
//! switched off, their health this session, the save's asset store. The plan a
//! turn hands its driver is run live here (assets copied into the store), and the
//! record replay hands back instead of running the scripts again.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::skills::assets::{Stored, collect};
use crate::skills::execute::{Executor, Progress, ToolState};
use crate::skills::{Discovery, ExecutionResult, Health, Plan, discover};

/// The skills a session can call.
#[derive(Clone, Debug, Default)]
pub struct SessionSkills {
    pub found: Arc<Discovery>,
    /// Every skill's health this play session (all healthy when it opens).
    pub health: Health,
    /// The save's asset store, where skills' assets are copied (none: they
    /// are not kept).
    pub assets: Option<PathBuf>,
    /// Set to stop the scripts in flight (the player rewound or quit).
    pub cancel: Arc<AtomicBool>,
}

impl SessionSkills {
    /// The bundled `skills/` and the campaign's own, less those the player
    /// switched off in the Skills settings; discovery's warnings are logged.
    pub fn discover(campaign_dir: &Path, assets: Option<PathBuf>) -> Self {
        Self {
            assets,
            ..Self::default()
        }
        .refreshed(discover(&skill_dirs(campaign_dir)))
    }

    /// The same session's skills from a new discovery (the folders changed,
    /// or the player switched one): health, asset store and cancellation kept.
    #[must_use]
    pub fn refreshed(&self, mut found: Discovery) -> Self {
        for w in &found.warnings {
            tracing::warn!(target: "skills", "{w}");
        }
        match crate::skills::config::switched_off() {
            Ok(off) => found.skills.retain(|s| !off.contains(&s.manifest.name)),
            // #43: fails closed, and says so.
            Err(why) => {
                tracing::warn!(target: "skills", "{why}");
                found.warnings.push(why);
                found.skills.clear();
            }
        }
        Self {
            found: Arc::new(found),
            ..self.clone()
        }
    }

    /// Stop whatever runs now; the next turn's scripts may run again.
    pub fn cancel_running(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// A new plan may run (after a cancellation).
    pub fn rearm(&self) {
        self.cancel.store(false, Ordering::Relaxed);
    }
}

/// Where a campaign's session looks for skills: the bundled folder, then the
/// campaign's own `skills/`.
pub fn skill_dirs(campaign_dir: &Path) -> Vec<PathBuf> {
    vec![
        crate::files::resource_dir("skills"),
        campaign_dir.join("skills"),
    ]
}

/// Where a save keeps the assets its skills made: beside it, `<save>.assets/`.
pub fn assets_dir(save: &Path) -> PathBuf {
    save.with_extension("assets")
}

/// The bundled skill that draws a character the campaign has no picture of.
pub const PORTRAITS: &str = "character-portraits";

/// Why the portrait skill drew no picture.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PortraitError {
    #[error("the portrait skill did not run")]
    DidNotRun,
    #[error("the {PORTRAITS} skill failed for {name}: {why}")]
    Failed { name: String, why: String },
    #[error("the {PORTRAITS} skill's picture of {name} was refused: {why}")]
    Refused { name: String, why: String },
}

/// A portrait of a character the campaign gives none (#25): the
/// [`PORTRAITS`] skill's first script run once (it caches each character's
/// picture in its own `data/`, so the same character looks the same each
/// session), the image copied into the save's asset store. `Ok(None)` when
/// the skill is not there (switched off) or the session keeps no assets.
pub fn portrait(
    skills: &SessionSkills,
    character: &str,
    name: &str,
    description: &str,
) -> Result<Option<PathBuf>, PortraitError> {
    let (Some(skill), Some(store)) = (skills.found.get(PORTRAITS), &skills.assets) else {
        return Ok(None);
    };
    let Some(script) = skill.manifest.scripts.first() else {
        return Ok(None);
    };
    let plan = Plan {
        request_id: format!("portrait-{character}"),
        tools: vec![crate::skills::plan::ToolCall {
            tool_id: "portrait".into(),
            tool_path: format!("{PORTRAITS}/{}", script.name),
            input: serde_json::json!({"character": character, "name": name,
                                      "description": description}),
            dependencies: Vec::new(),
            required: true,
            is_async: false,
            retry_policy: None,
        }],
        ..Plan::default()
    };
    let run = run_live(
        skills,
        &SkillWork {
            plan,
            state: Map::new(),
        },
        None,
    );
    let Some(tool) = run.result.tool_results.first() else {
        return Err(PortraitError::DidNotRun);
    };
    if tool.state != ToolState::Success {
        let why = tool
            .error
            .as_ref()
            .map_or_else(|| tool.state.words().to_owned(), |f| f.message.clone());
        return Err(PortraitError::Failed {
            name: name.to_owned(),
            why,
        });
    }
    if let Some(why) = run.refused.first() {
        return Err(PortraitError::Refused {
            name: name.to_owned(),
            why: why.clone(),
        });
    }
    Ok(run
        .assets
        .into_iter()
        .find(|k| k.stored.shown)
        .map(|k| store.join(k.stored.file)))
}

/// A plan the turn wants run, on the skill state as it stands.
#[derive(Clone, Debug)]
pub struct SkillWork {
    pub plan: Plan,
    pub state: Map<String, Value>,
}

/// What running a plan came to, as the turn keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillRun {
    pub result: ExecutionResult,
    /// The assets copied into the save's store.
    #[serde(default)]
    pub assets: Vec<KeptAsset>,
    /// Assets refused (outside the skill's folder, not what they say…).
    #[serde(default)]
    pub refused: Vec<String>,
}

/// An asset copied into the save's store, and the skill that made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptAsset {
    pub skill: String,
    #[serde(flatten)]
    pub stored: Stored,
}

/// One plan of a turn's skills, as recorded in its `tool_call` / `skills` event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillAttempt {
    pub attempt: u32,
    pub plan: Option<Plan>,
    /// Why the planner gave no plan.
    pub planner_error: Option<String>,
    pub run: Option<SkillRun>,
}

/// Runs `work` for real: the executor with the session's cancellation, each
/// successful tool's assets copied into the store.
pub fn run_live(
    skills: &SessionSkills,
    work: &SkillWork,
    progress: Option<crossbeam_channel::Sender<Progress>>,
) -> SkillRun {
    let mut executor = Executor::new(&skills.found);
    executor.cancel = Some(Arc::clone(&skills.cancel));
    executor.progress = progress;
    let result = executor.execute(&work.plan, &work.state);
    let mut run = SkillRun {
        result,
        ..SkillRun::default()
    };
    let Some(store) = &skills.assets else {
        return run;
    };
    for tool in &run.result.tool_results {
        if tool.state != ToolState::Success {
            continue;
        }
        let Some(skill) = skills.found.get(&tool.skill) else {
            continue;
        };
        let (kept, refused) = collect(&skill.dir, &tool.events, store);
        run.assets.extend(kept.into_iter().map(|stored| KeptAsset {
            skill: tool.skill.clone(),
            stored,
        }));
        run.refused
            .extend(refused.into_iter().map(|r| format!("{}: {r}", tool.skill)));
    }
    run
}

/// Recorded runs, handed back in the order they were made (replay).
#[derive(Clone, Debug, Default)]
pub struct Recorded(VecDeque<SkillRun>);

impl Recorded {
    pub fn new(attempts: &[SkillAttempt]) -> Self {
        Self(attempts.iter().filter_map(|a| a.run.clone()).collect())
    }

    /// The next recorded run; an empty one (refused) when the replay asks
    /// for more than was recorded, which replay reports as a difference.
    pub fn next(&mut self, work: &SkillWork) -> SkillRun {
        self.0.pop_front().unwrap_or_else(|| SkillRun {
            result: ExecutionResult {
                plan_id: work.plan.request_id.clone(),
                refused: Some(crate::skills::invoke::Failure {
                    category: crate::skills::invoke::Category::ToolFailure,
                    message: "the replay ran more plans than were recorded".into(),
                }),
                ..ExecutionResult::default()
            },
            ..SkillRun::default()
        })
    }
}

/// The skill state's leaves as (dot path, value in words), in key order.
pub fn entries(state: &Map<String, Value>) -> Vec<(String, String)> {
    fn walk(prefix: &str, map: &Map<String, Value>, out: &mut Vec<(String, String)>) {
        for (k, v) in map {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                Value::Object(inner) => walk(&key, inner, out),
                Value::String(s) => out.push((key, s.clone())),
                other => out.push((key, other.to_string())),
            }
        }
    }
    let mut out = Vec::new();
    walk("", state, &mut out);
    out
}

/// The skill state as lines for a prompt (`weather.sky: rain`), at most `max`.
pub fn state_lines(state: &Map<String, Value>, max: usize) -> Vec<String> {
    entries(state)
        .into_iter()
        .take(max)
        .map(|(k, v)| format!("{k}: {v}"))
        .collect()
}

/// The dot paths whose values differ between two skill states (the
/// narrative state panel lights them).
pub fn changed_keys(before: &Map<String, Value>, after: &Map<String, Value>) -> Vec<String> {
    let (a, b) = (entries(before), entries(after));
    let mut keys: Vec<String> = b
        .iter()
        .filter(|e| !a.contains(e))
        .chain(a.iter().filter(|e| !b.contains(e)))
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn state_reads_as_dot_paths_and_changes_are_named() {
        let before = map(json!({"weather": {"sky": "clear", "hour": 9}, "dice": {"last": 4}}));
        let after = map(json!({"weather": {"sky": "rain", "hour": 9}, "journal": {"n": 1}}));
        assert_eq!(
            state_lines(&after, 8),
            ["journal.n: 1", "weather.hour: 9", "weather.sky: rain"]
        );
        assert_eq!(
            changed_keys(&before, &after),
            ["dice.last", "journal.n", "weather.sky"]
        );
    }

    #[test]
    fn a_replay_asking_for_more_than_was_recorded_is_refused() {
        let plan: Plan = serde_json::from_value(json!({"requestId": "p", "tools": []})).unwrap();
        let mut recorded = Recorded::default();
        let run = recorded.next(&SkillWork {
            plan,
            state: Map::new(),
        });
        assert!(!run.result.success);
        assert!(run.result.refused.is_some());
    }
}
