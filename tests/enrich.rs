//! Enrichment of a sparse campaign (seed 002 §6.2.12) through `loreloom campaign enrich`.
//!
//! Through the real binary with a scripted model: `_generated` files with provenance, human files
//! untouched, a bad answer writes nothing, and the minimal campaign becomes playable.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use loreloom::campaign::{self, CharacterKind, system_rulesets};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A copy of `campaigns/minimal-lighthouse` in a temporary folder.
fn lighthouse() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("minimal-lighthouse");
    copy(&root().join("campaigns/minimal-lighthouse"), &dir);
    (tmp, dir)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// Every file under `dir` with its contents.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn answer() -> Value {
    json!({
        "npcs": [
            {"name": "Morwen Tate", "role": "Keeper of the Gull Rock light", "traits": ["stubborn", "proud"],
             "motivation": "Keep the light burning as long as she can climb the tower", "appearance": "Small, weathered, in a patched blue jersey",
             "speech": "Short sentences, tide-table precise"},
            {"name": "Abel Penhallow", "role": "Saltby harbourmaster", "traits": ["watchful", "kind"],
             "motivation": "See the Constance safely into harbour tonight", "appearance": "Tall, grey-bearded, never without his telescope",
             "speech": "Slow and formal"},
            {"name": "Ivy Crane", "role": "Chandler's daughter who rows out to the rock", "traits": ["quick", "secretive"],
             "motivation": "Keep Morwen's secret until she is ready to tell it", "appearance": "Freckled, salt-stiff oilskin",
             "speech": "Fast, half-finished sentences"}
        ],
        "beats": [
            {"title": "The Letter Under the Conch", "description": "The player reads the letter Morwen left on the kitchen table and learns she can no longer climb the tower alone.",
             "priority": "critical", "from_scene": 1, "when": "inside the keeper's cottage"},
            {"title": "Who Lights the Lamp", "description": "At dusk the player finds Ivy on the tower stair with a lit taper.",
             "priority": "high", "from_scene": 2, "when": "climbs the lighthouse at dusk"}
        ],
        "lore": [
            {"title": "The Causeway Tides", "text": "At spring tides the Gull Rock causeway floods in eleven minutes; Saltby children learn the count before their letters."},
            {"title": "The Beehive Lens", "text": "The lens came from the south a generation ago, paid for by a subscription every Saltby household still remembers giving to."}
        ],
        "rules": [
            "The causeway can only be crossed for two hours either side of low water.",
            "Nothing supernatural happens on Gull Rock; strange things have ordinary explanations."
        ]
    })
}

fn script(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("enrich-script.json");
    std::fs::write(
        &path,
        json!({"replies": [{"stage": "enrich", "text": text}]}).to_string(),
    )
    .unwrap();
    path
}

fn enrich(dir: &Path, script: &Path, force: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loreloom"));
    cmd.args(["campaign", "enrich"])
        .arg(dir)
        .arg("--model-script")
        .arg(script)
        .env("LORELOOM_DATA_DIR", dir.parent().unwrap().join("data"));
    if force {
        cmd.arg("--force");
    }
    cmd.output().unwrap()
}

#[test]
fn a_sparse_campaign_is_enriched_into_generated_files_with_provenance() {
    let (tmp, dir) = lighthouse();
    let (before, _) = campaign::load(&dir, &[system_rulesets()]);
    let before = before.unwrap();
    assert!(before.is_sparse());
    assert_eq!(before.content_files, 2);
    let human = snapshot(&dir);
    let out = enrich(&dir, &script(tmp.path(), &answer().to_string()), false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{stdout}");
    // Human-authored files are byte for byte what they were.
    let after = snapshot(&dir);
    for (path, bytes) in &human {
        assert_eq!(after.get(path), Some(bytes), "{} changed", path.display());
    }
    let new: Vec<&PathBuf> = after.keys().filter(|p| !human.contains_key(*p)).collect();
    assert!(
        new.iter()
            .all(|p| p.to_string_lossy().contains("_generated.")),
        "{new:?}"
    );
    assert_eq!(new.len(), 3 + 1 + 2 + 1, "{new:?}");
    // Provenance on every file.
    let profile: Value = serde_json::from_slice(
        &after[Path::new("characters/npcs/morwen_tate/profile_generated.json")],
    )
    .unwrap();
    assert_eq!(profile["generated"], true);
    for key in ["source_model", "generated_at", "seed_data", "prompt"] {
        assert!(profile["provenance"][key].is_string(), "{key}: {profile}");
    }
    assert_eq!(
        profile["provenance"]["seed_data"],
        "manifest.json, world/setting.md, plot/premise.md"
    );
    let lore = String::from_utf8_lossy(&after[Path::new("lore/the_causeway_tides_generated.md")])
        .into_owned();
    assert!(
        lore.starts_with("---\n") && lore.contains("generated: true"),
        "{lore}"
    );
    // The enriched campaign loads cleanly, is no longer sparse, and has what was written.
    let (loaded, report) = campaign::load(&dir, &[system_rulesets()]);
    assert!(!report.has_errors(), "{report}");
    let c = loaded.unwrap();
    assert!(!c.is_sparse());
    let npcs: Vec<&str> = c
        .characters
        .values()
        .filter(|ch| ch.kind == CharacterKind::Npc)
        .map(|ch| ch.name.as_str())
        .collect();
    assert_eq!(npcs.len(), 3, "{npcs:?}");
    assert_eq!(c.beats.len(), 2);
    assert_eq!(c.beats[0].id, "beat_the_letter_under_the_conch");
    assert!(!c.beats[0].skippable, "a critical beat is not skippable");
    assert!(c.lore.iter().all(|d| d.generated));
    assert!(c.prose["rules"].contains("two hours either side of low water"));
    // Enriching again only happens when forced, and replaces generated files only.
    let again = enrich(&dir, &script(tmp.path(), &answer().to_string()), false);
    assert!(
        String::from_utf8_lossy(&again.stdout)
            .contains("enrichment is for campaigns with fewer than 3")
    );
    // A human-authored profile beside a generated one wins.
    std::fs::write(
        dir.join("characters/npcs/morwen_tate/profile.json"),
        json!({"name": "Morwen Tate", "role": "The keeper (by the author)", "personality": {"traits": ["proud"]}}).to_string(),
    )
    .unwrap();
    let (loaded, report) = campaign::load(&dir, &[system_rulesets()]);
    let c = loaded.unwrap();
    assert_eq!(
        c.characters["morwen_tate"].profile.as_ref().unwrap().role,
        "The keeper (by the author)"
    );
    assert!(
        report
            .notices
            .iter()
            .any(|n| n.contains("the generated one is ignored")),
        "{report}"
    );
    let forced = enrich(&dir, &script(tmp.path(), &answer().to_string()), true);
    assert!(forced.status.success());
    assert!(
        std::fs::read_to_string(dir.join("characters/npcs/morwen_tate/profile.json"))
            .unwrap()
            .contains("by the author")
    );
}

#[test]
fn a_bad_answer_names_the_stage_and_writes_nothing() {
    let (tmp, dir) = lighthouse();
    let before = snapshot(&dir);
    // Valid JSON that breaks the contract (one NPC, no rules), every attempt.
    let bad = json!({"npcs": [{"name": "X"}], "beats": [], "lore": [], "rules": []}).to_string();
    let path = tmp.path().join("bad.json");
    std::fs::write(
        &path,
        json!({"replies": [{"stage": "enrich", "text": bad}, {"stage": "enrich", "text": bad}, {"stage": "enrich", "text": bad}, {"stage": "enrich", "text": bad}]}).to_string(),
    )
    .unwrap();
    let out = enrich(&dir, &path, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("stage `enrich`"), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(snapshot(&dir), before);
}

/// The minimal campaign plays once enriched: a save is created and one scripted turn commits.
#[cfg(feature = "store")]
#[test]
fn the_enriched_minimal_campaign_plays_a_turn() {
    use loreloom::llm::{Gateway, ModelsConfig, PromptRegistry, Script, ScriptedBackend};
    use loreloom::session::controller::{Controller, Report, Step};
    use loreloom::session::play::run_turn;
    use loreloom::session::save_files::{NewSave, create_save};
    use loreloom::session::turn::Calibration;

    #[allow(dead_code)]
    #[path = "common/scripted.rs"]
    mod scripted;

    let (tmp, dir) = lighthouse();
    assert!(
        enrich(&dir, &script(tmp.path(), &answer().to_string()), false)
            .status
            .success()
    );
    let save = tmp.path().join("lighthouse.db");
    create_save(&NewSave {
        campaign: dir.clone(),
        save: Some(save.clone()),
        scenario: None,
        seed: Some(4),
        small_model: "small".into(),
        large_model: "large".into(),
        calibration: Calibration::default(),
    })
    .unwrap();
    let gateway = Gateway::new(
        PromptRegistry::load(root().join("prompts")).unwrap(),
        root().join("schemas"),
        ModelsConfig::default(),
        tmp.path(),
    );
    let backend = ScriptedBackend::new(Script {
        replies: scripted::turn_replies(0)
            .into_iter()
            .filter(|r| r.stage.as_deref() != Some("extract"))
            .chain([scripted::reply(
                "extract",
                json!({"state_ops": [], "observations": []}).to_string(),
            )])
            .chain(std::iter::repeat_n(
                scripted::reply(
                    "extract",
                    json!({"state_ops": [], "observations": []}).to_string(),
                ),
                4,
            ))
            .collect(),
    });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
    let mut ctl = Controller::open_with(&save, None).unwrap();
    assert!(ctl.state.world.perception.contains_key("morwen_tate"));
    let Step::Run(input) = ctl.handle("I knock on the cottage door and call for Morwen") else {
        panic!()
    };
    let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
    assert!(matches!(
        ctl.finish(&input, Ok(result)),
        Report::Committed { .. }
    ));
    assert!(
        matches!(
            ctl.state.world.beats.get("beat_the_letter_under_the_conch"),
            Some(loreloom::rules::BeatStatus::Open { .. })
        ),
        "{:?}",
        ctl.state.world.beats
    );
}
