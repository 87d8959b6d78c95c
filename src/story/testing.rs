//! Test helpers: small stories written as JSON literals.

use serde_json::{Value, json};

use super::graph::Story;
use super::model::StoryFile;

/// A story file from the parts that matter to a test; format, version and meta are filled in.
pub(crate) fn file(mut parts: Value) -> StoryFile {
    let object = parts.as_object_mut().expect("a JSON object");
    object.entry("format").or_insert(json!("loreloom-story"));
    object.entry("version").or_insert(json!(1));
    object
        .entry("meta")
        .or_insert(json!({"id": "test", "title": "Test"}));
    serde_json::from_value(parts).expect("test story matches the model")
}

/// A compiled story; panics with the diagnostics if it does not compile.
pub(crate) fn story(parts: Value) -> Story {
    Story::compile(file(parts)).unwrap_or_else(|d| panic!("story does not compile: {d:#?}"))
}

/// A passage with prose and choices given as (label, to, requires, grants).
pub(crate) fn passage(id: &str, choices: &[(&str, &str, &[&str], &[&str])]) -> Value {
    json!({
        "id": id,
        "prose": format!("The prose of {id}."),
        "choices": choices.iter().map(|(label, to, requires, grants)| json!({
            "label": label, "to": to, "requires": requires, "grants": grants
        })).collect::<Vec<_>>(),
    })
}

/// Declared codewords with these ids.
pub(crate) fn codewords(ids: &[&str]) -> Value {
    ids.iter().map(|id| json!({"id": id})).collect()
}
