//! The game window under Xvfb (Mesa lavapipe): scripted play to a screenshot, checked.
//!
//! Each screenshot is checked for its size and that it shows something.

#![cfg(feature = "gui")]

mod common;

use std::path::Path;
use std::process::Command;

use common::{default_story, fixture};

/// Run `loreloom` in a virtual X display; panics with what is missing when Xvfb is not installed.
fn in_xvfb(args: &[&str], data_dir: &Path) -> std::process::Output {
    let xvfb = Command::new("xvfb-run").arg("--help").output();
    assert!(
        xvfb.is_ok(),
        "xvfb-run is missing: the window tests need Debian's xvfb, xauth, mesa-vulkan-drivers and libvulkan1 (./run.sh test installs them)"
    );
    Command::new("xvfb-run")
        .args([
            "-a",
            "-s",
            "-screen 0 1920x1080x24",
            env!("CARGO_BIN_EXE_loreloom"),
        ])
        .args(args)
        .env("LORELOOM_DATA_DIR", data_dir)
        .env("RUST_LOG", "warn,loreloom::ui::audio=info")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("xvfb-run starts")
}

/// `session play SAVE --window` under Xvfb: the player's lines from `input`,
/// the model's from `replies`, a screenshot to `shot` when done; its log.
fn play_session(save: &Path, input: &Path, replies: &Path, shot: &Path, data_dir: &Path) -> String {
    let out = in_xvfb(
        &[
            "session",
            "play",
            save.to_str().unwrap(),
            "--window",
            "--script",
            input.to_str().unwrap(),
            "--model-script",
            replies.to_str().unwrap(),
            "--screenshot",
            shot.to_str().unwrap(),
            "--exit",
        ],
        data_dir,
    );
    assert!(
        out.status.success(),
        "loreloom exited {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The Drowned Reach copied into `dir`, to change for a test.
fn reach_copy(dir: &Path) -> std::path::PathBuf {
    let campaign = dir.join("reach");
    let ok = Command::new("cp")
        .arg("-r")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"))
        .arg(&campaign)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    campaign
}

/// Width, height and the variance of the luminance of a PNG.
fn measure(path: &Path) -> (u32, u32, f64) {
    let image = image::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .to_luma8();
    let pixels: Vec<f64> = image.pixels().map(|p| f64::from(p.0[0])).collect();
    let count = f64::from(image.width() * image.height());
    let mean = pixels.iter().sum::<f64>() / count;
    let variance = pixels.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / count;
    (image.width(), image.height(), variance)
}

fn play_to_screenshot(story: &Path, choices: &str, size: &str) -> (u32, u32, f64) {
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let out = in_xvfb(
        &[
            "play",
            story.to_str().unwrap(),
            "--autoplay",
            choices,
            "--screenshot",
            shot.to_str().unwrap(),
            "--exit",
            "--size",
            size,
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "loreloom exited {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    measure(&shot)
}

#[test]
fn the_default_story_renders_to_a_screenshot() {
    let (w, h, variance) = play_to_screenshot(&default_story(), "1,1,1", "1280x720");
    assert_eq!((w, h), (1280, 720));
    assert!(
        variance > 200.0,
        "the frame looks blank (luminance variance {variance:.1})"
    );
}

#[test]
fn a_questfoundry_fixture_renders_at_4_3() {
    let (w, h, variance) = play_to_screenshot(&fixture("keepers-bargain.json"), "1,1", "1024x768");
    assert_eq!((w, h), (1024, 768));
    assert!(
        variance > 100.0,
        "the frame looks blank (luminance variance {variance:.1})"
    );
}

#[test]
fn a_bad_scripted_choice_fails_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = in_xvfb(
        &[
            "play",
            default_story().to_str().unwrap(),
            "--autoplay",
            "9",
            "--exit",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no choice 9"));
}

/// An open-ended session in the window: two scripted turns (a typed intention,
/// then a choice by number) stream, roll and commit, and the screen is photographed.
#[test]
fn a_session_plays_two_turns_in_the_window_and_saves_them() {
    use common::scripted::turn_replies;
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("reach.db");
    common::new_drowned_reach_save(&save, 3);
    let replies = dir.path().join("replies.json");
    let mut all = turn_replies(1);
    all.extend(turn_replies(2));
    std::fs::write(
        &replies,
        serde_json::to_string(&loreloom::llm::Script { replies: all }).unwrap(),
    )
    .unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "I step aboard and grab the rail.\n2\n").unwrap();
    let shot = dir.path().join("session.png");
    play_session(&save, &input, &replies, &shot, dir.path());
    let (w, h, variance) = measure(&shot);
    assert_eq!((w, h), (1280, 720));
    assert!(
        variance > 200.0,
        "the screen shows text and portraits: {variance}"
    );
    let store = loreloom::store::Store::open(&save).unwrap();
    assert_eq!(
        store.session().unwrap().scene_index,
        2,
        "both turns were committed"
    );
    let played = common::save::player_moves(&store);
    assert_eq!(
        played,
        ["I step aboard and grab the rail.", "Watch the quay"]
    );
    assert_eq!(store.play_sessions().unwrap().len(), 1);
}

/// The mean colour of the picture band of a screenshot (below the top bar,
/// above the text box), to tell one backdrop from another.
fn picture_colour(path: &Path) -> [f64; 3] {
    let image = image::open(path).unwrap().to_rgb8();
    let (w, h) = (image.width(), image.height());
    let mut sum = [0.0; 3];
    let mut n = 0.0;
    for y in (h / 10)..(h / 2) {
        for x in (w / 10)..(w * 6 / 10) {
            let p = image.get_pixel(x, y).0;
            for i in 0..3 {
                sum[i] += f64::from(p[i]);
            }
            n += 1.0;
        }
    }
    sum.map(|s| s / n)
}

/// #22: a session is played on the place's art. The opening shows the quay's
/// picture; a move that takes the player to the Drowned Reach (the persona's
/// extractor sets `scene.location`, as the offer allows) changes the backdrop
/// to that place's art; a place with no art gets a painted one.
#[test]
fn the_session_stage_shows_the_place_and_follows_a_move_elsewhere() {
    use common::scripted::{reply, turn_replies};
    let dir = tempfile::tempdir().unwrap();
    // `ops`: the state operations the persona's extractor returns.
    let shoot = |name: &str, ops: &[serde_json::Value]| {
        let save = dir.path().join(format!("{name}.db"));
        common::new_drowned_reach_save(&save, 3);
        let mut replies = turn_replies(1);
        if !ops.is_empty() {
            let at = replies
                .iter()
                .position(|r| r.stage.as_deref() == Some("extract"))
                .unwrap();
            replies[at] = reply(
                "extract",
                serde_json::json!({"state_ops": ops, "observations": []}).to_string(),
            );
        }
        let replies_file = dir.path().join(format!("{name}.json"));
        std::fs::write(
            &replies_file,
            serde_json::to_string(&loreloom::llm::Script { replies }).unwrap(),
        )
        .unwrap();
        let input = dir.path().join(format!("{name}.txt"));
        let lines = if ops.is_empty() {
            "\n"
        } else {
            "I take the skiff out onto the water.\n"
        };
        std::fs::write(&input, lines).unwrap();
        let shot = dir.path().join(format!("{name}.png"));
        let log = play_session(&save, &input, &replies_file, &shot, dir.path());
        // The audio plugin's cues, in the order it crossfaded to them.
        let music: Vec<String> = log
            .lines()
            .filter_map(|l| l.split_once("session music: "))
            .map(|(_, track)| track.rsplit('/').next().unwrap_or(track).to_owned())
            .collect();
        if let Some(keep) = std::env::var_os("KEEP_SHOTS") {
            std::fs::copy(&shot, Path::new(&keep).join(format!("{name}.png"))).unwrap();
        }
        let store = loreloom::store::Store::open(&save).unwrap();
        let scene = store.current_scene().unwrap();
        let place = scene
            .state
            .get("location")
            .or_else(|| scene.world.scene.get("location"))
            .cloned()
            .unwrap_or_default();
        (picture_colour(&shot), place, music)
    };
    let to =
        |place: &str| [serde_json::json!({"op": "set", "path": "scene.location", "value": place})];
    let (quay, at_quay, quay_music) = shoot("quay", &[]);
    let (reach, at_reach, reach_music) = shoot("reach", &to("drowned_reach"));
    let (toll, at_toll, _) = shoot("toll", &to("toll_house"));
    // Fear on the quay from 1 to 4 of 5: the clock is three-quarters full.
    let fear = serde_json::json!({"op": "tick_clock", "path": "clocks.town_fear", "value": 3});
    let (_, _, danger_music) = shoot("danger", &[fear]);
    assert_eq!(at_quay, "reedmere_quay");
    assert_eq!(at_reach, "drowned_reach");
    assert_eq!(at_toll, "toll_house");
    // The audio plugin plays the scene's cue (the quay at dusk: the track
    // whose name says dusk) and, the Reach at dusk wanting the same one,
    // keeps it playing across the move instead of starting it again.
    // A turn that brings the town near panic changes the cue to the tension
    // track (crossfading: `ui::audio`'s test follows the plugin's state).
    assert_eq!(quay_music, ["reach_at_dusk.ogg"]);
    assert_eq!(reach_music, ["reach_at_dusk.ogg"]);
    assert_eq!(danger_music, ["reach_at_dusk.ogg", "green_flame.ogg"]);
    let apart = |a: [f64; 3], b: [f64; 3]| (0..3).map(|i| (a[i] - b[i]).abs()).sum::<f64>();
    // Not the flat stage colour: a picture is behind the words.
    for (name, c) in [("quay", quay), ("reach", reach), ("toll", toll)] {
        assert!(
            c.iter().sum::<f64>() > 60.0,
            "{name}: a dark, empty stage {c:?}"
        );
    }
    assert!(
        apart(quay, reach) > 12.0,
        "the backdrop changed: {quay:?} → {reach:?}"
    );
    assert!(
        apart(reach, toll) > 12.0,
        "the painted backdrop differs: {reach:?} → {toll:?}"
    );
}

/// The luminance variance of the upper left of a screenshot (the picture
/// area, clear of the portraits and the text box).
fn picture_variance(path: &Path) -> f64 {
    let image = image::open(path).unwrap().to_luma8();
    let (w, h) = (image.width(), image.height());
    let pixels: Vec<f64> = (h / 10..h * 4 / 10)
        .flat_map(|y| (0..w * 7 / 10).map(move |x| (x, y)))
        .map(|(x, y)| f64::from(image.get_pixel(x, y).0[0]))
        .collect();
    let n = f64::from(u32::try_from(pixels.len()).unwrap());
    let mean = pixels.iter().sum::<f64>() / n;
    pixels.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / n
}

/// #22: a passage without an illustration of its own keeps the last one,
/// dimmed, instead of an empty dark rectangle (139 of 159 passages of a real
/// QuestFoundry story have none).
#[test]
fn a_passage_without_art_keeps_the_last_picture() {
    let dir = tempfile::tempdir().unwrap();
    let story = dir.path().join("orchard");
    let copied = Command::new("cp")
        .args([
            "-r",
            default_story().to_str().unwrap(),
            story.to_str().unwrap(),
        ])
        .status()
        .unwrap();
    assert!(copied.success());
    // The east rows lose their illustration.
    let file = story.join("story.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    for ill in json["illustrations"].as_array_mut().unwrap() {
        ill["depicts"]
            .as_array_mut()
            .unwrap()
            .retain(|p| p != "p-east-rows");
    }
    std::fs::write(&file, json.to_string()).unwrap();
    let shot = dir.path().join("rows.png");
    let out = in_xvfb(
        &[
            "play",
            story.to_str().unwrap(),
            "--autoplay",
            "1",
            "--screenshot",
            shot.to_str().unwrap(),
            "--exit",
            "--size",
            "1280x720",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(keep) = std::env::var_os("KEEP_SHOTS") {
        std::fs::copy(&shot, Path::new(&keep).join("kept.png")).unwrap();
    }
    let variance = picture_variance(&shot);
    assert!(
        variance > 20.0,
        "the picture area is empty: variance {variance:.1}"
    );
}

/// #22: the conveniences of the story player in a session window. Three
/// turns are played; the codex is opened; the scene is kept in save slot 2;
/// the backlog is opened and "Return here" pressed on the first move, which
/// branches back to just after it (the three turns stay in the file); then
/// slot 2 is loaded, branching forward again to the kept scene.
#[test]
fn a_session_window_rewinds_from_the_backlog_and_keeps_save_slots() {
    use common::scripted::turn_replies;
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("reach.db");
    common::new_drowned_reach_save(&save, 3);
    let replies = dir.path().join("replies.json");
    let all: Vec<_> = (1..=3).flat_map(turn_replies).collect();
    std::fs::write(
        &replies,
        serde_json::to_string(&loreloom::llm::Script { replies: all }).unwrap(),
    )
    .unwrap();
    let shots = std::env::var_os("KEEP_SHOTS").map_or_else(|| dir.path().to_owned(), Into::into);
    let codex_shot = shots.join("session-codex.png");
    let backlog_shot = shots.join("session-backlog.png");
    let input = dir.path().join("input.txt");
    std::fs::write(
        &input,
        format!(
            "I step aboard and grab the rail.\n\
             I call out to the ferryman.\n\
             I check the lantern wicks.\n\
             :codex\n:shot {}\n:close\n\
             /save 2\n\
             :backlog\n:shot {}\n:return 2\n\
             /load 2\n",
            codex_shot.display(),
            backlog_shot.display()
        ),
    )
    .unwrap();
    let shot = shots.join("session-loaded.png");
    play_session(&save, &input, &replies, &shot, dir.path());
    for path in [&codex_shot, &backlog_shot, &shot] {
        let (w, h, variance) = measure(path);
        assert_eq!((w, h), (1280, 720));
        assert!(variance > 200.0, "{}: {variance}", path.display());
    }
    let store = loreloom::store::Store::open(&save).unwrap();
    // Scenes: 0 opening, 1–3 the turns, 4 the rewind to 1, 5 the load of 3.
    let kept = store.bookmarks().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!((kept[0].slot.as_str(), kept[0].scene_index), ("slot-2", 3));
    assert!(
        kept[0].summary.starts_with("Reedmere Quay, scene 3: Turn "),
        "{}",
        kept[0].summary
    );
    let actions: Vec<String> = rusqlite::Connection::open(&save)
        .unwrap()
        .prepare("SELECT action_text FROM turns ORDER BY turn_index")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        actions[3..],
        ["/rewind 1".to_owned(), "/load slot-2".to_owned()],
        "{actions:?}"
    );
    // Back on the kept scene's branch: all three moves are on it again.
    let moves = common::save::player_moves(&store);
    assert_eq!(
        moves,
        [
            "I step aboard and grab the rail.",
            "I call out to the ferryman.",
            "I check the lantern wicks."
        ]
    );
    assert_eq!(store.current_scene().unwrap().scene_index, 5);
}

/// #25 in the window: a turn whose plan lights a lantern (state, a picture,
/// choices) and calls a crashing skill (optional): the tool panel shows both
/// tools with their end, the narrative state panel the lit keys, the gallery
/// the picture; the failed skill's notice offers Retry and Dismiss; the Skills
/// settings screen shows every skill's form from its config schema.
#[test]
fn a_session_turn_with_skills_shows_the_tool_panel_state_gallery_and_settings() {
    use common::scripted::{reply, turn_replies};
    let dir = tempfile::tempdir().unwrap();
    let campaign = reach_copy(dir.path());
    let lantern = campaign.join("skills/lantern");
    std::fs::create_dir_all(lantern.join("scripts")).unwrap();
    std::fs::write(
        lantern.join("skill.json"),
        r#"{"name": "lantern", "version": "1.0.0", "description": "Lights the ferry's lantern.",
            "scripts": [{"name": "run", "path": "scripts/run.sh", "timeout": 5000}]}"#,
    )
    .unwrap();
    std::fs::write(
        lantern.join("scripts/run.sh"),
        r#"cat > /dev/null
echo '{"version":"0","type":"log","level":"info","message":"trimming the wick"}'
echo '{"version":"0","type":"state_patch","patch":{"lantern":{"lit":true,"colour":"green"}}}'
echo '{"version":"0","type":"asset","assetId":"lamp","kind":"image","mediaType":"image/png","path":"lamp.png"}'
echo '{"version":"0","type":"done","ok":true,"summary":"the lantern burns green"}'
"#,
    )
    .unwrap();
    // The picture: the Drowned Reach's cover, as the skill's own file.
    std::fs::copy(campaign.join("art/cover.png"), lantern.join("lamp.png")).unwrap();
    let broken = campaign.join("skills/broken-bell");
    std::fs::create_dir_all(broken.join("scripts")).unwrap();
    std::fs::write(
        broken.join("skill.json"),
        r#"{"name": "broken-bell", "version": "1.0.0", "description": "Rings the bell (it is cracked).",
            "scripts": [{"name": "ring", "path": "scripts/ring.sh", "timeout": 5000}],
            "retryPolicy": {"maxRetries": 0, "backoffMs": 0}}"#,
    )
    .unwrap();
    std::fs::write(broken.join("scripts/ring.sh"), "cat > /dev/null\nexit 4\n").unwrap();
    // Hesper, on stage from the start, has no portrait in this copy: the
    // window asks the character-portraits skill for one.
    std::fs::remove_file(campaign.join("art/characters/hesper_vane.png")).unwrap();

    // The player approved both of the campaign's skills (#43).
    common::approve_skills(&campaign.join("skills"), dir.path());
    let save = dir.path().join("reach.db");
    common::new_session_save(&campaign, &save, 3);
    let mut replies = vec![reply(
        "skills/plan",
        serde_json::json!({"tools": [
            {"toolId": "lamp", "toolPath": "lantern/run", "input": {}},
            {"toolId": "bell", "toolPath": "broken-bell/ring", "input": {}, "required": false}
        ]})
        .to_string(),
    )];
    replies.extend(turn_replies(1));
    let script = dir.path().join("replies.json");
    std::fs::write(
        &script,
        serde_json::to_string(&loreloom::llm::Script { replies }).unwrap(),
    )
    .unwrap();
    let panel = dir.path().join("panel.png");
    let settings = dir.path().join("settings.png");
    let input = dir.path().join("input.txt");
    std::fs::write(
        &input,
        format!(
            "I raise the lantern.\n:skills\n:shot {}\n:close\n:skill-settings\n:shot {}\n",
            panel.display(),
            settings.display()
        ),
    )
    .unwrap();
    let shot = dir.path().join("end.png");
    play_session(&save, &input, &script, &shot, dir.path());
    for picture in [&panel, &settings] {
        let (w, h, variance) = measure(picture);
        assert_eq!((w, h), (1280, 720));
        assert!(variance > 200.0, "{}: {variance}", picture.display());
    }
    // The turn kept the lantern's state and picture; the bell's failure cost nothing.
    let scene = loreloom::store::Store::open(&save)
        .unwrap()
        .current_scene()
        .unwrap();
    assert_eq!(scene.world.skills["lantern"]["colour"], "green");
    // In the save's asset store: the lantern's picture and the portraits
    // drawn at the session's opening, Hesper's (its file is the skill's
    // cached drawing of her) and the pack's Cobb Marrow's (the campaign
    // has none of him).
    let stored: Vec<Vec<u8>> = std::fs::read_dir(dir.path().join("reach.assets"))
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(stored.len(), 3);
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("skills/character-portraits/data");
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cache.join("index.json")).unwrap()).unwrap();
    for who in ["hesper_vane", "sallow_delta:cobb_marrow"] {
        let drawn = cache.parent().unwrap().join(index[who].as_str().unwrap());
        let drawn = std::fs::read(&drawn).unwrap();
        assert!(stored.contains(&drawn), "no portrait of {who} in the store");
    }
    // Kept for a look (CI keeps nothing): LORELOOM_KEEP_SHOTS=DIR.
    if let Some(keep) = std::env::var_os("LORELOOM_KEEP_SHOTS") {
        for p in [&panel, &settings, &shot] {
            std::fs::copy(p, Path::new(&keep).join(p.file_name().unwrap())).unwrap();
        }
    }
}
