//! The story as Twee 3 for Twine's `SugarCube`: a passage per passage, each choice a gated link.
//!
//! `StoryTitle`, `StoryData` (a stable IFID from the story's id, the start), a `StoryInit` setting
//! every codeword false, a passage per passage with its prose as verbatim HTML (so `SugarCube`
//! reads none of it as markup) and each choice a link that sets what it grants, inside an `<<if>>`
//! on what it requires.

use std::fmt::Write as _;

use super::{identifiers, reading_order};
use crate::story::model::StoryFile;

/// The `SugarCube` version the `StoryData` names.
pub const SUGARCUBE: &str = "2.37.3";

/// A passage name or link text Twee and `SugarCube` read as plain text.
fn plain(text: &str) -> String {
    text.replace(['[', '{'], "(")
        .replace([']', '}'], ")")
        .replace('|', "/")
        .replace("->", "→")
        .replace("<-", "←")
        .replace('\n', " ")
}

/// The story in Twee 3.
pub fn write(file: &StoryFile) -> String {
    let vars = identifiers(file.codewords.iter().map(|c| c.id.as_str()), "cw_");
    let names = identifiers(file.passages.iter().map(|p| p.id.as_str()), "p_");
    let mut out = String::new();
    let _ = writeln!(out, ":: StoryTitle\n{}\n", plain(&file.meta.title));
    let data = serde_json::json!({
        "ifid": super::ifid(&file.meta.id),
        "format": "SugarCube",
        "format-version": SUGARCUBE,
        "start": super::start(file).and_then(|s| names.get(s)),
    });
    let _ = writeln!(
        out,
        ":: StoryData\n{}\n",
        serde_json::to_string_pretty(&data).unwrap_or_default()
    );
    let _ = writeln!(out, ":: StoryInit");
    for c in &file.codewords {
        let _ = writeln!(out, "<<set ${} to false>>", vars[&c.id]);
    }
    out.push('\n');
    for i in reading_order(file) {
        let p = &file.passages[i];
        let _ = writeln!(out, ":: {}", names[&p.id]);
        let _ = writeln!(
            out,
            "<html>{}</html>",
            super::html::render(&p.prose)
                .trim()
                .replace("</html>", "&lt;/html&gt;")
        );
        if p.choices.is_empty() {
            let _ = writeln!(out, "\n''THE END''");
        }
        for c in &p.choices {
            let Some(to) = names.get(&c.to) else { continue };
            let setter: Vec<String> = c
                .grants
                .iter()
                .filter_map(|g| vars.get(g))
                .map(|v| format!("${v} to true"))
                .collect();
            let link = if setter.is_empty() {
                format!("[[{}|{to}]]", plain(&c.label))
            } else {
                format!("[[{}|{to}][{}]]", plain(&c.label), setter.join(", "))
            };
            let gate: Vec<String> = c
                .requires
                .iter()
                .filter_map(|r| vars.get(r))
                .map(|v| format!("${v}"))
                .collect();
            if gate.is_empty() {
                let _ = writeln!(out, "{link}");
            } else {
                let _ = writeln!(out, "<<if {}>>{link}<</if>>", gate.join(" and "));
            }
        }
        out.push('\n');
    }
    out
}
