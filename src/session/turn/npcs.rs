//! NPC activation (seed 004 step 4): who acts this turn, in what order, and each one's intention.

use super::contracts::NpcIntent;
use super::types::ActivationRoll;
use super::{PERSONA, Phase, Purpose, RollRecord, TurnRunner, check, voices};
use crate::campaign::CharacterKind;
use serde_json::json;

use crate::rules::{EscalationStep, Modifiers, OpKind, StateOp, Tier};
use crate::transcript::stream::{ENGINE, Kind};

impl TurnRunner {
    /// The NPCs present with whether they are baked and their chattiness,
    /// baked first, then the chattiest (the order they are activated in).
    pub(super) fn npcs_present(&self) -> Vec<(String, bool, f64)> {
        let present = self.present();
        let mut npcs: Vec<(String, bool, f64)> = self
            .state
            .campaign
            .characters
            .iter()
            .filter(|(id, c)| c.kind == CharacterKind::Npc && present.contains(id))
            .map(|(id, c)| (id.clone(), c.baked, c.chattiness))
            .collect();
        npcs.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(&b.0)));
        npcs
    }

    /// Seed 004 step 4: baked NPCs first, then by chattiness; each non-baked
    /// one rolls against it; then the first of them is asked what it does.
    pub(super) fn activate_npcs(&mut self) {
        let npcs = self.npcs_present();
        let mut order = Vec::new();
        let mut skipped = Vec::new();
        for (id, baked, chattiness) in npcs {
            if baked {
                order.push(id.clone());
                continue;
            }
            // d100 against chattiness × 100, recorded like any roll.
            let roll = self
                .dice
                .roll_str("1d100", &Modifiers::new())
                .map_or(100, |r| r.total);
            #[allow(clippy::cast_possible_truncation, reason = "chattiness is 0..=1")]
            let threshold = (chattiness * 100.0).round() as i64;
            self.ledger.activation.push(ActivationRoll {
                npc: id.clone(),
                roll,
                threshold,
            });
            if roll <= threshold {
                order.push(id.clone());
            } else {
                skipped.push(id.clone());
            }
        }
        // #21: at most `npcs_per_turn` act; the NPC the player addressed goes
        // first, then the order above. Saves from before the setting keep
        // every activated NPC, in the old order.
        if let Some(cap) = self.state.calibration.npcs_per_turn {
            if let Some(addressed) = self.addressee() {
                if let Some(at) = order.iter().position(|id| *id == addressed) {
                    let id = order.remove(at);
                    order.insert(0, id);
                } else if let Some(at) = skipped.iter().position(|id| *id == addressed) {
                    // Spoken to, an NPC answers whatever its chattiness rolled.
                    order.insert(0, skipped.remove(at));
                }
            }
            let cap = usize::try_from(cap).unwrap_or(usize::MAX);
            if order.len() > cap {
                skipped.splice(0..0, order.drain(cap..));
            }
        }
        self.ledger.acted = order;
        self.ledger.skipped = skipped;
        self.next_npc(0);
    }

    /// NPC `index` of the order forms its intention; past the last, the
    /// choices. The NPC the player speaks to answers in its author's lines
    /// while it has one left (`voices`), without asking the model.
    pub(super) fn next_npc(&mut self, mut index: usize) {
        while let Some(npc) = self.ledger.acted.get(index).cloned() {
            // It answered with the player's narration (`narrate_persona`).
            if self.ledger.answered.as_deref() == Some(npc.as_str()) {
                index += 1;
                continue;
            }
            if self.spoken_to(&npc)
                && let Some(line) = self.author_line(&npc, true)
            {
                let name = self.name_of(&npc);
                self.ledger
                    .continuity
                    .push(format!("npc {name}: answers you in the author's words"));
                self.say_line(&npc, &line, true);
                index += 1;
                continue;
            }
            self.phase = Phase::Npc {
                index,
                narrated: false,
            };
            let request = self.intent_request(&npc);
            self.queue(Purpose::NpcIntent { npc }, request);
            return;
        }
        self.ask_choices();
    }

    /// Whether the player's move speaks to `npc` (and was not blocked).
    fn spoken_to(&self, npc: &str) -> bool {
        self.ledger.blocked.is_none()
            && self.addressee().as_deref() == Some(npc)
            && (self.input.whisper_to.is_some()
                || check::words(&self.input.text)
                    .iter()
                    .any(|w| check::is_any(&w.lower, &check::SPEAKS)))
    }

    /// The question the player puts to the NPC it speaks to, and that NPC's
    /// answer from its author (`answer_line`), when the move needed no roll.
    pub(super) fn authored_answer(&self) -> Option<(String, String)> {
        if self.decided() != crate::session::continuity::Outcome::Unrolled {
            return None;
        }
        let npc = self.addressee()?;
        if !self.spoken_to(&npc) || !self.present().contains(&npc) {
            return None;
        }
        let line = self.answer_line(&npc, &self.said())?;
        Some((npc, line))
    }

    /// What the story has told so far, for lines not to be said twice.
    fn said(&self) -> String {
        self.state
            .stream
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The next of the answers `npc`'s author wrote about what the move
    /// asks it (`voices::asked_about`) that `said` (the story so far) does
    /// not hold, whoever it names: an answer is about them, not to them.
    fn answer_line(&self, npc: &str, said: &str) -> Option<String> {
        let answers = &self
            .state
            .campaign
            .characters
            .get(npc)?
            .profile
            .as_ref()?
            .answers;
        if answers.is_empty() {
            return None;
        }
        let threads: Vec<(String, String)> = self
            .state
            .world
            .threads
            .iter()
            .map(|(id, t)| (id.clone(), t.title.clone()))
            .collect();
        let about = self.with_reading(|r| {
            voices::asked_about(
                &self.input.text,
                npc,
                answers.keys().map(String::as_str),
                &threads,
                r,
            )
            .map(str::to_owned)
        })?;
        // #41: an authored line meets the player's lines and veils too.
        voices::next_answer(answers.get(&about)?, said)
            .filter(|line| self.guard.check(line).is_none())
            .map(str::to_owned)
    }

    /// A line `npc`'s author wrote for it that it has not said in this
    /// scene and that names no one absent, the likeliest to bear on the
    /// move (`voices::pick`); said to the player, an answer about what the
    /// move asks first (`answer_line`).
    fn author_line(&self, npc: &str, to_player: bool) -> Option<String> {
        let said = self.said();
        if to_player && let Some(line) = self.answer_line(npc, &said) {
            return Some(line);
        }
        let campaign = &self.state.campaign;
        let profile = campaign
            .characters
            .get(npc)
            .and_then(|c| c.profile.as_ref());
        let messages = &self.state.stream.messages;
        let mut pool: Vec<String> = profile
            .and_then(|p| p.speech_patterns.as_ref())
            .map(|s| s.examples.clone())
            .unwrap_or_default();
        let scene = crate::session::beats::scene_number(&self.state.stream);
        for beat in crate::session::beats::current(&campaign.beats, &self.state.world, scene) {
            pool.extend(
                beat.dialogue
                    .iter()
                    .filter(|d| d.speaker == npc)
                    .map(|d| d.line.clone()),
            );
        }
        let just_told = messages
            .iter()
            .rev()
            .filter(|m| m.kind == Kind::Narration)
            .take(2)
            .map(|m| m.content.as_str());
        let cues: String = std::iter::once(self.input.text.as_str())
            .chain(just_told)
            .collect::<Vec<_>>()
            .join(" ");
        pool.retain(|line| self.guard.check(line).is_none());
        self.with_reading(|r| {
            voices::pick(&pool, &said, &cues, npc, r, self.turn_id, to_player).map(str::to_owned)
        })
    }

    /// `npc` says `line`: its intention and the engine's narration of it
    /// enter the stream. Nothing is rolled or extracted: a line said acts on
    /// no one.
    pub(super) fn say_line(&mut self, npc: &str, line: &str, to_player: bool) {
        let target = to_player.then(|| PERSONA.to_owned());
        self.state.stream.push(
            self.turn_id,
            npc,
            Kind::Intention,
            format!("\u{201c}{line}\u{201d}"),
            target,
        );
        let told = voices::told(&self.name_of(npc), line, to_player);
        self.state
            .stream
            .push(self.turn_id, ENGINE, Kind::Narration, told, None);
    }

    /// Why `npc`'s intention is not acted on, if it is not
    /// (`voices::misread`, against what it meant to do before).
    fn misread_intention(&self, npc: &str, intention: &str) -> Option<String> {
        let earlier: Vec<&str> = self
            .state
            .stream
            .messages
            .iter()
            .filter(|m| m.owner == npc && m.kind == Kind::Intention)
            .map(|m| m.content.as_str())
            .collect();
        self.with_reading(|r| voices::misread(intention, npc, r, &earlier))
    }

    /// An NPC's intention enters the stream (its thought too, if it had
    /// one); its narration and extractor are asked for.
    pub(super) fn on_npc_intent(&mut self, npc: &str, intent: &NpcIntent) {
        // Names misspelt by one letter are set right before it is read.
        let campaign = std::sync::Arc::clone(&self.state.campaign);
        let intention = self
            .with_reading(|r| super::cuts::mend_names(intent.intention.trim(), r, campaign.words()))
            .0;
        // #41: an intention over the player's lines or veils is not acted on.
        if let Some(crossing) = self.guard.check(&intention) {
            self.ledger.limits.push(format!(
                "npc_intent {npc}: {}: {npc} stays quiet this turn",
                crossing.label()
            ));
            if let Phase::Npc { narrated, .. } = &mut self.phase {
                *narrated = true;
            }
            return;
        }
        // #42: an intention that invents, is someone else's or is the last
        // one again is not acted on: the NPC says a line of its author's, or
        // nothing.
        if let Some(why) = self.misread_intention(npc, &intention) {
            let name = self.name_of(npc);
            let instead = match self.author_line(npc, false) {
                Some(line) => {
                    self.say_line(npc, &line, false);
                    "says a line of the author's instead"
                }
                None => "stays quiet this turn",
            };
            self.ledger
                .continuity
                .push(format!("npc_intent {name}: {why}: {name} {instead}"));
            if let Phase::Npc { narrated, .. } = &mut self.phase {
                *narrated = true;
            }
            return;
        }
        let thought = intent.thought.trim();
        if !thought.is_empty() && self.guard.check(thought).is_none() {
            self.state
                .stream
                .push(self.turn_id, npc, Kind::Thought, thought, None);
        }
        let outcome = self.roll_npc(npc, &intention);
        let id = self
            .state
            .stream
            .push(self.turn_id, npc, Kind::Intention, intention, None);
        let narrate = self.narrate_request(npc, id, &outcome, "");
        self.mark_told();
        self.queue(Purpose::Narrate { actor: npc.into() }, narrate);
        let extract = self.extract_request(npc, id);
        self.queue(Purpose::Extract { owner: npc.into() }, extract);
    }

    /// #41: an NPC's intention that acts (not only speaks or watches) is
    /// rolled like the player's: the ruleset's usual check, the stat its
    /// words call for (else the NPC's best); aimed at the player, the player
    /// rolls the same check to resist, and a resisted action fails. The
    /// outcome in words, for its narration (empty: nothing rolled).
    fn roll_npc(&mut self, npc: &str, intention: &str) -> String {
        if !acts(intention) {
            return String::new();
        }
        let campaign = std::sync::Arc::clone(&self.state.campaign);
        let ruleset = &campaign.ruleset;
        let Ok(check) = ruleset.check(None) else {
            return String::new();
        };
        let stats = self.stats_of(npc);
        let stat = check.bind.as_ref().and_then(|_| {
            let choices = if check.bind_to.is_empty() {
                ruleset.stat_names()
            } else {
                check.bind_to.clone()
            };
            stat_for(intention, &ruleset.stat_cues(), &choices).or_else(|| {
                choices
                    .iter()
                    .max_by_key(|s| stats.get(s.as_str()).and_then(serde_json::Value::as_i64))
                    .cloned()
            })
        });
        let none = Modifiers::new();
        let Ok(outcome) = ruleset.roll_check(check, &stats, stat.as_deref(), &none, &mut self.dice)
        else {
            return String::new();
        };
        let band = |id: &str| check.bands.iter().find(|b| b.id == id);
        self.ledger.rolls.push(RollRecord::of(npc, &outcome, None));
        let mut label = outcome.label.clone();
        let mut meaning = band(&outcome.band)
            .map(|b| b.meaning.clone())
            .unwrap_or_default();
        let total = outcome.roll.total;
        let aimed = aimed_at_player(intention, &self.name_of(PERSONA));
        let bound = if aimed {
            self.escalate(npc)
        } else {
            String::new()
        };
        if aimed && outcome.tier != Tier::Failure {
            let mine = self.stats_of(PERSONA);
            if let Ok(resist) =
                ruleset.roll_check(check, &mine, stat.as_deref(), &none, &mut self.dice)
            {
                self.ledger
                    .rolls
                    .push(RollRecord::of(PERSONA, &resist, Some(npc)));
                if resist.roll.total >= total {
                    let failure = check.bands.iter().find(|b| b.tier == Tier::Failure);
                    label = failure.map_or_else(|| "Failure".to_owned(), |b| b.label.clone());
                    meaning = format!(
                        "You resist ({} against {total}). {}",
                        resist.roll.total,
                        failure.map(|b| b.meaning.as_str()).unwrap_or_default()
                    );
                }
            }
        }
        let outcome = format!(
            "{label} ({total} on {}). {meaning}{bound}",
            outcome.roll.expression
        );
        self.ledger
            .npc_outcome
            .insert(npc.to_owned(), outcome.clone());
        outcome
    }
}

impl TurnRunner {
    /// #41: `npc` acts against the player: one step further along the
    /// ruleset's escalation profile, no further than the scene's danger tier
    /// allows, kept as the NPC's `escalation_<step>` tag (typed ops, so it is
    /// in the turn's changes and replays). How far it may go, for its narration.
    fn escalate(&mut self, npc: &str) -> String {
        let steps = self
            .state
            .campaign
            .ruleset
            .mechanics_guidance
            .escalation
            .clone();
        if steps.is_empty() {
            return String::new();
        }
        let tier = self.danger_tier().unwrap_or(0);
        let tags = self
            .state
            .world
            .characters
            .get(npc)
            .map(|c| c.tags.clone())
            .unwrap_or_default();
        let tag = |step: &EscalationStep| format!("{ESCALATION}{}", step.id);
        let now = steps.iter().position(|s| tags.contains(&tag(s)));
        let allowed = steps.iter().rposition(|s| s.from_tier <= tier).unwrap_or(0);
        let next = now.map_or(0, |n| (n + 1).min(allowed.max(n)));
        let Some(step) = steps.get(next) else {
            return String::new();
        };
        if now != Some(next) {
            let path = format!("characters.{npc}.tags");
            let mut ops = Vec::new();
            if let Some(was) = now.and_then(|n| steps.get(n)) {
                ops.push(StateOp::new(OpKind::RemoveTag, &path, json!(tag(was))));
            }
            ops.push(StateOp::new(OpKind::AddTag, &path, json!(tag(step))));
            self.apply_ops("escalation", &ops);
        }
        let further = if next + 1 < steps.len() {
            " and no further"
        } else {
            ""
        };
        format!(
            " {} goes as far as a {} move against you{further}: {}.",
            self.name_of(npc),
            step.id,
            step.means
        )
    }
}

/// The tag an NPC's escalation step is kept by (`escalation_hard`).
pub const ESCALATION: &str = "escalation_";

/// Verbs of only speaking, watching or waiting: an intention of these alone is not rolled.
const QUIET: [&str; 30] = [
    "say", "ask", "tell", "whisper", "watch", "look", "listen", "wait", "nod", "smile", "think",
    "remember", "stand", "sit", "speak", "reply", "answer", "shrug", "sigh", "frown", "laugh",
    "glance", "stare", "hum", "mutter", "murmur", "greet", "wonder", "consider", "call",
];

/// Words before an intention's verb: who acts, and how.
const SKIP: [&str; 14] = [
    "i",
    "he",
    "she",
    "they",
    "we",
    "will",
    "to",
    "quietly",
    "slowly",
    "then",
    "first",
    "carefully",
    "would",
    "want",
];

/// Whether an intention does something to the world, a person or the
/// player: its first verb is not one of [`QUIET`]. The first word that is
/// not a name, a pronoun or an adverb is taken for the verb.
pub fn acts(intention: &str) -> bool {
    // A line of speech ("\"We have work ahead of us\"") is said, not done.
    if intention.trim_start().starts_with(['"', '\u{201c}', '\'']) {
        return false;
    }
    let verb = intention
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty() && !w.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_lowercase)
        .find(|w| !SKIP.contains(&w.as_str()) && !w.ends_with("ly"));
    verb.is_some_and(|v| {
        !QUIET.iter().any(|q| {
            v == *q
                || v.strip_suffix('s')
                    .is_some_and(|s| s == *q || s.strip_suffix('e') == Some(q))
                || v.strip_suffix("ing").is_some_and(|s| s == *q)
        })
    })
}

/// Whether an intention is aimed at the player: it says "you", "the
/// player" or the player's name.
fn aimed_at_player(intention: &str, player: &str) -> bool {
    let lower = intention.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .any(|w| ["you", "your", "player", "stranger"].contains(w))
        || (!player.is_empty() && player != PERSONA && lower.contains(&player.to_lowercase()))
}

/// The stat whose cues share the most words (five letters or more) with
/// the intention, among `choices`; `None` on no overlap.
fn stat_for(intention: &str, cues: &[(String, Vec<String>)], choices: &[String]) -> Option<String> {
    let words: Vec<String> = intention
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4)
        .map(|w| w.to_lowercase().chars().take(5).collect())
        .collect();
    cues.iter()
        .filter(|(stat, _)| choices.contains(stat))
        .map(|(stat, cue)| {
            let hits = cue
                .iter()
                .flat_map(|c| c.split_whitespace())
                .filter(|w| w.len() >= 4)
                .map(|w| w.to_lowercase().chars().take(5).collect::<String>())
                .filter(|w| words.contains(w))
                .count();
            (hits, stat)
        })
        .filter(|(hits, _)| *hits > 0)
        .max_by_key(|(hits, _)| *hits)
        .map(|(_, stat)| stat.clone())
}

#[cfg(test)]
mod tests {
    use super::{acts, aimed_at_player};

    #[test]
    fn an_intention_that_only_speaks_is_not_rolled() {
        assert!(!acts("Hesper says nothing and watches the fog."));
        assert!(!acts("I ask the stranger where they are from."));
        assert!(acts(
            "Tamsin slips the tin of verdigris into the lantern oil."
        ));
        assert!(acts("Aldous takes the ledger from your hands."));
        assert!(!acts("She quietly waits by the rail."));
        assert!(!acts("\"We have a lot of work ahead of us,\" she says."));
    }

    #[test]
    fn an_intention_aimed_at_the_player_says_so() {
        assert!(aimed_at_player(
            "Aldous takes the ledger from your hands.",
            "the Surveyor"
        ));
        assert!(aimed_at_player(
            "Ned pushes past the Surveyor.",
            "the Surveyor"
        ));
        assert!(!aimed_at_player(
            "Ned locks the toll house door.",
            "the Surveyor"
        ));
    }
}
