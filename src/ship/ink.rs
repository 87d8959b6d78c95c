//! The story as inkle's ink: a knot per passage, a boolean `VAR` per codeword, conditional choices.
//!
//! A knot per passage (tagged with its id and its pictures), a boolean `VAR` per codeword, each
//! choice sticky and conditional on the codewords it requires, setting the ones it grants, `-> END`
//! at endings; text escaped so prose is never read as ink.

use std::fmt::Write as _;

use super::{identifiers, reading_order};
use crate::story::model::StoryFile;

/// Words that open a line of ink logic when they start a line.
const KEYWORDS: [&str; 6] = ["VAR", "CONST", "INCLUDE", "EXTERNAL", "TODO", "LIST"];

/// A line of text ink prints as it is.
pub fn text(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let trimmed = line.trim();
    for (i, c) in trimmed.chars().enumerate() {
        let opens_line = i == 0
            && (matches!(c, '-' | '*' | '+' | '=')
                || KEYWORDS.iter().any(|k| trimmed.starts_with(k)));
        if opens_line
            || matches!(
                c,
                '{' | '}' | '[' | ']' | '#' | '|' | '\\' | '~' | '<' | '>' | '/'
            )
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The story in ink.
pub fn write(file: &StoryFile) -> String {
    let knots = identifiers(file.passages.iter().map(|p| p.id.as_str()), "p_");
    let vars = identifiers(file.codewords.iter().map(|c| c.id.as_str()), "cw_");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// {} (shipped by Loreloom)",
        file.meta.title.replace('\n', " ")
    );
    let _ = writeln!(out, "# title: {}", text(&file.meta.title));
    for c in &file.codewords {
        let _ = writeln!(out, "VAR {} = false", vars[&c.id]);
    }
    if let Some(k) = super::start(file).and_then(|s| knots.get(s)) {
        let _ = writeln!(out, "-> {k}");
    }
    for i in reading_order(file) {
        let p = &file.passages[i];
        let _ = writeln!(out, "\n=== {} ===", knots[&p.id]);
        let _ = writeln!(out, "# passage: {}", text(&p.id));
        // Pictures as tags (`# image:` as inky's players read it).
        for art in file
            .illustrations
            .iter()
            .filter(|i| i.depicts.contains(&p.id))
        {
            let _ = writeln!(out, "# image: {}", text(&art.asset));
        }
        for line in p.prose.lines().filter(|l| !l.trim().is_empty()) {
            let _ = writeln!(out, "{}", text(line));
        }
        if p.choices.is_empty() {
            let _ = writeln!(out, "-> END");
            continue;
        }
        for c in &p.choices {
            let mut gate = String::new();
            for v in c.requires.iter().filter_map(|r| vars.get(r)) {
                let _ = write!(gate, "{{{v}}} ");
            }
            let _ = writeln!(out, "+ {gate}[{}]", text(&c.label));
            for g in c.grants.iter().filter_map(|g| vars.get(g)) {
                let _ = writeln!(out, "    ~ {g} = true");
            }
            match knots.get(&c.to) {
                Some(k) => {
                    let _ = writeln!(out, "    -> {k}");
                }
                None => {
                    let _ = writeln!(out, "    -> END");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_is_never_read_as_ink() {
        assert_eq!(
            text("- a list? {no} [no] #no"),
            "\\- a list? \\{no\\} \\[no\\] \\#no"
        );
        assert_eq!(text("VAR x = 1"), "\\VAR x = 1");
        assert_eq!(
            text("go -> there // not a comment"),
            "go -\\> there \\/\\/ not a comment"
        );
        assert_eq!(text("Plain words."), "Plain words.");
    }
}
