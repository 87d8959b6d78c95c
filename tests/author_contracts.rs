//! The authoring answers' types agree with their hand-written contracts in `schemas/author/`.
//!
//! Each stage reads its model answer as a type (`loreloom::author::answers`) after the gateway
//! checked it against its contract. Here every type's generated schema is compared with its
//! contract: the same property names, the same `required`, the same JSON types and enum
//! values, recursively into arrays and objects, and no extra properties where the contract
//! allows none. The contract stays the source of truth for limits (lengths, counts). Also:
//! each prompt stage names that contract, and an answer that does not fit its type is a failed
//! call (it used to be read as defaults).

#![cfg(feature = "store")]

use std::collections::BTreeSet;
use std::path::Path;

use loreloom::author::answers::{
    Answer, ArtAnswer, BrainstormAnswer, BriefAnswer, CodexAnswer, DreamAnswer,
    IntersectionsAnswer, LabelsAnswer, OverlaysAnswer, PacingAnswer, ProseAnswer, ReviewAnswer,
    SeedAnswer, VoiceAnswer,
};
use loreloom::author::{Graph, NodeType, StageError};
use loreloom::llm::LlmError;
use serde_json::{Value, json};

/// Every answer type: its prompt stage and its generated schema.
fn answer_types() -> Vec<(&'static str, Value)> {
    fn of<T: Answer>() -> (&'static str, Value) {
        (T::PROMPT, schemars::schema_for!(T).to_value())
    }
    vec![
        of::<DreamAnswer>(),
        of::<BrainstormAnswer>(),
        of::<SeedAnswer>(),
        of::<IntersectionsAnswer>(),
        of::<PacingAnswer>(),
        of::<OverlaysAnswer>(),
        of::<LabelsAnswer>(),
        of::<VoiceAnswer>(),
        of::<ProseAnswer>(),
        of::<ReviewAnswer>(),
        of::<ArtAnswer>(),
        of::<BriefAnswer>(),
        of::<CodexAnswer>(),
    ]
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn contract(prompt: &str) -> Value {
    let path = root().join("schemas").join(format!("{prompt}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A generated schema with its `$ref`s followed (to `$defs` of `root`).
fn resolved<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let name = r.trim_start_matches("#/$defs/");
            resolved(&root["$defs"][name], root)
        }
        None => schema,
    }
}

/// The enum values a schema allows (`enum`, or `oneOf` of `const`s), if it lists them.
fn enum_values(schema: &Value) -> Option<BTreeSet<String>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().map(Value::to_string).collect());
    }
    let consts: Option<BTreeSet<String>> = schema
        .get("oneOf")?
        .as_array()?
        .iter()
        .map(|v| v.get("const").map(Value::to_string))
        .collect();
    consts
}

/// The JSON types a schema allows: `type` (one or a list), else those of its enum values.
fn types(schema: &Value) -> BTreeSet<String> {
    match schema.get("type") {
        Some(Value::String(t)) => [t.clone()].into(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect(),
        _ => {
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .or_else(|| {
                    schema
                        .get("oneOf")
                        .and_then(Value::as_array)
                        .map(|vs| vs.iter().filter_map(|v| v.get("const").cloned()).collect())
                });
            values
                .unwrap_or_default()
                .iter()
                .map(|v| match v {
                    Value::String(_) => "string".to_owned(),
                    Value::Bool(_) => "boolean".to_owned(),
                    Value::Number(n) if n.is_i64() || n.is_u64() => "integer".to_owned(),
                    Value::Number(_) => "number".to_owned(),
                    Value::Null => "null".to_owned(),
                    Value::Array(_) => "array".to_owned(),
                    Value::Object(_) => "object".to_owned(),
                })
                .collect()
        }
    }
}

fn keys(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Object(m)) => m.keys().cloned().collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect(),
        _ => BTreeSet::new(),
    }
}

/// Where the generated schema (`made`, under `root`) and the contract disagree, at `at`.
fn differences(contract: &Value, made: &Value, root: &Value, at: &str, out: &mut Vec<String>) {
    let made = resolved(made, root);
    let (want, got) = (types(contract), types(made));
    if want != got {
        out.push(format!(
            "{at}: types {want:?} in the contract, {got:?} in the type"
        ));
    }
    if let Some(want) = enum_values(contract)
        && enum_values(made) != Some(want.clone())
    {
        out.push(format!(
            "{at}: values {want:?} in the contract, {:?} in the type",
            enum_values(made)
        ));
    }
    if want.contains("object") {
        let (props, made_props) = (contract.get("properties"), made.get("properties"));
        if keys(props) != keys(made_props) {
            out.push(format!(
                "{at}: properties {:?} in the contract, {:?} in the type",
                keys(props),
                keys(made_props)
            ));
        }
        if keys(contract.get("required")) != keys(made.get("required")) {
            out.push(format!(
                "{at}: required {:?} in the contract, {:?} in the type",
                keys(contract.get("required")),
                keys(made.get("required"))
            ));
        }
        for (name, schema) in props.and_then(Value::as_object).into_iter().flatten() {
            if let Some(theirs) = made_props.and_then(|p| p.get(name)) {
                differences(schema, theirs, root, &format!("{at}.{name}"), out);
            }
        }
        match (
            contract.get("additionalProperties"),
            made.get("additionalProperties"),
        ) {
            (Some(Value::Bool(false)), Some(Value::Bool(false))) | (None, None) => {}
            (Some(Value::Bool(false)), other) => out.push(format!(
                "{at}: the contract allows no other properties, the type {other:?}"
            )),
            (Some(schema @ Value::Object(_)), Some(theirs)) => {
                differences(schema, theirs, root, &format!("{at}.*"), out);
            }
            (want, got) => out.push(format!(
                "{at}: other properties {want:?} in the contract, {got:?} in the type"
            )),
        }
    }
    if want.contains("array") {
        match (contract.get("items"), made.get("items")) {
            (Some(items), Some(theirs)) => {
                differences(items, theirs, root, &format!("{at}[]"), out);
            }
            (want, got) => out.push(format!(
                "{at}: items {want:?} in the contract, {got:?} in the type"
            )),
        }
    }
}

fn disagreements(contract: &Value, made: &Value) -> Vec<String> {
    let mut out = Vec::new();
    differences(contract, made, made, "answer", &mut out);
    out
}

#[test]
fn every_answer_type_agrees_with_its_contract() {
    let types = answer_types();
    let contracts: BTreeSet<String> = std::fs::read_dir(root().join("schemas/author"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let answered: BTreeSet<String> = types
        .iter()
        .map(|(p, _)| format!("{}.schema.json", p.trim_start_matches("author/")))
        .collect();
    assert_eq!(
        answered, contracts,
        "one answer type per contract in schemas/author/"
    );
    for (prompt, made) in &types {
        let found = disagreements(&contract(prompt), made);
        assert!(found.is_empty(), "{prompt}:\n{}", found.join("\n"));
    }
}

#[test]
fn each_answer_types_prompt_names_its_contract() {
    for (prompt, _) in answer_types() {
        let stage =
            std::fs::read_to_string(root().join("prompts").join(prompt).join("stage.ron")).unwrap();
        let named = format!("contract: Some(\"{prompt}.schema.json\")");
        assert!(
            stage.contains(&named),
            "prompts/{prompt}/stage.ron should say {named}"
        );
    }
}

/// The checker is not blind: a contract with a property renamed, one made optional, a type
/// changed, a value added or extra properties allowed disagrees with the type.
#[test]
fn the_checker_finds_each_kind_of_disagreement() {
    let made = schemars::schema_for!(PacingAnswer).to_value();
    let good = contract("author/grow_pacing");
    assert!(disagreements(&good, &made).is_empty());
    let mut renamed = good.clone();
    let gaps = renamed["properties"]
        .as_object_mut()
        .unwrap()
        .remove("gaps")
        .unwrap();
    renamed["properties"]["bridges"] = gaps;
    let mut optional = good.clone();
    optional["required"] = json!([]);
    let mut retyped = good.clone();
    retyped["properties"]["scene_types"]["items"]["properties"]["n"]["type"] = json!("string");
    let mut widened = good.clone();
    widened["properties"]["scene_types"]["items"]["properties"]["scene_type"]["enum"] =
        json!(["scene", "sequel", "micro_beat", "climax"]);
    let mut open = good.clone();
    open["properties"]["gaps"]["items"]
        .as_object_mut()
        .unwrap()
        .remove("additionalProperties");
    for (what, bad) in [
        ("renamed", renamed),
        ("optional", optional),
        ("retyped", retyped),
        ("widened", widened),
        ("open", open),
    ] {
        assert!(!disagreements(&bad, &made).is_empty(), "{what}");
    }
}

fn refused(prompt: &str) -> LlmError {
    LlmError::Backend {
        stage: prompt.to_owned(),
        model_key: "test".into(),
        reason: "no answer in this test".into(),
        transient: false,
    }
}

/// Bug fixed: an art direction answer without its style (one the gateway's contract check
/// would refuse, reaching DRESS another way) used to be stored with `"style": null`, which
/// only failed later when a picture was drawn; now it is the call's failure, said with the
/// field, and nothing is written.
#[test]
fn an_art_answer_outside_its_contract_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::open(&dir.path().join("graph.db")).unwrap();
    let mut ask = |prompt: &str, _vars: Value| -> Result<Value, LlmError> {
        match prompt {
            "author/dress_art" => Ok(json!({"medium": "ink", "palette": ["ochre"],
                "composition_notes": "", "negative_defaults": "", "aspect_ratio": "4:3", "visuals": []})),
            other => Err(refused(other)),
        }
    };
    let err = loreloom::author::dress_stage::art(&mut g, "woodcut prints", &mut ask).unwrap_err();
    assert!(
        matches!(
            err,
            StageError::Answer {
                prompt: "author/dress_art",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("missing field `style`"), "{err}");
    assert!(g.nodes(NodeType::ArtDirection).unwrap().is_empty());
}

/// Bug fixed: a pacing answer with a scene type the contract does not have used to be half
/// read (that beat silently kept the engine's guess); now the answer is refused like a failed
/// call, and GROW says so in its notes and keeps the engine's guesses.
#[test]
fn a_pacing_answer_outside_its_contract_is_a_failed_call() {
    use loreloom::author::Mutation;
    use loreloom::author::{EdgeType, Stage};
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::open(&dir.path().join("graph.db")).unwrap();
    g.apply(
        Stage::Brainstorm,
        "test",
        "test",
        &[
            Mutation::create(
                "mara",
                NodeType::Entity,
                json!({"type": "character", "name": "Mara"}),
            ),
            Mutation::create(
                "dilemma::tide",
                NodeType::Dilemma,
                json!({"question": "Wait?"}),
            ),
            Mutation::create("wait", NodeType::Answer, json!({"canonical": true})),
            Mutation::create("row", NodeType::Answer, json!({"canonical": false})),
            Mutation::link(EdgeType::HasAnswer, "dilemma::tide", "wait"),
            Mutation::link(EdgeType::HasAnswer, "dilemma::tide", "row"),
            Mutation::link(EdgeType::DilemmaInvolves, "dilemma::tide", "mara"),
        ],
    )
    .unwrap();
    let path = "path::tide__wait";
    g.apply(
        Stage::Seed,
        "test",
        "test",
        &[
            Mutation::create(path, NodeType::Path, json!({"dilemma_id": "dilemma::tide"})),
            Mutation::link(EdgeType::Explores, path, "wait"),
            Mutation::create("beat::a", NodeType::Beat, json!({"summary": "Mara waits.", "entities": ["mara"],
                "dilemma_impacts": [{"dilemma_id": "dilemma::tide", "effect": "commits", "note": ""}]})),
            Mutation::link(EdgeType::BelongsTo, "beat::a", path),
        ],
    )
    .unwrap();
    let mut ask = |prompt: &str, _vars: Value| -> Result<Value, LlmError> {
        match prompt {
            "author/grow_pacing" => Ok(json!({"scene_types": [{"n": 1, "scene_type": "climax"}]})),
            other => Err(refused(other)),
        }
    };
    let grown = loreloom::author::grow_stage::run(&mut g, "Mara and the tide", &mut ask).unwrap();
    assert!(
        grown
            .notes
            .iter()
            .any(|n| n.starts_with("the model did not pace the beats")
                && n.contains("`author/grow_pacing` answered outside its contract")),
        "{:?}",
        grown.notes
    );
    // The engine's guess stands: a beat that commits is a scene.
    assert_eq!(
        g.node("beat::a").unwrap().unwrap().data["scene_type"],
        "scene"
    );
}
