//! Seed 001's scene lore cache in a Drowned Reach session: made, reused, replaced and shown.
//!
//! Materialised on a scene's first turn (atmosphere, NPC briefings, discoverables, thread
//! connections), reused for the rest of the scene, replaced when the scene changes, and shown to
//! the narrator.
#![cfg(feature = "store")]

mod common;

use std::path::PathBuf;

use common::play::{gateway, new_save, turn};
use common::scripted;
use loreloom::session::controller::{Controller, Report, Step};
use loreloom::store::Store;

#[test]
fn a_scene_materialises_its_lore_once_and_a_new_scene_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("low_water_crossing"), 2);
    let gateway = gateway(dir.path());
    let mut ctl = Controller::open_with(&save, None).unwrap();
    let play = |ctl: &mut Controller, n: usize, line: &str| -> String {
        turn(ctl, &gateway, line, scripted::turn_replies(n)).1
    };
    let prompt = play(&mut ctl, 0, "I look at the sluice gear");
    let brief = ctl.state.recalled.scene.clone();
    println!("{}", serde_json::to_string_pretty(&brief).unwrap());
    assert_eq!(brief["location"], "sallow_delta:hollow_sluice");
    assert!(
        !brief["atmosphere"].as_array().unwrap().is_empty(),
        "the Hollow Sluice has authored lore"
    );
    let tamsin = &brief["npc_briefings"]["tamsin_reed"];
    assert!(
        tamsin["disposition"]
            .as_str()
            .unwrap()
            .ends_with("toward the player"),
        "{tamsin}"
    );
    assert!(!tamsin["capabilities"].as_str().unwrap().is_empty());
    assert!(
        brief["npc_briefings"].get("player").is_none(),
        "the persona is not briefed"
    );
    let found = brief["discoverable"].as_array().unwrap();
    assert!(
        found
            .iter()
            .any(|d| d["trigger"].as_str().unwrap().contains("bell")),
        "the drowned bell lies at the sluice: {found:?}"
    );
    assert!(
        !brief["thread_connections"].as_object().unwrap().is_empty(),
        "open threads touch the sluice"
    );
    assert!(prompt.contains("The feel of"), "{prompt}");
    assert!(
        prompt.contains("To be found here if the player looks"),
        "{prompt}"
    );
    // No secret reaches the cache.
    let text = brief.to_string();
    assert!(!text.contains("cut the tow-rope"), "{text}");

    let rows = |save: &PathBuf| {
        Store::open(save)
            .unwrap()
            .query_i64("SELECT count(*) FROM scene_lore")
            .unwrap()
    };
    play(&mut ctl, 1, "I listen to the water under the gate");
    assert_eq!(
        ctl.state.recalled.scene, brief,
        "the same scene reuses its cache"
    );
    assert_eq!(rows(&save), 1);
    assert!(matches!(
        ctl.handle("/end-scene"),
        Step::Report(Report::Committed { .. })
    ));
    play(&mut ctl, 2, "I walk back along the dyke");
    assert_eq!(rows(&save), 2, "a new scene materialises a new cache");
}
