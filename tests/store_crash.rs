//! Crash safety of the save: a child commits turns and is killed; every reopen is whole.
//!
//! Crash safety of the save: a child process commits turns as fast as it can and is killed with
//! SIGKILL at varied moments; every reopen must pass `PRAGMA integrity_check` and hold only whole
//! turns.
//!
//! A test without the libtest harness: run plainly, `main` is the parent; run
//! with `LORELOOM_CRASH_SAVE` set (by the parent), it is the child.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::save::{count, new_save, turn};
use loreloom::store::Store;

/// The child: commit turns until killed.
fn child(path: &Path) {
    let mut store = Store::open(path).unwrap();
    for n in 1.. {
        let t = turn(&store, &format!("{}-{n}", std::process::id()), n);
        store.commit_turn(&t).unwrap();
    }
}

fn main() {
    if let Some(path) = std::env::var_os("LORELOOM_CRASH_SAVE") {
        child(Path::new(&path));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    drop(new_save(&path));
    let exe = std::env::current_exe().unwrap();
    let mut total_turns = 0;
    for (round, delay_ms) in [35u64, 60, 90, 20, 130, 75, 45, 110]
        .into_iter()
        .enumerate()
    {
        let mut child = Command::new(&exe)
            .env("LORELOOM_CRASH_SAVE", &path)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let store = Store::open(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(store.integrity_check().unwrap(), "ok", "round {round}");
        let turns = count(&store, "SELECT count(*) FROM turns");
        let s = store.session().unwrap();
        // Whole turns only: every turn has its scene, its 3 messages, its action,
        // observation and event; the session points at the last one.
        assert_eq!(count(&store, "SELECT count(*) FROM scenes"), turns + 1);
        assert_eq!(
            count(&store, "SELECT count(*) FROM messages"),
            1 + 3 * turns
        );
        assert_eq!(count(&store, "SELECT count(*) FROM actions"), turns);
        assert_eq!(count(&store, "SELECT count(*) FROM observations"), turns);
        assert_eq!(count(&store, "SELECT count(*) FROM turn_events"), turns);
        assert_eq!(count(&store, "SELECT count(*) FROM memories"), turns);
        assert_eq!(s.turn_index, turns);
        assert_eq!(s.scene_index, turns);
        assert!(turns >= total_turns, "nothing committed is lost");
        eprintln!("round {round}: killed after {delay_ms} ms; {turns} whole turns in the save");
        total_turns = turns;
    }
    assert!(
        total_turns > 0,
        "the child committed turns before being killed"
    );
    println!("crash safety under SIGKILL: 8 rounds, {total_turns} whole turns, integrity ok");
}
