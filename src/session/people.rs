//! How the campaign's people regard the persona in a session: perception and reputation.
//!
//! They are set up, moved, decayed, shown to the stages, and applied to dice and
//! choices.

use std::collections::BTreeMap;

use crate::campaign::{Campaign, CharacterKind};
use crate::rules::WorldState;
use crate::rules::standing::{self, Acquaintance};

static NO_REGARDS: BTreeMap<String, i64> = BTreeMap::new();

/// Every NPC of the campaign with its factions and regards.
pub fn acquaintances(campaign: &Campaign) -> Vec<Acquaintance<'_>> {
    campaign
        .characters
        .values()
        .filter(|c| c.kind == CharacterKind::Npc)
        .map(|c| Acquaintance {
            id: &c.id,
            factions: c.profile.as_ref().map_or(&[], |p| p.factions.as_slice()),
            regards: c.profile.as_ref().map_or(&NO_REGARDS, |p| &p.regards),
        })
        .collect()
}

/// Seed the starting world's reputations and perceptions (a new session).
pub fn initialise(campaign: &Campaign, world: &mut WorldState, persona: &str, seed: u64) {
    let factions: Vec<&str> = campaign.factions.keys().map(String::as_str).collect();
    standing::initialise(
        &campaign.standing,
        world,
        persona,
        &factions,
        &acquaintances(campaign),
        seed,
    );
}

/// The factions an NPC belongs to.
pub fn factions_of(campaign: &Campaign, npc: &str) -> Vec<String> {
    campaign
        .characters
        .get(npc)
        .and_then(|c| c.profile.as_ref())
        .map(|p| p.factions.clone())
        .unwrap_or_default()
}

/// The names a player may call each NPC by: full name and first name.
pub fn names(campaign: &Campaign) -> Vec<(String, Vec<String>)> {
    campaign
        .characters
        .values()
        .filter(|c| c.kind == CharacterKind::Npc)
        .map(|c| {
            let mut ns = vec![c.name.clone()];
            if let Some(first) = c.name.split_whitespace().next()
                && first.len() > 2
                && first != c.name
            {
                ns.push(first.to_owned());
            }
            (c.id.clone(), ns)
        })
        .collect()
}
