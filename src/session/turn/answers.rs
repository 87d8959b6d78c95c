//! The turn's answer handlers: a narration kept, choices offered, the extractors' books applied.

use super::contracts::{Extraction, LoreFacts, Narration};
use super::{DraftChoice, PERSONA, Phase, Purpose, TurnError, TurnRunner, generic_choices};
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
        self.on_narration(actor, kept);
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
        let verdicts: Vec<drafts::Verdict> = drafts
            .iter()
            .map(|t| {
                let kept = cut_echo(t, system, user);
                let cut = kept.len() < t.trim().len();
                drafts::judge(drafts::whole_sentences(kept), cut, &cues)
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
        let request = self.lore_request(&text);
        self.queue(Purpose::Lore, request);
        match &mut self.phase {
            Phase::PersonaNarration if actor == PERSONA => self.activate_npcs(),
            Phase::Npc { narrated, .. } => *narrated = true,
            _ => {}
        }
    }

    /// The choices offered, less those that do not read as options and those
    /// an NPC's regard rules out; the generic ones when nothing is left.
    pub(super) fn on_choices(&mut self, offered: Vec<String>) {
        let (offered, garbled): (Vec<String>, Vec<String>) = offered
            .into_iter()
            .partition(|c| crate::llm::contract::looks_like_prose(c));
        for g in garbled {
            self.ledger
                .refused
                .push(format!("choices: dropped {g:?}: not a readable option"));
        }
        let names = people::names(&self.state.campaign);
        let (kept, withheld) = standing::filter_choices(offered, &self.state.world, &names);
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
            self.offer_generic_choices();
        } else {
            self.ledger.choices = kept;
        }
    }

    pub(super) fn offer_generic_choices(&mut self) {
        self.ledger.choices = generic_choices();
        self.ledger.generic_choices = true;
    }

    /// An extractor's state ops (through the rules) and what others noticed.
    pub(super) fn on_extract(&mut self, owner: &str, answer: Extraction) {
        self.apply_ops(&format!("extract {owner}"), &answer.state_ops);
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
