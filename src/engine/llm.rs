//! The model gateway in the ECS: systems start calls through [`LlmCalls`], a
//! system polls them every frame (never blocking it) and turns what arrives into
//! [`LlmToken`] and [`LlmFinished`] messages; [`LlmMonitor`] keeps the live
//! stream and the latest call records for the debug overlay.

use std::collections::VecDeque;
use std::sync::Arc;

use bevy::prelude::*;

use crate::llm::{
    AttemptKind, CallHandle, CallOutcome, CallRecord, CallRequest, Gateway, LlmEvent,
};

pub(super) fn plugin(app: &mut App) {
    app.add_message::<LlmToken>()
        .add_message::<LlmFinished>()
        .init_resource::<LlmCalls>()
        .init_resource::<LlmMonitor>()
        .add_systems(PreUpdate, poll_calls.in_set(LlmSystems::Poll));
}

/// The system set that polls model calls (in `PreUpdate`, so `Update` sees this frame's messages).
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum LlmSystems {
    Poll,
}

/// The gateway the game calls models through.
#[derive(Resource, Clone, Debug)]
pub struct LlmGateway(pub Arc<Gateway>);

/// Calls in flight, each with the tag its caller gave it.
#[derive(Resource, Debug, Default)]
pub struct LlmCalls {
    pending: Vec<(String, CallHandle)>,
}

impl LlmCalls {
    /// Starts a call; its messages carry `tag` and the returned call id.
    pub fn start(
        &mut self,
        gateway: &Gateway,
        tag: impl Into<String>,
        request: CallRequest,
    ) -> u64 {
        let handle = gateway.call(request);
        let id = handle.id;
        self.pending.push((tag.into(), handle));
        id
    }

    /// Cancels every call in flight (their [`LlmFinished`] still arrives).
    pub fn cancel_all(&self) {
        for (_, handle) in &self.pending {
            handle.cancel();
        }
    }

    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }
}

/// Streamed text of a call.
#[derive(Message, Debug, Clone)]
pub struct LlmToken {
    pub call: u64,
    pub tag: String,
    pub text: String,
}

/// A call ended: its result and record.
#[derive(Message, Debug, Clone)]
pub struct LlmFinished {
    pub call: u64,
    pub tag: String,
    pub outcome: Arc<CallOutcome>,
}

/// How many finished calls the monitor keeps.
const KEEP_RECORDS: usize = 8;
/// How much streamed text the monitor keeps (the tail is what a viewer reads).
const KEEP_LIVE_CHARS: usize = 600;

/// What the debug overlay shows about models.
#[derive(Resource, Debug, Default)]
pub struct LlmMonitor {
    /// The call streaming now: its stage, attempt and text so far (tail).
    pub live: Option<LiveCall>,
    /// The latest finished calls, newest last.
    pub recent: VecDeque<CallRecord>,
}

/// The streaming call.
#[derive(Debug, Clone)]
pub struct LiveCall {
    pub call: u64,
    pub stage: String,
    pub attempt: AttemptKind,
    pub text: String,
}

impl LlmMonitor {
    fn stream(&mut self, call: u64, stage: &str, text: &str) {
        let live = self.live.get_or_insert_with(|| LiveCall {
            call,
            stage: stage.to_owned(),
            attempt: AttemptKind::First,
            text: String::new(),
        });
        if live.call != call {
            *live = LiveCall {
                call,
                stage: stage.to_owned(),
                attempt: AttemptKind::First,
                text: String::new(),
            };
        }
        live.text.push_str(text);
        let excess = live.text.chars().count().saturating_sub(KEEP_LIVE_CHARS);
        if excess > 0 {
            let cut = live.text.char_indices().nth(excess).map_or(0, |(i, _)| i);
            live.text.drain(..cut);
        }
    }
}

fn poll_calls(
    mut calls: ResMut<LlmCalls>,
    mut monitor: ResMut<LlmMonitor>,
    mut tokens: MessageWriter<LlmToken>,
    mut finished: MessageWriter<LlmFinished>,
) {
    let mut done = Vec::new();
    for (index, (tag, handle)) in calls.pending.iter().enumerate() {
        for event in handle.poll() {
            match event {
                LlmEvent::AttemptStarted(kind) => {
                    monitor.live = Some(LiveCall {
                        call: handle.id,
                        stage: handle.stage.clone(),
                        attempt: kind,
                        text: String::new(),
                    });
                }
                LlmEvent::Token(text) => {
                    monitor.stream(handle.id, &handle.stage, &text);
                    tokens.write(LlmToken {
                        call: handle.id,
                        tag: tag.clone(),
                        text,
                    });
                }
                LlmEvent::Finished(outcome) => {
                    if monitor.recent.len() == KEEP_RECORDS {
                        monitor.recent.pop_front();
                    }
                    monitor.recent.push_back(outcome.record.clone());
                    if monitor.live.as_ref().is_some_and(|l| l.call == handle.id) {
                        monitor.live = None;
                    }
                    finished.write(LlmFinished {
                        call: handle.id,
                        tag: tag.clone(),
                        outcome: Arc::from(outcome),
                    });
                    done.push(index);
                }
            }
        }
    }
    for index in done.into_iter().rev() {
        calls.pending.swap_remove(index);
    }
}
