//! Portraits drawn off the frame (#25) for the characters the campaign gives none.

use std::path::PathBuf;

use bevy::prelude::*;
use tracing::warn;

use super::components::Character;
use super::entities::campaign_portrait;
use super::view::{SceneView, SkillAsset, SkillsView};
use super::{ActiveSession, SessionSystems};
use crate::session::controller::Controller;
use crate::session::skills::PortraitError;
use crate::session::turn::PERSONA;

pub(super) fn plugin(app: &mut App) {
    app.add_systems(Update, collect_portraits.in_set(SessionSystems::Collect));
}

/// A character's portrait from the `character-portraits` skill, or why not.
pub(super) type DrawnPortrait = (String, Result<Option<PathBuf>, PortraitError>);

/// Starts drawing, off the frame, a portrait for each character the campaign
/// gives none (those present first); `None` when there is none to draw.
pub(super) fn draw_portraits(
    ctl: &Controller,
) -> Option<crossbeam_channel::Receiver<DrawnPortrait>> {
    let state = &ctl.state;
    let present = state.world.present();
    let mut wanted: Vec<(String, String, String)> = state
        .campaign
        .characters
        .iter()
        .filter(|(id, c)| id.as_str() != PERSONA && campaign_portrait(&state.campaign, c).is_none())
        .map(|(id, c)| (id.clone(), c.name.clone(), c.description.clone()))
        .collect();
    if wanted.is_empty()
        || state
            .skills
            .found
            .get(crate::session::skills::PORTRAITS)
            .is_none()
    {
        return None;
    }
    wanted.sort_by_key(|(id, _, _)| !present.contains(id));
    let skills = state.skills.clone();
    let (tx, rx) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        for (id, name, description) in wanted {
            let drawn = crate::session::skills::portrait(&skills, &id, &name, &description);
            if tx.send((id, drawn)).is_err() {
                return;
            }
        }
    });
    Some(rx)
}

/// The portraits drawn so far onto the stage, and into the gallery.
fn collect_portraits(
    mut session: ResMut<ActiveSession>,
    scene: Res<SceneView>,
    mut skills: ResMut<SkillsView>,
    mut people: Query<&mut Character>,
) {
    let Some(rx) = &session.portraits else {
        return;
    };
    let mut drawn: Vec<DrawnPortrait> = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(d) => drawn.push(d),
            Err(crossbeam_channel::TryRecvError::Empty) => break,
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                // Every portrait drawn.
                session.portraits = None;
                break;
            }
        }
    }
    for (id, result) in drawn {
        // #43: a skill that runs by itself at session open is listed with
        // the turn's tools, so the player sees it ran and how it went.
        skills.tools.push(super::view::ToolRow {
            tool_id: format!("portrait of {id}"),
            skill: crate::session::skills::PORTRAITS.into(),
            status: Some(if result.is_ok() {
                crate::skills::execute::ToolState::Success
            } else {
                crate::skills::execute::ToolState::Failed
            }),
            retries: 0,
            ms: None,
            lines: match &result {
                Ok(Some(path)) => vec![format!("drew {}", path.display())],
                Ok(None) => vec!["no picture".into()],
                Err(_) => Vec::new(),
            },
            error: result.as_ref().err().map(ToString::to_string),
        });
        match result {
            Ok(Some(path)) => {
                for mut c in &mut people {
                    if c.id == id {
                        c.portrait = Some(path.clone());
                    }
                }
                // In the gallery too, with what else the skills made.
                skills.assets.push(SkillAsset {
                    skill: crate::session::skills::PORTRAITS.into(),
                    kind: "image".into(),
                    path: path.clone(),
                    shown: true,
                    scene: scene.scene_index,
                });
                session.drawn_portraits.insert(id, path);
            }
            Ok(None) => {}
            Err(e) => warn!("{e}; the stage keeps the silhouette"),
        }
    }
}
