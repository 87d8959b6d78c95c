//! Story art and sound through Bevy's asset server, requested on entering Loading.
//!
//! Placeholders stand in for anything missing; the engine's own sounds
//! resolve here too (`engine_asset`).

use std::collections::HashMap;
use std::path::PathBuf;

use bevy::asset::LoadState;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use bevy_kira_audio::AudioSource;

use super::portrait;
use super::screens::{Screen, Toasts, root_ui};
use crate::engine::story_player::{ActiveStory, StoryCommand};
use crate::story::EntityIx;
use crate::story::load::referenced_assets;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<StoryArt>()
        .add_systems(OnEnter(Screen::Loading), request_story_assets)
        .add_systems(Update, track_loading.run_if(in_state(Screen::Loading)))
        .add_systems(
            EguiPrimaryContextPass,
            loading_screen.run_if(in_state(Screen::Loading)),
        );
}

/// Handles for one story's files, keyed by their path as the story names them.
#[derive(Resource, Debug, Default)]
pub struct StoryArt {
    pub images: HashMap<String, Handle<Image>>,
    pub sounds: HashMap<String, Handle<AudioSource>>,
    /// Author portrait or generated placeholder, per entity.
    pub portraits: HashMap<EntityIx, Handle<Image>>,
    /// Paths that failed to load (shown as placeholders).
    pub failed: Vec<String>,
    /// How many requested files are still loading.
    pub pending: usize,
    pub requested: usize,
}

impl StoryArt {
    /// A loaded image by story path, if it loaded.
    pub fn image(&self, path: &str) -> Option<&Handle<Image>> {
        if self.failed.iter().any(|f| f == path) {
            return None;
        }
        self.images.get(path)
    }
}

fn is_audio(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".ogg", ".oga", ".wav", ".mp3", ".flac"]
        .iter()
        .any(|e| lower.ends_with(e))
}

fn request_story_assets(
    active: Res<ActiveStory>,
    server: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    mut art: ResMut<StoryArt>,
) {
    let package = &active.package;
    let root = std::fs::canonicalize(&package.root).unwrap_or_else(|_| package.root.clone());
    *art = StoryArt::default();
    for (path, _) in referenced_assets(package.story.file()) {
        // #43: only files inside the story's folder (a path outside it gets
        // the placeholder, as a missing file does).
        let Ok(absolute) = crate::story::load::asset_in(&root, path) else {
            tracing::warn!("{path}: not inside the story's folder; not loaded");
            continue;
        };
        if is_audio(path) {
            art.sounds
                .entry(path.to_owned())
                .or_insert_with(|| server.load(absolute));
        } else {
            art.images
                .entry(path.to_owned())
                .or_insert_with(|| server.load(absolute));
        }
    }
    let story = &package.story;
    for e in story.entities() {
        let entity = story.entity(e);
        // A portrait path that is not an image (say `.ogg`) gets the placeholder, not a panic.
        let handle = entity
            .portrait
            .as_ref()
            .and_then(|path| art.images.get(path.as_str()).cloned())
            .unwrap_or_else(|| images.add(portrait::placeholder(&entity.id, &entity.kind)));
        art.portraits.insert(e, handle);
    }
    art.requested = art.images.len() + art.sounds.len();
    art.pending = art.requested;
}

fn track_loading(
    server: Res<AssetServer>,
    mut art: ResMut<StoryArt>,
    mut images: ResMut<Assets<Image>>,
    active: Res<ActiveStory>,
    mut next: ResMut<NextState<Screen>>,
    mut commands: MessageWriter<StoryCommand>,
    mut toasts: ResMut<Toasts>,
) {
    let mut pending = 0;
    let mut failed = Vec::new();
    let states = art
        .images
        .iter()
        .map(|(p, h)| (p.clone(), server.load_state(h)))
        .chain(
            art.sounds
                .iter()
                .map(|(p, h)| (p.clone(), server.load_state(h))),
        );
    for (path, state) in states.collect::<Vec<_>>() {
        match state {
            LoadState::Loaded => {}
            LoadState::Failed(err) => {
                warn!("{path}: {err}; showing a placeholder");
                failed.push(path);
            }
            LoadState::Loading | LoadState::NotLoaded => pending += 1,
        }
    }
    art.pending = pending;
    if pending > 0 {
        return;
    }
    // A missing author portrait falls back to the generated one.
    let story = active.package.story.clone();
    for e in story.entities() {
        let entity = story.entity(e);
        if entity.portrait.as_ref().is_some_and(|p| failed.contains(p)) {
            let handle = images.add(portrait::placeholder(&entity.id, &entity.kind));
            art.portraits.insert(e, handle);
        }
    }
    if !failed.is_empty() {
        toasts.push(format!(
            "{} file(s) of this story are missing or broken; placeholders stand in",
            failed.len()
        ));
    }
    art.failed = failed;
    next.set(Screen::Playing);
    commands.write(StoryCommand::Present);
}

fn loading_screen(
    mut contexts: EguiContexts,
    art: Res<StoryArt>,
    active: Option<Res<ActiveStory>>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    let title = active
        .map(|a| a.package.story.title().to_owned())
        .unwrap_or_default();
    egui::CentralPanel::default().show(&mut root_ui(ctx, "loading", ctx.viewport_rect()), |ui| {
        ui.centered_and_justified(|ui| {
            let done = art.requested - art.pending;
            ui.heading(format!("{title}\n\nLoading… {done} of {}", art.requested));
        });
    });
    Ok(())
}

/// Engine assets shipped with Loreloom (sound effects), resolved at run time.
#[cfg(not(target_family = "wasm"))]
pub(super) fn engine_asset(relative: &str) -> PathBuf {
    let here = PathBuf::from("assets").join(relative);
    if here.exists() {
        return std::fs::canonicalize(&here).unwrap_or(here);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(relative)
}

/// In the browser: beneath the asset server's `assets/`, fetched from the page's own origin.
#[cfg(target_family = "wasm")]
pub(super) fn engine_asset(relative: &str) -> PathBuf {
    PathBuf::from(relative)
}
