//! How people and factions regard the persona (the side panel's part): a bar each, named in words.

use bevy::prelude::*;
use bevy_egui::egui;

use crate::engine::session::{Character, Faction, Perception};

/// How people and factions regard the persona: a signed bar per NPC and faction, named in words.
pub(super) fn standing_panel(
    ui: &mut egui::Ui,
    people: &Query<(&Character, &Perception)>,
    factions: &Query<&Faction>,
) {
    let mut rows: Vec<(String, f64)> = people.iter().map(|(c, p)| (c.name.clone(), p.0)).collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    if !rows.is_empty() {
        ui.heading("How they see you");
        for (name, score) in rows {
            standing_row(ui, &name, score);
        }
    }
    let mut rows: Vec<(String, f64)> = factions
        .iter()
        .map(|f| (f.name.clone(), f.reputation))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    if !rows.is_empty() {
        ui.add_space(8.0);
        ui.heading("Reputation");
        for (name, score) in rows {
            standing_row(ui, &name, score);
        }
    }
}

fn standing_row(ui: &mut egui::Ui, name: &str, score: f64) {
    let word = crate::rules::standing::label(score);
    let colour = match word {
        "devoted" | "warm" => egui::Color32::from_rgb(120, 190, 130),
        "neutral" => egui::Color32::from_rgb(170, 170, 160),
        _ => egui::Color32::from_rgb(210, 110, 100),
    };
    ui.label(format!("{name}: {word} ({score:+.0})"));
    #[expect(clippy::cast_possible_truncation, reason = "a bar fraction")]
    let fraction = ((score + 100.0) / 200.0).clamp(0.0, 1.0) as f32;
    ui.add(
        egui::ProgressBar::new(fraction)
            .fill(colour)
            .desired_height(6.0),
    );
}
