//! The story as one self-contained HTML file: a small player, the story and its pictures inlined.
//!
//! The player (`assets/ship/player.html`) shows passages, gated choices, grants, endings, the codex
//! in ranked tiers unlocked by codewords, and illustrations with captions, and keeps where the
//! reader is in localStorage. The story and its pictures are inlined as data, so the file opens
//! from disk with no network.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::story::model::StoryFile;

/// The player page, with `__TITLE__` and `__STORY_JSON__` to fill.
const PLAYER: &str = include_str!("../../assets/ship/player.html");

/// Markdown to HTML (pulldown-cmark; raw HTML in the prose is shown as
/// text), well-formed as XHTML too.
pub fn render(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser};
    let events = Parser::new(markdown).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A picture as a data URL, if the file is there.
fn inline(root: &Path, asset: &str) -> Option<String> {
    let bytes = std::fs::read(root.join(asset)).ok()?;
    let mime = super::media_type(asset)?;
    Some(format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    ))
}

/// The page, and notes (pictures that could not be inlined).
pub fn write(file: &StoryFile, root: &Path) -> (String, Vec<String>) {
    let mut notes = Vec::new();
    let mut passages = Map::new();
    for p in &file.passages {
        let mut art = Vec::new();
        for i in file
            .illustrations
            .iter()
            .filter(|i| i.depicts.contains(&p.id))
        {
            match inline(root, &i.asset) {
                Some(src) => art.push(json!({"src": src, "caption": i.caption})),
                None => notes.push(format!(
                    "{} (illustration `{}`) is missing or not a picture; left out",
                    i.asset, i.id
                )),
            }
        }
        passages.insert(
            p.id.clone(),
            json!({
                "html": render(&p.prose),
                "choices": p.choices.iter().map(|c| json!({
                    "label": c.label, "to": c.to, "requires": c.requires, "grants": c.grants,
                })).collect::<Vec<_>>(),
                "art": art,
            }),
        );
    }
    let codex: Vec<Value> = file
        .codex
        .iter()
        .map(|c| {
            let name = file
                .entities
                .iter()
                .find(|e| e.id == c.entity)
                .map_or(c.entity.as_str(), |e| e.name.as_str());
            let body = match &c.title {
                Some(t) => format!("**{t}**\n\n{}", c.content),
                None => c.content.clone(),
            };
            json!({"entity": c.entity, "name": name, "rank": c.rank, "when": c.visible_when, "html": render(&body)})
        })
        .collect();
    let data = json!({
        "id": file.meta.id,
        "title": file.meta.title,
        "start": super::start(file),
        "passages": passages,
        "codex": codex,
    });
    // `</` inside a script element would end it.
    let json = data.to_string().replace("</", "<\\/");
    let page = PLAYER
        .replace("__TITLE__", &super::escape_xml(&file.meta.title))
        .replace("__STORY_JSON__", &json);
    (page, notes)
}
