//! The story as QuestFoundry's `questfoundry-runtime` version 1 JSON.
//!
//! The shape QuestFoundry NG's `qf export json` writes: passages by id with prose, choices and an
//! `ending` where no choice leaves; codewords as flags; entities with base and overlays; codex
//! entries; art per depicted passage; the cover. The format has no codex tiers, so only entries
//! visible from the start ship, and what was left out is said.

use serde_json::{Map, Value, json};

use crate::story::model::StoryFile;

/// The runtime JSON, and notes on what the format could not carry.
pub fn write(file: &StoryFile) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut passages = Map::new();
    for p in &file.passages {
        let mut out = json!({
            "prose": p.prose,
            "choices": p.choices.iter().map(|c| json!({
                "label": c.label, "to": c.to, "requires": c.requires, "grants": c.grants,
            })).collect::<Vec<_>>(),
        });
        if p.choices.is_empty() {
            out["ending"] = json!({
                "id": format!("e-{}", p.id.trim_start_matches("p-")),
                "title": p.title.as_deref().unwrap_or(&p.id),
            });
        }
        passages.insert(p.id.clone(), out);
    }
    let flags: Map<String, Value> = file
        .codewords
        .iter()
        .map(|c| {
            (
                c.id.clone(),
                json!({"description": c.description, "codeword": c.name}),
            )
        })
        .collect();
    let entities: Map<String, Value> = file
        .entities
        .iter()
        .map(|e| {
            (
                e.id.clone(),
                json!({"name": e.name, "concept": e.concept, "base": e.base,
                       "overlays": e.overlays.iter().map(|o| json!({"when": o.when, "details": o.details})).collect::<Vec<_>>()}),
            )
        })
        .collect();
    let mut codex = Vec::new();
    let mut gated = 0;
    for c in &file.codex {
        if !c.visible_when.is_empty() {
            gated += 1;
            continue;
        }
        let title = c.title.clone().unwrap_or_else(|| {
            file.entities
                .iter()
                .find(|e| e.id == c.entity)
                .map_or_else(|| c.entity.clone(), |e| e.name.clone())
        });
        codex.push(json!({"entity": c.entity, "title": title, "body": c.content}));
    }
    if gated > 0 {
        notes.push(format!(
            "{gated} codex entries unlock with codewords; the runtime format has no codex tiers, so they are left out (no spoilers shipped)"
        ));
    }
    let art: Vec<Value> = file
        .illustrations
        .iter()
        .flat_map(|i| {
            i.depicts
                .iter()
                .map(move |p| json!({"passage": p, "image": i.asset, "caption": i.caption}))
        })
        .collect();
    let mut doc = json!({
        "format": crate::story::questfoundry::QF_FORMAT,
        "version": crate::story::questfoundry::QF_VERSION,
        "meta": {"title": file.meta.title},
        "start": super::start(file),
        "passages": passages,
        "flags": flags,
        "entities": entities,
        "codex": codex,
        "art": art,
    });
    if let Some(cover) = &file.meta.cover {
        doc["cover"] = json!({"image": cover});
    }
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    (text, notes)
}
