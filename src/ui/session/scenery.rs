//! What a session's stage shows and plays for the scene now (#22): backdrop, music, portraits.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::prelude::*;

use crate::engine::session::{
    ActiveSession, Character, Present, SceneView, Transcript, TurnPrompt,
};
use crate::ui::overlay::DebugLine;
use crate::ui::portrait;
use crate::ui::screens::{Screen, UiSystems};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<SessionPortraits>()
        .init_resource::<SessionScenery>()
        .add_systems(
            Update,
            (load_portraits, follow_scene)
                .in_set(UiSystems::Receive)
                .run_if(in_state(Screen::Session)),
        )
        .add_systems(OnExit(Screen::Session), forget_scenery);
}

/// Portrait textures by character id, with the picture each was loaded from.
#[derive(Resource, Debug, Default)]
pub struct SessionPortraits(pub BTreeMap<String, (Option<PathBuf>, Handle<Image>)>);

/// Seconds a new backdrop takes to fade in over the last.
const BACKDROP_FADE: f32 = 1.2;

/// What the stage shows and plays for the scene now (#22).
#[derive(Resource, Debug, Default)]
pub struct SessionScenery {
    /// Location, mood, time and weather: a change of any moves the backdrop on.
    key: String,
    /// The backdrop now: the art, or a painted one, with its alt text.
    pub backdrop: Option<Handle<Image>>,
    /// The backdrop it fades from.
    previous: Option<Handle<Image>>,
    /// When the backdrop changed (seconds since the app started).
    changed_at: f32,
    /// The place's name (the stage's caption), and the art's description.
    pub name: String,
    pub alt: String,
    /// Whether the backdrop is the campaign's art (else painted).
    pub from_art: bool,
    /// The music the scene wants (absolute path) and whether it is the tense kind.
    pub music: Option<PathBuf>,
    pub tense: bool,
}

impl SessionScenery {
    /// Whether the backdrop has finished fading in at `now` (seconds since start).
    pub fn settled(&self, now: f32) -> bool {
        self.fade(now) >= 1.0
    }

    /// How far the backdrop has faded in at `now`, 0 to 1.
    pub fn fade(&self, now: f32) -> f32 {
        ((now - self.changed_at) / BACKDROP_FADE).clamp(0.0, 1.0)
    }

    /// The backdrop it fades from.
    pub fn previous(&self) -> Option<&Handle<Image>> {
        self.previous.as_ref()
    }
}

/// A session left: the next one starts from a bare stage.
fn forget_scenery(mut scenery: ResMut<SessionScenery>, mut portraits: ResMut<SessionPortraits>) {
    *scenery = SessionScenery::default();
    portraits.0.clear();
}

/// A texture for each person present, from their picture or a silhouette.
fn load_portraits(
    people: Query<&Character, With<Present>>,
    server: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    mut portraits: ResMut<SessionPortraits>,
) {
    for c in &people {
        // Loaded already from this picture (a portrait drawn later replaces
        // the silhouette: the path changes).
        let loaded = portraits.0.get(&c.id).map(|(from, _)| from);
        if c.persona || loaded == Some(&c.portrait) {
            continue;
        }
        let handle = match &c.portrait {
            Some(path) if crate::files::is_file(path) => server.load(crate::files::canonical(path)),
            _ => images.add(portrait::placeholder(&c.id, "character")),
        };
        portraits
            .0
            .insert(c.id.clone(), (c.portrait.clone(), handle));
    }
}

/// Moves the backdrop and the music on when the scene changes: the place's
/// art (`session::scenery`), or one painted from its name and mood. Looked
/// at again whenever what the player reads changed (the world changes with
/// it); while a commit has the controller, as soon as it is back.
fn follow_scene(
    session: Option<ResMut<ActiveSession>>,
    (scene, transcript, prompt): (Res<SceneView>, Res<Transcript>, Res<TurnPrompt>),
    mut scenery: ResMut<SessionScenery>,
    server: Res<AssetServer>,
    mut images: ResMut<Assets<Image>>,
    time: Res<Time>,
    mut lines: MessageWriter<DebugLine>,
    mut waiting: Local<bool>,
) {
    let Some(mut session) = session else { return };
    let changed = scene.is_changed() || transcript.is_changed() || prompt.is_changed();
    if !changed && !*waiting && !scenery.key.is_empty() {
        return;
    }
    let Some(ctl) = session.controller() else {
        *waiting = true;
        return;
    };
    *waiting = false;
    let state = &ctl.state;
    let key = ["location", "mood", "time", "weather"]
        .iter()
        .map(|k| {
            state
                .world
                .scene
                .get(*k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or("")
        })
        .collect::<Vec<_>>()
        .join("|");
    follow_music(&mut scenery, state, &mut lines);
    if key == scenery.key {
        return;
    }
    let backdrop = crate::session::scenery::backdrop(&state.campaign, &state.world.scene);
    let handle = match &backdrop.image {
        Some(path) => server.load(crate::files::canonical(path)),
        None => images.add(portrait::painted_backdrop(&backdrop.place, &backdrop.mood)),
    };
    lines.write(DebugLine {
        section: "session",
        text: format!(
            "backdrop: {} for {}",
            backdrop
                .image
                .as_ref()
                .map_or_else(|| "painted".into(), |p| p.display().to_string()),
            backdrop.name
        ),
    });
    // The first backdrop of a session appears at once; later ones fade in.
    let first = scenery.key.is_empty();
    scenery.previous = if first { None } else { scenery.backdrop.take() };
    scenery.backdrop = Some(handle);
    scenery.changed_at = if first {
        time.elapsed_secs() - BACKDROP_FADE
    } else {
        time.elapsed_secs()
    };
    scenery.from_art = backdrop.image.is_some();
    scenery.name = backdrop.name;
    scenery.alt = backdrop.alt;
    scenery.key = key;
}

/// The music the scene and its plot beat want (`session::scenery::music`).
fn follow_music(
    scenery: &mut SessionScenery,
    state: &crate::session::turn::SessionState,
    lines: &mut MessageWriter<DebugLine>,
) {
    let number = crate::session::beats::scene_number(&state.stream);
    let beat = crate::session::beats::current(&state.campaign.beats, &state.world, number)
        .first()
        .copied();
    let cue = crate::session::scenery::music(&state.campaign, &state.world, beat);
    if cue.track != scenery.music {
        lines.write(DebugLine {
            section: "session",
            text: format!(
                "music: {} ({:?})",
                cue.track
                    .as_ref()
                    .map_or_else(|| "none".into(), |p| p.display().to_string()),
                cue.mood
            ),
        });
    }
    scenery.music = cue.track;
    scenery.tense = cue.mood == crate::session::scenery::Mood::Tension;
}
