//! The story player's codex panel (C): entities with their unlocked tiers, new ones marked.
//!
//! Tiers by rank, and how each entity stands now. Not the session's codex
//! (`ui::session::codex_window`).

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::screens::{Overlays, Screen};
use super::stage::Stage;
use super::widgets::centered_window;
use crate::engine::story_player::ActiveStory;
use crate::story::EntityIx;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(
        EguiPrimaryContextPass,
        codex_panel.run_if(in_state(Screen::Playing)),
    );
}

fn codex_panel(
    mut contexts: EguiContexts,
    mut overlays: ResMut<Overlays>,
    active: Res<ActiveStory>,
    mut stage: ResMut<Stage>,
    mut selected: Local<Option<EntityIx>>,
) -> Result {
    if !overlays.codex {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let player = &active.player;
    let story = player.story();
    let pages = player.codex();
    let viewport = ctx.viewport_rect();
    let mut open = true;
    centered_window("Codex")
        .open(&mut open)
        .fixed_size(viewport.size() * egui::vec2(0.72, 0.68))
        .show(ctx, |ui| {
            if pages.is_empty() {
                ui.label("Nothing is known yet.");
                return;
            }
            let current = selected
                .filter(|e| pages.iter().any(|p| p.entity == *e))
                .unwrap_or(pages[0].entity);
            egui::Panel::left("codex-entities")
                .exact_size(230.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| {
                        for page in &pages {
                            let entity = story.entity(page.entity);
                            let fresh = page.tiers.iter().any(|t| stage.fresh_codex.contains(t));
                            let label = if fresh {
                                format!("{}  •", entity.name)
                            } else {
                                entity.name.clone()
                            };
                            if ui.selectable_label(current == page.entity, label).clicked() {
                                *selected = Some(page.entity);
                            }
                        }
                    });
                });
            egui::CentralPanel::default().show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    let Some(page) = pages.iter().find(|p| p.entity == current) else {
                        return;
                    };
                    let entity = story.entity(page.entity);
                    ui.heading(&entity.name);
                    ui.label(egui::RichText::new(&entity.kind).weak());
                    for tier in &page.tiers {
                        let entry = story.codex_entry(*tier);
                        ui.add_space(10.0);
                        ui.horizontal(|ui| {
                            let title = entry
                                .title
                                .clone()
                                .unwrap_or_else(|| format!("Tier {}", entry.rank));
                            ui.label(egui::RichText::new(title).strong().size(19.0));
                            if stage.fresh_codex.contains(tier) {
                                ui.label(
                                    egui::RichText::new("NEW")
                                        .color(egui::Color32::GOLD)
                                        .strong(),
                                );
                            }
                        });
                        ui.add(egui::Label::new(&entry.content).wrap());
                    }
                    let details = player.entity_state(page.entity);
                    if !details.is_empty() {
                        ui.add_space(12.0);
                        ui.label(egui::RichText::new("As things stand").weak());
                        for (key, value) in details {
                            ui.add(
                                egui::Label::new(egui::RichText::new(format!("{key}: {value}")))
                                    .wrap(),
                            );
                        }
                    }
                    // Looking at a page is what makes its tiers no longer new.
                    stage.fresh_codex.retain(|t| !page.tiers.contains(t));
                });
            });
        });
    overlays.codex = open;
    Ok(())
}
