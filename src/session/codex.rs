//! A session's codex (#22): the people met, the places been, the lore play has established.
//!
//! Never a secret, never someone or somewhere not yet come across. Plain Rust,
//! read by the window.

use std::path::PathBuf;

use super::turn::{PERSONA, SessionState};
use crate::memory::LoreHit;
use crate::rules::state::{Visibility, WHEREABOUTS};

/// Someone met.
#[derive(Clone, Debug, PartialEq)]
pub struct Person {
    pub id: String,
    pub name: String,
    /// What anyone can see of them (the campaign's public description).
    pub description: String,
    /// How they regard the player, in a word ("warm", "wary"), once they have an opinion.
    pub regard: Option<&'static str>,
    /// Whether they are in the scene now.
    pub here: bool,
}

/// Somewhere been.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub id: String,
    pub name: String,
    pub description: String,
    /// The place's art, when the campaign has some.
    pub image: Option<PathBuf>,
    /// Whether the player is there now.
    pub here: bool,
}

/// Everything the codex shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionCodex {
    pub people: Vec<Person>,
    pub places: Vec<Place>,
    /// Things play introduced, what the world did (⚑, #41), and facts play
    /// has established ("ferry lantern, burns: green"), in the order learned.
    pub lore: Vec<String>,
    /// The campaign's lore recalled into the player's turns, first come first.
    pub read: Vec<LoreRead>,
}

/// A passage of the campaign's lore that play has brought up.
#[derive(Clone, Debug, PartialEq)]
pub struct LoreRead {
    pub id: String,
    /// Where it stands in the lore ("History › The Drowning").
    pub title: String,
    pub text: String,
}

impl SessionCodex {
    /// A key per entry, to tell new ones from those already looked at.
    pub fn keys(&self) -> Vec<String> {
        self.people
            .iter()
            .map(|p| format!("person:{}", p.id))
            .chain(self.places.iter().map(|p| format!("place:{}", p.id)))
            .chain(self.lore.iter().map(|l| format!("lore:{l}")))
            .chain(self.read.iter().map(|l| format!("read:{}", l.id)))
            .collect()
    }
}

/// The codex of `state`: the people present now or left somewhere on the
/// way (`scene.whereabouts`), the places its scene markers opened or moved
/// to, the public facts play added to the campaign's own, and the lore
/// `recalled` into the player's turns (`Store::recalled_lore`; never an NPC's
/// secrets, which only that NPC's own stages are shown).
pub fn codex(state: &SessionState, recalled: &[LoreHit]) -> SessionCodex {
    SessionCodex {
        people: people_met(state),
        places: places_seen(state),
        lore: facts_learned(state),
        read: lore_read(recalled),
    }
}

/// The people present now, and those left somewhere on the way, by name.
fn people_met(state: &SessionState) -> Vec<Person> {
    let (campaign, world) = (&state.campaign, &state.world);
    let here: Vec<String> = world
        .present()
        .into_iter()
        .filter(|id| id != PERSONA)
        .collect();
    let mut met = here.clone();
    if let Some(left) = world.scene.get(WHEREABOUTS).and_then(|w| w.as_object()) {
        met.extend(
            left.keys()
                .filter(|id| !here.contains(id))
                .cloned()
                .collect::<Vec<_>>(),
        );
    }
    let mut people: Vec<Person> = met
        .iter()
        .filter_map(|id| {
            // Someone play introduced (#41): named and described as they came in.
            if let Some(new) = world.introduced.get(id) {
                return Some(Person {
                    id: id.clone(),
                    name: new.name.clone(),
                    description: introduced_words(new),
                    regard: None,
                    here: here.contains(id),
                });
            }
            let c = campaign.characters.get(id)?;
            Some(Person {
                id: id.clone(),
                name: c.name.clone(),
                description: c.description.clone(),
                regard: world
                    .perception
                    .get(id)
                    .map(|score| crate::rules::standing::label(*score)),
                here: here.contains(id),
            })
        })
        .collect();
    people.sort_by(|a, b| a.name.cmp(&b.name));
    people
}

/// The places the scene markers opened or moved to, and where the scene is now.
fn places_seen(state: &SessionState) -> Vec<Place> {
    let (campaign, world) = (&state.campaign, &state.world);
    let here = state.place().0;
    let mut visited: Vec<String> = Vec::new();
    for marker in crate::transcript::marker::markers(&state.stream.messages) {
        if let Some(place) = marker.place()
            && !visited.iter().any(|v| v == place)
        {
            visited.push(place.to_owned());
        }
    }
    if !here.is_empty() && !visited.contains(&here) {
        visited.push(here.clone());
    }
    visited
        .into_iter()
        .map(|id| {
            let mut scene = world.scene.clone();
            scene.insert("location".into(), id.clone().into());
            let backdrop = super::scenery::backdrop(campaign, &scene);
            Place {
                description: campaign.locations.get(&id).map_or_else(
                    || {
                        world
                            .introduced
                            .get(&id)
                            .map(introduced_words)
                            .unwrap_or_default()
                    },
                    |l| l.description.clone(),
                ),
                here: id == here,
                name: world
                    .introduced
                    .get(&id)
                    .map_or(backdrop.name, |p| p.name.clone()),
                image: backdrop.image,
                id,
            }
        })
        .collect()
}

/// The public facts play added to the campaign's own, in words.
fn facts_learned(state: &SessionState) -> Vec<String> {
    // Things play brought into the world (#41) come first: "a rusted hook: …".
    let found = state
        .world
        .introduced
        .values()
        .filter(|i| i.kind == crate::rules::op::NewKind::Item)
        .map(|i| format!("{}: {}", i.name, introduced_words(i)));
    let learned = state
        .world
        .facts
        .iter()
        .filter(|f| f.visibility == Visibility::Public && !state.campaign.world.facts.contains(f))
        .map(|f| {
            let object = f
                .object
                .as_str()
                .map_or_else(|| f.object.to_string(), str::to_owned);
            format!(
                "{}, {}: {object}",
                f.subject.replace('_', " "),
                f.predicate.replace('_', " ")
            )
        });
    // What the world did (#41): each consequence told, in the order it fired.
    let happened = state
        .stream
        .messages
        .iter()
        .filter_map(crate::transcript::marker::Notice::of)
        .filter_map(|n| match n {
            crate::transcript::marker::Notice::World(t) => Some(format!("\u{2691} {t}")),
            crate::transcript::marker::Notice::Blocked(_) => None,
        });
    found.chain(happened).chain(learned).collect()
}

/// The lore recalled into the player's turns, once each, no NPC's secrets.
fn lore_read(recalled: &[LoreHit]) -> Vec<LoreRead> {
    let mut read: Vec<LoreRead> = Vec::new();
    for hit in recalled {
        if hit.file_path.ends_with("secrets.md") || read.iter().any(|r| r.id == hit.chunk_id) {
            continue;
        }
        let title = hit
            .section_path
            .split(['/', '>', '›'])
            .map(|part| part.trim().trim_start_matches('#').trim().replace('_', " "))
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" › ");
        read.push(LoreRead {
            id: hit.chunk_id.clone(),
            title,
            text: hit.text.trim().to_owned(),
        });
    }
    read
}

/// What the codex says of something play introduced: its description and provenance.
fn introduced_words(new: &crate::rules::state::Introduced) -> String {
    let told = new.description.trim();
    if told.is_empty() {
        format!("Introduced in turn {}.", new.turn)
    } else {
        format!("{told} (introduced in turn {})", new.turn)
    }
}
