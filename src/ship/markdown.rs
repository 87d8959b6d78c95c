//! The story as a Markdown manuscript: cover, passages in reading order, and the codex at the end.
//!
//! The cover; every passage in reading order with an anchor, its pictures with their captions, its
//! prose, and its choices as links with what they require and grant; endings marked; the codex's
//! tiers at the end with what unlocks each.

use std::fmt::Write as _;

use super::{identifiers, reading_order};
use crate::story::model::StoryFile;

/// The story as a manuscript.
pub fn write(file: &StoryFile) -> String {
    let anchors = identifiers(file.passages.iter().map(|p| p.id.as_str()), "p-");
    let mut out = String::new();
    let _ = writeln!(out, "# {}\n", file.meta.title);
    if let Some(a) = &file.meta.author {
        let _ = writeln!(out, "*by {a}*\n");
    }
    if let Some(d) = &file.meta.description {
        let _ = writeln!(out, "{d}\n");
    }
    if let Some(cover) = &file.meta.cover {
        let _ = writeln!(out, "![{}]({})\n", alt(&file.meta.title), link(cover));
    }
    let endings = file
        .passages
        .iter()
        .filter(|p| p.choices.is_empty())
        .count();
    let _ = writeln!(
        out,
        "{} passages, {} endings, {} codewords. Choices link to the passage they lead to; a choice marked *needs* is offered only to a reader holding those codewords.\n",
        file.passages.len(),
        endings,
        file.codewords.len()
    );
    for i in reading_order(file) {
        let p = &file.passages[i];
        let start = super::start(file) == Some(p.id.as_str());
        let _ = writeln!(
            out,
            "<a id=\"{}\"></a>\n## {}{}\n",
            anchors[&p.id],
            p.title.as_deref().unwrap_or(&p.id),
            if start { " (start)" } else { "" }
        );
        for art in file
            .illustrations
            .iter()
            .filter(|i| i.depicts.contains(&p.id))
        {
            let _ = writeln!(out, "![{}]({})\n", alt(&art.caption), link(&art.asset));
            if !art.caption.trim().is_empty() {
                let _ = writeln!(out, "*{}*\n", art.caption.trim());
            }
        }
        let _ = writeln!(out, "{}\n", p.prose.trim());
        if p.choices.is_empty() {
            let _ = writeln!(out, "**THE END**\n");
            continue;
        }
        for c in &p.choices {
            let mut notes = Vec::new();
            if !c.requires.is_empty() {
                notes.push(format!("needs {}", c.requires.join(", ")));
            }
            if !c.grants.is_empty() {
                notes.push(format!("gives {}", c.grants.join(", ")));
            }
            let target = anchors
                .get(&c.to)
                .map_or_else(String::new, |a| format!("#{a}"));
            let _ = writeln!(
                out,
                "- [{}]({target}){}",
                c.label.replace(['[', ']'], ""),
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(" *({})*", notes.join("; "))
                }
            );
        }
        out.push('\n');
    }
    codex(file, &mut out);
    out
}

/// Text safe inside `![…]`.
fn alt(text: &str) -> String {
    text.replace(['[', ']', '\n'], " ").trim().to_owned()
}

/// A relative path safe inside `(…)`.
fn link(path: &str) -> String {
    path.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

/// The codex: each entity's tiers by rank, with what unlocks each.
fn codex(file: &StoryFile, out: &mut String) {
    if file.codex.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Codex\n");
    for entity in &file.entities {
        let mut tiers: Vec<_> = file
            .codex
            .iter()
            .filter(|c| c.entity == entity.id)
            .collect();
        if tiers.is_empty() {
            continue;
        }
        tiers.sort_by_key(|t| t.rank);
        let _ = writeln!(out, "### {}\n", entity.name);
        for t in tiers {
            let when = if t.visible_when.is_empty() {
                "from the start".to_owned()
            } else {
                format!("once {}", t.visible_when.join(", "))
            };
            let _ = writeln!(
                out,
                "**{}** *({when})*: {}\n",
                t.title.as_deref().unwrap_or(&format!("Tier {}", t.rank)),
                t.content.trim()
            );
        }
    }
}
