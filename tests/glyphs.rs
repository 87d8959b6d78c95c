//! Every character a story or campaign uses renders in the window's fonts (#22).
//!
//! U+2011 NON-BREAKING HYPHEN, typographic quotes, dashes and ellipses from real QuestFoundry
//! exports and the bundled content, none falling back to the missing-glyph box.

#![cfg(feature = "gui")]

use std::collections::BTreeSet;
use std::path::Path;

use bevy_egui::egui;

/// Every non-ASCII character in the text files under `dir`.
fn characters_in(dir: &Path, found: &mut BTreeSet<char>) {
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            characters_in(&path, found);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["json", "md", "txt", "yaml", "ron"].contains(&e))
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            found.extend(text.chars().filter(|c| !c.is_ascii() && !c.is_control()));
        }
    }
}

#[test]
fn every_character_of_the_fixtures_and_bundled_content_has_a_glyph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = BTreeSet::new();
    characters_in(&root.join("../shared/fixtures"), &mut found);
    characters_in(&root.join("campaigns"), &mut found);
    assert!(found.len() >= 5, "non-ASCII text in the content: {found:?}");
    // What real QuestFoundry exports use besides (a 159-passage story used
    // U+2011 hundreds of times): the non-breaking and figure hyphens, dashes,
    // typographic quotes, the ellipsis, a non-breaking space, primes.
    found.extend("\u{2011}\u{2010}\u{2012}–—‘’‚“”„…\u{a0}\u{2009}\u{202f}′″•·×é".chars());
    // The fonts the window draws with, family by family, in fallback order.
    let definitions = loreloom::ui::fonts::definitions();
    let faces = |family: &egui::FontFamily| -> Vec<ttf_parser::Face<'_>> {
        definitions.families[family]
            .iter()
            .map(|name| {
                let data = &definitions.font_data[name];
                ttf_parser::Face::parse(&data.font, data.index).unwrap()
            })
            .collect()
    };
    let proportional = faces(&egui::FontFamily::Proportional);
    let monospace = faces(&egui::FontFamily::Monospace);
    let drawn =
        |faces: &[ttf_parser::Face<'_>], c: char| faces.iter().any(|f| f.glyph_index(c).is_some());
    let missing: Vec<String> = found
        .iter()
        .filter(|c| !(drawn(&proportional, **c) && drawn(&monospace, **c)))
        .map(|c| format!("U+{:04X} {c}", u32::from(*c)))
        .collect();
    assert!(missing.is_empty(), "no glyph for: {missing:?}");
}
