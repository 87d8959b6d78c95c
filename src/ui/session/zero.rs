//! Session zero on the title screen: tone, difficulty, lines and veils, then the new save opens.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::launch::{CampaignEntry, Campaigns, Enriching, OpenSession, gateway_or_start};
use crate::engine::llm::LlmGateway;
use crate::session::save_files::{NewSave, create_save, load_campaign};
use crate::session::turn::Calibration;
use crate::ui::screens::{Screen, Targets, Toasts};
use crate::ui::widgets::centered_window;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<SessionZero>().add_systems(
        EguiPrimaryContextPass,
        session_zero_window.run_if(in_state(Screen::Title)),
    );
}

/// Session zero's dialog on the title screen.
#[derive(Resource, Debug, Default)]
pub struct SessionZero {
    /// The campaign being set up (index into [`Campaigns`]).
    pub open: Option<usize>,
    tone: String,
    difficulty: String,
    /// Per content warning: 0 fine, 1 veil, 2 line.
    choices: Vec<u8>,
    more_lines: String,
}

impl SessionZero {
    pub fn begin(&mut self, index: usize, warnings: usize) {
        *self = Self {
            open: Some(index),
            difficulty: "standard".into(),
            choices: vec![0; warnings],
            ..Self::default()
        };
    }

    /// What the player asked for, as the session's calibration.
    fn calibration(&self, warnings: &[String]) -> Calibration {
        let mut calibration = Calibration {
            tone: self.tone.trim().to_owned(),
            difficulty: self.difficulty.clone(),
            ..Calibration::default()
        };
        for (warning, choice) in warnings.iter().zip(&self.choices) {
            match choice {
                1 => calibration.veils.push(warning.clone()),
                2 => calibration.lines.push(warning.clone()),
                _ => {}
            }
        }
        calibration.lines.extend(
            self.more_lines
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        calibration
    }
}

/// The dialog; Begin makes the save (enriching a sparse campaign first) and opens it.
fn session_zero_window(
    mut contexts: EguiContexts,
    mut zero: ResMut<SessionZero>,
    campaigns: Res<Campaigns>,
    mut opens: MessageWriter<OpenSession>,
    mut toasts: ResMut<Toasts>,
    gateway: Option<Res<LlmGateway>>,
    mut commands: Commands,
    mut targets: ResMut<Targets>,
) -> Result {
    let Some(index) = zero.open else {
        return Ok(());
    };
    let Some(campaign) = campaigns.0.get(index) else {
        zero.open = None;
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?.clone();
    let mut begin = false;
    let mut cancel = false;
    centered_window(&format!("Session zero — {}", campaign.title)).show(&ctx, |ui| {
        zero_form(ui, &mut zero, campaign);
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            let go = ui.button("Begin");
            targets.note("begin-session", go.rect);
            begin = go.clicked();
            cancel = ui.button("Cancel").clicked();
        });
    });
    if cancel {
        zero.open = None;
    }
    if !begin {
        return Ok(());
    }
    let new = NewSave {
        campaign: campaign.dir.clone(),
        save: None,
        scenario: None,
        seed: None,
        small_model: "local-small".into(),
        large_model: "local-large".into(),
        calibration: zero.calibration(&campaign.warnings),
    };
    zero.open = None;
    // A sparse campaign is enriched first; the save is made when that is done.
    match load_campaign(&campaign.dir) {
        Ok(c) if c.is_sparse() => {
            match gateway_or_start(gateway.as_deref(), &mut commands) {
                Ok(g) => {
                    let title = campaign.title.clone();
                    commands.insert_resource(Enriching::start(&g, &c, new, title));
                }
                Err(e) => toasts.push(format!("The models cannot start: {e}")),
            }
            return Ok(());
        }
        Ok(_) => {}
        Err(e) => {
            toasts.push(format!("Cannot start: {e}"));
            return Ok(());
        }
    }
    match create_save(&new) {
        Ok((save, _)) => {
            opens.write(OpenSession {
                save,
                model_script: None,
                model_pace_ms: 0,
            });
        }
        Err(e) => toasts.push(format!("Cannot start: {e}")),
    }
    Ok(())
}

/// Tone, difficulty, and per content warning: fine, veil or line.
fn zero_form(ui: &mut egui::Ui, zero: &mut SessionZero, campaign: &CampaignEntry) {
    ui.label("Before the story starts, tell it what you want and what you don't.");
    ui.add_space(8.0);
    ui.horizontal(|ui| {
        ui.label("Tone");
        ui.add(
            egui::TextEdit::singleline(&mut zero.tone)
                .hint_text("the campaign's own; or a few words"),
        );
    });
    ui.horizontal(|ui| {
        ui.label("Difficulty");
        for d in ["gentle", "standard", "hard"] {
            if ui.selectable_label(zero.difficulty == d, d).clicked() {
                d.clone_into(&mut zero.difficulty);
            }
        }
    });
    ui.add_space(8.0);
    ui.label(egui::RichText::new("Content in this campaign").strong());
    egui::Grid::new("warnings").show(ui, |ui| {
        for (i, warning) in campaign.warnings.iter().enumerate() {
            ui.label(warning);
            for (value, label) in [(0u8, "fine"), (1, "veil (off-screen)"), (2, "line (never)")] {
                if ui
                    .selectable_label(zero.choices[i] == value, label)
                    .clicked()
                {
                    zero.choices[i] = value;
                }
            }
            ui.end_row();
        }
    });
    ui.horizontal(|ui| {
        ui.label("Also never");
        ui.add(egui::TextEdit::singleline(&mut zero.more_lines).hint_text("comma-separated"));
    });
}
