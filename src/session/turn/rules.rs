//! The rules applied to a turn: the ruling, the persona's roll, state ops, standing, moves.
//!
//! The engine decides here: it rolls the ruleset's check (the referee only
//! names it), applies band effects and model-proposed ops through
//! [`crate::rules::WorldState::apply`] (a refused batch is dropped and logged, never
//! half-applied), moves the scene where a move goes, and follows perception
//! and reputation from relation changes.

use std::sync::Arc;

use serde_json::{Value, json};

use super::check::is_any as inflects;
use super::contracts::Resolution;
use super::{PERSONA, Phase, RollRecord, TurnRunner};
use crate::rules::state::WHEREABOUTS;
use crate::rules::{Change, CheckOutcome, Modifiers, StateOp, standing};
use crate::session::people;

impl TurnRunner {
    pub(super) fn on_resolve(&mut self, r: &Resolution) {
        let question = r.clarification_question.trim();
        // A referee that already chose a check, or ruled the move out, has
        // resolved it: its question cannot change the outcome (seed 001: ask
        // only when the answer would), so it is not put to the player.
        let undecided = r.possible && r.check().is_none();
        if !question.is_empty() && undecided && !self.input.clarified {
            // Seed 001: at most one question, and only when it changes the outcome.
            self.ledger.clarification = Some(question.to_owned());
            self.phase = Phase::Done;
            // Nothing of this turn is kept: its held-back extractors never run,
            // and those already sent are not waited for.
            self.calls.background.clear();
            self.calls.in_flight.retain(|_, p| !p.is_bookkeeping());
            return;
        }
        if !r.possible {
            self.block(super::check::Blocked::Referee {
                reason: r.blocked_reason.clone(),
            });
            return;
        }
        let Some(check_id) = r.check() else {
            return;
        };
        let proposed: Vec<(String, i64)> = r
            .modifiers
            .iter()
            .map(|m| (m.name.clone(), m.value))
            .collect();
        self.roll(check_id, r.stat(), &proposed);
    }

    /// Roll the persona's `check_id` with `stat`, the referee's `proposed`
    /// modifiers within their ranges, and the ones the engine grants.
    pub(super) fn roll(&mut self, check_id: &str, stat: Option<&str>, proposed: &[(String, i64)]) {
        let ruleset = &self.state.campaign.ruleset;
        let Ok(check) = ruleset.check(Some(check_id)) else {
            self.ledger
                .refused
                .push(format!("resolve: the ruleset has no check `{check_id}`"));
            return;
        };
        let mut modifiers = Modifiers::new();
        for (name, value) in proposed {
            let (name, value) = (name.as_str(), *value);
            match check.modifiers.iter().find(|s| s.name == name) {
                Some(spec) => {
                    modifiers.insert(name.to_owned(), value.clamp(spec.min, spec.max));
                }
                None => self.ledger.refused.push(format!(
                    "resolve: check `{check_id}` takes no modifier `{name}`; ignored"
                )),
            }
        }
        // Seed 002 §4.2.3: the perception of the NPC the move is aimed at sets
        // the sentiment modifier (its tier, within the ruleset's range).
        if let Some(spec) = check.modifiers.iter().find(|s| s.name == "sentiment")
            && let Some(score) = self.target_perception()
        {
            let tier = standing::modifier(score);
            modifiers.insert("sentiment".to_owned(), tier.clamp(spec.min, spec.max));
        }
        // Seed 002 §7.6: the engine, not the model, grants the episodic-memory +1.
        if let Some(spec) = check.modifiers.iter().find(|s| s.name == "memory") {
            let bonus = i64::from(self.state.recalled.episodic_bonus);
            modifiers.insert("memory".to_owned(), bonus.clamp(spec.min, spec.max));
        }
        let stats = self
            .state
            .world
            .characters
            .get(PERSONA)
            .map(|c| c.stats.clone())
            .unwrap_or_default();
        // #41: session zero's difficulty is in the dice, not only the prompt.
        let shift = ruleset.difficulty_shift(&self.state.calibration.difficulty);
        let cost = check.cost.clone();
        match ruleset.roll_shifted(check, &stats, stat, &modifiers, shift, &mut self.dice) {
            Ok(outcome) => {
                // Seed 001: an attempt costs what it costs, success or not.
                self.apply_ops("cost", &cost);
                self.apply_check(&outcome);
            }
            Err(e) => self.ledger.refused.push(format!("resolve: {e}")),
        }
    }

    fn apply_check(&mut self, outcome: &CheckOutcome) {
        let meaning = self
            .state
            .campaign
            .ruleset
            .check(Some(&outcome.check))
            .ok()
            .and_then(|c| c.bands.iter().find(|b| b.id == outcome.band))
            .map(|b| b.meaning.clone())
            .unwrap_or_default();
        self.outcome_text = format!(
            "{} ({} on {}). {meaning}",
            outcome.label, outcome.roll.total, outcome.roll.expression
        );
        self.ledger
            .rolls
            .push(RollRecord::of(PERSONA, outcome, None));
        // Band effects are the rules' own: they apply (a refusal here is a ruleset bug, logged).
        self.apply_ops("ruleset", &outcome.effects);
    }

    pub(super) fn apply_ops(&mut self, source: &str, ops: &[StateOp]) {
        self.apply_ops_at(source, ops, 0);
    }

    /// [`Self::apply_ops`] for a batch set off `depth` consequences deep
    /// (`world::consequences` stops the chain).
    pub(super) fn apply_ops_at(&mut self, source: &str, ops: &[StateOp], depth: u8) {
        if ops.is_empty() {
            return;
        }
        // The engine's own ops (the rules' band effects, a move elsewhere)
        // are not the model's proposals.
        let proposed = !matches!(source, "ruleset" | "move" | "time" | "cost" | "consequence");
        if proposed {
            self.ledger.ops_proposed += ops.len();
        }
        let ruleset = &self.state.campaign.ruleset;
        match self.state.world.apply(ops, ruleset) {
            Ok(changes) => {
                self.follow_standing(source, &changes);
                self.ledger.changes.extend(changes.iter().cloned());
                self.consequences(&changes, depth);
            }
            Err(e) => {
                if proposed {
                    self.ledger.ops_refused += ops.len();
                }
                self.ledger.refused.push(format!("{source}: {e}"));
            }
        }
    }

    /// A move that goes to another of the campaign's places ("I row out onto
    /// the Drowned Reach") takes the scene there before it is narrated,
    /// unless it was ruled out or its roll failed: the engine reads where, so
    /// a tiny model's extractor need not (it rarely did).
    pub(super) fn go_where_moved(&mut self) {
        let failed = self
            .ledger
            .rolls
            .iter()
            .any(|r| r.actor == PERSONA && r.against.is_none() && r.band.contains("fail"));
        if !self.blocked.is_empty() || failed {
            return;
        }
        let here = self.state.place().0;
        let places = self.state.places();
        let Some(place) = destination(&self.input.text, &here, &places) else {
            return;
        };
        // Who comes along: those the move names; the others stay where they
        // were (`scene.whereabouts`), and those left at the new place before
        // are there again.
        let present = self.present();
        let company = companions(
            &self.input.text,
            &people::names(&self.state.campaign),
            &present,
        );
        let mut whereabouts = self
            .state
            .world
            .scene
            .get(WHEREABOUTS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for id in present.iter().filter(|id| *id != PERSONA) {
            if !company.contains(id) {
                whereabouts.insert(id.clone(), json!(here));
            }
        }
        let mut arrived: Vec<String> = vec![PERSONA.to_owned()];
        arrived.extend(company.iter().cloned());
        let waiting: Vec<String> = whereabouts
            .iter()
            .filter(|(id, at)| at.as_str() == Some(place.as_str()) && !arrived.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        for id in waiting {
            whereabouts.remove(&id);
            arrived.push(id);
        }
        for id in &company {
            whereabouts.remove(id);
        }
        let ops: Vec<StateOp> = [
            json!({"op": "set", "path": "scene.location", "value": place}),
            json!({"op": "set", "path": "scene.present", "value": arrived}),
            json!({"op": "set", "path": format!("scene.{WHEREABOUTS}"), "value": whereabouts}),
        ]
        .iter()
        .filter_map(|v| StateOp::from_value(v).ok())
        .collect();
        self.apply_ops("move", &ops);
        self.ledger.moved = self.state.place().0 == place;
    }

    /// Seed 002 §4.2.3: trust and tension with the persona move the NPC's
    /// perception; a share of that reaches the NPC's factions (§4.1.4).
    fn follow_standing(&mut self, source: &str, changes: &[Change]) {
        let campaign = Arc::clone(&self.state.campaign);
        let config = &campaign.standing;
        // Perception implied by this batch's relation changes, and the factions'
        // share of this batch's own perception changes; the derived perception
        // changes spill over in the recursive call.
        let mut ops = standing::perception_ops(config, PERSONA, changes);
        ops.extend(standing::spillover_ops(config, changes, |npc| {
            people::factions_of(&campaign, npc)
        }));
        if ops.is_empty() {
            return;
        }
        match self.state.world.apply(&ops, &campaign.ruleset) {
            Ok(more) => {
                self.follow_standing(source, &more);
                self.ledger.changes.extend(more);
            }
            Err(e) => self
                .ledger
                .refused
                .push(format!("{source} (standing): {e}")),
        }
    }

    /// The NPC the persona's move is aimed at: whispered to, else the first
    /// one it names.
    pub(super) fn addressee(&self) -> Option<String> {
        if let Some(t) = &self.input.whisper_to {
            return Some(t.clone());
        }
        let names = people::names(&self.state.campaign);
        standing::addressed(&self.input.text.to_lowercase(), &names).map(str::to_owned)
    }

    /// The perception of the NPC the persona's move is aimed at, if it has one.
    fn target_perception(&self) -> Option<f64> {
        self.state.world.perception.get(&self.addressee()?).copied()
    }
}

/// The place a move goes to, if it goes anywhere: one of `places` (id, name)
/// other than `here`, named in `text` (by its name, with or without "the",
/// or its id's words) right after "to", "onto", "into" or "toward(s)", or
/// right after a verb of going in with ("enter", "reach", "board", "cross",
/// "visit"), with a verb of going earlier in the move. "I ask about the way
/// to the chapel" goes nowhere: asking is not going.
pub fn destination(text: &str, here: &str, places: &[(&str, &str)]) -> Option<String> {
    const GOING: [&str; 23] = [
        "go", "walk", "head", "row", "take", "cross", "climb", "return", "enter", "reach", "run",
        "hurry", "sail", "pole", "board", "follow", "leave", "make", "ride", "wade", "swim",
        "visit", "step",
    ];
    const INTO: [&str; 5] = ["to", "onto", "into", "toward", "towards"];
    const ARRIVING: [&str; 5] = ["enter", "reach", "board", "cross", "visit"];
    let text = text.to_lowercase();
    let words_before = |at: usize| -> Vec<&str> {
        text[..at]
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let mut best: Option<(usize, &str)> = None;
    for (id, name) in places.iter().filter(|(id, _)| *id != here) {
        let name = name.to_lowercase();
        let bare = name.strip_prefix("the ").unwrap_or(&name).to_owned();
        for form in [name.clone(), bare, id.replace('_', " ")] {
            if form.chars().count() < 4 {
                continue;
            }
            let Some(at) = text.find(&form) else { continue };
            let mut before = words_before(at);
            if before.last() == Some(&"the") {
                before.pop();
            }
            let Some(last) = before.last() else { continue };
            let going = before.iter().any(|w| inflects(w, &GOING));
            if going
                && (INTO.contains(last) || ARRIVING.iter().any(|a| last.starts_with(a)))
                && best.is_none_or(|(b, _)| at < b)
            {
                best = Some((at, id));
            }
        }
    }
    best.map(|(_, id)| id.to_owned())
}

/// Of the NPCs `present`, those a move names (by a name or id, as
/// `people::names` lists them), who go along with the player.
pub fn companions(text: &str, names: &[(String, Vec<String>)], present: &[String]) -> Vec<String> {
    standing::named(&text.to_lowercase(), names)
        .into_iter()
        .filter(|id| present.iter().any(|p| p == id))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{companions, destination};

    #[test]
    fn those_a_move_names_come_along() {
        let people: Vec<(String, Vec<String>)> = [
            ("hesper_vane", "Hesper Vane", "Hesper"),
            ("ned_fallow", "Ned Fallow", "Ned"),
            ("tamsin_reed", "Tamsin Reed", "Tamsin"),
        ]
        .iter()
        .map(|(id, name, first)| {
            (
                (*id).to_owned(),
                vec![(*name).to_owned(), (*first).to_owned()],
            )
        })
        .collect();
        let present: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
        let go = |text: &str| companions(text, &people, &present);
        assert_eq!(go("I follow Tamsin to the toll house"), ["tamsin_reed"]);
        assert_eq!(
            go("Hesper Vane and Ned row me out"),
            ["hesper_vane", "ned_fallow"]
        );
        assert!(go("I take the skiff out alone").is_empty());
    }

    #[test]
    fn a_move_goes_where_it_says_and_asking_goes_nowhere() {
        let places = [
            ("reedmere_quay", "Reedmere Quay"),
            ("drowned_reach", "The Drowned Reach"),
            ("lamp_chapel", "The Lamp Chapel of St Wick"),
            ("toll_house", "The Toll House"),
        ];
        let go = |text: &str| destination(text, "reedmere_quay", &places);
        assert_eq!(
            go("I take the skiff out onto the Drowned Reach.").as_deref(),
            Some("drowned_reach")
        );
        assert_eq!(
            go("I follow Tamsin to the toll house").as_deref(),
            Some("toll_house")
        );
        assert_eq!(
            go("Row out toward the drowned reach").as_deref(),
            Some("drowned_reach")
        );
        assert_eq!(go("I enter the Toll House").as_deref(), Some("toll_house"));
        // Not going: asking, talking about a place, or where one already is.
        assert_eq!(go("I ask Hesper about the way to the lamp chapel"), None);
        assert_eq!(go("I tell Ned the Drowned Reach frightens me"), None);
        assert_eq!(go("I walk along Reedmere Quay"), None);
        assert_eq!(go("I walk to the lantern store"), None);
        assert_eq!(go("I give the gold to the toll house"), None);
        assert_eq!(
            go("Rowing hard, I head into the Drowned Reach").as_deref(),
            Some("drowned_reach")
        );
    }

    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "I", "go", "walk", "row", "to", "the", "toward", "into", "enter", "ask", "about", "way",
        "chapel", "Toll", "House", "Ferry", "Patience", "Hesper", "Ned", "Tamsin", "Reed", "Vane",
        "with", "and", "me", "out",
    ];

    fn text() -> impl Strategy<Value = String> {
        crate::session::moves_strategy::text(WORDS)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]

        /// A destination is always one of the places, never the one here;
        /// companions are always people present.
        #[test]
        fn destinations_and_companions_come_from_the_scene(move_text in text()) {
            let places = [
                ("reedmere_quay", "Reedmere Quay"),
                ("toll_house", "The Toll House"),
                ("patience_deck", "The Ferry Patience"),
                ("chapel", "The Chapel"),
            ];
            if let Some(to) = destination(&move_text, "reedmere_quay", &places) {
                prop_assert!(to != "reedmere_quay");
                prop_assert!(places.iter().any(|(id, _)| *id == to), "{to}");
            }
            let people: Vec<(String, Vec<String>)> = [("hesper_vane", "Hesper Vane"), ("ned_fallow", "Ned Fallow")]
                .iter()
                .map(|(id, name)| ((*id).to_owned(), vec![(*name).to_owned()]))
                .collect();
            let present = vec!["hesper_vane".to_owned()];
            for id in companions(&move_text, &people, &present) {
                prop_assert_eq!(id, "hesper_vane");
            }
        }
    }
}
