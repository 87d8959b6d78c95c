//! What the model reads comes from `prompts/`, the campaign and the player: no prose from Rust.
//!
//! Every prompt a played session turn and an authoring stage send is read back
//! (the call records; what the scripted model was asked), and no run of six
//! words of it may be a run of a string literal in `src/`. Prose that fills a
//! prompt belongs in `prompts/` (ARCHITECTURE.md); a literal passed in as a
//! template variable is how it escaped before (`author/stages.rs` `task()`).

#![cfg(feature = "store")]

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use loreloom::author::discuss::Unattended;
use loreloom::author::project::{Project, Scope};
use loreloom::author::stages;
use loreloom::llm::{Script, ScriptedBackend};
use loreloom::session::controller::{Controller, Step};
use loreloom::session::play::run_turn;
use serde_json::json;

/// The run length: long enough that ordinary phrases ("the player's
/// character", "at the start of") do not count, short enough for a clause.
const RUN: usize = 6;

/// The lowercase words of `text`, in runs of [`RUN`].
fn runs(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.windows(RUN).map(|w| w.join(" ")).collect()
}

/// The string literals of Rust `code` (normal, raw and byte strings; char
/// literals and lifetimes skipped), outside comments.
fn literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            'r' if matches!(chars.get(i + 1), Some('"' | '#'))
                && (i == 0 || !chars[i - 1].is_alphanumeric()) =>
            {
                let mut hashes = 0;
                let mut j = i + 1;
                while chars.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if chars.get(j) != Some(&'"') {
                    i += 1;
                    continue;
                }
                let start = j + 1;
                let mut end = start;
                while end < chars.len() {
                    if chars[end] == '"' && (1..=hashes).all(|h| chars.get(end + h) == Some(&'#')) {
                        break;
                    }
                    end += 1;
                }
                out.push(chars[start..end.min(chars.len())].iter().collect());
                i = end + 1 + hashes;
            }
            '"' => {
                let mut text = String::new();
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' {
                    if chars[j] == '\\' {
                        j += 1;
                        text.push(match chars.get(j) {
                            Some('n') => '\n',
                            Some(&c) => c,
                            None => break,
                        });
                    } else {
                        text.push(chars[j]);
                    }
                    j += 1;
                }
                out.push(text);
                i = j + 1;
            }
            // A char literal ('"', '\'', 'x'); a lifetime ('a) has no closing quote.
            '\'' if chars.get(i + 1) == Some(&'\\') => i += 4,
            '\'' if chars.get(i + 2) == Some(&'\'') => i += 3,
            _ => i += 1,
        }
    }
    out
}

/// The runs of every string literal in `src/`, outside `#[cfg(test)]` modules.
fn literal_runs() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("\n#[cfg(test)]\nmod tests").next().unwrap_or("");
                for literal in literals(code) {
                    out.extend(runs(&literal));
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out
}

/// Every message of every prompt two played turns send, in full and in compact form.
fn session_prompts(dir: &Path) -> Vec<String> {
    let mut prompts = Vec::new();
    for (n, compact) in [(1_u64, false), (2, true)] {
        let save = common::play::new_save(dir, "drowned-reach", None, n);
        let gateway = if compact {
            common::play::compact_gateway(dir)
        } else {
            common::play::gateway(dir)
        };
        let mut ctl = Controller::open_with(&save, None).unwrap();
        for turn in 1..=2 {
            common::play::script(&gateway, common::scripted::turn_replies(turn));
            let Step::Run(input) = ctl.handle("I step aboard and ask Hesper about the lanterns.")
            else {
                panic!("the move did not run a turn")
            };
            let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
            for record in &result.records {
                for attempt in &record.attempts {
                    prompts.extend(attempt.messages.iter().map(|m| m.content.clone()));
                }
            }
            ctl.finish(&input, Ok(result));
        }
    }
    prompts
}

/// Every message DREAM's discussion, summary and decision send.
fn authoring_prompts(dir: &Path) -> Vec<String> {
    use common::scripted::reply;
    let gateway = common::play::gateway(dir);
    let backend = ScriptedBackend::new(Script {
        replies: vec![
            reply(
                "author/discuss",
                "A keeper who trades years of her life for storms.",
            ),
            reply(
                "author/summarize",
                "Folk horror on a lighthouse island; quiet dread.",
            ),
            reply(
                "author/dream",
                json!({"genre": "folk horror", "tone": ["quiet"], "themes": ["bargains"],
                       "audience": "adults", "constraints": [], "content_notes": [],
                       "branches": "moderate"})
                .to_string(),
            ),
        ],
    });
    gateway.register_script("small", backend.clone());
    let mut project = Project::create(
        &dir.join("project"),
        "a lighthouse keeper who bargains with the sea",
        Scope::Micro,
    )
    .unwrap();
    stages::dream(&mut project, &gateway, "small", &mut Unattended).unwrap();
    backend
        .heard()
        .into_iter()
        .flatten()
        .map(|m| m.content)
        .collect()
}

#[test]
fn no_prompt_the_game_or_the_pipeline_sends_carries_prose_written_in_rust() {
    let dir = tempfile::tempdir().unwrap();
    let rust = literal_runs();
    let mut prompts = session_prompts(dir.path());
    let authoring = authoring_prompts(dir.path());
    assert!(
        authoring.len() >= 6,
        "DREAM asked {} messages",
        authoring.len()
    );
    prompts.extend(authoring.iter().cloned());
    let found: BTreeSet<String> = prompts
        .iter()
        .flat_map(|p| runs(p))
        .filter(|r| rust.contains(r))
        .collect();
    assert_eq!(found, BTreeSet::new(), "prompt prose that lives in Rust");

    // The check sees what it looks for: the stage task DREAM's discussion
    // once took from a Rust literal (`author/stages.rs` `task()`) is in its
    // prompt, and had it stayed a literal, its runs would have been found.
    let escaped = literals(
        r#"fn task() -> &'static str { "the story's genre, tone, themes, audience, constraints, content notes and how much it branches" }"#,
    );
    let would_have: Vec<String> = escaped.iter().flat_map(|l| runs(l)).collect();
    assert!(
        authoring
            .iter()
            .flat_map(|p| runs(p))
            .any(|r| would_have.contains(&r)),
        "DREAM's task is in its prompt"
    );
    assert_eq!(
        literals(
            "let a = 'x'; let q = '\"'; let s = \"one \\\"two\\\"\"; let r = r#\"three \"four\"\"#;"
        ),
        ["one \"two\"", "three \"four\""]
    );
}
