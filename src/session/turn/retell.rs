//! A narration contradicting the world or the outcome is told again, the better telling kept.
//!
//! Every narration a model writes is read against the world as it stands
//! (`session::continuity`: who is here, who is gone, what the persona holds,
//! where the scene is, which facts are false) and, for the player's own, the
//! outcome the engine decided. A telling with contradictions is asked for once
//! more, with what it got wrong in plain words as the prompt's `avoid`; of the
//! two, the one with fewer contradictions is kept (the first on a tie), and the
//! debug overlay and the save say which. The check is word rules, so it is
//! deterministic and replays exactly; the second telling is an ordinary
//! recorded call.

use super::{ASKED_AGAIN, KEPT_SECOND, PERSONA, TurnRunner};
use crate::session::continuity::{self, Contradiction, Hit, Outcome, Scene};
use crate::session::phrasing::{verb_phrase, whispered};

/// What one telling got wrong.
pub(super) struct Misreading {
    hits: Vec<Hit>,
    /// It tells a failed or ruled-out move as done.
    reversed: Option<Outcome>,
    /// Where the scene is, for a telling set elsewhere.
    here: String,
}

impl Misreading {
    pub(super) fn count(&self) -> usize {
        self.hits.len() + usize::from(self.reversed.is_some())
    }

    /// What the next telling must keep to, for the narrator's `avoid`.
    fn instruction(&self) -> String {
        let mut said: Vec<String> = Vec::new();
        for hit in &self.hits {
            let about = &hit.about;
            let line = match hit.kind {
                Contradiction::AbsentActs => {
                    format!("{about} is not here, so {about} does not speak or act")
                }
                Contradiction::GoneAppears => format!("{about} is gone and does not appear"),
                Contradiction::ItemNotHeld => format!("the player does not have {about}"),
                Contradiction::WrongPlace if self.here.is_empty() => {
                    format!("the scene is not at {about}")
                }
                Contradiction::WrongPlace => {
                    format!("the scene stays at {}, not {about}", self.here)
                }
                Contradiction::FalseFact => format!("it is not so that {about}"),
            };
            if !said.contains(&line) {
                said.push(line);
            }
        }
        match self.reversed {
            Some(Outcome::Blocked) => {
                said.push("the move cannot happen: tell it not happening".into());
            }
            Some(_) => said.push("the move fails: tell it failing, not done".into()),
            None => {}
        }
        said.join("; ")
    }

    /// For the debug overlay and the save: each contradiction's kind and
    /// what it is about (names of the world, never the narration's text).
    fn summary(&self) -> String {
        let mut parts: Vec<String> = self
            .hits
            .iter()
            .map(|h| format!("{} ({})", h.kind.name(), h.about))
            .collect();
        if self.reversed.is_some() {
            parts.push("the decided outcome reversed".into());
        }
        parts.join("; ")
    }
}

impl TurnRunner {
    /// The scene every telling of this moment is read against.
    pub(super) fn scene_now(&self) -> Scene {
        Scene::of(&self.state.campaign, &self.state.world)
    }

    /// `text`, told by or for `actor`, read against `scene` and the outcome.
    pub(super) fn misreading(&self, scene: &Scene, actor: &str, text: &str) -> Misreading {
        let hits = continuity::contradictions(text, scene);
        let decided = self.decided();
        let reversed = (actor == PERSONA && !continuity::honours(decided, &self.input.text, text))
            .then_some(decided);
        Misreading {
            hits,
            reversed,
            here: scene.here.clone(),
        }
    }

    /// The opening of the player's narration the engine writes for the
    /// outcome it decided (`continuity::opening`, #42). A whispered move is
    /// the player's own words, quoted as they were typed.
    pub(super) fn outcome_opening(&self) -> String {
        self.message(self.persona_intention)
            .map(|mv| {
                let phrase = match mv.target.as_deref() {
                    Some(to) => whispered(&mv.content, &self.name_of(to)),
                    None => verb_phrase(&mv.content),
                };
                continuity::opening(self.decided(), &phrase)
            })
            .unwrap_or_default()
    }

    /// Whose narration `actor`'s is, for the overlay: "the player", or a name.
    pub(super) fn teller(&self, actor: &str) -> String {
        if actor == PERSONA {
            "the player".to_owned()
        } else {
            self.name_of(actor)
        }
    }

    /// What the engine decided for the persona's move so far.
    pub(super) fn decided(&self) -> Outcome {
        if self.ledger.blocked.is_some() {
            return Outcome::Blocked;
        }
        self.ledger
            .rolls
            .iter()
            .find(|r| r.actor == PERSONA && r.against.is_none())
            .map_or(Outcome::Unrolled, |r| Outcome::of_band(&r.band))
    }

    /// The telling of `actor`'s narration to keep, or `None` when it is
    /// asked for again (it contradicts the world, and has not been asked
    /// again before this turn).
    pub(super) fn recheck(&mut self, actor: &str, text: &str) -> Option<String> {
        let found = self.misreading(&self.scene_now(), actor, text);
        let who = self.teller(actor);
        if let Some((first, first_count)) = self.ledger.retold.remove(actor) {
            let second = found.count() < first_count;
            let kept = if second {
                KEPT_SECOND
            } else {
                ": kept the first telling"
            };
            self.ledger.continuity.push(format!(
                "narrate {who}: told again: {} contradiction(s) against {first_count}{kept}",
                found.count(),
            ));
            return Some(if second { text.to_owned() } else { first });
        }
        if found.count() == 0 {
            return Some(text.to_owned());
        }
        if self.ledger.regenerated.contains_key(actor) {
            // Already told again (for a line or veil): kept as it is.
            self.ledger.continuity.push(format!(
                "narrate {who}: {}: kept (already told again)",
                found.summary()
            ));
            return Some(text.to_owned());
        }
        self.ledger
            .continuity
            .push(format!("narrate {who}: {}{ASKED_AGAIN}", found.summary()));
        self.ledger
            .retold
            .insert(actor.to_owned(), (text.to_owned(), found.count()));
        self.ledger
            .regenerated
            .insert(actor.to_owned(), found.instruction());
        self.narrate_again(actor);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instruction_says_what_to_keep_to_in_plain_words() {
        let hit = |kind, about: &str| Hit {
            kind,
            about: about.into(),
            sentence: String::new(),
        };
        let m = Misreading {
            hits: vec![
                hit(Contradiction::AbsentActs, "Tamsin"),
                hit(Contradiction::AbsentActs, "Tamsin"),
                hit(Contradiction::WrongPlace, "the Salt Archive"),
                hit(Contradiction::ItemNotHeld, "the Sluice Key"),
            ],
            reversed: Some(Outcome::Failure),
            here: "Lowmarsh".into(),
        };
        assert_eq!(m.count(), 5);
        assert_eq!(
            m.instruction(),
            "Tamsin is not here, so Tamsin does not speak or act; \
             the scene stays at Lowmarsh, not the Salt Archive; \
             the player does not have the Sluice Key; \
             the move fails: tell it failing, not done"
        );
        assert_eq!(
            m.summary(),
            "a person not present speaks or acts (Tamsin); \
             a person not present speaks or acts (Tamsin); \
             the place named is not where the scene is (the Salt Archive); \
             an item not held is used (the Sluice Key); the decided outcome reversed"
        );
    }
}
