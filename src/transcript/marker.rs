//! Scene markers (seed 004): a scene opens, closes or moves, as one typed value.
//!
//! The stream stores a marker as the text of a `scene_marker` message
//! (`scene_open: PLACE`, `scene_close`, `location_change: FROM -> TO`), the
//! form saves have always held; everything else reads and writes it through
//! [`SceneMarker`], so no caller builds or parses that text.

use std::fmt;

use super::stream::{Kind, Message};

/// One scene marker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SceneMarker {
    /// A scene opens at a place. `None`: at no named place (a premise-only
    /// opening in a world with no starting location).
    Open(Option<String>),
    /// `/end-scene`: the next turn opens a new scene.
    Close,
    /// The scene moved from one place to another.
    Moved { from: String, to: String },
}

const OPEN: &str = "scene_open";
const CLOSE: &str = "scene_close";
const MOVED: &str = "location_change";

impl fmt::Display for SceneMarker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SceneMarker::Open(Some(place)) => write!(f, "{OPEN}: {place}"),
            SceneMarker::Open(None) => f.write_str(OPEN),
            SceneMarker::Close => f.write_str(CLOSE),
            SceneMarker::Moved { from, to } => write!(f, "{MOVED}: {from} -> {to}"),
        }
    }
}

impl SceneMarker {
    /// Reads a marker's stored text; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        match text.split_once(": ") {
            None if text == OPEN => Some(SceneMarker::Open(None)),
            None if text == CLOSE => Some(SceneMarker::Close),
            Some((OPEN, place)) if !place.is_empty() => Some(SceneMarker::Open(Some(place.into()))),
            Some((MOVED, moved)) => {
                let (from, to) = moved.split_once(" -> ")?;
                Some(SceneMarker::Moved {
                    from: from.into(),
                    to: to.into(),
                })
            }
            _ => None,
        }
    }

    /// The marker a stream message carries, if it is a scene marker.
    pub fn of(message: &Message) -> Option<Self> {
        (message.kind == Kind::SceneMarker)
            .then(|| Self::parse(&message.content))
            .flatten()
    }

    /// The place the scene is at after this marker, when it names one.
    pub fn place(&self) -> Option<&str> {
        match self {
            SceneMarker::Open(place) => place.as_deref(),
            SceneMarker::Close => None,
            SceneMarker::Moved { to, .. } => Some(to),
        }
    }

    /// The marker a turn at `here` opens with, after the stream's `last`
    /// marker: a new scene when none is open (no marker yet, or the last
    /// closed it), a move when the scene is elsewhere than the last marker
    /// put it, nothing when it is still there. A scene opened at no named
    /// place is placed by the first turn that has one.
    pub fn next(last: Option<&SceneMarker>, here: &str) -> Option<SceneMarker> {
        let open = || Some(SceneMarker::Open(Some(here.to_owned())));
        match last {
            None | Some(SceneMarker::Close | SceneMarker::Open(None)) => open(),
            Some(marked) => {
                let from = marked.place()?;
                (from != here).then(|| SceneMarker::Moved {
                    from: from.to_owned(),
                    to: here.to_owned(),
                })
            }
        }
    }
}

/// The markers of a stream's messages, in order.
pub fn markers(messages: &[Message]) -> impl DoubleEndedIterator<Item = SceneMarker> + '_ {
    messages.iter().filter_map(SceneMarker::of)
}

/// An engine notice in the stream (#41): a `system` message the player is
/// shown and no model reads: what the world did (a consequence fired), or
/// why the player's move could not happen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    World(String),
    Blocked(String),
}

const WORLD: &str = "world";
const BLOCKED: &str = "blocked";

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Notice::World(t) => write!(f, "{WORLD}: {t}"),
            Notice::Blocked(t) => write!(f, "{BLOCKED}: {t}"),
        }
    }
}

impl Notice {
    /// The notice a stream message carries, if it is one.
    pub fn of(message: &Message) -> Option<Self> {
        if message.kind != Kind::System {
            return None;
        }
        match message.content.split_once(": ") {
            Some((WORLD, t)) => Some(Notice::World(t.to_owned())),
            Some((BLOCKED, t)) => Some(Notice::Blocked(t.to_owned())),
            _ => None,
        }
    }

    /// What the player reads.
    pub fn text(&self) -> &str {
        match self {
            Notice::World(t) | Notice::Blocked(t) => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SceneMarker;

    #[test]
    fn a_marker_reads_back_as_it_was_written() {
        let all = [
            SceneMarker::Open(Some("reedmere_quay".into())),
            SceneMarker::Open(None),
            SceneMarker::Close,
            SceneMarker::Moved {
                from: "reedmere_quay".into(),
                to: "toll_house".into(),
            },
        ];
        for m in all {
            assert_eq!(SceneMarker::parse(&m.to_string()), Some(m.clone()), "{m}");
        }
        // The text saves have always held.
        assert_eq!(
            SceneMarker::parse("location_change: a -> b"),
            Some(SceneMarker::Moved {
                from: "a".into(),
                to: "b".into()
            })
        );
        assert_eq!(SceneMarker::Close.to_string(), "scene_close");
        for junk in [
            "",
            "scene_open: ",
            "location_change: nowhere",
            "weather: fog",
        ] {
            assert_eq!(SceneMarker::parse(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn the_next_turn_opens_moves_or_stays() {
        let open = |p: &str| SceneMarker::Open(Some(p.into()));
        let quay = Some(open("quay"));
        assert_eq!(SceneMarker::next(None, "quay"), quay);
        assert_eq!(SceneMarker::next(Some(&SceneMarker::Close), "quay"), quay);
        assert_eq!(SceneMarker::next(Some(&open("quay")), "quay"), None);
        assert_eq!(
            SceneMarker::next(Some(&open("quay")), "chapel"),
            Some(SceneMarker::Moved {
                from: "quay".into(),
                to: "chapel".into()
            })
        );
        let moved = SceneMarker::Moved {
            from: "quay".into(),
            to: "chapel".into(),
        };
        assert_eq!(SceneMarker::next(Some(&moved), "chapel"), None);
        // A premise-only opening named no place: the first turn at one places
        // the scene, so a later move is marked (it was never marked before).
        assert_eq!(
            SceneMarker::next(Some(&SceneMarker::Open(None)), "quay"),
            quay
        );
    }
}
