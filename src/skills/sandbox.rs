//! The skill sandbox (#25, #43, seed 002 §10.8): a reaping supervisor, limits, Landlock, seccomp.
//!
//! `loreloom __skill-sandbox [LIMITS] --read DIR… --write DIR… -- PROGRAM ARGS…` runs in two
//! stages. The **supervisor** joins the invocation's cgroups (`Cgroups`: `pids`, and `memory`
//! where this machine lets Loreloom make them), becomes a child subreaper and starts the second
//! stage; when the script ends, or the invoker asks it to stop (`SIGTERM`), it kills every
//! process the script left, even one that called `setsid` or double-forked, since each orphan is
//! handed to it. The **confined stage** sets the resource limits (CPU time, address space, file
//! size, processes, no core dumps), applies Landlock (read: the system's folders and the skill's
//! own; write: its `data/`; no TCP bind or connect; no abstract Unix socket and no signal outside
//! the sandbox), a seccomp filter (no `socket`, `io_uring` or kernel keyring at all: no network,
//! no session bus), and only then takes the script's environment from `LORELOOM_SANDBOX_ENV` and
//! becomes the script (`exec`), so no variable of the skill's reaches a process before it is
//! confined. With `--untrusted` (a campaign's skill) a kernel that does not enforce all of this
//! refuses to run the script (exit 126, saying what is missing); a bundled skill runs best effort.

use std::path::{Path, PathBuf};

/// The system folders a script may read (interpreters, libraries,
/// devices). `/run` (the session bus, other users' sockets) and other
/// processes' `/proc` are not among them: see [`PROC`].
pub const SYSTEM: [&str; 10] = [
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/sys", "/dev",
];

/// What of `/proc` a script may read: its own process (taken when the
/// confined stage starts, the script's own pid after `exec`) and the
/// machine-wide facts interpreters ask for.
pub const PROC: [&str; 5] = [
    "/proc/self",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/filesystems",
];

/// The variable that carries the script's environment, as JSON, to the
/// confined stage (which alone applies it, at `exec`).
pub const ENV_VAR: &str = "LORELOOM_SANDBOX_ENV";

/// The exit code of a launcher that refused to run an untrusted script.
pub const REFUSED: i32 = 126;

/// What the kernel enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforced {
    Fully,
    Partly,
    Not,
}

/// The resource limits the confined stage sets on itself (inherited by
/// everything the script starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rlimits {
    pub cpu_seconds: u64,
    pub address_space: u64,
    pub file_size: u64,
    pub processes: u64,
}

/// Everything the confined stage applies before it becomes the script.
#[derive(Clone, Debug)]
pub struct Confinement {
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub limits: Rlimits,
    /// A campaign's skill: refuse to run unless everything is enforced.
    pub untrusted: bool,
}

/// Device files a script may write as well as read.
#[cfg(target_os = "linux")]
const SINKS: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Confines this process (and what it execs) with Landlock: reading
/// `read`, reading and writing `write`, no TCP, and no abstract socket or
/// signal reaching outside its own domain.
#[cfg(target_os = "linux")]
pub fn confine(read: &[PathBuf], write: &[PathBuf]) -> Result<Enforced, landlock::RulesetError> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        Scope, path_beneath_rules,
    };
    let abi = ABI::V6;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        // TCP handled with no rule allowing any port: no bind, no connect.
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(Ruleset::create)
        .and_then(|r| r.add_rules(path_beneath_rules(read, AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(write, AccessFs::from_all(abi))))
        // The sinks every shell script writes to (`cat > /dev/null`).
        .and_then(|r| r.add_rules(path_beneath_rules(SINKS, AccessFs::from_file(abi))))
        .and_then(landlock::RulesetCreated::restrict_self)?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforced::Fully,
        RulesetStatus::PartiallyEnforced => Enforced::Partly,
        RulesetStatus::NotEnforced => Enforced::Not,
    })
}

/// Whether this kernel enforces all of [`confine`] (Landlock ABI 6: files,
/// TCP, abstract sockets, signals), without confining anything.
#[cfg(target_os = "linux")]
pub fn enforceable() -> bool {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, Scope,
    };
    let abi = ABI::V6;
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::from_all(abi)))
        .and_then(|r| r.scope(Scope::from_all(abi)))
        .and_then(Ruleset::create)
        .is_ok()
}

#[cfg(not(target_os = "linux"))]
pub fn enforceable() -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
pub fn confine(
    _read: &[PathBuf],
    _write: &[PathBuf],
) -> Result<Enforced, std::convert::Infallible> {
    Ok(Enforced::Not)
}

/// The system calls a script may not make: sockets of every family (the
/// network, the session bus, abstract sockets: `socketpair` stays, it
/// reaches nothing outside), `io_uring` (which can open sockets past the
/// filter) and the kernel keyring (the player's session keys).
#[cfg(target_os = "linux")]
fn denied_syscalls() -> Vec<i64> {
    vec![
        libc::SYS_socket,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ]
}

/// Installs the seccomp filter: each denied call fails with `EACCES`.
/// On x86-64 the x32 numbering of the same calls is denied too.
#[cfg(target_os = "linux")]
pub fn filter_syscalls() -> Result<(), String> {
    use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, TargetArch};
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|e| format!("seccomp: {e:?}"))?;
    let mut rules = std::collections::BTreeMap::new();
    for nr in denied_syscalls() {
        rules.insert(nr, Vec::new());
        if cfg!(target_arch = "x86_64") {
            rules.insert(nr | 0x4000_0000, Vec::new());
        }
    }
    let errno = u32::try_from(libc::EACCES).unwrap_or(13);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(|e| format!("seccomp: {e}"))?;
    let program: BpfProgram = filter.try_into().map_err(|e| format!("seccomp: {e}"))?;
    seccompiler::apply_filter(&program).map_err(|e| format!("seccomp: {e}"))
}

#[cfg(not(target_os = "linux"))]
pub fn filter_syscalls() -> Result<(), String> {
    Err("no seccomp on this system".into())
}

/// The limits, set on this process.
#[cfg(unix)]
fn set_limits(limits: &Rlimits) -> Result<(), String> {
    use nix::sys::resource::{Resource, setrlimit};
    for (resource, value) in [
        (Resource::RLIMIT_CPU, limits.cpu_seconds),
        (Resource::RLIMIT_AS, limits.address_space),
        (Resource::RLIMIT_FSIZE, limits.file_size),
        (Resource::RLIMIT_NPROC, limits.processes),
        (Resource::RLIMIT_CORE, 0),
    ] {
        setrlimit(resource, value, value).map_err(|e| format!("{resource:?}: {e}"))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn set_limits(_limits: &Rlimits) -> Result<(), String> {
    Err("no resource limits on this system".into())
}

/// The script's environment, from [`ENV_VAR`] (empty when it is absent).
fn script_env() -> Result<Vec<(String, String)>, String> {
    let Ok(text) = std::env::var(ENV_VAR) else {
        return Ok(Vec::new());
    };
    serde_json::from_str::<std::collections::BTreeMap<String, String>>(&text)
        .map(|m| m.into_iter().collect())
        .map_err(|e| format!("{ENV_VAR}: {e}"))
}

/// The confined stage: limits, Landlock, seccomp, the environment, then
/// `exec`. Returns only when it refuses or the exec fails (the exit code).
pub fn enter(confinement: &Confinement, program: &str, args: &[String]) -> i32 {
    // The script dies with its supervisor, whatever kills that.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    let mut missing: Vec<String> = Vec::new();
    if let Err(e) = set_limits(&confinement.limits) {
        missing.push(format!("resource limits ({e})"));
    }
    match confine(&confinement.read, &confinement.write) {
        Ok(Enforced::Fully) => {}
        Ok(other) => missing.push(format!(
            "Landlock is {other:?} enforced on this kernel (files, TCP, abstract sockets and signals need ABI 6, Linux 6.12)"
        )),
        Err(e) => missing.push(format!("Landlock was not applied ({e})")),
    }
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_no_new_privs();
    if let Err(e) = filter_syscalls() {
        missing.push(e);
    }
    if !missing.is_empty() {
        if confinement.untrusted {
            eprintln!(
                "loreloom sandbox: refused: a campaign's skill runs only fully confined, and here {}",
                missing.join("; ")
            );
            return REFUSED;
        }
        eprintln!("loreloom sandbox: not enforced: {}", missing.join("; "));
    }
    let env = match script_env() {
        Ok(env) => env,
        Err(e) => {
            eprintln!("loreloom sandbox: {e}");
            return REFUSED;
        }
    };
    let mut command = std::process::Command::new(program);
    command.args(args).env_clear().envs(env);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = command.exec();
        eprintln!("loreloom sandbox: {program}: {e}");
        127
    }
    #[cfg(not(unix))]
    {
        match command.status() {
            Ok(s) => s.code().unwrap_or(1),
            Err(e) => {
                eprintln!("loreloom sandbox: {program}: {e}");
                127
            }
        }
    }
}

/// The supervisor: joins `cgroups`, starts the confined stage (this same
/// command line with `--inner`) and, when the script ends or a `SIGTERM`
/// comes, kills every process it left. Returns the script's exit code
/// (128 + the signal that killed it).
#[cfg(target_os = "linux")]
pub fn supervise(cgroups: &[PathBuf]) -> i32 {
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::Pid;
    for dir in cgroups {
        if let Err(e) = std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()) {
            eprintln!("loreloom sandbox: {}: {e}", dir.display());
        }
    }
    // Orphans below us come to us, not to init: none escapes the sweep.
    if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
        eprintln!("loreloom sandbox: no subreaper: {e}");
    }
    // Asked to stop when the game's invoking thread goes.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGTERM);
    // Blocked before the child starts, so no SIGCHLD is lost; `Command`
    // clears the mask in the child.
    let mut mask = SigSet::empty();
    for s in [
        Signal::SIGCHLD,
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
    ] {
        mask.add(s);
    }
    if let Err(e) = mask.thread_block() {
        eprintln!("loreloom sandbox: {e}");
        return REFUSED;
    }
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    args.insert(1, "--inner".into());
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("loreloom sandbox: {e}");
            return REFUSED;
        }
    };
    let child = match std::process::Command::new(exe).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("loreloom sandbox: {e}");
            return REFUSED;
        }
    };
    let main = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    loop {
        let signal = mask.wait().unwrap_or(Signal::SIGCHLD);
        if signal != Signal::SIGCHLD {
            kill_descendants();
            return 128 + signal as i32;
        }
        loop {
            match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) if pid == main => {
                    kill_descendants();
                    return code;
                }
                Ok(WaitStatus::Signaled(pid, s, _)) if pid == main => {
                    kill_descendants();
                    return 128 + s as i32;
                }
                Ok(WaitStatus::StillAlive) | Err(_) => break,
                Ok(_) => {}
            }
        }
    }
}

/// Elsewhere the confined stage runs under a plain parent.
#[cfg(not(target_os = "linux"))]
pub fn supervise(_cgroups: &[PathBuf]) -> i32 {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    args.insert(1, "--inner".into());
    match std::env::current_exe()
        .and_then(|exe| std::process::Command::new(exe).args(args).status())
    {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("loreloom sandbox: {e}");
            REFUSED
        }
    }
}

/// Every process below `root`, from `/proc` (each one's parent).
#[cfg(target_os = "linux")]
fn descendants(root: i32) -> Vec<i32> {
    let mut parent_of: Vec<(i32, i32)> = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid …": the name may hold spaces and brackets.
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<i32>().ok());
        if let Some(parent) = parent {
            parent_of.push((pid, parent));
        }
    }
    let mut found = vec![root];
    let mut at = 0;
    while let Some(&parent) = found.get(at) {
        found.extend(
            parent_of
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        at += 1;
    }
    found.remove(0);
    found
}

/// Kills every descendant, again while new ones appear or come to us as
/// orphans, and reaps them, until this process has no child left.
#[cfg(target_os = "linux")]
fn kill_descendants() {
    use nix::errno::Errno;
    use nix::sys::signal::{Signal, kill};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::Pid;
    let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    for _ in 0..500 {
        for pid in descendants(me) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        loop {
            match waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
                Err(Errno::ECHILD) => return,
                Ok(WaitStatus::StillAlive) | Err(_) => break,
                Ok(_) => {}
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    eprintln!("loreloom sandbox: processes were still appearing after 500 sweeps");
}

/// The cgroups of one invocation: a `pids` one (at most `max` processes)
/// and, where the controller can be had, a `memory` one; at the end every
/// member is killed and the cgroups removed.
#[derive(Debug, Default)]
pub struct Cgroups {
    dirs: Vec<PathBuf>,
}

impl Cgroups {
    /// Makes what this machine lets us make (cgroup v1's separate
    /// hierarchies, or one v2 group where those controllers are enabled).
    pub fn create(max_processes: u64, max_memory: u64) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut dirs = Vec::new();
        let mut make = |root: &str, file: &str, value: u64| {
            let dir = PathBuf::from(root).join("loreloom").join(&name);
            if dirs.contains(&dir) {
                return std::fs::write(dir.join(file), value.to_string()).is_ok();
            }
            if std::fs::create_dir_all(&dir).is_err() {
                return false;
            }
            if dir.join(file).is_file() && std::fs::write(dir.join(file), value.to_string()).is_ok()
            {
                dirs.push(dir);
                return true;
            }
            let _ = std::fs::remove_dir(&dir);
            false
        };
        let _ = make("/sys/fs/cgroup/pids", "pids.max", max_processes)
            || make("/sys/fs/cgroup", "pids.max", max_processes);
        let _ = make("/sys/fs/cgroup/memory", "memory.limit_in_bytes", max_memory)
            || make("/sys/fs/cgroup", "memory.max", max_memory);
        Self { dirs }
    }

    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Kills every process in the groups (again while new ones appear).
    pub fn kill_all(&self) {
        for dir in &self.dirs {
            kill_members(dir);
        }
    }
}

fn kill_members(dir: &Path) {
    for _ in 0..50 {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let pids: Vec<i32> = procs
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            return;
        }
        #[cfg(unix)]
        for pid in pids {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        self.kill_all();
        for dir in &self.dirs {
            let removed = (0..50).any(|_| {
                std::fs::remove_dir(dir).is_ok() || {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    false
                }
            });
            if !removed {
                tracing::warn!(target: "skills", "{} could not be removed", dir.display());
            }
        }
    }
}
