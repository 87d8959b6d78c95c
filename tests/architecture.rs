//! Architecture invariants from ARCHITECTURE.md, checked on the source tree.

use std::collections::{BTreeMap, BTreeSet};
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
        .iter()
        .filter(|p| !fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(missing, Vec::<String>::new());
    // One sentence a reader takes in at a glance; the detail goes below it.
    let long: Vec<String> = files
        .iter()
        .filter(|p| {
            let text = fs::read_to_string(p).unwrap();
            text.lines().next().unwrap_or("").chars().count() > 101
        })
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(
        long,
        Vec::<String>::new(),
        "first `//!` lines over 100 characters"
    );
}

#[test]
fn only_the_http_backend_speaks_http_and_no_prompt_text_lives_in_rust() {
    assert_eq!(offenders("ureq", &["llm/openai"]), Vec::<String>::new());
    // Prompts are files under prompts/: a system-prompt opener in a Rust string is one that escaped.
    // (`tests/prompt_text.rs` checks what the model is sent for any prose from Rust.)
    for needle in [
        "\"You are ",
        "\"You will ",
        "\"You fix ",
        "\"Respond with",
        "\"Reply with",
        "\"Answer with",
        "\"Return only",
        "\"Return a JSON",
    ] {
        assert_eq!(offenders(needle, &[]), Vec::<String>::new(), "{needle}");
    }
}

#[test]
fn the_browser_build_stays_behind_its_boundary() {
    // Only the storage shim, the page bridge, the fetch backend and the page's
    // embedder (which asks web/model.js for its files) speak to the browser ...
    for needle in ["web_sys", "js_sys", "wasm_bindgen"] {
        assert_eq!(
            offenders(
                needle,
                &[
                    "files/web.rs",
                    "ui/page.rs",
                    "llm/fetch.rs",
                    "memory/page.rs"
                ]
            ),
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
    let memory = fs::read_to_string(src().join("memory/mod.rs")).unwrap();
    assert!(
        memory
            .contains("#[cfg(all(feature = \"embed\", target_family = \"wasm\"))]\npub mod page;")
    );
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

/// The floors of the house, bottom up (ARCHITECTURE.md's code map): a
/// module may use modules on its own floor or below, never above.
const FLOORS: [&[&str]; 10] = [
    &["files", "transcript"],
    &["story", "rules"],
    &["ship", "llm"],
    &["campaign", "author"],
    &["memory"],
    &["skills", "store"],
    &["session"],
    &["engine", "eval"],
    &["ui"],
    &["cli", "tune", "lib.rs", "main.rs"],
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|f| f.contains(&module))
}

/// A source file as a module path: `src/session/turn/mod.rs` → `session::turn`.
fn module_of(rel: &str) -> Vec<String> {
    let rel = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_owned).collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts
}

/// The file a module path names, resolved as far as its segments are modules:
/// `session::turn::SessionState` → `session/turn/mod.rs`.
fn file_of(path: &[String]) -> Option<String> {
    let mut dir = src();
    let mut found = None;
    for segment in path {
        let file = dir.join(format!("{segment}.rs"));
        let folder = dir.join(segment);
        if folder.join("mod.rs").is_file() {
            found = Some(folder.join("mod.rs"));
        } else if file.is_file() {
            found = Some(file);
        } else {
            break;
        }
        dir = folder;
    }
    found.map(|f| {
        f.strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/")
    })
}

/// The code of a file without comments and without its `#[cfg(test)]` module
/// (tests may reach anywhere), as `use` paths and inline `crate::`/`super::` paths.
fn paths_used(text: &str) -> Vec<String> {
    let code: String = text
        .split("\n#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or("")
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    // `use` statements (a line that starts one, to its `;`), their braces expanded.
    let lines: Vec<&str> = code.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let statement = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
            .iter()
            .find_map(|p| line.strip_prefix(p));
        let Some(first) = statement else {
            i += 1;
            continue;
        };
        let mut text = first.to_owned();
        while !text.contains(';') && i + 1 < lines.len() {
            i += 1;
            text.push(' ');
            text.push_str(lines[i].trim());
        }
        expand(text.split(';').next().unwrap_or(""), "", &mut out);
        i += 1;
    }
    // Inline paths (`crate::files::read(..)`, `super::turn::PERSONA`).
    for prefix in ["crate::", "super::", "self::"] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(prefix) {
            let inside_a_path = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            if !inside_a_path {
                out.push(tail[..end].trim_end_matches(':').to_owned());
            }
            rest = &tail[end.max(1)..];
        }
    }
    out
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str, base: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        None => {
            let leaf = tree.split(" as ").next().unwrap_or("").trim();
            if !leaf.is_empty() {
                out.push(format!("{base}{leaf}"));
            }
        }
        Some(open) => {
            let prefix = &tree[..open];
            let close = tree.rfind('}').filter(|c| *c > open).unwrap_or(tree.len());
            let inner = &tree[open + 1..close];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&inner[start..i], &format!("{base}{prefix}"), out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&inner[start..], &format!("{base}{prefix}"), out);
        }
    }
}

/// Every file's imports, as the files they name: `(from, to)`.
fn import_edges() -> Vec<(String, String)> {
    let mut edges = Vec::new();
    for path in rust_files(&src()) {
        let rel = path
            .strip_prefix(src())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let module = module_of(&rel);
        let text = fs::read_to_string(&path).unwrap();
        for used in paths_used(&text) {
            let mut segments: Vec<String> = used.split("::").map(str::to_owned).collect();
            let absolute = match segments.first().map(String::as_str) {
                Some("crate") => segments.split_off(1),
                Some("super" | "self") => {
                    // `super` is the parent module (a `mod.rs` is its folder's module).
                    let mut at = module.clone();
                    while let Some(s) = segments.first() {
                        match s.as_str() {
                            "super" => {
                                at.pop();
                            }
                            "self" => {}
                            _ => break,
                        }
                        segments.remove(0);
                    }
                    at.extend(segments);
                    at
                }
                _ => continue,
            };
            if let Some(to) = file_of(&absolute)
                && to != rel
            {
                edges.push((rel.clone(), to));
            }
        }
    }
    edges.sort();
    edges.dedup();
    edges
}

/// Tarjan's walk over an import graph.
struct Walk<'a> {
    graph: &'a BTreeMap<&'a str, Vec<&'a str>>,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    next: usize,
    found: Vec<Vec<String>>,
}

impl<'a> Walk<'a> {
    fn visit(&mut self, v: &'a str) {
        self.index.insert(v, self.next);
        self.low.insert(v, self.next);
        self.next += 1;
        self.stack.push(v);
        self.on_stack.insert(v);
        for &u in &self.graph[v] {
            if !self.index.contains_key(u) {
                self.visit(u);
                let low = self.low[v].min(self.low[u]);
                self.low.insert(v, low);
            } else if self.on_stack.contains(u) {
                let low = self.low[v].min(self.index[u]);
                self.low.insert(v, low);
            }
        }
        if self.low[v] == self.index[v] {
            let mut group = Vec::new();
            while let Some(u) = self.stack.pop() {
                self.on_stack.remove(u);
                group.push(u.to_owned());
                if u == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                self.found.push(group);
            }
        }
    }
}

/// The strongly connected groups of more than one file (Tarjan): import circles.
fn circles(edges: &[(String, String)]) -> Vec<Vec<String>> {
    let mut graph: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        graph.entry(a).or_default().push(b);
        graph.entry(b).or_default();
    }
    let mut walk = Walk {
        graph: &graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for &v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_source_file_imports_in_a_circle() {
    assert_eq!(circles(&import_edges()), Vec::<Vec<String>>::new());
}

#[test]
fn every_module_imports_only_its_floor_and_below() {
    let top = |file: &str| {
        file.split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned()
    };
    let mut upward = Vec::new();
    let mut unplaced = BTreeSet::new();
    for (from, to) in import_edges() {
        let (a, b) = (top(&from), top(&to));
        let (Some(fa), Some(fb)) = (
            floor_of(&a).or(floor_of(&from)),
            floor_of(&b).or(floor_of(&to)),
        ) else {
            unplaced.insert(if floor_of(&a).is_none() { a } else { b });
            continue;
        };
        if fb > fa {
            upward.push(format!("{from} → {to}"));
        }
    }
    assert_eq!(
        unplaced,
        BTreeSet::<String>::new(),
        "modules the floors do not place"
    );
    assert_eq!(
        upward,
        Vec::<String>::new(),
        "imports that run up the floors"
    );
    // The floors themselves: no two top-level modules import each other.
    let mut pairs: Vec<(String, String)> = import_edges()
        .into_iter()
        .map(|(a, b)| (top(&a), top(&b)))
        .filter(|(a, b)| a != b)
        .collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(
        circles(&pairs),
        Vec::<Vec<String>>::new(),
        "modules in a circle"
    );
}

#[test]
fn the_import_graph_sees_circles_and_upward_arrows() {
    // The checks above are only as good as the graph: a circle it is shown is found.
    let edges: Vec<(String, String)> = [
        ("a.rs", "b.rs"),
        ("b.rs", "c.rs"),
        ("c.rs", "a.rs"),
        ("c.rs", "d.rs"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(
        circles(&edges),
        vec![vec![
            "a.rs".to_owned(),
            "b.rs".to_owned(),
            "c.rs".to_owned()
        ]]
    );
    let mut found = Vec::new();
    expand(
        "crate::session::{turn::{self, PERSONA}, stream::Kind as K}",
        "",
        &mut found,
    );
    assert_eq!(
        found,
        [
            "crate::session::turn::self",
            "crate::session::turn::PERSONA",
            "crate::session::stream::Kind"
        ]
    );
    // This very tree: the turn runner's children import it, and the session is found above the store.
    let edges = import_edges();
    assert!(edges.contains(&(
        "session/turn/requests.rs".to_owned(),
        "session/turn/mod.rs".to_owned()
    )));
    assert!(
        edges
            .iter()
            .any(|(a, b)| a.starts_with("session/") && b.starts_with("store/"))
    );
}
