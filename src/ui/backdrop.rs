//! A session's backdrop and the shades under its panels as Bevy sprites under the egui layer (the picture cropped to cover the window, crossfading on a change of scene): egui's shader converts sRGB both ways for every pixel it draws, which a software renderer pays for on each large layer; the sprite pipeline does not.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::screens::Screen;
use super::session_screen::SessionScenery;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<Shades>()
        .add_systems(OnEnter(Screen::Session), spawn_backdrops)
        .add_systems(
            Update,
            (follow_backdrop, follow_shades).run_if(in_state(Screen::Session)),
        );
}

/// Dark translucent rectangles the session screen wants under its panels
/// (the text box, the input, the bar), in egui points, and egui's points per
/// logical pixel; drawn as sprites so egui draws only the words.
#[derive(Resource, Debug, Default)]
pub struct Shades {
    pub rects: Vec<(bevy_egui::egui::Rect, u8)>,
    pub points_to_logical: f32,
}

/// A sprite shading the `n`-th of [`Shades`].
#[derive(Component, Debug, Clone, Copy)]
struct Shade(usize);

/// The colour of every shade, at its alpha.
const SHADE: [u8; 3] = [10, 12, 18];

/// Which of the two pictures a sprite shows.
#[derive(Component, Debug, Clone, Copy, PartialEq, Eq)]
enum Backdrop {
    /// The place now, fading in over the one before.
    Now,
    /// The place before, shown while the new one fades in.
    Before,
}

fn spawn_backdrops(mut commands: Commands) {
    for (layer, z) in [(Backdrop::Before, -1.0), (Backdrop::Now, 0.0)] {
        commands.spawn((
            Sprite::default(),
            Transform::from_xyz(0.0, 0.0, z),
            Visibility::Hidden,
            layer,
            DespawnOnExit(Screen::Session),
        ));
    }
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
    time: Res<Time>,
    window: Query<&Window, With<PrimaryWindow>>,
    images: Res<Assets<Image>>,
    mut sprites: Query<(&Backdrop, &mut Sprite, &mut Visibility)>,
) {
    let Ok(window) = window.single() else {
        return;
    };
    let area = window.size();
    let fade = scenery.fade(time.elapsed_secs());
    for (layer, mut sprite, mut visibility) in &mut sprites {
        let (handle, alpha) = match layer {
            Backdrop::Now => (scenery.backdrop.as_ref(), fade),
            Backdrop::Before => (scenery.previous().filter(|_| fade < 1.0), 1.0),
        };
        let Some((handle, size)) = handle.and_then(|h| Some((h, images.get(h.id())?.size())))
        else {
            visibility.set_if_neq(Visibility::Hidden);
            continue;
        };
        visibility.set_if_neq(Visibility::Visible);
        let wanted = Sprite {
            image: handle.clone(),
            color: Color::srgba(1.0, 1.0, 1.0, alpha),
            custom_size: Some(area),
            rect: Some(cover_crop(size, area.x / area.y.max(1.0))),
            ..default()
        };
        if sprite.image != wanted.image
            || sprite.color != wanted.color
            || sprite.custom_size != wanted.custom_size
            || sprite.rect != wanted.rect
        {
            *sprite = wanted;
        }
    }
}

fn follow_shades(
    shades: Res<Shades>,
    window: Query<&Window, With<PrimaryWindow>>,
    mut sprites: Query<(&Shade, &mut Sprite, &mut Transform, &mut Visibility)>,
    mut commands: Commands,
) {
    let Ok(window) = window.single() else {
        return;
    };
    let half = window.size() / 2.0;
    let scale = shades.points_to_logical;
    let mut have = 0;
    for (shade, mut sprite, mut transform, mut visibility) in &mut sprites {
        have = have.max(shade.0 + 1);
        let Some((rect, alpha)) = shades.rects.get(shade.0) else {
            visibility.set_if_neq(Visibility::Hidden);
            continue;
        };
        visibility.set_if_neq(Visibility::Visible);
        let size = Vec2::new(rect.width(), rect.height()) * scale;
        let centre = Vec2::new(rect.center().x, rect.center().y) * scale;
        let at = Vec3::new(
            centre.x - half.x,
            half.y - centre.y,
            transform.translation.z,
        );
        if transform.translation != at {
            transform.translation = at;
        }
        let color = Color::srgba_u8(SHADE[0], SHADE[1], SHADE[2], *alpha);
        if sprite.custom_size != Some(size) || sprite.color != color {
            sprite.custom_size = Some(size);
            sprite.color = color;
        }
    }
    for n in have..shades.rects.len() {
        commands.spawn((
            Sprite::default(),
            Transform::from_xyz(0.0, 0.0, 1.0 + n as f32 * 0.01),
            Visibility::Hidden,
            Shade(n),
            DespawnOnExit(Screen::Session),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
