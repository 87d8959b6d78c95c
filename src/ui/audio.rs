//! Music and ambience from the story's cues and a session's scene, crossfading; a chime on choices.
//!
//! A session's music follows its place, danger and clocks (`session::scenery`);
//! volumes come from the settings.

use std::time::Duration;

use bevy::prelude::*;
use bevy_kira_audio::prelude::{
    AudioApp, AudioChannel, AudioControl, AudioEasing, AudioSource, AudioTween, Decibels,
};

use super::assets::{StoryArt, engine_asset};
use super::screens::{Screen, UiSystems};
use super::session::scenery::SessionScenery;
use super::settings::Settings;
use crate::engine::story_player::{ActiveStory, PresentPassage, StoryCommand};
use crate::story::model::Cue;

pub(super) fn plugin(app: &mut App) {
    app.add_audio_channel::<Music>()
        .add_audio_channel::<Ambience>()
        .add_audio_channel::<Sfx>()
        .init_resource::<NowPlaying>()
        .add_systems(Startup, load_sfx)
        .add_systems(
            Update,
            (follow_cues.in_set(UiSystems::Receive), chime_on_choice)
                .run_if(in_state(Screen::Playing)),
        )
        .add_systems(
            Update,
            follow_session_music
                .run_if(in_state(Screen::Session).and_then(resource_changed::<SessionScenery>)),
        )
        .add_systems(Update, apply_volumes.run_if(resource_changed::<Settings>))
        .add_systems(OnExit(Screen::Playing), fade_out_all)
        .add_systems(OnExit(Screen::Session), fade_out_all);
}

/// The music channel.
#[derive(Resource)]
struct Music;
/// Ambient loops under the music.
#[derive(Resource)]
struct Ambience;
/// Short effects.
#[derive(Resource)]
struct Sfx;

const CROSSFADE: Duration = Duration::from_millis(1500);

/// What plays now, by story path (or a session's file).
#[derive(Resource, Debug, Default)]
struct NowPlaying {
    music: Option<String>,
    /// A session's track, absolute.
    session: Option<std::path::PathBuf>,
    ambience: Option<String>,
    chime: Option<Handle<AudioSource>>,
}

/// Linear volume (0..=1) as kira's decibels.
fn decibels(volume: f32) -> Decibels {
    if volume <= 0.001 {
        Decibels::SILENCE
    } else {
        Decibels(20.0 * volume.log10())
    }
}

fn load_sfx(server: Res<AssetServer>, mut now: ResMut<NowPlaying>) {
    now.chime = Some(server.load(engine_asset("sfx/choice.ogg")));
}

/// The cue in force for a passage: its own, else its scene's, else the story's.
fn cue_for(active: &ActiveStory, passage: crate::story::PassageIx) -> Cue {
    let file = active.package.story.file();
    let p = active.package.story.passage(passage);
    let scene = p
        .scene
        .as_ref()
        .and_then(|id| file.scenes.iter().find(|s| &s.id == id))
        .and_then(|s| s.cue.clone());
    let own = p.cue.clone().unwrap_or_default();
    let scene = scene.unwrap_or_default();
    let story = file.meta.cue.clone().unwrap_or_default();
    Cue {
        music: own.music.or(scene.music).or(story.music),
        ambience: own.ambience.or(scene.ambience).or(story.ambience),
    }
}

/// Fades out what `channel` plays and, when `want` is not what plays `now`,
/// fades in the loop `sound` finds for it (none: silence).
fn crossfade<C: Resource, K: PartialEq>(
    channel: &AudioChannel<C>,
    now: &mut Option<K>,
    want: Option<K>,
    sound: impl FnOnce(&K) -> Option<Handle<AudioSource>>,
) {
    if *now == want {
        return;
    }
    channel.stop().fade_out(AudioTween::linear(CROSSFADE));
    if let Some(handle) = want.as_ref().and_then(sound) {
        channel
            .play(handle)
            .looped()
            .fade_in(AudioTween::new(CROSSFADE, AudioEasing::OutPowi(2)));
    }
    *now = want;
}

/// A story's loaded sound for `path`, unless it failed to load.
fn story_sound(art: &StoryArt) -> impl Fn(&String) -> Option<Handle<AudioSource>> + '_ {
    |path| {
        art.sounds
            .get(path)
            .filter(|_| !art.failed.contains(path))
            .cloned()
    }
}

fn follow_cues(
    mut presented: MessageReader<PresentPassage>,
    active: Res<ActiveStory>,
    art: Res<StoryArt>,
    mut now: ResMut<NowPlaying>,
    music: Res<AudioChannel<Music>>,
    ambience: Res<AudioChannel<Ambience>>,
) {
    let Some(present) = presented.read().last() else {
        return;
    };
    let cue = cue_for(&active, present.passage);
    let now = &mut *now;
    crossfade(&music, &mut now.music, cue.music, story_sound(&art));
    crossfade(
        &ambience,
        &mut now.ambience,
        cue.ambience,
        story_sound(&art),
    );
}

/// A session's music follows its scene: ambient, or tension in danger or
/// near a full clock, crossfading when the cue changes; none when the
/// campaign has no music of that kind.
fn follow_session_music(
    scenery: Res<SessionScenery>,
    server: Res<AssetServer>,
    mut now: ResMut<NowPlaying>,
    music: Res<AudioChannel<Music>>,
) {
    if now.session != scenery.music {
        // Said in the log (RUST_LOG=loreloom::ui::audio=info): tests and streamers follow the cue.
        info!(
            "session music: {}",
            scenery
                .music
                .as_ref()
                .map_or_else(|| "none".to_owned(), |p| p.display().to_string())
        );
    }
    crossfade(&music, &mut now.session, scenery.music.clone(), |path| {
        let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        Some(server.load(file))
    });
}

fn chime_on_choice(
    mut commands: MessageReader<StoryCommand>,
    now: Res<NowPlaying>,
    sfx: Res<AudioChannel<Sfx>>,
) {
    if commands
        .read()
        .any(|c| matches!(c, StoryCommand::Choose(_)))
        && let Some(chime) = &now.chime
    {
        sfx.play(chime.clone());
    }
}

fn apply_volumes(
    settings: Res<Settings>,
    music: Res<AudioChannel<Music>>,
    ambience: Res<AudioChannel<Ambience>>,
    sfx: Res<AudioChannel<Sfx>>,
) {
    music.set_volume(decibels(settings.music_volume));
    ambience.set_volume(decibels(settings.music_volume * 0.8));
    sfx.set_volume(decibels(settings.sfx_volume));
}

fn fade_out_all(
    music: Res<AudioChannel<Music>>,
    ambience: Res<AudioChannel<Ambience>>,
    mut now: ResMut<NowPlaying>,
) {
    music.stop().fade_out(AudioTween::linear(CROSSFADE));
    ambience.stop().fade_out(AudioTween::linear(CROSSFADE));
    now.music = None;
    now.ambience = None;
    now.session = None;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's scene moving from calm to danger crossfades the music: the
    /// audio plugin's own state follows the cue (headless; no sound device
    /// is needed, kira stays silent without one).
    #[test]
    fn the_session_music_follows_the_scenes_cue() {
        let mut app = App::new();
        app.add_plugins((
            MinimalPlugins,
            AssetPlugin::default(),
            bevy::state::app::StatesPlugin,
            bevy_kira_audio::AudioPlugin,
        ))
        .init_state::<Screen>()
        .insert_resource(Settings::default())
        .init_resource::<SessionScenery>()
        .add_plugins(plugin);
        app.world_mut()
            .resource_mut::<NextState<Screen>>()
            .set(Screen::Session);
        app.update();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
        let calm = root.join("music/ambient/reach_at_dusk.ogg");
        let danger = root.join("music/tension/green_flame.ogg");
        let playing = |app: &App| app.world().resource::<NowPlaying>().session.clone();
        for cue in [Some(calm.clone()), Some(danger.clone()), None] {
            app.world_mut().resource_mut::<SessionScenery>().music = cue.clone();
            app.update();
            assert_eq!(playing(&app), cue);
        }
        // Leaving the session fades everything out.
        app.world_mut().resource_mut::<SessionScenery>().music = Some(calm.clone());
        app.update();
        app.world_mut()
            .resource_mut::<NextState<Screen>>()
            .set(Screen::Title);
        app.update();
        assert_eq!(playing(&app), None);
    }
}
