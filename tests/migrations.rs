//! Saves of every past schema (#44): each opens, is backed up, migrates, plays a turn and replays.
//!
//! Two sets: saves made by the game as it was at each version (old commits'
//! builds: `tests/fixtures/saves/`, see its README), and saves made from the
//! schema files of those versions (`src/store/schema*.sql`, each unchanged
//! since it was written) holding the rows of a save played today, for the
//! columns each version had.
#![cfg(feature = "store")]

mod common;

use std::path::PathBuf;

use common::save::{at_version, count, played_save, player_moves, turn};
use loreloom::session::save_files::load_campaign;
use loreloom::session::turn::Calibration;
use loreloom::store::{SCHEMA_VERSION, Store, migration_backup};

fn played(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("today.db");
    let calibration = Calibration {
        lines: vec!["harm to animals".into()],
        ..Calibration::default()
    };
    played_save(&path, 11, calibration, 2);
    path
}

#[test]
fn saves_of_every_past_schema_open_with_a_backup_migrate_play_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let today = played(dir.path());
    for version in 1..usize::try_from(SCHEMA_VERSION).unwrap() {
        let path = dir.path().join(format!("v{version}.db"));
        at_version(&today, &path, version);
        let before = std::fs::read(&path).unwrap();

        let mut store = Store::open(&path).unwrap_or_else(|e| panic!("v{version}: {e}"));
        let backup = migration_backup(&path, i64::try_from(version).unwrap());
        let kept = rusqlite::Connection::open(&backup).unwrap();
        let v: i64 = kept
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            v,
            i64::try_from(version).unwrap(),
            "the backup is the save before migrating"
        );
        let turns: i64 = kept
            .query_row("SELECT count(*) FROM turns", [], |r| r.get(0))
            .unwrap();
        assert_eq!(turns, 2);
        assert!(!before.is_empty());
        assert_eq!(
            count(&store, "PRAGMA user_version"),
            SCHEMA_VERSION,
            "v{version}"
        );

        // It plays: the session state at the current scene, a new turn, and
        // the turns before it replay from their stored records.
        let info = store.session().unwrap();
        let campaign = load_campaign(&info.campaign_path).unwrap();
        let state = loreloom::session::save_rows::state(&store, campaign).unwrap();
        assert_eq!(
            state.calibration.lines,
            vec!["harm to animals".to_owned()],
            "v{version}"
        );
        let t = turn(&store, "after-migration", 3);
        assert_eq!(store.commit_turn(&t).unwrap().turn_index, 3, "v{version}");
        let scenes = store.branch().unwrap();
        for scene in &scenes[1..] {
            store
                .stored_turn(scene)
                .unwrap_or_else(|e| panic!("v{version}: replay {scene}: {e}"));
        }
        assert_eq!(store.integrity_check().unwrap(), "ok");
        drop(store);
        // Opened again: nothing to migrate, the backup stays as it was.
        drop(Store::open(&path).unwrap());
        assert!(backup.is_file());
    }
}

/// Saves made by the game itself at schema versions 1 to 5 (a build of the
/// commit before each next schema: `session new` of the drowned reach with a
/// line and a veil, then one turn): each opens with a backup, migrates, keeps
/// the player's lines and veils, plays a turn and replays.
#[test]
fn saves_made_by_past_builds_open_with_a_backup_migrate_play_and_replay() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/saves");
    // The save names the campaign folder it was made from (an old checkout);
    // this checkout's copy of that campaign is the one played here.
    let campaign = load_campaign(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach"),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for version in 1..SCHEMA_VERSION {
        let path = dir.path().join(format!("schema-{version}.db"));
        std::fs::copy(fixtures.join(format!("schema-{version}.db")), &path).unwrap();
        let made: i64 = rusqlite::Connection::open(&path)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(made, version, "the fixture is a save of schema {version}");

        let mut store = Store::open(&path).unwrap_or_else(|e| panic!("v{version}: {e}"));
        assert_eq!(
            count(&store, "PRAGMA user_version"),
            SCHEMA_VERSION,
            "v{version}"
        );
        let backup = migration_backup(&path, version);
        let kept: i64 = rusqlite::Connection::open(&backup)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            kept, version,
            "v{version}: the backup is the save before migrating"
        );

        let state = loreloom::session::save_rows::state(&store, campaign.clone())
            .unwrap_or_else(|e| panic!("v{version}: {e}"));
        assert_eq!(
            state.calibration.lines,
            vec!["harm to animals".to_owned()],
            "v{version}"
        );
        assert_eq!(
            state.calibration.veils,
            vec!["drowning".to_owned()],
            "v{version}"
        );
        assert_eq!(count(&store, "SELECT count(*) FROM turns"), 1, "v{version}");
        assert_eq!(
            player_moves(&store),
            vec!["I trim the lamp and watch the sea.".to_owned()],
            "v{version}"
        );

        let t = turn(&store, "after-migration", 2);
        assert_eq!(store.commit_turn(&t).unwrap().turn_index, 2, "v{version}");
        let scenes = store.branch().unwrap();
        assert_eq!(scenes.len(), 3, "v{version}");
        for scene in &scenes[1..] {
            store
                .stored_turn(scene)
                .unwrap_or_else(|e| panic!("v{version}: replay {scene}: {e}"));
        }
        assert_eq!(store.integrity_check().unwrap(), "ok", "v{version}");
    }
}
