//! The author preview sidebar (`loreloom preview`): jump anywhere, set codewords, see problems.
//!
//! It shows why choices hide, every codex tier and every picture.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::options::GuiOptions;
use super::screens::{Screen, UiLayout, root_ui};
use crate::engine::story_player::{ActiveStory, StoryCommand};
use crate::story::{Availability, CodexIx, Diagnostic, Player, Severity, Story, Subject, validate};

pub(super) fn plugin(app: &mut App) {
    app.add_systems(OnEnter(Screen::Playing), (validate_story, reserve_sidebar))
        .add_systems(
            EguiPrimaryContextPass,
            author_sidebar.run_if(in_state(Screen::Playing)),
        );
}

const WIDTH: f32 = 380.0;

/// Validation findings for the story being previewed.
#[derive(Resource, Debug, Default)]
struct Problems(Vec<Diagnostic>);

fn validate_story(mut commands: Commands, options: Res<GuiOptions>, active: Res<ActiveStory>) {
    if options.preview {
        commands.insert_resource(Problems(validate(&active.package.story).diagnostics));
    }
}

fn reserve_sidebar(options: Res<GuiOptions>, mut layout: ResMut<UiLayout>) {
    layout.left = if options.preview { WIDTH } else { 0.0 };
}

fn passage_of(subject: &Subject) -> Option<&str> {
    match subject {
        Subject::Passage(id) | Subject::Choice { passage: id, .. } => Some(id),
        _ => None,
    }
}

fn author_sidebar(
    mut contexts: EguiContexts,
    options: Res<GuiOptions>,
    active: Res<ActiveStory>,
    problems: Option<Res<Problems>>,
    mut commands: MessageWriter<StoryCommand>,
    mut filter: Local<String>,
) -> Result {
    if !options.preview {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?.clone();
    let viewport = ctx.viewport_rect();
    let strip = egui::Rect::from_min_max(
        viewport.min,
        egui::pos2(viewport.min.x + WIDTH, viewport.max.y),
    );
    let mut ui = root_ui(&ctx, "author", strip);
    let player = &active.player;
    egui::Frame::new()
        .fill(egui::Color32::from_rgb(24, 26, 34))
        .inner_margin(10.0)
        .show(&mut ui, |ui| {
            ui.set_min_size(strip.size() - egui::vec2(20.0, 20.0));
            ui.heading("Author preview");
            egui::ScrollArea::vertical().show(ui, |ui| {
                if let Some(problems) = &problems {
                    problems_section(ui, problems, player.story(), &mut commands);
                }
                choices_section(ui, player);
                codewords_section(ui, player, &mut commands);
                egui::CollapsingHeader::new("Passages").show(ui, |ui| {
                    let story = player.story();
                    ui.add(egui::TextEdit::singleline(&mut *filter).hint_text("filter"));
                    for p in story.passages() {
                        let id = &story.passage(p).id;
                        if !filter.is_empty() && !id.contains(filter.as_str()) {
                            continue;
                        }
                        if ui.selectable_label(p == player.current(), id).clicked() {
                            commands.write(StoryCommand::JumpTo(p));
                        }
                    }
                });
                egui::CollapsingHeader::new("Entities").show(ui, |ui| {
                    let story = player.story();
                    for e in story.entities() {
                        ui.label(egui::RichText::new(&story.entity(e).name).strong());
                        for (k, v) in player.entity_state(e) {
                            ui.label(format!("  {k}: {v}"));
                        }
                    }
                });
                codex_section(ui, player);
                illustrations_section(ui, player.story().file());
            });
        });
    Ok(())
}

/// Every problem validation found; clicking one jumps to its passage.
fn problems_section(
    ui: &mut egui::Ui,
    problems: &Problems,
    story: &Story,
    commands: &mut MessageWriter<StoryCommand>,
) {
    let errors = problems
        .0
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    egui::CollapsingHeader::new(format!(
        "Problems: {errors} errors, {} warnings",
        problems.0.len() - errors
    ))
    .default_open(!problems.0.is_empty())
    .show(ui, |ui| {
        for d in &problems.0 {
            let color = if d.is_error() {
                egui::Color32::LIGHT_RED
            } else {
                egui::Color32::KHAKI
            };
            let label = ui.add(
                egui::Label::new(egui::RichText::new(d.to_string()).color(color).size(14.0))
                    .sense(egui::Sense::click()),
            );
            if label.clicked()
                && let Some(p) = passage_of(&d.subject).and_then(|id| story.passage_ix(id))
            {
                commands.write(StoryCommand::JumpTo(p));
            }
        }
    });
}

/// The passage's choices: open, or hidden with the codewords they need.
fn choices_section(ui: &mut egui::Ui, player: &Player) {
    let story = player.story();
    egui::CollapsingHeader::new("Choices here")
        .default_open(true)
        .show(ui, |ui| {
            for view in player.choices() {
                match &view.availability {
                    Availability::Open => ui.label(format!(
                        "open: {} (to {})",
                        view.choice.label, view.choice.to
                    )),
                    Availability::Hidden { missing } => {
                        let needs: Vec<&str> =
                            missing.iter().map(|&c| story.codeword_id(c)).collect();
                        ui.label(
                            egui::RichText::new(format!(
                                "hidden: {} (to {}) (needs {})",
                                view.choice.label,
                                view.choice.to,
                                needs.join(", ")
                            ))
                            .weak(),
                        )
                    }
                };
            }
        });
}

/// Every declared codeword, held or not; ticking one sets it.
fn codewords_section(
    ui: &mut egui::Ui,
    player: &Player,
    commands: &mut MessageWriter<StoryCommand>,
) {
    let story = player.story();
    egui::CollapsingHeader::new("Codewords")
        .default_open(true)
        .show(ui, |ui| {
            for codeword in &story.file().codewords {
                let c = story
                    .codeword_ix(&codeword.id)
                    .expect("declared codewords resolve");
                let mut held = player.held().contains(c);
                let label = codeword
                    .name
                    .as_ref()
                    .map_or(codeword.id.clone(), |n| format!("{n} ({})", codeword.id));
                if ui
                    .checkbox(&mut held, label)
                    .on_hover_text(codeword.description.clone().unwrap_or_default())
                    .changed()
                {
                    commands.write(StoryCommand::SetCodeword(c, held));
                }
            }
        });
}

/// Every codex tier, locked or not, with the codewords that open it.
fn codex_section(ui: &mut egui::Ui, player: &Player) {
    egui::CollapsingHeader::new("Codex tiers").show(ui, |ui| {
        for (i, entry) in player.story().file().codex.iter().enumerate() {
            let tier = CodexIx::from_index(i);
            let unlocked = player.is_unlocked(tier);
            let gate: Vec<&str> = entry.visible_when.iter().map(String::as_str).collect();
            let gate = if gate.is_empty() {
                "always".to_owned()
            } else {
                gate.join(" + ")
            };
            ui.label(
                egui::RichText::new(format!(
                    "{} {} [{}] {} — when {gate}",
                    if unlocked { "unlocked" } else { "locked" },
                    entry.entity,
                    entry.rank,
                    entry.title.clone().unwrap_or_default()
                ))
                .size(14.0),
            );
        }
    });
}

/// Every illustration: caption, asset, category, what it depicts.
fn illustrations_section(ui: &mut egui::Ui, file: &crate::story::model::StoryFile) {
    egui::CollapsingHeader::new("Illustrations").show(ui, |ui| {
        for ill in &file.illustrations {
            ui.label(egui::RichText::new(&ill.caption).italics());
            ui.label(
                egui::RichText::new(format!(
                    "{} ({:?}) on {}",
                    ill.asset,
                    ill.category,
                    ill.depicts.join(", ")
                ))
                .weak()
                .size(13.0),
            );
        }
    });
}
