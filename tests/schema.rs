//! Generated schemas stay current, and the turn stages' types agree with contracts and stage files.
//!
//! To regenerate after changing `src/story/model.rs`, `src/campaign/format.rs` or `src/rules/`:
//! `UPDATE_SCHEMAS=1 cargo test --test schema`.

mod common;

use std::path::Path;

use loreloom::campaign::format as files;
use loreloom::rules::{Roll, Ruleset, StateOp};
use loreloom::story::model::StoryFile;
use schemars::Schema;

/// Write `generated` when `UPDATE_SCHEMAS` is set; otherwise fail unless the committed file equals it.
fn keep_current(path: &Path, generated: &str, source: &str) {
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with {source}; run `UPDATE_SCHEMAS=1 cargo test --test schema`",
        path.display()
    );
}

/// Every structured campaign file (seed 002 Appendix B, plus seed 003's ruleset and scenario).
fn campaign_schemas() -> Vec<(&'static str, Schema)> {
    vec![
        ("manifest", schemars::schema_for!(files::Manifest)),
        ("npc_profile", schemars::schema_for!(files::NpcProfile)),
        ("plot_beats", schemars::schema_for!(files::BeatsFile)),
        (
            "player_template",
            schemars::schema_for!(files::PlayerTemplate),
        ),
        ("scenario", schemars::schema_for!(files::Scenario)),
        ("world_state", schemars::schema_for!(files::WorldFile)),
        ("asset_metadata", schemars::schema_for!(files::AssetMeta)),
        ("pack_manifest", schemars::schema_for!(files::PackManifest)),
        (
            "pack_entry_frontmatter",
            schemars::schema_for!(files::Frontmatter),
        ),
        ("ruleset", schemars::schema_for!(Ruleset)),
        ("state_op", schemars::schema_for!(StateOp)),
        ("dice_roll", schemars::schema_for!(Roll)),
    ]
}

#[test]
fn the_campaign_schemas_match_the_models() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/campaign");
    let schemas = campaign_schemas();
    for (name, schema) in &schemas {
        let generated = serde_json::to_string_pretty(schema).unwrap() + "\n";
        keep_current(
            &dir.join(format!("{name}.schema.json")),
            &generated,
            "src/campaign/format.rs and src/rules/",
        );
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut expected: Vec<String> = schemas
        .iter()
        .map(|(n, _)| format!("{n}.schema.json"))
        .collect();
    expected.sort();
    assert_eq!(
        on_disk, expected,
        "schemas/campaign holds exactly the generated schemas"
    );
}

#[test]
fn every_shipped_ruleset_validates_against_the_ruleset_schema() {
    let schema = serde_json::to_value(schemars::schema_for!(Ruleset)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let dir = loreloom::campaign::system_rulesets();
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path().join("ruleset.json");
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        found += 1;
    }
    assert_eq!(found, 4, "the four rulesets of the seeds ship");
}

#[test]
fn the_story_schema_matches_the_model() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/story.schema.json");
    let generated = serde_json::to_string_pretty(&schemars::schema_for!(StoryFile)).unwrap() + "\n";
    keep_current(&path, &generated, "src/story/model.rs");
}

#[test]
fn every_bundled_story_is_a_valid_version_1_package() {
    let campaigns = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns");
    let mut found = 0;
    for entry in std::fs::read_dir(&campaigns).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("story.json").is_file() {
            continue;
        }
        found += 1;
        let package = loreloom::story::open(&dir).unwrap_or_else(|e| panic!("{e}"));
        let story = &package.story;
        let report = loreloom::story::validate(story);
        assert_eq!(
            report.diagnostics,
            vec![],
            "{} validates cleanly",
            dir.display()
        );
        let missing = loreloom::story::load::check_assets(story.file(), &package.root);
        assert_eq!(
            missing,
            vec![],
            "every asset {} names exists",
            dir.display()
        );
    }
    assert!(found >= 1, "campaigns/ holds the default story");
}

/// A type's schema as `schemars` generates it, as JSON.
fn type_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap()
}

fn stage_contract(name: &str) -> serde_json::Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/stages/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn each_turn_stage_answer_type_reads_what_its_contract_admits() {
    use loreloom::session::turn::contracts::{
        Choices, Extraction, LoreFacts, NpcIntent, Resolution,
    };
    let pairs = [
        ("resolve", type_schema::<Resolution>()),
        ("extract", type_schema::<Extraction>()),
        ("intent", type_schema::<NpcIntent>()),
        ("lore_extract", type_schema::<LoreFacts>()),
        ("choices", type_schema::<Choices>()),
    ];
    for (contract, ty) in &pairs {
        let found = common::contract::disagreements(ty, &stage_contract(contract));
        assert!(found.is_empty(), "{contract}: {found:#?}");
    }
    // The check can fail: a type that is not the contract's is caught, by field and kind.
    let wrong =
        common::contract::disagreements(&type_schema::<NpcIntent>(), &stage_contract("choices"));
    assert!(
        wrong
            .iter()
            .any(|d| d.starts_with("/choices: in the contract"))
            && wrong.iter().any(|d| d.starts_with("/thought: in the type")),
        "{wrong:#?}"
    );
    let narrower = serde_json::json!({
        "type": "object", "required": ["n"],
        "properties": {"n": {"type": "string", "enum": ["a"]}}
    });
    let wider = serde_json::json!({
        "type": "object", "required": [],
        "properties": {"n": {"type": ["string", "integer"], "enum": ["a", "b", 3]}}
    });
    let found = common::contract::disagreements(&narrower, &wider);
    assert_eq!(found.len(), 4, "{found:#?}");
}

#[test]
fn each_turn_stage_is_given_exactly_the_variables_its_stage_file_documents() {
    use loreloom::session::turn::vars::{
        ChoicesVars, ExtractVars, IntentVars, LoreVars, NarrateVars, RecapVars, ResolveVars,
    };
    fn keys(vars: &impl serde::Serialize) -> Vec<String> {
        let value = serde_json::to_value(vars).unwrap();
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    }
    let registry =
        loreloom::llm::PromptRegistry::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts"))
            .unwrap();
    let stages = [
        ("narrate", keys(&NarrateVars::default())),
        ("choices", keys(&ChoicesVars::default())),
        ("npc_intent", keys(&IntentVars::default())),
        ("resolve", keys(&ResolveVars::default())),
        ("extract", keys(&ExtractVars::default())),
        ("lore_extract", keys(&LoreVars::default())),
        ("recap", keys(&RecapVars::default())),
    ];
    for (stage, given) in stages {
        // `compact` is the gateway's to set, from the model's settings.
        let mut documented: Vec<String> = registry
            .stage(stage)
            .unwrap()
            .variables
            .keys()
            .filter(|k| *k != "compact")
            .cloned()
            .collect();
        documented.sort();
        assert_eq!(given, documented, "{stage}");
    }
}
