//! The page around the canvas (browser build): the screen's state published, stories dropped in.
//!
//! What the screen shows is published to `document.body.dataset.loreloom`.
//!
//! The published JSON (`screen`, `shelf` titles and the `selected` one, `story`,
//! `passage`, `ending`, `finished`, `codex`, `typing` (a text field has the
//! keyboard), `campaigns` (title and latest save), `session` (on the session
//! screen: entries, the narration streaming in, the stage, busy, failure), and
//! `targets`: each main control's box in CSS pixels) changes only
//! when the screen does; the headless-Chromium tests read it to click what a
//! player clicks. `web/index.html` reads dropped or picked story files and
//! queues them on `window.loreloomInbox`; they are kept in the page's storage
//! (under `<data dir>/dropped/`) so the shelf still holds them after a reload.

use std::path::PathBuf;

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use bevy::window::PrimaryWindow;
use bevy_egui::EguiContexts;
use wasm_bindgen::{JsCast, JsValue};

use super::library::{Library, LibraryEntry};
use super::screens::{Overlays, Screen, Targets, Toasts};
use super::session::launch::Campaigns;
use super::stage::Stage;
use crate::engine::session::{Entry, SceneView, Transcript, TurnProgress, TurnPrompt};
use crate::engine::story_player::ActiveStory;
use crate::files::data_dir;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Startup, restore_dropped_stories)
        .add_systems(Update, take_dropped_stories)
        .add_systems(Last, (publish_state, publish_frame_time));
}

/// Each frame's number (`body[data-loreloom-frame]`: a test waits for frames,
/// not for time, before it trusts a control's place), and once a second the
/// mean frame time in milliseconds (`body[data-loreloom-frame-ms]`), for the
/// frame-time measurement while the typewriter runs.
fn publish_frame_time(
    diagnostics: Res<bevy::diagnostic::DiagnosticsStore>,
    time: Res<Time<Real>>,
    mut next: Local<f32>,
    mut frame: Local<u64>,
) {
    let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    else {
        return;
    };
    *frame += 1;
    let _ = body.dataset().set("loreloomFrame", &frame.to_string());
    let now = time.elapsed_secs();
    if now < *next {
        return;
    }
    *next = now + 1.0;
    if let Some(ms) = diagnostics
        .get(&bevy::diagnostic::FrameTimeDiagnosticsPlugin::FRAME_TIME)
        .and_then(bevy::diagnostic::Diagnostic::smoothed)
    {
        let _ = body.dataset().set("loreloomFrameMs", &format!("{ms:.1}"));
    }
}

/// Where stories dropped onto the page are kept.
fn dropped_dir() -> PathBuf {
    data_dir().join("dropped")
}

/// A dropped file's name as a storage key, keeping only safe characters.
fn dropped_path(name: &str) -> PathBuf {
    let stem: String = name
        .trim_end_matches(".json")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dropped_dir().join(format!("{stem}.json"))
}

/// Put a story file on the shelf (replacing one of the same file), selected.
fn shelve(library: &mut Library, path: PathBuf) -> Result<String, String> {
    let entry = LibraryEntry::open(path);
    let outcome = entry
        .story
        .as_ref()
        .map(|p| p.story.title().to_owned())
        .map_err(Clone::clone);
    match library.entries.iter().position(|e| e.path == entry.path) {
        Some(at) => {
            library.entries[at] = entry;
            library.selected = at;
        }
        None => {
            library.entries.push(entry);
            library.selected = library.entries.len() - 1;
        }
    }
    outcome
}

fn restore_dropped_stories(mut library: ResMut<Library>) {
    let selected = library.selected;
    for path in crate::files::list(&dropped_dir()) {
        // A broken one is listed with its error (and logged by the shelf).
        let _ = shelve(&mut library, path);
    }
    library.selected = selected;
}

/// Drain `window.loreloomInbox` (`{name, text}` objects the page queued).
fn take_dropped_stories(
    mut library: ResMut<Library>,
    mut toasts: ResMut<Toasts>,
    screen: Res<State<Screen>>,
) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(inbox) = js_sys::Reflect::get(&window, &JsValue::from_str("loreloomInbox")) else {
        return;
    };
    let Ok(inbox) = inbox.dyn_into::<js_sys::Array>() else {
        return;
    };
    if inbox.length() == 0 || *screen.get() != Screen::Title {
        return;
    }
    while inbox.length() > 0 {
        let item = inbox.shift();
        let field = |name: &str| {
            js_sys::Reflect::get(&item, &JsValue::from_str(name))
                .ok()
                .and_then(|v| v.as_string())
        };
        let (Some(name), Some(text)) = (field("name"), field("text")) else {
            continue;
        };
        let path = dropped_path(&name);
        if let Err(err) = crate::files::write_atomically(&path, text.as_bytes()) {
            toasts.push(format!("{name}: could not keep it in the browser: {err}"));
            continue;
        }
        match shelve(&mut library, path) {
            Ok(title) => toasts.push(format!("On the shelf: {title}")),
            Err(err) => {
                // A broken file stays listed with its error, as on the desktop.
                toasts.push(err);
            }
        }
    }
}

/// What the session screen shows: the story so far (each entry's kind and
/// text), the narration streaming in now, and whether a turn is running.
fn session_state(view: &SessionShown) -> serde_json::Value {
    let entries: Vec<serde_json::Value> = view
        .transcript
        .entries
        .iter()
        .map(|e| {
            let (kind, text) = match e {
                Entry::Recap(t) => ("recap", t.clone()),
                Entry::Intention { text, .. } => ("intention", text.clone()),
                Entry::Narration(t) => ("narration", t.clone()),
                Entry::Roll(r) => ("roll", format!("{r:?}")),
                Entry::Scene(t) => ("scene", t.clone()),
                Entry::Note(t) => ("note", t.clone()),
                Entry::Notice(crate::transcript::marker::Notice::World(t)) => ("world", t.clone()),
                Entry::Notice(crate::transcript::marker::Notice::Blocked(t)) => {
                    ("blocked", t.clone())
                }
            };
            serde_json::json!({ "kind": kind, "text": text })
        })
        .collect();
    serde_json::json!({
        "title": view.scene.title,
        "entries": entries,
        "streaming": view.transcript.streaming,
        "stage": view.progress.stage,
        "busy": view.progress.busy,
        "choices": view.prompt.choices,
        "failure": view.prompt.failure.as_ref().map(|f| format!("{}: {}", f.stage, f.reason)),
        "not_kept": view.prompt.not_kept,
        "scene_index": view.scene.scene_index,
        // Lore and memory recalled by "meaning" (the page's embedder) or by their "words".
        "recall": view.active.as_ref().map(|a| if a.recall_by_meaning() { "meaning" } else { "words" }),
        // How long opening the save held the frame, in milliseconds.
        "open_ms": view.active.as_ref().map(|a| u64::try_from(a.opened_in().as_millis()).unwrap_or(u64::MAX)),
    })
}

/// The session's view resources the page publishes.
#[derive(SystemParam)]
struct SessionShown<'w> {
    transcript: Res<'w, Transcript>,
    prompt: Res<'w, TurnPrompt>,
    progress: Res<'w, TurnProgress>,
    scene: Res<'w, SceneView>,
    active: Option<Res<'w, crate::engine::session::ActiveSession>>,
}

/// What the published state is made from besides resources: the controls'
/// places, whether a text field has the keyboard, CSS pixels per point.
type Unwatched = (Vec<(String, bevy_egui::egui::Rect)>, bool, f32);

/// Publish the screen's state when it changes: built only in a frame where
/// something it is made from changed (a session's whole transcript is not
/// turned into JSON every frame).
fn publish_state(
    screen: Res<State<Screen>>,
    active: Option<Res<ActiveStory>>,
    stage: Res<Stage>,
    overlays: Res<Overlays>,
    targets: Res<Targets>,
    library: Option<Res<Library>>,
    (campaigns, session): (Res<Campaigns>, SessionShown),
    mut contexts: EguiContexts,
    windows: Query<&Window, With<PrimaryWindow>>,
    (mut last, mut last_unwatched): (Local<String>, Local<Option<Unwatched>>),
) {
    let scale = windows.single().map_or(1.0, Window::scale_factor);
    // CSS pixels per egui point, and whether a text field has the keyboard
    // (what is typed goes into it, not to the shortcuts).
    let (points_to_css, typing) = contexts.ctx_mut().map_or((1.0, false), |ctx| {
        (
            ctx.pixels_per_point() / scale,
            ctx.egui_wants_keyboard_input(),
        )
    });
    let unchanged_unwatched = last_unwatched
        .as_ref()
        .is_some_and(|(t, k, p)| *t == targets.0 && *k == typing && *p == points_to_css);
    let changed = screen.is_changed()
        || active.as_ref().is_some_and(Res::is_changed)
        || stage.is_changed()
        || overlays.is_changed()
        || library.as_ref().is_some_and(Res::is_changed)
        || campaigns.is_changed()
        || session.transcript.is_changed()
        || session.prompt.is_changed()
        || session.progress.is_changed()
        || session.scene.is_changed()
        || !unchanged_unwatched;
    if !changed {
        return;
    }
    *last_unwatched = Some((targets.0.clone(), typing, points_to_css));
    let boxes: serde_json::Map<String, serde_json::Value> = targets
        .0
        .iter()
        .map(|(name, rect)| {
            let r = *rect * points_to_css;
            (
                name.clone(),
                serde_json::json!([r.min.x, r.min.y, r.width(), r.height()]),
            )
        })
        .collect();
    let playing = *screen.get() == Screen::Playing;
    let (story, passage) = match (&active, stage.passage) {
        (Some(active), Some(ix)) if playing => (
            Some(active.package.story.file().meta.id.clone()),
            Some(active.package.story.passage(ix).id.clone()),
        ),
        _ => (None, None),
    };
    let shelf: Vec<String> = library.as_ref().map_or_else(Vec::new, |l| {
        l.entries
            .iter()
            .map(|e| match &e.story {
                Ok(p) => p.story.title().to_owned(),
                Err(err) => format!("(cannot open) {err}"),
            })
            .collect()
    });
    let state = serde_json::json!({
        "screen": format!("{:?}", screen.get()),
        "shelf": shelf,
        "selected": library.as_ref().map(|l| l.selected),
        "story": story,
        "passage": passage,
        "ending": if playing { stage.ending.clone() } else { None },
        "finished": playing && stage.finished(),
        "codex": overlays.codex,
        "typing": typing,
        "campaigns": campaigns.0.iter().map(|c| serde_json::json!({
            "title": c.title,
            "latest": c.latest.as_ref().map(|p| p.to_string_lossy()),
        })).collect::<Vec<_>>(),
        "session": (*screen.get() == Screen::Session).then(|| session_state(&session)),
        "targets": boxes,
    })
    .to_string();
    if state == *last {
        return;
    }
    let Some(body) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.body())
    else {
        return;
    };
    if body.dataset().set("loreloom", &state).is_ok() {
        *last = state;
    }
}
