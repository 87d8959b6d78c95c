//! Player settings (text speed, auto-advance, skip read, volumes, fullscreen, …), kept as RON.
//!
//! Also UI scale and contrast.

use std::path::PathBuf;

use bevy::prelude::*;
use bevy::window::{MonitorSelection, PrimaryWindow, WindowMode};
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};
use serde::{Deserialize, Serialize};

use super::screens::Overlays;
use super::widgets::centered_window;
use crate::files::data_dir;
use crate::files::write_atomically;

pub(super) fn plugin(app: &mut App) {
    app.insert_resource(Settings::load())
        .add_systems(
            EguiPrimaryContextPass,
            (apply_settings, settings_panel).chain(),
        )
        .add_systems(Update, save_settings.run_if(resource_changed::<Settings>));
}

/// Everything a player can tune; missing fields take their defaults.
#[derive(Resource, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// Characters per second; 0 shows text at once.
    pub text_speed: f32,
    /// Take a passage's only choice by itself after `auto_delay` seconds.
    pub auto_advance: bool,
    pub auto_delay: f32,
    /// Show passages read before (in any playthrough) at once.
    pub skip_read: bool,
    /// 0..=1
    pub music_volume: f32,
    /// 0..=1
    pub sfx_volume: f32,
    pub fullscreen: bool,
    /// 0.75..=2
    pub ui_scale: f32,
    pub high_contrast: bool,
    /// Dock the debug overlay beside the stage instead of over it.
    pub streamer_layout: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            text_speed: 45.0,
            auto_advance: false,
            auto_delay: 2.0,
            skip_read: false,
            music_volume: 0.7,
            sfx_volume: 0.8,
            fullscreen: false,
            ui_scale: 1.0,
            high_contrast: false,
            streamer_layout: false,
        }
    }
}

impl Settings {
    fn path() -> PathBuf {
        data_dir().join("settings.ron")
    }

    /// The saved settings, or defaults (with a warning) when the file is missing or broken.
    pub fn load() -> Self {
        let path = Self::path();
        match crate::files::read_to_string_within(&path, 1 << 20) {
            Ok(text) => ron::from_str(&text).unwrap_or_else(|err| {
                warn!(
                    "{}: unreadable settings, using defaults: {err}",
                    path.display()
                );
                Self::default()
            }),
            Err(_) => Self::default(),
        }
    }
}

fn save_settings(settings: Res<Settings>) {
    let path = Settings::path();
    let text = match ron::ser::to_string_pretty(&*settings, ron::ser::PrettyConfig::default()) {
        Ok(text) => text,
        Err(err) => {
            warn!("could not encode settings: {err}");
            return;
        }
    };
    if let Err(err) = write_atomically(&path, text.as_bytes()) {
        warn!("{}: could not save settings: {err}", path.display());
    }
}

/// Style egui and the window from the settings when they change.
fn apply_settings(
    settings: Res<Settings>,
    mut contexts: EguiContexts,
    mut windows: Query<&mut Window, With<PrimaryWindow>>,
    mut applied: Local<Option<(Settings, u32)>>,
) -> Result {
    // The layout is designed at 720 logical pixels high and scales up with the window,
    // so text keeps its proportions from 1280x720 to 1920x1080 and beyond.
    let height = windows.single().map_or(720.0, Window::height);
    let key = (settings.clone(), height.round() as u32);
    if applied.as_ref() == Some(&key) {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    if applied.is_none() {
        super::fonts::install(ctx);
    }
    let fit = (height / 720.0).clamp(1.0, 1.75);
    ctx.set_zoom_factor((settings.ui_scale * fit).clamp(0.75, 3.0));
    ctx.options_mut(|o| o.zoom_with_keyboard = false);
    ctx.all_styles_mut(|style| {
        use egui::{FontId, TextStyle};
        for (text_style, size) in [
            (TextStyle::Body, 19.0),
            (TextStyle::Button, 18.0),
            (TextStyle::Heading, 28.0),
            (TextStyle::Small, 14.0),
        ] {
            style
                .text_styles
                .insert(text_style, FontId::proportional(size));
        }
        style.spacing.button_padding = egui::vec2(10.0, 6.0);
    });
    let mut visuals = egui::Visuals::dark();
    if settings.high_contrast {
        let white = egui::Color32::WHITE;
        visuals.override_text_color = Some(white);
        visuals.panel_fill = egui::Color32::BLACK;
        visuals.window_fill = egui::Color32::BLACK;
        visuals.extreme_bg_color = egui::Color32::BLACK;
        visuals.widgets.noninteractive.fg_stroke = egui::Stroke::new(1.5, white);
        visuals.widgets.inactive.bg_stroke = egui::Stroke::new(1.5, egui::Color32::YELLOW);
        visuals.widgets.hovered.bg_stroke = egui::Stroke::new(2.5, egui::Color32::YELLOW);
        visuals.selection.bg_fill = egui::Color32::from_rgb(0, 90, 200);
    } else {
        visuals.window_fill = egui::Color32::from_rgba_unmultiplied(18, 20, 28, 250);
        visuals.panel_fill = egui::Color32::from_rgba_unmultiplied(14, 16, 22, 235);
        visuals.selection.bg_fill = egui::Color32::from_rgb(92, 70, 140);
    }
    ctx.set_visuals_of(egui::Theme::Dark, visuals);
    ctx.set_theme(egui::Theme::Dark);
    if let Ok(mut window) = windows.single_mut() {
        let mode = if settings.fullscreen {
            WindowMode::BorderlessFullscreen(MonitorSelection::Current)
        } else {
            WindowMode::Windowed
        };
        if window.mode != mode {
            window.mode = mode;
        }
    }
    *applied = Some(key);
    Ok(())
}

fn settings_panel(
    mut contexts: EguiContexts,
    mut overlays: ResMut<Overlays>,
    mut settings: ResMut<Settings>,
) -> Result {
    if !overlays.settings {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let mut open = true;
    let mut edited = settings.clone();
    centered_window("Settings")
        .open(&mut open)
        .resizable(false)
        .show(ctx, |ui| {
            egui::Grid::new("settings-grid")
                .num_columns(2)
                .spacing([24.0, 12.0])
                .show(ui, |ui| {
                    ui.label("Text speed");
                    ui.add(
                        egui::Slider::new(&mut edited.text_speed, 0.0..=120.0)
                            .suffix(" chars/s")
                            .custom_formatter(|v, _| {
                                if v == 0.0 {
                                    "instant".into()
                                } else {
                                    format!("{v:.0}")
                                }
                            }),
                    );
                    ui.end_row();
                    ui.label("Auto-advance");
                    ui.horizontal(|ui| {
                        ui.checkbox(&mut edited.auto_advance, "take a lone choice after");
                        ui.add(egui::Slider::new(&mut edited.auto_delay, 0.5..=8.0).suffix(" s"));
                    });
                    ui.end_row();
                    ui.label("Skip read text");
                    ui.checkbox(&mut edited.skip_read, "show passages read before at once");
                    ui.end_row();
                    ui.label("Music volume");
                    ui.add(egui::Slider::new(&mut edited.music_volume, 0.0..=1.0));
                    ui.end_row();
                    ui.label("Sound effects");
                    ui.add(egui::Slider::new(&mut edited.sfx_volume, 0.0..=1.0));
                    ui.end_row();
                    ui.label("UI scale");
                    ui.add(egui::Slider::new(&mut edited.ui_scale, 0.75..=2.0));
                    ui.end_row();
                    ui.label("Display");
                    ui.checkbox(&mut edited.fullscreen, "fullscreen");
                    ui.end_row();
                    ui.label("Contrast");
                    ui.checkbox(&mut edited.high_contrast, "high contrast");
                    ui.end_row();
                    ui.label("Debug overlay (F12)");
                    ui.checkbox(
                        &mut edited.streamer_layout,
                        "streamer layout: dock beside the story",
                    );
                    ui.end_row();
                });
            ui.add_space(8.0);
            if ui.button("Restore defaults").clicked() {
                edited = Settings::default();
            }
        });
    if edited != *settings {
        *settings = edited;
    }
    overlays.settings = open;
    Ok(())
}
