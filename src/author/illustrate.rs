//! DRESS's image providers: the `Illustrator` trait, the asset store, the built-in `Sketch`.
//!
//! Seed 000: a provider-independent abstraction. The content-addressed asset store keeps
//! `assets/<sha256>.png`; the built-in `Sketch` provider draws a deterministic picture from a
//! brief's prompt (its category's composition, the art direction's palette, each entity's
//! colours, the mood's light) for machines without an image model.
#![allow(
    clippy::cast_precision_loss,
    reason = "pixel geometry: sizes under 2^16 and counts under 1000 are exact in f32"
)]

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use tiny_skia::{
    Color, FillRule, GradientStop, LinearGradient, Paint, PathBuilder, Pixmap, Point,
    RadialGradient, Rect, SpreadMode, Stroke, Transform,
};

use super::dress::ImagePrompt;

/// An image provider: draws one prompt into PNG bytes. A provider that
/// calls an image model (a skill, an HTTP image API) implements this too;
/// DRESS does not change.
pub trait Illustrator {
    /// The provider's name, kept on each illustration it made.
    fn name(&self) -> &str;
    /// The picture as PNG bytes, or why it could not be drawn.
    fn draw(&self, prompt: &ImagePrompt) -> Result<Vec<u8>, DrawError>;
}

/// Why a picture was not drawn, or not kept.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    #[error("the picture has no size")]
    NoSize,
    #[error(transparent)]
    Encode(#[from] png::EncodingError),
    #[error("{}: {source}", .path.display())]
    Store {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `png` into `dir/assets/<sha256>.png` (once: the same picture is
/// the same file) and returns its path relative to `dir`.
pub fn store(dir: &Path, png: &[u8]) -> Result<String, DrawError> {
    let assets = dir.join("assets");
    crate::files::store_content(&assets, png, "png")
        .map(|name| format!("assets/{name}"))
        .map_err(|source| DrawError::Store {
            path: assets,
            source,
        })
}

/// The built-in provider: a painterly sketch drawn by a 2D rasteriser,
/// the same prompt always giving the same picture.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sketch;

/// The longer side of a sketch, in pixels.
const LONG_SIDE: u32 = 768;

impl Illustrator for Sketch {
    fn name(&self) -> &'static str {
        "sketch"
    }

    fn draw(&self, prompt: &ImagePrompt) -> Result<Vec<u8>, DrawError> {
        let (w, h) = size(&prompt.aspect_ratio);
        let mut pixmap = Pixmap::new(w, h).ok_or(DrawError::NoSize)?;
        let seed = Sha256::digest(prompt.text.as_bytes());
        let mut rng = ChaCha8Rng::from_seed(seed.into());
        let scene = Canvas::new(prompt, w, h);
        scene.paint(&mut pixmap, &mut rng);
        encode(&pixmap)
    }
}

/// The picture's size for an aspect ratio `W:H` (16:9 when it is not one).
fn size(aspect: &str) -> (u32, u32) {
    let (aw, ah) = super::dress::aspect(aspect).unwrap_or((16, 9));
    if aw >= ah {
        (LONG_SIDE, (LONG_SIDE * ah / aw).max(64))
    } else {
        ((LONG_SIDE * aw / ah).max(64), LONG_SIDE)
    }
}

fn encode(pixmap: &Pixmap) -> Result<Vec<u8>, DrawError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    // Every layer is opaque at the bottom, so premultiplied is straight.
    writer.write_image_data(pixmap.data())?;
    writer.finish()?;
    Ok(out)
}

/// A colour as RGB in 0..1.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rgb(f32, f32, f32);

impl Rgb {
    fn mix(self, other: Rgb, t: f32) -> Rgb {
        Rgb(
            self.0 + (other.0 - self.0) * t,
            self.1 + (other.1 - self.1) * t,
            self.2 + (other.2 - self.2) * t,
        )
    }
    fn scaled(self, k: f32) -> Rgb {
        Rgb(
            (self.0 * k).min(1.0),
            (self.1 * k).min(1.0),
            (self.2 * k).min(1.0),
        )
    }
    fn color(self, alpha: f32) -> Color {
        Color::from_rgba(
            self.0.clamp(0.0, 1.0),
            self.1.clamp(0.0, 1.0),
            self.2.clamp(0.0, 1.0),
            alpha.clamp(0.0, 1.0),
        )
        .unwrap_or(Color::BLACK)
    }
}

const BLACK: Rgb = Rgb(0.0, 0.0, 0.0);
const WHITE: Rgb = Rgb(1.0, 1.0, 1.0);

/// Colour words art directions use that CSS does not name.
const ART_COLOURS: [(&str, &str); 29] = [
    ("amber", "#FFBF00"),
    ("ochre", "#CC7722"),
    ("umber", "#635147"),
    ("sepia", "#704214"),
    ("rust", "#B7410E"),
    ("ember", "#E25822"),
    ("moss", "#8A9A5B"),
    ("slate", "#708090"),
    ("storm", "#4F5B66"),
    ("bone", "#E3DAC9"),
    ("ash", "#B2BEB5"),
    ("copper", "#B87333"),
    ("brass", "#B5A642"),
    ("bronze", "#CD7F32"),
    ("verdigris", "#43B3AE"),
    ("ink", "#1B1B2F"),
    ("charcoal", "#36454F"),
    ("cream", "#FFFDD0"),
    ("sand", "#C2B280"),
    ("fog", "#C8CCD0"),
    ("mist", "#D4DBE0"),
    ("sea", "#2E6F7A"),
    ("ocean", "#1F4E79"),
    ("night", "#141A33"),
    ("blood", "#7A0A0A"),
    ("rose", "#C08081"),
    ("jade", "#00A86B"),
    ("lamplight", "#F2C46D"),
    ("parchment", "#F1E9D2"),
];

/// A colour from a palette phrase ("deep sea green", "#1b2b3c", "warm
/// amber"): the phrase as CSS, else its last colour word with the words
/// before it as modifiers; a word nobody names gets a stable colour of
/// its own.
fn colour(phrase: &str) -> Rgb {
    let lower = phrase.trim().to_lowercase();
    if let Ok(c) = csscolorparser::parse(&lower.replace([' ', '-'], "")) {
        return Rgb(c.r, c.g, c.b);
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric() && c != '#')
        .filter(|w| !w.is_empty())
        .collect();
    let named = words.iter().rev().find_map(|w| {
        let w = w.trim_end_matches('s');
        ART_COLOURS
            .iter()
            .find(|(name, _)| *name == w)
            .map_or(w, |(_, hex)| *hex)
            .parse::<csscolorparser::Color>()
            .ok()
            .map(|c| Rgb(c.r, c.g, c.b))
    });
    let mut c = named.unwrap_or_else(|| {
        let hue = f32::from(Sha256::digest(lower.as_bytes())[0]) / 255.0 * 360.0;
        let c = csscolorparser::Color::from_hsla(hue, 0.35, 0.5, 1.0);
        Rgb(c.r, c.g, c.b)
    });
    for w in &words {
        c = match *w {
            "deep" | "dark" | "dusky" | "midnight" | "shadowed" => c.scaled(0.6),
            "pale" | "light" | "soft" | "faded" | "washed" | "misty" => c.mix(WHITE, 0.4),
            "warm" | "golden" => c.mix(Rgb(1.0, 0.6, 0.2), 0.2),
            "cold" | "cool" | "icy" => c.mix(Rgb(0.3, 0.5, 0.9), 0.2),
            "muted" | "dull" | "grey" | "gray" => c.mix(Rgb(0.5, 0.5, 0.5), 0.35),
            _ => c,
        };
    }
    c
}

/// How the mood lights the picture: a brightness factor.
fn light(mood: &str) -> f32 {
    let lower = mood.to_lowercase();
    let dark = [
        "dark", "grim", "dread", "tense", "night", "storm", "sorrow", "grief", "menac", "bleak",
        "cold", "ominous", "fear",
    ];
    let bright = [
        "hope", "warm", "bright", "calm", "joy", "dawn", "serene", "tender", "relief",
    ];
    let score = bright.iter().filter(|w| lower.contains(*w)).count() as f32
        - dark.iter().filter(|w| lower.contains(*w)).count() as f32;
    (1.0 + 0.12 * score).clamp(0.55, 1.25)
}

/// Everything the sketch is drawn from.
struct Canvas {
    w: f32,
    h: f32,
    category: String,
    sky: Rgb,
    horizon_colour: Rgb,
    ground: Rgb,
    accent: Rgb,
    light: f32,
    horizon: f32,
    /// Characters' and others' colours.
    characters: Vec<Rgb>,
    things: Vec<(String, Rgb)>,
}

impl Canvas {
    fn new(prompt: &ImagePrompt, w: u32, h: u32) -> Self {
        let mut palette: Vec<Rgb> = prompt.palette.iter().map(|p| colour(p)).collect();
        if palette.is_empty() {
            palette.push(colour(&prompt.mood));
        }
        while palette.len() < 4 {
            let last = palette[palette.len() - 1];
            palette.push(if palette.len().is_multiple_of(2) {
                last.scaled(0.55)
            } else {
                last.mix(WHITE, 0.35)
            });
        }
        let composition = prompt.composition.to_lowercase();
        let mut horizon: f32 = match prompt.category.as_str() {
            "vista" => 0.62,
            "portrait" => 0.72,
            "item_detail" => 0.58,
            _ => 0.66,
        };
        if composition.contains("low") {
            horizon += 0.12;
        }
        if composition.contains("high") || composition.contains("above") {
            horizon -= 0.2;
        }
        let entity_colour = |f: &super::dress::Figure, fallback: Rgb| {
            f.colours.first().map_or(fallback, |c| colour(c))
        };
        let characters = prompt
            .entities
            .iter()
            .filter(|f| f.kind == "character")
            .map(|f| entity_colour(f, palette[3]))
            .collect();
        let things = prompt
            .entities
            .iter()
            .filter(|f| f.kind != "character")
            .map(|f| (f.kind.clone(), entity_colour(f, palette[2])))
            .collect();
        Self {
            w: w as f32,
            h: h as f32,
            category: prompt.category.clone(),
            sky: palette[0],
            horizon_colour: palette[1],
            ground: palette[2],
            accent: palette[palette.len() - 1],
            light: light(&prompt.mood),
            horizon: horizon.clamp(0.3, 0.85),
            characters,
            things,
        }
    }

    fn paint(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng) {
        let horizon_y = self.h * self.horizon;
        Self::gradient(
            pixmap,
            Rect::from_xywh(0.0, 0.0, self.w, horizon_y + 2.0),
            (self.sky.mix(WHITE, 0.15).scaled(self.light), 0.0),
            (self.horizon_colour.scaled(self.light), horizon_y),
        );
        if self.category != "portrait" {
            // A light in the sky: sun, moon or lamp.
            let x = self.w * rng.random_range(0.15..0.85);
            let y = horizon_y * rng.random_range(0.2..0.55);
            let r = self.h * rng.random_range(0.05..0.09);
            Self::glow(pixmap, x, y, r * 3.5, self.accent, 0.45);
            Self::circle(pixmap, x, y, r, self.accent.mix(WHITE, 0.3), 0.95);
        }
        // Ridges, far to near, paler with distance.
        let layers = if self.category == "vista" { 3 } else { 2 };
        for i in 0..layers {
            let depth = i as f32 / layers as f32;
            let colour = self
                .ground
                .mix(self.horizon_colour, 0.6 * (1.0 - depth))
                .scaled(self.light * (0.7 + 0.3 * (1.0 - depth)));
            let base = horizon_y + self.h * 0.04 * i as f32;
            self.ridge(pixmap, rng, base, self.h * (0.12 - 0.03 * i as f32), colour);
            if i == 0 {
                self.structures(pixmap, rng, base);
            }
        }
        Self::gradient(
            pixmap,
            Rect::from_xywh(0.0, horizon_y + self.h * 0.06, self.w, self.h),
            (self.ground.scaled(self.light * 0.8), horizon_y),
            (self.ground.scaled(self.light * 0.35), self.h),
        );
        match self.category.as_str() {
            "portrait" => self.portrait(pixmap),
            "item_detail" => self.item(pixmap, rng),
            "vista" => self.figures(pixmap, rng, 0.12),
            _ => self.figures(pixmap, rng, 0.34),
        }
        self.strokes(pixmap, rng);
        self.vignette(pixmap);
    }

    fn fill(pixmap: &mut Pixmap, path: &tiny_skia::Path, colour: Rgb, alpha: f32) {
        let mut paint = Paint::default();
        paint.set_color(colour.color(alpha));
        paint.anti_alias = true;
        pixmap.fill_path(path, &paint, FillRule::Winding, Transform::identity(), None);
    }

    fn gradient(pixmap: &mut Pixmap, rect: Option<Rect>, top: (Rgb, f32), bottom: (Rgb, f32)) {
        let Some(rect) = rect else { return };
        let mut paint = Paint::default();
        if let Some(shader) = LinearGradient::new(
            Point::from_xy(0.0, top.1),
            Point::from_xy(0.0, bottom.1.max(top.1 + 1.0)),
            vec![
                GradientStop::new(0.0, top.0.color(1.0)),
                GradientStop::new(1.0, bottom.0.color(1.0)),
            ],
            SpreadMode::Pad,
            Transform::identity(),
        ) {
            paint.shader = shader;
        }
        pixmap.fill_rect(rect, &paint, Transform::identity(), None);
    }

    fn circle(pixmap: &mut Pixmap, x: f32, y: f32, r: f32, colour: Rgb, alpha: f32) {
        if let Some(path) = PathBuilder::from_circle(x, y, r) {
            Self::fill(pixmap, &path, colour, alpha);
        }
    }

    fn glow(pixmap: &mut Pixmap, x: f32, y: f32, r: f32, colour: Rgb, alpha: f32) {
        let mut paint = Paint::default();
        let Some(shader) = RadialGradient::new(
            Point::from_xy(x, y),
            Point::from_xy(x, y),
            r,
            vec![
                GradientStop::new(0.0, colour.color(alpha)),
                GradientStop::new(1.0, colour.color(0.0)),
            ],
            SpreadMode::Pad,
            Transform::identity(),
        ) else {
            return;
        };
        paint.shader = shader;
        if let Some(rect) = Rect::from_xywh(x - r, y - r, 2.0 * r, 2.0 * r) {
            pixmap.fill_rect(rect, &paint, Transform::identity(), None);
        }
    }

    /// A hill line: a sum of two waves with random phases, filled below.
    fn ridge(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng, base: f32, amp: f32, colour: Rgb) {
        let (p1, p2) = (
            rng.random_range(0.0..std::f32::consts::TAU),
            rng.random_range(0.0..std::f32::consts::TAU),
        );
        let (f1, f2) = (rng.random_range(1.0..2.5), rng.random_range(3.0..7.0));
        let mut pb = PathBuilder::new();
        pb.move_to(0.0, self.h);
        let steps = 48;
        for i in 0..=steps {
            let x = self.w * i as f32 / steps as f32;
            let t = x / self.w * std::f32::consts::TAU;
            let y = base - amp * (0.6 * (f1 * t + p1).sin() + 0.4 * (f2 * t + p2).sin()).abs();
            pb.line_to(x, y);
        }
        pb.line_to(self.w, self.h);
        pb.close();
        if let Some(path) = pb.finish() {
            Self::fill(pixmap, &path, colour, 1.0);
        }
    }

    /// Locations and objects on the far ridge: towers and roofs in their colours.
    fn structures(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng, base: f32) {
        for (kind, colour) in self.things.iter().filter(|(k, _)| k == "location").take(3) {
            let _ = kind;
            let x = self.w * rng.random_range(0.1..0.9);
            let bw = self.w * rng.random_range(0.03..0.07);
            let bh = self.h * rng.random_range(0.12..0.3);
            let mut pb = PathBuilder::new();
            pb.move_to(x - bw / 2.0, base + 4.0);
            pb.line_to(x - bw / 2.0, base - bh);
            pb.line_to(x, base - bh - bw * 0.8);
            pb.line_to(x + bw / 2.0, base - bh);
            pb.line_to(x + bw / 2.0, base + 4.0);
            pb.close();
            if let Some(path) = pb.finish() {
                Self::fill(pixmap, &path, colour.scaled(0.55 * self.light), 1.0);
            }
            // A lit window.
            Self::circle(pixmap, x, base - bh * 0.75, bw * 0.15, self.accent, 0.9);
        }
    }

    /// One standing figure: head and a cloaked body, rim-lit.
    fn figure(&self, pixmap: &mut Pixmap, x: f32, feet: f32, height: f32, colour: Rgb) {
        let head = height * 0.11;
        let (shoulder, hem) = (height * 0.16, height * 0.24);
        let top = feet - height + head * 2.3;
        let mut pb = PathBuilder::new();
        pb.move_to(x - head * 0.45, top - head * 0.4);
        pb.quad_to(
            x - shoulder,
            top - head * 0.2,
            x - shoulder,
            top + head * 0.9,
        );
        pb.line_to(x - hem, feet);
        pb.line_to(x + hem, feet);
        pb.line_to(x + shoulder, top + head * 0.9);
        pb.quad_to(
            x + shoulder,
            top - head * 0.2,
            x + head * 0.45,
            top - head * 0.4,
        );
        pb.close();
        let body = colour.scaled(0.45 * self.light);
        if let Some(path) = pb.finish() {
            Self::fill(pixmap, &path, body, 1.0);
            let mut paint = Paint::default();
            paint.set_color(self.accent.color(0.55));
            paint.anti_alias = true;
            let stroke = Stroke {
                width: (height * 0.012).max(1.0),
                ..Stroke::default()
            };
            pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
        Self::circle(pixmap, x, feet - height + head, head, body, 1.0);
    }

    fn figures(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng, scale: f32) {
        let n = self.characters.len().min(4);
        let feet = self.h * (self.horizon + 0.2).min(0.95);
        for (i, colour) in self.characters.iter().take(4).enumerate() {
            let slot = (i as f32 + 0.5) / n as f32;
            let x = self.w * (0.15 + 0.7 * slot) + rng.random_range(-0.04..0.04) * self.w;
            let height = self.h * scale * rng.random_range(0.85..1.1);
            self.figure(pixmap, x, feet, height, *colour);
        }
        // Objects at the figures' feet.
        for (_, colour) in self.things.iter().filter(|(k, _)| k != "location").take(2) {
            let x = self.w * rng.random_range(0.1..0.9);
            Self::circle(
                pixmap,
                x,
                feet - self.h * 0.02,
                self.h * 0.025,
                *colour,
                1.0,
            );
        }
    }

    fn portrait(&self, pixmap: &mut Pixmap) {
        let colour = self.characters.first().copied().unwrap_or(self.accent);
        Self::glow(
            pixmap,
            self.w / 2.0,
            self.h * 0.45,
            self.h * 0.6,
            self.accent,
            0.35,
        );
        self.figure(pixmap, self.w / 2.0, self.h * 1.6, self.h * 1.5, colour);
    }

    fn item(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng) {
        let colour = self
            .things
            .iter()
            .find(|(k, _)| k != "location")
            .map_or(self.accent, |(_, c)| *c);
        let (cx, cy, radius) = (self.w / 2.0, self.h * 0.55, self.h * 0.2);
        Self::glow(pixmap, cx, cy, radius * 2.2, self.accent, 0.4);
        let sides = rng.random_range(5..9);
        let turn = rng.random_range(0.0..1.0);
        let mut pb = PathBuilder::new();
        for i in 0..sides {
            let angle = (i as f32 / sides as f32 + turn) * std::f32::consts::TAU;
            let reach = rng.random_range(0.75..1.0);
            let (x, y) = (
                cx + radius * reach * angle.cos(),
                cy + radius * reach * angle.sin() * 0.8,
            );
            if i == 0 {
                pb.move_to(x, y);
            } else {
                pb.line_to(x, y);
            }
        }
        pb.close();
        if let Some(path) = pb.finish() {
            Self::fill(pixmap, &path, colour.scaled(self.light), 1.0);
        }
        Self::circle(
            pixmap,
            cx - radius * 0.3,
            cy - radius * 0.3,
            radius * 0.18,
            WHITE,
            0.35,
        );
    }

    /// Brush strokes in the palette's colours, lightly, for texture.
    fn strokes(&self, pixmap: &mut Pixmap, rng: &mut ChaCha8Rng) {
        let colours = [self.sky, self.horizon_colour, self.ground, self.accent];
        for _ in 0..260 {
            let (x, y) = (self.w * rng.random::<f32>(), self.h * rng.random::<f32>());
            let len = self.w * rng.random_range(0.01..0.05);
            let a = rng.random_range(-0.5..0.5_f32);
            let mut pb = PathBuilder::new();
            pb.move_to(x, y);
            pb.line_to(x + len * a.cos(), y + len * a.sin());
            let Some(path) = pb.finish() else { continue };
            let mut paint = Paint::default();
            let c = colours[rng.random_range(0..colours.len())];
            paint.set_color(c.mix(BLACK, rng.random_range(0.0..0.3)).color(0.12));
            paint.anti_alias = true;
            let stroke = Stroke {
                width: rng.random_range(1.5..4.5),
                line_cap: tiny_skia::LineCap::Round,
                ..Stroke::default()
            };
            pixmap.stroke_path(&path, &paint, &stroke, Transform::identity(), None);
        }
    }

    fn vignette(&self, pixmap: &mut Pixmap) {
        let mut paint = Paint::default();
        let r = (self.w.max(self.h)) * 0.75;
        if let Some(shader) = RadialGradient::new(
            Point::from_xy(self.w / 2.0, self.h / 2.0),
            Point::from_xy(self.w / 2.0, self.h / 2.0),
            r,
            vec![
                GradientStop::new(0.55, BLACK.color(0.0)),
                GradientStop::new(1.0, BLACK.color(0.5)),
            ],
            SpreadMode::Pad,
            Transform::identity(),
        ) {
            paint.shader = shader;
            if let Some(rect) = Rect::from_xywh(0.0, 0.0, self.w, self.h) {
                pixmap.fill_rect(rect, &paint, Transform::identity(), None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::author::dress::Figure;

    fn prompt(category: &str, text: &str) -> ImagePrompt {
        ImagePrompt {
            brief: "brief::x".into(),
            text: text.into(),
            category: category.into(),
            aspect_ratio: "3:2".into(),
            palette: vec!["deep sea green".into(), "storm grey".into(), "amber".into()],
            mood: "tense, stormy".into(),
            composition: "wide, low horizon".into(),
            entities: vec![
                Figure {
                    entity: "entity::ada".into(),
                    kind: "character".into(),
                    colours: vec!["crimson".into()],
                    fragment: "a keeper".into(),
                },
                Figure {
                    entity: "entity::tower".into(),
                    kind: "location".into(),
                    colours: vec!["#ddeeff".into()],
                    fragment: "a tower".into(),
                },
            ],
            ..ImagePrompt::default()
        }
    }

    #[test]
    fn colour_words_become_colours() {
        let rgb = |r: u8, g: u8, b: u8| {
            Rgb(
                f32::from(r) / 255.0,
                f32::from(g) / 255.0,
                f32::from(b) / 255.0,
            )
        };
        assert_eq!(colour("crimson"), rgb(0xDC, 0x14, 0x3C));
        assert_eq!(colour("#102030"), rgb(0x10, 0x20, 0x30));
        assert_eq!(colour("amber"), rgb(0xFF, 0xBF, 0x00));
        // A modifier darkens; an unknown word still gets a stable colour.
        assert!(colour("deep amber").0 < colour("amber").0);
        assert_eq!(colour("zorbic"), colour("zorbic"));
    }

    #[test]
    fn a_sketch_is_a_deterministic_png_of_the_prompts_own() {
        let a = Sketch.draw(&prompt("scene", "one")).expect("drawn");
        let again = Sketch.draw(&prompt("scene", "one")).expect("drawn");
        let other = Sketch.draw(&prompt("scene", "two")).expect("drawn");
        assert_eq!(a, again, "the same prompt draws the same picture");
        assert_ne!(a, other, "another prompt draws another picture");
        let decoder = png::Decoder::new(std::io::Cursor::new(&a));
        let reader = decoder.read_info().expect("a PNG");
        assert_eq!((reader.info().width, reader.info().height), (768, 512));
        // KEEP_SHOTS=DIR keeps the pictures to look at.
        let keep = std::env::var_os("KEEP_SHOTS").map(std::path::PathBuf::from);
        for category in ["scene", "portrait", "vista", "item_detail"] {
            let png = Sketch.draw(&prompt(category, "one")).expect("drawn");
            if category != "scene" {
                assert_ne!(png, a, "{category} is composed differently");
            }
            if let Some(dir) = &keep {
                std::fs::write(dir.join(format!("sketch-{category}.png")), &png).expect("kept");
            }
        }
    }

    #[test]
    fn the_store_names_a_picture_by_its_content() {
        let dir = tempfile::tempdir().expect("temp dir");
        let png = Sketch.draw(&prompt("vista", "x")).expect("drawn");
        let name = store(dir.path(), &png).expect("stored");
        let hash = format!("{:x}", Sha256::digest(&png));
        assert_eq!(name, format!("assets/{hash}.png"));
        assert_eq!(store(dir.path(), &png).expect("stored again"), name);
        assert_eq!(std::fs::read(dir.path().join(&name)).expect("read"), png);
        assert_eq!(
            std::fs::read_dir(dir.path().join("assets"))
                .expect("dir")
                .count(),
            1
        );
    }
}
