//! Campaigns as players and authors meet them: the shipped ones load, the broken one is refused.
//!
//! The shipped campaigns load and validate cleanly; the broken one gives the golden errors through
//! the real CLI.

mod common;

use std::path::{Path, PathBuf};

use loreloom::campaign::{self, AssetKind, CharacterKind, Origin, system_rulesets};
use loreloom::rules::OpKind;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("campaigns")
        .join(name)
}

fn broken(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/campaigns")
        .join(name)
}

fn load(dir: &Path) -> (campaign::Campaign, campaign::Report) {
    let (loaded, report) = campaign::load(dir, &[system_rulesets()]);
    let Some(c) = loaded else {
        panic!("{} does not load:\n{report}", dir.display())
    };
    (c, report)
}

/// Content files: everything but the manifest and README (as the loader counts them).
fn files_under(dir: &Path) -> usize {
    fn walk(dir: &Path, n: &mut usize) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, n);
            } else {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(dir, &mut n);
    n
}

#[test]
fn the_rich_campaign_validates_with_only_the_generated_asset_notice() {
    let (c, report) = load(&shipped("drowned-reach"));
    assert_eq!(report.findings, vec![], "no errors or warnings:\n{report}");
    assert_eq!(
        report.notices,
        vec![
            "Campaign contains 1 AI-generated asset(s). Review generated flags and provenance metadata to verify correctness."
                .to_owned()
        ],
        "seed 002 §6.2.11's notice, with the count"
    );
    assert!(!c.is_sparse());
    assert!(files_under(&c.root) >= 20, "20+ files");
    assert_eq!(c.ruleset.id, "default-2d6");
}

#[test]
fn the_rich_campaign_has_every_part_of_the_format() {
    let (c, _) = load(&shipped("drowned-reach"));

    // NPCs with secrets, chattiness and the baked flag; the player template.
    let npcs: Vec<_> = c
        .characters
        .values()
        .filter(|ch| ch.kind == CharacterKind::Npc && ch.origin == Origin::Campaign)
        .collect();
    assert!(npcs.len() >= 5, "five campaign NPCs, got {}", npcs.len());
    assert!(
        npcs.iter()
            .all(|n| n.secrets.as_deref().is_some_and(|s| s.len() > 100)),
        "every NPC has secrets.md"
    );
    assert!(npcs.iter().any(|n| n.baked) && npcs.iter().any(|n| !n.baked));
    assert!(npcs.iter().all(|n| (0.0..=1.0).contains(&n.chattiness)));
    let player = &c.characters["player"];
    assert_eq!(player.kind, CharacterKind::Player);
    assert!(c.world.characters["player"].stats.contains_key("nerve"));

    // A pack NPC, namespaced `pack:id`, is a character too.
    let cobb = &c.characters["sallow_delta:cobb_marrow"];
    assert_eq!(cobb.origin, Origin::Pack("sallow_delta".into()));
    assert_eq!(c.packs.len(), 1);
    assert!(c.packs[0].entries.len() >= 5);
    assert!(c.locations.contains_key("sallow_delta:hollow_sluice"));

    // Beats with conditions, two endings, premise, setting.
    assert!(c.beats.len() >= 6);
    assert!(c.beats.iter().any(|b| b.conditions.requires_beat.is_some()));
    assert_eq!(c.endings.len(), 2);
    for role in ["setting", "premise", "rules", "constraints"] {
        assert!(c.prose.contains_key(role), "world/plot prose `{role}`");
    }

    // Lore in nested folders, art and music, sidecar keywords overriding file names.
    let lore_folders: std::collections::BTreeSet<_> =
        c.lore.iter().filter_map(|d| d.path.parent()).collect();
    assert!(
        lore_folders.len() >= 3,
        "lore in nested folders: {lore_folders:?}"
    );
    assert!(c.assets.iter().any(|a| a.kind == AssetKind::Audio));
    assert!(c.assets.iter().any(|a| a.kind == AssetKind::Image));
    let tamsin = c
        .assets
        .iter()
        .find(|a| a.path.ends_with("art/characters/tamsin_reed.png"))
        .expect("Tamsin's portrait");
    assert!(tamsin.keywords_from_sidecar);
    assert!(tamsin.keywords.contains(&"green_lantern".to_owned()));
    assert!(
        !tamsin.keywords.iter().any(|k| k.starts_with('#')),
        "comments are not keywords"
    );
    let ned = c
        .assets
        .iter()
        .find(|a| a.path.ends_with("art/characters/ned_fallow.png"))
        .expect("Ned's portrait");
    assert!(!ned.keywords_from_sidecar);
    assert!(
        ned.keywords.contains(&"fallow".to_owned()),
        "{:?}",
        ned.keywords
    );

    // Scenarios: the default and one that starts in a pack location.
    let start = c.default_scenario().expect("a default scenario");
    assert_eq!(start.id, "green_night");
    assert_eq!(c.scenarios.len(), 2);
    assert!(!start.intro_seed.is_empty() && !start.stakes.is_empty());

    // The starting world: clocks, relations, inventory.
    assert!(c.world.clocks.len() >= 2);
    assert!(!c.world.relations.is_empty());
    assert!(!c.world.inventory.is_empty());
}

#[test]
fn the_rich_campaigns_starting_state_takes_the_rulesets_state_ops() {
    let (c, _) = load(&shipped("drowned-reach"));
    let mut world = c.world.clone();
    world.scene = c.default_scenario().unwrap().scene_seed.clone();
    let (clock, max) = {
        let (id, clock) = c.world.clocks.iter().next().unwrap();
        (id.clone(), clock.max)
    };
    let changes = world
        .apply(
            &[
                loreloom::rules::StateOp::new(OpKind::TickClock, &format!("clocks.{clock}"), max),
                loreloom::rules::StateOp::new(OpKind::Increment, "scene.failure_streak", 1),
            ],
            &c.ruleset,
        )
        .unwrap();
    assert_eq!(world.clocks[&clock].value, max, "clocks stop at their max");
    assert_eq!(changes.len(), 2);
}

#[test]
fn the_minimal_campaign_is_three_files_valid_and_sparse() {
    let dir = shipped("minimal-lighthouse");
    assert_eq!(files_under(&dir), 3);
    let (c, report) = load(&dir);
    assert_eq!(report.findings, vec![]);
    assert!(report.notices.is_empty());
    assert!(c.is_sparse(), "it asks for enrichment (#7)");
    assert!(c.prose.contains_key("setting") && c.prose.contains_key("premise"));
    assert_eq!(
        c.ruleset.id, "default-2d6",
        "the default ruleset when none is named"
    );
}

/// The shipped campaigns, and the held-out corpus setting the evaluation
/// harness plays as a campaign (#42), validate with no error and no warning.
#[test]
fn campaign_validate_passes_on_both_shipped_campaigns() {
    let held_out = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/campaigns/ice-core-station");
    for (name, dir) in [
        ("drowned-reach", shipped("drowned-reach")),
        ("minimal-lighthouse", shipped("minimal-lighthouse")),
        ("ice-core-station", held_out),
    ] {
        let out = common::loreloom(&["campaign", "validate", dir.to_str().unwrap()], None);
        let stdout = common::stdout(&out);
        assert!(
            out.status.success(),
            "{name}:\n{stdout}{}",
            common::stderr(&out)
        );
        assert!(stdout.contains("0 errors"), "{stdout}");
        assert!(!stdout.contains("\nerror:") && !stdout.starts_with("error:"));
    }
}

#[test]
fn the_broken_campaign_gives_the_golden_errors() {
    let dir = broken("broken");
    let out = common::loreloom(&["campaign", "validate", "tests/campaigns/broken"], None);
    assert_eq!(out.status.code(), Some(1), "errors exit 1");
    let stdout = common::stdout(&out);
    insta::assert_snapshot!("broken_campaign_validation", stdout);

    // Every JSON/YAML error names a line; the in-process report agrees with the CLI.
    let report = campaign::validate(&dir);
    assert_eq!(format!("{report}\n"), stdout);
    for f in report.errors() {
        let ext = f.file.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "json" | "yaml") {
            assert!(f.line.is_some(), "{f} has a line");
        }
    }
}

#[test]
fn a_broken_manifest_stops_validation_with_its_own_errors() {
    let out = common::loreloom(
        &["campaign", "validate", "tests/campaigns/broken-manifest"],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("broken_manifest_validation", common::stdout(&out));
}

#[test]
fn missing_folders_manifests_and_rulesets_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let report = campaign::validate(&tmp.path().join("nowhere"));
    assert!(report.to_string().contains("not a folder"), "{report}");

    let report = campaign::validate(tmp.path());
    assert!(
        report.to_string().contains("manifest.json: missing"),
        "{report}"
    );

    std::fs::write(
        tmp.path().join("manifest.json"),
        r#"{"title": "T", "version": "1.0.0", "ruleset": "chess"}"#,
    )
    .unwrap();
    let report = campaign::validate(tmp.path());
    let text = report.to_string();
    assert!(
        text.contains("manifest.json") && text.contains("chess"),
        "an unknown ruleset names the manifest and the ruleset:\n{text}"
    );
    assert!(report.has_errors());

    std::fs::write(
        tmp.path().join("manifest.json"),
        r#"{"title": "T", "version": "one"}"#,
    )
    .unwrap();
    let text = campaign::validate(tmp.path()).to_string();
    assert!(
        text.contains(r#"`version`: "one" is not a semantic version such as 1.0.0"#),
        "{text}"
    );
}

#[test]
fn a_campaign_may_bring_its_own_ruleset() {
    let tmp = tempfile::tempdir().unwrap();
    let own = tmp.path().join("ruleset");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(
        own.join("ruleset.json"),
        r#"{
          "id": "coin-toss", "name": "Coin Toss",
          "rulebook_text": "Flip a coin: heads it works, tails it does not.",
          "character_stat_schema": {"type": "object", "properties": {"luck": {"type": "integer", "minimum": 0, "maximum": 1}}},
          "scene_state_schema": {"type": "object"},
          "mechanics_guidance": {"checks": [{"id": "toss", "expression": "1d2", "bands": [
            {"id": "tails", "label": "Tails", "tier": "failure", "max": 1},
            {"id": "heads", "label": "Heads", "tier": "success", "min": 2}]}]}
        }"#,
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("manifest.json"),
        r#"{"title": "Coins", "version": "1.0.0", "ruleset": "./ruleset"}"#,
    )
    .unwrap();
    let (c, report) = campaign::load(tmp.path(), &[system_rulesets()]);
    let c = c.unwrap_or_else(|| panic!("{report}"));
    assert_eq!(c.ruleset.name, "Coin Toss");
    assert_eq!(report.findings, vec![], "its files are part of the format");
}
