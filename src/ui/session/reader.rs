//! A session's text box as the story player's: the turn on show typed out at the player's speed.
//!
//! Page by page, with auto-advance and skip; its backlog (H / wheel up) with
//! "return here". Its save slots window is `slots`.

use std::collections::BTreeMap;

use bevy::input::mouse::MouseWheel;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPrimaryContextPass, egui};

use crate::engine::session::{Character, Entry, SessionInput, Transcript, TurnProgress};
use crate::transcript::marker::Notice;
use crate::ui::markdown::{self, Span};
use crate::ui::screens::{Overlays, SavesMode, Screen, UiSystems};
use crate::ui::settings::Settings;
use crate::ui::widgets::backlog_window;

pub(super) fn plugin(app: &mut App) {
    app.init_resource::<SessionReader>()
        .add_systems(
            Update,
            (paginate.in_set(UiSystems::Receive), read_on)
                .chain()
                .run_if(in_state(Screen::Session)),
        )
        .add_systems(OnExit(Screen::Session), |mut r: ResMut<SessionReader>| {
            *r = SessionReader::default();
        })
        .add_systems(
            EguiPrimaryContextPass,
            session_backlog.run_if(in_state(Screen::Session)),
        );
}

/// About how much prose one page of the session's text box holds (the story player's measure).
const PAGE_CHARS: usize = 520;

/// One piece of a page.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// An entry shown whole at once (the move, dice, a scene line, a note, a
    /// recap), by its index in [`Transcript::entries`].
    Whole(usize),
    /// Narration, typed out.
    Prose(Vec<Span>),
}

/// The turn on show as pages, and how far the player has read.
#[derive(Resource, Debug)]
pub struct SessionReader {
    /// Where the turn on show starts in the entries; `usize::MAX` before any.
    start: usize,
    pub pages: Vec<Vec<Block>>,
    pub page: usize,
    /// Characters of prose on this page revealed (fractional while typing).
    pub shown: f32,
    /// Seconds since this page was fully shown.
    idle: f32,
    /// Whether narration is still arriving (the last page may grow).
    pub arriving: bool,
    /// Everything shown at once (scripted play).
    pub hurry: bool,
    /// The backlog window is open.
    pub backlog: bool,
    /// The save slots window is open, saving or loading.
    pub slots: Option<SavesMode>,
    /// Scripted play presses "Return here" on this turn of the backlog (1-based).
    pub press_return: Option<usize>,
    /// The picture and the text box on screen, where the wheel opens the backlog.
    pub stage: egui::Rect,
}

impl Default for SessionReader {
    fn default() -> Self {
        Self {
            start: usize::MAX,
            pages: Vec::new(),
            page: 0,
            shown: 0.0,
            idle: 0.0,
            arriving: false,
            hurry: false,
            backlog: false,
            slots: None,
            press_return: None,
            stage: egui::Rect::NOTHING,
        }
    }
}

impl SessionReader {
    /// Prose characters on page `page`.
    fn chars(&self, page: usize) -> usize {
        self.pages.get(page).map_or(0, |blocks| {
            blocks
                .iter()
                .map(|b| match b {
                    Block::Prose(spans) => markdown::char_len(spans),
                    Block::Whole(_) => 0,
                })
                .sum()
        })
    }

    /// Whether this page is fully shown.
    pub fn revealed(&self) -> bool {
        self.shown as usize >= self.chars(self.page)
    }

    /// Whether the whole turn has been read (its choices show now).
    pub fn finished(&self) -> bool {
        !self.arriving && self.revealed() && self.page + 1 >= self.pages.len()
    }

    /// Show the rest of the page, or turn to the next one.
    pub fn advance(&mut self, instant: bool) {
        if !self.revealed() {
            self.shown = self.chars(self.page) as f32;
        } else if self.page + 1 < self.pages.len() {
            self.page += 1;
            self.shown = if instant {
                self.chars(self.page) as f32
            } else {
                0.0
            };
            self.idle = 0.0;
        }
    }

    /// Whether the last page is fully shown.
    fn at_end(&self) -> bool {
        self.page + 1 >= self.pages.len() && self.revealed()
    }

    /// The last page, fully shown.
    pub fn show_everything(&mut self) {
        self.page = self.pages.len().saturating_sub(1);
        self.shown = self.chars(self.page) as f32;
    }

    /// Whether a panel of the session covers the stage.
    pub fn any_open(&self) -> bool {
        self.backlog || self.slots.is_some()
    }
}

/// The turn on show (from the player's latest move), as pages: entries shown
/// whole where they fall, narration in paragraphs of at most a page.
pub fn pages_of(transcript: &Transcript, from: usize) -> Vec<Vec<Block>> {
    let mut pages: Vec<Vec<Block>> = vec![Vec::new()];
    let mut chars = 0;
    let mut prose = |text: &str, pages: &mut Vec<Vec<Block>>| {
        for chunk in markdown::pages(&markdown::spans(text), PAGE_CHARS) {
            let n = markdown::char_len(&chunk);
            if n == 0 {
                continue;
            }
            if chars > 0 && chars + n > PAGE_CHARS {
                pages.push(Vec::new());
                chars = 0;
            }
            chars += n;
            if let Some(page) = pages.last_mut() {
                page.push(Block::Prose(chunk));
            }
        }
    };
    for (i, entry) in transcript.entries.iter().enumerate().skip(from) {
        match entry {
            Entry::Narration(text) => prose(text, &mut pages),
            _ => {
                if let Some(page) = pages.last_mut() {
                    page.push(Block::Whole(i));
                }
            }
        }
    }
    if !transcript.streaming.is_empty() {
        prose(&transcript.streaming, &mut pages);
    }
    pages
}

/// Lay the turn on show out in pages again when the transcript changes; a new
/// turn starts at its first page (or its last, read before and skipped).
fn paginate(
    transcript: Res<Transcript>,
    settings: Res<Settings>,
    mut reader: ResMut<SessionReader>,
) {
    if !transcript.is_changed() {
        // A script that hurries the reader after the page was laid out (its
        // first frame) still sees the turn whole at once.
        if reader.hurry && !reader.at_end() {
            reader.show_everything();
        }
        return;
    }
    let start = transcript.turn_start();
    reader.pages = pages_of(&transcript, start);
    reader.arriving = !transcript.streaming.is_empty();
    if start != reader.start {
        reader.start = start;
        reader.page = 0;
        reader.shown = 0.0;
        reader.idle = 0.0;
        // Text from the save (the session just opened, rewound or loaded) was read before.
        let read_before = start < transcript.read_through;
        if reader.hurry || settings.text_speed <= 0.0 || (settings.skip_read && read_before) {
            reader.show_everything();
        }
    }
    reader.page = reader.page.min(reader.pages.len().saturating_sub(1));
    if reader.hurry {
        reader.show_everything();
    }
}

/// The typewriter, and auto mode turning pages after the delay.
fn read_on(
    time: Res<Time>,
    settings: Res<Settings>,
    overlays: Res<Overlays>,
    mut reader: ResMut<SessionReader>,
) {
    let total = reader.chars(reader.page) as f32;
    if reader.revealed() {
        reader.idle += time.delta_secs();
    } else if settings.text_speed <= 0.0 {
        reader.shown = total;
    } else {
        reader.shown = (reader.shown + time.delta_secs() * settings.text_speed).min(total);
    }
    if settings.auto_advance
        && !overlays.any_modal()
        && !reader.any_open()
        && reader.revealed()
        && reader.idle >= settings.auto_delay
        && reader.page + 1 < reader.pages.len()
    {
        reader.advance(settings.text_speed <= 0.0);
    }
}

/// The text box: the page on show, typed out; "more…" while pages remain;
/// `busy_words` with a spinner while a turn runs. Clicking the text reads on.
pub fn text_box(
    ui: &mut egui::Ui,
    reader: &mut SessionReader,
    entries: &[Entry],
    names: &BTreeMap<&str, &str>,
    (newest_roll, rolling): (Option<usize>, Option<f32>),
    instant: bool,
    busy_words: Option<&str>,
) {
    let mut left = reader.shown as usize;
    let page = reader.pages.get(reader.page).cloned().unwrap_or_default();
    let clicked = egui::ScrollArea::vertical()
        .stick_to_bottom(true)
        .auto_shrink([false, false])
        .max_height(ui.available_height() - 28.0)
        .show(ui, |ui| {
            ui.set_max_width(ui.available_width().min(900.0));
            let mut clicked = false;
            let mut typing = false;
            for block in &page {
                match block {
                    // Whatever follows prose still being typed waits for it.
                    Block::Whole(_) if typing => {}
                    Block::Whole(i) => {
                        if let Some(entry) = entries.get(*i) {
                            let tumbling = (Some(*i) == newest_roll).then_some(rolling).flatten();
                            entry_ui(ui, entry, names, tumbling);
                        }
                    }
                    Block::Prose(spans) => {
                        if typing {
                            continue;
                        }
                        let n = markdown::char_len(spans);
                        let job = markdown::layout(
                            spans,
                            left.min(n),
                            20.0,
                            egui::Color32::from_gray(230),
                        );
                        let text = ui.add(egui::Label::new(job).sense(egui::Sense::click()));
                        clicked |= text.clicked();
                        ui.add_space(6.0);
                        typing = left < n;
                        left = left.saturating_sub(n);
                    }
                }
            }
            clicked
        })
        .inner;
    if clicked {
        reader.advance(instant);
    }
    ui.horizontal(|ui| {
        if let Some(words) = busy_words {
            quiet_spinner(ui);
            ui.label(egui::RichText::new(words).weak().italics());
        }
        if reader.revealed() && reader.page + 1 < reader.pages.len() {
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let more = format!("more…  ({} of {})", reader.page + 1, reader.pages.len());
                if ui
                    .add(egui::Button::new(more).frame(false))
                    .on_hover_text("Click the text, Space or Enter")
                    .clicked()
                {
                    reader.advance(instant);
                }
            });
        }
    });
}

/// A spinner that turns as frames come and asks for none: egui's own asks
/// for every frame, and while the model works the screen draws only a few a
/// second (`screen.rs`'s `WAITING_TICK`), leaving the CPU to the model.
fn quiet_spinner(ui: &mut egui::Ui) {
    let size = ui.style().spacing.interact_size.y;
    let (rect, _) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    if !ui.is_rect_visible(rect) {
        return;
    }
    let color = ui.visuals().strong_text_color();
    let radius = rect.height() / 2.0 - 2.0;
    // Half a turn a second: an eighth of a turn between two waiting frames.
    let start = ui.input(|i| i.time) * std::f64::consts::PI;
    let points: Vec<egui::Pos2> = (0..=16)
        .map(|i| {
            let a = (start + f64::from(i) / 16.0 * std::f64::consts::PI * 1.5) as f32;
            rect.center() + radius * egui::vec2(a.cos(), a.sin())
        })
        .collect();
    ui.painter()
        .add(egui::Shape::line(points, egui::Stroke::new(3.0, color)));
}

/// A roll as dice on the table: a small face per die, tumbling through
/// numbers for `tumbling` seconds in, then the faces rolled, the modifier,
/// the total and what it means.
fn dice_ui(
    ui: &mut egui::Ui,
    r: &crate::session::turn::RollRecord,
    names: &BTreeMap<&str, &str>,
    tumbling: Option<f32>,
) {
    let gold = egui::Color32::from_rgb(230, 200, 120);
    // The player's own roll plainly; an NPC's, and the player resisting one, say whose (#41).
    let name = |id: &str| names.get(id).copied().unwrap_or(id).to_owned();
    let whose = match (&r.against, r.actor.as_str()) {
        (Some(npc), _) => format!("You resist {}: ", name(npc)),
        (None, crate::session::turn::PERSONA) => String::new(),
        (None, npc) => format!("{}: ", name(npc)),
    };
    ui.horizontal(|ui| {
        ui.label(
            egui::RichText::new(format!(
                "{whose}{} ({})",
                r.check,
                r.stat.as_deref().unwrap_or("no stat")
            ))
            .color(gold),
        );
        for (i, face) in r.roll.rolls.iter().enumerate() {
            let shown = match tumbling {
                // Faces one to six, changing twenty times a second.
                Some(t) => ((t * 20.0) as u32 + i as u32 * 3) % 6 + 1,
                None => *face,
            };
            egui::Frame::new()
                .stroke(egui::Stroke::new(1.5, gold))
                .corner_radius(4.0)
                .inner_margin(egui::Margin::symmetric(7, 2))
                .show(ui, |ui| {
                    ui.label(
                        egui::RichText::new(shown.to_string())
                            .monospace()
                            .strong()
                            .color(gold),
                    );
                });
        }
        if tumbling.is_none() {
            ui.label(
                egui::RichText::new(format!(
                    "{:+} = {} — {}",
                    r.roll.modifier, r.roll.total, r.label
                ))
                .monospace()
                .color(gold),
            );
        }
    });
}

/// One entry, whole: the text box shows the turn's, the backlog all of them.
fn entry_ui(ui: &mut egui::Ui, entry: &Entry, names: &BTreeMap<&str, &str>, tumbling: Option<f32>) {
    match entry {
        Entry::Recap(text) => {
            egui::Frame::group(ui.style()).show(ui, |ui| {
                ui.label(egui::RichText::new("Previously…").strong().italics());
                ui.label(egui::RichText::new(text).italics());
            });
        }
        Entry::Intention { text, whisper_to } => {
            let prefix = whisper_to.as_ref().map_or_else(String::new, |to| {
                format!(
                    "(to {}, quietly) ",
                    names.get(to.as_str()).copied().unwrap_or(to)
                )
            });
            ui.label(
                egui::RichText::new(format!("> {prefix}{text}"))
                    .size(17.0)
                    .color(egui::Color32::from_rgb(160, 200, 240)),
            );
        }
        Entry::Narration(text) => {
            ui.label(egui::RichText::new(markdown::plain(text)).size(18.0));
            ui.add_space(6.0);
        }
        Entry::Roll(r) => dice_ui(ui, r, names, tumbling),
        Entry::Scene(text) => {
            ui.separator();
            ui.label(egui::RichText::new(text).weak().italics());
        }
        Entry::Note(text) => {
            ui.label(egui::RichText::new(format!("({text})")).weak());
        }
        Entry::Notice(Notice::World(text)) => {
            ui.label(
                egui::RichText::new(format!("\u{2691} {text}"))
                    .size(16.0)
                    .strong()
                    .color(egui::Color32::from_rgb(230, 180, 90)),
            );
            ui.add_space(4.0);
        }
        Entry::Notice(Notice::Blocked(text)) => {
            ui.label(
                egui::RichText::new(format!("\u{2716} You cannot: {text}."))
                    .size(16.0)
                    .italics()
                    .color(egui::Color32::from_rgb(220, 140, 130)),
            );
        }
    }
}

/// H (or the wheel turned up over the picture or the text) opens the backlog.
pub fn backlog_keys(
    ctx: &egui::Context,
    keys: &ButtonInput<KeyCode>,
    wheel: &mut MessageReader<MouseWheel>,
    reader: &mut SessionReader,
    modal: bool,
) {
    if keys.just_pressed(KeyCode::KeyH) && !ctx.egui_wants_keyboard_input() {
        reader.backlog = !reader.backlog;
    }
    let up = wheel.read().any(|w| w.y > 0.0);
    // Not over a window or the side panel, whose lists the wheel scrolls.
    let over_stage = ctx.pointer_hover_pos().is_some_and(|p| {
        reader.stage.contains(p)
            && ctx
                .layer_id_at(p)
                .is_none_or(|l| l == egui::LayerId::background())
    });
    if up && over_stage && !modal && !reader.any_open() {
        reader.backlog = true;
    }
}

/// The session's backlog: every move, roll and narration of this branch, a
/// turn at a time, each with "Return here" (a `/rewind` to the scene that
/// turn made, on a new branch).
fn session_backlog(
    mut contexts: EguiContexts,
    mut reader: ResMut<SessionReader>,
    (transcript, progress): (Res<Transcript>, Res<TurnProgress>),
    people: Query<&Character>,
    mut inputs: MessageWriter<SessionInput>,
) -> Result {
    if !reader.backlog {
        return Ok(());
    }
    let ctx = contexts.ctx_mut()?;
    let names: BTreeMap<&str, &str> = people
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let mut open = true;
    let mut rewind = None;
    let pressed = reader.press_return.take();
    backlog_window(ctx, &mut open, |ui| {
        let mut from = 0;
        let last = transcript.moments.len().saturating_sub(1);
        for (n, moment) in transcript.moments.iter().enumerate() {
            for entry in transcript.entries.get(from..moment.end).unwrap_or_default() {
                entry_ui(ui, entry, &names, None);
            }
            from = moment.end;
            // The last turn is where the story stands: nothing to return to.
            if n < last {
                let button = ui
                                .add_enabled(!progress.busy, egui::Button::new("Return here").small())
                                .on_hover_text(format!(
                                    "Go back to just after this (scene {}); what came after stays saved on its own branch",
                                    moment.scene
                                ));
                if button.clicked() || pressed == Some(n + 1) {
                    rewind = Some(moment.scene);
                }
            }
            ui.separator();
        }
        for entry in transcript.entries.get(from..).unwrap_or_default() {
            entry_ui(ui, entry, &names, None);
        }
        if !transcript.streaming.is_empty() {
            ui.label(egui::RichText::new(&transcript.streaming).size(18.0));
        }
    });
    if let Some(scene) = rewind {
        inputs.write(SessionInput(format!("/rewind {scene}")));
        open = false;
    }
    reader.backlog = open;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(entries: Vec<Entry>, streaming: &str) -> Transcript {
        Transcript {
            entries,
            streaming: streaming.to_owned(),
            ..Transcript::default()
        }
    }

    fn sentence(n: usize) -> String {
        format!("Paragraph {n} goes on about the lanterns and the tide at some length. ").repeat(3)
    }

    #[test]
    fn a_turn_is_its_move_then_its_narration_in_pages() {
        let long = (1..=4).map(sentence).collect::<Vec<_>>().join("\n\n");
        let v = view(
            vec![
                Entry::Narration("The opening.".into()),
                Entry::Intention {
                    text: "I wait.".into(),
                    whisper_to: None,
                },
                Entry::Narration(long),
                Entry::Note("a note".into()),
            ],
            "",
        );
        let pages = pages_of(&v, v.turn_start());
        assert!(pages.len() >= 2, "{} pages", pages.len());
        assert_eq!(
            pages[0][0],
            Block::Whole(1),
            "the move leads the first page"
        );
        assert_eq!(pages.last().unwrap().last(), Some(&Block::Whole(3)));
        for page in &pages {
            let chars: usize = page
                .iter()
                .map(|b| match b {
                    Block::Prose(s) => markdown::char_len(s),
                    Block::Whole(_) => 0,
                })
                .sum();
            assert!(chars <= PAGE_CHARS, "{chars}");
        }
        // The opening narration belongs to the turn before: not on show.
        assert!(
            !pages
                .iter()
                .flatten()
                .any(|b| matches!(b, Block::Prose(s) if markdown::char_len(s) == 12))
        );
    }

    #[test]
    fn the_reader_types_a_page_turns_it_and_finishes_only_when_nothing_arrives() {
        let long = (1..=4).map(sentence).collect::<Vec<_>>().join("\n\n");
        let v = view(
            vec![Entry::Intention {
                text: "I wait.".into(),
                whisper_to: None,
            }],
            &long,
        );
        let mut reader = SessionReader {
            pages: pages_of(&v, 0),
            arriving: true,
            ..SessionReader::default()
        };
        assert!(!reader.revealed());
        reader.advance(false);
        assert!(reader.revealed(), "the first press shows the page");
        assert_eq!(reader.page, 0);
        reader.advance(false);
        assert_eq!(reader.page, 1, "the second turns it");
        assert!(
            reader.shown.abs() < f32::EPSILON,
            "and types the next page from its start"
        );
        reader.show_everything();
        assert!(!reader.finished(), "narration still arriving");
        reader.arriving = false;
        assert!(reader.finished());
    }
}
