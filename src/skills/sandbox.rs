//! The skill sandbox launcher (#25, seed 002 §10.8): Landlock and a `pids` cgroup, then `exec`.
//!
//! `loreloom __skill-sandbox --read DIR… --write DIR… -- PROGRAM ARGS…` confines its own file access with Landlock (read: the system's folders and the skill's own; read and write: the skill's `data/`, where its `TMPDIR` is too; nothing else, so another skill's folder can be neither read nor written), then becomes the script (`exec`). Before that it joins the invocation's `pids` cgroup (`PidsCgroup`, where this machine lets Loreloom make one), which bounds how many processes the script may have (a fork bomb stops there, root or not) and lets the invoker kill every one of them at the end, even those that left the process group. Best effort: a kernel without Landlock runs the script unconfined and says so on stderr.

use std::path::PathBuf;

/// The system folders a script may read (interpreters, libraries, devices).
pub const SYSTEM: [&str; 12] = [
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev",
    "/run",
];

/// What the kernel enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforced {
    Fully,
    Partly,
    Not,
}

/// Device files a script may write as well as read.
#[cfg(target_os = "linux")]
const SINKS: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Confines this process (and what it execs) to reading `read` and
/// reading and writing `write`.
#[cfg(target_os = "linux")]
pub fn confine(read: &[PathBuf], write: &[PathBuf]) -> Result<Enforced, landlock::RulesetError> {
    use landlock::{
        ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
        path_beneath_rules,
    };
    let abi = ABI::V5;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
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

#[cfg(not(target_os = "linux"))]
pub fn confine(
    _read: &[PathBuf],
    _write: &[PathBuf],
) -> Result<Enforced, std::convert::Infallible> {
    Ok(Enforced::Not)
}

/// A `pids` cgroup for one invocation: at most `max` processes; at the
/// end every member is killed and the cgroup removed.
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Makes one under the `pids` controller (cgroup v1's, or v2's where it
    /// is enabled), or `None` where this machine does not let us.
    pub fn create(max: u64) -> Option<Self> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        for root in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"] {
            let dir = PathBuf::from(root).join("loreloom").join(&name);
            if std::fs::create_dir_all(&dir).is_err() {
                continue;
            }
            if dir.join("pids.max").is_file()
                && std::fs::write(dir.join("pids.max"), max.to_string()).is_ok()
            {
                return Some(Self { dir });
            }
            let _ = std::fs::remove_dir(&dir);
        }
        None
    }

    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Kills every process in the cgroup (again while new ones appear).
    pub fn kill_all(&self) {
        for _ in 0..50 {
            let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
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
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        self.kill_all();
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        tracing::warn!(target: "skills", "{} could not be removed", self.dir.display());
    }
}

/// The launcher's body: join the cgroup, confine, then become `program`.
/// Returns only when that fails (the exit code to use).
pub fn launch(
    cgroup: Option<&std::path::Path>,
    read: &[PathBuf],
    write: &[PathBuf],
    program: &str,
    args: &[String],
) -> i32 {
    if let Some(dir) = cgroup
        && let Err(e) = std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
    {
        eprintln!("loreloom sandbox: {}: {e}", dir.display());
    }
    match confine(read, write) {
        Ok(Enforced::Fully) => {}
        Ok(other) => eprintln!("loreloom sandbox: Landlock {other:?} enforced on this kernel"),
        Err(e) => eprintln!("loreloom sandbox: Landlock not applied: {e}"),
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = std::process::Command::new(program).args(args).exec();
        eprintln!("loreloom sandbox: {program}: {e}");
        127
    }
    #[cfg(not(unix))]
    {
        match std::process::Command::new(program).args(args).status() {
            Ok(s) => s.code().unwrap_or(1),
            Err(e) => {
                eprintln!("loreloom sandbox: {program}: {e}");
                127
            }
        }
    }
}
