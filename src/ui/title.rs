//! The title screen: the story shelf with cover art, Begin, Continue, Load, Settings and Quit.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::library::Library;
use super::screens::{Overlays, SavesMode, Screen, StartStory, Targets, Toasts, root_ui};
use super::session::launch::{CampaignEntry, Campaigns, OpenSession};
use super::session::zero::SessionZero;
use super::widgets::paint_cover;
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
fn newest_session(campaigns: &[CampaignEntry]) -> Option<(u64, &str, &std::path::PathBuf)> {
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

/// What the title screen's buttons start and open, and where it notes them.
#[derive(SystemParam)]
struct TitleActions<'w> {
    overlays: ResMut<'w, Overlays>,
    starts: MessageWriter<'w, StartStory>,
    opens: MessageWriter<'w, OpenSession>,
    exit: MessageWriter<'w, AppExit>,
    toasts: ResMut<'w, Toasts>,
    targets: ResMut<'w, Targets>,
}

/// The shelf on the left (stories, campaigns, the buttons) and the selected
/// story's cover and card beside it.
fn title_screen(
    mut contexts: EguiContexts,
    library: Option<ResMut<Library>>,
    covers: Res<Covers>,
    images: Res<Assets<Image>>,
    latest: Res<LatestAutosave>,
    campaigns: Res<Campaigns>,
    mut zero: ResMut<SessionZero>,
    mut actions: TitleActions,
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
    let mut root = root_ui(&ctx, "title", ctx.viewport_rect());
    let modal = actions.overlays.any_modal();
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
            story_list(ui, &mut library);
            if !campaigns.0.is_empty() {
                campaign_list(ui, &campaigns.0, &mut zero, &mut actions, modal);
            }
            ui.add_space(16.0);
            ui.add_enabled_ui(!modal, |ui| {
                main_buttons(ui, &library, latest.0.as_ref(), &campaigns.0, &mut actions);
            });
        });
    egui::CentralPanel::default().show(&mut root, |ui| {
        title_card(ui, library.selected(), cover_tex);
    });
    Ok(())
}

/// The stories on the shelf, the selected one marked (one that cannot open
/// says why on hover).
fn story_list(ui: &mut egui::Ui, library: &mut Library) {
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
                        egui::RichText::new(format!("{} — cannot open", entry.path.display()))
                            .color(egui::Color32::LIGHT_RED),
                    )
                    .on_hover_text(err);
                }
            }
        }
    });
}

/// The open-ended campaigns, each with New session (session zero) and
/// Continue (its latest save).
fn campaign_list(
    ui: &mut egui::Ui,
    campaigns: &[CampaignEntry],
    zero: &mut SessionZero,
    actions: &mut TitleActions,
    modal: bool,
) {
    ui.add_space(12.0);
    ui.label(
        egui::RichText::new("Open-ended campaigns")
            .size(14.0)
            .weak(),
    );
    for (i, c) in campaigns.iter().enumerate() {
        ui.label(egui::RichText::new(&c.title).size(20.0))
            .on_hover_text(&c.description);
        ui.horizontal(|ui| {
            ui.add_enabled_ui(!modal && zero.open.is_none(), |ui| {
                let new = ui.button("New session");
                actions.targets.note(format!("new-session-{i}"), new.rect);
                if new.clicked() {
                    zero.begin(i, c.warnings.len());
                }
                if let Some(save) = &c.latest {
                    let resume = ui
                        .button("Continue")
                        .on_hover_text(save.display().to_string());
                    actions
                        .targets
                        .note(format!("continue-session-{i}"), resume.rect);
                    if resume.clicked() {
                        actions.opens.write(OpenSession {
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

/// Begin, Continue (what was played last), Load, Settings and Quit.
fn main_buttons(
    ui: &mut egui::Ui,
    library: &Library,
    latest: Option<&SlotInfo>,
    campaigns: &[CampaignEntry],
    actions: &mut TitleActions,
) {
    let targets = &mut actions.targets;
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
        actions.starts.write(StartStory {
            package,
            restore: None,
        });
    }
    // Continue picks up what was played last: the newest story
    // autosave or the newest session save, whichever is newer.
    let session = newest_session(campaigns);
    let story_at = latest.map(|s| s.saved_at);
    if let Some((at, title, save)) = session
        && story_at.is_none_or(|story| at >= story)
    {
        if button(ui, "Continue")
            .on_hover_text(format!("{title}: {}", save.display()))
            .clicked()
        {
            actions.opens.write(OpenSession {
                save: save.clone(),
                model_script: None,
                model_pace_ms: 0,
            });
        }
    } else if let Some(slot) = latest {
        let hover = format!("{}: {}", slot.story_title, slot.summary);
        if button(ui, "Continue").on_hover_text(hover).clicked() {
            continue_story(library, slot, &mut actions.starts, &mut actions.toasts);
        }
    }
    if library.selected().is_some() && button(ui, "Load").clicked() {
        actions.overlays.saves = Some(SavesMode::Load);
    }
    if button(ui, "Settings").clicked() {
        actions.overlays.settings = true;
    }
    // A page is closed by the browser, not by the game.
    if cfg!(not(target_family = "wasm")) && button(ui, "Quit").clicked() {
        actions.exit.write(AppExit::Success);
    }
}

/// The newest story autosave, played on (or why it cannot be).
fn continue_story(
    library: &Library,
    slot: &SlotInfo,
    starts: &mut MessageWriter<StartStory>,
    toasts: &mut Toasts,
) {
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

/// The selected story's cover, filling the rest of the window, and its card.
fn title_card(
    ui: &mut egui::Ui,
    package: Option<&crate::story::StoryPackage>,
    cover_tex: Option<(egui::TextureId, UVec2)>,
) {
    let Some(package) = package else {
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
}
