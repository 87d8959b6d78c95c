//! `schemas/story.schema.json` is generated from the story model; this test keeps it current and checks our stories against the model.
//!
//! To regenerate after changing `src/story/model.rs`: `UPDATE_SCHEMAS=1 cargo test --test schema`.

mod common;

use std::path::Path;

use loreloom::story::model::StoryFile;

#[test]
fn the_story_schema_matches_the_model() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/story.schema.json");
    let generated = serde_json::to_string_pretty(&schemars::schema_for!(StoryFile)).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with src/story/model.rs; run `UPDATE_SCHEMAS=1 cargo test --test schema`",
        path.display()
    );
}

#[test]
fn every_bundled_story_is_a_valid_version_1_package() {
    let campaigns = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let mut found = 0;
    for entry in std::fs::read_dir(&campaigns).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("story.json").is_file() {
            continue;
        }
        found += 1;
        let package = loreloom::story::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let story = &package.story;
        let report = loreloom::story::validate(story);
        assert_eq!(
            report.diagnostics,
            vec![],
            "{} validates cleanly",
            dir.display()
        );
        let missing = loreloom::story::load::check_assets(story.file(), &package.root);
        assert_eq!(
            missing,
            vec![],
            "every asset {} names exists",
            dir.display()
        );
    }
    assert!(found >= 1, "campaigns/ holds the default story");
}
