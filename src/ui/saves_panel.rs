//! Save and load slots: six named slots plus the autosave, with story, passage and age; broken files are named, never fatal.

// The browser's clock in a web build (std's panics there); std's natively.
use web_time::{SystemTime, UNIX_EPOCH};

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::library::Library;
use super::screens::{Overlays, SavesMode, StartStory, Toasts, centered_window};
use super::stage::{Stage, slot_summary};
use crate::engine::story_player::{ActiveStory, StoryCommand};
use crate::files::data_dir;
use crate::story::StoryPackage;
use crate::story::slots::{AUTOSAVE, SlotInfo, SlotStore};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(EguiPrimaryContextPass, saves_panel);
}

const SLOTS: [&str; 6] = ["slot-1", "slot-2", "slot-3", "slot-4", "slot-5", "slot-6"];

pub(super) fn age(saved_at: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match now.saturating_sub(saved_at) {
        s if s < 60 => "just now".to_owned(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}

/// The slot list of the open panel, read from disk when the panel opens or a save lands.
#[derive(Debug, Default)]
struct Listing {
    story: String,
    mode: Option<SavesMode>,
    slots: Vec<SlotInfo>,
    broken: Vec<String>,
}

fn saves_panel(
    mut listing: Local<Listing>,
    mut contexts: EguiContexts,
    mut overlays: ResMut<Overlays>,
    active: Option<Res<ActiveStory>>,
    library: Option<Res<Library>>,
    stage: Res<Stage>,
    mut commands: MessageWriter<StoryCommand>,
    mut starts: MessageWriter<StartStory>,
    mut toasts: ResMut<Toasts>,
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
                            match mode {
                                SavesMode::Save => {
                                    let Some(active) = &active else { continue };
                                    let player = &active.player;
                                    let passage = player.story().passage(player.current());
                                    let summary = slot_summary(passage);
                                    match store.write(name, &summary, &player.save()) {
                                        Ok(_) => toasts.push("Saved"),
                                        Err(err) => toasts.push(format!("Could not save: {err}")),
                                    }
                                }
                                SavesMode::Load => match store.read(&story_id, name) {
                                    Ok(file) if active.is_some() => {
                                        commands.write(StoryCommand::Restore(Box::new(file.save)));
                                    }
                                    Ok(file) => {
                                        starts.write(StartStory {
                                            package: package.clone(),
                                            restore: Some(Box::new(file.save)),
                                        });
                                    }
                                    Err(err) => toasts.push(err.to_string()),
                                },
                            }
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
