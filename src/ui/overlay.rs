//! The debug overlay (F12) for streamers: passage, codewords, hidden choices, engine messages.
//!
//! It also shows the frame time. Other parts of the engine add to it by
//! writing [`DebugLine`] messages under a section name; model calls appear
//! from [`LlmMonitor`]: the text streaming now and the latest call records
//! (stage, prompt, model, tokens, cache, timings).

use std::collections::VecDeque;

use bevy::diagnostic::{DiagnosticsStore, FrameTimeDiagnosticsPlugin};
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::screens::{Overlays, UiLayout, UiSystems, root_ui};
use super::settings::Settings;
use crate::engine::llm::LlmMonitor;
use crate::engine::story_player::{
    ActiveStory, CodexUnlocked, PresentPassage, StoryCommand, StoryNotice,
};
use crate::story::Availability;

pub(super) fn plugin(app: &mut App) {
    app.add_message::<DebugLine>()
        .init_resource::<EngineLog>()
        .add_systems(
            Update,
            (
                toggle_overlay,
                record_messages.in_set(UiSystems::Receive),
                reserve_space,
            ),
        )
        .add_systems(EguiPrimaryContextPass, debug_overlay);
}

/// A line for the overlay, under a section heading.
#[derive(Message, Debug, Clone)]
pub struct DebugLine {
    pub section: &'static str,
    pub text: String,
}

/// Recent engine messages, newest last.
#[derive(Resource, Debug, Default)]
pub struct EngineLog(VecDeque<(&'static str, String)>);

const KEEP: usize = 14;
const DOCK_WIDTH: f32 = 360.0;

impl EngineLog {
    fn push(&mut self, section: &'static str, text: String) {
        if self.0.len() == KEEP {
            self.0.pop_front();
        }
        self.0.push_back((section, text));
    }
}

fn toggle_overlay(keys: Res<ButtonInput<KeyCode>>, mut overlays: ResMut<Overlays>) {
    if keys.just_pressed(KeyCode::F12) {
        overlays.debug = !overlays.debug;
    }
}

fn record_messages(
    mut log: ResMut<EngineLog>,
    mut commands: MessageReader<StoryCommand>,
    mut presented: MessageReader<PresentPassage>,
    mut unlocked: MessageReader<CodexUnlocked>,
    mut notices: MessageReader<StoryNotice>,
    mut lines: MessageReader<DebugLine>,
    active: Option<Res<ActiveStory>>,
) {
    for command in commands.read() {
        let text = match command {
            StoryCommand::Restore(doc) => format!("Restore (at {})", doc.passage),
            other => format!("{other:?}"),
        };
        log.push("command", text);
    }
    if let Some(active) = &active {
        let story = &active.package.story;
        for present in presented.read() {
            log.push("present", story.passage(present.passage).id.clone());
        }
        for CodexUnlocked(tiers) in unlocked.read() {
            for &t in tiers {
                log.push("codex", story.codex_entry(t).id.clone());
            }
        }
    }
    for StoryNotice(text) in notices.read() {
        log.push("notice", text.clone());
    }
    for line in lines.read() {
        log.push(line.section, line.text.clone());
    }
}

fn reserve_space(overlays: Res<Overlays>, settings: Res<Settings>, mut layout: ResMut<UiLayout>) {
    let right = if overlays.debug && settings.streamer_layout {
        DOCK_WIDTH
    } else {
        0.0
    };
    layout.set_if_neq_right(right);
}

/// An overlay line: monospace, streamer-readable.
fn mono(text: String) -> egui::RichText {
    egui::RichText::new(text).monospace().size(15.0)
}

fn debug_overlay(
    mut contexts: EguiContexts,
    overlays: Res<Overlays>,
    settings: Res<Settings>,
    log: Res<EngineLog>,
    active: Option<Res<ActiveStory>>,
    diagnostics: Res<DiagnosticsStore>,
    models: Res<LlmMonitor>,
    session: Option<Res<crate::engine::session::DebugLog>>,
) -> Result {
    if !overlays.debug {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?.clone();
    let frame_ms = diagnostics
        .get(&FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(bevy::diagnostic::Diagnostic::smoothed)
        .unwrap_or(0.0);
    let body = |ui: &mut egui::Ui| {
        ui.label(mono(format!("frame {frame_ms:.1} ms")));
        if let Some(active) = &active {
            let player = &active.player;
            let story = player.story();
            ui.label(mono(format!(
                "passage {}",
                story.passage(player.current()).id
            )));
            let held: Vec<&str> = player.held().iter().map(|c| story.codeword_id(c)).collect();
            ui.label(mono(format!(
                "codewords {}",
                if held.is_empty() {
                    "—".to_owned()
                } else {
                    held.join(", ")
                }
            )));
            for view in player.choices() {
                if let Availability::Hidden { missing } = &view.availability {
                    let needs: Vec<&str> = missing.iter().map(|&c| story.codeword_id(c)).collect();
                    ui.label(mono(format!(
                        "hidden \"{}\": needs {}",
                        view.choice.label,
                        needs.join(", ")
                    )));
                }
            }
        }
        if let Some(budget) = session.as_ref().and_then(|v| v.budget.as_ref()) {
            ui.separator();
            turn_timeline(ui, budget);
        }
        ui.separator();
        for (section, text) in &log.0 {
            ui.label(mono(format!("{section:>8} {text}")));
        }
        if models.live.is_some() || !models.recent.is_empty() {
            ui.separator();
            for record in &models.recent {
                ui.label(mono(format!("   model {}", record.summary())));
            }
            if let Some(live) = &models.live {
                ui.label(mono(format!(
                    "  stream {} ({:?}) {}",
                    live.stage, live.attempt, live.text
                )));
            }
        }
    };
    let frame = egui::Frame::new()
        .fill(egui::Color32::from_rgba_unmultiplied(0, 0, 0, 210))
        .inner_margin(10.0)
        .stroke(egui::Stroke::new(
            1.0,
            egui::Color32::from_rgb(90, 200, 120),
        ));
    if settings.streamer_layout {
        let viewport = ctx.viewport_rect();
        let strip = egui::Rect::from_min_max(
            egui::pos2(viewport.max.x - DOCK_WIDTH, viewport.min.y),
            viewport.max,
        );
        let mut ui = root_ui(&ctx, "debug-dock", strip);
        frame.show(&mut ui, |ui| {
            ui.set_min_size(strip.size() - egui::vec2(20.0, 20.0));
            egui::ScrollArea::vertical().show(ui, body);
        });
    } else {
        egui::Area::new(egui::Id::new("debug-float"))
            .anchor(egui::Align2::RIGHT_TOP, [-12.0, 44.0])
            .order(egui::Order::Foreground)
            .show(&ctx, |ui| {
                frame.show(ui, |ui| {
                    ui.set_max_width(420.0);
                    body(ui);
                });
            });
    }
    Ok(())
}

/// The last turn's model calls on one time axis: a bar per call from its
/// start to its end, brighter from its first token, the player's first words
/// and the choices marked.
fn turn_timeline(ui: &mut egui::Ui, budget: &crate::session::budget::TurnBudget) {
    ui.label(mono(format!("turn {}", budget.summary())));
    let total = budget.ready_ms.max(1.0);
    let width = ui.available_width().clamp(200.0, 400.0);
    let label_w = 110.0;
    let row = 14.0;
    #[expect(
        clippy::cast_precision_loss,
        reason = "a turn makes a few dozen calls at most"
    )]
    let rows = row * budget.spans.len() as f32;
    let height = rows + 18.0;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, height), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let bar_w = width - label_w - 4.0;
    #[expect(clippy::cast_possible_truncation, reason = "a screen coordinate")]
    let x = |ms: f64| rect.min.x + label_w + (ms / total) as f32 * bar_w;
    let font = egui::FontId::monospace(11.0);
    let dim = egui::Color32::from_rgb(70, 110, 150);
    let lit = egui::Color32::from_rgb(110, 200, 240);
    for (i, span) in budget.spans.iter().enumerate() {
        #[expect(clippy::cast_precision_loss, reason = "a row index")]
        let y = rect.min.y + row * i as f32;
        painter.text(
            egui::pos2(rect.min.x, y),
            egui::Align2::LEFT_TOP,
            &span.stage,
            font.clone(),
            egui::Color32::LIGHT_GRAY,
        );
        // Dim while the model reads the prompt, bright while it writes.
        let prompt_bar = egui::Rect::from_min_max(
            egui::pos2(x(span.start_ms), y + 2.0),
            egui::pos2(
                x(span.first_token_ms).max(x(span.start_ms) + 1.0),
                y + row - 2.0,
            ),
        );
        let answer_bar = egui::Rect::from_min_max(
            egui::pos2(x(span.first_token_ms), y + 2.0),
            egui::pos2(
                x(span.end_ms).max(x(span.first_token_ms) + 1.0),
                y + row - 2.0,
            ),
        );
        painter.rect_filled(prompt_bar, 1.0, dim);
        painter.rect_filled(answer_bar, 1.0, lit);
    }
    let axis = rect.min.y + rows + 2.0;
    for (ms, mark, colour) in [
        (
            budget.first_narration_ms,
            "words",
            egui::Color32::from_rgb(120, 220, 130),
        ),
        (
            budget.choices_ms,
            "choices",
            egui::Color32::from_rgb(240, 200, 90),
        ),
    ] {
        if let Some(ms) = ms {
            painter.vline(x(ms), rect.min.y..=axis, egui::Stroke::new(1.0, colour));
            painter.text(
                egui::pos2(x(ms), axis),
                egui::Align2::CENTER_TOP,
                mark,
                font.clone(),
                colour,
            );
        }
    }
}
