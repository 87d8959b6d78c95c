//! Deterministic placeholder portraits, and painted backdrops for places with no art.
//!
//! A placeholder is a shape per entity kind on a gradient, in a colour drawn
//! from the entity's id. A helper of the stages and panels (no plugin).

use bevy::asset::RenderAssetUsages;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};

/// Portrait size in pixels.
pub const WIDTH: u32 = 192;
pub const HEIGHT: u32 = 240;

/// FNV-1a: stable across runs and platforms (unlike `DefaultHasher`).
fn hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Bevy's colour conversion: hue in degrees, saturation and value in 0..=1, to linear-ish sRGB floats.
fn hsv(hue: f32, saturation: f32, value: f32) -> [f32; 3] {
    let rgb = Srgba::from(Hsva::new(hue, saturation, value, 1.0));
    [rgb.red, rgb.green, rgb.blue]
}

/// Whether pixel (x, y) in unit coordinates (0..1, y down) lies inside the kind's silhouette.
fn inside(kind: &str, x: f32, y: f32, variant: f32) -> bool {
    match kind {
        "location" => {
            // An arch on a low wall.
            let in_arch = (0.2..0.8).contains(&x) && y > 0.35 && y < 0.9;
            let top = ((x - 0.5) / 0.3).powi(2) + ((y - 0.4) / 0.2).powi(2) < 1.0;
            in_arch || (top && y < 0.4) || y > 0.88
        }
        "object" | "item" => {
            // A faceted gem.
            (x - 0.5).abs() + (y - 0.55).abs() * (0.8 + variant * 0.4) < 0.3
        }
        "faction" => {
            // A banner.
            (0.3..0.7).contains(&x)
                && (0.2..0.8).contains(&y)
                && !(y > 0.65 && (x - 0.5).abs() < 0.8 - y)
        }
        _ => {
            // Head and shoulders.
            let head =
                ((x - 0.5) / (0.16 + variant * 0.03)).powi(2) + ((y - 0.38) / 0.19).powi(2) < 1.0;
            let shoulders = ((x - 0.5) / 0.38).powi(2) + ((y - 1.0) / 0.34).powi(2) < 1.0;
            head || shoulders
        }
    }
}

/// A portrait for an entity with no author art; the same id always gives the same picture.
pub fn placeholder(id: &str, kind: &str) -> Image {
    let h = hash(id);
    let hue = (h % 360) as f32;
    let variant = ((h >> 16) % 100) as f32 / 100.0;
    let top = hsv(hue, 0.45, 0.55);
    let bottom = hsv((hue + 40.0) % 360.0, 0.6, 0.2);
    let figure = hsv((hue + 180.0) % 360.0, 0.25, 0.1);
    let mut data = Vec::with_capacity((WIDTH * HEIGHT * 4) as usize);
    for py in 0..HEIGHT {
        for px in 0..WIDTH {
            let (x, y) = (px as f32 / WIDTH as f32, py as f32 / HEIGHT as f32);
            let rgb = if inside(kind, x, y, variant) {
                figure
            } else {
                let t = y;
                [0, 1, 2].map(|i| top[i] * (1.0 - t) + bottom[i] * t)
            };
            // A soft vignette keeps the edges from looking flat.
            let edge = ((x - 0.5).powi(2) + (y - 0.5).powi(2)).sqrt();
            let shade = 1.0 - (edge * 0.6).min(0.45);
            data.extend(rgb.map(|c| (c * shade * 255.0).clamp(0.0, 255.0) as u8));
            data.push(255);
        }
    }
    Image::new(
        Extent3d {
            width: WIDTH,
            height: HEIGHT,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
    )
}

/// Backdrop size in pixels (stretched to cover the stage; it is only light).
const BACKDROP: (u32, u32) = (480, 270);

/// A backdrop for a place with no art: sky, a horizon and a low far shore in
/// colours from the place's id, darker and greyer for night, fog or storm in
/// its `mood` words, warmer at dusk or dawn; the same place and mood always
/// give the same picture.
pub fn painted_backdrop(place: &str, mood: &str) -> Image {
    let h = hash(place);
    let mood = mood.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| mood.contains(w));
    let light: f32 = if has(&["night", "dark", "midnight"]) {
        0.35
    } else if has(&["dusk", "dawn", "evening", "sunset"]) {
        0.7
    } else {
        0.85
    };
    let grey: f32 = if has(&["fog", "mist", "rain", "storm", "grey", "gray"]) {
        0.45
    } else {
        1.0
    };
    let warm = has(&["dusk", "dawn", "sunset", "fire", "lantern", "lamp"]);
    let hue = (h % 360) as f32;
    let sky_top = hsv(hue, 0.35 * grey, 0.45 * light);
    let sky_low = hsv(
        if warm { 30.0 } else { (hue + 30.0) % 360.0 },
        0.45 * grey,
        0.8 * light,
    );
    let land = hsv((hue + 200.0) % 360.0, 0.3 * grey, 0.18 * light);
    let horizon = 0.58 + ((h >> 20) % 10) as f32 / 100.0;
    let hills = ((h >> 8) % 5 + 2) as f32;
    let (width, height) = BACKDROP;
    let mut data = Vec::with_capacity((width * height * 4) as usize);
    for py in 0..height {
        for px in 0..width {
            let (x, y) = (px as f32 / width as f32, py as f32 / height as f32);
            let shore = horizon - 0.05 * (x * hills * std::f32::consts::PI).sin().abs();
            let rgb = if y > shore {
                let t = ((y - shore) / (1.0 - shore)).min(1.0);
                [0, 1, 2].map(|i| land[i] * (1.0 - 0.5 * t))
            } else {
                let t = (y / shore).clamp(0.0, 1.0);
                [0, 1, 2].map(|i| sky_top[i] * (1.0 - t) + sky_low[i] * t)
            };
            let edge = ((x - 0.5).powi(2) + (y - 0.5).powi(2)).sqrt();
            let shade = 1.0 - (edge * 0.7).min(0.5);
            data.extend(rgb.map(|c| (c * shade * 255.0).clamp(0.0, 255.0) as u8));
            data.push(255);
        }
    }
    Image::new(
        Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        data,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD | RenderAssetUsages::MAIN_WORLD,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn painted_backdrops_follow_the_place_and_darken_at_night() {
        let quay = painted_backdrop("toll_house", "dusk, fog");
        assert_eq!(quay.data, painted_backdrop("toll_house", "dusk, fog").data);
        assert_ne!(quay.data, painted_backdrop("lowmarsh", "dusk, fog").data);
        let brightness = |i: &Image| {
            i.data
                .as_ref()
                .map_or(0, |d| d.iter().map(|b| u64::from(*b)).sum::<u64>())
        };
        assert!(
            brightness(&painted_backdrop("toll_house", "night"))
                < brightness(&painted_backdrop("toll_house", "noon")),
            "night is darker"
        );
    }

    #[test]
    fn placeholders_are_deterministic_and_differ_by_id_and_kind() {
        let a = placeholder("character:maren", "character");
        assert_eq!(a.data, placeholder("character:maren", "character").data);
        assert_ne!(a.data, placeholder("character:elias", "character").data);
        assert_ne!(a.data, placeholder("character:maren", "location").data);
        assert_eq!(a.size(), UVec2::new(WIDTH, HEIGHT));
    }
}
