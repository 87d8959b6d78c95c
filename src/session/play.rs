//! Opening a session from a campaign, and running a turn to its end on the calling thread.
//!
//! The terminal player, the tests and the benchmarks drive turns this way.

use std::collections::BTreeMap;
use std::sync::Arc;

use crossbeam_channel::TryRecvError;

use super::skills::{SkillRun, SkillWork};
use super::turn::{Calibration, PlayerInput, SessionState, TurnError, TurnResult, TurnRunner};
use crate::campaign::{Campaign, Scenario};
use crate::llm::{CallHandle, Gateway, LlmEvent};
use crate::transcript::marker::SceneMarker;
use crate::transcript::stream::{Kind, NARRATOR, SYSTEM, Stream};

/// Why a session cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    #[error("the campaign has no scenario `{0}`")]
    NoScenario(String),
}

/// The opening state of a new session: the scenario's scene, the campaign's
/// world, and turn 0 of the stream (a scene marker and the scenario's intro).
pub fn opening(
    campaign: Arc<Campaign>,
    scenario: Option<&str>,
    small_model: &str,
    large_model: &str,
    seed: u64,
    calibration: Calibration,
) -> Result<SessionState, StartError> {
    let chosen = match scenario {
        Some(id) => Some(
            campaign
                .scenarios
                .get(id)
                .ok_or_else(|| StartError::NoScenario(id.to_owned()))?,
        ),
        None => campaign.default_scenario(),
    };
    let mut world = campaign.world.clone();
    let mut stream = Stream::default();
    let tone = session_tone(&campaign, chosen);
    if let Some(s) = chosen {
        world.scene.clone_from(&s.scene_seed);
        // #41: the time of day follows play time from the hour it opens at.
        if let Some(minute) = world
            .scene
            .get("time")
            .and_then(serde_json::Value::as_str)
            .and_then(super::turn::opening_minute)
        {
            world
                .scene
                .insert(super::turn::OPENED_AT.into(), serde_json::json!(minute));
        }
        let place = s
            .location
            .clone()
            .unwrap_or_else(|| "the opening scene".into());
        let marker = SceneMarker::Open(Some(place));
        stream.push(0, SYSTEM, Kind::SceneMarker, marker.to_string(), None);
        stream.push(0, NARRATOR, Kind::Narration, s.intro_seed.clone(), None);
    } else if let Some(premise) = campaign.prose.get("premise") {
        // The scene opens where the world starts, when it names a place.
        let place = world
            .scene
            .get("location")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        let marker = SceneMarker::Open(place);
        stream.push(0, SYSTEM, Kind::SceneMarker, marker.to_string(), None);
        stream.push(
            0,
            NARRATOR,
            Kind::Narration,
            premise.trim().to_owned(),
            None,
        );
    }
    super::people::initialise(&campaign, &mut world, super::turn::PERSONA, seed);
    // Scene 1 begins: beats whose prerequisites already hold open (nothing
    // has happened yet to bear out their story conditions).
    super::beats::transition(&campaign.beats, &mut world, 1, |_| 0.0, 1.0);
    Ok(SessionState {
        campaign,
        world,
        stream,
        observations: BTreeMap::new(),
        calibration,
        small_model: small_model.to_owned(),
        large_model: large_model.to_owned(),
        seed,
        turn_index: 0,
        play_minutes: 0.0,
        states: BTreeMap::new(),
        tone,
        recalled: crate::session::recalled::Recalled::default(),
        earlier: Vec::new(),
        summarised_through: 0,
        skills: super::skills::SessionSkills::default(),
        prompt_pins: super::pins::PromptPins::default(),
    })
}

/// The story's tone: the scenario's, else the campaign's. (What the player asked
/// for in session zero reaches every stage with the rest of the calibration.)
pub fn session_tone(campaign: &Campaign, scenario: Option<&Scenario>) -> String {
    scenario
        .map(|s| s.tone.clone())
        .filter(|t| !t.is_empty())
        .or_else(|| campaign.manifest.tone.clone())
        .unwrap_or_default()
}

/// What a blocking turn reports as it goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress<'a> {
    /// A stage started.
    Stage(&'a str),
    /// Streamed narration text.
    Token(&'a str),
}

/// Prime the model's prompt caches for the next turn of `state` while the
/// player reads ([`TurnRunner::primers`]); each receiver hears when its
/// prompt has been read (the bench waits on them, as a reading player would).
pub fn prime(gateway: &Gateway, state: &SessionState) -> Vec<crossbeam_channel::Receiver<()>> {
    TurnRunner::primers(state.clone())
        .into_iter()
        .map(|request| gateway.prime(request))
        .collect()
}

/// Run one turn to its end, making each call through `gateway` and waiting on
/// them together: calls on the model's two lanes finish in any order, and
/// streamed narration reaches `progress` as it comes.
pub fn run_turn(
    gateway: &Gateway,
    state: SessionState,
    input: PlayerInput,
    progress: impl FnMut(Progress<'_>),
) -> Result<TurnResult, TurnError> {
    let skills = state.skills.clone();
    run_turn_with(
        gateway,
        state,
        input,
        &mut |work| super::skills::run_live(&skills, work, None),
        progress,
    )
}

/// [`run_turn`], with the turn's skill plans run by `skills` (live, or
/// handed back from a recording when replaying).
pub fn run_turn_with(
    gateway: &Gateway,
    state: SessionState,
    input: PlayerInput,
    skills: &mut dyn FnMut(&SkillWork) -> SkillRun,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<TurnResult, TurnError> {
    let lanes = gateway.lanes(&state.small_model);
    let mut runner = TurnRunner::start(state, input).with_background_lane(lanes > 1);
    // Calls out: id, stage, handle, whether it has streamed.
    let mut out: Vec<(u32, String, CallHandle, bool)> = Vec::new();
    while !runner.is_finished() {
        for c in runner.take_requests() {
            progress(Progress::Stage(&c.request.stage));
            let name = c.request.stage.clone();
            out.push((c.id, name, gateway.call(c.request), false));
        }
        // Nothing else moves while a plan runs (the narrator waits on it).
        if let Some(work) = runner.take_skill_work() {
            progress(Progress::Stage("skills"));
            let run = skills(&work);
            runner.deliver_skills(run);
            continue;
        }
        if out.is_empty() {
            break;
        }
        let mut select = crossbeam_channel::Select::new();
        for (_, _, handle, _) in &out {
            select.recv(handle.events());
        }
        // Of the calls with news, the one made first (not a random one).
        let ready = select.ready();
        let i = out
            .iter()
            .position(|(_, _, h, _)| !h.events().is_empty())
            .unwrap_or(ready);
        let outcome = match out[i].2.events().try_recv() {
            Ok(LlmEvent::Token(t)) => {
                if out[i].1 == "narrate" {
                    out[i].3 = true;
                    progress(Progress::Token(&t));
                }
                continue;
            }
            Ok(LlmEvent::AttemptStarted(_)) | Err(TryRecvError::Empty) => continue,
            Ok(LlmEvent::Finished(outcome)) => *outcome,
            Err(TryRecvError::Disconnected) => out[i].2.stopped(),
        };
        let (id, called, _, streamed) = out.remove(i);
        let before = runner.narrations().len();
        runner.deliver(id, outcome);
        // Every narration the call brought is shown once: the one it streamed
        // as it came; drafts (which do not stream) and the engine's own words
        // (a blocked move, what the world did, an NPC's line) whole.
        let skip = usize::from(called == "narrate" && streamed);
        for (k, text) in runner.narrations().iter().enumerate().skip(before + skip) {
            if k > before || called != "narrate" {
                progress(Progress::Stage("narrate"));
            }
            progress(Progress::Token(text));
        }
    }
    // Calls the turn no longer waits for (a question was asked instead).
    for (_, _, handle, _) in &out {
        handle.cancel();
    }
    runner.finish()
}

/// Seed 002 §2.3.4's templates, from `prompts/fallback_narration.txt` (one per line).
pub fn fallback_templates(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// A turn narrated by a template instead of the model (DESIGN.md: "Continue with
/// fallback narration"): the persona's intention and one narration, no state change.
pub fn fallback_turn(
    state: &SessionState,
    input: &PlayerInput,
    templates: &[String],
) -> TurnResult {
    let mut stream = state.stream.clone();
    let first = stream.messages.len();
    let turn_id = state.next_turn_id();
    stream.push(
        turn_id,
        super::turn::PERSONA,
        Kind::Intention,
        input.text.clone(),
        input.whisper_to.clone(),
    );
    let template = if templates.is_empty() {
        "The story continues, though the path is unclear...".to_owned()
    } else {
        let index = usize::try_from((state.seed ^ turn_id) % templates.len() as u64).unwrap_or(0);
        templates[index].clone()
    };
    stream.push(
        turn_id,
        NARRATOR,
        Kind::Narration,
        template.replace("{input}", input.text.trim()),
        None,
    );
    TurnResult::without_model(
        state,
        stream.messages[first..].to_vec(),
        super::turn::generic_choices(),
        state.play_minutes + 1.0,
    )
}

/// `/end-scene` (an out-of-character command, never sent to a model): a turn
/// holding only the scene-close marker; the next turn opens a new scene.
pub fn end_scene_turn(state: &SessionState) -> TurnResult {
    let mut stream = state.stream.clone();
    let first = stream.messages.len();
    stream.push(
        state.next_turn_id(),
        SYSTEM,
        Kind::SceneMarker,
        SceneMarker::Close.to_string(),
        None,
    );
    TurnResult::without_model(
        state,
        stream.messages[first..].to_vec(),
        Vec::new(),
        state.play_minutes,
    )
}
