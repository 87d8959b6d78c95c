//! The evaluation harness through the real binary and a scripted model.
//!
//! The model is a `Scripted` backend named in a `models.ron` of a scratch data
//! dir, so `eval play --model scripted` and the live side of `eval replay`
//! answer from the same script. Every turn's narrations say one planted
//! sentence in which Brinny Sedge, who is not at the quay in the Drowned
//! Reach's opening scenario, speaks: the harness must find exactly those.
#![cfg(feature = "store")]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::scripted::{reply, turn_replies};
use loreloom::llm::Script;
use serde_json::Value;

const PLANTED: &str = "Brinny Sedge says the water is over the quay steps.";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch data dir whose `models.ron` serves the key `scripted` from a
/// script of `turns` turns whose every narration is [`PLANTED`].
fn data_dir(dir: &Path, turns: usize) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let mut replies = Vec::new();
    for n in 1..=turns {
        for mut r in turn_replies(n) {
            if r.stage.as_deref() == Some("narrate") {
                // The planted sentence first: a narration is never cut
                // before its first sentence, and one that tells again six
                // words in a row of what the scene told is cut there.
                r.text = format!("{PLANTED} You hold the rail.");
            }
            replies.push(r);
        }
    }
    replies.push(reply("recap", "You crossed the quay."));
    std::fs::write(
        data.join("script.json"),
        serde_json::to_string(&Script { replies }).unwrap(),
    )
    .unwrap();
    std::fs::write(
        data.join("models.ron"),
        r#"(small: "scripted", large: "scripted", models: {"scripted": (backend: Scripted(file: "script.json"))})"#,
    )
    .unwrap();
    data
}

/// `loreloom ARGS` with `data` as the data dir, in `cwd`.
fn run(data: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_loreloom"))
        .args(args)
        .env("LORELOOM_DATA_DIR", data)
        .current_dir(cwd)
        .output()
        .expect("the loreloom binary runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Plays the Drowned Reach unattended: `turns` turns, one run, every second move planted invalid.
fn play(dir: &Path, data: &Path, out: &str, turns: usize) -> Value {
    let moves = dir.join("moves.txt");
    std::fs::write(
        &moves,
        "I look at the black water.\nI study the ferry's lanterns.\n",
    )
    .unwrap();
    let report = dir.join(out);
    let campaign = root().join("campaigns/drowned-reach");
    let turns = turns.to_string();
    let out = run(
        data,
        &root(),
        &[
            "eval",
            "play",
            campaign.to_str().unwrap(),
            "--turns",
            &turns,
            "--runs",
            "1",
            "--model",
            "scripted",
            "--no-embedder",
            "--invalid-every",
            "2",
            "--moves",
            moves.to_str().unwrap(),
            "--out",
            report.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap()).unwrap()
}

fn save_of(report: &Value) -> PathBuf {
    PathBuf::from(report["runs"][0]["save"].as_str().unwrap())
}

#[test]
fn a_playthrough_counts_its_planted_invalid_moves_and_contradictions_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_dir(dir.path(), 6);
    let report = play(dir.path(), &data, "report", 4);
    let m = &report["metrics"];
    assert_eq!(m["turns"], 4);
    // Moves 2 and 4 were planted; the scripted referee rules everything
    // possible, and the engine's move check blocks both (#41).
    assert_eq!(m["invalid_moves"], 2, "{m}");
    assert_eq!(m["invalid_action_acceptance"], 0.0);
    let turns = report["runs"][0]["turns"].as_array().unwrap();
    let planted: Vec<&str> = turns
        .iter()
        .filter_map(|t| t["move"]["invalid"].as_str())
        .collect();
    assert_eq!(planted, ["absent_person", "item_not_held"]);
    // Every narration holds the one planted contradiction, and nothing else is one.
    let narrations: usize = turns
        .iter()
        .map(|t| t["narrations"].as_array().unwrap().len())
        .sum();
    assert!(narrations >= 4);
    // A blocked move is told by the engine; every narration the model wrote
    // holds the one planted contradiction.
    let blocked: Vec<&Value> = turns.iter().filter(|t| t["outcome"] == "blocked").collect();
    assert_eq!(blocked.len(), 2, "{m}");
    for t in &blocked {
        let told = t["narrations"][0]["text"].as_str().unwrap();
        assert!(
            told.starts_with("You look") || told.starts_with("You reach"),
            "{told}"
        );
    }
    // Arriving somewhere new is the engine's to tell too (the author's words).
    let by_engine = turns
        .iter()
        .flat_map(|t| t["narrations"].as_array().unwrap())
        .filter(|n| n["by_engine"] == true)
        .count();
    assert_eq!(m["engine_narrations"], by_engine, "{m}");
    assert!(by_engine >= 2, "{m}");
    assert_eq!(
        m["contradictions"]["absent_acts"],
        narrations - by_engine,
        "{m}"
    );
    assert_eq!(m["contradictions"].as_object().unwrap().len(), 1, "{m}");
    let with_model_words = turns
        .iter()
        .filter(|t| {
            t["narrations"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["by_engine"] == false)
        })
        .count();
    #[allow(clippy::cast_precision_loss)]
    let rate = with_model_words as f64 / 4.0;
    assert_eq!(m["contradiction_rate"], rate);
    for t in turns {
        for hit in t["contradictions"].as_array().unwrap() {
            assert_eq!(hit["sentence"], PLANTED);
            assert_eq!(hit["about"], "Brinny Sedge");
        }
    }
    assert_eq!(m["clarification_rate"], 0.0);
    let md = std::fs::read_to_string(dir.path().join("report/report.md")).unwrap();
    assert!(md.contains("contradiction_rate"), "{md}");
    assert!(md.contains(PLANTED), "{md}");
    assert!(save_of(&report).is_file());
}

#[test]
fn an_exact_replay_is_identical_and_a_prompt_override_changes_that_stage_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_dir(dir.path(), 8);
    let report = play(dir.path(), &data, "report", 3);
    let save = save_of(&report);
    let s = save.to_str().unwrap();

    let out = run(&data, &root(), &["eval", "replay", s]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 of 3 turns differ"), "{}", text(&out));

    let out_dir = dir.path().join("override");
    let out = run(
        &data,
        &root(),
        &[
            "eval",
            "replay",
            s,
            "--scenes",
            "1..1",
            "--prompt",
            "narrate=v3",
            "--out",
            out_dir.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let replay: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("report.json")).unwrap())
            .unwrap();
    let turn = &replay["turns"][0];
    let differences = turn["differences"].as_array().unwrap();
    assert!(
        differences.iter().any(|d| d["area"] == "prompt"
            && d["detail"]
                .as_str()
                .unwrap()
                .contains("`narrate` call 1: rendered at v3")),
        "{differences:?}"
    );
    // Only the narrator's prompts changed: every other call was answered
    // from the record, the dice, activation, ops and choices are the same.
    for d in differences {
        assert_eq!(d["area"], "prompt", "{d}");
        assert!(d["detail"].as_str().unwrap().contains("`narrate`"), "{d}");
    }
    assert!(turn["live"].as_u64().unwrap() >= 1, "{turn}");
    assert!(turn["recorded"].as_u64().unwrap() >= 3, "{turn}");
    assert_eq!(turn["stale"], 0);
    assert_eq!(replay["overrides"][0], "narrate=v3");
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("| recorded | replayed |"), "{md}");
}

/// The three fidelity holes (#40): rendered prompts, NPC activation rolls
/// and each scene's play clock are part of what an exact replay reproduces.
#[test]
fn replay_compares_rendered_prompts_activation_rolls_and_each_scenes_clock() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_dir(dir.path(), 8);
    let report = play(dir.path(), &data, "report", 3);
    let save = save_of(&report);
    let s = save.to_str().unwrap();
    let conn = rusqlite::Connection::open(&save).unwrap();

    // Each scene keeps the clock it was reached at; an older scene replays with its own.
    let clocks: Vec<f64> = conn
        .prepare("SELECT play_minutes FROM scenes ORDER BY scene_index")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // A rolled check takes its 15 minutes, the planted (blocked) move the
    // ruleset's 5 (#41: time is what moves cost).
    assert_eq!(clocks, [0.0, 15.0, 20.0, 35.0]);
    let store = loreloom::store::Store::open(&save).unwrap();
    let campaign =
        loreloom::session::save_files::load_campaign(&root().join("campaigns/drowned-reach"))
            .unwrap();
    let scene_1 = store.scene_on_branch(1).unwrap();
    let state = loreloom::session::save_rows::state_at(&store, campaign, &scene_1.id).unwrap();
    assert!((state.play_minutes - 15.0).abs() < f64::EPSILON);
    drop(store);

    // The chattiness rolls that chose who acted are recorded with the turn…
    let activations: i64 = conn
        .query_row(
            "SELECT count(*) FROM turn_events WHERE step_name = 'npc_activation'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    // (Two turns with NPCs present: the third goes on to Sluice Board
    // Hall, the way the engine offers after the blocked second, #42.)
    assert_eq!(activations, 2);
    // …so a recording whose rolls differ from what the seed rolls is caught.
    conn.execute(
        "UPDATE turn_events SET payload_json = json_set(payload_json, '$[0].roll', 101)
         WHERE step_name = 'npc_activation' AND turn_index = 2",
        [],
    )
    .unwrap();
    let out = run(&data, &root(), &["eval", "replay", s, "--scenes", "2"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("npc activation: stored"),
        "{}",
        text(&out)
    );

    // A prompt that no longer renders as recorded is a difference, though
    // the recorded answers still fit.
    conn.execute(
        "UPDATE turn_events SET payload_json = replace(payload_json, 'lanterns', 'LANTERNS')
         WHERE event_type = 'model_output' AND step_name = 'choices' AND turn_index = 3",
        [],
    )
    .unwrap();
    let out = run(&data, &root(), &["eval", "replay", s, "--scenes", "3"]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("prompt: `choices` call 1: message"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("LANTERNS"), "{}", text(&out));

    // A save from before scenes kept their clock replays by the session's, and says so.
    conn.execute("UPDATE scenes SET play_minutes = NULL", [])
        .unwrap();
    let out = run(&data, &root(), &["eval", "replay", s, "--scenes", "1"]);
    assert!(text(&out).contains("kept no play clock"), "{}", text(&out));
}

/// `eval sheet` of `reports` into `out`, four items at most.
fn write_sheet(data: &Path, reports: &[&Path], out: &Path, more: &[&str]) -> Output {
    let mut args = vec!["eval", "sheet"];
    args.extend(reports.iter().map(|r| r.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap(), "--count", "4"]);
    args.extend(more);
    run(data, &root(), &args)
}

#[test]
fn a_blind_sheet_hides_its_sources_and_its_scores_join_back() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_dir(dir.path(), 6);
    play(dir.path(), &data, "srcalpha", 4);
    // The same narrations under a second name: two sources to tell apart.
    let after = dir.path().join("srcbeta");
    std::fs::create_dir_all(&after).unwrap();
    std::fs::copy(
        dir.path().join("srcalpha/report.json"),
        after.join("report.json"),
    )
    .unwrap();
    let sheet = dir.path().join("sheet");
    let alpha = dir.path().join("srcalpha");
    let out = write_sheet(&data, &[&alpha, &after], &sheet, &[]);
    assert!(out.status.success(), "{}", text(&out));
    let md = std::fs::read_to_string(sheet.join("sheet.md")).unwrap();
    assert!(!md.contains("srcalpha") && !md.contains("srcbeta"), "{md}");
    assert!(md.contains("coherence") && md.contains(PLANTED), "{md}");
    let key: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(sheet.join("key/key.json")).unwrap())
            .unwrap();
    // Two of each report's four turns were planted invalid, and the engine
    // told the arrival at Sluice Board Hall in its author's words: the sheet
    // rates the model's words on the player's own moves only.
    assert_eq!(key.len(), 2);
    // Rate every `srcalpha` item 2 and every `srcbeta` item 4.
    let mut ratings = String::from("id\tcoherence\tin_voice\tgrounded\tnotes\n");
    for k in &key {
        let score = if k["source"] == "srcalpha" { 2 } else { 4 };
        writeln!(
            ratings,
            "{}\t{score}\ty\tn\tfine",
            k["id"].as_str().unwrap()
        )
        .unwrap();
    }
    std::fs::write(sheet.join("ratings.tsv"), ratings).unwrap();
    let out = run(&data, &root(), &["eval", "score", sheet.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let table = text(&out);
    assert!(
        table.contains("| srcalpha | 1 | 2.00 | 0 | 1 | 0 | 0 | 0 | 100% | 0% |"),
        "{table}"
    );
    assert!(
        table.contains("| srcbeta | 1 | 4.00 | 0 | 0 | 0 | 1 | 0 | 100% | 0% |"),
        "{table}"
    );

    // Whole turns: each item is every narration of a turn, the NPCs' after
    // the player's, under the whole-turn rubric; planted turns still left out.
    let turns = dir.path().join("turns");
    let out = write_sheet(&data, &[&alpha], &turns, &["--whole-turns"]);
    assert!(out.status.success(), "{}", text(&out));
    let md = std::fs::read_to_string(turns.join("sheet.md")).unwrap();
    assert!(md.starts_with("# Blind sheet: 2 turns"), "{md}");
    assert!(md.contains("Rate each turn's text as a whole"), "{md}");
    let items = md.matches("\n## N").count();
    assert_eq!(items, 2, "{md}");
    assert!(md.matches("\n> \n> ").count() >= items, "{md}");

    // A rating out of the rubric names its line.
    std::fs::write(
        sheet.join("ratings.tsv"),
        "id\tcoherence\tin_voice\tgrounded\tnotes\nN001\t9\ty\ty\t\n",
    )
    .unwrap();
    let out = run(&data, &root(), &["eval", "score", sheet.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("line 2: coherence is 1 to 5"),
        "{}",
        text(&out)
    );
}

/// Sessions pin their prompt versions: a new save pins the newest version of
/// each stage, and a save opened after its pinned version was edited says so once.
#[test]
fn a_save_pins_its_prompts_and_says_when_a_pinned_one_was_edited() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_dir(dir.path(), 6);
    let report = play(dir.path(), &data, "report", 1);
    let save = save_of(&report);
    let pins: Value = rusqlite::Connection::open(&save)
        .unwrap()
        .query_row("SELECT prompt_versions_json FROM sessions", [], |r| {
            r.get::<_, String>(0)
        })
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap();
    let prompts = loreloom::llm::PromptRegistry::load(root().join("prompts")).unwrap();
    let newest = prompts.latest("narrate").unwrap();
    assert_eq!(pins["narrate"]["version"], newest);
    assert_eq!(
        pins["narrate"]["digest"],
        prompts.digest("narrate", newest).unwrap()
    );
    assert!(pins.get("author/dream").is_none(), "{pins}");

    // Loreloom run from a folder whose prompts/ has the pinned narrator edited.
    let cwd = dir.path().join("edited");
    let copy = cwd.join("prompts");
    common::copy_dir(&root().join("prompts"), &copy);
    let file = copy.join("narrate").join(format!("{newest}.jinja"));
    let edited = std::fs::read_to_string(&file).unwrap() + "\n{# an edit #}";
    std::fs::write(&file, edited).unwrap();
    let quit = dir.path().join("quit.txt");
    std::fs::write(&quit, "/quit\n").unwrap();
    let play = |cwd: &Path| {
        run(
            &data,
            cwd,
            &[
                "session",
                "play",
                save.to_str().unwrap(),
                "--script",
                quit.to_str().unwrap(),
            ],
        )
    };
    let out = play(&cwd);
    let said = format!("the `narrate` prompt ({newest}) was edited since this save pinned it");
    assert!(text(&out).contains(&said), "{}", text(&out));
    // Said once: the pin now holds the edited file's digest.
    let out = play(&cwd);
    assert!(!text(&out).contains(&said), "{}", text(&out));
}
