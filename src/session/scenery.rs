//! What a session's stage shows and plays for the scene (#22): the place's art and a music cue.
//!
//! The art is chosen by location id, keyword sidecars, asset metadata and the
//! scene's words; the music cue (ambient, or tension in danger, near a full clock
//! or on a tense plot beat) the same way. Plain Rust for the window and the tests.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::campaign::{Asset, AssetKind, Beat, Campaign};
use crate::rules::state::WorldState;

/// The place behind the words.
#[derive(Clone, Debug, PartialEq)]
pub struct Backdrop {
    /// The chosen image, absolute; `None` when no art fits (the stage paints
    /// one from the place's name and mood).
    pub image: Option<PathBuf>,
    /// The location id (what a change of backdrop follows).
    pub place: String,
    /// The place's name, for the caption and the painted backdrop.
    pub name: String,
    /// The scene's mood and time words.
    pub mood: String,
    /// The art's description for screen readers (its metadata's `alt_text`),
    /// or the place's name.
    pub alt: String,
}

/// Which kind of music a scene wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mood {
    Ambient,
    Tension,
}

impl Mood {
    /// The `music/` subfolder a campaign keeps it in (seed 002 §6.2.8).
    pub fn folder(self) -> &'static str {
        match self {
            Self::Ambient => "ambient",
            Self::Tension => "tension",
        }
    }
}

/// What plays under a scene.
#[derive(Clone, Debug, PartialEq)]
pub struct MusicCue {
    pub mood: Mood,
    /// The track, absolute; `None` when the campaign has no music of that kind.
    pub track: Option<PathBuf>,
}

/// Lower-case words of `text` (3 letters or more).
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !matches!(*w, "the" | "and" | "off"))
        .map(str::to_owned)
        .collect()
}

/// How well `asset` fits a scene described by `place` words (the location id
/// and name) and `feel` words (mood, time, weather): its name being the
/// location id counts most, a place word among its keywords a lot, a feel
/// word a little.
fn fit(asset: &Asset, place_id: &str, place: &[String], feel: &[String]) -> u32 {
    let stem = asset
        .path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let mut keywords: Vec<String> = asset.keywords.iter().flat_map(|k| words(k)).collect();
    keywords.extend(asset.meta.keywords.iter().flat_map(|k| words(k)));
    keywords.extend(words(stem));
    let mut score = 0;
    if !place_id.is_empty() && stem == place_id {
        score += 100;
    }
    score += 10 * u32::try_from(place.iter().filter(|w| keywords.contains(w)).count()).unwrap_or(0);
    score += u32::try_from(feel.iter().filter(|w| keywords.contains(w)).count()).unwrap_or(0);
    score
}

/// The best-fitting asset of `kind` under `folder` (relative to the campaign),
/// if any fits at all (`at_least`), ties to the first by path.
fn best<'a>(
    campaign: &'a Campaign,
    kind: AssetKind,
    folder: &str,
    place_id: &str,
    place: &[String],
    feel: &[String],
    at_least: u32,
) -> Option<&'a Asset> {
    let mut candidates: Vec<&Asset> = campaign
        .assets
        .iter()
        .filter(|a| a.kind == kind && a.path.starts_with(folder))
        .collect();
    candidates.sort_by(|a, b| a.path.cmp(&b.path));
    candidates
        .into_iter()
        .map(|a| (fit(a, place_id, place, feel), a))
        .filter(|(score, _)| *score >= at_least)
        .fold(None, |best: Option<(u32, &Asset)>, (score, a)| match best {
            Some((s, _)) if s >= score => best,
            _ => Some((score, a)),
        })
        .map(|(_, a)| a)
}

fn scene_str<'a>(scene: &'a Map<String, Value>, key: &str) -> &'a str {
    scene.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The backdrop for `scene` (the world's `scene` object): art under `art/`
/// (not the characters' portraits) whose file is named for the location, or
/// whose keywords name it; `None` when nothing names the place (a mood word
/// alone does not make a picture of somewhere else fit).
pub fn backdrop(campaign: &Campaign, scene: &Map<String, Value>) -> Backdrop {
    let place_id = scene_str(scene, "location");
    let name = campaign
        .locations
        .get(place_id)
        .map_or_else(|| place_id.replace('_', " "), |l| l.name.clone());
    let mut place = words(place_id);
    place.extend(words(&name));
    place.sort();
    place.dedup();
    let mood = ["mood", "time", "weather"]
        .iter()
        .map(|k| scene_str(scene, k))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let feel = words(&mood);
    let chosen = best(
        campaign,
        AssetKind::Image,
        "art",
        place_id,
        &place,
        &feel,
        10,
    )
    .filter(|a| !a.path.starts_with("art/characters"));
    Backdrop {
        image: chosen.map(|a| campaign.root.join(&a.path)),
        alt: chosen
            .and_then(|a| a.meta.alt_text.clone())
            .unwrap_or_else(|| name.clone()),
        place: place_id.to_owned(),
        name,
        mood,
    }
}

/// Whether the scene is tense: a danger tier above 0, a clock three-quarters
/// full or more, or a plot beat whose mood says so.
pub fn tense(world: &WorldState, beat: Option<&Beat>) -> bool {
    let danger = world
        .scene
        .get("danger_tier")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let clock = world
        .clocks
        .values()
        .any(|c| c.max > 0 && c.value * 4 >= c.max * 3);
    let beat = beat.and_then(|b| b.mood.as_deref()).is_some_and(|m| {
        let m = m.to_lowercase();
        [
            "tense", "danger", "dread", "fear", "urgent", "panic", "menac", "threat",
        ]
        .iter()
        .any(|w| m.contains(w))
    });
    danger > 0 || clock || beat
}

/// The music for the scene: a plot beat's own `music` file when it names one;
/// else from `music/tension/` or `music/ambient/` (as [`tense`] says), the
/// track whose keywords best fit the place and mood, or the folder's first.
pub fn music(campaign: &Campaign, world: &WorldState, beat: Option<&Beat>) -> MusicCue {
    let mood = if tense(world, beat) {
        Mood::Tension
    } else {
        Mood::Ambient
    };
    if let Some(file) = beat.and_then(|b| b.music.as_deref()) {
        let path = campaign.root.join(file);
        if crate::files::is_file(&path) {
            return MusicCue {
                mood,
                track: Some(path),
            };
        }
    }
    let backdrop = backdrop(campaign, &world.scene);
    let mut place = words(&backdrop.place);
    place.extend(words(&backdrop.name));
    let feel = words(&backdrop.mood);
    let folder = format!("music/{}", mood.folder());
    let track = best(
        campaign,
        AssetKind::Audio,
        &folder,
        &backdrop.place,
        &place,
        &feel,
        0,
    )
    .map(|a| campaign.root.join(&a.path));
    MusicCue { mood, track }
}
