//! The title screen: the story shelf with cover art, Begin, Continue, Load, Settings and Quit.

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::library::Library;
use super::screens::{Overlays, SavesMode, Screen, StartStory, Targets, Toasts, root_ui};
use super::session_screen::{Campaigns, OpenSession, SessionZero};
use crate::files::data_dir;
use crate::story::slots::{SlotInfo, SlotStore};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Covers>()
        .init_resource::<LatestAutosave>()
        .add_systems(OnEnter(Screen::Title), find_latest_autosave)
        .add_systems(
            Update,
            (load_covers, wake_until_covers_load).run_if(in_state(Screen::Title)),
        )
        .add_systems(
            EguiPrimaryContextPass,
            title_screen.run_if(in_state(Screen::Title)),
        );
}

/// The window sleeps between events; keep frames coming until the covers arrive.
fn wake_until_covers_load(
    covers: Res<Covers>,
    server: Res<AssetServer>,
    mut redraw: MessageWriter<bevy::window::RequestRedraw>,
) {
    let loading = covers.0.iter().flatten().any(|h| {
        matches!(
            server.load_state(h),
            bevy::asset::LoadState::Loading | bevy::asset::LoadState::NotLoaded
        )
    });
    if loading {
        redraw.write(bevy::window::RequestRedraw);
    }
}

/// The newest autosave, looked up once per visit to the title screen (not every frame).
#[derive(Resource, Debug, Default)]
struct LatestAutosave(Option<SlotInfo>);

fn find_latest_autosave(mut latest: ResMut<LatestAutosave>) {
    latest.0 = SlotStore::new(data_dir()).latest_autosave();
}

/// The newest session save of any campaign on the shelf: when it was
/// written, the campaign's title, the file.
fn newest_session(
    campaigns: &[super::session_screen::CampaignEntry],
) -> Option<(u64, &str, &std::path::PathBuf)> {
    campaigns
        .iter()
        .filter_map(|c| Some((c.latest_at?, c.title.as_str(), c.latest.as_ref()?)))
        .max_by_key(|(at, _, _)| *at)
}

/// Cover art per library entry (by index), loaded on the title screen.
#[derive(Resource, Debug, Default)]
struct Covers(Vec<Option<Handle<Image>>>);

fn load_covers(
    library: Option<Res<Library>>,
    server: Res<AssetServer>,
    mut covers: ResMut<Covers>,
) {
    let Some(library) = library else { return };
    if covers.0.len() == library.entries.len() {
        return;
    }
    covers.0 = library
        .entries
        .iter()
        .map(|entry| {
            let package = entry.story.as_ref().ok()?;
            let cover = package.story.file().meta.cover.as_ref()?;
            let root =
                std::fs::canonicalize(&package.root).unwrap_or_else(|_| package.root.clone());
            Some(server.load(root.join(cover)))
        })
        .collect();
}

fn title_screen(
    mut contexts: EguiContexts,
    library: Option<ResMut<Library>>,
    covers: Res<Covers>,
    images: Res<Assets<Image>>,
    mut overlays: ResMut<Overlays>,
    mut starts: MessageWriter<StartStory>,
    mut exit: MessageWriter<AppExit>,
    mut toasts: ResMut<Toasts>,
    latest: Res<LatestAutosave>,
    campaigns: Res<Campaigns>,
    mut zero: ResMut<SessionZero>,
    mut opens: MessageWriter<OpenSession>,
    mut targets: ResMut<Targets>,
) -> Result {
    let Some(mut library) = library else {
        return Ok(());
    };
    let cover = covers
        .0
        .get(library.selected)
        .cloned()
        .flatten()
        .filter(|h| images.contains(h.id()));
    let cover_tex = cover.as_ref().map(|h| {
        let size = images.get(h.id()).map_or(UVec2::ONE, Image::size);
        (contexts.add_image(EguiTextureHandle::Weak(h.id())), size)
    });
    let ctx = contexts.ctx_mut()?.clone();
    let latest = &latest.0;
    let mut root = root_ui(&ctx, "title", ctx.viewport_rect());
    let modal = overlays.any_modal();
    egui::Panel::left("shelf")
        .exact_size((ctx.viewport_rect().width() * 0.32).clamp(260.0, 460.0))
        .show(&mut root, |ui| {
            ui.add_space(24.0);
            ui.label(egui::RichText::new("Loreloom").size(40.0).strong());
            ui.label(
                egui::RichText::new("stories told by lamplight")
                    .italics()
                    .weak(),
            );
            ui.add_space(24.0);
            ui.label(egui::RichText::new("Stories").size(14.0).weak());
            egui::ScrollArea::vertical().show(ui, |ui| {
                for i in 0..library.entries.len() {
                    let entry = &library.entries[i];
                    match &entry.story {
                        Ok(package) => {
                            let title = package.story.title().to_owned();
                            if ui
                                .selectable_label(
                                    library.selected == i,
                                    egui::RichText::new(title).size(20.0),
                                )
                                .clicked()
                            {
                                library.selected = i;
                            }
                        }
                        Err(err) => {
                            ui.label(
                                egui::RichText::new(format!(
                                    "{} — cannot open",
                                    entry.path.display()
                                ))
                                .color(egui::Color32::LIGHT_RED),
                            )
                            .on_hover_text(err);
                        }
                    }
                }
            });
            if !campaigns.0.is_empty() {
                ui.add_space(12.0);
                ui.label(
                    egui::RichText::new("Open-ended campaigns")
                        .size(14.0)
                        .weak(),
                );
                for (i, c) in campaigns.0.iter().enumerate() {
                    ui.label(egui::RichText::new(&c.title).size(20.0))
                        .on_hover_text(&c.description);
                    ui.horizontal(|ui| {
                        ui.add_enabled_ui(!modal && zero.open.is_none(), |ui| {
                            let new = ui.button("New session");
                            targets.note(format!("new-session-{i}"), new.rect);
                            if new.clicked() {
                                zero.begin(i, c.warnings.len());
                            }
                            if let Some(save) = &c.latest {
                                let resume = ui
                                    .button("Continue")
                                    .on_hover_text(save.display().to_string());
                                targets.note(format!("continue-session-{i}"), resume.rect);
                                if resume.clicked() {
                                    opens.write(OpenSession {
                                        save: save.clone(),
                                        model_script: None,
                                        model_pace_ms: 0,
                                    });
                                }
                            }
                        });
                    });
                }
            }
            ui.add_space(16.0);
            ui.add_enabled_ui(!modal, |ui| {
                let mut button = |ui: &mut egui::Ui, text: &str| {
                    let response = ui.add_sized(
                        [220.0, 40.0],
                        egui::Button::new(egui::RichText::new(text).size(20.0)),
                    );
                    targets.note(text.to_lowercase(), response.rect);
                    response
                };
                if let Some(package) = library.selected().cloned()
                    && button(ui, "Begin").clicked()
                {
                    starts.write(StartStory {
                        package,
                        restore: None,
                    });
                }
                // Continue picks up what was played last: the newest story
                // autosave or the newest session save, whichever is newer.
                let session = newest_session(&campaigns.0);
                let story_at = latest.as_ref().map(|s| s.saved_at);
                if let Some((at, title, save)) = session
                    && story_at.is_none_or(|story| at >= story)
                {
                    if button(ui, "Continue")
                        .on_hover_text(format!("{title}: {}", save.display()))
                        .clicked()
                    {
                        opens.write(OpenSession {
                            save: save.clone(),
                            model_script: None,
                            model_pace_ms: 0,
                        });
                    }
                } else if let Some(slot) = latest {
                    let hover = format!("{}: {}", slot.story_title, slot.summary);
                    if button(ui, "Continue").on_hover_text(hover).clicked() {
                        let store = SlotStore::new(data_dir());
                        match (
                            library.find(&slot.story),
                            store.read(&slot.story, &slot.slot),
                        ) {
                            (Some(package), Ok(file)) => {
                                starts.write(StartStory {
                                    package: package.clone(),
                                    restore: Some(Box::new(file.save)),
                                });
                            }
                            (None, _) => toasts.push(format!(
                                "The story of that save ({}) is not on the shelf",
                                slot.story
                            )),
                            (_, Err(err)) => toasts.push(err.to_string()),
                        }
                    }
                }
                if library.selected().is_some() && button(ui, "Load").clicked() {
                    overlays.saves = Some(SavesMode::Load);
                }
                if button(ui, "Settings").clicked() {
                    overlays.settings = true;
                }
                // A page is closed by the browser, not by the game.
                if cfg!(not(target_family = "wasm")) && button(ui, "Quit").clicked() {
                    exit.write(AppExit::Success);
                }
            });
        });
    egui::CentralPanel::default().show(&mut root, |ui| {
        let Some(package) = library.selected() else {
            ui.centered_and_justified(|ui| ui.heading("No stories found in campaigns/"));
            return;
        };
        let rect = ui.max_rect();
        if let Some((tex, size)) = cover_tex {
            paint_cover(ui, tex, size, rect);
        }
        let meta = &package.story.file().meta;
        egui::Area::new(egui::Id::new("title-card"))
            .fixed_pos(egui::pos2(rect.min.x + 32.0, rect.max.y - 180.0))
            .order(egui::Order::Middle)
            .show(ui.ctx(), |ui| {
                egui::Frame::new()
                    .fill(egui::Color32::from_black_alpha(170))
                    .inner_margin(16.0)
                    .corner_radius(6.0)
                    .show(ui, |ui| {
                        ui.set_max_width(rect.width() - 96.0);
                        ui.label(egui::RichText::new(&meta.title).size(34.0).strong());
                        if let Some(author) = &meta.author {
                            ui.label(egui::RichText::new(format!("by {author}")).italics());
                        }
                        if let Some(description) = &meta.description {
                            ui.label(description);
                        }
                    });
            });
    });
    Ok(())
}

/// Paint an image to fill `rect`, cropping the overflow (like CSS `object-fit: cover`).
pub fn paint_cover(ui: &egui::Ui, tex: egui::TextureId, size: UVec2, rect: egui::Rect) {
    paint_cover_tinted(ui, tex, size, rect, egui::Color32::WHITE);
}

/// [`paint_cover`] multiplied by `tint` (a backdrop fading in: white at an alpha).
pub fn paint_cover_tinted(
    ui: &egui::Ui,
    tex: egui::TextureId,
    size: UVec2,
    rect: egui::Rect,
    tint: egui::Color32,
) {
    let image_aspect = size.x.max(1) as f32 / size.y.max(1) as f32;
    let rect_aspect = rect.width() / rect.height().max(1.0);
    let uv = if image_aspect > rect_aspect {
        let w = rect_aspect / image_aspect;
        egui::Rect::from_min_max(
            egui::pos2((1.0 - w) / 2.0, 0.0),
            egui::pos2(f32::midpoint(1.0, w), 1.0),
        )
    } else {
        let h = image_aspect / rect_aspect;
        egui::Rect::from_min_max(
            egui::pos2(0.0, (1.0 - h) / 2.0),
            egui::pos2(1.0, f32::midpoint(1.0, h)),
        )
    };
    ui.painter().image(tex, rect, uv, tint);
}
