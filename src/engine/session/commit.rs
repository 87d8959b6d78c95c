//! A finished turn's commit off the frame thread: the controller goes to a task and lands later.
//!
//! [`Controller::finish`] writes the turn in one SQLite transaction and embeds
//! its memory event; both take milliseconds to seconds, so they run on the
//! async compute pool (STYLE #11: a task polled with `future::poll_once`). The
//! controller is lent to the task and comes back with the report; until then
//! the session is busy (input waits, so the next turn cannot start before the
//! commit lands). In the browser the pool is the page's event loop: the task
//! runs between two frames.

use bevy::platform::cell::SyncCell;
use bevy::prelude::*;
use bevy::tasks::{AsyncComputeTaskPool, Task, block_on, futures_lite::future};
use serde_json::{Map, Value};

use super::present::present;
use super::view::{DebugLog, SkillAsset, ViewsMut};
use super::{ActiveSession, COMPRESS_TAG, SessionReport, SessionSystems, SkillsView, WorldChanged};
use crate::engine::llm::{LlmCalls, LlmGateway};
use crate::session::controller::{Controller, Report};
use crate::session::turn::TurnResult;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        Update,
        (start_commit, land_commit)
            .chain()
            .in_set(SessionSystems::Commit),
    );
    // The browser's save is a snapshot to keep; natively the file is the save.
    #[cfg(target_family = "wasm")]
    app.add_systems(Update, keep_save.in_set(SessionSystems::Sync));
}

/// A commit under way.
pub(super) struct Commit {
    task: Task<Landed>,
    /// The skill state before the turn, to light what it changed.
    before: Map<String, Value>,
}

/// The controller back from a commit, with what became of the turn.
pub(super) struct Landed {
    pub(super) controller: Controller,
    report: Report,
}

impl Commit {
    /// The commit's end, waited for (leaving the session, or quitting). In the
    /// browser nothing can be waited for: the task has run by the next frame,
    /// and one that has not is left to finish on its own.
    #[cfg_attr(
        not(target_family = "wasm"),
        expect(
            clippy::unnecessary_wraps,
            reason = "natively a commit is always waited for; in the browser it may not be"
        )
    )]
    pub(super) fn wait(self) -> Option<Landed> {
        #[cfg(not(target_family = "wasm"))]
        {
            Some(block_on(self.task))
        }
        #[cfg(target_family = "wasm")]
        {
            let mut task = self.task;
            let landed = block_on(future::poll_once(&mut task));
            if landed.is_none() {
                warn!("a turn's commit is still running as the session goes: it finishes unseen");
                task.detach();
            }
            landed
        }
    }
}

/// A finished turn goes to be committed: its runner's account into the
/// debug log, then the controller to a task on the async compute pool.
fn start_commit(
    mut session: ResMut<ActiveSession>,
    calls: Res<LlmCalls>,
    mut log: ResMut<DebugLog>,
) {
    let finished = session
        .turn
        .as_ref()
        .is_some_and(|t| t.runner.is_finished());
    if !finished {
        return;
    }
    let (Some(turn), Some(controller)) = (session.turn.take(), session.controller.take()) else {
        return;
    };
    if !turn.calls.is_empty() {
        // A stage failed while others ran: they are no longer needed.
        calls.cancel_all();
    }
    let outcome = turn.runner.finish();
    if let Ok(r) = &outcome {
        log_turn(&mut log, r);
    }
    let mut controller = SyncCell::to_inner(controller);
    let before = controller.state.world.skills.clone();
    let input = turn.input;
    let task = AsyncComputeTaskPool::get().spawn(async move {
        let report = controller.finish(&input, outcome);
        Landed { controller, report }
    });
    session.committing = Some(Commit { task, before });
}

/// What a turn did, for the debug overlay: state ops, refusals, drafts, its
/// timeline and dice.
fn log_turn(log: &mut DebugLog, r: &TurnResult) {
    for change in &r.changes {
        log.push(format!(
            "op {}: {} → {}",
            serde_json::to_string(&change.op).unwrap_or_default(),
            change.before,
            change.after
        ));
    }
    for refusal in &r.refused {
        // The engine's own choices are notes, not refusals (#42).
        if refusal.starts_with(crate::session::turn::ENGINE_OFFERS) {
            log.push(refusal.clone());
        } else {
            log.push(format!("refused: {refusal}"));
        }
    }
    if let Some(blocked) = &r.blocked {
        log.push(format!("move check: blocked: {}", blocked.reason()));
    }
    for fired in &r.fired {
        log.push(format!("consequence: {fired}"));
    }
    // Streamer-safe: the category met, never the text.
    for limit in &r.limits {
        log.push(format!("lines and veils: {limit}"));
    }
    for told in &r.continuity {
        log.push(format!("continuity: {told}"));
    }
    for choice in &r.drafts {
        log.push(choice.note.clone());
    }
    log.push(format!("turn: {}", r.budget.summary()));
    log.budget = Some(r.budget.clone());
    for roll in &r.rolls {
        log.push(format!(
            "dice {} {:?} {:+} = {} ({}), seed {:?}",
            roll.roll.expression,
            roll.roll.rolls,
            roll.roll.modifier,
            roll.roll.total,
            roll.band,
            roll.roll.seed
        ));
    }
}

/// UI events that need no placeholder: `narrative_choice` becomes the turn's
/// choices; the bundled skills' `weather` and `dice_roll` say again what their
/// `done` and state already show.
const QUIET_UI_EVENTS: [&str; 3] = ["narrative_choice", "weather", "dice_roll"];

/// A commit that has landed: the controller is back, the report shown, the
/// world rebuilt, and old turns compressed in the background (seed 004).
fn land_commit(
    mut session: ResMut<ActiveSession>,
    mut calls: ResMut<LlmCalls>,
    gateway: Option<Res<LlmGateway>>,
    mut views: ViewsMut,
    mut reports: MessageWriter<SessionReport>,
    mut changed: MessageWriter<WorldChanged>,
) {
    let Some(commit) = session.committing.as_mut() else {
        return;
    };
    let Some(Landed { controller, report }) = block_on(future::poll_once(&mut commit.task)) else {
        return;
    };
    let Some(Commit { before, .. }) = session.committing.take() else {
        return;
    };
    if let Report::Committed {
        result,
        scene_index,
        ..
    } = &report
    {
        let store = crate::session::skills::assets_dir(session.save());
        show_skills(&mut views.skills, result, &store, *scene_index);
        views.skills.fallback.clone_from(&result.skill_fallback);
        let after = controller.state.world.skills.clone();
        views.skills.changed = crate::session::skills::changed_keys(&before, &after);
        views.skills.state = after;
    }
    views.progress.busy = false;
    views.progress.stage = None;
    views.transcript.streaming.clear();
    present(&report, &controller, &mut views);
    if matches!(report, Report::Committed { .. }) {
        changed.write(WorldChanged);
        // Seed 004: compress old turns in the background while the player reads.
        if session.compression.is_none()
            && let Some(gateway) = &gateway
            && let Some(c) = controller.compression_request()
        {
            views.log.push(format!(
                "compressing turns {}..={} into a summary",
                c.turn_start, c.turn_end
            ));
            let id = calls.start(&gateway.0, COMPRESS_TAG, c.request.clone());
            session.compression = Some((id, c));
        }
    }
    session.take_back(controller);
    reports.write(SessionReport(report));
}

/// The skills' UI events the window has no use for, and the assets they
/// made this turn (in the save's asset store `store`), into the skills' view.
fn show_skills(
    skills: &mut SkillsView,
    result: &TurnResult,
    store: &std::path::Path,
    scene_index: i64,
) {
    for run in result.skills.iter().filter_map(|a| a.run.as_ref()) {
        for t in &run.result.tool_results {
            for e in &t.events {
                if let crate::skills::protocol::Event::UiEvent { event, .. } = e
                    && !QUIET_UI_EVENTS.contains(&event.as_str())
                {
                    skills.ui_events.push(format!("{} sent `{event}`", t.skill));
                }
            }
        }
        for a in &run.assets {
            skills.assets.push(SkillAsset {
                skill: a.skill.clone(),
                kind: a.stored.kind.clone(),
                path: store.join(&a.stored.file),
                shown: a.stored.shown,
                scene: scene_index,
            });
        }
    }
}

/// Keeps what changed in the browser's save (its snapshot in the page's
/// storage). A failure (said by the page's storage, even one that came after
/// the write was handed over) is shown to the player until a snapshot is
/// kept again, and tried again next frame: the session goes on in the open
/// page. While a commit has the controller, it waits.
#[cfg(target_family = "wasm")]
fn keep_save(mut session: ResMut<ActiveSession>, mut prompt: ResMut<super::view::TurnPrompt>) {
    let Some(ctl) = session.controller() else {
        return;
    };
    match ctl.store_mut().keep() {
        Ok(()) => {
            if prompt.not_kept.is_some() && !ctl.store_mut().keep_pending() {
                prompt.not_kept = None;
            }
        }
        Err(e) => {
            if prompt.not_kept.is_none() {
                error!("{e}");
            }
            prompt.not_kept = Some(e.to_string());
        }
    }
}
