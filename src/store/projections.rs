//! The world tables (clocks, inventory, facts, threads), projected from a scene's world.
//!
//! A rewind rebuilds them from the world it returns to; a played turn rewrites
//! only the rows its state operations touched.

use rusqlite::params;

use super::json;
use crate::rules::{Change, Target, WorldState};

pub(super) fn rebuild_projections(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
) -> rusqlite::Result<()> {
    for table in ["facts", "clocks", "inventory", "threads"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE session_id = ?1"),
            [session],
        )?;
    }
    for id in world.clocks.keys() {
        write_clock(tx, session, world, id)?;
    }
    for (owner, items) in &world.inventory {
        for item in items.keys() {
            write_inventory(tx, session, world, owner, item)?;
        }
    }
    for f in &world.facts {
        write_fact(tx, session, scene, world, &f.subject, &f.predicate)?;
    }
    for id in world.threads.keys() {
        write_thread(tx, session, world, id)?;
    }
    Ok(())
}

/// Rewrite only the rows the turn's state ops touched.
pub(super) fn update_projections(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
    changes: &[Change],
) -> rusqlite::Result<()> {
    for change in changes {
        match Target::parse(&change.op.path) {
            Ok(Target::Clock(id)) => write_clock(tx, session, world, &id)?,
            Ok(Target::Inventory { owner, item }) => {
                write_inventory(tx, session, world, &owner, &item)?;
            }
            Ok(Target::Fact { subject, predicate }) => {
                write_fact(tx, session, scene, world, &subject, &predicate)?;
            }
            Ok(Target::ThreadStatus(id) | Target::ThreadStakes(id)) => {
                write_thread(tx, session, world, &id)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn write_clock(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    id: &str,
) -> rusqlite::Result<()> {
    let Some(c) = world.clocks.get(id) else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO clocks (session_id, id, name, value, max, triggers_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session,
        id,
        c.name,
        c.value,
        c.max,
        json(&c.triggers)
    ])?;
    Ok(())
}

fn write_inventory(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    owner: &str,
    item: &str,
) -> rusqlite::Result<()> {
    match world.inventory.get(owner).and_then(|i| i.get(item)) {
        Some(&qty) if qty > 0 => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO inventory (session_id, owner_id, item_id, qty)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![session, owner, item, qty])?;
        }
        _ => {
            tx.prepare_cached(
                "DELETE FROM inventory WHERE session_id = ?1 AND owner_id = ?2 AND item_id = ?3",
            )?
            .execute(params![session, owner, item])?;
        }
    }
    Ok(())
}

fn write_fact(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    scene: &str,
    world: &WorldState,
    subject: &str,
    predicate: &str,
) -> rusqlite::Result<()> {
    let Some(f) = world
        .facts
        .iter()
        .find(|f| f.subject == subject && f.predicate == predicate)
    else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO facts (session_id, subject_id, predicate, object_json, visibility,
           scene_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session,
        subject,
        predicate,
        f.object.to_string(),
        json(&f.visibility).trim_matches('"'),
        scene
    ])?;
    Ok(())
}

fn write_thread(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    world: &WorldState,
    id: &str,
) -> rusqlite::Result<()> {
    let Some(t) = world.threads.get(id) else {
        return Ok(());
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO threads (session_id, id, title, status, stakes_json)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        session,
        id,
        t.title,
        t.status,
        t.stakes.to_string()
    ])?;
    Ok(())
}
