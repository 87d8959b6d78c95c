//! The turn's answer handlers: a narration kept, choices offered, the extractors' books applied.

use super::contracts::{Extraction, LoreFacts, Narration};
use super::cuts;
use super::{
    ASKED_AGAIN, DraftChoice, ENGINE_OFFERS, PERSONA, Phase, Purpose, TurnError, TurnRunner,
    generic_choices,
};
use crate::campaign::slug;
use crate::rules::{OpKind, StateOp, standing};
use crate::session::phrasing::{brief, cut_echo};
use crate::session::{drafts, people};
use crate::transcript::observation::Observation;
use crate::transcript::stream::{Kind, NARRATOR};

impl TurnRunner {
    /// A narrator's answer for `actor`: the best draft, up to where it starts
    /// reciting its prompt (`system`, `user`), in whole sentences.
    pub(super) fn on_narrate(&mut self, actor: &str, answer: Narration, system: &str, user: &str) {
        let text = match answer {
            Narration::Drafts(drafts) => self.keep_draft(actor, &drafts, system, user),
            Narration::Text(text) => text,
        };
        let kept = cut_echo(&text, system, user);
        if kept.len() < text.trim().len() {
            self.ledger.refused.push(format!(
                "narrate: cut where the narration began repeating its prompt ({} of {} characters kept)",
                kept.len(),
                text.trim().len()
            ));
        }
        let kept = drafts::whole_sentences(kept);
        if kept.is_empty() {
            self.error = Some(TurnError {
                stage: "narrate".into(),
                reason: "the narrator only repeated its instructions".into(),
                retryable: true,
            });
            return;
        }
        if let Some(crossing) = self.guard.check(kept) {
            let label = crossing.label();
            if let Some((first, _)) = self.ledger.retold.remove(actor) {
                // Told again for its contradictions, and this telling crossed:
                // the first one, which did not, is kept.
                self.ledger
                    .limits
                    .push(format!("narrate {actor}: {label}: the first telling kept"));
                self.on_narration(actor, &first);
                return;
            }
            if self.ledger.regenerated.contains_key(actor) {
                // Twice: the engine's own words, never the model's.
                self.ledger.limits.push(format!(
                    "narrate {actor}: {label}: the fallback narrated it"
                ));
                let fallback = fallback_line(self.turn_id);
                self.on_narration(actor, &fallback);
            } else {
                self.ledger
                    .limits
                    .push(format!("narrate {actor}: {label}: asked again"));
                self.ledger
                    .regenerated
                    .insert(actor.to_owned(), crossing.instruction());
                self.narrate_again(actor);
            }
            return;
        }
        let Some(kept) = self.cut_where_it_strays(actor, kept) else {
            return;
        };
        if let Some(text) = self.recheck(actor, &kept) {
            self.on_narration(actor, &text);
        }
    }

    /// #42: a narration that brings in someone or something the story does
    /// not have, or tells again what the scene told before, ends before it
    /// (`cuts::cut`), and the overlay says so. A player's narration the
    /// cut would leave with the engine's opening alone is asked for once
    /// more instead, told what to leave out (`None`: asked again). Names
    /// misspelt by one letter are set right first (`cuts::mend_names`).
    fn cut_where_it_strays(&mut self, actor: &str, text: &str) -> Option<String> {
        let campaign = std::sync::Arc::clone(&self.state.campaign);
        let told = cuts::told_before(
            self.state
                .stream
                .messages
                .iter()
                .filter(|m| m.kind == Kind::Narration)
                .map(|m| m.content.as_str()),
        );
        let npc = (actor != PERSONA).then_some(actor);
        let ((mended, slips), cut) = self.with_reading(|r| {
            let (mended, slips) = cuts::mend_names(text, r, campaign.words());
            let cut = cuts::cut(&mended, npc, r, campaign.words(), &told, &self.skills.notes);
            ((mended, slips), cut)
        });
        let who = self.teller(actor);
        if !slips.is_empty() {
            let each: Vec<String> = slips.iter().map(|(a, b)| format!("{a} → {b}")).collect();
            self.ledger.continuity.push(format!(
                "narrate {who}: names set right: {}",
                each.join(", ")
            ));
        }
        let Some((kept, cut)) = cut else {
            return Some(mended);
        };
        let (why, avoid) = (cut.why(), cut.avoid(&who));
        let text = mended.as_str();
        let bare = crate::memory::chunk::sentences(&kept).len() <= 1;
        if actor == PERSONA && bare && !self.ledger.regenerated.contains_key(actor) {
            self.ledger
                .continuity
                .push(format!("narrate {who}: it {why}{ASKED_AGAIN}"));
            self.ledger.regenerated.insert(actor.to_owned(), avoid);
            self.narrate_again(actor);
            return None;
        }
        self.ledger.continuity.push(format!(
            "narrate {who}: cut where it {why} ({} of {} characters kept)",
            kept.len(),
            text.len()
        ));
        Some(kept)
    }

    /// `actor`'s narration is asked for again (it crossed a line or veil).
    pub(super) fn narrate_again(&mut self, actor: &str) {
        let request = if actor == PERSONA {
            self.narrate_request(
                PERSONA,
                self.persona_intention,
                &self.outcome_text.clone(),
                &self.blocked.clone(),
            )
        } else {
            let intention = self
                .state
                .stream
                .messages
                .iter()
                .rev()
                .find(|m| m.owner == actor && m.kind == Kind::Intention)
                .map_or(self.persona_intention, |m| m.id);
            let outcome = self
                .ledger
                .npc_outcome
                .get(actor)
                .cloned()
                .unwrap_or_default();
            self.narrate_request(actor, intention, &outcome, "")
        };
        self.queue(
            Purpose::Narrate {
                actor: actor.to_owned(),
            },
            request,
        );
    }

    /// The draft of `actor`'s narration that reads best (`session::drafts`),
    /// judged after the echo cut against the memory and lore its prompt was
    /// shown; the choice goes to the log and the debug overlay.
    fn keep_draft(&mut self, actor: &str, drafts: &[String], system: &str, user: &str) -> String {
        let recalled = &self.state.recalled;
        let memory = recalled
            .memories
            .first()
            .map_or_else(String::new, |m| brief(&m.summary, 1, 240));
        let lore = recalled
            .lore
            .first()
            .map_or_else(String::new, |h| brief(&h.text, 2, 240));
        let action = self
            .message(self.persona_intention)
            .map_or("", |m| m.content.as_str());
        let said_anyway = format!("{action} {}", self.state.place().1);
        let cues = drafts::Cues::new(&self.state.campaign, &memory, &lore, &said_anyway);
        let scene = self.scene_now();
        let verdicts: Vec<drafts::Verdict> = drafts
            .iter()
            .map(|t| {
                let kept = cut_echo(t, system, user);
                let cut = kept.len() < t.trim().len();
                let kept = drafts::whole_sentences(kept);
                drafts::judge(kept, cut, &cues)
                    .contradicting(self.misreading(&scene, actor, kept).count())
            })
            .collect();
        let kept = drafts::pick(&verdicts);
        self.ledger.drafts.push(DraftChoice {
            actor: actor.to_owned(),
            kept,
            note: drafts::explain(kept, &verdicts),
            verdicts,
        });
        drafts.get(kept).cloned().unwrap_or_default()
    }

    /// A narration enters the stream; its lorebook keeper is asked for, and
    /// the next one acts (the NPCs after the persona's).
    fn on_narration(&mut self, actor: &str, text: &str) {
        let text = text.trim().to_owned();
        self.state
            .stream
            .push(self.turn_id, NARRATOR, Kind::Narration, text.clone(), None);
        if actor == PERSONA {
            self.tell_the_rest(&text);
        }
        let request = self.lore_request(&text);
        self.queue(Purpose::Lore, request);
        match &mut self.phase {
            Phase::PersonaNarration if actor == PERSONA => self.activate_npcs(),
            Phase::Npc { narrated, .. } => *narrated = true,
            _ => {}
        }
    }

    /// The choices offered, less those that do not read as options, those the
    /// move check would block or that invent, and those an NPC's regard rules
    /// out; completed with the engine's own (`offers`); the generic ones when
    /// neither the model nor the engine has anything.
    pub(super) fn on_choices(&mut self, offered: Vec<String>) {
        let (offered, garbled): (Vec<String>, Vec<String>) = offered
            .into_iter()
            .partition(|c| crate::llm::contract::looks_like_prose(c));
        for g in garbled {
            self.ledger
                .refused
                .push(format!("choices: dropped {g:?}: not a readable option"));
        }
        let offered = self.within_limits("choices", offered);
        let refused = self.refused_choices(&offered);
        let mut open = Vec::with_capacity(offered.len());
        for (choice, why) in offered.into_iter().zip(refused) {
            match why {
                Some(why) => self
                    .ledger
                    .refused
                    .push(format!("choices: dropped {choice:?}: {why}")),
                None => open.push(choice),
            }
        }
        let names = people::names(&self.state.campaign);
        let (kept, withheld) = standing::filter_choices(open, &self.state.world, &names);
        for w in withheld {
            let line = format!(
                "choices: withheld \"{}\": it {} ({} is at {:+.0})",
                w.choice,
                w.reason,
                self.name_of(&w.npc),
                w.perception
            );
            self.ledger.refused.push(line);
        }
        if kept.is_empty() {
            self.ledger
                .refused
                .push("choices: nothing offered could be picked".to_owned());
        }
        // #42: what the engine knows is possible completes the set.
        let (choices, added) = self.completed_choices(kept);
        for (choice, why) in added {
            self.ledger
                .refused
                .push(format!("{ENGINE_OFFERS} {choice:?}: {why}"));
            self.ledger.offered.push(choice);
        }
        if choices.len() < 2 {
            // Nobody here, nowhere to go and nothing from the model.
            self.offer_generic_choices();
        } else {
            self.ledger.choices = choices;
            self.offer_instead();
        }
    }

    /// `offered` less the choices over the player's lines or veils, each one
    /// dropped logged for the overlay by category (`stage`: whose choices).
    pub(super) fn within_limits(&mut self, stage: &str, offered: Vec<String>) -> Vec<String> {
        let mut kept = Vec::with_capacity(offered.len());
        for choice in offered {
            match self.guard.check(&choice) {
                Some(x) => self
                    .ledger
                    .limits
                    .push(format!("{stage}: {}: a choice was dropped", x.label())),
                None => kept.push(choice),
            }
        }
        kept
    }

    /// #41: a blocked move's choices lead with what can be done instead.
    pub(super) fn offer_instead(&mut self) {
        if self.ledger.instead.is_empty() {
            return;
        }
        let count = self.ledger.choices.len().max(3);
        let instead = std::mem::take(&mut self.ledger.instead);
        let mut choices = instead.clone();
        for c in std::mem::take(&mut self.ledger.choices) {
            if !choices.iter().any(|i| i.eq_ignore_ascii_case(&c)) {
                choices.push(c);
            }
        }
        // Over the count, the model's last choices give way, not what can
        // be done instead nor the engine's own (#42).
        while choices.len() > count {
            let model = choices
                .iter()
                .rposition(|c| !instead.contains(c) && !self.ledger.offered.contains(c));
            match model {
                Some(at) => {
                    choices.remove(at);
                }
                None => choices.truncate(count),
            }
        }
        self.ledger.choices = choices;
    }

    pub(super) fn offer_generic_choices(&mut self) {
        self.ledger.choices = generic_choices();
        self.ledger.generic_choices = true;
        self.offer_instead();
    }

    /// An extractor's state ops (through the rules) and what others noticed.
    pub(super) fn on_extract(&mut self, owner: &str, answer: Extraction) {
        let ops = self.vet_introductions(owner, answer.state_ops);
        self.apply_ops(&format!("extract {owner}"), &ops);
        self.arrive_introduced();
        for o in answer.observations {
            self.ledger.observations.push(Observation {
                character_id: o.character_id,
                content: o.content,
                importance: o.importance.clamp(1, 5),
                reinforcement_count: 0,
                created_minute: self.state.play_minutes,
            });
        }
    }

    /// The lorebook keeper's facts, each added or updated on its own.
    pub(super) fn on_lore(&mut self, answer: LoreFacts) {
        for f in answer.facts {
            let (subject, predicate) = (slug(&f.subject), slug(&f.predicate));
            if subject.is_empty() || predicate.is_empty() {
                continue;
            }
            // Decided per fact, after the ones before it: a repeated fact updates.
            let exists = self
                .state
                .world
                .facts
                .iter()
                .any(|x| x.subject == subject && x.predicate == predicate);
            let op = if exists {
                OpKind::UpdateFact
            } else {
                OpKind::AddFact
            };
            let op = StateOp::new(op, &format!("facts.{subject}.{predicate}"), f.object);
            // Each fact on its own: one bad fact does not cost the others.
            self.apply_ops("lore", std::slice::from_ref(&op));
        }
    }
}

/// One of `prompts/fallback_limits.txt`'s lines, by turn.
fn fallback_line(turn_id: u64) -> String {
    const LINES: &str = include_str!("../../../prompts/fallback_limits.txt");
    let lines: Vec<&str> = LINES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let at = usize::try_from(turn_id).unwrap_or(0) % lines.len().max(1);
    lines.get(at).map_or_else(String::new, |l| (*l).to_owned())
}
