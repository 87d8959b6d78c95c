//! The world pushes back (#41): blocked moves, consequences, NPC rolls, lines and veils, scripted.
//!
//! Each turn runs the real prompts, contracts and gateway over the shipped
//! Drowned Reach with a scripted model; its golden transcript holds what the
//! player reads (engine notices included), the dice, the changes and the
//! choices.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::scripted::{reply, turn_replies, without};
use loreloom::campaign::{self, system_rulesets};
use loreloom::llm::scripted::Reply;
use loreloom::llm::{CallRecord, Gateway};
use loreloom::session::play::{opening, run_turn};
use loreloom::session::turn::check::Blocked;
use loreloom::session::turn::{Calibration, PlayerInput, SessionState, TurnResult};
use loreloom::transcript::Kind;
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gateway(data: &Path, replies: Vec<Reply>) -> Gateway {
    common::scripted_gateway(data, replies).0
}

fn drowned_reach(seed: u64, lines: &[&str]) -> SessionState {
    let (c, report) = campaign::load(
        &root().join("campaigns/drowned-reach"),
        &[system_rulesets()],
    );
    let c = Arc::new(c.unwrap_or_else(|| panic!("{report}")));
    opening(
        c,
        None,
        "small",
        "large",
        seed,
        Calibration {
            tone: "quiet dread".into(),
            difficulty: "standard".into(),
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
            veils: Vec::new(),
            npcs_per_turn: Some(1),
        },
    )
    .unwrap()
}

fn play(state: &SessionState, text: &str, replies: Vec<Reply>) -> TurnResult {
    let data = tempfile::tempdir().unwrap();
    let gateway = gateway(data.path(), replies);
    let input = PlayerInput {
        text: text.into(),
        action_id: "act-1".into(),
        ..PlayerInput::default()
    };
    run_turn(&gateway, state.clone(), input, |_| {}).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A referee that rolls nothing: the move simply happens.
fn unrolled(replies: Vec<Reply>) -> Vec<Reply> {
    let mut r = vec![reply(
        "resolve",
        json!({"possible": true, "blocked_reason": "", "clarification_question": "",
               "check": "", "stat": "", "modifiers": []})
        .to_string(),
    )];
    r.extend(without("resolve", replies));
    r
}

/// What the player reads (notices too), the dice, the changes and the choices.
fn transcript(result: &TurnResult) -> String {
    let mut out = String::new();
    for m in &result.messages {
        if matches!(m.kind, Kind::Narration | Kind::System) {
            let _ = writeln!(out, "{}: {}", m.kind.name(), m.content);
        }
    }
    for r in &result.rolls {
        let _ = writeln!(
            out,
            "roll {} {} ({}): {} = {}{}",
            r.actor,
            r.check,
            r.stat.as_deref().unwrap_or("-"),
            r.roll.expression,
            r.roll.total,
            r.against
                .as_ref()
                .map_or_else(String::new, |a| format!(", resisting {a}"))
        );
    }
    for c in &result.changes {
        let _ = writeln!(out, "change: {}", c.op);
    }
    for l in &result.limits {
        let _ = writeln!(out, "limit: {l}");
    }
    for c in &result.continuity {
        let _ = writeln!(out, "continuity: {c}");
    }
    let _ = writeln!(out, "minutes: {}", result.play_minutes);
    let _ = writeln!(out, "choices: {:?}", result.choices);
    out
}

/// The first rendered prompt of the turn's calls to `stage`, both roles.
fn prompts(result: &TurnResult, stage: &str) -> Vec<String> {
    result
        .records
        .iter()
        .filter(|r| r.stage == stage)
        .map(prompt_text)
        .collect()
}

fn prompt_text(record: &CallRecord) -> String {
    record.first().map_or_else(String::new, |a| {
        a.messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

fn narrations(result: &TurnResult) -> Vec<&str> {
    result
        .messages
        .iter()
        .filter(|m| m.kind == Kind::Narration)
        .map(|m| m.content.as_str())
        .collect()
}

/// An NPC's intention that acts on the player.
const SNATCH: &str = "Aldous snatches the letter from your hands.";

/// `replies` with the first NPC to act intending `intention`.
fn first_npc_intends(mut replies: Vec<Reply>, intention: &str) -> Vec<Reply> {
    let at = replies
        .iter()
        .position(|r| r.stage.as_deref() == Some("npc_intent"))
        .expect("an NPC intent in the script");
    replies[at] = reply(
        "npc_intent",
        json!({"thought": "", "intention": intention}).to_string(),
    );
    replies
}

fn stages(result: &TurnResult) -> Vec<&str> {
    result.records.iter().map(|r| r.stage.as_str()).collect()
}

#[test]
fn a_person_not_present_is_not_there_and_the_choices_say_where_to_look() {
    let mut state = drowned_reach(3, &[]);
    // Brinny was left at Lowmarsh.
    state
        .world
        .scene
        .insert("whereabouts".into(), json!({"brinny_sedge": "lowmarsh"}));
    let before = state.world.clone();
    let result = play(
        &state,
        "I turn to Brinny and ask her to help me.",
        turn_replies(1),
    );
    assert_eq!(
        result.blocked,
        Some(Blocked::Absent {
            id: "brinny_sedge".into(),
            name: "Brinny Sedge".into(),
            at: Some("Lowmarsh".into())
        })
    );
    // No referee, no extractor for the move: nothing of it reaches the world.
    assert!(!stages(&result).contains(&"resolve"));
    assert_eq!(
        result.rolls.iter().filter(|r| r.actor == "player").count(),
        0
    );
    assert_eq!(result.world.inventory, before.inventory);
    // The engine tells it: no model narrates a blocked move as done.
    let told = narrations(&result);
    assert_eq!(
        told[0],
        "You look for Brinny Sedge, but Brinny Sedge is not here; the last you saw of them was at Lowmarsh."
    );
    assert_eq!(prompts(&result, "narrate").len(), result.acted.len());
    assert_eq!(result.choices[0], "Go to Lowmarsh to find Brinny Sedge");
    insta::assert_snapshot!("world_absent_person", transcript(&result));
}

#[test]
fn an_item_not_held_is_not_used_and_its_holder_is_asked_instead() {
    let state = drowned_reach(3, &[]);
    let result = play(
        &state,
        "I take out the sluice key and unlock the winch-house.",
        turn_replies(1),
    );
    assert_eq!(
        result.blocked,
        Some(Blocked::NotHeld {
            item: "the Sluice key".into(),
            holder: Some("Aldous Crane".into()),
            holder_here: true
        })
    );
    assert_eq!(result.choices[0], "Ask Aldous Crane for the Sluice key");
    assert_eq!(
        narrations(&result)[0],
        "You reach for the Sluice key, but it is not in your hands: Aldous Crane has it."
    );
    assert!(result.messages.iter().any(|m| m.kind == Kind::System
        && m.content == "blocked: you do not have the Sluice key; Aldous Crane has it"));
    insta::assert_snapshot!("world_item_not_held", transcript(&result));
}

#[test]
fn a_far_place_is_reached_one_way_at_a_time_and_the_way_takes_its_minutes() {
    let state = drowned_reach(3, &[]);
    let far = play(
        &state,
        "I row out onto the Drowned Reach.",
        unrolled(turn_replies(1)),
    );
    assert!(matches!(far.blocked, Some(Blocked::Far { .. })));
    assert_eq!(far.choices[0], "Go to the Ferry Patience");
    assert_eq!(far.world.scene["location"], "reedmere_quay");
    let near = play(
        &state,
        "I go to the Ferry Patience.",
        unrolled(turn_replies(1)),
    );
    assert_eq!(near.blocked, None);
    assert_eq!(near.world.scene["location"], "patience_deck");
    // The route's five minutes, not a fixed turn.
    assert!((near.play_minutes - state.play_minutes - 5.0).abs() < 1e-9);
    insta::assert_snapshot!("world_far_place", transcript(&far));
}

#[test]
fn a_clock_that_fills_with_time_fires_its_trigger_changes_the_scene_and_is_told() {
    let mut state = drowned_reach(3, &[]);
    // The Sallow rises every 45 minutes; five more fill it to 2.
    state.play_minutes = 40.0;
    let result = play(
        &state,
        "I wait on the quay and watch the water.",
        unrolled(turn_replies(1)),
    );
    assert_eq!(result.world.clocks["flood_rising"].value, 2);
    assert_eq!(result.world.scene["danger_tier"], 1);
    let told = "Water over the lower quay steps; the Lowmarsh plank walks go under and the eel-folk start asking for passage.";
    assert_eq!(result.fired, [told]);
    // Shown as it happens, and told by the narration of the same turn.
    assert!(
        result
            .messages
            .iter()
            .any(|m| m.kind == Kind::System && m.content == format!("world: {told}"))
    );
    let narrate = &prompts(&result, "narrate")[0];
    assert!(narrate.contains(told), "{narrate}");
    assert!(narrate.contains("The scene is risky"), "{narrate}");
    // Given once: the NPC's narration is not asked to tell it again (it may
    // read it in the story so far).
    assert!(
        prompts(&result, "narrate")
            .iter()
            .skip(1)
            .all(|p| !p.contains("Meanwhile"))
    );
    // The scripted narration left it out: the engine tells it in the campaign's words.
    assert_eq!(result.appended, [told]);
    assert!(narrations(&result).contains(&told));
    assert!(result.world.untold.is_empty());
    // Kept: the codex lists what the world did.
    let mut next = state.clone();
    next.advance(&result);
    let codex = loreloom::session::codex::codex(&next, &[]);
    assert!(
        codex
            .lore
            .iter()
            .any(|l| l.contains("Water over the lower quay steps"))
    );
    insta::assert_snapshot!("world_clock_fills", transcript(&result));
}

#[test]
fn a_third_failure_in_a_row_lands_the_binding_consequence() {
    let found = (0..60).find_map(|seed| {
        let mut state = drowned_reach(seed, &[]);
        state.world.scene.insert("failure_streak".into(), json!(2));
        let result = play(&state, "I leap for the ferry chain.", turn_replies(1));
        let failed = result
            .rolls
            .iter()
            .any(|r| r.actor == "player" && r.against.is_none() && r.band == "failure");
        failed.then_some(result)
    });
    let result = found.expect("a failing roll among 60 seeds");
    assert_eq!(result.world.scene["failure_streak"], 0);
    assert!(
        result
            .fired
            .iter()
            .any(|f| f.starts_with("Three failures in a row")),
        "{:?}",
        result.fired
    );
    let narrate = &prompts(&result, "narrate")[0];
    assert!(narrate.contains("Three failures in a row"), "{narrate}");
}

#[test]
fn an_npc_acting_on_the_player_rolls_and_can_be_resisted() {
    let npc_turn = |seed: u64| {
        let state = drowned_reach(seed, &[]);
        // The first NPC to act snatches the player's letter.
        let replies = first_npc_intends(unrolled(turn_replies(1)), SNATCH);
        play(&state, "I hold up my letter of commission.", replies)
    };
    let resisted = (0..60)
        .map(npc_turn)
        .find(|r| {
            let npc = r.rolls.iter().find(|x| x.actor != "player");
            let mine = r.rolls.iter().find(|x| x.against.is_some());
            matches!((npc, mine), (Some(n), Some(m)) if m.roll.total >= n.roll.total)
        })
        .expect("a resisted action among 60 seeds");
    let npc_narration = &prompts(&resisted, "narrate")[1];
    assert!(npc_narration.contains("You resist"), "{npc_narration}");
    assert!(
        !npc_narration.contains("it simply happens"),
        "{npc_narration}"
    );
    insta::assert_snapshot!("world_npc_resisted", transcript(&resisted));
}

#[test]
fn a_narration_over_a_line_is_asked_again_then_falls_back_and_never_shows() {
    let state = drowned_reach(3, &["drowning"]);
    let crossing = "Ned went under the black water and drowned.";
    let mut replies = vec![
        reply("narrate", crossing),
        reply("narrate", "You grip the rail; the fog gives nothing back."),
    ];
    replies.extend(unrolled(turn_replies(1)));
    let result = play(&state, "I look over the side.", replies);
    assert!(
        result
            .messages
            .iter()
            .all(|m| !m.content.contains("drowned."))
    );
    assert_eq!(
        result.limits[0], "narrate player: line: drowning: asked again",
        "the overlay names the category, never the text"
    );
    let again = &prompts(&result, "narrate")[1];
    assert!(again.contains("keep drowning out of the story"), "{again}");
    // Crossed twice: the engine's fallback line, never the model's.
    let mut replies = vec![reply("narrate", crossing), reply("narrate", crossing)];
    replies.extend(unrolled(turn_replies(1)));
    let twice = play(&state, "I look over the side.", replies);
    assert!(
        twice
            .messages
            .iter()
            .all(|m| !m.content.contains("drowned."))
    );
    assert!(
        twice
            .limits
            .iter()
            .any(|l| l.ends_with("the fallback narrated it"))
    );
    insta::assert_snapshot!("world_line_regenerated", transcript(&result));
}

#[test]
fn what_play_introduces_stays_and_a_thread_it_opens_can_be_resolved() {
    let state = drowned_reach(3, &[]);
    let mut replies = vec![reply(
        "extract",
        json!({"state_ops": [
            {"op": "introduce", "path": "people.old_wick",
             "value": {"name": "Old Wick", "description": "A lamplighter with a cough and a taper."}},
            {"op": "introduce", "path": "threads.missing_taper",
             "value": {"name": "Who took the chapel's long taper?", "description": "Without it no lantern is lit from the Mother Flame."}},
            {"op": "introduce", "path": "items.spare_wick",
             "value": {"name": "A spare wick", "description": "One too many."}},
            {"op": "introduce", "path": "people.hesper_again",
             "value": {"name": "Hesper Vane", "description": "Not a new person."}}
        ], "observations": []})
        .to_string(),
    )];
    replies.extend(unrolled(turn_replies(1)));
    let first = play(&state, "I call out for whoever keeps the lamps.", replies);
    let extract = &prompts(&first, "extract")[0];
    assert!(
        extract.contains("introduce: <people|items|places|threads>.<new_id>"),
        "{extract}"
    );
    // Two a turn, and never a name the world already has.
    let new = &first.world.introduced;
    assert_eq!(new.keys().collect::<Vec<_>>(), ["old_wick"]);
    assert_eq!(first.world.threads["missing_taper"].status, "open");
    assert!(first.world.present().contains(&"old_wick".to_owned()));
    assert!(first.refused.iter().any(|r| r.contains("items.spare_wick")));
    assert!(
        first
            .refused
            .iter()
            .any(|r| r.contains("people.hesper_again"))
    );

    let mut next = state.clone();
    next.advance(&first);
    // Old Wick is here to be spoken to, and the codex knows him.
    let codex = loreloom::session::codex::codex(&next, &[]);
    assert!(
        codex
            .people
            .iter()
            .any(|p| p.name == "Old Wick" && p.description.contains("introduced in turn"))
    );
    let mut replies = vec![reply(
        "extract",
        json!({"state_ops": [
            {"op": "thread", "path": "threads.missing_taper.status", "value": "resolved"}
        ], "observations": []})
        .to_string(),
    )];
    replies.extend(unrolled(turn_replies(2)));
    let second = play(&next, "I ask Old Wick where the long taper went.", replies);
    assert_eq!(second.blocked, None, "Old Wick is present");
    assert_eq!(second.world.threads["missing_taper"].status, "resolved");
    insta::assert_snapshot!("world_introduced", transcript(&first));
}

#[test]
fn a_narration_that_has_an_absent_person_speak_is_told_again_and_the_better_telling_kept() {
    use loreloom::session::turn::{ASKED_AGAIN, KEPT_SECOND};
    let state = drowned_reach(3, &[]);
    let wrong = "Brinny Sedge says the tide is turning.";
    let right = "You look out over the grey water; the fog gives nothing back.";
    let mut replies = vec![reply("narrate", wrong), reply("narrate", right)];
    replies.extend(unrolled(turn_replies(1)));
    let result = play(&state, "I look over the side.", replies);
    assert_eq!(narrations(&result)[0], right);
    assert!(narrations(&result).iter().all(|n| !n.contains(wrong)));
    assert_eq!(
        result.continuity[0],
        format!(
            "narrate the player: a person not present speaks or acts (Brinny Sedge){ASKED_AGAIN}"
        )
    );
    assert!(
        result.continuity[1].ends_with(KEPT_SECOND),
        "{:?}",
        result.continuity
    );
    let again = &prompts(&result, "narrate")[1];
    assert!(
        again.contains(
            "Important: Brinny Sedge is not here, so Brinny Sedge does not speak or act."
        ),
        "{again}"
    );
    insta::assert_snapshot!("world_retold", transcript(&result));

    // Told again no better: the first telling stays, and it is asked only once.
    let mut replies = vec![reply("narrate", wrong), reply("narrate", wrong)];
    replies.extend(unrolled(turn_replies(1)));
    let again = play(&state, "I look over the side.", replies);
    assert_eq!(narrations(&again)[0], wrong);
    assert_eq!(
        again.continuity[1],
        "narrate the player: told again: 1 contradiction(s) against 1: kept the first telling"
    );
    assert_eq!(
        prompts(&again, "narrate").len(),
        3,
        "two tellings of the player's narration, one of the NPC's: {:?}",
        stages(&again)
    );
}

#[test]
fn a_way_the_flood_shuts_is_closed_and_the_way_round_offered() {
    let at_the_dyke = |flood: i64| {
        let mut state = drowned_reach(3, &[]);
        state
            .world
            .scene
            .insert("location".into(), json!("reeves_dyke"));
        state
            .world
            .scene
            .insert("present".into(), json!(["player"]));
        state.world.clocks.get_mut("flood_rising").unwrap().value = flood;
        play(&state, "I walk to Lowmarsh.", unrolled(turn_replies(1)))
    };
    let open = at_the_dyke(1);
    assert_eq!(open.blocked, None);
    assert_eq!(open.world.scene["location"], "lowmarsh");
    assert!(
        (open.play_minutes - 30.0).abs() < 1e-9,
        "the plank walks take their minutes"
    );
    let shut = at_the_dyke(2);
    assert_eq!(
        shut.blocked.as_ref().map(Blocked::reason).as_deref(),
        Some(
            "the way to Lowmarsh is shut: the plank walks across the marsh are under the flood; \
             the way round goes by Sluice Board Hall"
        )
    );
    assert_eq!(shut.world.scene["location"], "reeves_dyke");
    assert_eq!(shut.choices[0], "Go to Sluice Board Hall");
    assert!(
        stages(&shut).iter().all(|s| *s != "resolve"),
        "no referee: {:?}",
        stages(&shut)
    );
    insta::assert_snapshot!("world_way_shut", transcript(&shut));
}

/// Aldous Crane, addressed, snatches the letter; the scene at `tier`, his
/// escalation at `step` before the turn.
fn pressed(tier: i64, step: Option<&str>) -> TurnResult {
    let mut state = drowned_reach(5, &[]);
    state.world.scene.insert("danger_tier".into(), json!(tier));
    if let Some(step) = step {
        state
            .world
            .characters
            .get_mut("aldous_crane")
            .unwrap()
            .tags
            .insert(format!("escalation_{step}"));
    }
    let replies = first_npc_intends(unrolled(turn_replies(1)), SNATCH);
    play(
        &state,
        "I show Aldous Crane my letter of commission.",
        replies,
    )
}

fn steps_of(result: &TurnResult) -> Vec<String> {
    result.world.characters["aldous_crane"]
        .tags
        .iter()
        .filter(|t| t.starts_with("escalation_"))
        .cloned()
        .collect()
}

#[test]
fn an_npc_pressing_the_player_escalates_one_step_at_a_time_and_lethal_only_when_dangerous() {
    // First time: soft, and his narration is told how far he may go.
    let first = pressed(0, None);
    assert_eq!(steps_of(&first), ["escalation_soft"]);
    let told = &prompts(&first, "narrate")[1];
    assert!(
        told.contains(
            "Aldous Crane goes as far as a soft move against you and no further: \
             warnings, cold shoulders, a door pointedly shut."
        ),
        "{told}"
    );
    assert!(
        first
            .changes
            .iter()
            .any(|c| c.op.to_string().contains("escalation_soft")),
        "a typed op, in the turn's changes"
    );
    // A safe scene holds him at soft; a risky one lets him go hard, one step.
    assert_eq!(steps_of(&pressed(0, Some("soft"))), ["escalation_soft"]);
    assert_eq!(steps_of(&pressed(1, Some("soft"))), ["escalation_hard"]);
    assert_eq!(steps_of(&pressed(1, Some("hard"))), ["escalation_hard"]);
    // Lethal only where the scene is dangerous, and still one step at a time.
    assert_eq!(steps_of(&pressed(2, None)), ["escalation_soft"]);
    let lethal = pressed(2, Some("hard"));
    assert_eq!(steps_of(&lethal), ["escalation_lethal"]);
    let told = &prompts(&lethal, "narrate")[1];
    assert!(
        told.contains(
            "goes as far as a lethal move against you: harm that can kill or cannot be undone."
        ),
        "{told}"
    );
}

#[test]
fn a_choice_the_engine_would_block_is_not_offered() {
    let state = drowned_reach(3, &[]);
    let mut replies = unrolled(turn_replies(1));
    let at = replies
        .iter()
        .position(|r| r.stage.as_deref() == Some("choices"))
        .unwrap();
    replies[at] = reply(
        "choices",
        json!({"choices": ["Row out to Lowmarsh", "Ask Brinny Sedge about the bell", "Ask Hesper about the green"]})
            .to_string(),
    );
    let result = play(&state, "I look over the side.", replies);
    assert_eq!(result.choices[0], "Ask Hesper about the green");
    assert!(
        !result
            .choices
            .iter()
            .any(|c| c.contains("Lowmarsh") || c.contains("Brinny"))
    );
    assert!(
        result.refused.iter().any(|r| r.starts_with(
            "choices: dropped \"Ask Brinny Sedge about the bell\": Brinny Sedge is not here"
        )),
        "{:?}",
        result.refused
    );
}

#[test]
fn the_scene_turns_from_dusk_to_night_as_play_time_passes() {
    let mut state = drowned_reach(3, &[]);
    assert_eq!(state.world.scene["opened_at_minute"], 18.0 * 60.0);
    state.play_minutes = 118.0;
    let result = play(&state, "I wait on the quay.", unrolled(turn_replies(1)));
    assert_eq!(
        result.world.scene["time"],
        "night, the fourth night of green lanterns"
    );
    assert!(
        result
            .changes
            .iter()
            .any(|c| c.op.to_string().starts_with("set scene.time"))
    );
}

#[cfg(feature = "store")]
#[test]
fn a_recap_over_a_line_is_not_shown_and_the_last_narration_stands_in() {
    use loreloom::session::save_files::{NewSave, create_save};
    use loreloom::session::summaries::finish_recap;
    let dir = tempfile::tempdir().unwrap();
    let (path, state) = create_save(&NewSave {
        campaign: root().join("campaigns/drowned-reach"),
        save: Some(dir.path().join("reach.db")),
        scenario: None,
        seed: Some(3),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration: Calibration {
            lines: vec!["drowning".into()],
            ..Calibration::default()
        },
    })
    .unwrap();
    let mut store = loreloom::store::Store::open(&path).unwrap();
    let crossing = "Previously: Ned went under the black water and drowned.";
    let shown = finish_recap(&mut store, &state, 1, Ok(crossing.into()));
    assert!(shown.starts_with("The coach door opens on fog"), "{shown}");
    assert!(
        store.summaries().unwrap().is_empty(),
        "nothing over the line is kept"
    );
    // A recap within the player's limits is shown and kept.
    let fine = "Previously: you came to Reedmere as the lanterns turned green.";
    assert_eq!(finish_recap(&mut store, &state, 1, Ok(fine.into())), fine);
    assert_eq!(store.summaries().unwrap().len(), 1);
}
