//! The four shipped rulesets, the dice tool and typed state operations, as the seeds describe them.

use loreloom::campaign::system_rulesets;
use loreloom::rules::dice::MAX_DICE;
use loreloom::rules::{
    Dice, DiceExpr, Modifiers, OpKind, Roll, Ruleset, StateOp, Tier, WorldState,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn ruleset(id: &str) -> Ruleset {
    Ruleset::find(id, &[system_rulesets()]).unwrap_or_else(|e| panic!("{e}"))
}

/// A roll with these faces and a fixed modifier.
fn roll(faces: &[u32], modifier: i64) -> Roll {
    let dice_total: i64 = faces.iter().map(|&f| i64::from(f)).sum();
    Roll {
        expression: "test".into(),
        total: dice_total + modifier,
        rolls: faces.to_vec(),
        modifier,
        dice_total,
        modifiers: Vec::new(),
        seed: None,
    }
}

/// The band id a roll lands in for a ruleset's check.
fn band(rules: &Ruleset, check: &str, r: &Roll) -> String {
    let check = rules.check(Some(check)).unwrap();
    loreloom::rules::ruleset::resolve(&check.bands, r)
        .unwrap_or_else(|| panic!("no band for {r:?}"))
        .id
        .clone()
}

fn stats(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[test]
fn the_four_rulesets_of_the_seeds_ship_and_are_sound() {
    for id in [
        "default-2d6",
        "seven-minutes",
        "everyday-tension",
        "inner-chorus",
    ] {
        let r = ruleset(id);
        assert_eq!(r.id, id);
        assert!(r.problems().is_empty(), "{id}: {:?}", r.problems());
        assert!(r.rulebook_text.len() > 500, "{id} has its rulebook text");
        assert!(!r.mechanics_guidance.checks.is_empty());
        assert!(!r.stat_names().is_empty());
    }
}

#[test]
fn default_2d6_bands_are_six_minus_seven_to_nine_ten_plus_and_double_six() {
    let r = ruleset("default-2d6");
    // 6- fail, 7–9 partial, 10+ success (seed 001/002 §7.4), with modifiers counted.
    assert_eq!(band(&r, "action", &roll(&[1, 1], 0)), "failure");
    assert_eq!(band(&r, "action", &roll(&[3, 3], 0)), "failure");
    assert_eq!(band(&r, "action", &roll(&[3, 3], 1)), "partial");
    assert_eq!(band(&r, "action", &roll(&[4, 5], 0)), "partial");
    assert_eq!(band(&r, "action", &roll(&[5, 5], 0)), "success");
    assert_eq!(band(&r, "action", &roll(&[4, 5], 3)), "success");
    // 12 critical means the dice: a natural double six, not 10 + 2.
    assert_eq!(band(&r, "action", &roll(&[6, 6], 0)), "critical");
    assert_eq!(band(&r, "action", &roll(&[6, 6], -3)), "critical");
    assert_eq!(band(&r, "action", &roll(&[5, 5], 2)), "success");
    // Negative totals are failures, not gaps.
    assert_eq!(band(&r, "action", &roll(&[1, 1], -5)), "failure");
}

#[test]
fn seven_minutes_eighteen_plus_bold_twelve_to_seventeen_awkward_below_failure() {
    let r = ruleset("seven-minutes");
    let check = r.check(None).unwrap();
    assert_eq!(check.expression, "1d20+10-shyness+chemistry");
    for (total, want) in [
        (11, "awkward_failure"),
        (12, "awkward_partial"),
        (17, "awkward_partial"),
        (18, "bold_success"),
        (40, "bold_success"),
    ] {
        assert_eq!(
            band(&r, &check.id, &roll(&[1], total - 1)),
            want,
            "total {total}"
        );
    }
    // Seed 003's worked example: shyness 7, chemistry 3 → 1d20 + 6.
    let block = stats(json!({"shyness": 7, "chemistry": 3}));
    let out = r
        .roll_check(check, &block, None, &Modifiers::new(), &mut Dice::seeded(1))
        .unwrap();
    assert_eq!(out.roll.modifier, 6);
    assert_eq!(out.roll.total, out.roll.dice_total + 6);
}

#[test]
fn everyday_tension_sixteen_clean_ten_to_fifteen_mixed_and_mixed_or_failure_ticks_pressure() {
    let r = ruleset("everyday-tension");
    for (total, want) in [
        (9, "failure"),
        (10, "mixed"),
        (15, "mixed"),
        (16, "clean_success"),
    ] {
        assert_eq!(
            band(&r, "everyday", &roll(&[1], total - 1)),
            want,
            "total {total}"
        );
    }
    let check = r.check(Some("everyday")).unwrap();
    let tick = |id: &str| {
        check
            .bands
            .iter()
            .find(|b| b.id == id)
            .unwrap()
            .effects
            .clone()
    };
    assert_eq!(
        tick("mixed"),
        vec![StateOp::new(OpKind::Increment, "scene.pressure_clock", 1)]
    );
    assert_eq!(tick("failure"), tick("mixed"));
    assert!(tick("clean_success").is_empty());

    // Pressure runs 0–6; reaching 6 shifts the scene and starts again from 0.
    let mut world = WorldState {
        scene: stats(json!({"pressure_clock": 5})),
        ..Default::default()
    };
    let changes = world.apply(&tick("failure"), &r).unwrap();
    assert_eq!(world.scene["pressure_clock"], 0);
    assert!(
        changes[0].triggered[0].contains("The scene shifts"),
        "{changes:?}"
    );
    let err = world
        .apply(&[StateOp::new(OpKind::Set, "scene.pressure_clock", 7)], &r)
        .unwrap_err();
    assert!(err.reason.contains("pressure_clock"), "{err}");
}

#[test]
fn inner_chorus_binds_the_aspect_and_eighteen_plus_overrides() {
    let r = ruleset("inner-chorus");
    for (total, want) in [
        (11, "natural_reaction"),
        (12, "influences"),
        (17, "influences"),
        (18, "override"),
    ] {
        assert_eq!(
            band(&r, "aspect", &roll(&[1], total - 1)),
            want,
            "total {total}"
        );
    }
    let check = r.check(Some("aspect")).unwrap();
    let block = stats(json!({
        "logic": 2, "empathy": 5, "volition": 1, "imagination": 3, "composure": 2,
        "physique": 1, "rhetoric": 4, "perception": 3, "suggestion": 2
    }));
    let out = r
        .roll_check(
            check,
            &block,
            Some("empathy"),
            &Modifiers::new(),
            &mut Dice::seeded(9),
        )
        .unwrap();
    assert_eq!(out.stat.as_deref(), Some("empathy"));
    assert_eq!(out.roll.modifier, 5);
    let err = r
        .roll_check(check, &block, None, &Modifiers::new(), &mut Dice::seeded(9))
        .unwrap_err();
    assert!(err.to_string().contains("needs a stat"), "{err}");
    let err = r
        .roll_check(
            check,
            &block,
            Some("luck"),
            &Modifiers::new(),
            &mut Dice::seeded(9),
        )
        .unwrap_err();
    assert!(err.to_string().contains("cannot use `luck`"), "{err}");
}

#[test]
fn default_2d6_checks_take_the_stat_and_bounded_situational_modifiers() {
    let r = ruleset("default-2d6");
    let check = r.check(Some("action")).unwrap();
    let block = stats(json!({"nerve": 2, "wits": 1, "heart": 0, "guile": -1}));
    let mut situational = Modifiers::new();
    situational.insert("skill".into(), 1);
    situational.insert("sentiment".into(), -1);
    let a = r
        .roll_check(
            check,
            &block,
            Some("nerve"),
            &situational,
            &mut Dice::seeded(42),
        )
        .unwrap();
    let b = r
        .roll_check(
            check,
            &block,
            Some("nerve"),
            &situational,
            &mut Dice::seeded(42),
        )
        .unwrap();
    assert_eq!(a, b, "the same seed gives the same outcome");
    assert_eq!(a.roll.modifier, 2 + 1 - 1);
    assert_eq!(a.roll.rolls.len(), 2);
    let failure_streak = |o: &loreloom::rules::CheckOutcome| o.effects.clone();
    if a.tier == Tier::Failure {
        assert_eq!(
            failure_streak(&a),
            vec![StateOp::new(OpKind::Increment, "scene.failure_streak", 1)]
        );
    } else {
        assert_eq!(
            failure_streak(&a),
            vec![StateOp::new(OpKind::Set, "scene.failure_streak", 0)]
        );
    }

    situational.insert("skill".into(), 5);
    let err = r
        .roll_check(
            check,
            &block,
            Some("nerve"),
            &situational,
            &mut Dice::seeded(1),
        )
        .unwrap_err();
    assert!(err.to_string().contains("outside"), "{err}");
    let mut unknown = Modifiers::new();
    unknown.insert("bribe".into(), 1);
    let err = r
        .roll_check(check, &block, Some("nerve"), &unknown, &mut Dice::seeded(1))
        .unwrap_err();
    assert!(err.to_string().contains("no modifier `bribe`"), "{err}");
}

#[test]
fn three_failures_in_a_row_land_a_binding_consequence_and_reset_the_streak() {
    let r = ruleset("default-2d6");
    let mut world = WorldState::default();
    let fail = [StateOp::new(OpKind::Increment, "scene.failure_streak", 1)];
    world.apply(&fail, &r).unwrap();
    world.apply(&fail, &r).unwrap();
    assert_eq!(world.scene["failure_streak"], 2);
    let changes = world.apply(&fail, &r).unwrap();
    assert!(changes[0].triggered[0].contains("binding consequence"));
    assert_eq!(world.scene["failure_streak"], 0);
}

#[test]
fn rolls_replay_exactly_and_a_wrong_recording_is_refused() {
    let mut live = Dice::seeded(2026);
    let exprs = ["2d6+1", "1d20", "3d6-1", "2d6+mod"];
    let mut mods = Modifiers::new();
    mods.insert("mod".into(), 2);
    let recorded: Vec<Roll> = exprs
        .iter()
        .map(|e| live.roll_str(e, &mods).unwrap())
        .collect();
    let mut again = Dice::seeded(2026);
    let mut replay = Dice::replay(recorded.clone());
    for (e, want) in exprs.iter().zip(&recorded) {
        assert_eq!(&again.roll_str(e, &mods).unwrap(), want);
        assert_eq!(&replay.roll_str(e, &mods).unwrap(), want);
    }
    let err = replay.roll_str("1d6", &mods).unwrap_err();
    assert!(err.to_string().contains("used up"), "{err}");

    let mut replay = Dice::replay(recorded.clone());
    let err = replay.roll_str("1d8", &mods).unwrap_err();
    assert!(err.to_string().contains("asked for"), "{err}");

    let mut tampered = recorded[0].clone();
    tampered.rolls[0] = 9;
    let err = Dice::replay([tampered])
        .roll_str("2d6+1", &mods)
        .unwrap_err();
    assert!(err.to_string().contains("inconsistent"), "{err}");
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "every op kind against one world, each refusal beside the op it refuses"
)]
fn state_ops_are_typed_checked_and_atomic() {
    let r = ruleset("default-2d6");
    let mut world: WorldState = serde_json::from_value(json!({
        "scene": {"location": "quay", "danger_tier": 0},
        "characters": {
            "player": {"stats": {"nerve": 1, "wits": 1, "heart": 1, "guile": 1}},
            "ada": {"stats": {"nerve": 0, "wits": 2, "heart": 1, "guile": 0}}
        },
        "clocks": {"tide": {"id": "tide", "name": "The tide", "value": 0, "max": 4,
                            "triggers": {"4": "the quay floods"}}},
        "relations": [{"a": "player", "b": "ada", "trust": 5}],
        "inventory": {},
        "facts": [],
        "threads": {"ledger": {"id": "ledger", "title": "The missing page"}}
    }))
    .unwrap();
    let ops = [
        StateOp::new(OpKind::Set, "scene.mood", "uneasy"),
        StateOp::new(OpKind::Increment, "characters.player.stats.nerve", 1),
        StateOp::new(OpKind::AddTag, "characters.player.tags", "soaked"),
        StateOp::new(OpKind::TickClock, "clocks.tide", 2),
        StateOp::new(OpKind::Relation, "relations.ada.player.trust", -2),
        StateOp::new(OpKind::Inventory, "inventory.player.lantern", 1),
        StateOp::new(
            OpKind::AddFact,
            "facts.ledger.missing_page",
            "cut with a razor",
        ),
        StateOp::new(
            OpKind::UpdateFact,
            "facts.ledger.missing_page",
            "burned in the stove",
        ),
        StateOp::new(OpKind::Thread, "threads.ledger.status", "active"),
    ];
    let changes = world.apply(&ops, &r).unwrap();
    assert_eq!(changes.len(), ops.len());
    assert_eq!(world.scene["mood"], "uneasy");
    assert_eq!(world.characters["player"].stats["nerve"], 2);
    assert!(world.characters["player"].tags.contains("soaked"));
    assert_eq!(world.clocks["tide"].value, 2);
    assert_eq!(world.relations[0].trust, 3, "relations are unordered pairs");
    assert_eq!(world.inventory["player"]["lantern"], 1);
    assert_eq!(world.facts.len(), 1);
    assert_eq!(world.facts[0].object, "burned in the stove");
    assert_eq!(world.threads["ledger"].status, "active");

    // Clock triggers fire when crossed.
    let changes = world
        .apply(&[StateOp::new(OpKind::TickClock, "clocks.tide", 5)], &r)
        .unwrap();
    assert_eq!(world.clocks["tide"].value, 4, "a clock stops at its max");
    assert!(changes[0].triggered[0].contains("the quay floods"));

    // Each refusal names the op and why; a refused batch changes nothing.
    let before = world.clone();
    let refused = |ops: &[StateOp]| {
        let mut w = before.clone();
        let err = w.apply(ops, &r).unwrap_err();
        assert_eq!(w, before, "nothing of a refused batch is applied");
        err
    };
    let ok = StateOp::new(OpKind::Set, "scene.mood", "calm");
    for (op, reason) in [
        (
            StateOp::new(OpKind::Increment, "characters.player.stats.nerve", 5),
            "maximum",
        ),
        (
            StateOp::new(OpKind::Set, "characters.player.stats.luck", 1),
            "no stat `luck`",
        ),
        (
            StateOp::new(OpKind::Set, "scene.danger_tier", 9),
            "danger_tier",
        ),
        (
            StateOp::new(OpKind::Set, "scene.danger_tier", "high"),
            "danger_tier",
        ),
        (
            StateOp::new(OpKind::TickClock, "clocks.moon", 1),
            "no clock `moon`",
        ),
        (
            StateOp::new(OpKind::Relation, "relations.ada.player.love", 1),
            "unknown relation axis",
        ),
        (
            StateOp::new(OpKind::Relation, "relations.ada.player.trust", 20),
            "outside",
        ),
        (
            StateOp::new(OpKind::Inventory, "inventory.player.gold", -1),
            "gold",
        ),
        (
            StateOp::new(OpKind::Thread, "threads.ledger.status", "paused"),
            "paused",
        ),
        (
            StateOp::new(OpKind::AddTag, "characters.nobody.tags", "x"),
            "nobody",
        ),
        (
            StateOp::new(OpKind::UpdateFact, "facts.moon.colour", "green"),
            "use add_fact",
        ),
        (StateOp::new(OpKind::AddTag, "clocks.tide", "x"), "add_tag"),
        (
            StateOp::new(OpKind::Set, "weather.today", "rain"),
            "unknown path",
        ),
    ] {
        let err = refused(&[ok.clone(), op.clone()]);
        assert_eq!(err.index, 1, "{err}");
        assert!(err.to_string().contains(&op.path), "names the path: {err}");
        assert!(
            err.reason.contains(reason),
            "{op}: `{}` lacks `{reason}`",
            err.reason
        );
    }

    // Untrusted JSON: unknown ops and fields are named.
    let mut w = before.clone();
    let err = w
        .apply_values(&[json!({"op": "explode", "path": "scene.mood"})], &r)
        .unwrap_err();
    assert!(err.reason.contains("unknown op `explode`"), "{err}");
    let err = w
        .apply_values(
            &[json!({"op": "set", "path": "scene.mood", "value": 1, "why": "x"})],
            &r,
        )
        .unwrap_err();
    assert!(err.reason.contains("why"), "{err}");
    assert_eq!(w, before);
}

#[test]
fn the_dice_tool_reads_the_seed_examples_and_rejects_nonsense() {
    let mut mods = Modifiers::new();
    mods.insert("mod".into(), 3);
    for (expr, n, lo, hi) in [
        ("1d20+3", 1, 4, 23),
        ("3d6-1", 3, 2, 17),
        ("2d6+mod", 2, 5, 15),
        ("2d12+3", 2, 5, 27),
    ] {
        let r = Dice::seeded(5).roll_str(expr, &mods).unwrap();
        assert_eq!(r.expression, expr);
        assert_eq!(r.rolls.len(), n);
        assert!((lo..=hi).contains(&r.total), "{expr}: {}", r.total);
        assert_eq!(r.total, r.dice_total + r.modifier);
    }
    for bad in [
        "0d6", "1d0", "999999d6", "2d6 junk", "", "d", "2d6++1", "1d6+x",
    ] {
        let err = Dice::seeded(1).roll_str(bad, &mods).unwrap_err();
        assert!(!err.to_string().is_empty(), "{bad}");
    }
}

proptest! {
    #[test]
    fn the_dice_parser_never_panics(text in "\\PC{0,60}") {
        let _ = DiceExpr::parse(&text);
    }

    #[test]
    fn the_dice_parser_never_panics_on_dice_like_text(text in "[0-9dD+\\- a-z]{0,30}") {
        if let Ok(expr) = DiceExpr::parse(&text) {
            let mods: Modifiers = expr.modifier_names().map(|n| (n.to_owned(), 1)).collect();
            let _ = expr.roll_with_seed(0, &mods);
        }
    }

    #[test]
    fn totals_stay_within_bounds(
        count in 1u64..=20,
        sides in 2u64..=100,
        constant in -50i64..=50,
        seed in any::<u64>(),
    ) {
        let text = format!("{count}d{sides}{constant:+}");
        let expr = DiceExpr::parse(&text).unwrap();
        let mods = Modifiers::new();
        let (lo, hi) = expr.bounds(&mods).unwrap();
        prop_assert_eq!(lo, i64::try_from(count).unwrap() + constant);
        prop_assert_eq!(hi, i64::try_from(count * sides).unwrap() + constant);
        let roll = expr.roll_with_seed(seed, &mods).unwrap();
        prop_assert!((lo..=hi).contains(&roll.total));
        prop_assert_eq!(roll.rolls.len(), usize::try_from(count).unwrap());
        prop_assert!(roll.rolls.iter().all(|&f| (1..=u32::try_from(sides).unwrap()).contains(&f)));
        prop_assert_eq!(expr.roll_with_seed(seed, &mods).unwrap(), roll);
    }

    #[test]
    fn too_many_dice_are_refused(count in (MAX_DICE + 1)..=10_000_000u32) {
        let text = format!("{count}d6");
        prop_assert!(DiceExpr::parse(&text).is_err());
    }
}

/// Seed 002 §4.2.1's success probability, counted over every way the dice fall:
/// the default 2d6 "action" check fails on 6 or less.
#[test]
fn the_chance_of_success_counts_every_way_the_dice_fall() {
    let rules = ruleset("default-2d6");
    let check = rules.check(Some("action")).unwrap();
    let block = stats(json!({"nerve": -1, "wits": 0, "heart": 2, "guile": 1}));
    let chance = |stat: &str| {
        rules
            .success_chance(check, &block, Some(stat))
            .unwrap()
            .unwrap()
    };
    // 2d6 - 1 >= 7 needs 8+ on the dice: 15 of 36 ways.
    assert!((chance("nerve") - 15.0 / 36.0).abs() < 1e-12);
    assert!((chance("wits") - 21.0 / 36.0).abs() < 1e-12);
    assert!((chance("heart") - 30.0 / 36.0).abs() < 1e-12);
    let expr = DiceExpr::parse("2d6").unwrap();
    let twelve = expr
        .chance(&Modifiers::new(), |r| r.dice_total == 12)
        .unwrap();
    assert_eq!(twelve, Some(1.0 / 36.0));
    // Too many ways to count is an honest "don't know".
    let huge = DiceExpr::parse("8d20").unwrap();
    assert_eq!(huge.chance(&Modifiers::new(), |_| true).unwrap(), None);
}

/// Every shipped campaign's characters, with the opening world and ruleset.
fn shipped_worlds() -> Vec<(String, loreloom::campaign::Campaign)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).expect("campaigns/") {
        let dir = entry.expect("an entry").path();
        if !dir.join("manifest.json").is_file() {
            continue;
        }
        let (campaign, report) = loreloom::campaign::load(&dir, &[system_rulesets()]);
        let campaign = campaign.unwrap_or_else(|| panic!("{} loads: {report:?}", dir.display()));
        out.push((dir.display().to_string(), campaign));
    }
    assert!(out.len() >= 2, "the shipped campaigns");
    out
}

/// #20: an extractor's ops are decoded under `rules::offer`'s schema; every op
/// it admits (each path, each bound of each value) must pass the rules.
#[test]
fn every_op_the_extractor_offer_admits_the_rules_accept() {
    let mut tried = 0;
    for (name, campaign) in shipped_worlds() {
        let world = &campaign.world;
        let ids: Vec<String> = world.characters.keys().cloned().collect();
        let here = world
            .scene
            .get("location")
            .and_then(Value::as_str)
            .unwrap_or("");
        let places: Vec<String> = campaign
            .locations
            .keys()
            .filter(|id| id.as_str() != here)
            .cloned()
            .collect();
        for owner in &ids {
            let Some(schema) = loreloom::rules::offer::extractor_ops(
                world,
                &campaign.ruleset,
                owner,
                &ids,
                &places,
            ) else {
                continue;
            };
            let validator = jsonschema::validator_for(&schema).expect("a valid schema");
            let shapes = schema["anyOf"]
                .as_array()
                .cloned()
                .unwrap_or_else(|| vec![schema.clone()]);
            for s in shapes {
                let op = s["properties"]["op"]["const"]
                    .as_str()
                    .expect("one op per shape");
                let path = &s["properties"]["path"];
                let Some(paths) = path["enum"]
                    .as_array()
                    .cloned()
                    .or_else(|| path.get("const").map(|p| vec![p.clone()]))
                else {
                    continue;
                };
                let v = &s["properties"]["value"];
                let values: Vec<Value> = match (v["minimum"].as_i64(), v["maximum"].as_i64()) {
                    (Some(lo), Some(hi)) => vec![lo.into(), hi.into()],
                    _ => v["enum"]
                        .as_array()
                        .cloned()
                        .unwrap_or_else(|| vec!["wary".into()]),
                };
                for path in &paths {
                    for value in &values {
                        let raw = json!({"op": op, "path": path, "value": value});
                        assert!(
                            validator.is_valid(&raw),
                            "{name}: {raw} fits its own schema"
                        );
                        let parsed = StateOp::from_value(&raw).expect("well-formed");
                        world
                            .check(&[parsed], &campaign.ruleset)
                            .unwrap_or_else(|e| {
                                panic!("{name}: {raw} is admitted but the rules refuse it: {e}")
                            });
                        tried += 1;
                    }
                }
            }
        }
    }
    assert!(tried > 50, "only {tried} ops tried");
}

/// The ops the rules refused in real turns before the offer (#20) cannot be written.
#[test]
fn what_extractors_got_refused_for_cannot_be_written() {
    for (name, campaign) in shipped_worlds() {
        let world = &campaign.world;
        let owner = world.characters.keys().next().expect("a character").clone();
        let places = vec!["somewhere_known".to_owned()];
        let schema =
            loreloom::rules::offer::extractor_ops(world, &campaign.ruleset, &owner, &[], &places)
                .expect("something can change");
        let validator = jsonschema::validator_for(&schema).expect("a valid schema");
        let stat = campaign.ruleset.stat_names()[0].clone();
        for bad in [
            // A sentence where the path goes (the tuned narrator's habit).
            json!({"op": "tick_clock", "path": "The lantern's light has gone, Reedle.", "value": 1}),
            json!({"op": "add_tag", "path": format!("characters.{owner}.tags"), "value": "Hesper Vane, please tell me"}),
            json!({"op": "increment", "path": format!("characters.nobody.stats.{stat}"), "value": 1}),
            json!({"op": "tick_clock", "path": "clocks.no_such_clock", "value": 1}),
            json!({"op": "inventory", "path": format!("inventory.{owner}.no_such_thing"), "value": -1}),
            json!({"op": "relation", "path": format!("relations.{owner}.{owner}.trust"), "value": 1}),
            json!({"op": "increment", "path": format!("characters.{owner}.stats.{stat}"), "value": 9}),
            json!({"op": "set", "path": format!("characters.{owner}.stats.{stat}"), "value": 1}),
            // A move only to a place the engine offered.
            json!({"op": "set", "path": "scene.location", "value": "nowhere_at_all"}),
            json!({"op": "set", "path": "scene.mood", "value": "somewhere_known"}),
        ] {
            assert!(!validator.is_valid(&bad), "{name}: {bad} should not fit");
        }
        let go = json!({"op": "set", "path": "scene.location", "value": "somewhere_known"});
        assert!(validator.is_valid(&go), "{name}: the offered move fits");
        // Without places (an NPC's extractor) the scene cannot move.
        let npc = loreloom::rules::offer::extractor_ops(world, &campaign.ruleset, &owner, &[], &[])
            .expect("something can change");
        let npc = jsonschema::validator_for(&npc).expect("a valid schema");
        assert!(!npc.is_valid(&go), "{name}: only the offered moves fit");
    }
}
