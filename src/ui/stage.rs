//! The story's play screen: illustration, caption, portraits, the text box, choices, the ending.
//!
//! The text box types its pages out; the ending card closes the story.

use std::collections::HashSet;

use bevy::input::mouse::MouseWheel;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::assets::StoryArt;
use super::markdown::{self, Span};
use super::screens::{
    BarPress, Overlays, Screen, Targets, Toasts, UiLayout, UiSystems, bar_buttons, root_ui,
};
use super::settings::Settings;
use super::widgets::{caption_box, paint_cover_tinted, paint_framed};
use crate::engine::story_player::{
    ActiveStory, CodexUnlocked, OfferedChoice, PresentPassage, StoryCommand, StoryNotice,
};
use crate::files::data_dir;
use crate::story::model::Framing;
use crate::story::slots::{AUTOSAVE, SlotStore};
use crate::story::{CodexIx, PassageIx};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Stage>()
        .init_resource::<ReadLog>()
        .add_systems(
            Update,
            (
                receive_presentations.in_set(UiSystems::Receive),
                reveal_text,
                stage_keys,
                auto_advance,
            )
                .chain()
                .run_if(in_state(Screen::Playing)),
        )
        .add_systems(OnExit(Screen::Playing), clear_stage)
        .add_systems(
            EguiPrimaryContextPass,
            stage_ui.run_if(in_state(Screen::Playing)),
        );
}

/// What the play screen shows now.
#[derive(Resource, Debug, Default)]
pub struct Stage {
    pub passage: Option<PassageIx>,
    /// The passage's prose, a few paragraphs a page.
    pub pages: Vec<Vec<Span>>,
    pub page: usize,
    pub choices: Vec<OfferedChoice>,
    pub ending: Option<String>,
    /// Characters of this page revealed so far (fractional while typing).
    pub shown: f32,
    /// Characters on this page.
    pub total: usize,
    /// Highlighted choice (0-based) for keyboard play.
    pub selected: usize,
    /// Seconds since the text was fully shown.
    pub idle: f32,
    /// Codex tiers unlocked and not yet looked at.
    pub fresh_codex: Vec<CodexIx>,
    /// How many passages have been presented (changes even when a passage repeats).
    pub presentations: u64,
    /// The illustration last shown (an index into the story's), kept behind
    /// passages that have none of their own.
    pub last_illustration: Option<usize>,
}

/// The whole texture, as egui's UV rectangle.
const FULL_UV: egui::Rect = egui::Rect::from_min_max(egui::Pos2::ZERO, egui::pos2(1.0, 1.0));

/// About how much prose one page of the text box holds.
const PAGE_CHARS: usize = 560;

impl Stage {
    /// Whether this page is fully shown.
    pub fn revealed(&self) -> bool {
        self.shown as usize >= self.total
    }

    /// Whether the whole passage has been read (choices show now).
    pub fn finished(&self) -> bool {
        self.revealed() && self.page + 1 >= self.pages.len()
    }

    fn reveal_page(&mut self) {
        self.shown = self.total as f32;
    }

    fn turn_to(&mut self, page: usize, instant: bool) {
        self.page = page.min(self.pages.len().saturating_sub(1));
        self.total = self
            .pages
            .get(self.page)
            .map_or(0, |p| markdown::char_len(p));
        self.shown = if instant { self.total as f32 } else { 0.0 };
        self.idle = 0.0;
    }

    /// Show the rest of the page, or turn to the next one.
    pub fn advance(&mut self, instant: bool) {
        if !self.revealed() {
            self.reveal_page();
        } else if self.page + 1 < self.pages.len() {
            self.turn_to(self.page + 1, instant);
        }
    }

    /// The last page, fully shown (scripted play, skipped text).
    pub fn show_everything(&mut self) {
        self.turn_to(self.pages.len().saturating_sub(1), true);
    }
}

/// Passages read in any playthrough, per story (for "skip read text").
#[derive(Resource, Debug, Default)]
pub struct ReadLog(pub HashSet<(String, String)>);

fn clear_stage(mut stage: ResMut<Stage>) {
    *stage = Stage::default();
}

fn receive_presentations(
    mut presented: MessageReader<PresentPassage>,
    mut unlocked: MessageReader<CodexUnlocked>,
    mut notices: MessageReader<StoryNotice>,
    active: Res<ActiveStory>,
    settings: Res<Settings>,
    mut stage: ResMut<Stage>,
    mut read: ResMut<ReadLog>,
    mut toasts: ResMut<Toasts>,
) {
    let story = &active.package.story;
    for present in presented.read() {
        let passage = story.passage(present.passage);
        let key = (story.file().meta.id.clone(), passage.id.clone());
        let seen = read.0.contains(&key);
        stage.pages = markdown::pages(&markdown::spans(&passage.prose), PAGE_CHARS);
        stage.turn_to(0, settings.text_speed <= 0.0);
        stage.selected = 0;
        stage.passage = Some(present.passage);
        stage.presentations += 1;
        stage.choices.clone_from(&present.choices);
        stage.ending.clone_from(&present.ending);
        if settings.skip_read && seen {
            stage.show_everything();
        }
        read.0.insert(key);
        let summary = slot_summary(passage);
        if let Err(err) =
            SlotStore::new(data_dir()).write(AUTOSAVE, &summary, &active.player.save())
        {
            warn!("autosave failed: {err}");
        }
    }
    for CodexUnlocked(tiers) in unlocked.read() {
        for &tier in tiers {
            let entry = story.codex_entry(tier);
            let name = &story.entity(story.codex_entity(tier)).name;
            toasts.push(format!(
                "New in the codex: {}",
                entry.title.clone().unwrap_or_else(|| name.clone())
            ));
        }
        stage.fresh_codex.extend(tiers);
    }
    for StoryNotice(text) in notices.read() {
        toasts.push(text.clone());
    }
}

/// How a save slot names the moment: the passage's title, else its first words.
pub(super) fn slot_summary(passage: &crate::story::model::Passage) -> String {
    passage
        .title
        .clone()
        .unwrap_or_else(|| first_words(&passage.prose))
}

/// The first few words of prose.
fn first_words(prose: &str) -> String {
    let plain = markdown::plain(prose);
    let words: Vec<&str> = plain.split_whitespace().take(10).collect();
    format!("{}…", words.join(" "))
}

fn reveal_text(time: Res<Time>, settings: Res<Settings>, mut stage: ResMut<Stage>) {
    if stage.revealed() {
        stage.idle += time.delta_secs();
    } else {
        stage.shown =
            (stage.shown + time.delta_secs() * settings.text_speed).min(stage.total as f32);
    }
}

/// Choose the n-th offered choice (1-based) once the passage is read; until then, read on.
fn take(
    stage: &mut Stage,
    number: usize,
    instant: bool,
    commands: &mut MessageWriter<StoryCommand>,
) {
    if !stage.finished() {
        stage.advance(instant);
    } else if (1..=stage.choices.len()).contains(&number) {
        commands.write(StoryCommand::Choose(number));
    }
}

fn stage_keys(
    keys: Res<ButtonInput<KeyCode>>,
    settings: Res<Settings>,
    mut wheel: MessageReader<MouseWheel>,
    mut stage: ResMut<Stage>,
    mut overlays: ResMut<Overlays>,
    mut commands: MessageWriter<StoryCommand>,
) {
    if keys.just_pressed(KeyCode::Escape) {
        let debug = overlays.debug;
        *overlays = Overlays { debug, ..default() };
    }
    if keys.just_pressed(KeyCode::KeyC) {
        overlays.codex = !overlays.codex;
    }
    if keys.just_pressed(KeyCode::KeyH) {
        overlays.backlog = !overlays.backlog;
    }
    if wheel.read().any(|w| w.y > 0.0) && !overlays.any_modal() {
        overlays.backlog = true;
    }
    if overlays.any_modal() {
        return;
    }
    let digits = [
        KeyCode::Digit1,
        KeyCode::Digit2,
        KeyCode::Digit3,
        KeyCode::Digit4,
        KeyCode::Digit5,
        KeyCode::Digit6,
        KeyCode::Digit7,
        KeyCode::Digit8,
        KeyCode::Digit9,
    ];
    for (i, key) in digits.iter().enumerate() {
        if keys.just_pressed(*key) {
            take(&mut stage, i + 1, settings.text_speed <= 0.0, &mut commands);
        }
    }
    let count = stage.choices.len();
    if count > 0 && keys.just_pressed(KeyCode::ArrowDown) {
        stage.selected = (stage.selected + 1) % count;
    }
    if count > 0 && keys.just_pressed(KeyCode::ArrowUp) {
        stage.selected = (stage.selected + count - 1) % count;
    }
    // Space only reads on, so mashing it through text never picks a choice by accident;
    // Enter reads on and then takes the highlighted choice.
    if keys.just_pressed(KeyCode::Space) && !stage.finished() {
        stage.advance(settings.text_speed <= 0.0);
    }
    if keys.just_pressed(KeyCode::Enter) {
        let number = stage.selected + 1;
        take(
            &mut stage,
            number,
            settings.text_speed <= 0.0,
            &mut commands,
        );
    }
}

/// Auto mode: turn pages, and take a lone choice, after the delay.
fn auto_advance(
    settings: Res<Settings>,
    mut stage: ResMut<Stage>,
    overlays: Res<Overlays>,
    mut commands: MessageWriter<StoryCommand>,
    mut fired: Local<u64>,
) {
    if !settings.auto_advance
        || overlays.any_modal()
        || !stage.revealed()
        || stage.idle < settings.auto_delay
    {
        return;
    }
    if !stage.finished() {
        stage.advance(settings.text_speed <= 0.0);
    } else if stage.choices.len() == 1 && *fired != stage.presentations {
        *fired = stage.presentations;
        commands.write(StoryCommand::Choose(1));
    }
}

fn stage_ui(
    mut contexts: EguiContexts,
    mut stage: ResMut<Stage>,
    active: Res<ActiveStory>,
    art: Res<StoryArt>,
    images: Res<Assets<Image>>,
    layout: Res<UiLayout>,
    settings: Res<Settings>,
    mut overlays: ResMut<Overlays>,
    mut commands: MessageWriter<StoryCommand>,
    mut next: ResMut<NextState<Screen>>,
    mut targets: ResMut<Targets>,
) -> Result {
    let Some(passage_ix) = stage.passage else {
        return Ok(());
    };
    let story = active.package.story.clone();
    let file = story.file();
    let passage = story.passage(passage_ix);
    // A passage without an illustration of its own keeps the last one shown,
    // dimmed (or the cover, dimmed, before any): never an empty stage (#22).
    let own = story.illustrations(passage_ix).first().copied();
    if own.is_some() {
        stage.last_illustration = own;
    }
    let illustration = own.map(|i| &file.illustrations[i]);
    let shown_asset = stage
        .last_illustration
        .map(|i| file.illustrations[i].asset.clone())
        .or_else(|| file.meta.cover.clone());
    let tint = if own.is_some() {
        egui::Color32::WHITE
    } else {
        egui::Color32::from_gray(105)
    };
    let picture = shown_asset.and_then(|asset| {
        let handle = art.image(&asset)?;
        let size = images.get(handle.id())?.size();
        Some((
            contexts.add_image(EguiTextureHandle::Weak(handle.id())),
            size,
        ))
    });
    let portraits = portraits(&mut contexts, &story, passage, &art, &images);
    let ctx = contexts.ctx_mut()?.clone();
    let rect = layout.stage_rect(ctx.viewport_rect());
    let mut root = root_ui(&ctx, "stage", rect);
    let modal = overlays.any_modal();
    let instant = settings.text_speed <= 0.0;

    stage_bar(
        &mut root,
        story.title(),
        stage.fresh_codex.len(),
        (&mut overlays, &mut next, &mut targets),
    );

    let text_height = (rect.height() * 0.4).clamp(220.0, 520.0);
    egui::Panel::bottom("stage-text")
        .exact_size(text_height)
        .frame(
            egui::Frame::new()
                .fill(egui::Color32::from_rgba_unmultiplied(10, 12, 18, 228))
                .inner_margin(egui::Margin::symmetric(28, 16)),
        )
        .show(&mut root, |ui| {
            ui.add_enabled_ui(!modal, |ui| {
                text_box(
                    ui,
                    &mut stage,
                    instant,
                    &mut commands,
                    &mut next,
                    &mut targets,
                );
            });
        });

    egui::CentralPanel::no_frame().show(&mut root, |ui| {
        paint_stage(ui, file, (picture, tint), illustration, &portraits);
    });
    Ok(())
}

/// The people who appear in the passage (not its places), with their portraits once loaded.
fn portraits(
    contexts: &mut EguiContexts,
    story: &crate::story::Story,
    passage: &crate::story::model::Passage,
    art: &StoryArt,
    images: &Assets<Image>,
) -> Vec<(String, Option<egui::TextureId>)> {
    passage
        .appears
        .iter()
        .filter_map(|a| story.entity_ix(&a.entity))
        // A place is the scene itself, not a face in it.
        .filter(|e| story.entity(*e).kind != "location")
        .map(|e| {
            let tex = art
                .portraits
                .get(&e)
                .filter(|h| images.contains(h.id()))
                .map(|h| contexts.add_image(EguiTextureHandle::Weak(h.id())));
            (story.entity(e).name.clone(), tex)
        })
        .collect()
}

/// The bar: the story's title, the play screens' buttons, the codex with how many entries are new.
fn stage_bar(
    root: &mut egui::Ui,
    title: &str,
    fresh_codex: usize,
    (overlays, next, targets): (&mut Overlays, &mut NextState<Screen>, &mut Targets),
) {
    egui::Panel::top("stage-bar").show(root, |ui| {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new(title).strong());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                match bar_buttons(ui) {
                    Some(BarPress::Title) => next.set(Screen::Title),
                    Some(BarPress::Settings) => overlays.settings = true,
                    Some(BarPress::Saves(mode)) => overlays.saves = Some(mode),
                    Some(BarPress::Backlog) => overlays.backlog = true,
                    None => {}
                }
                let codex = if fresh_codex == 0 {
                    "Codex (C)".to_owned()
                } else {
                    format!("Codex (C) • {fresh_codex} new")
                };
                let codex = ui.button(codex);
                targets.note("codex", codex.rect);
                if codex.clicked() {
                    overlays.codex = true;
                }
            });
        });
    });
}

/// The picture area: the illustration (full-bleed or framed, `tint`ed), its
/// caption, and the portraits of who appears along its foot.
fn paint_stage(
    ui: &mut egui::Ui,
    file: &crate::story::model::StoryFile,
    (picture, tint): (Option<(egui::TextureId, UVec2)>, egui::Color32),
    illustration: Option<&crate::story::model::Illustration>,
    portraits: &[(String, Option<egui::TextureId>)],
) {
    let area = ui.max_rect();
    let framing = file
        .art_direction
        .as_ref()
        .map_or(Framing::FullBleed, |a| a.framing);
    // A full-bleed picture covers the area: no flat colour under it.
    if picture.is_none() || framing != Framing::FullBleed {
        ui.painter().rect_filled(area, 0.0, backdrop(file));
    }
    match (picture, framing) {
        (Some((tex, size)), Framing::FullBleed) => {
            paint_cover_tinted(ui, tex, size, area, tint);
        }
        (Some((tex, size)), Framing::Framed) => {
            let inner = area.shrink(24.0);
            let scale = (inner.width() / size.x as f32).min(inner.height() / size.y as f32);
            let fitted = egui::Rect::from_center_size(
                inner.center(),
                egui::vec2(size.x as f32, size.y as f32) * scale,
            );
            ui.painter().image(tex, fitted, FULL_UV, tint);
            ui.painter().rect_stroke(
                fitted,
                2.0,
                egui::Stroke::new(2.0, egui::Color32::from_gray(200)),
                egui::StrokeKind::Outside,
            );
        }
        (None, _) => {}
    }
    if let Some(ill) = illustration {
        let caption = egui::Label::new(
            egui::RichText::new(&ill.caption)
                .italics()
                .size(16.0)
                .color(egui::Color32::from_gray(235)),
        )
        .wrap();
        caption_box(ui.ctx(), "caption", area, |ui| {
            ui.set_max_width(area.width() * 0.45);
            ui.add(caption);
        });
    }
    let size = egui::vec2(120.0, 150.0) * (area.height() / 420.0).clamp(0.6, 1.4);
    let mut x = area.max.x - 16.0;
    for (name, tex) in portraits.iter().rev() {
        let frame =
            egui::Rect::from_min_size(egui::pos2(x - size.x, area.max.y - size.y - 28.0), size);
        x -= size.x + 12.0;
        paint_framed(ui, frame, *tex, name, 15.0, false);
    }
}

/// The colour behind the illustration: the art direction's first palette colour when it is a hex code.
fn backdrop(file: &crate::story::model::StoryFile) -> egui::Color32 {
    file.art_direction
        .as_ref()
        .and_then(|a| a.palette.first())
        .and_then(|hex| egui::Color32::from_hex(hex).ok())
        .map_or(egui::Color32::from_rgb(22, 24, 34), |c| {
            c.gamma_multiply(0.5)
        })
}

fn text_box(
    ui: &mut egui::Ui,
    stage: &mut Stage,
    instant: bool,
    commands: &mut MessageWriter<StoryCommand>,
    next: &mut NextState<Screen>,
    targets: &mut Targets,
) {
    let shown = stage.shown as usize;
    let page = stage.pages.get(stage.page).map_or(&[][..], Vec::as_slice);
    let job = markdown::layout(page, shown, 21.0, egui::Color32::from_gray(228));
    let response = egui::ScrollArea::vertical()
        .max_height(ui.available_height() - choices_height(stage))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.add(egui::Label::new(job).sense(egui::Sense::click()))
        })
        .inner;
    targets.note("text", response.rect);
    if response.clicked() {
        stage.advance(instant);
    }
    if !stage.finished() {
        if stage.revealed() {
            ui.with_layout(egui::Layout::bottom_up(egui::Align::Max), |ui| {
                let more = format!("more…  ({} of {})", stage.page + 1, stage.pages.len());
                let more = ui
                    .add(egui::Button::new(more).frame(false))
                    .on_hover_text("Click, Space or Enter");
                targets.note("more", more.rect);
                if more.clicked() {
                    stage.advance(instant);
                }
            });
        }
        return;
    }
    ui.add_space(8.0);
    if let Some(title) = stage.ending.clone() {
        ui.vertical_centered(|ui| {
            ui.label(egui::RichText::new("THE END").size(16.0).weak());
            ui.label(egui::RichText::new(title).size(30.0).strong());
            let back = ui.button("Return to the title screen");
            targets.note("to-title", back.rect);
            if back.clicked() {
                next.set(Screen::Title);
            }
        });
        return;
    }
    for (i, choice) in stage.choices.clone().iter().enumerate() {
        let text = egui::RichText::new(format!("{}.  {}", choice.number, choice.label)).size(19.0);
        let button = egui::Button::new(text)
            .selected(i == stage.selected)
            .min_size(egui::vec2(ui.available_width(), 34.0));
        let response = ui.add(button);
        targets.note(format!("choice-{}", choice.number), response.rect);
        if response.hovered() {
            stage.selected = i;
        }
        if response.clicked() {
            commands.write(StoryCommand::Choose(choice.number));
        }
    }
}

fn choices_height(stage: &Stage) -> f32 {
    if !stage.finished() {
        return 0.0;
    }
    if stage.ending.is_some() {
        return 110.0;
    }
    8.0 + stage.choices.len() as f32 * 40.0
}
