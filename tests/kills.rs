//! Kills at random moments (#44): SIGKILL a child mid-write; nothing acknowledged lost or torn.
//!
//! A test without the libtest harness: run plainly, `main` is the parent; with
//! `LORELOOM_KILL_MODE` set (by the parent) it is the child. The child writes
//! a marker line to its stdout (a pipe the parent reads) before each write
//! begins (`begin N`) and after it returns (`acked N`). The parent waits for a
//! random `begin`, sleeps a random number of microseconds (up to about one
//! write's length) and sends SIGKILL; a kill counts as mid-write when the
//! last marker the child wrote was a `begin`. Then it opens what was written:
//! - session commits: `PRAGMA integrity_check` is ok, every turn is whole
//!   (scene, messages, action, observation, event, memory), every
//!   acknowledged turn is there and no turn that never began;
//! - story slots, `skills.json`, settings (`files::write_atomically`): the
//!   file reads back whole as one of the versions written, never torn,
//!   never empty.
//!
//! `LORELOOM_KILLS` sets the kills per harness (CI: 50 for commits and 30
//! for each file; `tools/kills.sh` runs 1,000 and 100).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use common::save::{count, new_save, turn};
use loreloom::store::Store;
use rand::{Rng, SeedableRng};

/// The child: write in a loop, with markers, until killed.
fn child(mode: &str, path: &Path) {
    let mut out = std::io::stdout().lock();
    let mut mark = |what: &str, n: u64| {
        let _ = writeln!(out, "{what} {n}");
        let _ = out.flush();
    };
    match mode {
        "commit" => {
            let mut store = Store::open(path).unwrap();
            let start = u64::try_from(store.session().unwrap().turn_index).unwrap();
            for n in start + 1.. {
                let t = turn(&store, &format!("turn-{n}"), n);
                mark("begin", n);
                store.commit_turn(&t).unwrap();
                mark("acked", n);
            }
        }
        "slot" => {
            let slots = loreloom::story::slots::SlotStore::new(path);
            for n in 1.. {
                let doc = slot_doc(n);
                mark("begin", n);
                slots
                    .write("slot-1", &format!("version {n}"), &doc)
                    .unwrap();
                mark("acked", n);
            }
        }
        "switches" => {
            // `LORELOOM_DATA_DIR` is the folder: `skills.json` is written there.
            for n in 1u64.. {
                mark("begin", n);
                loreloom::skills::config::switch(&format!("skill-{}", n % 7), n % 2 == 0).unwrap();
                mark("acked", n);
            }
        }
        "settings" => {
            for n in 1.. {
                mark("begin", n);
                loreloom::files::write_atomically(path, settings_text(n).as_bytes()).unwrap();
                mark("acked", n);
            }
        }
        "rollback" => {
            use loreloom::author::ontology::Stage;
            use loreloom::author::project::Project;
            let mut project = Project::open(path).unwrap();
            for n in 1.. {
                // DREAM's snapshot taken, its gate changed, then rolled back.
                mark("begin", n);
                project = project.begin(Stage::Dream).unwrap();
                project.finish(Stage::Dream).unwrap();
                project = project.rollback(Stage::Dream).unwrap();
                mark("acked", n);
            }
        }
        "migrate" => {
            mark("begin", 1);
            drop(Store::open(path).unwrap());
            mark("acked", 1);
            std::thread::sleep(Duration::from_mins(10));
        }
        other => panic!("unknown mode {other}"),
    }
}

/// A story slot whose size changes with `n` (so a torn write would show).
fn slot_doc(n: u64) -> loreloom::story::SaveDocument {
    let steps = usize::try_from(n % 40).unwrap();
    serde_json::from_value(serde_json::json!({
        "format": "loreloom-save", "version": 1, "story": "kills", "story_title": "Kills",
        "passage": format!("p{n}"), "codewords": [], "visited": ["p0"],
        "history": (0..steps).map(|i| serde_json::json!({"from": format!("p{i}"), "choice": "x".repeat(i * 10), "to": format!("p{}", i + 1), "first_visit": true})).collect::<Vec<_>>()
    }))
    .unwrap()
}

fn settings_text(n: u64) -> String {
    format!(
        "(version: {n}, text_speed: {}, notes: \"{}\")",
        n % 5,
        "y".repeat(usize::try_from(n % 300).unwrap())
    )
}

/// A running child and its markers, read as they come.
struct Running {
    child: Child,
    markers: Receiver<String>,
}

fn spawn(mode: &str, path: &Path, data_dir: &Path) -> Running {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env("LORELOOM_KILL_MODE", mode)
        .env("LORELOOM_KILL_PATH", path)
        .env("LORELOOM_DATA_DIR", data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, markers) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Running { child, markers }
}

/// What one kill came to: the last turn acknowledged and begun, and whether
/// the kill landed between a `begin` and its `acked`.
struct Killed {
    acked: u64,
    begun: u64,
    mid: bool,
}

/// Waits for the `skip`-th `begin`, then kills after `micros` µs.
fn kill(mut run: Running, skip: usize, micros: u64) -> Killed {
    let (mut acked, mut begun, mut seen) = (0, 0, 0);
    let mut last = String::new();
    let note = |line: &str, acked: &mut u64, begun: &mut u64| {
        let (what, n) = line.split_once(' ').unwrap_or((line, "0"));
        let n: u64 = n.parse().unwrap_or(0);
        match what {
            "begin" => *begun = n,
            "acked" => *acked = n,
            _ => {}
        }
    };
    while seen <= skip {
        let Ok(line) = run.markers.recv_timeout(Duration::from_mins(1)) else {
            panic!("the child stopped writing markers");
        };
        note(&line, &mut acked, &mut begun);
        if line.starts_with("begin") {
            seen += 1;
        }
        last = line;
    }
    spin(Duration::from_micros(micros));
    run.child.kill().unwrap(); // SIGKILL
    run.child.wait().unwrap();
    // What the child said before it died is still in the pipe.
    while let Ok(line) = run.markers.recv_timeout(Duration::from_secs(5)) {
        note(&line, &mut acked, &mut begun);
        last = line;
    }
    Killed {
        acked,
        begun,
        mid: last.starts_with("begin"),
    }
}

/// A precise short wait (`sleep` overshoots microseconds).
fn spin(wait: Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < wait {
        std::hint::spin_loop();
    }
}

fn kills(default: usize) -> usize {
    std::env::var("LORELOOM_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .map_or(default, |n: usize| n.max(1))
}

/// Session commits: `rounds` kills, each checked.
fn commits(dir: &Path, rounds: usize, rng: &mut impl Rng) -> (usize, u64) {
    let path = dir.join("kills.db");
    drop(new_save(&path));
    let mut mid = 0;
    let mut lost_check = 0;
    for round in 0..rounds {
        let run = spawn("commit", &path, dir);
        let k = kill(run, rng.random_range(0..3), rng.random_range(0..4000));
        mid += usize::from(k.mid);
        let store = Store::open(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(store.integrity_check().unwrap(), "ok", "round {round}");
        let turns = count(&store, "SELECT count(*) FROM turns");
        let s = store.session().unwrap();
        assert_eq!(
            count(&store, "SELECT count(*) FROM scenes"),
            turns + 1,
            "round {round}"
        );
        assert_eq!(
            count(&store, "SELECT count(*) FROM messages"),
            1 + 3 * turns,
            "round {round}"
        );
        for table in ["actions", "observations", "turn_events", "memories"] {
            assert_eq!(
                count(&store, &format!("SELECT count(*) FROM {table}")),
                turns,
                "round {round}: {table}"
            );
        }
        assert_eq!(
            (s.turn_index, s.scene_index),
            (turns, turns),
            "round {round}"
        );
        let turns = u64::try_from(turns).unwrap();
        assert!(
            turns >= k.acked,
            "round {round}: turn {} was acknowledged and is gone",
            k.acked
        );
        assert!(
            turns <= k.begun.max(k.acked),
            "round {round}: a turn that never began"
        );
        lost_check = turns;
    }
    (mid, lost_check)
}

/// Migrations interrupted: a save of schema 1, opened (so migrated) and
/// killed at a random moment; it opens afterwards and its backup is there.
fn migrations(dir: &Path, rounds: usize, rng: &mut impl Rng) -> usize {
    let today = dir.join("today.db");
    drop(new_save(&today));
    {
        let mut store = Store::open(&today).unwrap();
        for n in 1..=2 {
            let t = turn(&store, &format!("m{n}"), n);
            store.commit_turn(&t).unwrap();
        }
    }
    rusqlite::Connection::open(&today)
        .unwrap()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let old = dir.join("v1.db");
    common::save::at_version(&today, &old, 1);
    let path = dir.join("save.db");
    let mut mid = 0;
    for round in 0..rounds {
        for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("save.db") {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        std::fs::copy(&old, &path).unwrap();
        let run = spawn("migrate", &path, dir);
        let k = kill(run, 0, rng.random_range(0..60_000));
        mid += usize::from(k.mid);
        let store = Store::open(&path).unwrap_or_else(|e| panic!("migration round {round}: {e}"));
        assert_eq!(
            count(&store, "SELECT count(*) FROM turns"),
            2,
            "migration round {round}"
        );
        assert_eq!(
            count(&store, "PRAGMA user_version"),
            loreloom::store::SCHEMA_VERSION
        );
        let backup = loreloom::store::migration_backup(&path, 1);
        assert!(
            backup.is_file(),
            "migration round {round}: no backup of the schema-1 save"
        );
        let kept = rusqlite::Connection::open(&backup).unwrap();
        let (v, turns): (i64, i64) = kept
            .query_row(
                "SELECT (SELECT user_version FROM pragma_user_version), count(*) FROM turns",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            (v, turns),
            (1, 2),
            "migration round {round}: the backup is the save as it was"
        );
    }
    mid
}

/// Author rollback of DREAM killed at random moments: `graph.db` always
/// opens, and a finished rollback is byte-identical to the snapshot.
fn rollbacks(path: &Path, rounds: usize, rng: &mut impl Rng) -> usize {
    use loreloom::author::{Gate, Project, Stage};
    let mut mid = 0;
    for round in 0..rounds {
        let run = spawn("rollback", path, path);
        let k = kill(run, rng.random_range(0..3), rng.random_range(0..20_000));
        mid += usize::from(k.mid);
        let project = Project::open(path)
            .unwrap_or_else(|e| panic!("rollback round {round}: graph.db does not open: {e}"));
        let snapshot = path.join("snapshots/pre-dream.db");
        if !k.mid {
            assert_eq!(
                std::fs::read(path.join("graph.db")).unwrap(),
                std::fs::read(&snapshot).unwrap(),
                "rollback round {round}: not byte-identical"
            );
        }
        // Whatever the kill interrupted, the project goes on: DREAM is
        // pending (rolled back) or waiting (run); roll back to go on.
        if project
            .gate(Stage::Dream)
            .map_or(true, |g| g != Gate::Pending)
        {
            project
                .rollback(Stage::Dream)
                .unwrap_or_else(|e| panic!("rollback round {round}: {e}"));
        }
    }
    mid
}

/// A file written atomically: every kill leaves one whole version.
fn files(dir: &Path, mode: &str, rounds: usize, rng: &mut impl Rng) -> usize {
    let (path, read): (PathBuf, Box<dyn Fn(&Path) -> Result<u64, String>>) = match mode {
        "slot" => (
            dir.to_path_buf(),
            Box::new(|d: &Path| {
                let slots = loreloom::story::slots::SlotStore::new(d);
                let file = slots.read("kills", "slot-1").map_err(|e| e.to_string())?;
                let n: u64 = file
                    .save
                    .passage
                    .trim_start_matches('p')
                    .parse()
                    .map_err(|e| format!("{e}"))?;
                if file.save != slot_doc(n) {
                    return Err(format!("version {n} is not as written"));
                }
                Ok(n)
            }),
        ),
        "switches" => (
            dir.to_path_buf(),
            Box::new(|d: &Path| {
                let text =
                    std::fs::read_to_string(d.join("skills.json")).map_err(|e| e.to_string())?;
                let v: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| format!("{e}: {text:?}"))?;
                v["off"]
                    .as_array()
                    .map(|a| a.len() as u64)
                    .ok_or_else(|| format!("no `off` list: {text}"))
            }),
        ),
        _ => (
            dir.join("settings.ron"),
            Box::new(|p: &Path| {
                let text = std::fs::read_to_string(p).map_err(|e| e.to_string())?;
                let n: u64 = text
                    .trim_start_matches("(version: ")
                    .split(',')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("torn: {text:?}"))?;
                if text == settings_text(n) {
                    Ok(n)
                } else {
                    Err(format!("torn: {text:?}"))
                }
            }),
        ),
    };
    let mut mid = 0;
    for round in 0..rounds {
        let run = spawn(mode, &path, dir);
        let k = kill(run, rng.random_range(1..4), rng.random_range(0..300));
        mid += usize::from(k.mid);
        match read(&path) {
            Ok(_) => {}
            Err(e) => panic!("{mode} round {round}: {e}"),
        }
        // No temporary file is left behind to grow the folder without end.
        let leftovers = std::fs::read_dir(if mode == "slot" {
            dir.join("saves/kills")
        } else {
            dir.to_path_buf()
        })
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .count();
        assert!(
            leftovers <= round + 1,
            "{mode}: {leftovers} temporary files after {} kills",
            round + 1
        );
    }
    mid
}

fn main() {
    if let Ok(mode) = std::env::var("LORELOOM_KILL_MODE") {
        let path = std::env::var_os("LORELOOM_KILL_PATH").unwrap();
        child(&mode, Path::new(&path));
        return;
    }
    let seed: u64 = std::env::var("LORELOOM_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(44);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let rounds = kills(50);
    let (mid, turns) = commits(&dir.path().join("commits").tap_mkdir(), rounds, &mut rng);
    println!(
        "session commits: {rounds} SIGKILLs, {mid} between a turn's begin and its acknowledgement; 0 integrity failures, 0 partial turns, 0 acknowledged turns lost ({turns} turns in the save)"
    );
    assert!(
        mid * 2 >= rounds,
        "only {mid} of {rounds} kills landed mid-commit"
    );
    let file_rounds = (rounds * 3 / 5).max(1);
    let mid = migrations(
        &dir.path().join("migrate").tap_mkdir(),
        file_rounds,
        &mut rng,
    );
    println!(
        "migrations from schema 1: {file_rounds} SIGKILLs, {mid} mid-migration; each save opens afterwards, migrated, with its schema-1 backup"
    );
    let project = dir.path().join("rollback");
    drop(
        loreloom::author::project::Project::create(
            &project,
            "a lighthouse keeper's bargain",
            loreloom::author::project::Scope::Micro,
        )
        .unwrap(),
    );
    let mid = rollbacks(&project, file_rounds, &mut rng);
    println!(
        "author rollback: {file_rounds} SIGKILLs, {mid} mid-rollback; 0 graph.db that would not open, byte-identical after every finished rollback"
    );
    for mode in ["slot", "switches", "settings"] {
        let mid = files(
            &dir.path().join(mode).tap_mkdir(),
            mode,
            file_rounds,
            &mut rng,
        );
        println!(
            "{mode}: {file_rounds} SIGKILLs, {mid} mid-write; 0 torn, empty or unreadable files"
        );
    }
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}

impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}
