//! The turn's calls: each stage's request, its variables built from the session as it stands.
//!
//! Every request's variables are one typed value of `vars`; the engine's own
//! contract checks and narrowings ride along on the request.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::contracts::{check_observers, check_resolution};
use super::vars::{
    BeatLine, BeatSpeech, CheckLine, ChoicesVars, Choosing, ClockLine, ExtractVars, FactLine,
    HistoryLine, IntentVars, LoreLine, LoreVars, MemoryLine, ModifierLine, NarrateVars,
    NarrateWorld, Narrating, Personality, Profile, Regard, Remembered, Reputation, ResolveVars,
    Speech, Who, to_value,
};
use super::{PERSONA, TurnRunner};
use crate::llm::CallRequest;
use crate::rules::offer;
use crate::session::beats;
use crate::transcript::observation::{DEFAULT_LAMBDA, recall};
use crate::transcript::stream::{Kind, Message, MessageId, Stage, StateEntry, states_for, view};

/// The most known facts the referee is shown (#21 prompt diet).
const RESOLVE_FACTS: usize = 6;

/// The known facts the lorebook keeper is shown beside a narration: those it
/// may repeat or change (#21 prompt diet; it was the newest 30).
const LORE_KNOWN: usize = 8;

/// The narrations an extractor reads before the intention (#21 prompt diet).
const EXTRACT_HISTORY: usize = 3;

/// The fewest messages an NPC deciding what to do is shown, newest (#21
/// prompt diet; older turns reach it as its memories).
const NPC_HISTORY: usize = 4;
/// The window over an NPC's history moves in steps of this many messages,
/// not one message at a time, so between steps its prompt only grows and the
/// model's cached prefix of the last one carries over (it shows 4 to 11).
const NPC_HISTORY_STEP: usize = 8;

/// The newest narrations the choice stage reads.
const CHOICES_HISTORY: usize = 4;

impl TurnRunner {
    /// A message of the stream, by id.
    pub(super) fn message(&self, id: MessageId) -> Option<&Message> {
        self.state.stream.messages.iter().find(|m| m.id == id)
    }

    pub(super) fn name_of(&self, id: &str) -> String {
        self.state.campaign.characters.get(id).map_or_else(
            || {
                self.state
                    .world
                    .introduced
                    .get(id)
                    .map_or_else(|| id.to_owned(), |i| i.name.clone())
            },
            |c| c.name.clone(),
        )
    }

    /// Those present (the scene's list, or everyone when it lists none).
    pub(super) fn present(&self) -> Vec<String> {
        let listed = self.state.world.present();
        if listed.is_empty() {
            self.state.campaign.characters.keys().cloned().collect()
        } else {
            listed
        }
    }

    /// What `stage` sees of the stream, after the summarised turns.
    fn history(&self, stage: &Stage) -> Vec<HistoryLine> {
        let through = self.state.summarised_through;
        view(&self.state.stream.messages, stage)
            .into_iter()
            .filter(|m| m.id.turn_id > through)
            .map(HistoryLine::of)
            .collect()
    }

    /// The plot beat this scene steers toward (seed 002 §7.5), if one triggered for it.
    fn beat(&self) -> Option<BeatLine> {
        let scene = beats::scene_number(&self.state.stream);
        beats::current(&self.state.campaign.beats, &self.state.world, scene)
            .first()
            .map(|b| BeatLine {
                id: b.id.clone(),
                title: b.title.clone(),
                description: b.description.clone(),
                mood: b.mood.clone(),
                dialogue: b
                    .dialogue
                    .iter()
                    .map(|d| BeatSpeech {
                        speaker: self.name_of(&d.speaker),
                        line: d.line.clone(),
                    })
                    .collect(),
            })
    }

    /// Retrieved lore for the narrator and choices.
    fn lore(&self) -> Vec<LoreLine> {
        self.state
            .recalled
            .lore
            .iter()
            .map(|h| LoreLine::new(&h.section_path, &h.text))
            .collect()
    }

    /// Recalled memories for the narrator and choices.
    fn memories(&self) -> Vec<MemoryLine> {
        self.state
            .recalled
            .memories
            .iter()
            .map(|m| MemoryLine::new(m.turn, &m.summary, m.episodic))
            .collect()
    }

    /// How the NPCs `ids` regard the persona (those with a perception).
    fn regard(&self, ids: &[String]) -> Vec<Regard> {
        ids.iter()
            .filter_map(|id| {
                let score = *self.state.world.perception.get(id)?;
                Some(Regard::new(id, &self.name_of(id), score))
            })
            .collect()
    }

    /// The persona's standing with every faction.
    fn reputation(&self) -> Vec<Reputation> {
        let campaign = &self.state.campaign;
        self.state
            .world
            .reputation
            .iter()
            .map(|(id, score)| {
                let name = campaign
                    .factions
                    .get(id)
                    .map_or_else(|| id.clone(), |f| f.name.clone());
                Reputation::new(id, &name, *score)
            })
            .collect()
    }

    pub(super) fn stats_of(&self, id: &str) -> Map<String, Value> {
        self.state
            .world
            .characters
            .get(id)
            .map(|c| c.stats.clone())
            .unwrap_or_default()
    }

    fn states_of(&self, id: &str, stage: &Stage) -> Vec<StateEntry> {
        self.state
            .states
            .get(id)
            .map(|s| states_for(stage, s).into_iter().cloned().collect())
            .unwrap_or_default()
    }

    fn who(&self, id: &str) -> Who {
        Who {
            id: id.to_owned(),
            name: self.name_of(id),
        }
    }

    /// The known facts that may bear on `text` (#21 prompt diet): those
    /// naming someone present or a word of it, newest first, at most `max`,
    /// as the prompts take them.
    pub(super) fn relevant_facts(&self, text: &str, max: usize) -> Vec<FactLine> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(|w| {
                if w.chars().count() > 4 {
                    w.trim_end_matches('s')
                } else {
                    w
                }
            })
            .collect();
        let names: Vec<String> = self
            .present()
            .iter()
            .filter(|id| id.as_str() != PERSONA)
            .flat_map(|id| {
                let name = self.name_of(id).to_lowercase();
                let mut keys: Vec<String> = name
                    .split_whitespace()
                    .filter(|w| w.chars().count() >= 4)
                    .map(str::to_owned)
                    .collect();
                keys.push(id.clone());
                keys
            })
            .collect();
        let mut facts = self
            .state
            .world
            .facts
            .iter()
            .rev()
            .filter(|f| {
                let said = format!("{} {} {}", f.subject, f.predicate, f.object).to_lowercase();
                names.iter().any(|n| said.contains(n.as_str()))
                    || words.iter().any(|w| said.contains(w))
            })
            .take(max)
            .map(|f| FactLine {
                subject: f.subject.clone(),
                predicate: f.predicate.clone(),
                object: f.object.clone(),
            })
            .collect::<Vec<_>>();
        // Oldest first: a prompt that lists them starts alike from call to
        // call (the model's cached prefix) until the chosen facts change.
        facts.reverse();
        facts
    }

    pub(super) fn resolve_request(&self) -> CallRequest {
        let ruleset = &self.state.campaign.ruleset;
        let checks = &ruleset.mechanics_guidance.checks;
        let vars = ResolveVars {
            place: self.state.place().1,
            calibration: self.state.calibration.clone(),
            rulebook_text: ruleset.rulebook_text.clone(),
            checks: checks
                .iter()
                .map(|c| CheckLine {
                    id: c.id.clone(),
                    when: c.when.clone(),
                    binds_stat: c.bind.is_some(),
                    stats: if c.bind_to.is_empty() {
                        ruleset.stat_names()
                    } else {
                        c.bind_to.clone()
                    },
                    modifiers: c
                        .modifiers
                        .iter()
                        .map(|m| ModifierLine {
                            name: m.name.clone(),
                            min: m.min,
                            max: m.max,
                            meaning: m.description.clone(),
                        })
                        .collect(),
                })
                .collect(),
            scene: self.state.world.scene.clone(),
            actor: self.who(PERSONA),
            intention: self.input.text.clone(),
            stats: self.stats_of(PERSONA),
            present: self.present().iter().map(|id| self.who(id)).collect(),
            inventory: self
                .state
                .world
                .inventory
                .get(PERSONA)
                .cloned()
                .unwrap_or_default(),
            facts: self.relevant_facts(&self.input.text, RESOLVE_FACTS),
        };
        let campaign = self.state.campaign.clone();
        let mut check_ids: Vec<Value> = vec![json!("")];
        check_ids.extend(checks.iter().map(|c| json!(c.id)));
        let mut stats: Vec<Value> = vec![json!("")];
        stats.extend(ruleset.stat_names().into_iter().map(Value::from));
        let mut modifier_names: Vec<Value> = checks
            .iter()
            .flat_map(|c| c.modifiers.iter().map(|m| json!(m.name)))
            .collect();
        modifier_names.dedup();
        let mut request = CallRequest::new("resolve", &self.state.small_model, to_value(&vars))
            .seed(self.call_seed())
            .allow("/check", check_ids)
            .allow("/stat", stats);
        if !modifier_names.is_empty() {
            request = request.allow("/modifiers/items/name", modifier_names);
        }
        request.check = Some(Arc::new(move |v: &Value| check_resolution(&campaign, v)));
        request
    }

    pub(super) fn extract_request(&self, owner: &str, intention: MessageId) -> CallRequest {
        let stage = if owner == PERSONA {
            Stage::PersonaExtractor {
                persona: owner.into(),
                intention,
            }
        } else {
            Stage::CharacterExtractor {
                npc: owner.into(),
                intention,
            }
        };
        let seen = view(&self.state.stream.messages, &stage);
        let mut history: Vec<String> = seen
            .iter()
            .filter(|m| m.kind == Kind::Narration)
            .map(|m| m.content.clone())
            .collect();
        // #21 prompt diet: the books need only what just happened.
        history.drain(..history.len().saturating_sub(EXTRACT_HISTORY));
        let thoughts: Vec<String> = seen
            .iter()
            .filter(|m| m.kind == Kind::Thought && m.id.turn_id == self.turn_id)
            .map(|m| m.content.clone())
            .collect();
        let intention_text = seen
            .iter()
            .find(|m| m.kind == Kind::Intention)
            .map_or_else(String::new, |m| m.content.clone());
        // #20: the ops the rules would take right now, as the grammar of one op;
        // the prompt names the same paths.
        let present = self.present();
        // The player may go elsewhere: the scene moves to another known place
        // (a `location_change` marker opens the next turn).
        let places: Vec<String> = if owner == PERSONA {
            let here = self.state.place().0;
            self.state
                .campaign
                .locations
                .keys()
                .filter(|id| **id != here)
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        let offer = offer::extractor_ops(
            &self.state.world,
            &self.state.campaign.ruleset,
            owner,
            &present,
            &places,
        );
        let observers: Vec<Value> = present
            .iter()
            .filter(|id| *id != owner)
            .cloned()
            .map(Value::from)
            .collect();
        let vars = ExtractVars {
            calibration: self.state.calibration.clone(),
            owner: self.who(owner),
            intention: intention_text,
            thoughts,
            history,
            states: self.states_of(owner, &stage),
            stats: self.stats_of(owner),
            paths: offer.as_ref().map_or_else(String::new, offer::describe),
            present,
        };
        let known: Vec<String> = self.state.campaign.characters.keys().cloned().collect();
        let mut request = CallRequest::new("extract", &self.state.small_model, to_value(&vars))
            .seed(self.call_seed());
        if !observers.is_empty() {
            request = request.allow("/observations/items/character_id", observers);
        }
        request = match offer {
            Some(op) => request.narrow("/state_ops/items", op),
            None => request.narrow("/state_ops", json!({"type": "array", "maxItems": 0})),
        };
        request.cache_slot = Some(format!("extract:{owner}"));
        request.check = Some(Arc::new(move |v: &Value| check_observers(&known, v)));
        request
    }

    pub(super) fn narrate_request(
        &self,
        actor: &str,
        intention: MessageId,
        outcome: &str,
        blocked: &str,
    ) -> CallRequest {
        let stage = Stage::Narrator {
            resolving: intention,
        };
        let message = self.message(intention);
        let present = self.present();
        let clocks = self
            .state
            .world
            .clocks
            .values()
            .map(|c| ClockLine {
                name: c.name.clone(),
                value: c.value,
                max: c.max,
            })
            .collect();
        let vars = NarrateVars::from(Narrating {
            calibration: self.state.calibration.clone(),
            tone: self.state.tone.clone(),
            world: NarrateWorld {
                location: self.state.world.scene.get("location").cloned(),
                location_name: self.state.place().1,
                time: self.state.world.scene.get("time").cloned(),
                present: present.iter().map(|id| self.name_of(id)).collect(),
                others: present
                    .iter()
                    .filter(|id| *id != PERSONA && *id != actor)
                    .map(|id| self.name_of(id))
                    .collect(),
                clocks,
            },
            history: self
                .history(&stage)
                .into_iter()
                .filter(|m| m.kind != Kind::Intention.name())
                .collect(),
            actor: self.who(actor),
            player: actor == PERSONA,
            intention: message.map_or_else(String::new, |m| m.content.clone()),
            whisper_to: message
                .and_then(|m| m.target.as_deref())
                .map(|t| self.name_of(t))
                .unwrap_or_default(),
            outcome: outcome.to_owned(),
            blocked: blocked.to_owned(),
            lore: self.lore(),
            memories: self.memories(),
            regard: self.regard(&present),
            beat: self.beat(),
            earlier: self.state.earlier.clone(),
            scene_lore: self.state.recalled.scene.clone(),
            skills: self.skills.notes.clone(),
            world_does: self.untold().iter().map(|c| c.text.clone()).collect(),
            stakes: self.stakes(),
            avoid: self
                .ledger
                .regenerated
                .get(actor)
                .cloned()
                .unwrap_or_default(),
        });
        let mut request = CallRequest::new("narrate", &self.state.large_model, to_value(&vars))
            .seed(self.call_seed());
        request.cache_slot = Some("narrate".into());
        // The player's own narration is the one that must land: a model that
        // writes drafts writes it in drafts (`session::drafts` keeps the best).
        if actor == PERSONA {
            request = request.drafted().starting_with(self.outcome_opening());
        }
        request
    }

    /// The lorebook keeper reads a narration just written.
    pub(super) fn lore_request(&self, narration: &str) -> CallRequest {
        let vars = LoreVars {
            narration: narration.to_owned(),
            known: self.relevant_facts(narration, LORE_KNOWN),
            calibration: self.state.calibration.clone(),
        };
        CallRequest::new("lore_extract", &self.state.small_model, to_value(&vars))
            .seed(self.call_seed())
    }

    pub(super) fn choices_request(&self) -> CallRequest {
        let mut recent: Vec<String> = self
            .state
            .stream
            .messages
            .iter()
            .rev()
            .filter(|m| m.kind == Kind::Narration)
            .take(CHOICES_HISTORY)
            .map(|m| m.content.clone())
            .collect();
        recent.reverse();
        let present = self.present();
        let vars = ChoicesVars::from(Choosing {
            calibration: self.state.calibration.clone(),
            persona: self.name_of(PERSONA),
            history: recent,
            scene: self.state.world.scene.clone(),
            // Everyone here, the player too, as the corpus the model was tuned on lists them.
            present: present.iter().map(|id| self.name_of(id)).collect(),
            lore: self.lore(),
            memories: self.memories(),
            regard: self.regard(&present),
            reputation: self.reputation(),
            beat: self.beat(),
        });
        CallRequest::new("choices", &self.state.small_model, to_value(&vars)).seed(self.call_seed())
    }

    /// The call in which `npc` decides what to do.
    pub(super) fn intent_request(&self, npc: &str) -> CallRequest {
        let stage = Stage::NpcIntent {
            npc: npc.to_owned(),
        };
        let memories: Vec<Remembered> = self
            .state
            .observations
            .get(npc)
            .map(|o| {
                recall(o, self.state.play_minutes, DEFAULT_LAMBDA, 8)
                    .into_iter()
                    .map(|(p, o)| Remembered::new(&o.content, p))
                    .collect()
            })
            .unwrap_or_default();
        let mut history = self.history(&stage);
        history.drain(..window_start(history.len(), NPC_HISTORY, NPC_HISTORY_STEP));
        let vars = IntentVars {
            calibration: self.state.calibration.clone(),
            name: self.name_of(npc),
            profile: self.profile(npc),
            states: self.states_of(npc, &stage),
            history,
            memories,
            scene: self.state.world.scene.clone(),
            regard: self.regard(&[npc.to_owned()]).pop(),
            persona: self.name_of(PERSONA),
        };
        let mut request = CallRequest::new("npc_intent", &self.state.small_model, to_value(&vars))
            .seed(self.call_seed());
        request.cache_slot = Some(format!("npc_intent:{npc}"));
        request
    }

    /// Who `npc` is, from its campaign profile (empty when it has none).
    fn profile(&self, npc: &str) -> Profile {
        let Some(p) = self
            .state
            .campaign
            .characters
            .get(npc)
            .and_then(|c| c.profile.as_ref())
        else {
            return Profile::default();
        };
        Profile {
            role: p.role.clone(),
            personality: Some(Personality {
                traits: p.personality.traits.clone(),
                flaws: p.personality.flaws.clone(),
                virtues: p.personality.virtues.clone(),
            }),
            motivations: p.motivations.clone(),
            speech: p.speech_patterns.as_ref().map(|s| Speech {
                style: s.style.clone(),
                examples: s.examples.clone(),
            }),
        }
    }
}

/// Where a window of at least `keep` of the newest `len` messages starts when
/// it moves `step` messages at a time: a prompt built over it starts alike from
/// one call to the next until the window moves.
fn window_start(len: usize, keep: usize, step: usize) -> usize {
    len.saturating_sub(keep) / step.max(1) * step.max(1)
}

#[cfg(test)]
mod tests {
    use super::window_start;

    #[test]
    fn an_npc_history_window_moves_in_steps_and_keeps_its_start_between_them() {
        // Nothing cut until there is more than `keep`.
        assert_eq!(window_start(3, 4, 8), 0);
        assert_eq!(window_start(11, 4, 8), 0);
        // Then it jumps a whole step, keeping at least `keep`, at most `keep + step - 1`.
        assert_eq!(window_start(12, 4, 8), 8);
        assert_eq!(window_start(19, 4, 8), 8);
        assert_eq!(window_start(20, 4, 8), 16);
        for len in 0..60 {
            let shown = len - window_start(len, 4, 8);
            assert!(shown == len || (4..=11).contains(&shown), "{len}: {shown}");
        }
        // A step of one is the plain sliding window.
        assert_eq!(window_start(12, 4, 1), 8);
    }
}
