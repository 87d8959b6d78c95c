//! A session's backdrop as Bevy sprites under the egui layer, crossfading on a change of scene.
//!
//! The picture is cropped to cover the window and cut into pieces along the
//! panels, so that each piece is drawn once at its shade's alpha over the
//! shade colour (the camera's clear colour here). egui's shader converts sRGB
//! both ways for every pixel it draws, and every blended layer reads the
//! target back, which a software renderer pays for per pixel; this way each
//! pixel is drawn once.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::scenery::SessionScenery;
use crate::ui::screens::{Screen, UiSystems};

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Shades>()
        .add_systems(OnEnter(Screen::Session), shade_clear_colour)
        .add_systems(OnExit(Screen::Session), plain_clear_colour)
        .add_systems(
            Update,
            follow_backdrop
                .in_set(UiSystems::Present)
                .run_if(in_state(Screen::Session)),
        );
}

/// Dark translucent rectangles the session screen wants under its panels
/// (the text box, the input, the bar), in egui points, and egui's points per
/// logical pixel; the backdrop is darkened under them so egui draws only the words.
#[derive(Resource, Debug, Default)]
pub struct Shades {
    pub rects: Vec<(bevy_egui::egui::Rect, u8)>,
    pub points_to_logical: f32,
}

/// A piece of one of the two pictures.
#[derive(Component, Debug, Clone, Copy)]
struct Piece {
    layer: Backdrop,
    n: usize,
}

/// The colour of every shade (sRGB), at its alpha.
const SHADE: [u8; 3] = [10, 12, 18];

/// Which of the two pictures a sprite shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backdrop {
    /// The place now, fading in over the one before.
    Now,
    /// The place before, shown while the new one fades in.
    Before,
}

/// The session's camera clears to the shade colour, which shows through
/// where a piece of the picture is shaded.
fn shade_clear_colour(mut cameras: Query<&mut Camera>) {
    for mut camera in &mut cameras {
        camera.clear_color = ClearColorConfig::Custom(Color::srgb_u8(SHADE[0], SHADE[1], SHADE[2]));
    }
}

fn plain_clear_colour(mut cameras: Query<&mut Camera>) {
    for mut camera in &mut cameras {
        camera.clear_color = ClearColorConfig::Default;
    }
}

/// The window (`area`, logical pixels) cut into rectangles that each lie
/// under one combined shade, given the shades' rectangles (logical pixels)
/// and alphas (0 to 1): rows between the shades' edges, and in each row the
/// runs of equal shade. Edges fall on whole pixels, so pieces meet exactly.
pub fn pieces(area: Vec2, shades: &[(Rect, f32)]) -> Vec<(Rect, f32)> {
    let window = Rect::from_corners(Vec2::ZERO, area.round());
    let shades: Vec<(Rect, f32)> = shades
        .iter()
        .map(|(r, a)| {
            let r = Rect::from_corners(r.min.round(), r.max.round()).intersect(window);
            (r, a.clamp(0.0, 1.0))
        })
        .filter(|(r, a)| !r.is_empty() && *a > 0.0)
        .collect();
    let edges = |pick: fn(&Rect) -> [f32; 2], whole: [f32; 2]| {
        let mut v: Vec<f32> = shades.iter().flat_map(|(r, _)| pick(r)).collect();
        v.extend(whole);
        v.sort_by(f32::total_cmp);
        v.dedup();
        v
    };
    let ys = edges(|r| [r.min.y, r.max.y], [window.min.y, window.max.y]);
    let xs = edges(|r| [r.min.x, r.max.x], [window.min.x, window.max.x]);
    let shade_at = |p: Vec2| {
        1.0 - shades
            .iter()
            .filter(|(r, _)| r.contains(p))
            .map(|(_, a)| 1.0 - a)
            .product::<f32>()
    };
    let mut out: Vec<(Rect, f32)> = Vec::new();
    for row in ys.windows(2) {
        let mut run: Option<(Rect, f32)> = None;
        for col in xs.windows(2) {
            let cell = Rect::new(col[0], row[0], col[1], row[1]);
            let alpha = shade_at(cell.center());
            run = match run {
                Some((r, a)) if (a - alpha).abs() < 1e-6 => Some((r.union(cell), a)),
                Some(done) => {
                    out.push(done);
                    Some((cell, alpha))
                }
                None => Some((cell, alpha)),
            };
        }
        out.extend(run);
    }
    out
}

/// The part of an image of `size` that covers an area of `aspect` (width
/// over height), centred: the whole of the shorter side, the middle of the longer.
pub fn cover_crop(size: UVec2, aspect: f32) -> Rect {
    let (w, h) = (size.x.max(1) as f32, size.y.max(1) as f32);
    if w / h > aspect {
        let crop = h * aspect;
        Rect::new((w - crop) / 2.0, 0.0, f32::midpoint(w, crop), h)
    } else {
        let crop = w / aspect;
        Rect::new(0.0, (h - crop) / 2.0, w, f32::midpoint(h, crop))
    }
}

fn follow_backdrop(
    scenery: Res<SessionScenery>,
    shades: Res<Shades>,
    time: Res<Time>,
    window: Query<&Window, With<PrimaryWindow>>,
    images: Res<Assets<Image>>,
    mut sprites: Query<(&Piece, &mut Sprite, &mut Transform, &mut Visibility)>,
    mut commands: Commands,
) {
    let Ok(window) = window.single() else {
        return;
    };
    let area = window.size();
    let half = area / 2.0;
    let scale = shades.points_to_logical;
    let logical: Vec<(Rect, f32)> = shades
        .rects
        .iter()
        .map(|(r, a)| {
            let rect = Rect::new(r.min.x, r.min.y, r.max.x, r.max.y);
            (
                Rect::from_corners(rect.min * scale, rect.max * scale),
                f32::from(*a) / 255.0,
            )
        })
        .collect();
    let cut = pieces(area, &logical);
    let fade = scenery.fade(time.elapsed_secs());
    let layer_of = |layer: Backdrop| {
        let (handle, alpha) = match layer {
            Backdrop::Now => (scenery.backdrop.as_ref(), fade),
            Backdrop::Before => (scenery.previous().filter(|_| fade < 1.0), 1.0),
        };
        let (handle, size) = handle.and_then(|h| Some((h, images.get(h.id())?.size())))?;
        Some((
            handle.clone(),
            cover_crop(size, area.x / area.y.max(1.0)),
            alpha,
        ))
    };
    let layers = [
        (Backdrop::Before, layer_of(Backdrop::Before)),
        (Backdrop::Now, layer_of(Backdrop::Now)),
    ];
    let mut have = [0, 0];
    for (piece, mut sprite, mut transform, mut visibility) in &mut sprites {
        let slot = usize::from(piece.layer == Backdrop::Now);
        have[slot] = have[slot].max(piece.n + 1);
        let (Some((handle, crop, alpha)), Some((rect, shade))) =
            (&layers[slot].1, cut.get(piece.n))
        else {
            visibility.set_if_neq(Visibility::Hidden);
            continue;
        };
        visibility.set_if_neq(Visibility::Visible);
        // The part of the cropped picture under this piece.
        let to_crop = crop.size() / area.max(Vec2::ONE);
        let wanted = Sprite {
            image: handle.clone(),
            color: Color::srgba(1.0, 1.0, 1.0, alpha * (1.0 - shade)),
            custom_size: Some(rect.size()),
            rect: Some(Rect::from_corners(
                crop.min + rect.min * to_crop,
                crop.min + rect.max * to_crop,
            )),
            ..default()
        };
        if sprite.image != wanted.image
            || sprite.color != wanted.color
            || sprite.custom_size != wanted.custom_size
            || sprite.rect != wanted.rect
        {
            *sprite = wanted;
        }
        let centre = rect.center();
        let at = Vec3::new(
            centre.x - half.x,
            half.y - centre.y,
            transform.translation.z,
        );
        if transform.translation != at {
            transform.translation = at;
        }
    }
    for (slot, (layer, _)) in layers.iter().enumerate() {
        for n in have[slot]..cut.len() {
            let z = if *layer == Backdrop::Now { 0.0 } else { -1.0 };
            commands.spawn((
                Sprite::default(),
                Transform::from_xyz(0.0, 0.0, z),
                Visibility::Hidden,
                Piece { layer: *layer, n },
                DespawnOnExit(Screen::Session),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text box across the middle and the bar at the top: five bands,
    /// each shaded as the panels over it say, covering the window once.
    #[test]
    fn the_window_is_cut_along_the_panels() {
        let area = Vec2::new(100.0, 50.0);
        let bar = (Rect::new(0.0, 0.0, 100.0, 5.0), 0.9);
        let text = (Rect::new(0.0, 20.4, 100.0, 40.0), 0.5);
        let cut = pieces(area, &[bar, text]);
        let bands: Vec<(Rect, f32)> = vec![
            (Rect::new(0.0, 0.0, 100.0, 5.0), 0.9),
            (Rect::new(0.0, 5.0, 100.0, 20.0), 0.0),
            (Rect::new(0.0, 20.0, 100.0, 40.0), 0.5),
            (Rect::new(0.0, 40.0, 100.0, 50.0), 0.0),
        ];
        assert_eq!(cut.len(), bands.len());
        for ((got, a), (want, b)) in cut.iter().zip(&bands) {
            assert_eq!(got, want);
            assert!((a - b).abs() < 1e-6, "{a} ≠ {b}");
        }
        // A side panel over part of the text box: that row splits in two,
        // the overlap darker than either shade alone.
        let side = (Rect::new(70.0, 5.0, 100.0, 40.0), 0.5);
        let cut = pieces(area, &[bar, text, side]);
        let area_sum: f32 = cut.iter().map(|(r, _)| r.width() * r.height()).sum();
        assert!((area_sum - 5000.0).abs() < 1e-3, "covered once: {area_sum}");
        let overlap = cut
            .iter()
            .find(|(r, _)| r.contains(Vec2::new(80.0, 30.0)))
            .unwrap();
        assert!((overlap.1 - 0.75).abs() < 1e-6);
        let under_text = cut
            .iter()
            .find(|(r, _)| r.contains(Vec2::new(10.0, 30.0)))
            .unwrap();
        assert_eq!(under_text.0, Rect::new(0.0, 20.0, 70.0, 40.0));
    }

    #[test]
    fn a_wide_picture_loses_its_sides_and_a_tall_one_its_top_and_foot() {
        let wide = cover_crop(UVec2::new(640, 360), 4.0 / 3.0);
        assert_eq!(wide, Rect::new(80.0, 0.0, 560.0, 360.0));
        let tall = cover_crop(UVec2::new(640, 360), 32.0 / 9.0);
        assert_eq!(tall, Rect::new(0.0, 90.0, 640.0, 270.0));
        let same = cover_crop(UVec2::new(640, 360), 16.0 / 9.0);
        assert_eq!(same, Rect::new(0.0, 0.0, 640.0, 360.0));
    }
}
