//! Crafted and corrupt session saves (#44): 50 of them, each a clear error or a save that plays.
//!
//! A real save (a campaign's opening and three turns) is copied and broken
//! 50 ways: cycles, overflowing and negative indices, triggers and views,
//! wrong types, missing tables and columns, broken references, a calibration
//! that no longer decodes, truncated and overwritten bytes, a WAL from another
//! save. Each copy is opened as a session opens it (the store's checks, the
//! session state at the current scene, a turn committed); every step must
//! return within the hang guard, never panic, and the cases that cannot be
//! played must end in an error naming the file. No session may start with
//! default lines and veils.
#![cfg(feature = "store")]

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::save::{played_save, turn};
use loreloom::session::save_files::load_campaign;
use loreloom::session::turn::Calibration;
use loreloom::store::Store;

/// What a case must come to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Must {
    /// An error naming the file, at open, at reading the state or at the commit.
    Refuse,
    /// Either: opening and playing, or a clear error.
    Either,
}

fn sql(path: &Path, statements: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(statements)
        .unwrap_or_else(|e| panic!("{statements}: {e}"));
}

fn bytes(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    edit(&mut b);
    std::fs::write(path, b).unwrap();
}

type Craft = Box<dyn Fn(&Path, &Path)>;

#[allow(clippy::too_many_lines, reason = "one line per crafted save")]
fn cases() -> Vec<(&'static str, Must, Craft)> {
    use Must::{Either, Refuse};
    let s = |q: &'static str| -> Craft { Box::new(move |p: &Path, _: &Path| sql(p, q)) };
    let b = |f: fn(&mut Vec<u8>)| -> Craft { Box::new(move |p: &Path, _: &Path| bytes(p, f)) };
    vec![
        (
            "trigger on turns",
            Refuse,
            s("CREATE TRIGGER t AFTER INSERT ON turns BEGIN DELETE FROM messages; END;"),
        ),
        (
            "trigger on messages",
            Refuse,
            s("CREATE TRIGGER t BEFORE INSERT ON messages BEGIN SELECT 1; END;"),
        ),
        (
            "trigger on the session row",
            Refuse,
            s(
                "CREATE TRIGGER keep AFTER UPDATE ON sessions BEGIN UPDATE sessions SET seed = 0; END;",
            ),
        ),
        (
            "a view",
            Refuse,
            s("CREATE VIEW v AS SELECT * FROM messages;"),
        ),
        (
            "scene cycle",
            Refuse,
            s(
                "UPDATE scenes SET parent_scene_id = (SELECT id FROM scenes ORDER BY scene_index DESC LIMIT 1) WHERE parent_scene_id IS NULL;",
            ),
        ),
        (
            "scene its own parent",
            Refuse,
            s(
                "UPDATE scenes SET parent_scene_id = id WHERE scene_index = (SELECT max(scene_index) FROM scenes);",
            ),
        ),
        (
            "pointer to no scene",
            Refuse,
            s("PRAGMA foreign_keys=OFF; UPDATE sessions SET current_scene_id = 'nowhere';"),
        ),
        (
            "scene index at i64::MAX",
            Refuse,
            s("UPDATE sessions SET scene_index = 9223372036854775807;"),
        ),
        (
            "turn index at i64::MAX",
            Refuse,
            s("UPDATE sessions SET turn_index = 9223372036854775807;"),
        ),
        (
            "negative scene index",
            Refuse,
            s("UPDATE sessions SET scene_index = -5;"),
        ),
        (
            "negative turn index on the scene",
            Refuse,
            s(
                "UPDATE scenes SET turn_index = -1 WHERE id = (SELECT current_scene_id FROM sessions);",
            ),
        ),
        (
            "calibration of the wrong shape",
            Refuse,
            s("UPDATE sessions SET calibration_json = '{\"lines\": 5}';"),
        ),
        (
            "calibration not JSON",
            Refuse,
            s("UPDATE sessions SET calibration_json = 'lines and veils';"),
        ),
        (
            "calibration a list",
            Refuse,
            s("UPDATE sessions SET calibration_json = '[1,2]';"),
        ),
        (
            "world not JSON",
            Refuse,
            s(
                "UPDATE scenes SET world_json = 'garbage' WHERE id = (SELECT current_scene_id FROM sessions);",
            ),
        ),
        (
            "world a list",
            Refuse,
            s(
                "UPDATE scenes SET world_json = '[]' WHERE id = (SELECT current_scene_id FROM sessions);",
            ),
        ),
        (
            "world nested 100,000 deep",
            Refuse,
            Box::new(|p: &Path, _: &Path| {
                let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
                rusqlite::Connection::open(p)
                    .unwrap()
                    .execute("UPDATE scenes SET world_json = ?1", [deep])
                    .unwrap();
            }),
        ),
        (
            "scene state not JSON",
            Refuse,
            s(
                "UPDATE scenes SET state_json = '{' WHERE id = (SELECT current_scene_id FROM sessions);",
            ),
        ),
        (
            "unknown scene kind",
            Refuse,
            s(
                "UPDATE scenes SET kind = 'teleport' WHERE id = (SELECT current_scene_id FROM sessions);",
            ),
        ),
        (
            "unknown message kind",
            Refuse,
            s(
                "UPDATE messages SET kind = 'whisper-from-beyond' WHERE rowid = (SELECT max(rowid) FROM messages);",
            ),
        ),
        (
            "negative message turn",
            Refuse,
            s("UPDATE messages SET turn_id = -3 WHERE rowid = (SELECT max(rowid) FROM messages);"),
        ),
        (
            "message sequence too big",
            Refuse,
            s(
                "UPDATE messages SET seq = 99999999999 WHERE rowid = (SELECT max(rowid) FROM messages);",
            ),
        ),
        (
            "text where a number goes",
            Refuse,
            s("UPDATE sessions SET scene_index = 'many';"),
        ),
        ("schema version 0", Refuse, s("PRAGMA user_version = 0;")),
        ("schema version 99", Refuse, s("PRAGMA user_version = 99;")),
        ("schema version -1", Refuse, s("PRAGMA user_version = -1;")),
        ("messages table dropped", Refuse, s("DROP TABLE messages;")),
        (
            "scenes renamed",
            Refuse,
            s("PRAGMA foreign_keys=OFF; ALTER TABLE scenes RENAME TO old_scenes;"),
        ),
        (
            "a column dropped",
            Refuse,
            s("ALTER TABLE actions DROP COLUMN action_text;"),
        ),
        (
            "an index dropped",
            Refuse,
            s("DROP INDEX idx_observations_character;"),
        ),
        (
            "no session row",
            Refuse,
            s("PRAGMA foreign_keys=OFF; DELETE FROM sessions;"),
        ),
        (
            "message of a missing scene",
            Refuse,
            s(
                "PRAGMA foreign_keys=OFF; UPDATE messages SET scene_id = 'gone' WHERE rowid = (SELECT min(rowid) FROM messages);",
            ),
        ),
        (
            "scene of a missing parent",
            Refuse,
            s(
                "PRAGMA foreign_keys=OFF; UPDATE scenes SET parent_scene_id = 'gone' WHERE scene_index = 1;",
            ),
        ),
        (
            "campaign path elsewhere",
            Refuse,
            s("UPDATE sessions SET campaign_path = '/nonexistent/campaign';"),
        ),
        (
            "prompt pins not JSON",
            Either,
            s("UPDATE sessions SET prompt_versions_json = 'v9';"),
        ),
        (
            "seed as text",
            Refuse,
            s("UPDATE sessions SET seed = 'forty-two';"),
        ),
        ("an extra table", Either, s("CREATE TABLE notes (x);")),
        (
            "an extra index",
            Either,
            s("CREATE INDEX extra ON messages(content);"),
        ),
        (
            "16 MiB of text in a message",
            Either,
            Box::new(|p: &Path, _: &Path| {
                rusqlite::Connection::open(p).unwrap().execute("UPDATE messages SET content = ?1 WHERE rowid = (SELECT max(rowid) FROM messages)", ["x".repeat(16 << 20)]).unwrap();
            }),
        ),
        ("empty file", Refuse, b(Vec::clear)),
        ("truncated to half", Refuse, b(|v| v.truncate(v.len() / 2))),
        ("truncated to 100 bytes", Refuse, b(|v| v.truncate(100))),
        (
            "header overwritten",
            Refuse,
            b(|v| v[..16].copy_from_slice(b"not sqlite at al")),
        ),
        (
            "page size byte wrong",
            Refuse,
            b(|v| {
                v[16] = 3;
                v[17] = 0;
            }),
        ),
        (
            "a page zeroed",
            Refuse,
            b(|v| {
                let n = v.len();
                let at = (n / 4096 / 2) * 4096;
                v[at..at + 4096].fill(0);
            }),
        ),
        (
            "a page of noise",
            Refuse,
            b(|v| {
                let n = v.len();
                let at = (n / 4096 / 2) * 4096;
                for (i, x) in v[at..at + 4096].iter_mut().enumerate() {
                    *x = u8::try_from(i * 131 % 251).unwrap();
                }
            }),
        ),
        (
            "the last page cut",
            Refuse,
            b(|v| v.truncate(v.len() - 4096)),
        ),
        (
            "a WAL from another save",
            Either,
            Box::new(|p: &Path, other: &Path| {
                // The other save's unsaved pages, beside this one.
                let mut wal = other.as_os_str().to_owned();
                wal.push("-wal");
                let mut to = p.as_os_str().to_owned();
                to.push("-wal");
                if Path::new(&wal).exists() {
                    std::fs::copy(&wal, &to).unwrap();
                } else {
                    std::fs::write(&to, b"").unwrap();
                }
            }),
        ),
        (
            "a directory, not a file",
            Refuse,
            Box::new(|p: &Path, _: &Path| {
                std::fs::remove_file(p).unwrap();
                std::fs::create_dir(p).unwrap();
            }),
        ),
        (
            "a link to /dev/zero",
            Refuse,
            Box::new(|p: &Path, _: &Path| {
                std::fs::remove_file(p).unwrap();
                std::os::unix::fs::symlink("/dev/zero", p).unwrap();
            }),
        ),
    ]
}

/// A save of the minimal campaign with three turns, checkpointed into one file.
fn base(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let calibration = Calibration {
        tone: "quiet".into(),
        difficulty: "normal".into(),
        lines: vec!["harm to children".into()],
        veils: vec!["drowning".into()],
        npcs_per_turn: None,
    };
    played_save(&path, 7, calibration, 3);
    path
}

/// Opens the save as a session does and plays one turn onto it; the first
/// error, or `Ok` with the calibration the session would play with.
fn play(path: &Path) -> Result<Calibration, String> {
    let mut store = Store::open(path).map_err(|e| e.to_string())?;
    let info = store.session().map_err(|e| e.to_string())?;
    let campaign = load_campaign(&info.campaign_path).map_err(|e| e.to_string())?;
    let state = loreloom::session::save_rows::state(&store, Arc::clone(&campaign))
        .map_err(|e| e.to_string())?;
    store.branch().map_err(|e| e.to_string())?;
    store.messages().map_err(|e| e.to_string())?;
    let t = turn(&store, "crafted", 4);
    store.commit_turn(&t).map_err(|e| e.to_string())?;
    Ok(state.calibration)
}

#[test]
fn fifty_crafted_saves_each_end_in_a_clear_error_or_play_and_none_forgets_lines_and_veils() {
    let dir = tempfile::tempdir().unwrap();
    let original = base(dir.path(), "original.db");
    let other = base(dir.path(), "other.db");
    // The other save keeps a WAL of its own for the foreign-WAL case.
    {
        let conn = rusqlite::Connection::open(&other).unwrap();
        conn.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
        conn.execute("UPDATE sessions SET play_minutes = play_minutes + 1", [])
            .unwrap();
        std::mem::forget(conn); // no checkpoint at close: the WAL stays
    }
    let expected = play(
        &std::fs::read(&original)
            .map(|b| {
                let p = dir.path().join("control.db");
                std::fs::write(&p, b).unwrap();
                p
            })
            .unwrap(),
    )
    .expect("the uncrafted save plays");
    assert_eq!(expected.lines, vec!["harm to children".to_owned()]);

    let cases = cases();
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let mut failures = Vec::new();
    let mut table = String::new();
    for (i, (name, must, craft)) in cases.into_iter().enumerate() {
        let path = dir.path().join(format!("crafted-{i:02}.db"));
        std::fs::copy(&original, &path).unwrap();
        craft(&path, &other);
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(std::panic::catch_unwind(|| play(&p)).map_err(|_| ()));
        });
        let answer = rx.recv_timeout(Duration::from_secs(20));
        let took = started.elapsed();
        let line = match &answer {
            Err(_) => {
                failures.push(format!("{name}: no answer in 20 s (a hang)"));
                "HANG".to_owned()
            }
            Ok(Err(())) => {
                failures.push(format!("{name}: panicked"));
                "PANIC".to_owned()
            }
            Ok(Ok(Err(e))) => {
                if !e.contains(&format!("crafted-{i:02}.db")) && !e.contains("campaign") {
                    failures.push(format!("{name}: the error does not name the file: {e}"));
                }
                format!("error: {e:.150}")
            }
            Ok(Ok(Ok(calibration))) => {
                if must == Must::Refuse {
                    failures.push(format!("{name}: played, but should have been refused"));
                }
                if *calibration != expected {
                    failures.push(format!(
                        "{name}: played with other lines and veils: {calibration:?}"
                    ));
                }
                "played".to_owned()
            }
        };
        let _ = writeln!(
            table,
            "{name:38} {:6.0} ms  {line}",
            took.as_secs_f64() * 1000.0
        );
    }
    println!("{table}");
    assert!(failures.is_empty(), "{table}\n{}", failures.join("\n"));
}
