//! Power cuts mid-commit: a VFS forgets unsynced writes; every acknowledged turn survives.
//!
//! SQLite's own crash tests (`test6.c`) wrap the operating system's VFS and,
//! at a chosen moment, throw away what a power cut would: every write since
//! the file's last `fsync`. This is the same shim over the real `unix` VFS,
//! made the default so the game's own `Store` opens through it:
//!
//! - every write, truncate, sync and delete is counted; at the chosen count
//!   the power goes: that call and every later one fails, as nothing more
//!   reaches the disk;
//! - each 512-byte sector written since its file's last sync then holds,
//!   at random, what was synced or what was written last (a page cache writes
//!   back whole pages in any order); a grown or shrunk file keeps its synced
//!   length or its last one; a file created and never synced may vanish; a
//!   file deleted without a folder sync may come back; the `-shm` file may be
//!   gone (it is memory).
//!
//! 200 cuts land inside `Store::commit_turn` (confirmed: the commit was
//! running when the power went) and 50 inside the checkpoint at close. After
//! each, the save must open through the game's checks, pass `PRAGMA
//! integrity_check`, hold only whole turns, hold every turn whose commit
//! returned, and take the next turn. A control run with `synchronous=OFF`
//! must lose acknowledged rows, so the shim is known to bite.
//!
//! A test without the libtest harness: the VFS is process-wide state.

#![expect(
    unsafe_code,
    reason = "a SQLite VFS shim is C callbacks over raw pointers; the game itself has none"
)]

mod common;

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

use common::save::{count, new_save, turn};
use loreloom::store::Store;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rusqlite::ffi;

/// The unit a disk writes whole (the smallest there is: the harshest model).
const SECTOR: u64 = 512;
/// Turns committed in each run; a cut lands in one of them.
const TURNS: u64 = 6;
const COMMIT_CUTS: u64 = 200;
const CLOSE_CUTS: u64 = 50;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Everything passes through; nothing is tracked.
    Off,
    /// Changes are counted and what is not synced is remembered.
    Record,
    /// The power is off: nothing more reaches the disk.
    Dead,
}

/// What one file would look like after a cut, beside what it looks like now.
#[derive(Default)]
struct Track {
    /// The synced content of each sector changed since the last sync (`None`:
    /// the sector lay past the synced end).
    sectors: BTreeMap<u64, Option<Vec<u8>>>,
    /// The synced length, once something changed since the last sync.
    synced_len: Option<u64>,
    /// Created since the last sync of the file (its name is not durable).
    new_file: bool,
    /// Deleted without a folder sync: the synced content it may come back with.
    deleted: Option<Vec<u8>>,
}

struct State {
    mode: Mode,
    ops: u64,
    cut_at: Option<u64>,
    /// What the driver is doing: 0 nothing, 1 a commit, 2 the close.
    phase: u8,
    /// The phase the power went in.
    cut_in: Option<u8>,
    files: HashMap<PathBuf, Track>,
}

fn state() -> MutexGuard<'static, State> {
    static STATE: OnceLock<Mutex<State>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            Mutex::new(State {
                mode: Mode::Off,
                ops: 0,
                cut_at: None,
                phase: 0,
                cut_in: None,
                files: HashMap::new(),
            })
        })
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Counts one durable operation; `Err` when the power is (now) off.
fn tick(s: &mut State, error: c_int) -> Result<bool, c_int> {
    match s.mode {
        Mode::Off => Ok(false),
        Mode::Dead => Err(error),
        Mode::Record => {
            s.ops += 1;
            if s.cut_at == Some(s.ops) {
                s.mode = Mode::Dead;
                s.cut_in = Some(s.phase);
                return Err(error);
            }
            Ok(true)
        }
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Remembers the synced content of the sectors in `from..to` before they change.
fn remember(track: &mut Track, path: &Path, from: u64, to: u64) {
    let len = file_len(path);
    track.synced_len.get_or_insert(len);
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    for sector in from / SECTOR..to.div_ceil(SECTOR) {
        track.sectors.entry(sector).or_insert_with(|| {
            let start = sector * SECTOR;
            (start < len).then(|| {
                let mut buf = vec![0; usize::try_from(SECTOR.min(len - start)).unwrap()];
                file.read_exact_at(&mut buf, start).unwrap();
                buf
            })
        });
    }
}

/// The file as it stood at its last sync.
fn synced_content(track: &Track, path: &Path) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap_or_default();
    let len = track
        .synced_len
        .unwrap_or(u64::try_from(bytes.len()).unwrap());
    for (sector, image) in &track.sectors {
        let start = usize::try_from(sector * SECTOR).unwrap();
        if let Some(image) = image {
            if bytes.len() < start + image.len() {
                bytes.resize(start + image.len(), 0);
            }
            bytes[start..start + image.len()].copy_from_slice(image);
        }
    }
    bytes.resize(usize::try_from(len).unwrap(), 0);
    bytes
}

/// What the cuts did to the files, to show they did something.
#[derive(Debug, Default)]
struct Damage {
    /// Sectors put back to what was synced.
    sectors: u64,
    /// Files cut back to their synced length.
    lengths: u64,
    /// Unsynced new files gone, and deleted files back.
    vanished: u64,
    returned: u64,
}

/// The power went: rewrite every tracked file as the disk might hold it.
fn after_the_cut(rng: &mut StdRng, damage: &mut Damage) {
    let files = std::mem::take(&mut state().files);
    // How much of the page cache reached the disk before the power went:
    // none, some, most or all of it.
    let landed = [0.0, 0.5, 0.9, 1.0][rng.random_range(0..4)];
    for (path, track) in files {
        let exists = path.exists();
        if exists && (!track.new_file || rng.random_bool(landed)) {
            let len = file_len(&path);
            let keep_len = if rng.random_bool(landed) {
                len
            } else {
                track.synced_len.unwrap_or(len)
            };
            damage.lengths += u64::from(keep_len != len);
            let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            for (sector, image) in &track.sectors {
                let start = sector * SECTOR;
                if start >= keep_len || rng.random_bool(landed) {
                    continue; // past the end, or the last write reached the disk
                }
                let mut old = image.clone().unwrap_or_default();
                old.resize(usize::try_from(SECTOR.min(keep_len - start)).unwrap(), 0);
                file.write_all_at(&old, start).unwrap();
                damage.sectors += 1;
            }
            file.set_len(keep_len).unwrap();
        } else {
            if exists {
                std::fs::remove_file(&path).unwrap();
                damage.vanished += 1;
            }
            if let Some(content) = track.deleted
                && !rng.random_bool(landed)
            {
                std::fs::write(&path, content).unwrap();
                damage.returned += 1;
            }
        }
        let mut shm = path.into_os_string();
        shm.push("-shm");
        if rng.random_bool(0.5) {
            let _ = std::fs::remove_file(shm);
        }
    }
}

// ---------------------------------------------------------------- the shim

/// Our `sqlite3_file`: SQLite allocates `szOsFile` bytes, this header then the
/// real VFS's file.
#[repr(C)]
struct CutFile {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    path: *mut PathBuf,
}

struct Real(*mut ffi::sqlite3_vfs);
// SAFETY: the unix VFS object is static in SQLite and never freed.
unsafe impl Send for Real {}
// SAFETY: as above; SQLite's VFS methods are thread-safe.
unsafe impl Sync for Real {}
static REAL: OnceLock<Real> = OnceLock::new();

fn real_vfs() -> *mut ffi::sqlite3_vfs {
    REAL.get().expect("registered before use").0
}

/// The real file under ours and its methods.
///
/// # Safety
/// `file` is a `CutFile` opened by `x_open`.
unsafe fn real(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    // SAFETY: `x_open` made `file` a `CutFile` whose real file it opened.
    unsafe {
        let real = (*file.cast::<CutFile>()).real;
        (real, &*(*real).pMethods)
    }
}

/// # Safety
/// As `real`.
unsafe fn path_of(file: *mut ffi::sqlite3_file) -> Option<&'static Path> {
    // SAFETY: `path` is null or a leaked `PathBuf` freed only by `x_close`.
    unsafe {
        (*file.cast::<CutFile>())
            .path
            .as_ref()
            .map(PathBuf::as_path)
    }
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let cut = file.cast::<CutFile>();
    // SAFETY: SQLite hands `szOsFile` bytes (ours plus the real file's) at `file`.
    let real_file = unsafe { cut.add(1) }.cast::<ffi::sqlite3_file>();
    // SAFETY: `name` is null or a NUL-terminated full path SQLite owns.
    let path = (!name.is_null()).then(|| {
        PathBuf::from(std::ffi::OsStr::from_bytes(
            unsafe { CStr::from_ptr(name) }.to_bytes(),
        ))
    });
    {
        let mut s = state();
        if s.mode == Mode::Dead {
            // SAFETY: as above.
            unsafe { (*cut).base.pMethods = std::ptr::null() };
            return ffi::SQLITE_CANTOPEN;
        }
        if s.mode == Mode::Record
            && let Some(path) = &path
            && !path.exists()
        {
            s.files.entry(path.clone()).or_default().new_file = true;
        }
    }
    let vfs = real_vfs();
    // SAFETY: the real VFS opens its own file in the bytes after ours.
    let rc = unsafe { ((*vfs).xOpen.unwrap())(vfs, name, real_file, flags, out_flags) };
    // SAFETY: `cut` is ours to fill.
    unsafe {
        (*cut).real = real_file;
        if rc == ffi::SQLITE_OK {
            (*cut).path = path.map_or(std::ptr::null_mut(), |p| Box::into_raw(Box::new(p)));
            (*cut).base.pMethods = &raw const METHODS;
        } else {
            (*cut).path = std::ptr::null_mut();
            (*cut).base.pMethods = std::ptr::null();
        }
    }
    rc
}

unsafe extern "C" fn x_delete(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // SAFETY: `name` is a NUL-terminated path SQLite owns.
    let path = PathBuf::from(std::ffi::OsStr::from_bytes(
        unsafe { CStr::from_ptr(name) }.to_bytes(),
    ));
    let mut s = state();
    let recording = match tick(&mut s, ffi::SQLITE_IOERR_DELETE) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let before = recording.then(|| {
        let track = s.files.remove(&path).unwrap_or_default();
        let content = (!track.new_file && path.exists()).then(|| synced_content(&track, &path));
        (track.deleted, content)
    });
    drop(s);
    let vfs = real_vfs();
    // SAFETY: forwarding SQLite's own arguments.
    let rc = unsafe { ((*vfs).xDelete.unwrap())(vfs, name, sync_dir) };
    if let Some((was_deleted, content)) = before {
        // A file that never durably existed leaves behind what its name held before.
        let content = content.or(was_deleted);
        if rc == ffi::SQLITE_OK && sync_dir == 0 {
            state().files.insert(
                path,
                Track {
                    deleted: content,
                    ..Track::default()
                },
            );
        }
    }
    rc
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: `file` is ours; `path` is freed once, here.
    unsafe {
        let (real, methods) = real(file);
        let rc = (methods.xClose.unwrap())(real);
        let cut = file.cast::<CutFile>();
        if !(*cut).path.is_null() {
            drop(Box::from_raw((*cut).path));
            (*cut).path = std::ptr::null_mut();
        }
        rc
    }
}

/// Before a write or truncate of `file`: counts it (the power may go now:
/// `Err`) and remembers the synced bytes of the sectors that `range` (the
/// file's path, its bytes changed) says will change.
///
/// # Safety
/// As `real`.
unsafe fn before_change(
    file: *mut ffi::sqlite3_file,
    error: c_int,
    range: impl FnOnce(&Path) -> (u64, u64),
) -> Result<(), c_int> {
    let mut s = state();
    // SAFETY: `file` is ours.
    if tick(&mut s, error)?
        && let Some(path) = unsafe { path_of(file) }
    {
        let (from, to) = range(path);
        remember(
            s.files.entry(path.to_path_buf()).or_default(),
            path,
            from,
            to,
        );
    }
    Ok(())
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    offset: i64,
) -> c_int {
    let from = u64::try_from(offset).unwrap();
    let to = from + u64::try_from(amt).unwrap();
    // SAFETY: `file` is ours.
    if let Err(e) = unsafe { before_change(file, ffi::SQLITE_IOERR_WRITE, |_| (from, to)) } {
        return e;
    }
    // SAFETY: forwarding SQLite's own arguments to the real file.
    unsafe {
        let (real, methods) = real(file);
        (methods.xWrite.unwrap())(real, buf, amt, offset)
    }
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    let from = u64::try_from(size).unwrap();
    // SAFETY: `file` is ours.
    let changed = unsafe {
        before_change(file, ffi::SQLITE_IOERR_TRUNCATE, |path| {
            (from, file_len(path).max(from))
        })
    };
    if let Err(e) = changed {
        return e;
    }
    // SAFETY: forwarding.
    unsafe {
        let (real, methods) = real(file);
        (methods.xTruncate.unwrap())(real, size)
    }
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let recording = match tick(&mut state(), ffi::SQLITE_IOERR_FSYNC) {
        Ok(r) => r,
        Err(e) => return e,
    };
    // SAFETY: forwarding.
    let rc = unsafe {
        let (real, methods) = real(file);
        (methods.xSync.unwrap())(real, flags)
    };
    // SAFETY: `file` is ours.
    if recording
        && rc == ffi::SQLITE_OK
        && let Some(path) = unsafe { path_of(file) }
    {
        // Synced: the content and (the unix VFS syncs the folder on a new
        // journal's first sync) the name are durable.
        let mut s = state();
        if let Some(track) = s.files.get_mut(path) {
            track.sectors.clear();
            track.synced_len = None;
            track.new_file = false;
            track.deleted = None;
        }
    }
    rc
}

macro_rules! forward {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*), $ret:ty) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> $ret {
            // SAFETY: forwarding SQLite's own arguments to the real file.
            unsafe {
                let (real, methods) = real(file);
                (methods.$method.unwrap())(real $(, $arg)*)
            }
        }
    };
}

forward!(x_read, xRead, (buf: *mut c_void, amt: c_int, offset: i64), c_int);
forward!(x_file_size, xFileSize, (size: *mut i64), c_int);
forward!(x_lock, xLock, (level: c_int), c_int);
forward!(x_unlock, xUnlock, (level: c_int), c_int);
forward!(x_check_reserved_lock, xCheckReservedLock, (out: *mut c_int), c_int);
forward!(x_file_control, xFileControl, (op: c_int, arg: *mut c_void), c_int);
forward!(x_sector_size, xSectorSize, (), c_int);
forward!(x_device_characteristics, xDeviceCharacteristics, (), c_int);
forward!(x_shm_map, xShmMap, (page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void), c_int);
forward!(x_shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int), c_int);
forward!(x_shm_barrier, xShmBarrier, (), ());
forward!(x_shm_unmap, xShmUnmap, (delete: c_int), c_int);
forward!(x_fetch, xFetch, (offset: i64, amt: c_int, out: *mut *mut c_void), c_int);
forward!(x_unfetch, xUnfetch, (offset: i64, page: *mut c_void), c_int);

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

/// Makes the shim SQLite's default VFS, over the real `unix` one.
fn register() {
    // SAFETY: `sqlite3_vfs_find` returns SQLite's static unix VFS; ours is a
    // copy of it, leaked (VFS objects live as long as the process), with its
    // own open, delete and file size.
    unsafe {
        let unix = ffi::sqlite3_vfs_find(c"unix".as_ptr());
        assert!(!unix.is_null(), "SQLite has a unix VFS");
        REAL.set(Real(unix)).ok().expect("registered once");
        let mut ours: ffi::sqlite3_vfs = std::ptr::read(unix);
        ours.zName = c"powercut".as_ptr();
        ours.pNext = std::ptr::null_mut();
        ours.szOsFile = c_int::try_from(size_of::<CutFile>()).unwrap() + (*unix).szOsFile;
        ours.xOpen = Some(x_open);
        ours.xDelete = Some(x_delete);
        let ours = Box::into_raw(Box::new(ours));
        assert_eq!(ffi::sqlite3_vfs_register(ours, 1), ffi::SQLITE_OK);
    }
}

// --------------------------------------------------------------- the driver

/// What one run did before the power went (or did not).
#[derive(Debug, Default)]
struct Run {
    /// Commits that returned `Ok` (their turns must survive).
    acknowledged: u64,
    /// The phase (1 a commit, 2 a close) and the operation counts each spanned.
    spans: Vec<(u8, u64, u64)>,
}

fn arm(cut_at: Option<u64>) {
    let mut s = state();
    s.mode = Mode::Record;
    s.ops = 0;
    s.cut_at = cut_at;
    s.phase = 0;
    s.cut_in = None;
    s.files.clear();
}

fn phase(p: u8) -> u64 {
    let mut s = state();
    s.phase = p;
    s.ops
}

/// Two sittings: opens the save, commits `TURNS` turns and closes it, then
/// opens it again (a new WAL, the old one deleted without a folder sync),
/// commits one more and closes; the power going at operation `cut_at`.
fn play(path: &Path, cut_at: Option<u64>) -> Run {
    // The first sitting's save opens before the power is watched.
    let mut first = Some(Store::open(path).unwrap());
    arm(cut_at);
    let mut run = Run::default();
    let mut n = 0;
    for sitting in [TURNS, 1] {
        let mut store = match first.take() {
            Some(store) => store,
            None if state().mode == Mode::Dead => break,
            None => Store::open(path).unwrap(),
        };
        for _ in 0..sitting {
            n += 1;
            let t = turn(&store, &format!("turn-{n}"), n);
            let start = phase(1);
            let result = store.commit_turn(&t);
            let end = phase(0);
            run.spans.push((1, start, end));
            match result {
                Ok(_) => run.acknowledged += 1,
                Err(e) => {
                    assert!(
                        state().mode == Mode::Dead,
                        "commit {n} failed with the power on: {e}"
                    );
                    break;
                }
            }
        }
        let start = phase(2);
        drop(store);
        let end = phase(0);
        run.spans.push((2, start, end));
    }
    run
}

/// The save after a cut: opens through the game's checks, whole, with every
/// acknowledged turn, and plays on. Whether the turn in flight was kept.
fn check(path: &Path, run: &Run, label: &str) -> bool {
    let mut store =
        Store::open(path).unwrap_or_else(|e| panic!("{label}: the save does not open: {e}"));
    assert_eq!(store.integrity_check().unwrap(), "ok", "{label}");
    let turns = count(&store, "SELECT count(*) FROM turns");
    let acknowledged = i64::try_from(run.acknowledged).unwrap();
    assert!(
        (acknowledged..=acknowledged + 1).contains(&turns),
        "{label}: {turns} turns in the save, {acknowledged} acknowledged"
    );
    for n in 1..=run.acknowledged {
        assert_eq!(
            count(
                &store,
                &format!("SELECT count(*) FROM turns WHERE user_action_id = 'turn-{n}'")
            ),
            1,
            "{label}: acknowledged turn {n} is missing"
        );
    }
    assert_eq!(
        count(&store, "SELECT count(*) FROM scenes"),
        turns + 1,
        "{label}"
    );
    assert_eq!(
        count(&store, "SELECT count(*) FROM messages"),
        1 + 3 * turns,
        "{label}"
    );
    for table in ["actions", "observations", "turn_events", "memories"] {
        assert_eq!(
            count(&store, &format!("SELECT count(*) FROM {table}")),
            turns,
            "{label}: {table}"
        );
    }
    let session = store.session().unwrap();
    assert_eq!(session.turn_index, turns, "{label}");
    let next = u64::try_from(turns).unwrap() + 1;
    let t = turn(&store, "after-the-cut", next);
    store
        .commit_turn(&t)
        .unwrap_or_else(|e| panic!("{label}: the next turn does not commit: {e}"));
    assert_eq!(
        store.integrity_check().unwrap(),
        "ok",
        "{label}: after the next turn"
    );
    turns > acknowledged
}

fn fresh(template: &Path, dir: &Path) -> PathBuf {
    let path = dir.join("save.db");
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    std::fs::copy(template, &path).unwrap();
    path
}

/// The control: a bare table with `synchronous=OFF` loses commits that returned.
fn control(dir: &Path, rng: &mut StdRng) -> u64 {
    let path = dir.join("control.db");
    let mut losses = 0;
    for round in 0..20 {
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(dir.join("control.db-wal"));
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (n INTEGER);")
            .unwrap();
        drop(conn);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA synchronous=OFF").unwrap();
        arm(Some(20 + round));
        let mut acknowledged = 0i64;
        for n in 0..40 {
            if conn.execute("INSERT INTO t VALUES (?1)", [n]).is_err() {
                break;
            }
            acknowledged += 1;
        }
        drop(conn);
        state().mode = Mode::Off;
        after_the_cut(rng, &mut Damage::default());
        let conn = rusqlite::Connection::open(&path).unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        if rows < acknowledged {
            losses += 1;
        }
    }
    losses
}

fn main() {
    register();
    let cuts = std::env::var("LORELOOM_POWER_CUTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(COMMIT_CUTS);
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.db");
    drop(new_save(&template));
    let work = dir.path().join("run");
    std::fs::create_dir(&work).unwrap();

    // A run without a cut measures where each commit's operations lie.
    let path = fresh(&template, &work);
    let calibration = play(&path, None);
    state().mode = Mode::Off;
    assert_eq!(calibration.acknowledged, TURNS + 1);
    assert!(
        calibration.spans.iter().all(|(_, a, b)| b > a),
        "{calibration:?}"
    );
    let commits: Vec<_> = calibration.spans.iter().filter(|s| s.0 == 1).collect();
    let closes: Vec<_> = calibration.spans.iter().filter(|s| s.0 == 2).collect();
    check(&path, &calibration, "without a cut");
    println!(
        "operations spanned by each commit (1) and close (2): {:?}",
        calibration.spans
    );

    let mut landed = [0u64; 3];
    let mut in_flight_kept = 0;
    let mut damage = Damage::default();
    let started = std::time::Instant::now();
    for i in 0..cuts + CLOSE_CUTS {
        let seed = 0x5eed_0000 + i;
        let mut rng = StdRng::seed_from_u64(seed);
        let spans = if i < cuts { &commits } else { &closes };
        let &(_, start, end) = spans[usize::try_from(i).unwrap() % spans.len()];
        let cut_at = rng.random_range(start + 1..=end);
        let path = fresh(&template, &work);
        let run = play(&path, Some(cut_at));
        let cut_in = {
            let mut s = state();
            s.mode = Mode::Off;
            s.cut_in
        };
        let label = format!("cut {i} (seed {seed:#x}) at operation {cut_at}, {run:?}");
        let cut_in = cut_in.unwrap_or_else(|| panic!("{label}: the power never went"));
        assert_eq!(
            cut_in,
            if i < cuts { 1 } else { 2 },
            "{label}: the cut landed elsewhere"
        );
        landed[usize::from(cut_in)] += 1;
        after_the_cut(&mut rng, &mut damage);
        in_flight_kept += u64::from(check(&path, &run, &label));
    }
    let losses = control(dir.path(), &mut StdRng::seed_from_u64(7));
    assert!(
        losses > 0,
        "the control (synchronous=OFF) lost nothing in 20 cuts: the shim does not drop unsynced writes"
    );
    println!(
        "power cuts: {} inside turn commits, {} inside the close's checkpoint: every save opened whole \
         with every acknowledged turn and took the next ({:.1} s); the turn in flight kept {in_flight_kept} \
         times; {damage:?}; control with synchronous=OFF lost acknowledged rows in {losses} of 20 cuts",
        landed[1],
        landed[2],
        started.elapsed().as_secs_f64()
    );
}
