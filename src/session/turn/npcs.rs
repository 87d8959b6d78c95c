//! NPC activation (seed 004 step 4): who acts this turn, in what order, and each one's intention.

use super::contracts::NpcIntent;
use super::types::ActivationRoll;
use super::{Phase, Purpose, TurnRunner};
use crate::campaign::CharacterKind;
use crate::rules::Modifiers;
use crate::transcript::stream::Kind;

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

    /// NPC `index` of the order forms its intention; past the last, the choices.
    pub(super) fn next_npc(&mut self, index: usize) {
        let Some(npc) = self.ledger.acted.get(index).cloned() else {
            self.ask_choices();
            return;
        };
        self.phase = Phase::Npc {
            index,
            narrated: false,
        };
        let request = self.intent_request(&npc);
        self.queue(Purpose::NpcIntent { npc }, request);
    }

    /// An NPC's intention enters the stream (its thought too, if it had
    /// one); its narration and extractor are asked for.
    pub(super) fn on_npc_intent(&mut self, npc: &str, intent: &NpcIntent) {
        let thought = intent.thought.trim();
        if !thought.is_empty() {
            self.state
                .stream
                .push(self.turn_id, npc, Kind::Thought, thought, None);
        }
        let intention = intent.intention.trim().to_owned();
        let id = self
            .state
            .stream
            .push(self.turn_id, npc, Kind::Intention, intention, None);
        let narrate = self.narrate_request(npc, id, "", "");
        self.queue(Purpose::Narrate { actor: npc.into() }, narrate);
        let extract = self.extract_request(npc, id);
        self.queue(Purpose::Extract { owner: npc.into() }, extract);
    }
}
