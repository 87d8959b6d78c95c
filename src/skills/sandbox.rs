//! The skill sandbox launcher (issue #25, seed 002 §10.8): `loreloom __skill-sandbox --read DIR… --write DIR… -- PROGRAM ARGS…` confines its own file access with Landlock (read: the system's folders and the skill's own; read and write: the skill's `data/`, where its `TMPDIR` is too; nothing else, so another skill's folder can be neither read nor written), then becomes the script (`exec`). Best effort: a kernel without Landlock runs the script unconfined and says so on stderr.

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

/// Confines this process (and what it execs) to reading `read` and
/// reading and writing `write`.
#[cfg(target_os = "linux")]
pub fn confine(read: &[PathBuf], write: &[PathBuf]) -> Result<Enforced, String> {
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
        .and_then(landlock::RulesetCreated::restrict_self)
        .map_err(|e| e.to_string())?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => Enforced::Fully,
        RulesetStatus::PartiallyEnforced => Enforced::Partly,
        RulesetStatus::NotEnforced => Enforced::Not,
    })
}

#[cfg(not(target_os = "linux"))]
pub fn confine(_read: &[PathBuf], _write: &[PathBuf]) -> Result<Enforced, String> {
    Ok(Enforced::Not)
}

/// The launcher's body: confine, then become `program`. Returns only when
/// that fails (the exit code to use).
pub fn launch(read: &[PathBuf], write: &[PathBuf], program: &str, args: &[String]) -> i32 {
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
