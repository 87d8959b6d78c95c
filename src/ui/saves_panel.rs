//! Save and load slots: six named slots plus the autosave, with story, passage and age.
//!
//! Broken files are named, never fatal.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::library::Library;
use super::screens::{Overlays, SavesMode, StartStory, Toasts};
use super::stage::{Stage, slot_summary};
use super::widgets::{age, centered_window};
use crate::engine::story_player::{ActiveStory, StoryCommand};
use crate::files::data_dir;
use crate::story::StoryPackage;
use crate::story::slots::{AUTOSAVE, SlotInfo, SlotStore};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(EguiPrimaryContextPass, saves_panel);
}

/// One slot of a story's, in its store.
struct Slot<'a> {
    name: &'a str,
    store: &'a SlotStore,
    package: &'a StoryPackage,
}

/// A slot's button pressed: the story in play saved into it, or the slot
/// loaded (into the story in play, or starting it from the shelf).
fn use_slot(mode: SavesMode, slot: &Slot, active: Option<&ActiveStory>, actions: &mut SlotActions) {
    match mode {
        SavesMode::Save => {
            let Some(active) = active else { return };
            let player = &active.player;
            let passage = player.story().passage(player.current());
            let summary = slot_summary(passage);
            match slot.store.write(slot.name, &summary, &player.save()) {
                Ok(_) => actions.toasts.push("Saved"),
                Err(err) => actions.toasts.push(format!("Could not save: {err}")),
            }
        }
        SavesMode::Load => {
            let story_id = &slot.package.story.file().meta.id;
            match slot.store.read(story_id, slot.name) {
                Ok(file) if active.is_some() => {
                    actions
                        .commands
                        .write(StoryCommand::Restore(Box::new(file.save)));
                }
                Ok(file) => {
                    actions.starts.write(StartStory {
                        package: slot.package.clone(),
                        restore: Some(Box::new(file.save)),
                    });
                }
                Err(err) => actions.toasts.push(err.to_string()),
            }
        }
    }
}

const SLOTS: [&str; 6] = ["slot-1", "slot-2", "slot-3", "slot-4", "slot-5", "slot-6"];

/// The slot list of the open panel, read from disk when the panel opens or a save lands.
#[derive(Debug, Default)]
struct Listing {
    story: String,
    mode: Option<SavesMode>,
    slots: Vec<SlotInfo>,
    broken: Vec<String>,
}

/// What a slot's button starts, and where what happened is said.
#[derive(SystemParam)]
struct SlotActions<'w> {
    commands: MessageWriter<'w, StoryCommand>,
    starts: MessageWriter<'w, StartStory>,
    toasts: ResMut<'w, Toasts>,
}

/// The slots of the story in play (or selected on the shelf), to save into or load from.
fn saves_panel(
    mut listing: Local<Listing>,
    mut contexts: EguiContexts,
    mut overlays: ResMut<Overlays>,
    active: Option<Res<ActiveStory>>,
    library: Option<Res<Library>>,
    stage: Res<Stage>,
    mut actions: SlotActions,
) -> Result {
    let Some(mode) = overlays.saves else {
        listing.mode = None;
        return Ok(());
    };
    // In play the active story; on the title screen the one selected on the shelf.
    let package: Option<StoryPackage> = match &active {
        Some(active) => Some(active.package.clone()),
        None => library.as_ref().and_then(|l| l.selected().cloned()),
    };
    let Some(package) = package else {
        overlays.saves = None;
        return Ok(());
    };
    let story_id = package.story.file().meta.id.clone();
    let store = SlotStore::new(data_dir());
    if listing.mode != Some(mode) || listing.story != story_id {
        *listing = Listing {
            story: story_id.clone(),
            mode: Some(mode),
            slots: store.list(&story_id),
            broken: store
                .list_broken(&story_id)
                .iter()
                .map(ToString::to_string)
                .collect(),
        };
    }
    let (slots, broken) = (&listing.slots, &listing.broken);
    let ctx = contexts.ctx_mut()?;
    let mut open = true;
    let title = match mode {
        SavesMode::Save => "Save",
        SavesMode::Load => "Load",
    };
    let mut close = false;
    centered_window(title)
        .open(&mut open)
        .resizable(false)
        .show(ctx, |ui| {
            ui.label(egui::RichText::new(package.story.title()).weak());
            let names: Vec<&str> = match mode {
                SavesMode::Save => SLOTS.to_vec(),
                SavesMode::Load => std::iter::once(AUTOSAVE).chain(SLOTS).collect(),
            };
            egui::Grid::new("slots")
                .num_columns(3)
                .spacing([16.0, 8.0])
                .show(ui, |ui| {
                    for name in names {
                        let info: Option<&SlotInfo> = slots.iter().find(|s| s.slot == name);
                        let label = if name == AUTOSAVE {
                            "Autosave".to_owned()
                        } else {
                            name.replace("slot-", "Slot ")
                        };
                        ui.label(egui::RichText::new(label).strong());
                        match info {
                            Some(info) => {
                                ui.label(format!("{} — {}", info.summary, age(info.saved_at)))
                            }
                            None => ui.label(egui::RichText::new("empty").weak()),
                        };
                        let action = match mode {
                            SavesMode::Save => ui.add_enabled(
                                stage.passage.is_some(),
                                egui::Button::new("Save here"),
                            ),
                            SavesMode::Load => {
                                ui.add_enabled(info.is_some(), egui::Button::new("Load"))
                            }
                        };
                        if action.clicked() {
                            close = true;
                            let slot = Slot {
                                name,
                                store: &store,
                                package: &package,
                            };
                            use_slot(mode, &slot, active.as_deref(), &mut actions);
                        }
                        ui.end_row();
                    }
                });
            for err in broken {
                ui.label(
                    egui::RichText::new(format!("Unreadable: {err}"))
                        .color(egui::Color32::LIGHT_RED),
                );
            }
        });
    if close || !open {
        overlays.saves = None;
    }
    Ok(())
}
