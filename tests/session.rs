//! Whole turns of an open-ended session with a scripted model, through the real prompts.
//!
//! Every stage goes through the real prompts, contracts and gateway: golden transcripts, NPC
//! activation, a failed stage, a repair that succeeds.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::scripted::{reply, resolve, turn_replies, without};
use loreloom::campaign::{self, system_rulesets};
use loreloom::llm::scripted::Reply;
use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
use loreloom::session::play::{Progress, opening, run_turn};
use loreloom::session::turn::{
    Calibration, GENERIC_CHOICES, PlayerInput, Ruling, SessionState, TurnResult, TurnRunner,
};
use loreloom::transcript::{Kind, player_view};
use serde_json::json;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn gateway(data: &Path, replies: Vec<Reply>) -> (Gateway, ScriptedBackend) {
    common::scripted_gateway(data, replies)
}

fn drowned_reach(seed: u64) -> SessionState {
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
            difficulty: "normal".into(),
            lines: vec!["harm to children shown".into()],
            veils: vec!["drowning".into()],
            npcs_per_turn: None,
        },
    )
    .unwrap()
}

fn input(text: &str, id: &str) -> PlayerInput {
    PlayerInput {
        text: text.into(),
        whisper_to: None,
        action_id: id.into(),
        clarified: false,
        ruling: None,
    }
}

/// The transcript of one turn: what the player reads, the dice, who acted, what changed.
fn transcript(result: &TurnResult) -> String {
    let mut out = String::new();
    for m in player_view(&result.messages, "player", false) {
        let _ = writeln!(out, "{} {}: {}", m.kind.name(), m.owner, m.content);
    }
    for r in &result.rolls {
        let _ = writeln!(
            out,
            "roll {} ({}): {} = {:?} {:+} = {} → {}",
            r.check,
            r.stat.as_deref().unwrap_or("-"),
            r.roll.expression,
            r.roll.rolls,
            r.roll.modifier,
            r.roll.total,
            r.label
        );
    }
    let _ = writeln!(
        out,
        "acted: {:?}; quiet: {:?}",
        result.acted, result.skipped
    );
    for c in &result.changes {
        let _ = writeln!(out, "change: {} ({} → {})", c.op, c.before, c.after);
    }
    for o in &result.observations {
        let _ = writeln!(
            out,
            "observation {} ({}): {}",
            o.character_id, o.importance, o.content
        );
    }
    for r in &result.refused {
        let _ = writeln!(out, "refused: {r}");
    }
    let _ = writeln!(out, "choices: {:?}", result.choices);
    out
}

#[test]
fn two_turns_of_the_drowned_reach_golden() {
    let data = tempfile::tempdir().unwrap();
    let mut state = drowned_reach(7);
    let mut all = String::new();
    for (n, text) in [
        (1, "I step aboard and grab the rail."),
        (2, "I ask Hesper why the lanterns burn green."),
    ] {
        // A fresh script per turn: how many NPCs speak depends on their dice.
        let (gateway, _backend) = gateway(data.path(), turn_replies(n));
        let mut streamed = String::new();
        let result = run_turn(
            &gateway,
            state.clone(),
            input(text, &format!("act-{n}")),
            |p| {
                if let Progress::Token(t) = p {
                    streamed.push_str(t);
                }
            },
        )
        .unwrap_or_else(|e| panic!("turn {n}: {e}"));
        assert!(
            streamed.contains(&format!("Turn {n}: you grip")),
            "narration streams: {streamed}"
        );
        let _ = writeln!(all, "## turn {n}: {text}\n{}", transcript(&result));
        // The next turn starts from this one's state.
        state.advance(&result);
        assert_eq!(
            result.rolls.iter().filter(|r| r.actor == "player").count(),
            1
        );
        assert!(
            result.acted.contains(&"aldous_crane".to_owned()),
            "baked NPCs always act"
        );
        assert!(result.acted.contains(&"hesper_vane".to_owned()));
        assert_eq!(
            &result.acted[..2],
            ["aldous_crane", "hesper_vane"],
            "baked first"
        );
    }
    insta::assert_snapshot!("drowned_reach_two_turns", all);
}

#[test]
fn the_same_seed_and_replies_replay_the_same_turn() {
    let run = || {
        let data = tempfile::tempdir().unwrap();
        let (gateway, _) = gateway(data.path(), turn_replies(1));
        let r = run_turn(
            &gateway,
            drowned_reach(99),
            input("I jump to the quay.", "a"),
            |_| {},
        )
        .unwrap();
        transcript(&r)
    };
    assert_eq!(run(), run());
}

#[test]
fn at_most_npcs_per_turn_act_the_addressed_one_first_and_the_narration_goes_out_before_its_extractor()
 {
    let data = tempfile::tempdir().unwrap();
    // Unlimited (a save from before the setting): every NPC the dice activate acts.
    let (g, _) = gateway(data.path(), turn_replies(1));
    let all = run_turn(&g, drowned_reach(7), input("I wait.", "a"), |_| {}).unwrap();
    assert!(
        all.acted.len() >= 2,
        "the seed activates several: {:?}",
        all.acted
    );

    for cap in [1_u32, 0] {
        let mut state = drowned_reach(7);
        state.calibration.npcs_per_turn = Some(cap);
        let (g, _) = gateway(data.path(), turn_replies(1));
        let mut order = Vec::new();
        let r = run_turn(
            &g,
            state,
            input("I ask Ned Fallow who paid for the oil.", "b"),
            |p| {
                if let Progress::Stage(s) = p {
                    order.push(s.to_owned());
                }
            },
        )
        .unwrap();
        let cap = usize::try_from(cap).unwrap();
        assert_eq!(r.acted.len(), cap, "{:?}", r.acted);
        if cap == 1 {
            // Spoken to, Ned Fallow answers before the baked NPCs, whatever his chattiness rolled.
            assert_eq!(r.acted, ["ned_fallow"]);
        }
        assert!(r.skipped.len() >= all.acted.len() - cap, "{:?}", r.skipped);
        let npc_narrations = r
            .messages
            .iter()
            .filter(|m| m.kind == Kind::Intention && m.owner != "player")
            .count();
        assert_eq!(npc_narrations, cap);
        // The player's narration is sent before the persona's extractor.
        let narrate = order.iter().position(|s| s == "narrate").unwrap();
        let extract = order.iter().position(|s| s == "extract").unwrap();
        assert_eq!(order[0], "resolve", "{order:?}");
        assert!(narrate < extract, "{order:?}");
    }
}

/// #42: a question that needs no roll, whose answer its author wrote, is
/// told by the engine: the player's words, then the NPC's first answer on
/// that thread, with no narration asked of the model for the player (nor a
/// line of the author's that crosses a line or veil); the NPC
/// asked does not act again that turn.
#[test]
fn a_question_its_author_answered_is_told_in_the_authors_words() {
    let data = tempfile::tempdir().unwrap();
    let mut state = drowned_reach(7);
    state.calibration.npcs_per_turn = Some(2);
    let first = state.campaign.characters["hesper_vane"]
        .profile
        .as_ref()
        .unwrap()
        .answers["green_lanterns"][0]
        .clone();
    let mut replies = without("resolve", turn_replies(1));
    replies.insert(
        0,
        reply(
            "resolve",
            json!({"possible": true, "blocked_reason": "", "clarification_question": "",
                   "check": "", "stat": "", "modifiers": []})
            .to_string(),
        ),
    );
    let (g, _) = gateway(data.path(), replies);
    let mut stages: Vec<String> = Vec::new();
    let r = run_turn(
        &g,
        state,
        input(
            "Ask Hesper Vane: \"Why do the ferry lanterns burn green?\"",
            "a",
        ),
        |p| {
            if let Progress::Stage(stage) = p {
                stages.push(stage.to_owned());
            }
        },
    )
    .unwrap();
    let told: Vec<(&str, &str)> = r
        .messages
        .iter()
        .filter(|m| m.kind == Kind::Narration)
        .map(|m| (m.owner.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        told[..2],
        [
            (
                "engine",
                "You ask Hesper Vane, \"Why do the ferry lanterns burn green?\""
            ),
            (
                "engine",
                format!("Hesper Vane turns to you. \u{201c}{first}\u{201d}").as_str()
            ),
        ],
        "{told:#?}"
    );
    assert!(r.rolls.iter().all(|roll| roll.actor != "player"), "no roll");
    // Hesper said her answer and nothing more; one other NPC acted, narrated
    // by the model.
    let hesper: Vec<&str> = r
        .messages
        .iter()
        .filter(|m| m.owner == "hesper_vane")
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(hesper, [format!("\u{201c}{first}\u{201d}")], "{hesper:?}");
    let by_model = told.iter().filter(|(o, _)| *o != "engine").count();
    assert_eq!(
        by_model, 1,
        "no narration of the player's by the model: {told:#?}"
    );
    assert!(r.acted.contains(&"hesper_vane".to_owned()), "{:?}", r.acted);
    // The model was asked one narration: the other NPC's, after its intention.
    let asked: Vec<&str> = stages
        .iter()
        .map(String::as_str)
        .filter(|s| *s != "narrate")
        .collect();
    assert_eq!(asked[..2], ["resolve", "npc_intent"], "{stages:?}");
}

/// #42: arriving somewhere whose description has not been told is told by
/// the engine in its author's words, with who is here; looking around there
/// again is the model's to tell.
#[test]
fn arriving_somewhere_new_is_told_in_the_authors_words() {
    let data = tempfile::tempdir().unwrap();
    let state = drowned_reach(7);
    let chapel = state.campaign.locations["lamp_chapel"].description.clone();
    let unrolled = || {
        reply(
            "resolve",
            json!({"possible": true, "blocked_reason": "", "clarification_question": "",
                   "check": "", "stat": "", "modifiers": []})
            .to_string(),
        )
    };
    let mut replies = without("resolve", turn_replies(1));
    replies.insert(0, unrolled());
    let (g, _) = gateway(data.path(), replies);
    let r = run_turn(
        &g,
        state.clone(),
        input("Go to the Lamp Chapel", "a"),
        |_| {},
    )
    .unwrap();
    let first = r
        .messages
        .iter()
        .find(|m| m.kind == Kind::Narration)
        .unwrap();
    assert_eq!(first.owner, "engine");
    assert!(
        first
            .content
            .starts_with(&format!("You go to the Lamp Chapel. {chapel}")),
        "{}",
        first.content
    );
    assert!(
        first.content.ends_with("is here.") || first.content.ends_with("No one else is here."),
        "{}",
        first.content
    );
    // Where the place has been told, the model tells the look around.
    let mut told = state;
    told.stream.push(
        1,
        "engine",
        Kind::Narration,
        format!(
            "You look around. {}",
            told.campaign.locations["reedmere_quay"].description
        ),
        None,
    );
    let mut replies = without("resolve", turn_replies(2));
    replies.insert(0, unrolled());
    let (g, _) = gateway(data.path(), replies);
    let r = run_turn(&g, told, input("I look around.", "b"), |_| {}).unwrap();
    let first = r
        .messages
        .iter()
        .find(|m| m.kind == Kind::Narration)
        .unwrap();
    assert!(first.content.contains("Turn 2"), "{}", first.content);
}

#[test]
fn a_picked_choice_rolls_its_ruling_at_once_and_no_referee_is_asked() {
    let data = tempfile::tempdir().unwrap();
    let cases = [
        (
            Ruling::Check {
                check: "action".into(),
                stat: Some("wits".into()),
            },
            Some("wits"),
        ),
        (Ruling::None, None),
    ];
    for (ruling, stat) in cases {
        // No resolve reply in the script: a referee call would fail the turn.
        let (g, _backend) = gateway(data.path(), without("resolve", turn_replies(1)));
        let mut state = drowned_reach(7);
        state.calibration.npcs_per_turn = Some(1);
        let mut picked = input("Read the gate records by lantern light", "c");
        picked.ruling = Some(ruling.clone());
        let mut order = Vec::new();
        let r = run_turn(&g, state, picked, |p| {
            if let Progress::Stage(s) = p {
                order.push(s.to_owned());
            }
        })
        .unwrap_or_else(|e| panic!("{ruling:?}: {e}"));
        assert_eq!(
            order[0], "narrate",
            "the narration is the first call: {order:?}"
        );
        assert!(!order.iter().any(|s| s == "resolve"), "{order:?}");
        assert_eq!(
            r.rolls
                .iter()
                .find(|x| x.actor == "player")
                .and_then(|x| x.stat.as_deref()),
            stat,
            "{:?}",
            r.rolls
        );
        assert_eq!(
            r.rolls.iter().filter(|r| r.actor == "player").count(),
            usize::from(stat.is_some())
        );
        if stat.is_some() {
            // The narrator is told the outcome the dice gave.
            let narrate = r.records.iter().find(|c| c.stage == "narrate").unwrap();
            assert!(
                prompt_text(narrate).contains(&r.rolls[0].label),
                "{}",
                prompt_text(narrate)
            );
        }
    }
}

/// #21: calls out at the same time (the choices and the held-back extractors)
/// may finish in any order; the committed turn is the same whatever the order.
#[test]
fn the_turn_is_the_same_whatever_order_its_calls_finish_in() {
    use loreloom::session::turn::TurnRunner;
    let play = |order: fn(&mut Vec<(u32, loreloom::llm::CallOutcome)>)| {
        let data = tempfile::tempdir().unwrap();
        let (g, _backend) = gateway(data.path(), turn_replies(1));
        let mut runner = TurnRunner::start(
            drowned_reach(7),
            input("I ask Ned Fallow about the oil.", "p"),
        );
        let mut widest = 0;
        while !runner.is_finished() {
            let calls = runner.take_requests();
            assert!(!calls.is_empty(), "the runner waits on nothing");
            let mut done: Vec<(u32, loreloom::llm::CallOutcome)> = calls
                .into_iter()
                .map(|c| (c.id, g.call(c.request).wait()))
                .collect();
            widest = widest.max(done.len());
            order(&mut done);
            for (id, outcome) in done {
                runner.deliver(id, outcome);
            }
        }
        let r = runner.finish().unwrap();
        (transcript(&r), widest)
    };
    let (forward, widest) = play(|_| {});
    assert!(widest >= 3, "some calls are out together: {widest}");
    let (backward, _) = play(|d| d.reverse());
    let (rotated, _) = play(|d| {
        let half = d.len() / 2;
        d.rotate_left(half);
    });
    assert_eq!(forward, backward);
    assert_eq!(forward, rotated);
}

/// A scripted backend that takes its time: `pause` milliseconds per stage.
struct Slow {
    inner: ScriptedBackend,
    pause: fn(&str) -> u64,
}

impl loreloom::llm::Backend for Slow {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn generate(
        &mut self,
        request: &loreloom::llm::GenerateRequest,
        on_token: &mut dyn FnMut(&str) -> bool,
    ) -> Result<loreloom::llm::Generated, loreloom::llm::BackendError> {
        std::thread::sleep(std::time::Duration::from_millis((self.pause)(
            &request.stage,
        )));
        self.inner.generate(request, on_token)
    }
}

/// #21: with two lanes the bookkeeping runs beside the narration and the calls
/// finish in an order set by how long each takes; the committed turn is the
/// same as on one lane whatever that order, and its records (what replay
/// answers from) are in the order the calls were made.
#[test]
fn two_lanes_commit_the_same_turn_whatever_finishes_first() {
    let play = |lanes: u32, pause: fn(&str) -> u64| {
        let data = tempfile::tempdir().unwrap();
        let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
        let g = Gateway::new(
            prompts,
            root().join("schemas"),
            ModelsConfig::default(),
            data.path(),
        );
        let script = ScriptedBackend::new(Script {
            replies: turn_replies(1),
        });
        for key in ["small", "large"] {
            let inner = script.clone();
            g.register_lanes(key, lanes, move || {
                Ok(Box::new(Slow {
                    inner: inner.clone(),
                    pause,
                }) as Box<dyn loreloom::llm::Backend>)
            });
        }
        assert_eq!(g.lanes("small"), lanes);
        let r = run_turn(
            &g,
            drowned_reach(7),
            input("I ask Ned Fallow about the oil.", "p"),
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let started = |stage: &str| {
            r.records
                .iter()
                .find(|c| c.stage == stage)
                .map(|c| c.started_at)
                .unwrap()
        };
        // Whether the persona's extractor started before the choices did.
        let early = started("extract") < started("choices");
        (transcript(&r), early)
    };
    let (one_lane, early) = play(1, |_| 0);
    assert!(
        !early,
        "one lane holds the extractors until the choices are asked for"
    );
    // Bookkeeping slow: it finishes after the narration it follows.
    let (slow_books, early) = play(2, |stage| match stage {
        "extract" | "lore_extract" => 40,
        _ => 5,
    });
    assert_eq!(one_lane, slow_books);
    assert!(early, "on two lanes the extractor goes out at once");
    // Bookkeeping fast: it finishes before the calls sent ahead of it.
    let (fast_books, _) = play(2, |stage| match stage {
        "extract" | "lore_extract" => 0,
        _ => 40,
    });
    assert_eq!(one_lane, fast_books);
}

/// A scene that says nothing of time or danger (a sparse campaign's) still
/// renders every stage's prompt.
#[test]
fn a_scene_without_time_or_danger_still_plays() {
    let data = tempfile::tempdir().unwrap();
    let (g, _backend) = gateway(data.path(), turn_replies(1));
    let mut state = drowned_reach(7);
    let scene = &mut state.world.scene;
    scene.retain(|k, _| k == "location" || k == "present");
    let r = run_turn(&g, state, input("I climb to the lamp room.", "t"), |_| {});
    let r = r.unwrap_or_else(|e| panic!("{e}"));
    let resolve = r.records.iter().find(|c| c.stage == "resolve").unwrap();
    assert!(
        prompt_text(resolve).contains("Place: Reedmere Quay."),
        "{}",
        prompt_text(resolve)
    );
}

#[test]
fn a_stage_that_stays_invalid_fails_the_turn_naming_it_and_keeps_nothing() {
    let data = tempfile::tempdir().unwrap();
    let bad = reply("resolve", r#"{"possible": "maybe"}"#);
    let mut replies = vec![bad.clone(), reply("resolve", r#"{"still": "wrong"}"#), bad];
    replies.extend(without("resolve", turn_replies(1)));
    let (gateway, _) = gateway(data.path(), replies);
    let state = drowned_reach(3);
    let before = state.world.clone();
    let err = run_turn(&gateway, state.clone(), input("I leap.", "x"), |_| {}).unwrap_err();
    assert_eq!(err.stage, "resolve");
    assert!(err.reason.contains("invalid output"), "{err}");
    assert!(!err.retryable);
    assert_eq!(state.world, before, "the session state is untouched");
}

/// #21: the player reads the narrations before the extractors run; an
/// extractor whose reply stays invalid costs the turn its bookkeeping, not
/// the turn.
#[test]
fn an_extractor_that_stays_invalid_keeps_the_turn_and_applies_nothing_of_it() {
    let data = tempfile::tempdir().unwrap();
    let bad = reply("extract", r#"{"state_ops": "all of them"}"#);
    let mut replies = vec![bad.clone(), bad.clone(), bad];
    replies.extend(without("extract", turn_replies(1)));
    let (g, _) = gateway(data.path(), replies);
    let mut state = drowned_reach(3);
    state.calibration.npcs_per_turn = Some(0);
    let r = run_turn(&g, state, input("I leap.", "x"), |_| {}).unwrap();
    assert!(
        r.refused
            .iter()
            .any(|x| x.starts_with("extract: the stage failed, nothing it proposed was applied")),
        "{:?}",
        r.refused
    );
    assert!(
        !r.changes.iter().any(|c| c.op.path.contains("tags")),
        "{:?}",
        r.changes
    );
    assert!(r.observations.is_empty());
    assert!(r.choices.len() >= 3, "the turn goes on to its choices");
}

/// Seed 002 §4.2.1: when the choice stage fails the turn still commits and
/// offers the generic choices; when it offers nothing the player could pick,
/// the engine's own choices stand in (#42).
#[test]
fn unpickable_or_failed_choices_give_the_engines_or_the_generic_ones_and_the_turn_stands() {
    let play = |choices: Vec<Reply>| {
        let data = tempfile::tempdir().unwrap();
        let mut replies = without("choices", turn_replies(1));
        replies.extend(choices);
        let (gateway, _) = gateway(data.path(), replies);
        run_turn(
            &gateway,
            drowned_reach(5),
            input("I watch the quay.", "c"),
            |_| {},
        )
        .expect("the turn stands")
    };
    let fine = play(vec![reply(
        "choices",
        json!({"choices": ["Ask Hesper about the green", "Watch the quay", "Trim a wick"]})
            .to_string(),
    )]);
    assert!(!fine.generic_choices, "{:?}", fine.refused);
    // #42: none of them goes anywhere, so the engine adds a way on.
    assert_eq!(
        fine.choices,
        [
            "Ask Hesper about the green",
            "Watch the quay",
            "Trim a wick",
            "Go to the Ferry Patience"
        ]
    );
    let garbled = play(vec![reply(
        "choices",
        json!({"choices": ["...", "###", "..."]}).to_string(),
    )]);
    // #42: nothing the model offered can be picked, so the engine offers
    // its own: a question the story left open to someone here, a way on.
    assert!(!garbled.generic_choices);
    assert_eq!(
        garbled.choices,
        [
            "Ask Hesper Vane: \"What really happened on the night of the Drowning?\"",
            "Go to the Ferry Patience",
            "Look around"
        ]
    );
    assert!(
        garbled
            .refused
            .iter()
            .any(|r| r.contains("nothing offered could be picked")),
        "{:?}",
        garbled.refused
    );
    let bad = reply("choices", r#"{"choices": "none"}"#);
    let failed = play(vec![bad.clone(), bad.clone(), bad]);
    assert!(failed.generic_choices);
    assert_eq!(failed.choices, GENERIC_CHOICES);
    assert!(
        failed
            .refused
            .iter()
            .any(|r| r.starts_with("choices: the stage failed")),
        "{:?}",
        failed.refused
    );
    assert!(
        failed.messages.iter().any(|m| m.kind == Kind::Narration),
        "the narration stands"
    );
}

#[test]
fn a_repaired_reply_is_used_and_both_attempts_are_recorded() {
    let data = tempfile::tempdir().unwrap();
    let mut replies = vec![
        reply("resolve", r#"{"possible": true}"#),
        reply("resolve", resolve("", "", "")),
    ];
    replies.extend(without("resolve", turn_replies(1)));
    let (gateway, _) = gateway(data.path(), replies);
    let r = run_turn(
        &gateway,
        drowned_reach(3),
        input("I wave to the crowd.", "x"),
        |_| {},
    )
    .unwrap();
    assert!(
        r.rolls.iter().all(|x| x.actor != "player"),
        "no check was asked for the player"
    );
    let resolve = r.records.iter().find(|c| c.stage == "resolve").unwrap();
    assert_eq!(resolve.attempts.len(), 2);
}

#[test]
fn an_unknown_check_is_refused_by_the_narrowed_contract_and_repaired() {
    let data = tempfile::tempdir().unwrap();
    let mut replies = vec![
        reply("resolve", resolve("swim", "nerve", "")),
        reply("resolve", resolve("action", "wits", "")),
    ];
    replies.extend(without("resolve", turn_replies(1)));
    let (gateway, _) = gateway(data.path(), replies);
    let r = run_turn(
        &gateway,
        drowned_reach(3),
        input("I swim for it.", "x"),
        |_| {},
    )
    .unwrap();
    assert_eq!(r.rolls[0].stat.as_deref(), Some("wits"));
    let resolve = r.records.iter().find(|c| c.stage == "resolve").unwrap();
    let first = &resolve.attempts[0];
    assert!(
        first
            .errors
            .iter()
            .any(|e| e.contains("\"swim\" is not one of") && e.contains("action")),
        "{:?}",
        first.errors
    );
}

#[test]
fn a_clarification_question_ends_the_turn_without_a_narration_and_only_once() {
    let data = tempfile::tempdir().unwrap();
    let ask = resolve("", "", "Which rail, fore or aft?");
    let mut replies = vec![
        reply("resolve", ask.clone()),
        reply(
            "extract",
            json!({"state_ops": [], "observations": []}).to_string(),
        ),
    ];
    replies.push(reply("resolve", ask));
    replies.extend(without("resolve", turn_replies(1)));
    let (gateway, _) = gateway(data.path(), replies);
    let r = run_turn(
        &gateway,
        drowned_reach(3),
        input("I grab the rail.", "x"),
        |_| {},
    )
    .unwrap();
    assert_eq!(r.clarification.as_deref(), Some("Which rail, fore or aft?"));
    assert!(!r.messages.iter().any(|m| m.kind == Kind::Narration));
    let mut answer = input("I grab the rail. (The aft rail.)", "y");
    answer.clarified = true;
    let r = run_turn(&gateway, drowned_reach(3), answer, |_| {}).unwrap();
    assert!(r.clarification.is_none(), "a second question is not asked");
    assert!(r.messages.iter().any(|m| m.kind == Kind::Narration));
}

/// A referee that chose a check has decided the move: a question beside it
/// cannot change the outcome and is not put to the player.
#[test]
fn a_question_next_to_a_chosen_check_is_not_asked() {
    let data = tempfile::tempdir().unwrap();
    let mut replies = vec![reply(
        "resolve",
        resolve("action", "nerve", "Which rail, fore or aft?"),
    )];
    replies.extend(without("resolve", turn_replies(1)));
    let (gateway, _) = gateway(data.path(), replies);
    let r = run_turn(
        &gateway,
        drowned_reach(3),
        input("I grab the rail.", "x"),
        |_| {},
    )
    .unwrap();
    assert!(r.clarification.is_none());
    assert_eq!(
        r.rolls.iter().filter(|r| r.actor == "player").count(),
        1,
        "the check was rolled"
    );
    assert!(r.messages.iter().any(|m| m.kind == Kind::Narration));
}

/// The text a call actually sent to the model.
fn prompt_text(record: &loreloom::llm::CallRecord) -> String {
    record.attempts[0]
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_rendered_prompt_holds_what_its_stage_may_see_and_nothing_else() {
    let data = tempfile::tempdir().unwrap();
    let (gateway, _) = gateway(data.path(), turn_replies(1));
    let state = drowned_reach(7);
    let r = run_turn(&gateway, state, input("I step aboard.", "a"), |_| {}).unwrap();
    assert!(r.acted.len() >= 3, "NPCs acted: {:?}", r.acted);
    let persona_narration = "Turn 1: you grip the cold rail";
    let mut npc_index = 0;
    let mut narrations_seen = 0;
    for record in &r.records {
        let text = prompt_text(record);
        // Session zero's calibration reaches every stage (seed 001 setup/).
        assert!(
            text.contains("never show, describe or suggest harm to children shown")
                && text.contains("drowning may happen only off-screen"),
            "the {} stage misses the calibration: {text}",
            record.stage
        );
        // No stage ever sees a thought that is not its own, nor a system note.
        match record.stage.as_str() {
            "resolve" => {
                assert!(text.contains("I step aboard."));
                assert!(!text.contains("npc "), "{text}");
            }
            "narrate" => {
                assert!(
                    !text.contains("npc thought"),
                    "the narrator never sees thoughts: {text}"
                );
                // Exactly one intention: the persona's, or the one NPC's being resolved.
                let intentions = text.matches("npc intention").count()
                    + usize::from(text.contains("tries: I step aboard."));
                assert_eq!(intentions, 1, "{text}");
                assert!(
                    text.contains("The coach door") || text.contains("fog"),
                    "past narration: {text}"
                );
                assert!(text.contains("drowning"), "veils reach the narrator");
                narrations_seen += 1;
            }
            "npc_intent" => {
                // NPC i sees the narrations so far but no other NPC's intention or thought.
                for other in 0..4 {
                    if other != npc_index {
                        assert!(!text.contains(&format!("npc thought 1.{other}")), "{text}");
                        assert!(
                            !text.contains(&format!("npc intention 1.{other}")),
                            "{text}"
                        );
                    }
                }
                assert!(
                    !text.contains("I step aboard."),
                    "not the persona's intention: {text}"
                );
                assert!(
                    text.contains(persona_narration),
                    "the persona's narration: {text}"
                );
                npc_index += 1;
            }
            "extract" => {
                // Extractors run beside the narrator: never this round's narration.
                if text.contains("I step aboard.") {
                    assert!(!text.contains(persona_narration), "{text}");
                }
                assert!(
                    !text.contains("npc thought 1.") || text.matches("npc thought").count() == 1,
                    "{text}"
                );
            }
            "lore_extract" => {
                // Only the newest narration.
                assert_eq!(
                    text.matches("Turn 1").count(),
                    1,
                    "the lore extractor reads one narration: {text}"
                );
                assert!(!text.contains("npc intention") && !text.contains("npc thought"));
            }
            "choices" => assert!(!text.contains("npc thought")),
            other => panic!("unexpected stage {other}"),
        }
    }
    assert_eq!(narrations_seen, 1 + r.acted.len());
}

/// The terminal player end to end: `session new`, then `session play` with a
/// scripted model and scripted input, a rewind and a whisper, then reopening.
#[cfg(feature = "store")]
#[test]
fn the_terminal_session_plays_rewinds_and_continues_where_it_left_off() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("reach.db");
    let replies = dir.path().join("replies.json");
    std::fs::write(
        &replies,
        serde_json::to_string(&terminal_replies()).unwrap(),
    )
    .unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(
        &input,
        "I step aboard and grab the rail.\n2\n/rewind 1\n/whisper tamsin_reed Meet me at the chapel.\n/end-scene\n/quit\n",
    )
    .unwrap();
    let out = common::new_drowned_reach_save(&save, 5);
    assert!(common::stdout(&out).contains("The coach door opens on fog"));
    let play = |script: &Path| common::session_play(&save, script, &replies);
    let out = play(&input);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let transcript = common::stdout(&out);
    insta::assert_snapshot!("terminal_session", transcript);
    assert_rewound_whispered_and_closed(&save);

    // Continue where it left off: the last narration and choices come back.
    let quit = dir.path().join("quit.txt");
    std::fs::write(&quit, "/quit\n").unwrap();
    let out = play(&quit);
    assert_resumed_with_a_recap(&save, &common::stdout(&out));

    // The next turn opens a new scene after /end-scene: the narrator is told.
    let next = dir.path().join("next.txt");
    std::fs::write(&next, "I walk up Ferry Street.\n/quit\n").unwrap();
    let out = play(&next);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let store = loreloom::store::Store::open(&save).unwrap();
    let messages = store.messages().unwrap();
    let open = messages
        .iter()
        .rposition(|m| m.content == "scene_open: reedmere_quay")
        .expect("a new scene opens");
    let close = messages
        .iter()
        .rposition(|m| m.content == "scene_close")
        .unwrap();
    assert!(open > close);
    assert_eq!(messages[open + 1].content, "I walk up Ferry Street.");
}

/// Four turns' replies with the same narration and NPC intention every turn (so the
/// transcript does not depend on how many NPCs spoke), then the recap of the next sitting.
#[cfg(feature = "store")]
fn terminal_replies() -> Script {
    let mut all = Vec::new();
    for _ in 0..4 {
        all.extend(turn_replies(0).into_iter().map(|mut r| {
            // The same words every turn, so the transcript does not depend on how many NPCs spoke.
            if r.stage.as_deref() == Some("narrate") {
                r.text = "The lanterns flare; someone moves in the fog.".into();
            }
            if r.stage.as_deref() == Some("npc_intent") {
                r.text = json!({"thought": "", "intention": "Watch the stranger."}).to_string();
            }
            r
        }));
    }
    all.push(common::scripted::reply(
        "recap",
        "You crossed onto the Patience as the lanterns flared, and whispered to Tamsin to meet you at the chapel.",
    ));
    Script { replies: all }
}

/// After the first sitting: two turns, a rewind, a turn and a closed scene on the branch,
/// and the whisper in the stream.
#[cfg(feature = "store")]
fn assert_rewound_whispered_and_closed(save: &Path) {
    let store = loreloom::store::Store::open(save).unwrap();
    let s = store.session().unwrap();
    assert_eq!(
        s.scene_index, 5,
        "two turns, a rewind, a turn, a closed scene"
    );
    assert_eq!(
        store.branch().unwrap(),
        [
            "scene-00000",
            "scene-00001",
            "scene-00003",
            "scene-00004",
            "scene-00005"
        ]
    );
    let markers: Vec<String> = store
        .messages()
        .unwrap()
        .into_iter()
        .filter(|m| m.kind == loreloom::transcript::Kind::SceneMarker)
        .map(|m| m.content)
        .collect();
    assert_eq!(
        markers.last().map(String::as_str),
        Some("scene_close"),
        "{markers:?}"
    );
    let whisper = store
        .messages()
        .unwrap()
        .into_iter()
        .find(|m| m.target.is_some())
        .expect("the whisper is in the stream");
    assert_eq!(whisper.target.as_deref(), Some("tamsin_reed"));
}

/// The second sitting (`text` its output) opens on the last narration and a recap, and the
/// save holds both sittings and the recap's summary of the turns before it.
#[cfg(feature = "store")]
fn assert_resumed_with_a_recap(save: &Path, text: &str) {
    assert!(
        text.contains("lanterns flare") || text.contains("fog"),
        "{text}"
    );
    assert!(
        text.contains("Previously…\nYou crossed onto the Patience"),
        "the recap opens the sitting: {text}"
    );
    let store = loreloom::store::Store::open(save).unwrap();
    let sittings = store.play_sessions().unwrap();
    assert_eq!(sittings.len(), 2, "{sittings:?}");
    assert!(sittings[0].turn_end.is_some(), "the first sitting ended");
    assert!(
        sittings[1]
            .recap
            .as_deref()
            .unwrap()
            .starts_with("You crossed")
    );
    let summaries = store.summaries().unwrap();
    assert_eq!(
        summaries.len(),
        1,
        "the recap summarises the turns before it"
    );
    assert_eq!(summaries[0].turn_start, 1);
}

/// DESIGN.md's failure path in the terminal: a stage fails, nothing is saved,
/// and `/fallback` continues with a template narration recorded as a fallback turn.
#[cfg(feature = "store")]
#[test]
fn a_failed_turn_saves_nothing_and_fallback_continues_with_a_recorded_template_turn() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("fail.db");
    let replies = dir.path().join("replies.json");
    let bad = reply("resolve", r#"{"possible": "maybe"}"#);
    let script = Script {
        replies: vec![bad.clone(), bad.clone(), bad],
    };
    std::fs::write(&replies, serde_json::to_string(&script).unwrap()).unwrap();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, "I leap for the chain.\n/fallback\n/quit\n").unwrap();
    common::new_drowned_reach_save(&save, 5);
    let out = common::session_play(&save, &input, &replies);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}{}", common::stderr(&out));
    assert!(text.contains("the resolve stage failed"), "{text}");
    assert!(text.contains("Nothing was saved"), "{text}");
    assert!(
        [
            "The narrator pauses, considering your words: 'I leap for the chain.'",
            "Your action 'I leap for the chain.' echoes in the stillness...",
            "The story continues, though the path is unclear...",
        ]
        .iter()
        .any(|t| text.contains(&format!("\n{t}\n"))),
        "a seed 002 §2.3.4 template narrates the turn: {text}"
    );
    assert!(
        text.contains("  1. Continue\n  2. Look around\n  3. Wait\n"),
        "the fallback turn offers the generic choices: {text}"
    );
    let store = loreloom::store::Store::open(&save).unwrap();
    let scene = store.current_scene().unwrap();
    assert_eq!(scene.scene_index, 1, "only the fallback turn was committed");
    assert_eq!(scene.kind, loreloom::store::SceneKind::Fallback);
}

/// Seed 003 replay: a stored turn replays from its recorded model outputs and
/// the session's seed to the same messages, dice, world and choices; a
/// tampered recording is caught.
#[cfg(feature = "store")]
#[test]
fn a_stored_turn_replays_identically_and_a_tampered_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("reach.db");
    let replies = dir.path().join("replies.json");
    let mut all = turn_replies(1);
    all.extend(turn_replies(2));
    all.extend(turn_replies(3));
    std::fs::write(
        &replies,
        serde_json::to_string(&Script { replies: all }).unwrap(),
    )
    .unwrap();
    let input = dir.path().join("input.txt");
    // The third move picks an offered choice: with the embedder installed it
    // carries its ruling and skips the referee (#21); it replays either way.
    std::fs::write(
        &input,
        "I step aboard and grab the rail.\n/whisper tamsin_reed Meet me at the chapel.\n3\n",
    )
    .unwrap();
    let s = save.to_str().unwrap();
    common::new_drowned_reach_save(&save, 9);
    let out = common::session_play(&save, &input, &replies);
    assert!(out.status.success(), "{}", common::stderr(&out));

    for scene in ["1", "2", "3"] {
        let out = common::loreloom(&["session", "replay", s, "--scene", scene], None);
        let text = common::stdout(&out);
        assert!(out.status.success(), "{text}{}", common::stderr(&out));
        assert!(text.contains("replayed identically"), "{text}");
        if scene != "3" {
            // The player's check, and the NPCs' that act (#41), replayed.
            assert!(!text.contains(", 0 dice rolls"), "{text}");
        }
    }
    // A picked choice with a ruling made no referee call; one without did.
    let conn = rusqlite::Connection::open(&save).unwrap();
    let (ruling, resolves): (String, i64) = conn
        .query_row(
            "SELECT (SELECT json_extract(payload_json, '$.ruling') FROM turn_events
                     WHERE turn_index = 3 AND event_type = 'user_action'),
                    (SELECT count(*) FROM turn_events
                     WHERE turn_index = 3 AND event_type = 'model_output' AND step_name = 'resolve')",
            [],
            |r| Ok((r.get::<_, Option<String>>(0)?.unwrap_or_default(), r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        ruling.is_empty(),
        resolves == 1,
        "ruling {ruling:?}, {resolves} resolve calls"
    );
    drop(conn);

    let out = common::loreloom(&["session", "replay", s, "--scene", "0"], None);
    assert!(!out.status.success());
    assert!(common::stderr(&out).contains("scene 0 is the opening"));

    // Change one recorded narration: the replay no longer matches what was stored.
    let conn = rusqlite::Connection::open(&save).unwrap();
    let changed = conn
        .execute(
            "UPDATE turn_events SET payload_json = replace(payload_json, 'Turn ', 'Tampered ')
             WHERE event_type = 'model_output' AND step_name = 'narrate' AND turn_index = 2",
            [],
        )
        .unwrap();
    assert!(changed >= 1);
    drop(conn);
    let out = common::loreloom(&["session", "replay", s, "--scene", "2"], None);
    let text = common::stdout(&out);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("Tampered "), "{text}");
}

/// A memory keeps an NPC's intention (its first sentence) when it names
/// someone or something of the campaign, and leaves a weak model's
/// free-floating talk out, as it does for the narration.
#[cfg(feature = "store")]
#[test]
fn a_memory_keeps_npc_intentions_that_name_the_campaign_and_drops_the_rest() {
    let data = tempfile::tempdir().unwrap();
    let mut replies = turn_replies(1);
    let intentions = [
        "Keep Tamsin away from the ledger. Then go home and sleep.",
        "This is all about yourself, you are the one that has to make sure.",
    ];
    for (n, r) in replies
        .iter_mut()
        .filter(|r| r.stage.as_deref() == Some("npc_intent"))
        .enumerate()
    {
        r.text = json!({"thought": "t", "intention": intentions[n.min(1)]}).to_string();
    }
    let (gateway, _) = gateway(data.path(), replies);
    let state = drowned_reach(99);
    let move_ = input("I jump to the quay.", "m");
    let r = run_turn(&gateway, state.clone(), move_.clone(), |_| {}).unwrap();
    assert!(r.acted.len() >= 2, "{:?}", r.acted);
    let first = &state.campaign.characters[&r.acted[0]].name;
    let event = loreloom::session::remember::memory_event(&state, &r, &move_, 1, false).unwrap();
    assert!(
        event
            .summary
            .contains(&format!("{first}: Keep Tamsin away from the ledger.")),
        "{}",
        event.summary
    );
    assert!(!event.summary.contains("go home"), "{}", event.summary);
    assert!(
        !event.summary.contains("all about yourself"),
        "{}",
        event.summary
    );
}

/// `models.ron` `drafts`: the player's narration is written in drafts and the
/// turn keeps the one that reads best: prose, no assistant talk, calling back
/// to the memory it was shown, naming the campaign's people. NPC narrations
/// are single. The choice is stored with the turn and replays identically.
#[cfg(feature = "store")]
#[test]
fn the_players_narration_in_drafts_keeps_the_one_that_calls_back_and_replays() {
    use loreloom::memory::MemoryHit;
    use loreloom::session::controller::{Controller, Report, Step};

    let dir = tempfile::tempdir().unwrap();
    let save = common::play::new_save(dir.path(), "drowned-reach", Some("green_night"), 11);
    let gateway = common::play::gateway(dir.path());
    let drafts = [
        "I hope you enjoy this story! Let me know what you would like to do next.",
        "Hesper Vane watches you from the rail, saying nothing.",
        "Hesper Vane turns the crossing ledger toward you: the stub of the cut page is still there.",
    ];
    let mut replies = turn_replies(1);
    let at = replies
        .iter()
        .position(|r| r.stage.as_deref() == Some("narrate"))
        .unwrap();
    replies.splice(at..=at, drafts.iter().map(|d| reply("narrate", *d)));
    common::play::script(&gateway, replies);
    gateway.set_drafts("large", 3);

    let mut ctl = Controller::open(&save).unwrap();
    let line = "I ask Hesper who else has seen it";
    let Step::Run(input) = ctl.handle(line) else {
        panic!("`{line}` did not run a turn")
    };
    // What the recall would bring back after an earlier turn about the ledger.
    ctl.state.recalled.memories = vec![MemoryHit {
        turn: 1,
        summary: "At Reedmere Quay, you tried to ask Hesper about the page cut from the crossing ledger (Success). She kept her hand on it.".into(),
        relevance: 0.8,
        episodic: false,
        location: "reedmere_quay".into(),
        characters: vec!["hesper_vane".into()],
    }];
    let mut shown = String::new();
    let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |p| {
        if let Progress::Token(t) = p {
            shown.push_str(t);
        }
    })
    .unwrap();
    let narrations: Vec<&str> = result
        .messages
        .iter()
        .filter(|m| m.kind == Kind::Narration)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(
        narrations[0], drafts[2],
        "the draft that calls back is kept"
    );
    // The NPCs' narrations the model wrote are single and untouched (the
    // one spoken to answers in its author's words, told by the engine).
    assert!(
        result
            .messages
            .iter()
            .skip_while(|m| m.content != narrations[0])
            .skip(1)
            .filter(|m| m.kind == Kind::Narration && m.owner != "engine")
            .all(|m| m.content.contains("NPC")),
        "NPC narrations are single and untouched: {narrations:?}"
    );
    assert!(
        shown.starts_with(drafts[2]),
        "the kept draft is shown whole: {shown}"
    );
    let [choice] = result.drafts.as_slice() else {
        panic!("one drafted narration: {:?}", result.drafts)
    };
    assert_eq!(choice.kept, 2);
    assert!(choice.verdicts[0].assistant);
    assert!(choice.verdicts[1].grounded && choice.verdicts[1].recalls.is_empty());
    assert_eq!(choice.verdicts[2].recalls, ["crossing", "ledger"]);
    assert!(
        choice.note.starts_with("narrate: kept draft 3 of 3"),
        "{}",
        choice.note
    );
    assert!(matches!(
        ctl.finish(&input, Ok(result)),
        Report::Committed { .. }
    ));
    drop(ctl);

    let conn = rusqlite::Connection::open(&save).unwrap();
    let stored: String = conn
        .query_row(
            "SELECT payload_json FROM turn_events WHERE event_type = 'tool_call' AND step_name = 'narrate_drafts'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(stored.contains("\"kept\":2"), "{stored}");
    drop(conn);
    let s = save.to_str().unwrap();
    let out = common::loreloom(&["session", "replay", s, "--scene", "1"], None);
    let text = common::stdout(&out);
    assert!(out.status.success(), "{text}{}", common::stderr(&out));
    assert!(text.contains("replayed identically"), "{text}");
}

/// #21: what is primed between turns is what the next turn's calls start
/// with: the referee's prompt up to the move, the persona extractor's up to
/// the move, and an acting NPC's intent prompt whole (the turn only adds to
/// its history).
#[test]
fn primers_hold_the_start_of_the_next_turns_prompts() {
    let data = tempfile::tempdir().unwrap();
    let (gateway, _) = gateway(data.path(), turn_replies(1));
    let state = drowned_reach(3);
    let prompts = PromptRegistry::load(root().join("prompts")).unwrap();
    let primed: Vec<(String, String, String)> = TurnRunner::primers(state.clone())
        .into_iter()
        .map(|p| {
            let mut vars = p.vars.clone();
            vars["compact"] = json!(false);
            let r = prompts.render(&p.stage, None, &vars).unwrap();
            (
                p.stage.clone(),
                r.messages[0].content.clone(),
                r.messages[1].content.clone(),
            )
        })
        .collect();
    assert!(
        primed.iter().filter(|p| p.0 == "npc_intent").count() >= 2,
        "the NPCs present are primed"
    );
    let result = run_turn(&gateway, state, input("I grab the rail.", "x"), |_| {}).unwrap();
    let shared = |a: &str, b: &str| a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let mut checked = Vec::new();
    for record in &result.records {
        let attempt = &record.attempts[0];
        let (system, user) = (&attempt.messages[0].content, &attempt.messages[1].content);
        let Some((primed_stage, _, primed_user)) = primed
            .iter()
            .find(|p| p.0 == record.stage && &p.1 == system)
        else {
            continue;
        };
        match primed_stage.as_str() {
            "npc_intent" => assert!(
                user.starts_with(primed_user.as_str()),
                "{primed_user}\n---\n{user}"
            ),
            "resolve" => assert!(
                user[..shared(user, primed_user)].contains("stats:"),
                "{primed_user}\n---\n{user}"
            ),
            "extract" => assert!(
                user[..shared(user, primed_user)].contains("Present:"),
                "{primed_user}\n---\n{user}"
            ),
            _ => continue,
        }
        checked.push(primed_stage.clone());
    }
    for stage in ["resolve", "extract", "npc_intent"] {
        assert!(
            checked.iter().any(|s| s == stage),
            "{stage} was not primed: {checked:?}"
        );
    }
}

/// #22: a move elsewhere takes the scene there with those it names; the
/// others stay behind and are met again on coming back.
#[test]
fn going_elsewhere_takes_the_named_along_and_leaves_the_rest_where_they_were() {
    let data = tempfile::tempdir().unwrap();
    let mut state = drowned_reach(7);
    let before = state.world.present();
    assert!(before.len() >= 4, "{before:?}");
    let play = |state: &SessionState, n: usize, text: &str| {
        // No roll: the referee lets the move simply happen.
        let mut replies = vec![reply("resolve", resolve("", "", ""))];
        replies.extend(without("resolve", turn_replies(n)));
        let (gateway, _) = gateway(data.path(), replies);
        run_turn(
            &gateway,
            state.clone(),
            input(text, &format!("go-{n}")),
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let r = play(&state, 1, "I follow Tamsin Reed to the toll house.");
    assert_eq!(r.world.scene["location"], "toll_house", "{:?}", r.refused);
    assert_eq!(r.world.present(), ["player", "tamsin_reed"]);
    assert_eq!(r.world.scene["whereabouts"]["hesper_vane"], "reedmere_quay");
    // Only those who came can act there.
    assert!(
        r.acted.iter().all(|id| id == "tamsin_reed"),
        "{:?}",
        r.acted
    );
    state.advance(&r);
    // The codex: those met (here or left behind), the places been, what play established.
    let codex = loreloom::session::codex::codex(&state, &[]);
    let tamsin = codex.people.iter().find(|p| p.id == "tamsin_reed").unwrap();
    assert!(tamsin.here);
    let hesper = codex.people.iter().find(|p| p.id == "hesper_vane").unwrap();
    assert!(!hesper.here, "left on the quay");
    assert!(
        codex.people.iter().all(|p| p.id != "brinny_sedge"),
        "not met: {:?}",
        codex.people
    );
    let places: Vec<&str> = codex.places.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(places, ["reedmere_quay", "toll_house"]);
    assert!(codex.places[1].here && codex.places[1].image.is_none());
    assert!(codex.places[0].image.is_some(), "the quay has art");
    assert!(
        codex.lore.iter().any(|l| l.contains("green (1)")),
        "what the lore keeper noted: {:?}",
        codex.lore
    );
    // Only what play added: none of the campaign's own facts, public or secret.
    assert_eq!(
        codex.lore.len(),
        state.world.facts.len() - state.campaign.world.facts.len(),
        "{:?}",
        codex.lore
    );
    let r = play(&state, 2, "I walk back to Reedmere Quay alone.");
    assert_eq!(r.world.scene["location"], "reedmere_quay");
    let mut back = r.world.present();
    back.sort();
    let mut expected: Vec<String> = before
        .into_iter()
        .filter(|id| id != "tamsin_reed")
        .collect();
    expected.sort();
    assert_eq!(back, expected, "the others are where they were left");
    assert_eq!(r.world.scene["whereabouts"]["tamsin_reed"], "toll_house");
}
