//! QuestFoundry runtime import, checked on both real exports.
//!
//! Exact counts, zero errors, faithful mapping, clear refusals.

mod common;

use std::fs;

use common::{fixture, fixture_json, loreloom, stderr, stdout};
use loreloom::story::{LoadError, SourceFormat, Stats, load_file, open, validate_file};
use serde_json::json;

fn stats_of(name: &str) -> Stats {
    let loaded = load_file(&fixture(name)).unwrap();
    assert_eq!(loaded.source, SourceFormat::QuestFoundry);
    let (story, report) = validate_file(loaded.file);
    Stats::of(&story.unwrap(), report.walk.as_ref().unwrap())
}

#[test]
fn keepers_bargain_imports_with_exact_counts() {
    assert_eq!(
        stats_of("keepers-bargain.json"),
        Stats {
            passages: 9,
            choices: 15,
            endings: 2,
            codewords: 4,
            entities: 4,
            codex_entries: 4,
            illustrations: 0,
            reachable_passages: 9,
            reachable_endings: 2,
        }
    );
}

#[test]
fn small_kindnesses_imports_with_exact_counts() {
    assert_eq!(
        stats_of("small-kindnesses.json"),
        Stats {
            passages: 22,
            choices: 28,
            endings: 2,
            codewords: 6,
            entities: 4,
            codex_entries: 4,
            illustrations: 0,
            reachable_passages: 22,
            reachable_endings: 2,
        }
    );
}

#[test]
fn both_fixtures_validate_with_zero_errors() {
    for name in ["keepers-bargain.json", "small-kindnesses.json"] {
        let out = loreloom(&["validate", fixture(name).to_str().unwrap()], None);
        assert!(out.status.success(), "{name}: {}", stdout(&out));
        assert!(stderr(&out).contains(": 0 errors,"), "{}", stderr(&out));
        assert!(!stdout(&out).contains("error["), "{}", stdout(&out));
    }
}

#[test]
fn stats_json_prints_one_object_with_every_count() {
    let out = loreloom(
        &[
            "stats",
            fixture("keepers-bargain.json").to_str().unwrap(),
            "--json",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        value,
        json!({"passages":9,"choices":15,"endings":2,"codewords":4,"entities":4,
               "codex_entries":4,"illustrations":0,"reachable_passages":9,"reachable_endings":2})
    );
}

#[test]
fn flags_entities_endings_and_codex_map_faithfully() {
    let package = open(&fixture("keepers-bargain.json")).unwrap();
    let story = &package.story;
    assert_eq!(story.title(), "The Keeper's Bargain");
    assert_eq!(story.file().meta.id, "keepers-bargain");
    assert_eq!(story.passage(story.start()).id, "p-arrival");
    let flag = &story.file().codewords[story.codeword_ix("flag:elias-knows").unwrap().index()];
    assert_eq!(flag.name.as_deref(), Some("CONFESSED"));
    assert_eq!(
        flag.description.as_deref(),
        Some("Elias knows what the light holds.")
    );
    let ending = story.passage(story.passage_ix("p-long-watch").unwrap());
    assert_eq!(ending.title.as_deref(), Some("The Long Watch"));
    let elias = story.entity(story.entity_ix("character:cartographer").unwrap());
    assert_eq!(
        (elias.kind.as_str(), elias.name.as_str()),
        ("character", "Elias Wren")
    );
    assert_eq!(elias.overlays.len(), 2);
    for entry in &story.file().codex {
        assert_eq!(entry.rank, 1);
        assert!(entry.visible_when.is_empty());
        assert!(story.entity_ix(&entry.entity).is_some());
    }
}

#[test]
fn art_and_cover_become_illustrations_and_title_art() {
    let dir = tempfile::tempdir().unwrap();
    let mut export = fixture_json("keepers-bargain.json");
    export["art"] = json!([{"passage": "p-tremor", "image": "art/tremor.png", "caption": "The sea draws back its breath."}]);
    export["cover"] = json!({"image": "art/cover.png"});
    export["some_future_field"] = json!({"ignored": true});
    let path = dir.path().join("kb.json");
    fs::write(&path, export.to_string()).unwrap();
    let package = open(&path).unwrap();
    let story = &package.story;
    assert_eq!(story.file().meta.cover.as_deref(), Some("art/cover.png"));
    let tremor = story.passage_ix("p-tremor").unwrap();
    let art = &story.file().illustrations[story.illustrations(tremor)[0]];
    assert_eq!(art.asset, "art/tremor.png");
    assert_eq!(art.caption, "The sea draws back its breath.");
    assert_eq!(package.root, dir.path());
}

#[test]
fn wrong_format_or_version_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut export = fixture_json("keepers-bargain.json");
    export["version"] = json!(2);
    let path = dir.path().join("v2.json");
    fs::write(&path, export.to_string()).unwrap();
    let err = load_file(&path).unwrap_err();
    assert!(matches!(
        err,
        LoadError::UnsupportedVersion { found: 2, .. }
    ));
    assert!(
        err.to_string()
            .contains("questfoundry-runtime version 2 is not supported")
    );

    export["version"] = json!(1);
    export["format"] = json!("twine-archive");
    fs::write(&path, export.to_string()).unwrap();
    let out = loreloom(&["validate", path.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown format \"twine-archive\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn broken_files_name_the_file_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.json");
    fs::write(&path, "{\"format\": \"loreloom-story\", \"version\": 1, ").unwrap();
    let err = load_file(&path).unwrap_err();
    assert!(matches!(err, LoadError::Syntax { .. }));
    assert!(err.to_string().starts_with(&path.display().to_string()));

    fs::write(
        &path,
        json!({"format": "loreloom-story", "version": 1, "meta": {"id": "x", "title": "X"},
               "passages": [{"id": "a", "prose": "p", "choices": [{"label": "Go", "to": "a", "grant": ["typo"]}]}]})
        .to_string(),
    )
    .unwrap();
    let err = load_file(&path).unwrap_err().to_string();
    assert!(err.contains("passages[0].choices[0]"), "{err}");
    assert!(err.contains("unknown field `grant`"), "{err}");

    let empty = tempfile::tempdir().unwrap();
    let err = load_file(empty.path()).unwrap_err();
    assert!(matches!(err, LoadError::NotAPackage { .. }));
}

#[test]
fn an_ending_with_choices_drops_them_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let mut export = fixture_json("keepers-bargain.json");
    export["passages"]["p-long-watch"]["choices"] =
        json!([{"label": "Row out once more", "to": "p-arrival", "requires": [], "grants": []}]);
    let path = dir.path().join("kb.json");
    fs::write(&path, export.to_string()).unwrap();
    let loaded = load_file(&path).unwrap();
    assert_eq!(loaded.notes.len(), 1);
    assert!(loaded.notes[0].to_string().contains("p-long-watch"));
    let p = loaded
        .file
        .passages
        .iter()
        .find(|p| p.id == "p-long-watch")
        .unwrap();
    assert!(p.choices.is_empty());
}

#[test]
fn missing_art_is_a_warning_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut export = fixture_json("keepers-bargain.json");
    export["art"] = json!([{"passage": "p-tremor", "image": "art/tremor.png", "caption": "The sea draws back."}]);
    let path = dir.path().join("kb.json");
    fs::write(&path, export.to_string()).unwrap();
    let out = loreloom(&["validate", path.to_str().unwrap()], None);
    assert!(out.status.success(), "a missing picture is not an error");
    assert!(
        stdout(&out).contains("warning[missing-asset] asset `art/tremor.png`: named by illustration `art:p-tremor:1` but not found"),
        "{}",
        stdout(&out)
    );
    fs::create_dir(dir.path().join("art")).unwrap();
    fs::write(dir.path().join("art/tremor.png"), b"png").unwrap();
    let out = loreloom(&["validate", path.to_str().unwrap()], None);
    assert!(!stdout(&out).contains("missing-asset"));
}

#[test]
fn validate_exits_1_on_findings_and_prints_one_per_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("story.json"),
        json!({"format": "loreloom-story", "version": 1, "meta": {"id": "x", "title": "X"},
               "start": "a",
               "codewords": [{"id": "k"}],
               "passages": [
                   {"id": "a", "prose": "A.", "choices": [{"label": "Try the door", "to": "b", "requires": ["k"]},
                                                       {"label": "Wait", "to": "c"}]},
                   {"id": "b", "prose": "B."},
                   {"id": "c", "prose": "C."},
               ]})
        .to_string(),
    )
    .unwrap();
    let out = loreloom(&["validate", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "error[unreachable-passage] passage `b`: cannot be reached from `a` under any codeword state\n\
         error[impossible-gate] passage `a` choice 1: requires `k`, which no choice grants\n"
    );
    assert!(
        stderr(&out).contains("2 errors, 0 warnings"),
        "{}",
        stderr(&out)
    );
}
