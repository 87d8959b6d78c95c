//! The controller's reports and the stored story as what the player reads, and the overlay's lines.

use std::collections::BTreeMap;

use bevy::prelude::*;
use tracing::warn;

use super::view::{Entry, Moment, TurnPrompt, ViewsMut};
use crate::session::controller::{Controller, Report};
use crate::session::turn::PERSONA;
use crate::transcript::Kind;
use crate::transcript::marker::SceneMarker;

/// The player's view of the stored story, as entries, with each turn's scene
/// (and the save slots, read again with it).
pub(super) fn show_transcript(views: &mut ViewsMut, ctl: &Controller) {
    let scenes = ctl.store().turn_scenes().unwrap_or_else(|e| {
        warn!("the backlog cannot return to earlier scenes: {e}");
        BTreeMap::new()
    });
    views.slots.0 = ctl.store().bookmarks().unwrap_or_else(|e| {
        warn!("the save slots cannot be read: {e}");
        Vec::new()
    });
    let (mut entries, mut moments) = (Vec::new(), Vec::new());
    let mut turn = None;
    for m in &ctl.state.stream.messages {
        if turn != Some(m.id.turn_id) {
            if let Some(scene) = turn.and_then(|t| scenes.get(&t))
                && !entries.is_empty()
            {
                moments.push(Moment {
                    end: entries.len(),
                    scene: *scene,
                });
            }
            turn = Some(m.id.turn_id);
        }
        match m.kind {
            Kind::Narration => entries.push(Entry::Narration(m.content.clone())),
            Kind::Intention if m.owner == PERSONA => entries.push(Entry::Intention {
                text: m.content.clone(),
                whisper_to: m.target.clone(),
            }),
            Kind::SceneMarker if m.id.turn_id > 0 => {
                entries.push(Entry::Scene(scene_words(&m.content)));
            }
            Kind::System => {
                if let Some(notice) = crate::transcript::marker::Notice::of(m) {
                    entries.push(Entry::Notice(notice));
                }
            }
            _ => {}
        }
    }
    if let Some(scene) = turn.and_then(|t| scenes.get(&t))
        && !entries.is_empty()
    {
        moments.push(Moment {
            end: entries.len(),
            scene: *scene,
        });
    }
    let transcript = &mut views.transcript;
    // A new session's opening has not been read yet.
    transcript.read_through = if ctl.scene_index() == 0 {
        0
    } else {
        entries.len()
    };
    transcript.entries = entries;
    transcript.moments = moments;
}

/// `scene_open: reedmere_quay` → "A new scene: reedmere quay".
fn scene_words(marker: &str) -> String {
    let spaced = |id: &str| id.replace('_', " ");
    match SceneMarker::parse(marker) {
        Some(SceneMarker::Close) => "The scene closes.".into(),
        Some(SceneMarker::Open(Some(place))) => format!("A new scene: {}", spaced(&place)),
        Some(SceneMarker::Open(None)) => "A new scene.".into(),
        Some(SceneMarker::Moved { from, to }) => {
            format!("Elsewhere: {} -> {}", spaced(&from), spaced(&to))
        }
        None => spaced(marker),
    }
}

/// The controller's choices and their difficulty marks, on screen.
pub(super) fn show_choices(prompt: &mut TurnPrompt, ctl: &Controller) {
    prompt.choices.clone_from(&ctl.choices);
    prompt.choice_marks = ctl
        .choice_marks
        .iter()
        .map(|m| m.as_ref().map(ToString::to_string))
        .collect();
}

/// Show a report: the turn's narrations already streamed; add its dice, choices, or the failure.
pub(super) fn present(report: &Report, ctl: &Controller, views: &mut ViewsMut) {
    views.set_scene_index(ctl.scene_index());
    match report {
        Report::Committed {
            result,
            scene_index,
            ..
        } => {
            let transcript = &mut views.transcript;
            // Dice were shown as they were rolled; narrations not streamed (a fallback) are added.
            let shown: Vec<String> = transcript
                .entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Narration(t) => Some(t.clone()),
                    _ => None,
                })
                .collect();
            for m in &result.messages {
                match m.kind {
                    Kind::Narration if !shown.contains(&m.content) => {
                        transcript.entries.push(Entry::Narration(m.content.clone()));
                    }
                    Kind::SceneMarker => transcript
                        .entries
                        .push(Entry::Scene(scene_words(&m.content))),
                    _ => {}
                }
            }
            let end = transcript.entries.len();
            transcript.moments.push(Moment {
                end,
                scene: *scene_index,
            });
            show_choices(&mut views.prompt, ctl);
            views.prompt.failure = None;
        }
        Report::Question(q) => {
            views.prompt.question = Some(q.clone());
        }
        Report::Failed(e) => {
            views.prompt.failure = Some(e.clone());
        }
        Report::NotSaved(e) => {
            views.transcript.entries.push(Entry::Note(format!(
                "The turn could not be saved ({e}); nothing of it was kept."
            )));
        }
        Report::Rewound { to, .. } => {
            show_transcript(views, ctl);
            views
                .transcript
                .entries
                .push(Entry::Note(format!("Rewound to scene {to}.")));
            show_choices(&mut views.prompt, ctl);
        }
        Report::Loaded { slot, .. } => {
            show_transcript(views, ctl);
            views.transcript.entries.push(Entry::Note(format!(
                "Loaded save slot {}.",
                slot.trim_start_matches("slot-")
            )));
            show_choices(&mut views.prompt, ctl);
        }
        Report::Saved(kept) => {
            let slots = &mut views.slots.0;
            slots.retain(|s| s.slot != kept.slot);
            slots.push(kept.clone());
            slots.sort_by(|a, b| a.slot.cmp(&b.slot));
            views
                .transcript
                .entries
                .push(Entry::Note(crate::session::controller::saved_words(kept)));
        }
        Report::Note(n) => views.transcript.entries.push(Entry::Note(n.clone())),
    }
}

/// The overlay's account of the plot beats: what this scene steers toward, what waits, what was skipped.
pub fn beat_line(state: &crate::session::turn::SessionState) -> Option<String> {
    use crate::rules::BeatStatus;
    let scene = crate::session::beats::scene_number(&state.stream);
    let mut parts = Vec::new();
    for b in &state.campaign.beats {
        match state.world.beats.get(&b.id) {
            Some(BeatStatus::Triggered { scene: s, why }) if *s == scene => {
                parts.push(format!("steering toward \"{}\" ({why})", b.title));
            }
            Some(BeatStatus::Ready { since, why }) => {
                parts.push(format!(
                    "ready since scene {since}: \"{}\" ({why})",
                    b.title
                ));
            }
            Some(BeatStatus::Skipped { scene: s, why }) if *s == scene => {
                parts.push(format!("skipped \"{}\": {why}", b.title));
            }
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| format!("beats (scene {scene}): {}", parts.join("; ")))
}

/// The overlay's account of what a turn was shown from lore and memory, with scores.
pub fn recall_lines(r: &crate::session::recalled::Recalled) -> Vec<String> {
    let mut out = vec![format!(
        "recall ({:.1} ms): {} lore chunk(s), {} tokens; {} memor{}{}",
        r.took_ms,
        r.lore.len(),
        r.lore_tokens(),
        r.memories.len(),
        if r.memories.len() == 1 { "y" } else { "ies" },
        if r.episodic_bonus {
            "; episodic +1"
        } else {
            ""
        }
    )];
    for h in &r.lore {
        out.push(format!(
            "  lore {} score {:.3} (semantic {:.3}, keywords {:.3}{})",
            h.chunk_id,
            h.score,
            h.semantic,
            h.keyword,
            if h.metadata { ", metadata" } else { "" }
        ));
    }
    for m in &r.memories {
        let summary: String = m.summary.chars().take(80).collect();
        out.push(format!(
            "  memory turn {} relevance {:.3}{}: {summary}",
            m.turn,
            m.relevance,
            if m.episodic { " (episodic)" } else { "" }
        ));
    }
    if !r.scene.is_null() {
        out.push(scene_lore_line(&r.scene));
    }
    out
}

/// The scene lore a turn was shown, counted.
fn scene_lore_line(scene: &serde_json::Value) -> String {
    let count = |k: &str| {
        scene[k]
            .as_array()
            .map(Vec::len)
            .or_else(|| scene[k].as_object().map(serde_json::Map::len))
            .unwrap_or(0)
    };
    format!(
        "  scene lore of {}: {} atmosphere, {} NPC briefing(s), {} discoverable(s), {} thread link(s)",
        scene["location_name"].as_str().unwrap_or("?"),
        count("atmosphere"),
        count("npc_briefings"),
        count("discoverable"),
        count("thread_connections"),
    )
}
