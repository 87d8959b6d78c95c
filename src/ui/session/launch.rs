//! Starting and leaving a session: the title's campaigns, opening a save, enriching a sketch.

use std::path::PathBuf;
use std::sync::Arc;

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use super::script::SessionScript;
use crate::engine::llm::LlmGateway;
use crate::engine::session::ActiveSession;
use crate::llm::{CallHandle, Gateway, LlmEvent, Script, ScriptedBackend};
use crate::session::save_files::{NewSave, create_save, latest_save, load_campaign};
use crate::ui::options::GuiOptions;
use crate::ui::screens::{Screen, Toasts};
use crate::ui::widgets::centered_window;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Campaigns>()
        .add_message::<OpenSession>()
        .add_systems(Startup, (find_campaigns, open_from_options).chain())
        .add_systems(Update, open_session)
        .add_systems(OnExit(Screen::Session), leave_session)
        .add_systems(OnEnter(Screen::Title), refresh_latest_saves)
        .add_systems(
            EguiPrimaryContextPass,
            enrichment_window.run_if(resource_exists::<Enriching>),
        );
    #[cfg(target_family = "wasm")]
    app.add_systems(
        EguiPrimaryContextPass,
        opening_window.run_if(resource_exists::<OpeningInPage>),
    );
}

/// A campaign on the shelf.
#[derive(Debug, Clone)]
pub struct CampaignEntry {
    pub dir: PathBuf,
    pub title: String,
    pub description: String,
    pub warnings: Vec<String>,
    pub latest: Option<PathBuf>,
    /// When `latest` was written (seconds since the epoch, as story slots say).
    pub latest_at: Option<u64>,
}

/// The campaign in `dir`'s newest save and when it was written.
fn latest_with_time(dir: &std::path::Path) -> (Option<PathBuf>, Option<u64>) {
    let latest = latest_save(dir);
    let at = latest
        .as_deref()
        .and_then(crate::files::modified)
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs());
    (latest, at)
}

/// Campaigns found in the library folders (folders with a `manifest.json`).
#[derive(Resource, Debug, Default)]
pub struct Campaigns(pub Vec<CampaignEntry>);

/// Open this save on the session screen.
#[derive(Message, Debug, Clone)]
pub struct OpenSession {
    pub save: PathBuf,
    pub model_script: Option<PathBuf>,
    /// Milliseconds between the scripted model's words.
    pub model_pace_ms: u64,
}

/// A sparse campaign being enriched before its first session (seed 002 §6.2.12).
#[derive(Resource, Debug)]
pub struct Enriching {
    handle: CallHandle,
    new: NewSave,
    title: String,
    started: bevy::platform::time::Instant,
}

impl Enriching {
    /// Asks the model to enrich `campaign` (titled `title`); the save `new` is made when it answers.
    pub(super) fn start(
        gateway: &Gateway,
        campaign: &crate::campaign::Campaign,
        new: NewSave,
        title: String,
    ) -> Self {
        let handle = gateway.call(crate::campaign::enrich::request(
            campaign,
            &new.large_model,
            1,
        ));
        Self {
            handle,
            new,
            title,
            started: bevy::platform::time::Instant::now(),
        }
    }
}

/// The gateway in use, started on first need.
pub(super) fn gateway_or_start(
    gateway: Option<&LlmGateway>,
    commands: &mut Commands,
) -> Result<Arc<Gateway>, String> {
    if let Some(g) = gateway {
        return Ok(g.0.clone());
    }
    let g = Arc::new(Gateway::open().map_err(|e| e.to_string())?);
    commands.insert_resource(LlmGateway(g.clone()));
    Ok(g)
}

fn find_campaigns(options: Res<GuiOptions>, mut campaigns: ResMut<Campaigns>) {
    let mut found = Vec::new();
    for dir in &options.library {
        // Sorted already.
        let dirs: Vec<PathBuf> = crate::files::list(dir)
            .into_iter()
            .filter(|p| crate::files::is_file(&p.join("manifest.json")))
            .collect();
        for dir in dirs {
            let (latest, latest_at) = latest_with_time(&dir);
            match load_campaign(&dir) {
                Ok(c) => found.push(CampaignEntry {
                    latest,
                    latest_at,
                    title: c.manifest.title.clone(),
                    description: c.manifest.description.clone().unwrap_or_default(),
                    warnings: c.manifest.content_warnings.clone(),
                    dir,
                }),
                Err(e) => warn!("{}: not offered: {e}", dir.display()),
            }
        }
    }
    campaigns.0 = found;
}

/// Back on the title screen, each campaign's latest save is looked up again
/// (a session played since has written one).
fn refresh_latest_saves(mut campaigns: ResMut<Campaigns>) {
    for c in &mut campaigns.0 {
        (c.latest, c.latest_at) = latest_with_time(&c.dir);
    }
}

/// The command line asked for a session: it opens at once.
fn open_from_options(options: Res<GuiOptions>, mut opens: MessageWriter<OpenSession>) {
    let Some(launch) = &options.session else {
        return;
    };
    opens.write(OpenSession {
        save: launch.save.clone(),
        model_script: launch.model_script.clone(),
        model_pace_ms: launch.model_pace_ms,
    });
}

/// The save asked for opens on the session screen (with the scripted model,
/// if one was given); a save that cannot open is said in a toast.
fn open_session(
    mut opens: MessageReader<OpenSession>,
    gateway: Option<Res<LlmGateway>>,
    mut commands: Commands,
    mut next: ResMut<NextState<Screen>>,
    mut toasts: ResMut<Toasts>,
    mut script_exit: MessageWriter<AppExit>,
    script: Option<Res<SessionScript>>,
    mut waiting: Local<Option<OpenSession>>,
    #[cfg(target_family = "wasm")] opening: Option<ResMut<OpeningInPage>>,
) {
    // A session asked for while another waited replaces it (never both opened).
    let pending = waiting.take();
    let Some(open) = opens.read().last().cloned().or(pending) else {
        return;
    };
    // In the page, a session opens once the page's embedder is in (or cannot
    // be), once what the open would embed (a new save's lore) has been read
    // ahead a few texts a frame, and after its window has been drawn: the
    // open itself runs on the frame's thread.
    #[cfg(target_family = "wasm")]
    {
        let loading = embedder_pending();
        let Some(mut o) = opening else {
            commands.insert_resource(OpeningInPage {
                drawn: 0,
                since: web_time::Instant::now(),
                ahead: None,
            });
            *waiting = Some(open);
            return;
        };
        if loading || !o.read_ahead(&open.save) || o.drawn < 2 {
            *waiting = Some(open);
            return;
        }
        commands.remove_resource::<OpeningInPage>();
    }
    let gateway = match gateway_or_start(gateway.as_deref(), &mut commands) {
        Ok(g) => g,
        Err(e) => {
            toasts.push(format!("The models cannot start: {e}"));
            return;
        }
    };
    let session = ActiveSession::open(open.save.clone());
    let mut session = match session {
        Ok(s) => s,
        Err(e) => {
            error!("{}: {e}", open.save.display());
            toasts.push(format!("Cannot open {}: {e}", open.save.display()));
            if script.is_some_and(|s| s.exit) {
                script_exit.write(AppExit::from_code(1));
            }
            return;
        }
    };
    if let Some(file) = &open.model_script {
        match Script::read(file) {
            Ok(s) => {
                let mut backend = ScriptedBackend::new(s);
                backend.word_delay = std::time::Duration::from_millis(open.model_pace_ms);
                // Just opened: no commit can have the controller yet.
                if let Some(ctl) = session.controller() {
                    gateway.register_script(&ctl.state.small_model, backend.clone());
                    gateway.register_script(&ctl.state.large_model, backend);
                }
            }
            Err(e) => toasts.push(format!("{}: {e}", file.display())),
        }
    }
    if cfg!(target_family = "wasm")
        && !session.recall_by_meaning()
        && let Err(e) = crate::memory::default_embedder()
    {
        toasts.push(format!(
            "In this page, lore and memories are recalled by their words, not their meaning: {e}"
        ));
    }
    commands.insert_resource(session);
    next.set(Screen::Session);
}

/// Whether a session asked for now waits for the page's embedder: asked
/// for on the first session, loading until its files are in and loaded.
#[cfg(target_family = "wasm")]
fn embedder_pending() -> bool {
    use crate::memory::page::{self, PageEmbedder};
    if matches!(page::state(), PageEmbedder::NotAsked) {
        page::request();
    }
    matches!(page::state(), PageEmbedder::Loading)
}

/// How long a frame in the page may spend reading ahead before it is drawn
/// (at least one text is read each frame): the reading is not stretched much
/// by the frames drawn between (about 380 ms each when the page is drawn on
/// the CPU, as in headless Chromium), and the page still draws about once a
/// second (session.js: at most 1.0–1.4 s without a frame while opening).
#[cfg(target_family = "wasm")]
const READ_AHEAD_PER_FRAME: std::time::Duration = std::time::Duration::from_millis(400);

/// A session is opening in the page: the window says so while the
/// embedder loads, while what the open would embed is read ahead, and in
/// the frames before the open.
#[cfg(target_family = "wasm")]
#[derive(Resource)]
struct OpeningInPage {
    /// Frames the window has been drawn in since the reading ahead ended.
    drawn: u8,
    /// When the session was asked for.
    since: web_time::Instant,
    /// What the open would embed and how far it is read; `None` until the
    /// embedder has stopped loading and the texts are listed (none without it).
    ahead: Option<ReadAhead>,
}

/// The texts a save's open would embed, read into the page embedder's memo.
#[cfg(target_family = "wasm")]
struct ReadAhead {
    texts: Vec<String>,
    read: usize,
}

#[cfg(target_family = "wasm")]
impl ReadAhead {
    fn done(&self) -> bool {
        self.read >= self.texts.len()
    }
}

#[cfg(target_family = "wasm")]
impl OpeningInPage {
    /// Read ahead what opening `save` would embed, for this frame's share of
    /// time; whether it is all read. Without the embedder there is nothing to
    /// read; a save that cannot be listed, or a text that cannot be embedded,
    /// ends the reading (the open then says what is wrong, or embeds the rest).
    fn read_ahead(&mut self, save: &std::path::Path) -> bool {
        use crate::memory::Embedder as _;
        let memo = crate::memory::page::memo();
        let ahead = self.ahead.get_or_insert_with(|| {
            let texts = memo.as_ref().map_or_else(Vec::new, |memo| {
                crate::session::controller::Controller::texts_to_embed(save, memo.key())
                    .unwrap_or_else(|e| {
                        warn!("{}: nothing read ahead: {e}", save.display());
                        Vec::new()
                    })
            });
            ReadAhead { texts, read: 0 }
        });
        let Some(memo) = memo else {
            return true;
        };
        let start = web_time::Instant::now();
        while !ahead.done() {
            if let Err(e) = memo.warm(&ahead.texts[ahead.read]) {
                warn!("reading ahead stopped: {e}");
                ahead.read = ahead.texts.len();
                break;
            }
            ahead.read += 1;
            if start.elapsed() >= READ_AHEAD_PER_FRAME {
                break;
            }
        }
        ahead.done()
    }
}

/// What an opening session in the page waits for (the page's own bar shows a
/// download), over the title, which takes no clicks meanwhile.
#[cfg(target_family = "wasm")]
fn opening_window(mut contexts: EguiContexts, mut opening: ResMut<OpeningInPage>) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    let started = opening.since;
    let loading = matches!(
        crate::memory::page::state(),
        crate::memory::page::PageEmbedder::Loading
    );
    let reading = opening
        .ahead
        .as_ref()
        .filter(|a| !a.done())
        .map(|a| (a.read, a.texts.len()));
    // Modal: the title under it takes no clicks while the session opens.
    egui::Modal::new(egui::Id::new("opening-session")).show(&ctx, |ui| {
        ui.heading("Opening the session");
        if loading {
            ui.label("Loading the memory model, so that lore and memories are recalled by their meaning…");
        } else if let Some((read, of)) = reading {
            ui.label("Reading the campaign's lore, so that it is recalled by its meaning (a new save does this once)…");
            ui.add(
                egui::ProgressBar::new(read as f32 / of.max(1) as f32)
                    .text(format!("{read} of {of}")),
            );
        } else {
            ui.label("Opening the session…");
        }
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("{:.0} s", started.elapsed().as_secs_f64()));
        });
    });
    if opening.ahead.as_ref().is_some_and(ReadAhead::done) {
        opening.drawn = opening.drawn.saturating_add(1);
    }
    ctx.request_repaint();
    Ok(())
}

/// Leaving the session screen ends the play session.
fn leave_session(mut commands: Commands, session: Option<ResMut<ActiveSession>>) {
    if let Some(mut s) = session {
        s.close();
    }
    commands.remove_resource::<ActiveSession>();
}

/// While a sparse campaign is enriched: what is happening and for how long;
/// when the model answers, the files are written and the new save opens.
fn enrichment_window(
    mut contexts: EguiContexts,
    enriching: Res<Enriching>,
    mut commands: Commands,
    mut opens: MessageWriter<OpenSession>,
    mut toasts: ResMut<Toasts>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    centered_window(&format!("Preparing {}", enriching.title)).show(&ctx, |ui| {
        ui.label("This campaign is only a sketch. The model is writing its people, plot beats, lore and rules…");
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("{:.0} s", enriching.started.elapsed().as_secs_f64()));
        });
        ui.label(
            egui::RichText::new("The new files end in _generated; your own files are never changed.")
                .weak(),
        );
    });
    ctx.request_repaint();
    for event in enriching.handle.poll() {
        let LlmEvent::Finished(outcome) = event else {
            continue;
        };
        commands.remove_resource::<Enriching>();
        match write_enrichment(&enriching.new.campaign, *outcome)
            .and_then(|()| create_save(&enriching.new).map_err(|e| e.to_string()))
        {
            Ok((save, _)) => {
                opens.write(OpenSession {
                    save,
                    model_script: None,
                    model_pace_ms: 0,
                });
            }
            Err(e) => toasts.push(format!("Cannot start {}: {e}", enriching.title)),
        }
    }
    Ok(())
}

/// The enrichment the model wrote, as the campaign's `_generated` files.
fn write_enrichment(dir: &std::path::Path, outcome: crate::llm::CallOutcome) -> Result<(), String> {
    let answer = outcome
        .result
        .map_err(|e| format!("enrichment failed at stage `enrich`: {e}; nothing was written"))?;
    let c = load_campaign(dir).map_err(|e| e.to_string())?;
    let source = crate::campaign::enrich::Source {
        model: format!("{} ({})", outcome.record.model_key, outcome.record.backend),
        prompt: outcome.record.prompt_id.clone(),
        seed: 1,
    };
    let files = crate::campaign::enrich::files(&c, &answer, &source).map_err(|e| e.to_string())?;
    crate::campaign::enrich::write(dir, &files)
        .map(drop)
        .map_err(|e| e.to_string())
}
