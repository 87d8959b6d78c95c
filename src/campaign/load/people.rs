//! The campaign's people: the player, the NPCs with their secrets and portraits, and standing.
//!
//! Stat blocks are checked against the ruleset's `character_stat_schema`;
//! standing (seed 002 §4.1.4, §4.2.3) against the factions the campaign
//! defines and the −100..=100 range of every score.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::{Against, Assembly, Collected, Loader, PLAYER};
use crate::campaign::{Character, CharacterKind, Origin};
use crate::rules::state::CharacterState;

impl Loader {
    /// Assembly phase: the player, from `characters/player/template.json` when
    /// there is one (`You`, with no stats, when not).
    pub(super) fn player(&mut self, c: &Collected, against: &Against, a: &mut Assembly) {
        let mut player_stats = None;
        if let Some(p) = &c.player
            && let Some(stats) = &p.value.stats
        {
            against.check_stats(&mut self.report, &p.rel, p.line("/stats"), stats);
            player_stats = Some(stats.clone());
        }
        a.characters.insert(
            PLAYER.to_owned(),
            Character {
                id: PLAYER.into(),
                name: c
                    .player
                    .as_ref()
                    .and_then(|p| p.value.name.clone())
                    .unwrap_or_else(|| "You".into()),
                kind: CharacterKind::Player,
                origin: Origin::Campaign,
                profile: None,
                secrets: None,
                description: c
                    .player
                    .as_ref()
                    .and_then(|p| p.value.description.clone())
                    .unwrap_or_default(),
                portrait: None,
                chattiness: 1.0,
                baked: true,
            },
        );
        a.world.characters.insert(
            PLAYER.into(),
            CharacterState {
                stats: player_stats.unwrap_or_default(),
                tags: BTreeSet::default(),
            },
        );
    }

    /// Assembly phase: the campaign's NPCs, their stat blocks, portraits and
    /// secrets; secrets of nobody are warnings.
    pub(super) fn npcs(&mut self, c: &Collected, against: &Against, a: &mut Assembly) {
        for (id, p) in &c.npcs {
            let profile = &p.value;
            if let Some(stats) = &profile.stats {
                against.check_stats(&mut self.report, &p.rel, p.line("/stats"), stats);
            }
            let portrait = profile.portrait.as_ref().map(PathBuf::from);
            if let Some(portrait) = &portrait
                && !against.asset_paths.contains(portrait)
            {
                self.report.warning(
                    &p.rel,
                    p.line("/portrait"),
                    format!(
                        "portrait `{}` does not exist (orphaned reference)",
                        portrait.display()
                    ),
                );
            }
            if profile
                .secrets
                .as_deref()
                .is_some_and(|s| s.contains("secrets.md"))
                && !c.secrets.contains_key(id)
            {
                self.report.warning(
                    &p.rel,
                    p.line("/secrets"),
                    format!(
                        "points to secrets.md, but characters/npcs/{id}/secrets.md does not exist"
                    ),
                );
            }
            a.characters.insert(
                id.clone(),
                Character {
                    id: id.clone(),
                    name: profile.name.clone(),
                    kind: CharacterKind::Npc,
                    origin: Origin::Campaign,
                    profile: Some(profile.clone()),
                    secrets: c.secrets.get(id).cloned(),
                    description: profile.appearance.clone().unwrap_or_default(),
                    portrait,
                    chattiness: profile.chattiness,
                    baked: profile.baked,
                },
            );
            a.world.characters.insert(
                id.clone(),
                CharacterState {
                    stats: profile.stats.clone().unwrap_or_default(),
                    tags: profile
                        .metadata
                        .as_ref()
                        .map(|m| m.tags.iter().cloned().collect())
                        .unwrap_or_default(),
                },
            );
        }
        for id in c.secrets.keys() {
            if !c.npcs.contains_key(id) {
                self.report.warning(
                    PathBuf::from("characters/npcs").join(id).join("secrets.md"),
                    None,
                    format!("secrets for `{id}`, who has no profile.json"),
                );
            }
        }
    }

    /// Assembly phase: standing (`world/state.json` → `standing`) names
    /// factions that exist, and every score (starting reputation, an NPC's
    /// regards) stays in −100..=100; an NPC's factions should exist, and
    /// what its answers are about.
    pub(super) fn standing(&mut self, c: &Collected, a: &mut Assembly) {
        a.standing = c
            .world
            .as_ref()
            .and_then(|w| w.value.standing.clone())
            .unwrap_or_default();
        if let Some(w) = &c.world {
            for f in a.standing.reputation.keys() {
                if !a.factions.contains_key(f) {
                    self.report.error(
                        &w.rel,
                        w.line("/standing/reputation"),
                        format!(
                            "standing names faction `{f}`, which world/state.json does not define"
                        ),
                    );
                }
            }
            for (f, v) in &a.standing.reputation {
                if !(-100..=100).contains(v) {
                    self.report.error(
                        &w.rel,
                        w.line("/standing/reputation"),
                        format!("reputation {v} with `{f}` is outside -100..=100"),
                    );
                }
            }
        }
        for ch in a.characters.values() {
            let Some(p) = &ch.profile else { continue };
            let rel = format!("characters/npcs/{}/profile.json", ch.id);
            for f in &p.factions {
                if !a.factions.contains_key(f) {
                    self.report.warning(
                        &rel,
                        None,
                        format!(
                            "`{}` belongs to faction `{f}`, which no file defines",
                            ch.id
                        ),
                    );
                }
            }
            for (what, v) in &p.regards {
                if !(-100..=100).contains(v) {
                    self.report.error(
                        &rel,
                        None,
                        format!("`{}` regards `{what}` at {v}, outside -100..=100", ch.id),
                    );
                }
            }
            for about in p.answers.keys() {
                let known = a.world.threads.contains_key(about)
                    || a.characters.contains_key(about)
                    || a.locations.contains_key(about)
                    || a.items.contains_key(about);
                if !known {
                    self.report.warning(
                        &rel,
                        None,
                        format!(
                            "`{}` has answers about `{about}`, which is no thread, character, \
                             place or item: no one can ask about it",
                            ch.id
                        ),
                    );
                }
            }
        }
    }
}
