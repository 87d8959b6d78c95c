//! The campaign's people, clocks, relations, factions and memories as entities, kept in step.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bevy::platform::cell::SyncCell;
use bevy::prelude::*;

use super::components::{
    Baked, Character, Chattiness, ClockState, Faction, Inventory, Memory, Perception, Present,
    RelationEdge, SessionEntity, StatBlock,
};
use super::view::{SceneView, SkillsView};
use super::{ActiveSession, SessionSystems, WorldChanged};
use crate::session::turn::{PERSONA, SessionState};
use crate::transcript::DEFAULT_LAMBDA;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Update, sync_world.in_set(SessionSystems::Sync));
}

/// The campaign's own picture of a character, when its file is there.
pub(super) fn campaign_portrait(
    campaign: &crate::campaign::Campaign,
    c: &crate::campaign::Character,
) -> Option<PathBuf> {
    let path = campaign.root.join(c.portrait.as_ref()?);
    crate::files::is_file(&path).then_some(path)
}

/// The world changed: its entities despawned and spawned again from the
/// session state, and the scene and skill state on show with them.
fn sync_world(
    mut changed: MessageReader<WorldChanged>,
    mut session: ResMut<ActiveSession>,
    mut scene: ResMut<SceneView>,
    mut skills: ResMut<SkillsView>,
    old: Query<Entity, With<SessionEntity>>,
    mut commands: Commands,
) {
    if changed.read().count() == 0 {
        return;
    }
    let session = &mut *session;
    let Some(ctl) = session.controller.as_mut().map(SyncCell::get) else {
        return;
    };
    for e in &old {
        commands.entity(e).despawn();
    }
    let state = &ctl.state;
    // Written on every change of the world, equal or not: the scenery follows it.
    scene.scene.clone_from(&state.world.scene);
    if skills.state != state.world.skills {
        // A rewind or a load: the skill state of that scene, nothing lit.
        skills.state.clone_from(&state.world.skills);
        skills.changed.clear();
    }
    spawn_people(&mut commands, state, &session.drawn_portraits);
    for clock in state.world.clocks.values() {
        commands.spawn((SessionEntity, ClockState(clock.clone())));
    }
    for relation in &state.world.relations {
        commands.spawn((SessionEntity, RelationEdge(relation.clone())));
    }
    for (id, reputation) in &state.world.reputation {
        let name = state
            .campaign
            .factions
            .get(id)
            .map_or_else(|| id.clone(), |f| f.name.clone());
        commands.spawn((
            SessionEntity,
            Faction {
                id: id.clone(),
                name,
                reputation: *reputation,
            },
        ));
    }
}

/// Each of the campaign's characters, with their stats, inventory, standing
/// and whether present, their memories as children.
fn spawn_people(commands: &mut Commands, state: &SessionState, drawn: &BTreeMap<String, PathBuf>) {
    let present = state.world.present();
    for (id, c) in &state.campaign.characters {
        let mut entity = commands.spawn((
            SessionEntity,
            Character {
                id: id.clone(),
                name: c.name.clone(),
                persona: id == PERSONA,
                portrait: campaign_portrait(&state.campaign, c).or_else(|| drawn.get(id).cloned()),
            },
            Chattiness(c.chattiness),
            StatBlock(
                state
                    .world
                    .characters
                    .get(id)
                    .map(|s| s.stats.clone())
                    .unwrap_or_default(),
            ),
            Inventory(state.world.inventory.get(id).cloned().unwrap_or_default()),
        ));
        if c.baked {
            entity.insert(Baked);
        }
        if let Some(p) = state.world.perception.get(id) {
            entity.insert(Perception(*p));
        }
        if present.contains(id) {
            entity.insert(Present);
        }
        if let Some(observations) = state.observations.get(id) {
            entity.with_children(|children| {
                for o in observations {
                    children.spawn((
                        SessionEntity,
                        Memory {
                            priority: o.priority(state.play_minutes, DEFAULT_LAMBDA),
                            observation: o.clone(),
                        },
                    ));
                }
            });
        }
    }
}
