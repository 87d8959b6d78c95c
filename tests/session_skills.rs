//! Skills inside a session's turn (#25): the real binary, a real save and real subprocesses.
//!
//! Skills inside a session's turn (#25), through the real binary, a real save and real subprocesses
//! with a scripted model: the planner's plan runs, the campaign's every-turn weather moves on,
//! state patches, an asset and a `narrative_choice` reach the save, the narrator and the player;
//! the turn replays from its recording without running a script again; a rewind restores the skill
//! state; a plan whose skills all fail ends in the fallback line while the turn still commits
//! whole.
#![cfg(feature = "store")]

mod common;

use std::path::{Path, PathBuf};

use common::scripted::{reply, turn_replies};
use loreloom::llm::Script;
use loreloom::llm::scripted::Reply;
use serde_json::{Value, json};

/// The Drowned Reach copied into `dir` with extra skills of its own.
fn campaign_with(dir: &Path, skills: &[(&str, &str)]) -> PathBuf {
    let campaign = dir.join("reach");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(&from)
        .arg(&campaign)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    for (name, script) in skills {
        let skill = campaign.join("skills").join(name);
        std::fs::create_dir_all(skill.join("scripts")).unwrap();
        std::fs::write(
            skill.join("skill.json"),
            json!({"name": name, "version": "1.0.0",
                   "description": format!("The {name} test skill."),
                   "scripts": [{"name": "run", "path": "scripts/run.py", "timeout": 5000}],
                   "retryPolicy": {"maxRetries": 0, "backoffMs": 0}})
            .to_string(),
        )
        .unwrap();
        std::fs::write(skill.join("scripts/run.py"), script).unwrap();
    }
    common::own_data_dir(dir);
    campaign
}

/// Approves each of the campaign's skills, as the player would, in the
/// test's own data dir.
fn approve(campaign: &Path, data: &Path) {
    common::approve_skills(&campaign.join("skills"), data);
}

/// Lights the lantern: counts its runs in `data/`, patches the state, hands
/// over a picture and offers the turn's choices.
const LANTERN: &str = r#"import json, os, sys
request = json.load(sys.stdin)
os.makedirs("data", exist_ok=True)
with open("data/runs.txt", "a") as f:
    f.write("run\n")
lit = (request.get("state") or {}).get("count", 0) + 1
def say(**e):
    e["version"] = "0"
    print(json.dumps(e), flush=True)
say(type="log", level="info", message="trimming the wick")
say(type="state_patch", patch={"lantern": {"lit": True, "count": lit}})
say(type="asset", assetId="lantern", kind="image", mediaType="image/png", path="lantern.png")
say(type="ui_event", event="narrative_choice", payload={"choices": ["Raise the green lantern", "Douse it", "Ask Hesper what green means"]})
say(type="done", ok=True, summary=f"the lantern burns green ({lit})")
"#;

const CRASH: &str = "import sys\nsys.stdin.read()\nsys.exit(3)\n";

fn png(path: &Path) {
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = png::Encoder::new(file, 2, 2);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&[0, 200, 90].repeat(4)).unwrap();
}

fn plan(tools: &[(&str, &str, bool)]) -> Reply {
    let tools: Vec<Value> = tools
        .iter()
        .map(|(id, path, required)| {
            json!({"toolId": id, "toolPath": path, "input": {}, "required": required})
        })
        .collect();
    reply("skills/plan", json!({ "tools": tools }).to_string())
}

/// Plays `moves` with the campaign's skills approved as they are now.
fn play(save: &Path, dir: &Path, moves: &str, replies: Vec<Reply>) -> String {
    approve(&dir.join("reach"), &dir.join("data"));
    let out = play_as_is(save, dir, moves, replies);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}{}", common::stderr(&out));
    text
}

/// Plays `moves` with whatever approvals the test's data dir holds.
fn play_as_is(save: &Path, dir: &Path, moves: &str, replies: Vec<Reply>) -> std::process::Output {
    let script = dir.join("replies.json");
    std::fs::write(&script, serde_json::to_string(&Script { replies }).unwrap()).unwrap();
    let input = dir.join("moves.txt");
    std::fs::write(&input, moves).unwrap();
    common::session_play_env(
        save,
        &input,
        &script,
        &[("LORELOOM_DATA_DIR", &dir.join("data"))],
    )
}

fn new_save(campaign: &Path, save: &Path) {
    common::new_session_save(campaign, save, 5);
}

/// The world of scene `n` on the current branch, as the save keeps it.
fn skills_at(save: &Path, n: i64) -> Value {
    let conn = rusqlite::Connection::open(save).unwrap();
    let world: String = conn
        .query_row(
            "SELECT world_json FROM scenes WHERE scene_index = ?1 ORDER BY created_at DESC LIMIT 1",
            [n],
            |r| r.get(0),
        )
        .unwrap();
    serde_json::from_str::<Value>(&world).unwrap()["skills"].clone()
}

/// `session replay` of each scene finds it as it was played.
fn replays_identically(save: &Path, scenes: &[&str]) {
    let data = save.parent().unwrap().join("data");
    for scene in scenes {
        let out = common::loreloom_env(
            &[
                "session",
                "replay",
                save.to_str().unwrap(),
                "--scene",
                scene,
            ],
            None,
            &[("LORELOOM_DATA_DIR", &data)],
        );
        let text = common::stdout(&out);
        assert!(out.status.success(), "{text}{}", common::stderr(&out));
        assert!(text.contains("replayed identically"), "{text}");
    }
}

fn runs(campaign: &Path) -> usize {
    std::fs::read_to_string(campaign.join("skills/lantern/data/runs.txt"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// #43: a campaign's skill does not run until the player approves it, and
/// a skill changed since its approval asks again; the terminal says how.
#[test]
fn a_campaign_skill_runs_only_approved_and_asks_again_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign_with(dir.path(), &[("lantern", LANTERN)]);
    png(&campaign.join("skills/lantern/lantern.png"));
    let save = dir.path().join("reach.db");
    new_save(&campaign, &save);
    let turn = |n: usize| {
        let mut replies = vec![plan(&[("lamp", "lantern/run", true)])];
        replies.extend(turn_replies(n));
        replies
    };
    let out = play_as_is(&save, dir.path(), "I raise the lantern.\n", turn(1));
    let said = common::stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(
            "`lantern` stays off until you approve it: `loreloom skills approve lantern --dir "
        ),
        "{said}"
    );
    assert_eq!(runs(&campaign), 0);
    approve(&campaign, &dir.path().join("data"));
    let out = play_as_is(&save, dir.path(), "I raise the lantern.\n", turn(2));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(runs(&campaign), 1);
    // One changed line in its script: off again until approved again.
    let script = campaign.join("skills/lantern/scripts/run.py");
    let changed = std::fs::read_to_string(&script).unwrap() + "\n# changed\n";
    std::fs::write(&script, changed).unwrap();
    let out = play_as_is(&save, dir.path(), "I raise the lantern.\n", turn(3));
    assert!(common::stderr(&out).contains("stays off until you approve it"));
    assert_eq!(runs(&campaign), 1);
}

#[test]
fn a_turn_calls_its_skills_keeps_what_they_did_and_replays_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let campaign = campaign_with(dir.path(), &[("lantern", LANTERN)]);
    png(&campaign.join("skills/lantern/lantern.png"));
    let save = dir.path().join("reach.db");
    new_save(&campaign, &save);

    let mut replies = vec![plan(&[("lamp", "lantern/run", true)])];
    replies.extend(turn_replies(1));
    // The second move needs no tool: the weather still moves on.
    replies.push(reply("skills/plan", json!({"tools": []}).to_string()));
    replies.extend(turn_replies(2));
    let text = play(
        &save,
        dir.path(),
        "I raise the lantern.\nI wait by the rail.\n",
        replies,
    );
    // The player reads what the skills did, and is offered the skill's choices.
    assert!(text.contains("[lantern ok"), "{text}");
    assert!(text.contains("the lantern burns green (1)"), "{text}");
    assert!(text.contains("[weather ok"), "{text}");
    assert!(text.contains("Raise the green lantern"), "{text}");
    assert!(text.contains("[image kept: "), "{text}");
    assert_eq!(runs(&campaign), 1);

    // Committed with the turn: the skill state of each scene.
    let one = skills_at(&save, 1);
    assert_eq!(one["lantern"], json!({"lit": true, "count": 1}), "{one}");
    // The scenario opens at dusk in fog: the weather starts there, a turn on.
    assert_eq!(one["weather"]["clock"], "19:20", "{one}");
    assert_eq!(one["weather"]["light"], "dusk", "{one}");
    let two = skills_at(&save, 2);
    assert_eq!(two["weather"]["clock"], "19:40", "{two}");
    assert_eq!(two["lantern"]["count"], 1, "state carries over: {two}");

    // The picture is in the save's asset store, content-addressed.
    let assets: Vec<_> = std::fs::read_dir(dir.path().join("reach.assets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(assets.len(), 1, "{assets:?}");
    assert!(
        Path::new(&assets[0])
            .extension()
            .is_some_and(|e| e == "png"),
        "{assets:?}"
    );

    // The narrator was told what the lantern did and what the weather is.
    let conn = rusqlite::Connection::open(&save).unwrap();
    let prompts: Vec<String> = conn
        .prepare(
            "SELECT payload_json FROM turn_events WHERE turn_index = 1
             AND event_type = 'model_output' AND step_name = 'narrate'",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(
        prompts
            .iter()
            .any(|p| p.contains("lantern: the lantern burns green (1)")
                && p.contains("weather: Dusk, twenty past seven; fog.")
                // Its state keys stay the engine's: it gave a summary.
                && !p.contains("weather.clock")),
        "{prompts:?}"
    );
    let plans: i64 = conn
        .query_row(
            "SELECT count(*) FROM turn_events WHERE event_type = 'tool_call' AND step_name = 'skills'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(plans, 2, "one plan per turn recorded");
    drop(conn);

    // Replay hands back the recorded runs: the same turn, no script run.
    replays_identically(&save, &["1", "2"]);
    assert_eq!(runs(&campaign), 1, "replay ran no script");

    // A rewind to scene 1 restores the skill state it had.
    let mut again = vec![reply("skills/plan", json!({"tools": []}).to_string())];
    again.extend(turn_replies(3));
    play(&save, dir.path(), "/rewind 1\nI listen.\n", again);
    // (The rewind is scene 3, a copy of scene 1; the turn after it scene 4.)
    assert_eq!(skills_at(&save, 3), one);
    let now = loreloom::store::Store::open(&save)
        .unwrap()
        .current_scene()
        .unwrap();
    assert_eq!(now.scene_index, 4);
    assert_eq!(now.world.skills["weather"]["clock"], "19:40");
    assert_eq!(now.world.skills["lantern"]["count"], 1);
}

#[test]
fn every_failed_plan_leaves_its_skills_out_and_the_turn_still_commits_with_the_fallback_line() {
    let dir = tempfile::tempdir().unwrap();
    let names = ["crash-a", "crash-b", "crash-c", "crash-d", "crash-e"];
    let skills: Vec<(&str, &str)> = names.iter().map(|n| (*n, CRASH)).collect();
    let campaign = campaign_with(dir.path(), &skills);
    let save = dir.path().join("reach.db");
    new_save(&campaign, &save);

    let mut replies: Vec<Reply> = names
        .iter()
        .map(|n| plan(&[("t", &format!("{n}/run"), true)]))
        .collect();
    replies.extend(turn_replies(1));
    let text = play(&save, dir.path(), "I pull the signal cord.\n", replies);
    assert!(text.contains("[crash-a failed"), "{text}");
    assert!(text.contains("[crash-e failed"), "{text}");
    assert!(text.contains("[the skills failed; "), "{text}");
    // The turn committed whole, its narration and choices; nothing of a
    // failed plan is applied (not even the weather that ran in it); the five
    // plans are on record.
    assert!(text.contains("Turn 1: you grip the cold rail"), "{text}");
    let store = loreloom::store::Store::open(&save).unwrap();
    let scene = store.current_scene().unwrap();
    assert_eq!(scene.scene_index, 1);
    assert!(scene.world.skills.is_empty(), "{:?}", scene.world.skills);
    let conn = rusqlite::Connection::open(&save).unwrap();
    let (plans, fallback): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM turn_events WHERE event_type = 'tool_call' AND step_name = 'skills'),
                    (SELECT count(*) FROM turn_events WHERE event_type = 'error' AND step_name = 'skills')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((plans, fallback), (5, 1));
    // Each later plan was asked without the skills that had failed.
    let prompts: Vec<String> = conn
        .prepare(
            "SELECT payload_json FROM turn_events WHERE event_type = 'model_output'
             AND step_name = 'skills/plan' ORDER BY rowid",
        )
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(prompts.len(), 5);
    assert!(
        prompts[4].contains("do not use them: crash-a, crash-b, crash-c, crash-d"),
        "{}",
        prompts[4]
    );
}

#[cfg(feature = "embed")]
#[test]
fn a_move_is_routed_to_the_skill_it_calls_for_and_a_move_that_calls_for_none_asks_no_planner() {
    let dir = tempfile::tempdir().unwrap();
    // The Drowned Reach with the bundled skills only (each lists its moves).
    let campaign = campaign_with(dir.path(), &[]);
    let save = dir.path().join("reach.db");
    new_save(&campaign, &save);

    // One plan reply: only the second move may ask for it.
    let mut replies = turn_replies(1);
    replies.push(reply(
        "skills/plan",
        json!({"tools": [{"toolId": "bones", "toolPath": "dice-roller/roll",
                          "input": {"formula": "2d6", "why": "a game of bones"}}]})
        .to_string(),
    ));
    replies.extend(turn_replies(2));
    // The third calls for the weather, which the campaign calls every turn
    // anyway: it runs once, as the plan says.
    replies.push(reply(
        "skills/plan",
        json!({"tools": [{"toolId": "dusk", "toolPath": "weather/advance", "input": {"minutes": 60}}]})
            .to_string(),
    ));
    replies.extend(turn_replies(3));
    let text = play(
        &save,
        dir.path(),
        "I ask Hesper what the green light means.\nI play a game of dice with the deckhands.\nI wait for nightfall by the rail.\n",
        replies,
    );
    assert_eq!(skills_at(&save, 3)["weather"]["clock"], "20:40");
    assert!(text.contains("[dice-roller ok: rolled 2d6 = "), "{text}");
    // The every-turn weather ran on both turns all the same.
    assert_eq!(skills_at(&save, 1)["weather"]["clock"], "19:20");
    assert_eq!(skills_at(&save, 2)["weather"]["clock"], "19:40");
    assert!(skills_at(&save, 2)["dice"]["last"].is_object());

    let conn = rusqlite::Connection::open(&save).unwrap();
    let events = |kind: &str, step: &str| -> Vec<(i64, Value)> {
        conn.prepare(
            "SELECT turn_index, payload_json FROM turn_events
             WHERE event_type = ?1 AND step_name = ?2 ORDER BY rowid",
        )
        .unwrap()
        .query_map([kind, step], |r| Ok((r.get(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (turn, payload) = r.unwrap();
            (turn, serde_json::from_str(&payload).unwrap())
        })
        .collect()
    };
    // The planner was asked once, on the second turn, and told it must
    // write the dice roller's call.
    let plans = events("model_output", "skills/plan");
    assert_eq!(plans.len(), 2, "{plans:?}");
    assert_eq!(plans[0].0, 2);
    let asked = plans[0].1.to_string();
    assert!(asked.contains("calls for this tool"), "{asked}");
    assert!(!asked.contains("weather/advance"), "{asked}");
    // What the router made of each move is recorded with the recall.
    let recalls = events("recall", "memory_recall");
    let routing: Vec<&Value> = recalls.iter().map(|(_, r)| &r["skills"]).collect();
    assert_eq!(routing.len(), 3, "{recalls:?}");
    assert_eq!(routing[0]["fits"], json!([]), "{:?}", routing[0]);
    assert!(
        routing[0]["passed"]
            .as_array()
            .unwrap()
            .contains(&json!("dice-roller"))
    );
    assert_eq!(
        routing[1]["fits"][0]["skill"], "dice-roller",
        "{:?}",
        routing[1]
    );
    assert_eq!(
        routing[2]["fits"][0]["skill"], "weather",
        "{:?}",
        routing[2]
    );
    drop(conn);

    // Each replays from its recording, routed as it was.
    replays_identically(&save, &["1", "2", "3"]);
}
