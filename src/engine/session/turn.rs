//! A turn's frames before its commit: input taken, model calls started, their answers collected.

use std::collections::BTreeMap;

use bevy::prelude::*;

use super::present::{beat_line, present, recall_lines};
use super::view::{DebugLog, Entry, Transcript, TurnProgress, ViewsMut};
use super::{
    ActiveSession, COMPRESS_TAG, RECAP_TAG, RunningTurn, SessionInput, SessionReport,
    SessionSystems, TURN_TAG, WorldChanged, skill_runs,
};
use crate::engine::llm::{LlmCalls, LlmFinished, LlmGateway, LlmToken};
use crate::session::controller::{Report, Step};
use crate::session::turn::TurnRunner;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        Update,
        (
            accept_input.in_set(SessionSystems::Input),
            launch_calls.in_set(SessionSystems::Launch),
            collect_calls.in_set(SessionSystems::Collect),
            prime_next_turn.in_set(SessionSystems::Sync),
        ),
    );
}

/// Each line of input: ignored while a turn runs; a command answered at
/// once; an intention starts a turn.
fn accept_input(
    mut inputs: MessageReader<SessionInput>,
    mut session: ResMut<ActiveSession>,
    mut views: ViewsMut,
    mut reports: MessageWriter<SessionReport>,
    mut changed: MessageWriter<WorldChanged>,
    gateway: Option<Res<LlmGateway>>,
) {
    for SessionInput(line) in inputs.read() {
        let Some(ctl) = session.idle_controller() else {
            views
                .log
                .push(format!("input ignored while a turn runs: {line}"));
            continue;
        };
        match ctl.handle(line) {
            Step::Quit => {}
            Step::Run(input) => {
                let prompt = &mut views.prompt;
                prompt.failure = None;
                prompt.question = None;
                prompt.choices.clear();
                prompt.choice_marks.clear();
                views.transcript.entries.push(Entry::Intention {
                    text: input.text.clone(),
                    whisper_to: input.whisper_to.clone(),
                });
                views.progress.busy = true;
                let log = &mut views.log;
                log.push(format!("turn: {}", input.text));
                let state = ctl.state.clone();
                for line in recall_lines(&state.recalled) {
                    log.push(line);
                }
                if let Some(line) = beat_line(&state) {
                    log.push(line);
                }
                // #21: a model with a second lane takes the bookkeeping at once.
                let lanes = gateway
                    .as_ref()
                    .map_or(1, |g| g.0.lanes(&state.small_model));
                session.turn = Some(RunningTurn {
                    runner: TurnRunner::start(state, input.clone()).with_background_lane(lanes > 1),
                    input,
                    calls: BTreeMap::new(),
                    narrating: None,
                    notices_shown: 0,
                    rolls_shown: 0,
                    narrations_shown: 0,
                    skills: None,
                });
                let skills = &mut views.skills;
                skills.tools.clear();
                skills.notice = None;
                skills.fallback = None;
            }
            Step::Report(report) => {
                present(&report, ctl, &mut views);
                if matches!(
                    report,
                    Report::Committed { .. } | Report::Rewound { .. } | Report::Loaded { .. }
                ) {
                    changed.write(WorldChanged);
                }
                reports.write(SessionReport(report));
            }
        }
    }
}

/// Every call the runner asks for, started on the gateway (and a skill plan on its own thread).
fn launch_calls(
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
    mut calls: ResMut<LlmCalls>,
    mut progress: ResMut<TurnProgress>,
    mut transcript: ResMut<Transcript>,
    mut log: ResMut<DebugLog>,
) {
    let Some((turn, ctl)) = session.turn_and_controller() else {
        return;
    };
    // A plan to run: on its own thread, never in the frame (#25).
    if let Some(work) = turn.runner.take_skill_work() {
        log.push(format!(
            "skills: plan {} runs {} tool(s)",
            work.plan.request_id,
            work.plan.tools.len()
        ));
        progress.stage = Some("skills".into());
        turn.skills = Some(skill_runs::SkillJob::start(&ctl.state.skills, work));
    }
    let pending = turn.runner.take_requests();
    if pending.is_empty() {
        return;
    }
    let Some(gateway) = gateway else {
        log.push("no model gateway: the turn cannot run");
        return;
    };
    for call in pending {
        let stage = call.request.stage.clone();
        let actor = turn.runner.narrator_of(call.id).map(str::to_owned);
        let id = calls.start(&gateway.0, TURN_TAG, call.request);
        turn.calls.insert(id, call.id);
        if stage == "narrate" {
            turn.narrating = Some(id);
            progress.stage = Some("narrate".into());
            transcript.speaker = actor;
        } else if progress.stage.as_deref() != Some("narrate") {
            progress.stage = Some(stage.clone());
        }
        log.push(format!("stage {stage} started (call {id})"));
    }
}

/// Streamed narration onto the page; finished calls to the runner (or to
/// the recap and the compression they answer).
fn collect_calls(
    mut session: ResMut<ActiveSession>,
    mut tokens: MessageReader<LlmToken>,
    mut finished: MessageReader<LlmFinished>,
    mut views: ViewsMut,
) {
    let narrating = session.turn.as_ref().and_then(|t| t.narrating);
    for token in tokens.read() {
        if token.tag == TURN_TAG && Some(token.call) == narrating {
            views.transcript.streaming.push_str(&token.text);
            // #41: a narration that crosses a line or veil stops showing as
            // it streams; the runner asks for it again or falls back.
            if let Some(turn) = &session.turn
                && turn.runner.crosses_limits(&views.transcript.streaming)
            {
                "\u{2026}".clone_into(&mut views.transcript.streaming);
                views.transcript.withheld = true;
            }
        }
    }
    if views.transcript.withheld {
        "\u{2026}".clone_into(&mut views.transcript.streaming);
    }
    // The recap or a compression that ended while a commit had the controller first.
    let arrived: Vec<LlmFinished> = std::mem::take(&mut session.deferred)
        .into_iter()
        .chain(finished.read().cloned())
        .collect();
    for done in &arrived {
        match done.tag.as_str() {
            RECAP_TAG => finish_recap(&mut session, done, &mut views),
            COMPRESS_TAG => finish_compression(&mut session, done, &mut views.log),
            TURN_TAG => deliver(&mut session, done, &mut views),
            _ => {}
        }
    }
}

/// The recap the model wrote (or could not), at the top of the sitting.
fn finish_recap(session: &mut ActiveSession, done: &LlmFinished, views: &mut ViewsMut) {
    if session.recap_call != Some(done.call) {
        return;
    }
    let Some(ctl) = session.controller() else {
        session.deferred.push(done.clone());
        return;
    };
    let text = ctl.finish_recap(text_of(&done.outcome));
    session.recap_call = None;
    if !text.is_empty() {
        views.transcript.entries.push(Entry::Recap(text));
    }
    views.progress.stage = None;
    views.progress.busy = false;
}

/// A background compression's summary, stored.
fn finish_compression(session: &mut ActiveSession, done: &LlmFinished, log: &mut DebugLog) {
    if session.compression.as_ref().map(|(id, _)| *id) != Some(done.call) {
        return;
    }
    // Still under way (so the commit that lands asks for no second one) until the controller is back.
    if session.controller.is_none() {
        session.deferred.push(done.clone());
        return;
    }
    let (Some((_, c)), Some(ctl)) = (session.compression.take(), session.controller()) else {
        return;
    };
    ctl.finish_compression(&c, text_of(&done.outcome));
    log.push(format!(
        "turns {}..={} summarised",
        c.turn_start, c.turn_end
    ));
}

/// A turn's call ended: the runner takes its answer; what it adds to the
/// page (narration, dice, the next choices) is shown at once.
fn deliver(session: &mut ActiveSession, done: &LlmFinished, views: &mut ViewsMut) {
    let Some(turn) = session.turn.as_mut() else {
        return;
    };
    let Some(id) = turn.calls.remove(&done.call) else {
        return;
    };
    let record = &done.outcome.record;
    views.log.push(format!(
        "stage {} {} in {} ms ({} tokens out)",
        record.stage,
        if done.outcome.result.is_ok() {
            "done"
        } else {
            "FAILED"
        },
        record.total.as_millis(),
        record
            .attempts
            .iter()
            .map(|a| a.usage.tokens_out)
            .sum::<u32>(),
    ));
    if turn.narrating == Some(done.call) {
        turn.narrating = None;
        views.transcript.withheld = false;
        views.transcript.speaker = None;
        views.transcript.streaming.clear();
    }
    turn.runner.deliver(id, (*done.outcome).clone());
    // What the world did, and why a move could not happen, as it happens (#41),
    // before the narration that tells it.
    for notice in turn.runner.notices().into_iter().skip(turn.notices_shown) {
        views.transcript.entries.push(Entry::Notice(notice));
        turn.notices_shown += 1;
    }
    // The narration as it will be committed (the echo cut, the kept
    // draft), in place of what streamed.
    let narrations = turn.runner.narrations();
    for text in narrations.iter().skip(turn.narrations_shown) {
        views
            .transcript
            .entries
            .push(Entry::Narration((*text).to_owned()));
    }
    turn.narrations_shown = narrations.len();
    // Dice appear as soon as the engine rolls them, before the narration they decide.
    for roll in &turn.runner.rolls()[turn.rolls_shown..] {
        views
            .transcript
            .entries
            .push(Entry::Roll(Box::new(roll.clone())));
    }
    turn.rolls_shown = turn.runner.rolls().len();
    // The next choices as soon as they are written, greyed out until the
    // turn commits (#21: the player reads on while the extractors finish).
    if views.prompt.choices.is_empty() && !turn.runner.choices().is_empty() {
        let prompt = &mut views.prompt;
        prompt.choices = turn.runner.choices().to_vec();
        prompt.choice_marks = vec![None; prompt.choices.len()];
    }
    let waiting = turn.runner.waiting_for();
    if let Some(stage) = waiting.first() {
        views.progress.stage = Some((*stage).to_owned());
    }
}

/// A prose call's text, or why it failed.
fn text_of(outcome: &crate::llm::CallOutcome) -> Result<String, String> {
    outcome
        .result
        .clone()
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .map_err(|e| e.to_string())
}

/// #21: when the session opens and after each commit or rewind, the next
/// turn's prompts are read into the model while the player reads.
fn prime_next_turn(
    mut changed: MessageReader<WorldChanged>,
    mut session: ResMut<ActiveSession>,
    gateway: Option<Res<LlmGateway>>,
) {
    if changed.read().count() == 0 {
        return;
    }
    if let (Some(gateway), Some(ctl)) = (gateway, session.controller()) {
        crate::session::play::prime(&gateway.0, &ctl.state);
    }
}
