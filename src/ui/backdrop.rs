//! A session's backdrop as Bevy sprites under the egui layer, cropped to cover the window and crossfading on a change of scene: egui's shader converts sRGB both ways for every pixel it draws, which a software renderer pays for on each full-window layer; the sprite pipeline does not.

use bevy::prelude::*;
use bevy::window::PrimaryWindow;

use super::screens::Screen;
use super::session_screen::SessionScenery;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(OnEnter(Screen::Session), spawn_backdrops)
        .add_systems(Update, follow_backdrop.run_if(in_state(Screen::Session)));
}

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
