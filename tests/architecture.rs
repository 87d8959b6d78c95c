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
    for dir in ["tests", "benches", "web"] {
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

#[test]
fn the_browser_build_stays_behind_its_boundary() {
    // Only the storage shim, the page bridge and the fetch backend speak to the browser ...
    for needle in ["web_sys", "js_sys", "wasm_bindgen"] {
        assert_eq!(
            offenders(needle, &["files/web.rs", "ui/page.rs", "llm/fetch.rs"]),
            Vec::<String>::new(),
            "{needle}"
        );
    }
    // ... and only when built for it: the page bridge and the fetch backend are
    // wasm-only modules, and so is the storage shim's browser half (`files/web.rs`).
    let ui = fs::read_to_string(src().join("ui/mod.rs")).unwrap();
    assert!(ui.contains("#[cfg(target_family = \"wasm\")]\nmod page;"));
    let llm = fs::read_to_string(src().join("llm/mod.rs")).unwrap();
    assert!(llm.contains("#[cfg(target_family = \"wasm\")]\npub mod fetch;"));
    let files = fs::read_to_string(src().join("files/mod.rs")).unwrap();
    assert!(files.contains("#[cfg(target_family = \"wasm\")]\nmod web;"));
    // The browser's crates are target dependencies, never in the native build;
    // the processes skills need are native-only.
    let manifest =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let section_of = |dep: &str| {
        let at = manifest
            .find(&format!("\n{dep} = "))
            .unwrap_or_else(|| panic!("{dep} is not a dependency"));
        manifest[..at]
            .rsplit("\n[")
            .next()
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .to_owned()
    };
    for dep in [
        "web-sys",
        "js-sys",
        "wasm-bindgen",
        "wasm-bindgen-futures",
        "sqlite-wasm-rs",
    ] {
        assert_eq!(
            section_of(dep),
            "target.'cfg(all(target_family = \"wasm\", target_os = \"unknown\"))'.dependencies]",
            "{dep}"
        );
    }
    for dep in ["wait-timeout", "cap-std"] {
        assert_eq!(
            section_of(dep),
            "target.'cfg(not(target_family = \"wasm\"))'.dependencies]",
            "{dep}"
        );
    }
    // The browser entry point is built only with the `web` feature.
    assert!(manifest.contains(
        "name = \"loreloom-web\"\npath = \"web/main.rs\"\nrequired-features = [\"web\"]"
    ));
}
