//! The session codex window (C): the people met, the places been, the lore play has established.
//!
//! Not the story player's codex (`ui::story_codex`); the entries come from
//! `session::codex`, read again when the scene moves.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};

use super::scenery::SessionPortraits;
use crate::engine::session::{ActiveSession, SceneView};
use crate::session::codex::SessionCodex;
use crate::ui::screens::Screen;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<SessionCodexView>()
        .add_systems(
            EguiPrimaryContextPass,
            session_codex_window.run_if(in_state(Screen::Session)),
        )
        .add_systems(
            OnExit(Screen::Session),
            |mut codex: ResMut<SessionCodexView>| {
                *codex = SessionCodexView::default();
            },
        );
}

/// The session codex window: open or not, the entries already looked at,
/// and how many are new.
#[derive(Resource, Debug, Default)]
pub struct SessionCodexView {
    pub open: bool,
    seen: BTreeSet<String>,
    /// Entries not looked at yet (the bar's button counts them).
    pub fresh: usize,
    codex: SessionCodex,
    /// The scene the codex was read at: it changes only when the world does
    /// (a commit, rewind or load), not with every streamed token.
    scene: Option<i64>,
}

impl SessionCodexView {
    /// The codex read again when the story stands at another scene (not
    /// while a commit has the controller: as soon as it is back).
    fn refresh(&mut self, session: &mut ActiveSession, scene: i64) {
        if self.scene == Some(scene) {
            return;
        }
        let Some(ctl) = session.controller() else {
            return;
        };
        let recalled = ctl.store().recalled_lore().unwrap_or_else(|e| {
            warn!("the codex cannot show the lore come across: {e}");
            Vec::new()
        });
        self.codex = crate::session::codex::codex(&ctl.state, &recalled);
        self.scene = Some(scene);
        self.fresh = self
            .codex
            .keys()
            .iter()
            .filter(|k| !self.seen.contains(*k))
            .count();
    }
}

/// The codex of a session (C): the people met, with how they regard the
/// player; the places been, with their art; the lore play has established.
/// Entries not looked at yet say NEW; closing the codex marks them seen.
pub(super) fn session_codex_window(
    mut contexts: EguiContexts,
    session: Option<ResMut<ActiveSession>>,
    mut view: ResMut<SessionCodexView>,
    scene: Res<SceneView>,
    keys: Res<ButtonInput<KeyCode>>,
    server: Res<AssetServer>,
    (mut thumbnails, portraits): (
        Local<BTreeMap<PathBuf, Handle<Image>>>,
        Res<SessionPortraits>,
    ),
    images: Res<Assets<Image>>,
) -> Result {
    let Some(mut session) = session else {
        return Ok(());
    };
    view.refresh(&mut session, scene.scene_index);
    let ctx = contexts.ctx_mut()?.clone();
    if keys.just_pressed(KeyCode::KeyC) && !ctx.egui_wants_keyboard_input() {
        view.open = !view.open;
    }
    if !view.open {
        return Ok(());
    }
    let view = &mut *view;
    let codex = &view.codex;
    let mut art = BTreeMap::new();
    for place in &codex.places {
        if let Some(path) = &place.image {
            let handle = thumbnails
                .entry(path.clone())
                .or_insert_with(|| server.load(crate::files::canonical(path)))
                .clone();
            if let Some(image) = images.get(handle.id()) {
                let size = image.size();
                art.insert(
                    place.id.clone(),
                    (
                        contexts.add_image(EguiTextureHandle::Weak(handle.id())),
                        size,
                    ),
                );
            }
        }
    }
    let faces: BTreeMap<&str, egui::TextureId> = codex
        .people
        .iter()
        .filter_map(|p| {
            let (_, handle) = portraits
                .0
                .get(&p.id)
                .filter(|(_, h)| images.contains(h.id()))?;
            Some((
                p.id.as_str(),
                contexts.add_image(EguiTextureHandle::Weak(handle.id())),
            ))
        })
        .collect();
    let mut open = true;
    egui::Window::new("Codex")
        .open(&mut open)
        .default_size([560.0, 480.0])
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .collapsible(false)
        .show(&ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                codex_pages(ui, codex, &view.seen, &faces, &art);
            });
        });
    if !open {
        view.open = false;
        view.seen.extend(view.codex.keys());
        view.fresh = 0;
    }
    Ok(())
}

/// The codex's pages: people, places, what was learned, lore come across;
/// entries not in `seen` marked NEW.
fn codex_pages(
    ui: &mut egui::Ui,
    codex: &SessionCodex,
    seen: &BTreeSet<String>,
    faces: &BTreeMap<&str, egui::TextureId>,
    art: &BTreeMap<String, (egui::TextureId, UVec2)>,
) {
    let new_mark = |ui: &mut egui::Ui, key: &str| {
        if !seen.contains(key) {
            ui.label(
                egui::RichText::new("NEW")
                    .small()
                    .strong()
                    .color(egui::Color32::from_rgb(240, 200, 120)),
            );
        }
    };
    ui.heading("People");
    for p in &codex.people {
        let face = faces
            .get(p.id.as_str())
            .map(|tex| egui::Image::new((*tex, egui::vec2(56.0, 70.0))));
        codex_row(ui, face, &p.description, |ui| {
            ui.label(egui::RichText::new(&p.name).strong());
            if let Some(regard) = p.regard {
                ui.label(egui::RichText::new(format!("({regard} toward you)")).weak());
            }
            if !p.here {
                ui.label(egui::RichText::new("elsewhere").italics().weak());
            }
            new_mark(ui, &format!("person:{}", p.id));
        });
    }
    ui.separator();
    ui.heading("Places");
    for p in &codex.places {
        let picture = art.get(&p.id).map(|(tex, size)| {
            let w = 120.0;
            let h = w * size.y as f32 / size.x.max(1) as f32;
            egui::Image::new((*tex, egui::vec2(w, h)))
        });
        codex_row(ui, picture, &p.description, |ui| {
            ui.label(egui::RichText::new(&p.name).strong());
            if p.here {
                ui.label(egui::RichText::new("you are here").italics().weak());
            }
            new_mark(ui, &format!("place:{}", p.id));
        });
    }
    ui.separator();
    ui.heading("What you have learned");
    if codex.lore.is_empty() {
        ui.label(egui::RichText::new("Nothing yet.").weak());
    }
    for l in &codex.lore {
        ui.horizontal_wrapped(|ui| {
            ui.label(l);
            new_mark(ui, &format!("lore:{l}"));
        });
    }
    if !codex.read.is_empty() {
        ui.separator();
        ui.heading("Lore come across");
    }
    for l in &codex.read {
        ui.horizontal(|ui| {
            ui.label(egui::RichText::new(&l.title).strong());
            new_mark(ui, &format!("read:{}", l.id));
        });
        ui.label(egui::RichText::new(&l.text).italics());
        ui.add_space(6.0);
    }
}

/// One entry of the session codex: its picture, then its heading line and description.
fn codex_row(
    ui: &mut egui::Ui,
    picture: Option<egui::Image<'_>>,
    description: &str,
    heading: impl FnOnce(&mut egui::Ui),
) {
    ui.horizontal_top(|ui| {
        if let Some(picture) = picture {
            ui.add(picture);
        }
        ui.vertical(|ui| {
            ui.horizontal(heading);
            if !description.is_empty() {
                ui.label(description);
            }
        });
    });
    ui.add_space(6.0);
}
