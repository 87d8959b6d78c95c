//! Skills in the window (#25, seed 002 §8.3.3–8.3.4): the tool panel, state, gallery and settings.
//!
//! The tool execution panel (each tool of the turn live: status, streaming
//! log, timing, retries, errors), the narrative state panel (the skill state
//! tree, changed keys lit), the asset gallery, the inline notice of a failed
//! skill (Retry / Dismiss) and the max-replan dialog, the consent dialog for a
//! campaign's skill that waits for approval (#43), and the Skills settings
//! screen generated from each skill's config schema.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, EguiTextureHandle, egui};
use serde_json::{Map, Value};

use crate::engine::session::{ActiveSession, SkillsView};
use crate::skills::config::{self, Field, Kind};
use crate::skills::execute::ToolState;
use crate::skills::{Discovery, discover};
use crate::ui::screens::{Screen, Toasts};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<SkillsPanel>()
        .init_resource::<Consent>()
        .add_systems(
            EguiPrimaryContextPass,
            (
                (skills_window, skill_notices, consent_dialog)
                    .chain()
                    .run_if(in_state(Screen::Session)),
                settings_window,
            )
                .chain(),
        );
}

/// Which skill windows are open.
#[derive(Resource, Debug, Default)]
pub struct SkillsPanel {
    /// The tools, state and gallery panel (K).
    pub open: bool,
    /// The Skills settings screen.
    pub settings: Option<SettingsForm>,
}

/// The settings screen's drafts: every skill found, each one's edited config.
#[derive(Debug, Default)]
pub struct SettingsForm {
    found: Discovery,
    off: Vec<String>,
    drafts: BTreeMap<String, Map<String, Value>>,
    /// Text fields as typed (numbers parse when valid).
    typed: BTreeMap<(String, String), String>,
    said: BTreeMap<String, String>,
}

impl SettingsForm {
    /// Every skill of the session's folders (the bundled and its campaign's),
    /// or, with no session, the bundled ones, switched on or off.
    pub fn open(session: Option<&ActiveSession>) -> Self {
        let dirs = session.map_or_else(
            || vec![crate::files::resource_dir("skills")],
            |s| s.skill_dirs().to_vec(),
        );
        let mut found = discover(&dirs);
        let drafts = found
            .skills
            .iter()
            .map(|s| {
                (
                    s.manifest.name.clone(),
                    s.config.as_object().cloned().unwrap_or_default(),
                )
            })
            .collect();
        // An unreadable switch file keeps every skill off (and says so).
        let off = config::switched_off().unwrap_or_else(|why| {
            found.warnings.push(why);
            found
                .skills
                .iter()
                .map(|s| s.manifest.name.clone())
                .collect()
        });
        Self {
            found,
            off,
            drafts,
            ..Self::default()
        }
    }
}

/// The campaign skills the player kept off this sitting (by folder hash):
/// not asked about again until the game starts anew.
#[derive(Resource, Debug, Default)]
pub struct Consent {
    declined: std::collections::BTreeSet<String>,
    /// The skill the dialog shows (its folder hash, name and what it asks
    /// for), worked out once when it changes, not every frame.
    shown: Option<(String, String, Vec<String>)>,
}

/// A campaign's skill that waits for approval: what it is and what it asks
/// for, Allow or Keep it off (#43). Allowing pins the approval to the
/// folder as it is now and brings the skill into the session.
fn consent_dialog(
    mut contexts: EguiContexts,
    session: Option<ResMut<ActiveSession>>,
    mut consent: ResMut<Consent>,
    mut toasts: ResMut<Toasts>,
) -> Result {
    let Some(mut session) = session else {
        return Ok(());
    };
    let Some(ctl) = session.controller() else {
        return Ok(());
    };
    let first = ctl
        .state
        .skills
        .found
        .waiting
        .iter()
        .find(|w| !consent.declined.contains(&w.hash));
    let Some(first) = first else {
        consent.shown = None;
        return Ok(());
    };
    if consent
        .shown
        .as_ref()
        .is_none_or(|(hash, ..)| *hash != first.hash)
    {
        consent.shown = Some((
            first.hash.clone(),
            first.skill.manifest.name.clone(),
            first.skill.asks(),
        ));
    }
    let Some((hash, name, asks)) = consent.shown.clone() else {
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?.clone();
    // Opaque: what a stranger's program may do is read over nothing else.
    let style = ctx.global_style();
    let fill = style.visuals.window_fill.to_opaque();
    egui::Window::new("A campaign's skill asks to run")
        .id(egui::Id::new("skill-consent"))
        .frame(egui::Frame::window(&style).fill(fill))
        .collapsible(false)
        .resizable(false)
        .default_width(460.0)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(&ctx, |ui| {
            ui.label(
                "This campaign brings a program of its own. It runs only if you allow it.",
            );
            ui.separator();
            for line in &asks {
                ui.label(line);
            }
            ui.separator();
            ui.weak("Allowed as it is now: if the campaign's copy changes, you are asked again. `loreloom skills revoke` takes it back.");
            ui.horizontal(|ui| {
                if ui.button("Allow").clicked() {
                    match crate::skills::consent::Approvals::approve(
                        &crate::skills::consent::approvals_path(),
                        &name,
                        &hash,
                    ) {
                        Ok(()) => {
                            let found = discover(session.skill_dirs());
                            session.refresh_skills(found);
                            toasts.push(format!("The {name} skill may run"));
                        }
                        Err(e) => {
                            toasts.push(e);
                            consent.declined.insert(hash.clone());
                        }
                    }
                }
                if ui.button("Keep it off").clicked() {
                    consent.declined.insert(hash.clone());
                    toasts.push(format!("The {name} skill stays off"));
                }
            });
        });
    Ok(())
}

/// The colour of errors and failed tools.
const ERROR: egui::Color32 = egui::Color32::from_rgb(235, 110, 100);

fn status_colour(status: Option<ToolState>) -> egui::Color32 {
    match status {
        Some(ToolState::Success) => egui::Color32::from_rgb(120, 200, 120),
        None => egui::Color32::from_rgb(230, 200, 90),
        Some(ToolState::Skipped) => egui::Color32::GRAY,
        Some(ToolState::Failed | ToolState::Timeout) => ERROR,
    }
}

fn skills_window(
    mut contexts: EguiContexts,
    mut panel: ResMut<SkillsPanel>,
    view: Res<SkillsView>,
    keys: Res<ButtonInput<KeyCode>>,
    server: Res<AssetServer>,
    images: Res<Assets<Image>>,
    mut thumbnails: Local<BTreeMap<PathBuf, Handle<Image>>>,
    session: Option<Res<ActiveSession>>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    if keys.just_pressed(KeyCode::KeyK) && !ctx.egui_wants_keyboard_input() {
        panel.open = !panel.open;
    }
    if !panel.open {
        return Ok(());
    }
    let mut textures = BTreeMap::new();
    for asset in view.assets.iter().filter(|a| a.shown) {
        let handle = thumbnails
            .entry(asset.path.clone())
            .or_insert_with(|| server.load(asset.path.clone()));
        if let Some(image) = images.get(handle.id()) {
            // Fit in a 96-pixel square, keeping its shape.
            let (w, h) = (image.width() as f32, image.height() as f32);
            let scale = 96.0 / w.max(h).max(1.0);
            let id = contexts.add_image(EguiTextureHandle::Weak(handle.id()));
            textures.insert(asset.path.clone(), (id, egui::vec2(w * scale, h * scale)));
        }
    }
    let mut open = panel.open;
    let mut settings = false;
    egui::Window::new("Skills")
        .open(&mut open)
        .default_width(380.0)
        .default_height(560.0)
        .anchor(egui::Align2::RIGHT_TOP, [-12.0, 48.0])
        .show(&ctx, |ui| {
            egui::ScrollArea::vertical()
                .max_height(620.0)
                .show(ui, |ui| {
                    tools_section(ui, &view);
                    ui.separator();
                    gallery_section(ui, &view, &textures);
                    ui.separator();
                    state_section(ui, &view);
                    ui.separator();
                    if ui.button("Skills settings…").clicked() {
                        settings = true;
                    }
                });
        });
    panel.open = open;
    if settings {
        panel.settings = Some(SettingsForm::open(session.as_deref()));
    }
    Ok(())
}

/// "Tools this turn": each tool's status, timing, retries, error and log.
fn tools_section(ui: &mut egui::Ui, view: &SkillsView) {
    ui.heading("Tools this turn");
    if view.tools.is_empty() {
        ui.weak("No skill ran this turn.");
    }
    for t in &view.tools {
        ui.horizontal(|ui| {
            ui.colored_label(status_colour(t.status), "●");
            ui.strong(&t.skill);
            ui.label(format!("({})", t.tool_id));
            ui.label(t.status.map_or("running", ToolState::words));
            if let Some(ms) = t.ms {
                ui.weak(format!("{ms} ms"));
            }
            if t.retries > 0 {
                ui.weak(format!("{} retries", t.retries));
            }
        });
        if let Some(e) = &t.error {
            ui.colored_label(ERROR, e);
        }
        egui::CollapsingHeader::new(format!("log: {} lines", t.lines.len()))
            .id_salt(("tool-log", &t.tool_id))
            .default_open(t.status.is_none())
            .show(ui, |ui| {
                for line in &t.lines {
                    ui.monospace(line);
                }
            });
    }
}

/// The gallery: what the skills made this sitting, newest first (a card for
/// what cannot be shown, or is not loaded yet).
fn gallery_section(
    ui: &mut egui::Ui,
    view: &SkillsView,
    textures: &BTreeMap<PathBuf, (egui::TextureId, egui::Vec2)>,
) {
    ui.heading("Gallery");
    if view.assets.is_empty() {
        ui.weak("No pictures or files yet.");
    }
    ui.horizontal_wrapped(|ui| {
        for asset in view.assets.iter().rev() {
            ui.vertical(|ui| {
                match textures.get(&asset.path) {
                    Some((id, size)) => {
                        ui.image(egui::load::SizedTexture::new(*id, *size));
                    }
                    None => {
                        egui::Frame::group(ui.style()).show(ui, |ui| {
                            ui.set_min_size(egui::vec2(88.0, 88.0));
                            ui.label(format!("[{}]", asset.kind));
                        });
                    }
                }
                ui.weak(format!("{} · scene {}", asset.skill, asset.scene));
            });
        }
    });
}

/// The narrative state: the skill state tree, the keys the last turn changed
/// lit; UI events with no display yet.
fn state_section(ui: &mut egui::Ui, view: &SkillsView) {
    ui.heading("Narrative state");
    if view.state.is_empty() {
        ui.weak("Nothing kept yet.");
    }
    for (key, value) in crate::session::skills::entries(&view.state) {
        if view.changed.contains(&key) {
            ui.colored_label(
                egui::Color32::from_rgb(250, 210, 110),
                format!("★ {key}: {value}"),
            );
        } else {
            ui.monospace(format!("{key}: {value}"));
        }
    }
    if !view.ui_events.is_empty() {
        ui.separator();
        for e in &view.ui_events {
            ui.weak(format!("[{e}: no display for it yet]"));
        }
    }
}

/// The inline notice of a skill that failed (Retry heals it so the next turn
/// may call it again; Dismiss hides it) and the max-replan dialog.
fn skill_notices(
    mut contexts: EguiContexts,
    mut view: ResMut<SkillsView>,
    mut session: Option<ResMut<ActiveSession>>,
    mut panel: ResMut<SkillsPanel>,
    mut toasts: ResMut<Toasts>,
) -> Result {
    let ctx = contexts.ctx_mut()?.clone();
    if let Some(notice) = view.notice.clone() {
        let mut close = false;
        egui::Area::new(egui::Id::new("skill-notice"))
            .anchor(egui::Align2::LEFT_TOP, [16.0, 108.0])
            .show(&ctx, |ui| {
                egui::Frame::popup(ui.style()).show(ui, |ui| {
                    ui.horizontal(|ui| {
                        ui.colored_label(
                            ERROR,
                            format!("⚠ The {} skill failed: {}", notice.skill, notice.message),
                        );
                        if ui.button("Retry").clicked() {
                            if let Some(s) = session.as_mut() {
                                s.heal_skill(&notice.skill);
                            }
                            toasts.push(format!("{} will be tried again next turn", notice.skill));
                            close = true;
                        }
                        if ui.button("Dismiss").clicked() {
                            close = true;
                        }
                    });
                });
            });
        if close {
            view.notice = None;
        }
    }
    if let Some(line) = view.fallback.clone() {
        let mut close = false;
        egui::Window::new("The skills could not help")
            .collapsible(false)
            .resizable(false)
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .show(&ctx, |ui| {
                ui.label(&line);
                ui.weak(format!(
                    "Five plans failed this turn, each without the skills that failed before it; the story went on without them. ({} tool(s) failed.)",
                    view.tools.iter().filter(|t| matches!(t.status, Some(ToolState::Failed | ToolState::Timeout))).count()
                ));
                ui.horizontal(|ui| {
                    if ui.button("Continue").clicked() {
                        close = true;
                    }
                    if ui.button("Skills settings…").clicked() {
                        panel.settings = Some(SettingsForm::open(session.as_deref()));
                        close = true;
                    }
                });
            });
        if close {
            view.fallback = None;
        }
    }
    Ok(())
}

/// One field's editor; true when it changed.
fn field_editor(
    ui: &mut egui::Ui,
    skill: &str,
    field: &Field,
    draft: &mut Map<String, Value>,
    typed: &mut BTreeMap<(String, String), String>,
) -> bool {
    let current = draft.get(&field.key).or(field.default.as_ref()).cloned();
    let mut changed = false;
    ui.horizontal(|ui| {
        ui.label(&field.key)
            .on_hover_text(field.description.clone().unwrap_or_default());
        match &field.kind {
            Kind::Boolean => {
                let mut on = current.as_ref().and_then(Value::as_bool).unwrap_or(false);
                if ui.checkbox(&mut on, "").changed() {
                    draft.insert(field.key.clone(), Value::Bool(on));
                    changed = true;
                }
            }
            Kind::Choice(options) => {
                let mut chosen = match &current {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                };
                egui::ComboBox::from_id_salt((skill, &field.key))
                    .selected_text(chosen.clone())
                    .show_ui(ui, |ui| {
                        for o in options {
                            if ui.selectable_value(&mut chosen, o.clone(), o).changed() {
                                // An enum of numbers keeps its numbers.
                                let value = serde_json::from_str(&chosen)
                                    .unwrap_or_else(|_| Value::String(chosen.clone()));
                                draft.insert(field.key.clone(), value);
                                changed = true;
                            }
                        }
                    });
            }
            kind => {
                let key = (skill.to_owned(), field.key.clone());
                let text = typed.entry(key).or_insert_with(|| match &current {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                });
                let edit = egui::TextEdit::singleline(text)
                    .password(field.sensitive)
                    .desired_width(200.0);
                if ui.add(edit).changed() {
                    let value = match kind {
                        Kind::Integer => text.trim().parse::<i64>().map(Value::from).ok(),
                        Kind::Number => text.trim().parse::<f64>().ok().map(Value::from),
                        _ => Some(Value::String(text.clone())),
                    };
                    // An unparsable number is kept as text: validation says why.
                    draft.insert(
                        field.key.clone(),
                        value.unwrap_or_else(|| Value::String(text.clone())),
                    );
                    changed = true;
                }
                if let Some(var) = &field.env_var {
                    ui.weak(format!("from ${var}"));
                }
            }
        }
    });
    if let Some(Value::String(s)) = draft.get(&field.key)
        && s.contains("${")
    {
        let resolved = config::substitute(&Value::String(s.clone()), &|v| std::env::var(v).ok());
        let shown = if field.sensitive {
            "••••••".to_owned()
        } else {
            resolved.as_str().unwrap_or_default().to_owned()
        };
        ui.weak(format!("    → {shown}"));
    }
    changed
}

/// One skill's part of the settings screen: switched on or off, its config
/// fields by category, their problems, Save; whether it was switched.
fn skill_form(ui: &mut egui::Ui, form: &mut SettingsForm, i: usize) -> bool {
    let skill = &form.found.skills[i];
    let name = skill.manifest.name.clone();
    let title = skill
        .manifest
        .display_name
        .clone()
        .unwrap_or_else(|| name.clone());
    let mut switched = false;
    ui.horizontal(|ui| {
        let mut on = !form.off.contains(&name);
        if ui
            .checkbox(&mut on, egui::RichText::new(&title).strong())
            .changed()
        {
            match config::switch(&name, on) {
                Ok(()) => {
                    form.off = config::switched_off().unwrap_or_default();
                    switched = true;
                }
                Err(e) => {
                    form.said.insert(name.clone(), format!("not saved: {e}"));
                }
            }
        }
        ui.weak(format!("v{}", skill.manifest.version));
    });
    ui.label(&skill.manifest.description);
    let Some(schema) = &skill.config_schema else {
        ui.weak("Nothing to configure.");
        ui.separator();
        return switched;
    };
    let fields = config::fields(schema);
    let draft = form.drafts.entry(name.clone()).or_default();
    let mut groups: BTreeMap<String, Vec<&Field>> = BTreeMap::new();
    for f in &fields {
        groups
            .entry(f.category.clone().unwrap_or_else(|| "General".into()))
            .or_default()
            .push(f);
    }
    for (group, fields) in groups {
        ui.label(egui::RichText::new(group).italics());
        for f in fields {
            field_editor(ui, &name, f, draft, &mut form.typed);
        }
    }
    let problems = config::problems(schema, &Value::Object(draft.clone()));
    for p in &problems {
        ui.colored_label(ERROR, p);
    }
    ui.horizontal(|ui| {
        let save = ui.add_enabled(problems.is_empty(), egui::Button::new("Save"));
        if save.clicked() {
            let said = match config::save(&skill.dir, Some(schema), &Value::Object(draft.clone())) {
                Ok(()) => "saved to config.json".to_owned(),
                Err(e) => e.join("; "),
            };
            form.said.insert(name.clone(), said);
        }
        if let Some(said) = form.said.get(&name) {
            ui.weak(said);
        }
    });
    ui.separator();
    switched
}

fn settings_window(
    mut contexts: EguiContexts,
    mut panel: ResMut<SkillsPanel>,
    mut session: Option<ResMut<ActiveSession>>,
    mut toasts: ResMut<Toasts>,
    mut consent: ResMut<Consent>,
) -> Result {
    let Some(form) = panel.settings.as_mut() else {
        return Ok(());
    };
    let ctx = contexts.ctx_mut()?.clone();
    let mut open = true;
    let mut switched = false;
    let mut review = None;
    egui::Window::new("Skills settings")
        .open(&mut open)
        .default_width(520.0)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
        .show(&ctx, |ui| {
            egui::ScrollArea::vertical()
                .max_height(560.0)
                .show(ui, |ui| {
                    for w in &form.found.warnings {
                        ui.colored_label(ERROR, w);
                    }
                    // A campaign's skill kept off (#43): its dialog again.
                    for w in &form.found.waiting {
                        ui.horizontal(|ui| {
                            ui.label(format!(
                                "{}: the campaign's, waiting for your approval",
                                w.skill.manifest.name
                            ));
                            if ui.button("Review…").clicked() {
                                review = Some(w.hash.clone());
                            }
                        });
                    }
                    for i in 0..form.found.skills.len() {
                        switched |= skill_form(ui, form, i);
                    }
                });
        });
    if switched && let Some(s) = session.as_mut() {
        // The session's skills at once (what the form found, as now
        // switched), their health kept.
        s.refresh_skills(form.found.clone());
        toasts.push("Skills switched: the next turn uses them as set".to_owned());
    }
    if let Some(hash) = review {
        consent.declined.remove(&hash);
        open = false;
    }
    if !open {
        panel.settings = None;
    }
    Ok(())
}
