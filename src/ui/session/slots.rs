//! A session's save slots window: six slots beside the autosave, saving here or loading from one.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::reader::SessionReader;
use crate::engine::session::{SaveSlots, SceneView, SessionInput, TurnProgress, TurnPrompt};
use crate::session::commands::SAVE_SLOTS;
use crate::ui::screens::{SavesMode, Screen};
use crate::ui::widgets::{age, centered_window};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        EguiPrimaryContextPass,
        session_slots.run_if(in_state(Screen::Session)),
    );
}

/// Save slots of a session: six beside the autosave (the save file itself,
/// written every turn). Saving keeps the scene the story stands at; loading
/// branches from a kept scene, so what was played since is never lost.
fn session_slots(
    mut contexts: EguiContexts,
    mut reader: ResMut<SessionReader>,
    (scene, slots): (Res<SceneView>, Res<SaveSlots>),
    (progress, prompt): (Res<TurnProgress>, Res<TurnPrompt>),
    mut inputs: MessageWriter<SessionInput>,
) -> Result {
    let Some(mode) = reader.slots else {
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?;
    let mut open = true;
    let mut line = None;
    let title = match mode {
        SavesMode::Save => "Save",
        SavesMode::Load => "Load",
    };
    centered_window(title)
        .open(&mut open)
        .resizable(false)
        .show(ctx, |ui| {
            ui.label(egui::RichText::new(&scene.title).weak());
            ui.label(
                egui::RichText::new(
                    "The autosave is the session itself, kept after every turn. \
                     Loading a slot goes on from its scene; what came after stays saved.",
                )
                .weak()
                .small(),
            );
            egui::Grid::new("session-slots")
                .num_columns(3)
                .spacing([16.0, 8.0])
                .show(ui, |ui| {
                    for n in 1..=SAVE_SLOTS {
                        let name = format!("slot-{n}");
                        let kept = slots.0.iter().find(|s| s.slot == name);
                        ui.label(egui::RichText::new(format!("Slot {n}")).strong());
                        match kept {
                            Some(b) => ui.label(format!("{} — {}", b.summary, age(b.saved_at))),
                            None => ui.label(egui::RichText::new("empty").weak()),
                        };
                        let action = match mode {
                            SavesMode::Save => ui.add_enabled(
                                !progress.busy && prompt.failure.is_none(),
                                egui::Button::new("Save here"),
                            ),
                            SavesMode::Load => ui.add_enabled(
                                kept.is_some() && !progress.busy,
                                egui::Button::new("Load"),
                            ),
                        };
                        if action.clicked() {
                            line = Some(match mode {
                                SavesMode::Save => format!("/save {n}"),
                                SavesMode::Load => format!("/load {n}"),
                            });
                        }
                        ui.end_row();
                    }
                });
        });
    if let Some(line) = line {
        inputs.write(SessionInput(line));
        open = false;
    }
    if !open {
        reader.slots = None;
    }
    Ok(())
}
