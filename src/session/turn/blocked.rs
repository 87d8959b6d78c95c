//! Why a move cannot happen ([`Blocked`]), in the story's words: reason, narration, what instead.
//!
//! The move check (`check.rs`) decides; this file says it: the reason the
//! narrator and the log are given, the narration the engine writes itself
//! from `prompts/blocked_narration.txt` (so a small model cannot tell a
//! blocked move as done), and the choices that lead with what can be done.

use serde::{Deserialize, Serialize};

/// Why a move cannot happen, with the names the player knows.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Blocked {
    /// Someone of the story the move acts on is elsewhere (`at`: where they were left).
    Absent {
        id: String,
        name: String,
        at: Option<String>,
    },
    /// A name the move acts on belongs to no one in the story.
    Stranger { name: String },
    /// An item the move uses is not held; `holder`: who or where has it.
    NotHeld {
        item: String,
        holder: Option<String>,
        holder_here: bool,
    },
    /// A place the move goes to that the story does not know.
    UnknownPlace { place: String },
    /// A known place not one way from here; `via`: the first step toward it.
    Far {
        id: String,
        place: String,
        via: Option<(String, String)>,
    },
    /// The way to a place one step from here is shut (a route's
    /// `closed_when`); `via`: the first step of a way round, if any.
    Closed {
        id: String,
        place: String,
        why: String,
        via: Option<(String, String)>,
    },
    /// The referee (a full-size model) ruled the move out.
    Referee { reason: String },
}

impl Blocked {
    /// Why, in the story's terms, for the narrator and the log.
    pub fn reason(&self) -> String {
        match self {
            Blocked::Absent {
                name, at: Some(at), ..
            } => {
                format!("{name} is not here; they were last seen at {}", mid(at))
            }
            Blocked::Absent { name, at: None, .. } => format!("{name} is not here"),
            Blocked::Stranger { name } => {
                format!("there is no one called {name} here, and no one has heard the name")
            }
            Blocked::NotHeld {
                item,
                holder: Some(h),
                ..
            } => format!("you do not have {item}; {h} has it"),
            Blocked::NotHeld { item, .. } => format!("you do not carry {item}"),
            Blocked::UnknownPlace { place } => {
                format!("no one here knows of any place called {place}")
            }
            Blocked::Far {
                place,
                via: Some((_, via)),
                ..
            } => format!(
                "{place} is not one step from here; the way there goes by {}",
                mid(via)
            ),
            Blocked::Far { place, .. } => format!("there is no way to {place} from here"),
            Blocked::Closed {
                place,
                why,
                via: Some((_, via)),
                ..
            } => format!(
                "the way to {} is shut: {why}; the way round goes by {}",
                mid(place),
                mid(via)
            ),
            Blocked::Closed { place, why, .. } => {
                format!("the way to {} is shut: {why}", mid(place))
            }
            Blocked::Referee { reason } => reason.clone(),
        }
    }

    /// The engine's own narration of the blocked move, from
    /// `prompts/blocked_narration.txt` (`None` for the referee's ruling,
    /// which a model narrates).
    pub fn narration(&self) -> Option<String> {
        const TEMPLATES: &str = include_str!("../../../prompts/blocked_narration.txt");
        let (key, fills): (&str, Vec<(&str, &str)>) = match self {
            Blocked::Absent {
                name, at: Some(at), ..
            } => ("absent_at", vec![("name", name), ("at", at)]),
            Blocked::Absent { name, at: None, .. } => ("absent", vec![("name", name)]),
            Blocked::Stranger { name } => ("stranger", vec![("name", name)]),
            Blocked::NotHeld {
                item,
                holder: Some(h),
                ..
            } => ("not_held_holder", vec![("item", item), ("holder", h)]),
            Blocked::NotHeld { item, .. } => ("not_held", vec![("item", item)]),
            Blocked::UnknownPlace { place } => ("unknown_place", vec![("place", place)]),
            Blocked::Far {
                place,
                via: Some((_, via)),
                ..
            } => ("far_via", vec![("place", place), ("via", via)]),
            Blocked::Far { place, .. } => ("far", vec![("place", place)]),
            Blocked::Closed {
                place,
                why,
                via: Some((_, via)),
                ..
            } => (
                "closed_via",
                vec![("place", place), ("why", why), ("via", via)],
            ),
            Blocked::Closed { place, why, .. } => ("closed", vec![("place", place), ("why", why)]),
            Blocked::Referee { .. } => return None,
        };
        let template = TEMPLATES
            .lines()
            .filter(|l| !l.starts_with('#'))
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(": "))?;
        let mut text = template.to_owned();
        for (slot, value) in fills {
            text = text.replace(&format!("{{{slot}}}"), &mid(value));
        }
        // A sentence starts with a capital, whatever the name's article.
        let mut chars = text.chars();
        Some(
            chars
                .next()
                .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect()),
        )
    }

    /// Moves that can be made instead, as choices.
    pub fn instead(&self, present: &[String]) -> Vec<String> {
        match self {
            Blocked::Absent {
                name, at: Some(at), ..
            } => vec![format!("Go to {} to find {name}", mid(at))],
            Blocked::NotHeld {
                item,
                holder: Some(h),
                holder_here: true,
            } if present.contains(h) => vec![format!("Ask {h} for {item}")],
            // Here but held by no one here: it lies at the place itself
            // (a place is not asked for anything).
            Blocked::NotHeld {
                item,
                holder: Some(_),
                holder_here: true,
            } => vec![format!("Pick up {item}")],
            Blocked::Far {
                via: Some((_, via)),
                ..
            }
            | Blocked::Closed {
                via: Some((_, via)),
                ..
            } => vec![format!("Go to {}", mid(via))],
            _ => present
                .first()
                .map(|p| vec![format!("Talk to {p}")])
                .unwrap_or_default(),
        }
    }
}

/// A name as it reads inside a sentence: "The Ferry Patience" → "the Ferry Patience".
pub(super) fn mid(name: &str) -> String {
    name.strip_prefix("The ")
        .map_or_else(|| name.to_owned(), |rest| format!("the {rest}"))
}
