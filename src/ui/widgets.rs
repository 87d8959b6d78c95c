//! Helper functions for common widgets: windows, captions, framed portraits, cover-cropped art.

use web_time::{SystemTime, UNIX_EPOCH};

use bevy::prelude::*;
use bevy_egui::egui;

/// A panel window centred over the screen, the shape every overlay panel shares.
pub fn centered_window(title: &str) -> egui::Window<'_> {
    egui::Window::new(title)
        .collapsible(false)
        .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
}

/// The backlog's window (stories and sessions): centred, most of the screen,
/// scrolled to the newest.
pub fn backlog_window(ctx: &egui::Context, open: &mut bool, add: impl FnOnce(&mut egui::Ui)) {
    centered_window("Backlog")
        .open(open)
        .fixed_size(ctx.viewport_rect().size() * egui::vec2(0.6, 0.7))
        .show(ctx, |ui| {
            egui::ScrollArea::vertical()
                .stick_to_bottom(true)
                .auto_shrink([false, false])
                .show(ui, add);
        });
}

/// A caption in a dark box at the top left of the picture `area`.
pub fn caption_box(
    ctx: &egui::Context,
    id: &str,
    area: egui::Rect,
    add: impl FnOnce(&mut egui::Ui),
) {
    egui::Area::new(egui::Id::new(id))
        .fixed_pos(area.min + egui::vec2(16.0, 12.0))
        .show(ctx, |ui| {
            egui::Frame::new()
                .fill(egui::Color32::from_black_alpha(150))
                .inner_margin(egui::Margin::symmetric(10, 6))
                .corner_radius(4.0)
                .show(ui, add);
        });
}

/// A portrait in its frame with the name under it, as the story and session
/// stages draw the people present (a dark frame while the picture loads),
/// `lit` for the one speaking.
pub fn paint_framed(
    ui: &egui::Ui,
    frame: egui::Rect,
    tex: Option<egui::TextureId>,
    name: &str,
    text_size: f32,
    lit: bool,
) {
    let painter = ui.painter();
    if lit {
        // The one speaking: a warm glow around the frame.
        painter.rect_filled(
            frame.expand(5.0),
            6.0,
            egui::Color32::from_rgba_unmultiplied(240, 200, 120, 90),
        );
    }
    match tex {
        Some(tex) => {
            painter.image(
                tex,
                frame,
                egui::Rect::from_min_max(egui::Pos2::ZERO, egui::pos2(1.0, 1.0)),
                egui::Color32::WHITE,
            );
        }
        None => {
            painter.rect_filled(frame, 3.0, egui::Color32::from_black_alpha(120));
        }
    }
    let stroke = if lit {
        egui::Stroke::new(2.5, egui::Color32::from_rgb(240, 200, 120))
    } else {
        egui::Stroke::new(1.5, egui::Color32::from_gray(210))
    };
    painter.rect_stroke(frame, 3.0, stroke, egui::StrokeKind::Outside);
    painter.text(
        egui::pos2(frame.center().x, frame.max.y + 4.0),
        egui::Align2::CENTER_TOP,
        name,
        egui::FontId::proportional(text_size),
        egui::Color32::from_gray(240),
    );
}

/// Paint an image to fill `rect`, cropping the overflow (like CSS `object-fit: cover`).
pub fn paint_cover(ui: &egui::Ui, tex: egui::TextureId, size: UVec2, rect: egui::Rect) {
    paint_cover_tinted(ui, tex, size, rect, egui::Color32::WHITE);
}

/// [`paint_cover`] multiplied by `tint` (a backdrop fading in: white at an alpha).
pub fn paint_cover_tinted(
    ui: &egui::Ui,
    tex: egui::TextureId,
    size: UVec2,
    rect: egui::Rect,
    tint: egui::Color32,
) {
    let image_aspect = size.x.max(1) as f32 / size.y.max(1) as f32;
    let rect_aspect = rect.width() / rect.height().max(1.0);
    let uv = if image_aspect > rect_aspect {
        let w = rect_aspect / image_aspect;
        egui::Rect::from_min_max(
            egui::pos2((1.0 - w) / 2.0, 0.0),
            egui::pos2(f32::midpoint(1.0, w), 1.0),
        )
    } else {
        let h = image_aspect / rect_aspect;
        egui::Rect::from_min_max(
            egui::pos2(0.0, (1.0 - h) / 2.0),
            egui::pos2(1.0, f32::midpoint(1.0, h)),
        )
    };
    ui.painter().image(tex, rect, uv, tint);
}

/// How long ago a save was written (seconds since the epoch), in words.
pub fn age(saved_at: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match now.saturating_sub(saved_at) {
        s if s < 60 => "just now".to_owned(),
        s if s < 3600 => format!("{} min ago", s / 60),
        s if s < 86_400 => format!("{} h ago", s / 3600),
        s => format!("{} days ago", s / 86_400),
    }
}
