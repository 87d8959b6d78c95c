//! The backlog (H or wheel up): passages read and choices taken, rolling back to any of them.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::markdown;
use super::screens::{Overlays, Screen};
use super::widgets::backlog_window;
use crate::engine::story_player::{ActiveStory, StoryCommand};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        EguiPrimaryContextPass,
        backlog_panel.run_if(in_state(Screen::Playing)),
    );
}

fn backlog_panel(
    mut cache: Local<(String, Vec<String>)>,
    mut contexts: EguiContexts,
    mut overlays: ResMut<Overlays>,
    active: Res<ActiveStory>,
    mut commands: MessageWriter<StoryCommand>,
) -> Result {
    if !overlays.backlog {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let player = &active.player;
    let story = player.story();
    let history = player.history();
    // Plain text of each passage, parsed once, not every frame the panel is open.
    let id = &story.file().meta.id;
    if cache.0 != *id || cache.1.len() != story.passage_count() {
        *cache = (
            id.clone(),
            story
                .passages()
                .map(|p| markdown::plain(&story.passage(p).prose))
                .collect(),
        );
    }
    let texts = &cache.1;
    let mut open = true;
    let mut rollback = None;
    backlog_window(ctx, &mut open, |ui| {
        for (i, frame) in history.iter().enumerate() {
            let passage = story.passage(frame.from);
            ui.add(
                egui::Label::new(
                    egui::RichText::new(&texts[frame.from.index()])
                        .color(egui::Color32::from_gray(170)),
                )
                .wrap(),
            );
            let chose = format!("You chose: {}", passage.choices[frame.choice].label);
            ui.add(egui::Label::new(egui::RichText::new(chose).strong()).wrap());
            let steps = history.len() - i;
            if ui
                .small_button("Return here")
                .on_hover_text("Roll back to this passage")
                .clicked()
            {
                rollback = Some(steps);
            }
            ui.separator();
        }
        ui.add(egui::Label::new(&texts[player.current().index()]).wrap());
    });
    if let Some(steps) = rollback {
        commands.write(StoryCommand::Undo(steps));
        open = false;
    }
    overlays.backlog = open;
    Ok(())
}
