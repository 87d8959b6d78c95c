//! The session stage's backdrop and music (#22), chosen from a real campaign's art and music.
//!
//! The choice reads the campaign's art, its keyword sidecars and its music folders.

use std::path::{Path, PathBuf};

use loreloom::campaign::{self, Campaign, system_rulesets};
use loreloom::session::scenery::{Mood, backdrop, music, tense};
use serde_json::json;

fn drowned_reach() -> Campaign {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    let (c, report) = campaign::load(&root, &[system_rulesets()]);
    c.unwrap_or_else(|| panic!("{report}"))
}

fn at(c: &Campaign, place: &str) -> loreloom::session::scenery::Backdrop {
    let mut scene = c.world.scene.clone();
    scene.insert("location".into(), json!(place));
    backdrop(c, &scene)
}

fn file(p: Option<&Path>) -> String {
    p.and_then(Path::file_name)
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn a_place_gets_the_art_named_for_it_or_whose_keywords_name_it() {
    let c = drowned_reach();
    let quay = at(&c, "reedmere_quay");
    assert_eq!(file(quay.image.as_deref()), "reedmere_quay.png");
    assert!(quay.image.as_ref().is_some_and(|p| p.is_file()), "{quay:?}");
    assert_eq!(quay.name, "Reedmere Quay");
    // `drowned_reach` has no file of its name: the sidecar of
    // `the_drowned_reach.png` names it, and its metadata describes it.
    let reach = at(&c, "drowned_reach");
    assert_eq!(file(reach.image.as_deref()), "the_drowned_reach.png");
    assert!(
        reach.alt.starts_with("The Drowned Reach at dusk"),
        "{}",
        reach.alt
    );
    // Nothing names the toll house: no picture of somewhere else, the stage paints one.
    let toll = at(&c, "toll_house");
    assert_eq!(toll.image, None);
    assert_eq!(toll.name, "The Toll House");
    assert_eq!(toll.alt, "The Toll House");
}

#[test]
fn the_music_turns_tense_in_danger_and_near_a_full_clock() {
    let c = drowned_reach();
    let mut world = c.world.clone();
    world
        .scene
        .insert("location".into(), json!("reedmere_quay"));
    let calm = music(&c, &world, None);
    assert_eq!(calm.mood, Mood::Ambient);
    assert!(
        calm.track
            .as_ref()
            .is_some_and(|p| p.starts_with(c.root.join("music/ambient"))),
        "{calm:?}"
    );
    // The quay at dusk: the track whose name says dusk.
    assert_eq!(file(calm.track.as_deref()), "reach_at_dusk.ogg");
    world.scene.insert("danger_tier".into(), json!(1));
    let danger = music(&c, &world, None);
    assert_eq!(danger.mood, Mood::Tension);
    assert_eq!(file(danger.track.as_deref()), "green_flame.ogg");
    world.scene.insert("danger_tier".into(), json!(0));
    assert!(!tense(&world, None));
    let clock = world.clocks.values_mut().next().expect("a clock");
    clock.value = clock.max - 1;
    assert!(tense(&world, None), "a clock near full is tense");
}
