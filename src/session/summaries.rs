//! Stream compression and the "Previously…" recap of a save (seed 004, seed 001).

use super::turn::vars::{RecapVars, to_value};
use super::turn::{PERSONA, SessionState};
use crate::llm::CallRequest;
use crate::store::{Store, Summary};
use crate::transcript::stream::{Kind, player_view};

/// How many narrations a recap reads at most.
const RECAP_EVENTS: usize = 12;

/// Seed 004 stream summarisation: once more than this many turns of the
/// branch are unsummarised, the oldest of them are compressed…
pub const COMPRESS_AFTER: usize = 12;
/// …all but the most recent this many, which the narrator keeps verbatim.
pub const KEEP_VERBATIM: usize = 6;

/// A pending compression of turns `turn_start..=turn_end` into one summary.
#[derive(Clone, Debug)]
pub struct Compression {
    pub request: CallRequest,
    pub turn_start: u64,
    pub turn_end: u64,
}

/// The `summaries.scope` of stream compression.
pub const COMPRESSION_SCOPE: &str = "compression";

/// The player character's name, as the recap calls them.
fn persona_name(state: &SessionState) -> String {
    state
        .campaign
        .characters
        .get(PERSONA)
        .map_or_else(|| "the player".to_owned(), |c| c.name.clone())
}

/// Seed 004 stream summarisation: when more than [`COMPRESS_AFTER`] turns
/// of the state's branch are unsummarised, the call that compresses all but
/// the last [`KEEP_VERBATIM`] of them into one summary (the `recap` stage).
pub fn compression_request(state: &SessionState) -> Option<Compression> {
    let through = state.summarised_through;
    let mut turns: Vec<u64> = state
        .stream
        .messages
        .iter()
        .map(|m| m.id.turn_id)
        .filter(|&t| t > through && t > 0)
        .collect();
    turns.dedup();
    if turns.len() <= COMPRESS_AFTER {
        return None;
    }
    let old = &turns[..turns.len() - KEEP_VERBATIM];
    let (turn_start, turn_end) = (*old.first()?, *old.last()?);
    let events: Vec<String> = state
        .stream
        .messages
        .iter()
        .filter(|m| {
            (turn_start..=turn_end).contains(&m.id.turn_id)
                && matches!(m.kind, Kind::Narration | Kind::SceneMarker)
        })
        .map(|m| m.content.clone())
        .collect();
    let vars = RecapVars {
        calibration: state.calibration.clone(),
        persona: persona_name(state),
        summaries: state.earlier.clone(),
        events,
    };
    let request = state.pinned(CallRequest::new(
        "recap",
        &state.small_model,
        to_value(&vars),
    ));
    Some(Compression {
        request,
        turn_start,
        turn_end,
    })
}

/// Store a compression's summary (of the scene `scene_id`); from the next
/// turn the narrator reads it instead of those turns. A failed call changes
/// nothing (it is tried again after the next turn).
pub fn finish_compression(
    store: &Store,
    state: &mut SessionState,
    scene_id: &str,
    c: &Compression,
    written: Result<String, String>,
) {
    let guard = state.calibration.guard();
    let text = match written.map(|t| t.trim().to_owned()) {
        // #41: a summary over a line or veil would reach every later prompt.
        Ok(t) if guard.check(&t).is_some() => {
            tracing::warn!("a stream summary met the player's lines or veils and was not kept");
            return;
        }
        Ok(t) if !t.is_empty() => t,
        Ok(_) => return,
        Err(e) => {
            tracing::warn!("stream summarisation failed (the story continues uncompressed): {e}");
            return;
        }
    };
    let summary = Summary {
        scope: COMPRESSION_SCOPE.into(),
        scope_id: scene_id.to_owned(),
        text,
        turn_start: i64::try_from(c.turn_start).unwrap_or(i64::MAX),
        turn_end: i64::try_from(c.turn_end).unwrap_or(i64::MAX),
    };
    if let Err(e) = store.add_summary(&summary) {
        tracing::warn!("a summary could not be saved: {e}");
        return;
    }
    load_summaries(store, state);
}

/// The narrations the player has read, oldest first.
fn narrations(
    state: &SessionState,
) -> impl DoubleEndedIterator<Item = &crate::transcript::stream::Message> {
    player_view(&state.stream.messages, PERSONA, false)
        .into_iter()
        .filter(|m| m.kind == Kind::Narration)
}

/// The model call that writes a sitting's "Previously…", when there is a past to recap.
pub fn recap_request(store: &Store, state: &SessionState) -> Option<CallRequest> {
    let summaries = store.summaries().ok()?;
    let since = u64::try_from(summaries.last().map_or(0, |s| s.turn_end)).unwrap_or(0);
    let events: Vec<String> = narrations(state)
        .filter(|m| m.id.turn_id > since)
        .map(|m| m.content.clone())
        .collect();
    if state.turn_index == 0 || (events.len() <= 1 && summaries.is_empty()) {
        return None;
    }
    let vars = RecapVars {
        calibration: state.calibration.clone(),
        persona: persona_name(state),
        summaries: summaries.into_iter().map(|s| s.text).collect(),
        events: events[events.len().saturating_sub(RECAP_EVENTS)..].to_vec(),
    };
    Some(
        state.pinned(
            CallRequest::new("recap", &state.small_model, to_value(&vars))
                .seed(u32::try_from(state.seed & 0xFFFF_FFFF).unwrap_or(0)),
        ),
    )
}

/// Keep the recap the model wrote for play session `sitting` (it also
/// summarises the turns since the last summary); when the model failed,
/// recap from the last narration and store no summary. Returns the text to show.
pub fn finish_recap(
    store: &mut Store,
    state: &SessionState,
    sitting: i64,
    written: Result<String, String>,
) -> String {
    let previous_end = store
        .summaries()
        .ok()
        .and_then(|s| s.last().map(|s| s.turn_end))
        .unwrap_or(0);
    // Summaries cover turn ids (submissions), like the messages they summarise.
    let last_turn = i64::try_from(state.stream.next_turn().saturating_sub(1)).unwrap_or(i64::MAX);
    // #41: a recap over the player's lines or veils is not shown (the last
    // narration, which was checked, stands in for it) nor kept.
    let guard = state.calibration.guard();
    let written = written.and_then(|t| match guard.check(&t) {
        Some(crossing) => Err(format!("the recap met {}", crossing.label())),
        None => Ok(t),
    });
    let (text, summary) = match written.map(|t| t.trim().to_owned()) {
        Ok(text) if !text.is_empty() => {
            let summary = Summary {
                scope: "play_session".into(),
                scope_id: sitting.to_string(),
                text: text.clone(),
                turn_start: previous_end + 1,
                turn_end: last_turn,
            };
            (text, Some(summary))
        }
        _ => {
            let last = narrations(state)
                .next_back()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            (last, None)
        }
    };
    if let Err(e) = store.record_recap(sitting, &text, summary.as_ref()) {
        tracing::warn!("the recap was shown but not saved: {e}");
    }
    text
}

/// The compression summaries of the branch the state is on: those whose last
/// turn is in the state's stream (a rewound-away branch's are not).
pub fn load_summaries(store: &Store, state: &mut SessionState) {
    load_summaries_until(store, state, i64::MAX);
}

/// [`load_summaries`] as the turn after scene `scene_index` read them: only
/// the summaries made at that scene or before it (replay of an older turn).
pub fn load_summaries_until(store: &Store, state: &mut SessionState, scene_index: i64) {
    let on_branch = |t: i64| {
        u64::try_from(t).is_ok_and(|t| state.stream.messages.iter().any(|m| m.id.turn_id == t))
    };
    let made_by_then = |s: &Summary| {
        scene_index == i64::MAX
            || store
                .scene(&s.scope_id)
                .is_ok_and(|made| made.scene_index <= scene_index)
    };
    let summaries: Vec<Summary> = store
        .summaries()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.scope == COMPRESSION_SCOPE && on_branch(s.turn_end) && made_by_then(s))
        .collect();
    state.summarised_through = summaries
        .iter()
        .filter_map(|s| u64::try_from(s.turn_end).ok())
        .max()
        .unwrap_or(0);
    state.earlier = summaries.into_iter().map(|s| s.text).collect();
}
