//! The fuzz targets' bodies (#44): every parser and handler that reads what someone else wrote.
//!
//! Each function takes arbitrary bytes and must return without a panic, a
//! hang or unbounded memory, whatever they hold. The binaries in
//! `fuzz_targets/` hand them libFuzzer's inputs (`tools/fuzz.sh` runs them);
//! `tests/fuzz_corpus.rs` replays every committed corpus file and reproducer
//! through the same functions in CI, so what the fuzzers found stays fixed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use loreloom::llm::chat::{EventStream, Lines};
use loreloom::story::{Player, SaveDocument, SharedStory};

/// The repository root (campaigns, prompts and schemas are read from it).
/// (This file is also compiled into the game's own tests, where the manifest
/// folder is the root itself.)
pub fn root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if here.join("campaigns").is_dir() {
        return here;
    }
    here.parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// A story (Loreloom's format or QuestFoundry's): load, compile, validate
/// within the checker's budget, then a walk of play steered by the bytes
/// (choices, undo, a save and a restore).
pub fn story(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(loaded) = loreloom::story::load::load_text(PathBuf::from("fuzz/story.json"), text)
    else {
        return;
    };
    let (compiled, _report) = loreloom::story::validate_file(loaded.file);
    let Some(story) = compiled else {
        return;
    };
    play(Arc::new(story), data);
}

/// QuestFoundry's runtime JSON: the same path as [`story`] (the format field
/// picks the importer); its own corpus starts from QuestFoundry's files.
pub fn questfoundry(data: &[u8]) {
    story(data);
}

/// Plays `story` with the bytes as the player's hand: each byte picks a
/// choice, an undo, or a save and restore.
fn play(story: SharedStory, steer: &[u8]) {
    let mut player = Player::new(story.clone());
    for &b in steer.iter().rev().take(64) {
        match b % 8 {
            0 => {
                let _ = player.undo(usize::from(b >> 3));
            }
            1 => {
                let saved = player.save();
                if let Ok(back) = Player::restore(story.clone(), &saved) {
                    player = back;
                }
            }
            _ => {
                let open: Vec<usize> = player.open_choices().map(|(i, _)| i).collect();
                if open.is_empty() {
                    break;
                }
                let _ = player.choose(open[usize::from(b) % open.len()]);
            }
        }
        let _ = player.codex();
        let _ = player.choices();
    }
}

/// A story slot as the player's disk holds it, restored against a real story.
pub fn story_slot(data: &[u8]) {
    static STORY: OnceLock<Option<SharedStory>> = OnceLock::new();
    let Some(story) = STORY.get_or_init(|| {
        loreloom::story::open(&root().join("fuzz/seeds/questfoundry/keepers-bargain.json"))
            .ok()
            .map(|p| p.story)
    }) else {
        return;
    };
    let Ok(doc) = serde_json::from_slice::<SaveDocument>(data) else {
        return;
    };
    if let Ok(player) = Player::restore(story.clone(), &doc) {
        let _ = player.save();
        let _ = player.codex();
    }
}

/// A whole campaign folder from bytes, loaded and checked as `campaign
/// validate` does. The bytes are files, each `=== path` then its text; a
/// line `=== link path -> target` makes a symbolic link (loops included).
pub fn campaign(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let root = dir.path().join("campaign");
    if std::fs::create_dir(&root).is_err() {
        return;
    }
    unpack(&root, &String::from_utf8_lossy(data));
    let rulesets = loreloom::campaign::system_rulesets();
    let _ = loreloom::campaign::load(&root, &[rulesets]);
}

/// A campaign's own ruleset folder (`ruleset.json`, `rulebook.md`) from
/// bytes in [`campaign`]'s format, loaded and checked.
pub fn ruleset(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    unpack(dir.path(), &String::from_utf8_lossy(data));
    if let Ok(ruleset) = loreloom::rules::Ruleset::load(dir.path()) {
        let _ = ruleset.problems();
    }
}

/// Writes `=== path` sections under `root`: paths of plain names only
/// (letters, digits, `._-/`, no `..`, at most 6 deep), at most 64 files.
fn unpack(root: &Path, text: &str) {
    for section in text.split("=== ").skip(1).take(64) {
        let (head, body) = section.split_once('\n').unwrap_or((section, ""));
        if let Some(link) = head.strip_prefix("link ") {
            if let Some((from, to)) = link.split_once(" -> ")
                && let Some(from) = plain(from)
                && to.len() < 64
                && !to.starts_with('/')
            {
                let from = root.join(from);
                if let Some(parent) = from.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                #[cfg(unix)]
                let _ = std::os::unix::fs::symlink(to, &from);
            }
            continue;
        }
        if let Some(rel) = plain(head) {
            let path = root.join(rel);
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(path, body);
        }
    }
}

fn plain(rel: &str) -> Option<&str> {
    let rel = rel.trim();
    let ok = !rel.is_empty()
        && rel.len() < 80
        && !rel.starts_with('/')
        && rel.split('/').count() <= 6
        && rel
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && rel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'));
    ok.then_some(rel)
}

/// A skill's standard output: each line an event of the skills protocol,
/// state patches deep-merged into the skill's state as the executor does.
pub fn skill_events(data: &[u8]) {
    use loreloom::skills::protocol::{Event, parse_line};
    let text = String::from_utf8_lossy(data);
    let mut state = serde_json::Map::new();
    for line in text.lines().take(1000) {
        if let Ok(Event::StatePatch { patch }) = parse_line(line.trim_end_matches('\r')) {
            loreloom::skills::merge::deep_merge(&mut state, &patch);
        }
    }
    let _ = serde_json::to_string(&state);
}

/// A model server's event stream, read line by line (each capped) into text
/// with stop strings applied, as both HTTP backends read it.
pub fn model_stream(data: &[u8]) {
    let stops = vec!["\n\n".to_owned(), "<|im_end|>".to_owned()];
    let mut events = EventStream::new("http://fuzz/v1", &stops, web_time::Instant::now());
    let mut lines = Lines::new(data);
    let mut tokens = 0usize;
    let mut on_token = |t: &str| {
        tokens += t.len();
        true
    };
    while let Ok(Some(line)) = lines.next_line() {
        match events.line(line, &mut on_token) {
            Ok(loreloom::llm::chat::Flow::More) => {}
            Ok(loreloom::llm::chat::Flow::Done) | Err(_) => break,
        }
    }
    let _ = events.finish(&mut on_token);
}

/// What a model answers, at every stage of a whole turn: the bytes, split at
/// `\u{1e}`, are the scripted model's replies in order (`stage\u{1f}text`
/// keeps a reply for one stage) (to the narrator,
/// extractors, NPCs, choices and each repair), checked by the stages'
/// contracts and handled by the turn runner as any model's answers are.
pub fn model_turn(data: &[u8]) {
    use loreloom::llm::scripted::Reply;
    use loreloom::session::turn::{Calibration, PlayerInput};
    struct Fixture {
        campaign: Arc<loreloom::campaign::Campaign>,
        data: tempfile::TempDir,
    }
    static FIXTURE: OnceLock<Option<Fixture>> = OnceLock::new();
    let Some(fixture) = FIXTURE.get_or_init(|| {
        let (c, _) = loreloom::campaign::load(
            &root().join("campaigns/minimal-lighthouse"),
            &[loreloom::campaign::system_rulesets()],
        );
        Some(Fixture {
            campaign: Arc::new(c?),
            data: tempfile::tempdir().ok()?,
        })
    }) else {
        return;
    };
    let text = String::from_utf8_lossy(data);
    let replies: Vec<Reply> = text
        .split('\u{1e}')
        .take(48)
        .map(|t| match t.split_once('\u{1f}') {
            Some((stage, text)) if stage.len() < 24 => Reply {
                stage: Some(stage.to_owned()),
                prompt: None,
                text: text.to_owned(),
            },
            _ => Reply {
                stage: None,
                prompt: None,
                text: t.to_owned(),
            },
        })
        .collect();
    let root = root();
    let Ok(prompts) = loreloom::llm::PromptRegistry::load(root.join("prompts")) else {
        return;
    };
    let gateway = loreloom::llm::Gateway::new(
        prompts,
        root.join("schemas"),
        loreloom::llm::ModelsConfig::default(),
        fixture.data.path(),
    );
    let backend = loreloom::llm::ScriptedBackend::new(loreloom::llm::Script { replies });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend);
    let Ok(state) = loreloom::session::play::opening(
        fixture.campaign.clone(),
        None,
        "small",
        "large",
        u64::from(data.first().copied().unwrap_or(0)),
        Calibration::default(),
    ) else {
        return;
    };
    let input = PlayerInput {
        text: "I climb the stair and ask the keeper what she saw".into(),
        whisper_to: None,
        action_id: "fuzz".into(),
        clarified: false,
        ruling: None,
    };
    let _ = loreloom::session::play::run_turn_with(
        &gateway,
        state,
        input,
        &mut |_| loreloom::session::skills::SkillRun::default(),
        |_| {},
    );
}

/// A session save's file from bytes: opened (its checks), its session state
/// read at the current scene, and a turn committed if it opens.
pub fn save(data: &[u8]) {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("save.db");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let Ok(store) = loreloom::store::Store::open(&path) else {
        return;
    };
    let _ = store.session();
    let _ = store.current_scene();
    let _ = store.branch();
    let _ = store.integrity_check();
}

/// An edited `graph.yaml` re-applied at the SEED gate as `author apply`
/// does it (read within its cap, parsed, diffed against the graph, applied
/// as one batch held to SEED's rules), on a fresh copy of a real project
/// at that gate. When it applies, the graph it leaves exports again, and
/// its own export re-applies as no change at all; then GROW runs on the
/// hand-edited graph (every model call failing, so only the engine's own
/// weave runs), and a grown graph becomes a story that is validated and
/// played.
pub fn graph_yaml(data: &[u8]) {
    use loreloom::author::{export, graph::Graph, grow_stage, project::Project, review};
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let db = dir.path().join("graph.db");
    if std::fs::copy(root().join("fuzz/base/seed-gate.graph.db"), &db).is_err() {
        return;
    }
    let file = dir.path().join("graph.yaml");
    if std::fs::write(&file, data).is_err() {
        return;
    }
    let Ok(mut project) = Project::open(dir.path()) else {
        return;
    };
    if project.apply_yaml(&file, "fuzzed").is_err() {
        return;
    }
    drop(project);
    let graph = Graph::open(&db).expect("the graph an edit left opens");
    let doc = review::document(&graph).expect("the graph an edit left exports");
    let again = review::changes(&graph, &doc).expect("its own export reads back");
    assert!(again.is_empty(), "its own export re-applies as {again:?}");
    drop(graph);

    let Ok(mut project) = Project::open(dir.path()) else {
        return;
    };
    if project.approve().is_err() {
        return;
    }
    drop(project);
    let Ok(mut graph) = Graph::open(&db) else {
        return;
    };
    let mut no_model = |stage: &str, _vars: serde_json::Value| {
        Err(loreloom::llm::LlmError::Backend {
            stage: stage.to_owned(),
            model_key: "fuzz".into(),
            reason: "no model while fuzzing".into(),
            transient: false,
        })
    };
    if grow_stage::run(&mut graph, "fuzzed", &mut no_model).is_err() {
        return;
    }
    let Ok(file) = export::story_file(&graph, "fuzzed") else {
        return;
    };
    let (compiled, _report) = loreloom::story::validate_file(file);
    if let Some(story) = compiled {
        play(Arc::new(story), data);
    }
}
