//! The automatic player: picked choices, typed moves and a labelled share of invalid ones.
//!
//! Moves alternate: a choice the game offered, then a typed move (the next
//! line of a moves file, else one made from the scene). Every fourth move is
//! *invalid* by construction, generated from the world state so the engine
//! has something to refuse: addressing someone who is not there, using an
//! item the persona does not hold, going somewhere the campaign does not
//! know, or repeating a move the referee already ruled out. The label is
//! what `invalid_action_acceptance` divides by.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::campaign::{Campaign, CharacterKind};
use crate::rules::WorldState;
use crate::session::turn::PERSONA;

/// Why a planted move is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Invalid {
    /// Speaks to someone who is not in the scene (or not in the campaign).
    AbsentPerson,
    /// Uses an item the persona does not hold.
    ItemNotHeld,
    /// Goes to a place the campaign does not know.
    UnknownPlace,
    /// Tries again what the referee just ruled out.
    AfterRuledOut,
}

impl Invalid {
    const CYCLE: [Self; 4] = [
        Self::AbsentPerson,
        Self::ItemNotHeld,
        Self::UnknownPlace,
        Self::AfterRuledOut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::AbsentPerson => "addresses someone not present",
            Self::ItemNotHeld => "uses an item not held",
            Self::UnknownPlace => "goes somewhere unknown",
            Self::AfterRuledOut => "repeats a move ruled out",
        }
    }
}

/// Where a move came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// One of the choices the game offered.
    Choice,
    /// A line of the moves file.
    File,
    /// Made from the scene by the automatic player.
    Made,
}

/// One move the automatic player makes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Move {
    pub text: String,
    pub source: Source,
    /// Set for a planted invalid move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid: Option<Invalid>,
}

/// People and places no campaign of ours has: what an invalid move names.
const STRANGERS: [&str; 3] = ["Ysolde Farrant", "Captain Bram Oakhollow", "Tamsin Vey"];
const NOWHERE: [&str; 3] = [
    "the Silver Lighthouse of Qarn",
    "the Ninth Catacomb",
    "Port Vellimar",
];
const TRINKETS: [&str; 3] = [
    "a silver skeleton key",
    "the Warden's seal",
    "a loaded pistol",
];

/// The automatic player: deterministic for its seed.
pub struct Player {
    rng: StdRng,
    moves: Vec<String>,
    next_line: usize,
    count: usize,
    invalid_every: usize,
    invalid_cycle: usize,
    /// The last move the referee ruled out, to try again.
    ruled_out: Option<String>,
}

impl Player {
    /// A player with `seed`, typing `moves` in order (then making its own);
    /// every `invalid_every`-th move is planted invalid (0: none).
    pub fn new(seed: u64, moves: Vec<String>, invalid_every: usize) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            moves,
            next_line: 0,
            count: 0,
            invalid_every,
            invalid_cycle: 0,
            ruled_out: None,
        }
    }

    /// The referee ruled `text` out (a later planted move may repeat it).
    pub fn ruled_out(&mut self, text: &str) {
        self.ruled_out = Some(text.to_owned());
    }

    /// The next move, given the choices offered and the scene.
    pub fn next(&mut self, choices: &[String], campaign: &Campaign, world: &WorldState) -> Move {
        self.count += 1;
        if self.invalid_every > 0 && self.count.is_multiple_of(self.invalid_every) {
            for _ in 0..Invalid::CYCLE.len() {
                let kind = Invalid::CYCLE[self.invalid_cycle % Invalid::CYCLE.len()];
                self.invalid_cycle += 1;
                if let Some(text) = self.invalid(kind, campaign, world) {
                    return Move {
                        text,
                        source: Source::Made,
                        invalid: Some(kind),
                    };
                }
            }
        }
        let pick_choice = self.count % 2 == 1 && !choices.is_empty();
        if pick_choice {
            let i = self.rng.random_range(0..choices.len());
            return Move {
                text: choices[i].clone(),
                source: Source::Choice,
                invalid: None,
            };
        }
        if let Some(line) = self.moves.get(self.next_line) {
            self.next_line += 1;
            return Move {
                text: line.clone(),
                source: Source::File,
                invalid: None,
            };
        }
        Move {
            text: self.made(campaign, world),
            source: Source::Made,
            invalid: None,
        }
    }

    fn pick<'a>(&mut self, options: &[&'a str]) -> Option<&'a str> {
        if options.is_empty() {
            return None;
        }
        Some(options[self.rng.random_range(0..options.len())])
    }

    /// A valid move made from the scene: speak to someone present, look at
    /// the place, or go to another known place.
    fn made(&mut self, campaign: &Campaign, world: &WorldState) -> String {
        let present: Vec<&str> = npcs(campaign)
            .filter(|(id, _)| world.present().contains(&(*id).to_owned()))
            .map(|(_, name)| name)
            .collect();
        let here = world
            .scene
            .get("location")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let places: Vec<&str> = campaign
            .locations
            .iter()
            .filter(|(id, _)| id.as_str() != here)
            .map(|(_, l)| l.name.as_str())
            .collect();
        match self.rng.random_range(0..3) {
            0 if !present.is_empty() => {
                let who = self.pick(&present).unwrap_or_default();
                format!("I ask {who} what they know about what happened here.")
            }
            1 if !places.is_empty() => {
                let place = self.pick(&places).unwrap_or_default();
                format!("I go to {place}.")
            }
            _ => "I look around carefully for anything out of place.".into(),
        }
    }

    /// An invalid move of `kind` for this scene, when the scene allows one.
    fn invalid(
        &mut self,
        kind: Invalid,
        campaign: &Campaign,
        world: &WorldState,
    ) -> Option<String> {
        match kind {
            Invalid::AbsentPerson => {
                let present = world.present();
                let absent: Vec<&str> = npcs(campaign)
                    .filter(|(id, _)| !present.is_empty() && !present.contains(&(*id).to_owned()))
                    .map(|(_, name)| name)
                    .collect();
                let who = self
                    .pick(&absent)
                    .or_else(|| self.pick(&STRANGERS))
                    .unwrap_or(STRANGERS[0]);
                Some(format!("I turn to {who} and ask them to help me."))
            }
            Invalid::ItemNotHeld => {
                let held = world.inventory.get(PERSONA);
                let others: Vec<&str> = campaign
                    .items
                    .iter()
                    .filter(|(id, _)| !holds(held, id))
                    .map(|(_, i)| i.name.as_str())
                    .collect();
                let item = self
                    .pick(&others)
                    .or_else(|| self.pick(&TRINKETS))
                    .unwrap_or(TRINKETS[0]);
                Some(format!("I take out {} and use it.", with_article(item)))
            }
            Invalid::UnknownPlace => {
                let place = self.pick(&NOWHERE).unwrap_or(NOWHERE[0]);
                Some(format!("I walk to {place}."))
            }
            Invalid::AfterRuledOut => self.ruled_out.take(),
        }
    }
}

/// Whether an inventory (`None`: none) holds at least one `item`.
pub fn holds(inventory: Option<&std::collections::BTreeMap<String, u32>>, item: &str) -> bool {
    inventory.is_some_and(|h| h.get(item).is_some_and(|n| *n > 0))
}

/// The campaign's NPCs as (id, name).
fn npcs(campaign: &Campaign) -> impl Iterator<Item = (&str, &str)> {
    campaign
        .characters
        .iter()
        .filter(|(_, c)| c.kind == CharacterKind::Npc)
        .map(|(id, c)| (id.as_str(), c.name.as_str()))
}

/// "the brass key" stays; "brass key" becomes "the brass key".
fn with_article(item: &str) -> String {
    let lower = item.to_lowercase();
    if ["the ", "a ", "an "].iter().any(|a| lower.starts_with(a)) {
        item.to_owned()
    } else {
        format!("the {item}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The minimal campaign: no people, places or items of its own.
    fn minimal() -> std::sync::Arc<Campaign> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/minimal-lighthouse");
        crate::session::save_files::load_campaign(&dir).unwrap()
    }

    #[test]
    fn every_fourth_move_is_planted_invalid_and_labelled() {
        let campaign = minimal();
        let world = WorldState::default();
        let mut player = Player::new(7, vec!["I wait.".into()], 4);
        let choices = vec!["Continue".to_owned()];
        let moves: Vec<Move> = (0..8)
            .map(|_| player.next(&choices, &campaign, &world))
            .collect();
        let planted: Vec<Option<Invalid>> = moves.iter().map(|m| m.invalid).collect();
        assert_eq!(
            planted,
            vec![
                None,
                None,
                None,
                Some(Invalid::AbsentPerson),
                None,
                None,
                None,
                Some(Invalid::ItemNotHeld)
            ]
        );
        assert_eq!(moves[0].source, Source::Choice);
        assert_eq!(moves[1].text, "I wait.");
        assert!(STRANGERS.iter().any(|s| moves[3].text.contains(s)));
    }

    #[test]
    fn a_ruled_out_move_is_tried_again_once() {
        let campaign = minimal();
        let world = WorldState::default();
        let mut player = Player::new(1, Vec::new(), 1);
        player.invalid_cycle = 3;
        player.ruled_out("I fly over the wall.");
        let m = player.next(&[], &campaign, &world);
        assert_eq!(m.invalid, Some(Invalid::AfterRuledOut));
        assert_eq!(m.text, "I fly over the wall.");
        // Nothing ruled out since: the next kind in the cycle instead.
        let m = player.next(&[], &campaign, &world);
        assert_eq!(m.invalid, Some(Invalid::AbsentPerson));
    }
}
