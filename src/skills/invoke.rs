//! One invocation of a skill script (seed 002 §2.1, §3.4, §10.5): contained, capped and timed.
//!
//! One invocation of a skill script (seed 002 §2.1, §3.4, §10.5): its own process group, JSON on
//! stdin, every stdout line read by a thread and parsed into an event under caps (line length,
//! total bytes, event count), stderr kept up to a cap, a timeout and cancellation that kill the
//! whole group (asking the sandbox's supervisor first, so it sweeps what the script left), the
//! sandbox launcher's limits and confinement (`sandbox`), a scrubbed environment that reaches only
//! the script, a cap on the skill's `data/` (files and bytes, watched while it runs; what a run
//! wrote past the cap is removed); and what the exit code and the events mean together.

// In the browser no process starts (`invoke` fails at once): the machinery
// below is native only and unused there.
#![cfg_attr(target_family = "wasm", allow(dead_code, unused_imports))]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};
use serde::Serialize;
#[cfg(not(target_family = "wasm"))]
use wait_timeout::ChildExt;

use super::protocol::{Event, parse_line};

/// What one invocation may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    /// Bytes in one line of output.
    pub max_line: usize,
    /// Bytes of output in all.
    pub max_bytes: usize,
    pub max_events: usize,
    /// Bytes of stderr kept for the log.
    pub max_stderr: usize,
    pub cpu_seconds: u64,
    /// Bytes of address space per process.
    pub address_space: u64,
    pub file_size: u64,
    pub processes: u64,
    /// Bytes of memory for the whole invocation, where a memory cgroup
    /// can be made (else `address_space` × `processes` bounds it).
    pub memory: u64,
    /// Files (and folders) the skill's `data/` may hold.
    pub data_files: usize,
    /// Bytes the skill's `data/` may hold.
    pub data_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_line: 1 << 20,
            max_bytes: 16 << 20,
            max_events: 10_000,
            max_stderr: 64 << 10,
            cpu_seconds: 30,
            address_space: 1 << 30,
            file_size: 64 << 20,
            processes: 64,
            memory: 1 << 30,
            data_files: 1_000,
            data_bytes: 256 << 20,
        }
    }
}

impl Limits {
    /// The caps on the skill's `data/`.
    pub fn data_caps(&self) -> super::quota::Caps {
        super::quota::Caps {
            files: self.data_files,
            bytes: self.data_bytes,
        }
    }
}

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct Request {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The working directory (the skill's folder).
    pub dir: PathBuf,
    /// The child's whole environment besides `PATH`, `LANG` and `HOME`.
    pub env: Vec<(String, String)>,
    pub stdin: Vec<u8>,
    pub limits: Limits,
    /// Set to stop the invocation (the player rewound or quit).
    pub cancel: Option<Arc<AtomicBool>>,
    /// The `loreloom` binary whose `__skill-sandbox` confines the script
    /// (none: unconfined, for tests of the protocol alone).
    pub sandbox: Option<PathBuf>,
    /// A campaign's skill: the launcher refuses to run it unless the
    /// kernel enforces the whole confinement.
    pub untrusted: bool,
    /// Each event as it is read (the tool execution panel's live log).
    pub live: Option<crossbeam_channel::Sender<Event>>,
}

/// Seed 002's error categories (§2.2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    ToolFailure,
    CircularDependency,
    Timeout,
    InvalidJson,
    ProcessError,
}

/// Why an invocation failed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Failure {
    pub category: Category,
    pub message: String,
}

impl Failure {
    fn new(category: Category, message: impl Into<String>) -> Self {
        Self {
            category,
            message: message.into(),
        }
    }
}

/// What came of an invocation.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Invocation {
    pub events: Vec<Event>,
    /// The exit code (none when killed by a signal or never started).
    pub exit: Option<i32>,
    /// Stderr, up to the cap (a note says when more was dropped).
    pub stderr: String,
    pub elapsed_ms: u64,
    pub failure: Option<Failure>,
}

impl Invocation {
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// The `done` event, if one came.
    pub fn done(&self) -> Option<(bool, Option<&str>)> {
        self.events.iter().find_map(|e| match e {
            Event::Done { ok, summary } => Some((*ok, summary.as_deref())),
            _ => None,
        })
    }
}

/// What the reader thread says.
enum Said {
    Event(Event),
    Broken(Failure),
    End,
}

/// Reads one line of at most `max` bytes (without its newline).
enum Line {
    Text(Vec<u8>),
    TooLong,
    Eof,
}

fn read_line(reader: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(if line.is_empty() {
                Line::Eof
            } else {
                Line::Text(line)
            });
        }
        if let Some(i) = buf.iter().position(|b| *b == b'\n') {
            line.extend_from_slice(buf.get(..i).unwrap_or_default());
            reader.consume(i + 1);
            return Ok(if line.len() > max {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
        let n = buf.len();
        line.extend_from_slice(buf);
        reader.consume(n);
        if line.len() > max {
            return Ok(Line::TooLong);
        }
    }
}

/// The stdout reader: each line an event, until `done`, the caps or the end.
fn read_events(out: impl Read, limits: &Limits, tx: &Sender<Said>) {
    let mut reader = BufReader::with_capacity(64 << 10, out);
    let (mut bytes, mut events) = (0usize, 0usize);
    let broken = |f: Failure| {
        let _ = tx.send(Said::Broken(f));
    };
    loop {
        match read_line(&mut reader, limits.max_line) {
            Ok(Line::Eof) | Err(_) => break,
            Ok(Line::TooLong) => {
                return broken(Failure::new(
                    Category::InvalidJson,
                    format!("a line of output over {} bytes", limits.max_line),
                ));
            }
            Ok(Line::Text(line)) => {
                bytes += line.len() + 1;
                if bytes > limits.max_bytes {
                    return broken(Failure::new(
                        Category::InvalidJson,
                        format!("more than {} bytes of output", limits.max_bytes),
                    ));
                }
                let text = String::from_utf8_lossy(&line);
                if text.trim().is_empty() {
                    continue;
                }
                match parse_line(text.trim_end_matches('\r')) {
                    Ok(event) => {
                        events += 1;
                        if events > limits.max_events {
                            return broken(Failure::new(
                                Category::InvalidJson,
                                format!("more than {} events", limits.max_events),
                            ));
                        }
                        let done = matches!(event, Event::Done { .. });
                        if tx.send(Said::Event(event)).is_err() || done {
                            // Nothing after `done` is read (seed §2.1.3).
                            return;
                        }
                    }
                    Err(e) => {
                        let shown: String = text.chars().take(120).collect();
                        return broken(Failure::new(
                            Category::InvalidJson,
                            format!("output line {events}: {e}: {shown}"),
                        ));
                    }
                }
            }
        }
    }
    let _ = tx.send(Said::End);
}

/// Reads stderr, keeping the first `max` bytes.
fn read_stderr(err: impl Read, max: usize) -> String {
    let mut kept = Vec::new();
    let mut reader = BufReader::new(err);
    let mut buf = [0u8; 8192];
    let mut dropped = 0usize;
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 {
            break;
        }
        let room = max.saturating_sub(kept.len());
        kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
        dropped += n.saturating_sub(room);
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        let _ = write!(text, "\n[{dropped} more bytes of stderr not kept]");
    }
    text
}

/// Ends the invocation: the sandbox's supervisor is asked first (it kills
/// what the script left, wherever it went) and given a moment; then the
/// whole process group is killed.
fn stop(child: &mut Child, supervised: bool) {
    #[cfg(unix)]
    if supervised && matches!(child.try_wait(), Ok(None)) {
        use nix::sys::signal::{Signal, kill};
        use nix::unistd::Pid;
        if let Ok(pid) = i32::try_from(child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
            let _ = child.wait_timeout(Duration::from_secs(2));
        }
    }
    #[cfg(not(unix))]
    let _ = supervised;
    kill_group(child);
}

/// Kills the child's whole process group (it leads it).
fn kill_group(child: &Child) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Ok(pid) = i32::try_from(child.id()) {
            // ESRCH: the group is already gone.
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
}

/// The program and arguments that run the script: through the sandbox
/// launcher (limits, Landlock, seccomp, the supervisor) where there is one.
fn argv(request: &Request, cgroups: &[PathBuf]) -> Vec<std::ffi::OsString> {
    let limits = &request.limits;
    let mut argv: Vec<std::ffi::OsString> = Vec::new();
    if let Some(launcher) = &request.sandbox {
        argv.push(launcher.into());
        argv.push("__skill-sandbox".into());
        for cgroup in cgroups {
            argv.push("--cgroup".into());
            argv.push(cgroup.into());
        }
        for (flag, value) in [
            ("--cpu", limits.cpu_seconds),
            ("--address-space", limits.address_space),
            ("--file-size", limits.file_size),
            ("--processes", limits.processes),
        ] {
            argv.push(flag.into());
            argv.push(value.to_string().into());
        }
        if request.untrusted {
            argv.push("--untrusted".into());
        }
        // The launcher runs in the skill's folder: its rules name absolute paths.
        let dir = std::path::absolute(&request.dir).unwrap_or_else(|_| request.dir.clone());
        let data = dir.join("data");
        let _ = std::fs::create_dir_all(&data);
        let mut read: Vec<PathBuf> = super::sandbox::SYSTEM
            .iter()
            .chain(super::sandbox::PROC.iter())
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect();
        read.push(dir);
        // An interpreter named by path (not on PATH) must be readable too.
        if let Some(parent) = request.program.parent().filter(|p| p.is_absolute()) {
            read.push(parent.to_owned());
        }
        for r in read {
            argv.push("--read".into());
            argv.push(r.into());
        }
        argv.push("--write".into());
        argv.push(data.into());
        argv.push("--".into());
    }
    argv.push(request.program.clone().into());
    argv.extend(request.args.iter().map(Into::into));
    argv
}

/// The script's temporary folder, inside its `data/` (made if missing).
fn scratch(dir: &Path) -> PathBuf {
    let tmp = dir.join("data").join("tmp");
    let _ = std::fs::create_dir_all(&tmp);
    tmp
}

const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// The script's whole environment: a fixed `PATH` and `LANG`, `HOME` and
/// `TMPDIR` in its `data/`, and the skill's own variables.
fn script_env(request: &Request) -> Vec<(String, String)> {
    let mut env = vec![
        ("PATH".to_owned(), PATH.to_owned()),
        ("LANG".to_owned(), "C.UTF-8".to_owned()),
        (
            "HOME".to_owned(),
            request.dir.join("data").to_string_lossy().into_owned(),
        ),
        (
            "TMPDIR".to_owned(),
            scratch(&request.dir).to_string_lossy().into_owned(),
        ),
    ];
    env.extend(request.env.iter().cloned());
    env
}

fn command(request: &Request, cgroups: &[PathBuf]) -> Command {
    let words = argv(request, cgroups);
    // `argv` always names a program; an empty list would fail to spawn, not panic.
    let (program, args) = words
        .split_first()
        .map_or((std::ffi::OsString::new(), &[][..]), |(p, a)| {
            (p.clone(), a)
        });
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(&request.dir).env_clear();
    if request.sandbox.is_some() {
        // The launcher and its supervisor see none of the script's
        // variables: the confined stage sets them at its `exec`.
        let env: std::collections::BTreeMap<String, String> =
            script_env(request).into_iter().collect();
        cmd.env("PATH", PATH).env("LANG", "C.UTF-8").env(
            super::sandbox::ENV_VAR,
            serde_json::to_string(&env).unwrap_or_default(),
        );
    } else {
        cmd.envs(script_env(request));
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd
}

/// In the browser no process can start: every invocation fails at once.
#[cfg(target_family = "wasm")]
pub fn invoke(request: &Request) -> Invocation {
    Invocation {
        failure: Some(Failure::new(
            Category::ProcessError,
            format!(
                "{}: skills do not run in the browser",
                request.program.display()
            ),
        )),
        ..Invocation::default()
    }
}

/// Runs one invocation to its end, its timeout or its cancellation.
#[cfg(not(target_family = "wasm"))]
pub fn invoke(request: &Request) -> Invocation {
    let started = Instant::now();
    let mut result = Invocation::default();
    // Where the launcher can join one, a cgroup bounds the processes and
    // lets every one of them be killed at the end (dropped last).
    let cgroups = request
        .sandbox
        .as_ref()
        .map(|_| super::sandbox::Cgroups::create(request.limits.processes, request.limits.memory));
    let data = request.dir.join("data");
    let before = match super::quota::Usage::of(&data, request.limits.data_caps()) {
        Ok(before) => before,
        Err(over) => {
            result.failure = Some(Failure::new(Category::ProcessError, over));
            return result;
        }
    };
    let mut child = match command(
        request,
        cgroups
            .as_ref()
            .map_or(&[][..], super::sandbox::Cgroups::dirs),
    )
    .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            result.failure = Some(Failure::new(
                Category::ProcessError,
                format!("{} did not start: {e}", request.program.display()),
            ));
            return result;
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        let input = request.stdin.clone();
        // A script that never reads its input must not block us.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (tx, rx) = unbounded();
    let out = child.stdout.take();
    let limits = request.limits.clone();
    let reader = out.map(|out| std::thread::spawn(move || read_events(out, &limits, &tx)));
    let max_stderr = request.limits.max_stderr;
    // Stderr comes back over a channel: a process the script left behind
    // (outside the group, where there is no cgroup) may hold it open.
    let (err_tx, err_rx) = crossbeam_channel::bounded(1);
    if let Some(err) = child.stderr.take() {
        std::thread::spawn(move || {
            let _ = err_tx.send(read_stderr(err, max_stderr));
        });
    }
    let deadline = started + request.limits.timeout;
    let mut failure = watch(&mut child, &rx, deadline, request, &mut result.events);
    // Whatever happened, nothing of the group (or the cgroups) outlives
    // the invocation.
    stop(&mut child, request.sandbox.is_some());
    if let Some(cgroups) = &cgroups {
        cgroups.kill_all();
    }
    let status = child.wait().ok();
    if let Some(over) = before.prune_after(&data, request.limits.data_caps()) {
        failure = failure.or(Some(Failure::new(Category::ProcessError, over)));
    }
    // Events the reader sent before it stopped (it is not waited for: a
    // left-behind process may hold stdout open; it ends with the pipe).
    drop(reader);
    let grace = Instant::now() + Duration::from_millis(200);
    while let Ok(said) = rx.recv_deadline(grace) {
        match said {
            Said::Event(e) => result.events.push(e),
            Said::Broken(_) | Said::End => break,
        }
    }
    result.stderr = err_rx
        .recv_deadline(Instant::now() + Duration::from_millis(200))
        .unwrap_or_else(|_| {
            "[stderr is still held open by a process the script left behind]".into()
        });
    result.exit = status.and_then(|s| s.code());
    result.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    result.failure = failure.or_else(|| verdict(&result, status));
    result
}

/// Follows the reader until `done`, the end of output, a broken line, the
/// deadline or a cancellation; a failure the watch itself saw.
#[cfg(not(target_family = "wasm"))]
fn watch(
    child: &mut Child,
    rx: &Receiver<Said>,
    deadline: Instant,
    request: &Request,
    events: &mut Vec<Event>,
) -> Option<Failure> {
    let mut counted = Instant::now();
    loop {
        let wait = match next_wait(request, deadline, &mut counted) {
            Ok(wait) => wait,
            Err(f) => return Some(f),
        };
        match rx.recv_timeout(wait) {
            Ok(Said::Event(e)) => {
                let done = matches!(e, Event::Done { .. });
                if let Some(live) = &request.live {
                    let _ = live.send(e.clone());
                }
                events.push(e);
                if done {
                    break;
                }
            }
            Ok(Said::Broken(f)) => return Some(f),
            Ok(Said::End) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
    // Output is over: the process has until the deadline to exit.
    loop {
        let wait = match next_wait(request, deadline, &mut counted) {
            Ok(wait) => wait,
            Err(f) => return Some(f),
        };
        match child.wait_timeout(wait) {
            Ok(Some(_)) => return None,
            Ok(None) => {}
            Err(e) => return Some(Failure::new(Category::ProcessError, e.to_string())),
        }
    }
}

/// How long to wait next (at most 50 ms, so a cancellation is seen), or
/// why to stop: cancelled, past the deadline, or (counted every quarter
/// second) the skill's `data/` over its caps.
fn next_wait(
    request: &Request,
    deadline: Instant,
    counted: &mut Instant,
) -> Result<Duration, Failure> {
    if request
        .cancel
        .as_ref()
        .is_some_and(|c| c.load(Ordering::Relaxed))
    {
        return Err(Failure::new(Category::ProcessError, "cancelled"));
    }
    let now = Instant::now();
    if now >= deadline {
        return Err(timed_out(request));
    }
    if now.duration_since(*counted) >= Duration::from_millis(250) {
        *counted = now;
        if let Some(why) =
            super::quota::Usage::over_now(&request.dir.join("data"), request.limits.data_caps())
        {
            return Err(Failure::new(Category::ProcessError, why));
        }
    }
    Ok((deadline - now).min(Duration::from_millis(50)))
}

fn timed_out(request: &Request) -> Failure {
    Failure::new(
        Category::Timeout,
        format!(
            "no end within {} ms; the process group was killed",
            request.limits.timeout.as_millis()
        ),
    )
}

/// What the exit and the events mean together (seed §2.1.3, §2.1.5): a
/// non-zero exit fails whatever was said; exit 0 without `done` broke the
/// protocol; `done` with `ok: false` is the script's own failure.
fn verdict(result: &Invocation, status: Option<std::process::ExitStatus>) -> Option<Failure> {
    let Some(status) = status else {
        return Some(Failure::new(Category::ProcessError, "the process was lost"));
    };
    if !status.success() {
        let how = status.code().map_or_else(
            || "was killed by a signal".to_owned(),
            |c| format!("exited with {c}"),
        );
        let last = result.stderr.lines().last().unwrap_or_default();
        return Some(Failure::new(
            Category::ProcessError,
            if last.is_empty() {
                format!("the script {how}")
            } else {
                format!("the script {how}: {last}")
            },
        ));
    }
    match result.done() {
        None => Some(Failure::new(
            Category::InvalidJson,
            "the script ended without a `done` event",
        )),
        Some((true, _)) => None,
        Some((false, summary)) => {
            let said = result.events.iter().rev().find_map(|e| match e {
                Event::Error {
                    error_code,
                    error_message,
                    ..
                } => Some(format!("{error_code}: {error_message}")),
                _ => None,
            });
            Some(Failure::new(
                Category::ToolFailure,
                said.or_else(|| summary.map(str::to_owned))
                    .unwrap_or_else(|| "the script said it failed".to_owned()),
            ))
        }
    }
}

/// The interpreter a script runs with, by its extension (none: run it).
pub fn interpreter(script: &Path) -> Option<&'static str> {
    match script.extension().and_then(|e| e.to_str()) {
        Some("py") => Some("python3"),
        Some("sh") => Some("sh"),
        Some("js" | "mjs") => Some("node"),
        _ => None,
    }
}
