//! The window's fonts: egui's own, then `DejaVu` Sans as the last fallback.
//!
//! egui's own are Ubuntu Light, Hack and the emoji fonts; `DejaVu` Sans covers
//! the typographic characters they lack (U+2011 NON-BREAKING HYPHEN, thin and
//! narrow spaces, primes), so no story or campaign text shows the missing-glyph box.

use std::sync::Arc;

use bevy_egui::egui;

/// `DejaVu` Sans (Bitstream Vera licence, `assets/fonts/DejaVuSans-LICENSE.txt`).
const FALLBACK: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const FALLBACK_NAME: &str = "DejaVuSans";

/// The font definitions the window uses.
pub fn definitions() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert(
        FALLBACK_NAME.to_owned(),
        Arc::new(egui::FontData::from_static(FALLBACK)),
    );
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push(FALLBACK_NAME.to_owned());
    }
    fonts
}

/// Sets the window's fonts on `ctx`.
pub fn install(ctx: &egui::Context) {
    ctx.set_fonts(definitions());
}
