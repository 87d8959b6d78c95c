//! Reputation and NPC perception through whole scripted sessions of the Drowned Reach.
//!
//! Seed 002 SC-028 (helped vs betrayed), dice sentiment, choice filtering, decay, persistence in
//! the save.
#![cfg(feature = "store")]

mod common;

use common::play::{gateway, new_save, turn};
use common::scripted;
use loreloom::llm::Gateway;
use loreloom::llm::scripted::Reply;
use loreloom::rules::standing;
use loreloom::session::controller::Controller;
use loreloom::session::turn::TurnResult;
use serde_json::{Value, json};

/// One turn's replies: the persona's extractor proposes `ops`; the rest as usual.
fn replies(n: usize, ops: &Value, choices: &[&str]) -> Vec<Reply> {
    let mut r = scripted::turn_replies(n);
    let first_extract = r
        .iter()
        .position(|r| r.stage.as_deref() == Some("extract"))
        .unwrap();
    r[first_extract] = scripted::reply(
        "extract",
        json!({"state_ops": ops, "observations": []}).to_string(),
    );
    let last = r.len() - 1;
    r[last] = scripted::reply("choices", json!({ "choices": choices }).to_string());
    r
}

/// Play one turn through the controller with a fresh script (leftover replies never leak into the next turn).
fn play(ctl: &mut Controller, gateway: &Gateway, line: &str, script: Vec<Reply>) -> TurnResult {
    turn(ctl, gateway, line, script).0
}

fn perception(ctl: &Controller, npc: &str) -> f64 {
    ctl.state.world.perception[npc]
}

const CHOICES: [&str; 4] = [
    "Ask Ned to help you search the toll house",
    "Ask Tamsin to help you trim the wicks",
    "Thank Ned for the ledger",
    "Watch the quay in silence",
];

/// Seed 002 SC-028: an NPC the player helped ends more than 30 points above
/// one the player betrayed; the betrayed one's perception costs dice and
/// hides the options that need their goodwill; it all survives reopening the save.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one scripted session, turn by turn, read top to bottom"
)]
fn a_helped_npc_ends_far_above_a_betrayed_one() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("green_night"), 11);
    let gateway = gateway(dir.path());
    let mut ctl = Controller::open_with(&save, None).unwrap();

    // Session start: every NPC has a first impression, every faction a standing.
    let start_tamsin = perception(&ctl, "tamsin_reed");
    let start_ned = perception(&ctl, "ned_fallow");
    println!("start: tamsin {start_tamsin}, ned {start_ned}");
    for npc in [
        "hesper_vane",
        "tamsin_reed",
        "aldous_crane",
        "brinny_sedge",
        "ned_fallow",
    ] {
        let p = perception(&ctl, npc);
        assert!((-100.0..=100.0).contains(&p), "{npc}: {p}");
    }
    assert!((ctl.state.world.reputation["sluice_board"] - 20.0).abs() < 1e-9);
    assert!(ctl.state.world.reputation["wickwardens"].abs() < 1e-9);

    let help = json!([
        {"op": "relation", "path": "relations.player.tamsin_reed.trust", "value": 2},
        {"op": "relation", "path": "relations.player.tamsin_reed.tension", "value": -1},
    ]);
    let betray = json!([
        {"op": "relation", "path": "relations.player.ned_fallow.trust", "value": -1},
        {"op": "relation", "path": "relations.player.ned_fallow.tension", "value": 3},
    ]);
    let turns = [
        (
            "I help Tamsin carry the oil cans down to the Patience",
            &help,
        ),
        (
            "I tell Crane that Ned Fallow hid the page in the stove-pipe",
            &betray,
        ),
        (
            "I stand by Tamsin when the crowd jeers at the lamp-girl",
            &help,
        ),
        ("I let the town believe Ned burned the ledger page", &betray),
    ];
    let mut last = None;
    for (n, (line, ops)) in turns.iter().enumerate() {
        last = Some(play(&mut ctl, &gateway, line, replies(n, ops, &CHOICES)));
    }
    let tamsin = perception(&ctl, "tamsin_reed");
    let ned = perception(&ctl, "ned_fallow");
    println!("after: tamsin {tamsin}, ned {ned}");
    assert!(tamsin > start_tamsin && ned < start_ned);
    assert!(
        tamsin - ned > 30.0,
        "SC-028: helped {tamsin} vs betrayed {ned}"
    );
    // The changes are in the turn's applied ops, for the overlay and replay.
    let last = last.unwrap();
    assert!(
        last.changes
            .iter()
            .any(|c| c.op.path == "perception.ned_fallow"),
        "{:?}",
        last.changes
    );
    // Ned is a townsman: a share of his fall reached the town's reputation.
    assert!(
        ctl.state.world.reputation["reedmere_town"] < 10.0,
        "{:?}",
        ctl.state.world.reputation
    );
    // Tamsin is a Wickwarden: her rise lifted the guild.
    assert!(ctl.state.world.reputation["wickwardens"] > 0.0);

    // Choices: cooperation needs perception above 30, warmth is hidden from the hostile.
    let choices = &ctl.choices;
    assert!(
        !choices.iter().any(|c| c.starts_with("Ask Ned")),
        "{choices:?}"
    );
    assert!(ned >= -30.0 || !choices.iter().any(|c| c.starts_with("Thank Ned")));
    assert!(choices.iter().any(|c| c == "Watch the quay in silence"));
    if tamsin > 30.0 {
        assert!(
            choices.iter().any(|c| c.starts_with("Ask Tamsin")),
            "{choices:?}"
        );
    }
    assert!(
        last.refused
            .iter()
            .any(|r| r.contains("withheld \"Ask Ned to help")),
        "{:?}",
        last.refused
    );

    // Dice: a move aimed at Ned carries his perception's tier as the sentiment modifier.
    let aimed = play(
        &mut ctl,
        &gateway,
        "I ask Ned Fallow to open the ledger cupboard",
        replies(9, &json!([]), &CHOICES),
    );
    let roll = &aimed.rolls[0].roll;
    let sentiment = roll
        .modifiers
        .iter()
        .find(|m| m.name == "sentiment")
        .map(|m| m.value);
    let expected = standing::modifier(ned).clamp(-1, 1);
    assert_eq!(sentiment.unwrap_or(0), expected, "{roll:?}");
    assert_eq!(expected, -1, "Ned ({ned}) is past -30 after two betrayals");

    // Persistence: the save holds it; reopening shows the same scores.
    let (tamsin_now, ned_now) = (
        perception(&ctl, "tamsin_reed"),
        perception(&ctl, "ned_fallow"),
    );
    drop(ctl);
    let ctl = Controller::open_with(&save, None).unwrap();
    assert!((perception(&ctl, "tamsin_reed") - tamsin_now).abs() < 1e-9);
    assert!((perception(&ctl, "ned_fallow") - ned_now).abs() < 1e-9);
}

/// Perception fades with in-game time: each turn is five minutes and the
/// Drowned Reach's unit is four hours, so quiet turns wear a score down slowly.
#[test]
fn perception_decays_with_in_game_time() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("green_night"), 3);
    let gateway = gateway(dir.path());
    let mut ctl = Controller::open_with(&save, None).unwrap();
    // Warmed by what the persona does (an extractor proposes relations, not
    // perception: `rules::offer`), past 50 in two turns.
    let warm = json!([
        {"op": "relation", "path": "relations.player.hesper_vane.trust", "value": 3},
    ]);
    for n in 0..2 {
        play(
            &mut ctl,
            &gateway,
            "I haul the chain beside Hesper all night",
            replies(n, &warm, &CHOICES),
        );
    }
    let after_one = perception(&ctl, "hesper_vane");
    assert!(after_one > 50.0, "{after_one}");
    for n in 2..5 {
        play(
            &mut ctl,
            &gateway,
            "I watch the fog",
            replies(n, &json!([]), &CHOICES),
        );
    }
    let after_four = perception(&ctl, "hesper_vane");
    println!("hesper: {after_one} then {after_four}");
    assert!(after_four < after_one, "{after_one} -> {after_four}");
    // Three turns of 5 minutes at the strong-opinion rate (5% per 240 minutes) lose little.
    assert!(after_one - after_four < 3.0, "{after_one} -> {after_four}");
}
