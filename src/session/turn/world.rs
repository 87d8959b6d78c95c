//! What the world does in a turn (#41): the move check, the time a move takes, consequences fired.
//!
//! The engine reads the move against the world before any model does
//! ([`check`]); a blocked move changes nothing and is told as blocked. The
//! time a move takes (a route's minutes, a check's, the ruleset's default)
//! runs the clocks that follow time, and every trigger those or any other op
//! reach is a consequence: its ops applied, a `system` message in the
//! stream (shown as it happens, kept in the transcript), and told to the
//! narrator as what the world does. A consequence fired after the
//! narrations (by an extractor's op) is told in the next turn.

use std::sync::Arc;

use serde_json::Value;

use super::check::{self, Blocked, Reading};
use super::offers;
use super::rules::destination;
use super::{PERSONA, TurnRunner};
use crate::rules::op::NewKind;
use crate::rules::state::WHEREABOUTS;
use crate::rules::{Change, Consequence, OpKind, StateOp, Target, told};
use crate::session::people;
use crate::transcript::marker::Notice;
use crate::transcript::stream::{Kind, SYSTEM};

/// How deep consequences may set off further consequences in one batch.
const CHAIN: u8 = 3;

/// At most this many people, items, places and threads enter the world in one turn.
pub const MAX_INTRODUCED: usize = 2;

/// What the engine's check makes of a move (its text, and whom it is
/// whispered to) against `reading`: why it is blocked, if it is, and the
/// minutes its way takes when it goes somewhere.
fn judge(
    text: &str,
    whisper_to: Option<&str>,
    reading: &Reading,
) -> (Option<Blocked>, Option<i64>) {
    let mut blocked = check::check(text, whisper_to, reading);
    let mut travel = None;
    if blocked.is_none()
        && let Some(to) = destination(text, reading.here, &reading.places)
    {
        blocked = check::far(&to, reading);
        travel = reading.way(&to).map(|(m, _)| m);
    }
    (blocked, travel)
}

/// How many of the last narrations the model's choices may draw on.
const SHOWN_NARRATIONS: usize = 4;

impl TurnRunner {
    /// The engine's check of the player's move; `true` when it is blocked.
    pub(super) fn check_move(&mut self) -> bool {
        let text = self.input.text.clone();
        let (blocked, travel) =
            self.with_reading(|reading| judge(&text, self.input.whisper_to.as_deref(), reading));
        if blocked.is_none() {
            self.ledger.travel = travel;
        }
        let present_names = self.others_here();
        match blocked {
            Some(b) => {
                self.ledger.instead = b.instead(&present_names);
                self.block(b);
                true
            }
            None => false,
        }
    }

    /// Why each of the model's choices is not offered, if it is not: the
    /// move check would block it (#41: a far place, someone elsewhere, an
    /// item not held), or it speaks to no one who could answer (#42: a place
    /// spoken to, anyone in an empty room; `check::speaks_to_no_one`). The
    /// world is read once for all of them.
    pub(super) fn refused_choices(&self, choices: &[String]) -> Vec<Option<String>> {
        let shown = self.shown();
        self.with_reading(|reading| {
            choices
                .iter()
                .map(|c| {
                    judge(c, None, reading)
                        .0
                        .map(|b| b.reason())
                        .or_else(|| check::speaks_to_no_one(c, reading))
                        .or_else(|| offers::invented(c, reading))
                        .or_else(|| offers::unshown(c, &shown))
                })
                .collect()
        })
    }

    /// What the player has been shown, for the model's choices to keep to
    /// (`offers::unshown`): the last narrations and the move, the scene,
    /// every name the story has, its open questions, and what the codex says
    /// of the place and the people here.
    fn shown(&self) -> offers::Shown {
        let campaign = &self.state.campaign;
        let world = &self.state.world;
        let narrations = self
            .state
            .stream
            .messages
            .iter()
            .rev()
            .filter(|m| m.kind == crate::transcript::stream::Kind::Narration)
            .take(SHOWN_NARRATIONS)
            .map(|m| m.content.as_str());
        let (here, _) = self.state.place();
        let present = self.present();
        let scene = world.scene.values().filter_map(Value::as_str);
        let names = campaign
            .characters
            .values()
            .map(|c| c.name.as_str())
            .chain(
                campaign
                    .locations
                    .values()
                    .chain(campaign.items.values())
                    .chain(campaign.factions.values())
                    .map(|e| e.name.as_str()),
            )
            .chain(world.introduced.values().map(|i| i.name.as_str()))
            .chain(world.threads.values().map(|t| t.title.as_str()));
        let codex = campaign
            .locations
            .get(&here)
            .map(|l| l.description.as_str())
            .into_iter()
            .chain(
                present
                    .iter()
                    .filter_map(|p| campaign.characters.get(p))
                    .map(|c| c.description.as_str()),
            );
        offers::Shown::of(
            narrations
                .chain([self.input.text.as_str()])
                .chain(scene)
                .chain(names)
                .chain(codex),
        )
    }

    /// `kept`, the model's choices that passed, completed with the engine's
    /// own (`offers::complete`: a question the story left open put to
    /// someone here, a way open from here), each of which the move check
    /// passes; with what the engine added and why.
    pub(super) fn completed_choices(
        &self,
        kept: Vec<String>,
    ) -> (Vec<String>, Vec<(String, &'static str)>) {
        let questions: Vec<String> = self
            .state
            .world
            .threads
            .values()
            .filter(|t| t.status == "open" && t.title.trim_end().ends_with('?'))
            .map(|t| t.title.trim().to_owned())
            .collect();
        self.with_reading(|reading| {
            let mut offered = offers::Offers::of(reading, &questions, self.turn_id);
            // The engine's own choices meet the move check and the
            // player's lines and veils, as the model's do.
            for offer in [&mut offered.ask, &mut offered.go] {
                offer.take_if(|c| {
                    judge(c, None, reading).0.is_some() || self.guard.check(c).is_some()
                });
            }
            offers::complete(kept, offered, reading)
        })
    }

    /// `read` given what the move check reads of the world as it stands.
    pub(super) fn with_reading<T>(&self, read: impl FnOnce(&Reading) -> T) -> T {
        let campaign = Arc::clone(&self.state.campaign);
        let here = self.state.place().0;
        let present = self.present();
        let introduced = self.state.world.introduced.clone();
        let new = |kind: NewKind| {
            introduced
                .iter()
                .filter(move |(_, i)| i.kind == kind)
                .map(|(id, i)| (id.as_str(), i.name.as_str()))
        };
        let mut people = people::names(&campaign);
        people.extend(new(NewKind::Person).map(|(id, n)| (id.to_owned(), vec![n.to_owned()])));
        // A place play introduced is one way from where it was found.
        let mut routes = campaign.routes.clone();
        if !routes.is_empty() {
            routes.extend(
                introduced
                    .iter()
                    .filter(|(_, i)| i.kind == NewKind::Place && !i.at.is_empty())
                    .map(|(id, i)| crate::campaign::Route {
                        from: i.at.clone(),
                        to: id.clone(),
                        minutes: 10,
                        closed_when: None,
                    }),
            );
        }
        // #41: a way a clock has shut is closed until the clock falls back.
        let shut = |r: &crate::campaign::Route| {
            r.closed_when.as_ref().is_some_and(|c| {
                self.state
                    .world
                    .clocks
                    .get(&c.clock)
                    .is_some_and(|k| k.value >= c.at_least)
            })
        };
        let (closed, routes): (Vec<_>, Vec<_>) = routes.into_iter().partition(|r| shut(r));
        let whereabouts = self
            .state
            .world
            .scene
            .get(WHEREABOUTS)
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(id, at)| Some((id.clone(), at.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        let reading = Reading {
            here: &here,
            present: &present,
            people: &people,
            places: self.state.places(),
            items: campaign
                .items
                .iter()
                .map(|(id, i)| (id.as_str(), i.name.as_str()))
                .chain(new(NewKind::Item))
                .collect(),
            factions: campaign
                .factions
                .values()
                .map(|f| f.name.as_str())
                .collect(),
            lore: campaign
                .lore
                .iter()
                .filter_map(|d| d.text.lines().find_map(|l| l.strip_prefix("# ")))
                .map(str::trim)
                .collect(),
            player_name: campaign
                .characters
                .get(PERSONA)
                .map_or("", |c| c.name.as_str()),
            inventory: &self.state.world.inventory,
            whereabouts,
            routes: &routes,
            closed: &closed,
        };
        read(&reading)
    }

    /// The move cannot happen: nothing of it reaches the world, and the
    /// narrator and the player are told why.
    pub(super) fn block(&mut self, blocked: Blocked) {
        self.blocked = blocked.reason();
        let notice = Notice::Blocked(self.blocked.clone());
        self.state
            .stream
            .push(self.turn_id, SYSTEM, Kind::System, notice.to_string(), None);
        self.ledger.blocked = Some(blocked);
    }

    /// The time the player's move takes: a route's minutes when it went
    /// somewhere, a rolled check's, else the ruleset's default; the clocks
    /// that follow time tick for it. Once per turn, before the player's
    /// narration, so what fills is told with it.
    pub(super) fn spend_time(&mut self) {
        if self.ledger.minutes.is_some() {
            return;
        }
        let ruleset = &self.state.campaign.ruleset;
        let rolled = self
            .ledger
            .rolls
            .iter()
            .find(|r| r.actor == PERSONA && r.against.is_none())
            .and_then(|r| ruleset.check(Some(&r.check)).ok())
            .and_then(|c| c.minutes);
        let moved = self.ledger.travel.filter(|_| self.ledger.blocked.is_none());
        let minutes = moved.or(rolled).unwrap_or_else(|| ruleset.move_minutes());
        #[allow(clippy::cast_precision_loss, reason = "minutes are small")]
        let minutes = minutes.max(0) as f64;
        self.ledger.minutes = Some(minutes);
        let (before, after) = (self.state.play_minutes, self.state.play_minutes + minutes);
        let ticks: Vec<StateOp> = self
            .state
            .world
            .clocks
            .values()
            .filter_map(|c| {
                #[allow(clippy::cast_precision_loss, reason = "minutes are small")]
                let every = c.every_minutes.filter(|m| *m > 0)? as f64;
                #[allow(clippy::cast_possible_truncation, reason = "floored minutes")]
                let n = ((after / every).floor() - (before / every).floor()) as i64;
                (n > 0).then(|| StateOp::new(OpKind::TickClock, &format!("clocks.{}", c.id), n))
            })
            .collect();
        self.apply_ops("time", &ticks);
        // #41: the scene's time of day follows play time.
        let opened = self
            .state
            .world
            .scene
            .get(OPENED_AT)
            .and_then(Value::as_f64);
        let time = self.state.world.scene.get("time").and_then(Value::as_str);
        if let (Some(opened), Some(time)) = (opened, time)
            && let Some(later) = time_of_day(time, opened + before, opened + after)
        {
            let op = StateOp::new(OpKind::Set, "scene.time", later);
            self.apply_ops("time", &[op]);
        }
    }

    /// The triggers `changes` reached: each a consequence, its clock's ops
    /// for that value applied (a chain at most [`CHAIN`] deep).
    pub(super) fn consequences(&mut self, changes: &[Change], depth: u8) {
        for change in changes {
            let from_clock = matches!(Target::parse(&change.op.path), Ok(Target::Clock(_)));
            for trigger in &change.triggered {
                let text = told(trigger);
                let notice = Notice::World(text.clone());
                self.state.stream.push(
                    self.turn_id,
                    SYSTEM,
                    Kind::System,
                    notice.to_string(),
                    None,
                );
                self.ledger.fired.push(Consequence { text, from_clock });
            }
            if depth >= CHAIN {
                continue;
            }
            let Ok(Target::Clock(id)) = Target::parse(&change.op.path) else {
                continue;
            };
            let (Some(old), Some(new)) = (change.before.as_i64(), change.after.as_i64()) else {
                continue;
            };
            let ops: Vec<StateOp> = self
                .state
                .world
                .clocks
                .get(&id)
                .map(|c| {
                    c.effects
                        .iter()
                        .filter(|(at, _)| at.parse::<i64>().is_ok_and(|at| old < at && new >= at))
                        .flat_map(|(_, ops)| ops.iter().cloned())
                        .collect()
                })
                .unwrap_or_default();
            self.apply_ops_at("consequence", &ops, depth + 1);
        }
    }

    /// After the player's narration: each consequence from a clock it was
    /// given and does not tell ([`tells`]) the engine tells in the
    /// campaign's own words, as a narration of its own.
    pub(super) fn tell_the_rest(&mut self, narration: &str) {
        let rest: Vec<String> = std::mem::take(&mut self.ledger.given)
            .into_iter()
            .filter(|c| c.from_clock && !tells(narration, &c.text))
            .map(|c| c.text)
            .collect();
        if rest.is_empty() {
            return;
        }
        self.state.stream.push(
            self.turn_id,
            crate::transcript::stream::ENGINE,
            Kind::Narration,
            rest.join(" "),
            None,
        );
        self.ledger.appended.extend(rest);
    }

    /// The player's narration in the author's words (#42), when the move
    /// needed no roll (or succeeded) and arrived somewhere or looked around,
    /// and the place's description has not been told in this session: the
    /// engine's opening, the description, and who is here.
    pub(super) fn place_told(&self) -> Option<String> {
        use crate::session::continuity::Outcome;
        if !matches!(self.decided(), Outcome::Unrolled | Outcome::Success) {
            return None;
        }
        let words = check::words(&self.input.text);
        let has = |w: &[&str]| words.iter().any(|x| w.contains(&x.lower.as_str()));
        // Looking around, not a question about looking ("Did you look around?").
        let looked = has(&["look", "looks", "glance", "survey"])
            && has(&["around", "about", "round"])
            && self.input.whisper_to.is_none()
            && self.addressee().is_none()
            && !self.input.text.contains(['"', '\u{201c}', '?']);
        if !(self.ledger.moved || looked) {
            return None;
        }
        let (here, _) = self.state.place();
        let description = self
            .state
            .campaign
            .locations
            .get(&here)
            .map(|l| l.description.trim())
            .filter(|d| !d.is_empty())?;
        let first = crate::memory::chunk::sentences(description)
            .into_iter()
            .next()
            .unwrap_or_default();
        let told_before = self
            .state
            .stream
            .messages
            .iter()
            .any(|m| m.kind == Kind::Narration && m.content.contains(first));
        if told_before {
            return None;
        }
        let others = self.others_here();
        let who = match others.as_slice() {
            [] => "No one else is here.".to_owned(),
            [one] => format!("{one} is here."),
            [rest @ .., last] => format!("{} and {last} are here.", rest.join(", ")),
        };
        let description = if description.ends_with(['.', '!', '?']) {
            description.to_owned()
        } else {
            format!("{description}.")
        };
        Some(format!("{} {description} {who}", self.outcome_opening()))
    }

    /// The names of those here besides the player.
    fn others_here(&self) -> Vec<String> {
        self.present()
            .iter()
            .filter(|id| *id != PERSONA)
            .map(|id| self.name_of(id))
            .collect()
    }

    /// Consequences not yet told (for the narration being asked for).
    pub(super) fn untold(&self) -> &[Consequence] {
        self.ledger
            .fired
            .get(self.ledger.told..)
            .unwrap_or_default()
    }

    /// A narration has been given what fired so far.
    pub(super) fn mark_told(&mut self) {
        self.ledger.told = self.ledger.fired.len();
    }

    /// #41: an extractor's introductions, vetted by the engine: at most
    /// [`MAX_INTRODUCED`] a turn, each name new to the world (no one,
    /// nothing and nowhere of the campaign or of play is called so), each
    /// stamped with its turn; the others are refused and logged. Other ops
    /// pass as they are.
    pub(super) fn vet_introductions(&mut self, owner: &str, ops: Vec<StateOp>) -> Vec<StateOp> {
        let mut kept = Vec::with_capacity(ops.len());
        for mut op in ops {
            if op.op != OpKind::Introduce {
                kept.push(op);
                continue;
            }
            let name = op
                .value
                .as_ref()
                .and_then(|v| v.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim()
                .to_owned();
            let why = if self.ledger.introduced >= MAX_INTRODUCED {
                Some(format!("no more than {MAX_INTRODUCED} new things a turn"))
            } else if self.known_name(&name) {
                Some(format!(
                    "the world already has someone or something called {name:?}"
                ))
            } else {
                None
            };
            if let Some(why) = why {
                self.ledger.ops_proposed += 1;
                self.ledger.ops_refused += 1;
                self.ledger
                    .refused
                    .push(format!("extract {owner}: {}: {why}", op.path));
                continue;
            }
            if let Some(Value::Object(v)) = &mut op.value {
                v.insert("turn".into(), self.turn_id.into());
            }
            self.ledger.introduced += 1;
            kept.push(op);
        }
        kept
    }

    /// Whether anyone or anything of the campaign or of play goes by `name`.
    fn known_name(&self, name: &str) -> bool {
        let wanted = name.to_lowercase();
        let wanted = wanted.strip_prefix("the ").unwrap_or(&wanted);
        let campaign = &self.state.campaign;
        let same = |n: &str| {
            let n = n.to_lowercase();
            n.strip_prefix("the ").unwrap_or(&n) == wanted
        };
        campaign.characters.values().any(|c| same(&c.name))
            || campaign
                .locations
                .values()
                .chain(campaign.items.values())
                .chain(campaign.factions.values())
                .any(|e| same(&e.name))
            || self.state.world.introduced.values().any(|i| same(&i.name))
    }

    /// People introduced this turn are in the scene.
    pub(super) fn arrive_introduced(&mut self) {
        let here = self.state.place().0;
        let mut present = self.state.world.present();
        let mut arrived = false;
        for (id, new) in &self.state.world.introduced {
            if new.kind == NewKind::Person
                && new.turn == self.turn_id
                && new.at == here
                && !present.contains(id)
            {
                present.push(id.clone());
                arrived = true;
            }
        }
        if arrived {
            let op = StateOp::new(OpKind::Set, "scene.present", present);
            self.apply_ops("move", &[op]);
        }
    }

    /// The scene's danger in the ruleset's words ("risky"), from
    /// `scene.danger_tier` and the scene schema's description of it
    /// ("0 safe, 1 risky, 2 dangerous"); empty when the ruleset has none.
    pub(super) fn stakes(&self) -> String {
        let Some(tier) = self.danger_tier() else {
            return String::new();
        };
        let ruleset = &self.state.campaign.ruleset;
        let described = ruleset.scene_state_schema["properties"]["danger_tier"]["description"]
            .as_str()
            .unwrap_or_default();
        tier_word(described, tier)
    }

    /// The scene's danger tier (the ruleset's `danger_tier`), if it keeps one.
    pub(super) fn danger_tier(&self) -> Option<i64> {
        self.state
            .world
            .scene
            .get("danger_tier")
            .and_then(Value::as_i64)
    }
}

/// The scene key the minute of the day the session opened at is kept in
/// (set at the opening from the scene's `time`, when it names a part of day).
pub const OPENED_AT: &str = "opened_at_minute";

/// Parts of the day, by the hour they begin, and the words that name them
/// (the first is the one the engine writes).
const PARTS: [(u32, &[&str]); 7] = [
    (0, &["night", "midnight"]),
    (5, &["dawn", "daybreak", "sunrise"]),
    (7, &["morning"]),
    (12, &["midday", "noon"]),
    (13, &["afternoon"]),
    (17, &["dusk", "sunset", "twilight"]),
    (20, &["night", "nightfall"]),
];

/// The part of the day `minute` (since the session's first midnight) falls in.
fn part_at(minute: f64) -> &'static str {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "an hour of the day, 0..24"
    )]
    let hour = (minute / 60.0).floor().rem_euclid(24.0) as u32;
    PARTS
        .iter()
        .rev()
        .find(|(from, _)| hour >= *from)
        .map_or("night", |(_, words)| words[0])
}

/// The first part-of-day word in `time` and where it starts.
fn part_named(time: &str) -> Option<(usize, &'static str)> {
    let lower = time.to_lowercase();
    PARTS
        .iter()
        .flat_map(|(_, words)| words.iter())
        .filter_map(|w| {
            lower
                .match_indices(w)
                .find(|(at, _)| {
                    let before = lower[..*at].chars().next_back();
                    let after = lower[at + w.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                })
                .map(|(at, _)| (at, *w))
        })
        .min_by_key(|(at, _)| *at)
}

/// The minute of the day a scene's `time` words open at ("dusk, the fourth
/// night" → 18:00), when they name a part of day.
pub fn opening_minute(time: &str) -> Option<f64> {
    let (_, word) = part_named(time)?;
    let hour = match word {
        "midnight" => 0.0,
        "night" | "nightfall" => 22.0,
        "dawn" | "daybreak" | "sunrise" => 5.5,
        "morning" => 8.0,
        "midday" | "noon" => 12.0,
        "afternoon" => 14.0,
        _ => 18.0,
    };
    Some(hour * 60.0)
}

/// `time` with its part of day moved on, when the day has moved from the
/// part at minute `from` to another by minute `to` (`None`: no change).
fn time_of_day(time: &str, from: f64, to: f64) -> Option<String> {
    let (then, now) = (part_at(from), part_at(to));
    if then == now {
        return None;
    }
    let moved = part_named(time).and_then(|(at, word)| {
        Some(format!(
            "{}{now}{}",
            time.get(..at)?,
            time.get(at + word.len()..)?
        ))
    });
    Some(moved.unwrap_or_else(|| now.to_owned()))
}

/// The word a description gives tier `tier` ("0 safe, 1 risky, 2 dangerous" → 1: "risky").
fn tier_word(described: &str, tier: i64) -> String {
    let wanted = tier.to_string();
    let words: Vec<&str> = described
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| w[0] == wanted)
        .map(|w| w[1].to_owned())
        .unwrap_or_default()
}

/// Whether a narration tells a consequence: it has at least two of the
/// consequence's words of five letters or more (a third of them when it
/// has more than six), by their first five letters ("flooding" tells
/// "flood"; "lanterns" tells "lantern").
pub fn tells(narration: &str, consequence: &str) -> bool {
    let stems = |t: &str| -> std::collections::BTreeSet<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 5)
            .map(|w| w.to_lowercase().chars().take(5).collect())
            .collect()
    };
    let wanted = stems(consequence);
    let found = stems(narration);
    let hits = wanted.intersection(&found).count();
    hits >= 2 && hits * 3 >= wanted.len().min(6)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_time_of_day_moves_on_with_play_time() {
        let dusk = "dusk, the fourth night of green lanterns";
        let opened = super::opening_minute(dusk).unwrap();
        assert!((opened - 18.0 * 60.0).abs() < f64::EPSILON);
        assert_eq!(super::time_of_day(dusk, opened, opened + 90.0), None);
        assert_eq!(
            super::time_of_day(dusk, opened, opened + 150.0).as_deref(),
            Some("night, the fourth night of green lanterns")
        );
        let grey = "grey morning, two days before the crest";
        let opened = super::opening_minute(grey).unwrap();
        assert_eq!(
            super::time_of_day(grey, opened + 200.0, opened + 250.0).as_deref(),
            Some("grey midday, two days before the crest")
        );
        // A day later, night turns to dawn; words naming no part are replaced.
        assert_eq!(
            super::time_of_day("the small hours", 4.0 * 60.0, 6.0 * 60.0).as_deref(),
            Some("dawn")
        );
        assert_eq!(super::opening_minute("the hour of the vote"), None);
        assert_eq!(super::opening_minute("knightly vigil"), None);
    }

    use super::tier_word;

    #[test]
    fn the_danger_tier_reads_in_the_rulesets_words() {
        let d = "What failure costs here: 0 safe, 1 risky, 2 dangerous.";
        assert_eq!(tier_word(d, 0), "safe");
        assert_eq!(tier_word(d, 2), "dangerous");
        assert_eq!(tier_word(d, 5), "");
    }
}
