//! A turn's skill plan on its own thread (#25): progress to the tool panel, its end to the runner.

use bevy::prelude::*;
use serde_json::Value;

use super::view::{DebugLog, SkillNotice, SkillsView, ToolRow};
use super::{ActiveSession, SessionSystems};
use crate::session::skills::{SessionSkills, SkillRun, SkillWork};
use crate::skills::execute::{Progress, ToolState};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        Update,
        (
            collect_skills.in_set(SessionSystems::Collect),
            reload_skills.in_set(SessionSystems::Sync),
        ),
    );
}

/// A skill plan running on its own thread: its progress as it happens, and its end.
pub(super) struct SkillJob {
    progress: crossbeam_channel::Receiver<Progress>,
    done: crossbeam_channel::Receiver<SkillRun>,
}

impl SkillJob {
    /// Runs `work` on a thread of its own, never in the frame.
    pub(super) fn start(skills: &SessionSkills, work: SkillWork) -> Self {
        let (progress_tx, progress) = crossbeam_channel::unbounded();
        let (done_tx, done) = crossbeam_channel::bounded(1);
        let skills = skills.clone();
        skills.rearm();
        std::thread::spawn(move || {
            let run = crate::session::skills::run_live(&skills, &work, Some(progress_tx));
            let _ = done_tx.send(run);
        });
        Self { progress, done }
    }
}

/// The panel's row of a tool, made when it is first heard of.
fn tool_row<'a>(skills: &'a mut SkillsView, tool_id: &str, skill: &str) -> &'a mut ToolRow {
    let i = skills
        .tools
        .iter()
        .position(|t| t.tool_id == tool_id)
        .unwrap_or_else(|| {
            skills.tools.push(ToolRow {
                tool_id: tool_id.to_owned(),
                skill: skill.to_owned(),
                status: None,
                retries: 0,
                ms: None,
                lines: Vec::new(),
                error: None,
            });
            skills.tools.len() - 1
        });
    &mut skills.tools[i]
}

/// A running plan's progress into the tool panel; its end to the runner.
fn collect_skills(
    mut session: ResMut<ActiveSession>,
    mut skills: ResMut<SkillsView>,
    mut log: ResMut<DebugLog>,
) {
    let Some(turn) = session.turn.as_mut() else {
        return;
    };
    let Some(job) = &turn.skills else {
        return;
    };
    for p in job.progress.try_iter() {
        show_progress(&mut skills, p);
    }
    let Ok(run) = job.done.try_recv() else {
        return;
    };
    turn.skills = None;
    show_run(&mut skills, &mut log, &run);
    turn.runner.deliver_skills(run);
}

/// One step of a running plan, on its tool's row.
fn show_progress(skills: &mut SkillsView, p: Progress) {
    match p {
        Progress::Started {
            tool_id,
            skill,
            attempt,
        } => {
            let row = tool_row(skills, &tool_id, &skill);
            row.status = None;
            row.retries = attempt;
            if attempt > 0 {
                row.lines.push(format!("retry {attempt}"));
            }
        }
        Progress::Event { tool_id, event } => {
            if let Some(row) = skills.tools.iter_mut().find(|t| t.tool_id == tool_id) {
                row.lines.push(event_line(&event));
            }
        }
        Progress::Finished {
            tool_id,
            state,
            ms,
            retries,
        } => {
            if let Some(row) = skills.tools.iter_mut().find(|t| t.tool_id == tool_id) {
                row.status = Some(state);
                row.ms = Some(ms);
                row.retries = retries;
            }
        }
    }
}

/// A plan's end: the final trace (errors, and skipped tools, which sent no
/// progress), a failed skill's notice, and the log's account.
fn show_run(skills: &mut SkillsView, log: &mut DebugLog, run: &SkillRun) {
    for tool in &run.result.tool_results {
        let row = tool_row(skills, &tool.tool_id, &tool.skill);
        if row.status.is_none() && row.lines.is_empty() {
            row.lines = tool.events.iter().map(event_line).collect();
        }
        row.status = Some(tool.state);
        row.ms = Some(tool.execution_time_ms);
        row.error = tool.error.as_ref().map(|f| f.message.clone());
    }
    if let Some(refused) = &run.result.refused {
        log.push(format!("skills: plan refused: {}", refused.message));
    }
    let failed = run
        .result
        .tool_results
        .iter()
        .find(|t| t.error.is_some() && t.state != ToolState::Skipped);
    if let Some(t) = failed {
        skills.notice = Some(SkillNotice {
            skill: t.skill.clone(),
            message: t
                .error
                .as_ref()
                .map(|f| f.message.clone())
                .unwrap_or_default(),
        });
    }
    log.push(format!(
        "skills: plan {} {} in {} ms",
        run.result.plan_id,
        if run.result.success {
            "succeeded"
        } else {
            "FAILED"
        },
        run.result.execution_time_ms
    ));
}

/// One event as a line of the tool panel.
fn event_line(event: &crate::skills::protocol::Event) -> String {
    use crate::skills::protocol::Event;
    match event {
        Event::Log { level, message, .. } => format!("{level:?}: {message}").to_lowercase(),
        Event::StatePatch { patch } => format!("state ← {}", Value::Object(patch.clone())),
        Event::Asset { asset_id, path, .. } => format!("asset {asset_id}: {path}"),
        Event::UiEvent { event, .. } => format!("ui: {event}"),
        Event::Error {
            error_code,
            error_message,
            ..
        } => format!("error {error_code}: {error_message}"),
        Event::Done { ok, summary } => {
            format!(
                "done ({}) {}",
                if *ok { "ok" } else { "not ok" },
                summary.as_deref().unwrap_or("")
            )
        }
    }
}

/// Skill folders changed on disk: discovered again between turns, health kept.
fn reload_skills(
    mut session: ResMut<ActiveSession>,
    time: Res<Time>,
    mut log: ResMut<DebugLog>,
    mut last: Local<f32>,
) {
    let now = time.elapsed_secs();
    if now - *last < 1.0 || session.turn.is_some() || session.committing.is_some() {
        return;
    }
    *last = now;
    let Some(found) = session.watcher.poll() else {
        return;
    };
    let names: Vec<&str> = found
        .skills
        .iter()
        .map(|s| s.manifest.name.as_str())
        .collect();
    log.push(format!("skills changed on disk: now {}", names.join(", ")));
    for w in &found.warnings {
        log.push(format!("skills: {w}"));
    }
    session.refresh_skills(found);
}
