//! Architecture invariants from ARCHITECTURE.md, checked on the source tree.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Files under `src/` whose code mentions `needle`, outside the allowed prefixes.
fn offenders(needle: &str, allowed: &[&str]) -> Vec<String> {
    rust_files(&src())
        .into_iter()
        .filter_map(|path| {
            let rel = path
                .strip_prefix(src())
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if allowed.iter().any(|a| rel.starts_with(a)) {
                return None;
            }
            let text = fs::read_to_string(&path).unwrap();
            text.lines()
                .any(|l| !l.trim_start().starts_with("//") && l.contains(needle))
                .then_some(rel)
        })
        .collect()
}

#[test]
fn the_story_graph_is_plain_rust() {
    assert_eq!(
        offenders("bevy", &["engine/", "ui/", "cli/", "lib.rs", "main.rs"]),
        Vec::<String>::new()
    );
}

#[test]
fn only_the_presentation_layer_touches_egui_kira_and_render_types() {
    for needle in ["bevy_egui", "bevy_kira_audio", "bevy::render", "bevy::ui"] {
        assert_eq!(
            offenders(needle, &["ui/", "presentation/"]),
            Vec::<String>::new(),
            "{needle}"
        );
    }
}

#[test]
fn only_the_backend_modules_touch_llama_cpp_and_candle() {
    assert_eq!(
        offenders("llama_cpp_2", &["llm/llama"]),
        Vec::<String>::new()
    );
    assert_eq!(
        offenders("candle", &["memory/embed", "embed"]),
        Vec::<String>::new()
    );
}

#[test]
fn every_source_file_starts_with_a_doc_line() {
    let mut files = rust_files(&src());
    for dir in ["tests", "benches"] {
        files.extend(rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)));
    }
    let missing: Vec<String> = files
        .into_iter()
        .filter(|p| !fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(missing, Vec::<String>::new());
}

#[test]
fn only_the_http_backend_speaks_http_and_no_prompt_text_lives_in_rust() {
    assert_eq!(offenders("ureq", &["llm/openai"]), Vec::<String>::new());
    // Prompts are files under prompts/: a system-prompt opener in a Rust string is one that escaped.
    for needle in ["\"You are ", "\"You fix ", "\"Respond with JSON"] {
        assert_eq!(offenders(needle, &[]), Vec::<String>::new(), "{needle}");
    }
}
