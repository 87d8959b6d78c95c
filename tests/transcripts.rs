//! Golden transcripts: the real binary plays the fixtures and the bundled story, scripted or typed.

mod common;

use common::{default_story, fixture, loreloom, redact, stderr, stdout};

fn play(path: &std::path::Path, choices: &str) -> String {
    let out = loreloom(
        &[
            "play",
            "--headless",
            path.to_str().unwrap(),
            "--choices",
            choices,
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn keepers_bargain_confession_route() {
    let text = play(&fixture("keepers-bargain.json"), "1,1,3,1");
    assert!(text.ends_with("THE END: The Long Watch\n"));
    insta::assert_snapshot!(text);
}

#[test]
fn keepers_bargain_lie_route() {
    // The lie unlocks a gated choice at the tremor (3: walk the gallery alone).
    let text = play(&fixture("keepers-bargain.json"), "2,1,3,2");
    assert!(text.contains("  3. Walk the gallery alone before answering\n"));
    assert!(!text.contains("Ask Elias what he would do"));
    assert!(text.ends_with("THE END: The Wide Water\n"));
    insta::assert_snapshot!(text);
}

#[test]
fn small_kindnesses_first_choice_route() {
    let text = play(&fixture("small-kindnesses.json"), &["1"; 30].join(","));
    assert!(text.contains("THE END: "));
    insta::assert_snapshot!(text);
}

#[test]
fn the_default_story_plays_to_every_ending() {
    let routes = [
        (
            "orchard_keeps_its_word",
            "1,1,1,2,1,1,1,2,1,2,2",
            "The Orchard Keeps Its Word",
        ),
        ("a_fair_price", "1,1,1,1,2,1,2,1,2,1", "A Fair Price"),
        ("furnace_wind", "3,1,1,1,2,2,1,1,3,1,2", "The Furnace Wind"),
        (
            "every_word_at_once",
            "2,2,1,4,1,1,2,2,1,2",
            "Every Word at Once",
        ),
    ];
    for (name, route, ending) in routes {
        let out = loreloom(
            &[
                "play",
                "--headless",
                default_story().to_str().unwrap(),
                "--choices",
                route,
            ],
            None,
        );
        let text = stdout(&out);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert!(
            text.ends_with(&format!("THE END: {ending}\n")),
            "{name}: {text}"
        );
        insta::assert_snapshot!(format!("default_story_{name}"), text);
    }
}

#[test]
fn an_interactive_session_with_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("slot1.json");
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not a save").unwrap();
    let save = save.to_str().unwrap();
    let input = [
        ":help",
        "1",
        ":state",
        ":why",
        "9",
        "lighthouse",
        ":undo",
        "2",
        ":why",
        &format!(":save {save}"),
        "1",
        ":codex",
        &format!(":load {save}"),
        &format!(":load {}", broken.display()),
        ":load",
        ":undo 5",
        ":undo x",
        ":undo 1",
        ":restart",
        ":quit",
    ]
    .join("\n");
    let out = loreloom(
        &[
            "play",
            "--headless",
            fixture("keepers-bargain.json").to_str().unwrap(),
        ],
        Some(&input),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out).replace(dir.path().to_str().unwrap(), "<tmp>");
    assert!(text.contains("saved to <tmp>/slot1.json"));
    assert!(text.contains("<tmp>/broken.json is not a readable save"));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(save).unwrap()).unwrap();
    assert_eq!(saved["passage"], "p-fair-weather");
    assert_eq!(saved["codewords"], serde_json::json!(["flag:lie-between"]));
    insta::assert_snapshot!(text);
}

#[test]
fn a_save_from_a_changed_story_says_what_broke() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("s.json");
    let mut doc: serde_json::Value = serde_json::json!({
        "format": "loreloom-save", "version": 1, "story": "keepers-bargain",
        "story_title": "The Keeper's Bargain", "passage": "p-lighthouse-cellar",
        "codewords": ["flag:elias-knows", "flag:moved-away"], "visited": ["p-arrival"], "history": []
    });
    std::fs::write(&save, doc.to_string()).unwrap();
    let input = format!(":load {}\n:state\n", save.display());
    let out = loreloom(
        &[
            "play",
            "--headless",
            fixture("keepers-bargain.json").to_str().unwrap(),
        ],
        Some(&input),
    );
    let text = stdout(&out);
    assert!(out.status.success());
    assert!(
        text.contains("could not load the save: the story changed since this save: passages p-lighthouse-cellar are gone and codewords flag:moved-away are gone"),
        "{text}"
    );
    assert!(
        text.contains("At `p-arrival`"),
        "the playthrough is untouched: {text}"
    );
    doc["story"] = "another-story".into();
    std::fs::write(&save, doc.to_string()).unwrap();
    let out = loreloom(
        &[
            "play",
            "--headless",
            fixture("keepers-bargain.json").to_str().unwrap(),
        ],
        Some(&input),
    );
    assert!(stdout(&out).contains("this save belongs to story `another-story`"));
}

#[test]
fn scripted_choices_that_run_out_before_an_ending_exit_2() {
    let out = loreloom(
        &[
            "play",
            "--headless",
            fixture("keepers-bargain.json").to_str().unwrap(),
            "--choices",
            "1",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("stopped at passage `p-lamp-room`"));
}

#[test]
fn a_broken_story_is_refused_with_its_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("story.json");
    std::fs::write(
        &path,
        r#"{"format":"loreloom-story","version":1,"meta":{"id":"x","title":"X"},
            "passages":[{"id":"a","prose":"p","choices":[{"label":"Go","to":"b"}]}]}"#,
    )
    .unwrap();
    let out = loreloom(&["play", "--headless", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("error[unknown-passage] passage `a` choice 1: leads to `b`"),
        "{err}"
    );
}

#[test]
fn validate_reports_for_the_fixtures() {
    for name in ["keepers-bargain.json", "small-kindnesses.json"] {
        let out = loreloom(&["validate", fixture(name).to_str().unwrap()], None);
        insta::assert_snapshot!(name, redact(&stdout(&out)));
    }
}
