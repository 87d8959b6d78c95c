//! Shared helpers for integration tests: fixture and bundled-story paths, running the binary.

#![allow(dead_code, reason = "each test binary uses a different subset")]

pub mod contract;
#[cfg(feature = "store")]
pub mod play;
#[cfg(feature = "store")]
pub mod save;
pub mod scripted;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A questfoundry-runtime export from `../shared/fixtures/`.
/// Copies a folder and everything in it (a campaign or prompts to change in a test).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/questfoundry-runtime")
        .join(name);
    assert!(
        path.exists(),
        "fixture {} is missing: the tests expect the shared/ folder beside the checkout",
        path.display()
    );
    path
}

/// A fixture parsed as JSON, to alter for a test.
pub fn fixture_json(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture is readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

/// The bundled default story package.
pub fn default_story() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(loreloom::cli::DEFAULT_STORY)
}

/// Run `loreloom` with arguments and optional stdin.
pub fn loreloom(args: &[&str], stdin: Option<&str>) -> Output {
    loreloom_env(args, stdin, &[])
}

/// A data dir of its own for a test (approvals, settings), whose `models/`
/// is the player's (so the installed models are found).
pub fn own_data_dir(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("the data dir is made");
    let models = loreloom::files::data_dir().join("models");
    if models.exists() {
        std::os::unix::fs::symlink(&models, data.join("models")).expect("models are linked");
    }
    data
}

/// Approves every skill in a campaign's `skills` folder through `loreloom
/// skills approve --yes`, as a player would, in the data dir `data`.
pub fn approve_skills(skills: &Path, data: &Path) {
    for entry in std::fs::read_dir(skills).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let out = loreloom_env(
            &[
                "skills",
                "approve",
                &name,
                "--yes",
                "--dir",
                skills.to_str().unwrap(),
            ],
            None,
            &[("LORELOOM_DATA_DIR", data)],
        );
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
}

/// Run `loreloom` with arguments, optional stdin and extra environment.
pub fn loreloom_env(args: &[&str], stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loreloom"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, *v)))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the loreloom binary runs");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    pipe.write_all(stdin.unwrap_or("").as_bytes())
        .expect("stdin accepts input");
    drop(pipe);
    child.wait_with_output().expect("loreloom finishes")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Make a machine-specific absolute path in output stable for snapshots.
pub fn redact(text: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared");
    text.replace(&shared.display().to_string(), "<shared>")
        .replace(&root.display().to_string(), "<repo>")
}

/// `loreloom session new` of the Drowned Reach into `save` with `seed`, through
/// the real binary (its output); panics with its stderr when it fails.
pub fn new_drowned_reach_save(save: &Path, seed: u64) -> Output {
    let campaign = Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach");
    new_session_save(&campaign, save, seed)
}

/// `loreloom session play SAVE --script MOVES --model-script REPLIES` (its
/// output, whatever it is).
pub fn session_play(save: &Path, moves: &Path, replies: &Path) -> Output {
    session_play_env(save, moves, replies, &[])
}

/// [`session_play`] with extra environment (a data dir of the test's own).
pub fn session_play_env(
    save: &Path,
    moves: &Path,
    replies: &Path,
    env: &[(&str, &Path)],
) -> Output {
    loreloom_env(
        &[
            "session",
            "play",
            save.to_str().unwrap(),
            "--script",
            moves.to_str().unwrap(),
            "--model-script",
            replies.to_str().unwrap(),
        ],
        None,
        env,
    )
}

/// `loreloom session new` of `campaign` into `save` with `seed`.
pub fn new_session_save(campaign: &Path, save: &Path, seed: u64) -> Output {
    let seed = seed.to_string();
    let out = loreloom(
        &[
            "session",
            "new",
            campaign.to_str().unwrap(),
            "--save",
            save.to_str().unwrap(),
            "--seed",
            &seed,
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// A gateway over the shipped prompts and contracts whose `small` and `large`
/// keys answer from one scripted backend (returned, to read its prompts back).
pub fn scripted_gateway(
    data: &Path,
    replies: Vec<loreloom::llm::scripted::Reply>,
) -> (loreloom::llm::Gateway, loreloom::llm::ScriptedBackend) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let prompts =
        loreloom::llm::PromptRegistry::load(root.join("prompts")).expect("shipped prompts load");
    let gateway = loreloom::llm::Gateway::new(
        prompts,
        root.join("schemas"),
        loreloom::llm::ModelsConfig::default(),
        data,
    );
    let backend = loreloom::llm::ScriptedBackend::new(loreloom::llm::Script { replies });
    gateway.register_script("small", backend.clone());
    gateway.register_script("large", backend.clone());
    (gateway, backend)
}
