//! The fuzzers' corpora and reproducers replayed (#44): what fuzzing found stays fixed.
//!
//! `fuzz/` holds a libFuzzer target for each parser and handler that reads
//! what someone else wrote (`tools/fuzz.sh` runs them). Their bodies are
//! `fuzz/src/lib.rs`, compiled here as well, and every seed they start from
//! (`fuzz/seeds/<target>/`), every input they kept (`fuzz/corpus/<target>/`)
//! and every crash they found
//! (`fuzz/regressions/<target>/`) runs through the same function: no panic,
//! and none over the hang guard.
#![cfg(feature = "store")]

#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::path::Path;
use std::time::{Duration, Instant};

/// A hang guard for one input in the debug build (the fuzzers hold each to 1 s in release).
const GUARD: Duration = Duration::from_secs(20);

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs = Vec::new();
    for folder in ["seeds", "corpus", "regressions"] {
        if let Ok(entries) = std::fs::read_dir(root.join(folder).join(target)) {
            inputs.extend(entries.filter_map(Result::ok).map(|e| e.path()));
        }
    }
    inputs.sort();
    assert!(!inputs.is_empty(), "fuzz/corpus/{target} is empty");
    let mut slow = Vec::new();
    for input in &inputs {
        let data = std::fs::read(input).unwrap();
        let started = Instant::now();
        run(&data);
        if started.elapsed() > GUARD {
            slow.push(format!("{}: {:?}", input.display(), started.elapsed()));
        }
    }
    assert!(slow.is_empty(), "{}", slow.join("\n"));
}

#[test]
fn story_inputs() {
    replay("story", targets::story);
}

#[test]
fn questfoundry_inputs() {
    replay("questfoundry", targets::questfoundry);
}

#[test]
fn story_slot_inputs() {
    replay("story_slot", targets::story_slot);
}

#[test]
fn campaign_inputs() {
    replay("campaign", targets::campaign);
}

#[test]
fn ruleset_inputs() {
    replay("ruleset", targets::ruleset);
}

#[test]
fn skill_event_inputs() {
    replay("skill_events", targets::skill_events);
}

#[test]
fn model_stream_inputs() {
    replay("model_stream", targets::model_stream);
}

#[test]
fn model_turn_inputs() {
    replay("model_turn", targets::model_turn);
}

#[test]
fn save_inputs() {
    replay("save", targets::save);
}

#[test]
fn graph_yaml_inputs() {
    replay("graph_yaml", targets::graph_yaml);
}
