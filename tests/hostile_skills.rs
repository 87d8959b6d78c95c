//! A hostile campaign skill (#43): every probe denied, as root and as `nobody`; nothing survives.
//!
//! The `hostile` fixture skill (`tests/skills/hostile`) comes in a campaign's `skills/` folder,
//! is approved through `loreloom skills approve`, and runs through `loreloom skills run`, the real
//! binary and its sandbox, against targets this test sets up outside it: a TCP port and a UDP port
//! on loopback, an abstract and a path Unix socket, a folder of "keys", and a decoy "game"
//! process holding a secret in its environment. Run as root, the set runs again as `nobody`
//! (through `setpriv`), where the kernel's process limit and no cgroups are what an ordinary
//! player has. A control run of the same probe without the sandbox shows the probes do reach
//! their targets when nothing stops them.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};

/// How many times the quick probes run in each mode (the flood and the
/// allocation run fewer: they take seconds).
fn runs() -> usize {
    std::env::var("LORELOOM_PROBE_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100)
}

/// The user a mode runs as: `None` is whoever runs the test.
#[derive(Clone, Copy, Debug)]
struct As(Option<u32>);

const NOBODY: u32 = 65534;

/// Tells each rig's abstract socket from the others'.
static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// What one mode sets up: the campaign's skills, a data dir, the binary
/// where that user can run it, and the targets.
struct Rig {
    dir: tempfile::TempDir,
    skills: PathBuf,
    data: PathBuf,
    binary: PathBuf,
    tcp: std::net::TcpListener,
    udp: std::net::UdpSocket,
    abstract_listener: std::os::unix::net::UnixListener,
    abstract_name: String,
    path_listener: std::os::unix::net::UnixListener,
    path_socket: PathBuf,
    secret_dir: PathBuf,
    decoy: Child,
    user: As,
}

fn open_to_all(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn chown_all(path: &Path, uid: u32) {
    let ok = Command::new("chown")
        .arg("-R")
        .arg(format!("{uid}:{uid}"))
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "chown {}", path.display());
}

fn command(user: As, program: &Path) -> Command {
    match user.0 {
        Some(uid) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={uid}"))
                .arg("--clear-groups")
                .arg(program);
            c
        }
        None => Command::new(program),
    }
}

impl Rig {
    fn new(user: As) -> Self {
        let dir = tempfile::tempdir().unwrap();
        open_to_all(dir.path(), 0o755);
        let skills = dir.path().join("campaign/skills");
        std::fs::create_dir_all(&skills).unwrap();
        // The hostile probes, and the fork bomb the other skill tests use.
        for fixture in ["hostile", "fork-bomb"] {
            let ok = Command::new("cp")
                .arg("-r")
                .arg(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/skills")
                        .join(fixture),
                )
                .arg(skills.join(fixture))
                .status()
                .unwrap()
                .success();
            assert!(ok);
        }
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        // The binary and what it reads (the manifest contract, the bundled
        // skills) where any user can reach them: the target dir and the
        // checkout may be private (a clone under /root).
        for shipped in ["schemas", "skills"] {
            let ok = Command::new("cp")
                .arg("-r")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join(shipped))
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(ok, "copying {shipped}");
        }
        let binary = dir.path().join("bin/loreloom");
        std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
        // Copied by `cp`, not in this process: a copy written here is open for writing
        // in any child the other test's thread forks meanwhile, and exec'ing it then
        // fails with ETXTBSY ("Text file busy") until that child execs.
        let ok = Command::new("cp")
            .arg(env!("CARGO_BIN_EXE_loreloom"))
            .arg(&binary)
            .status()
            .unwrap()
            .success();
        assert!(ok, "copying the binary");
        open_to_all(&binary, 0o755);
        // "Keys" the player's user can read: only the sandbox stands between.
        let secret_dir = dir.path().join("dot-ssh");
        std::fs::create_dir_all(&secret_dir).unwrap();
        std::fs::write(secret_dir.join("id_ed25519"), "PRIVATE KEY").unwrap();
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let abstract_name = format!(
            "loreloom-probe-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let abstract_listener = {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes())
                .unwrap();
            std::os::unix::net::UnixListener::bind_addr(&addr).unwrap()
        };
        abstract_listener.set_nonblocking(true).unwrap();
        let path_socket = dir.path().join("bus");
        let path_listener = std::os::unix::net::UnixListener::bind(&path_socket).unwrap();
        path_listener.set_nonblocking(true).unwrap();
        open_to_all(&path_socket, 0o777);
        if let Some(uid) = user.0 {
            chown_all(&skills, uid);
            chown_all(&data, uid);
            chown_all(&secret_dir, uid);
        }
        // The "game": a process of the same user with a secret in its environment.
        let decoy = command(user, Path::new("/bin/sleep"))
            .arg("120")
            .env("OPENAI_API_KEY", "sk-decoy-secret")
            .spawn()
            .unwrap();
        let rig = Self {
            dir,
            skills,
            data,
            binary,
            tcp,
            udp,
            abstract_listener,
            abstract_name,
            path_listener,
            path_socket,
            secret_dir,
            decoy,
            user,
        };
        for fixture in ["hostile", "fork-bomb"] {
            let approved = rig.loreloom(&["skills", "approve", fixture, "--yes"]);
            assert!(
                approved.status.success(),
                "{}{}",
                String::from_utf8_lossy(&approved.stdout),
                String::from_utf8_lossy(&approved.stderr)
            );
        }
        rig
    }

    fn loreloom(&self, args: &[&str]) -> Output {
        command(self.user, &self.binary)
            .args(args)
            .arg("--dir")
            .arg(&self.skills)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("LORELOOM_DATA_DIR", &self.data)
            .env("OPENAI_API_KEY", "sk-player-secret")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn input(&self) -> Value {
        json!({
            "tcp_port": self.tcp.local_addr().unwrap().port(),
            "udp_port": self.udp.local_addr().unwrap().port(),
            "abstract": self.abstract_name,
            "unix_socket": self.path_socket,
            "secret_dir": self.secret_dir,
            "game_pid": self.decoy.id(),
            "escape_path": self.dir.path().join("escaped.txt"),
        })
    }

    /// Runs `skills run hostile/SCRIPT`; its log event's fields, and the output.
    fn run(&self, script: &str) -> (Map<String, Value>, Output) {
        self.run_tool(&format!("hostile/{script}"))
    }

    /// Runs `skills run SKILL/SCRIPT`; its log event's fields, and the output.
    fn run_tool(&self, tool: &str) -> (Map<String, Value>, Output) {
        let out = self.loreloom(&["skills", "run", tool, "--input", &self.input().to_string()]);
        let fields = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|e| (e["type"] == "log").then(|| e["fields"].as_object().cloned()))
            .flatten()
            .unwrap_or_default();
        (fields, out)
    }

    /// Nothing reached any of the targets.
    fn nothing_arrived(&self) -> Vec<String> {
        let mut arrived = Vec::new();
        if let Ok((mut s, _)) = self.tcp.accept() {
            let mut got = Vec::new();
            let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
            let _ = s.read_to_end(&mut got);
            arrived.push(format!("tcp: {:?}", String::from_utf8_lossy(&got)));
        }
        let mut buf = [0u8; 64];
        if let Ok(n) = self.udp.recv(&mut buf) {
            arrived.push(format!("udp: {n} bytes"));
        }
        if self.abstract_listener.accept().is_ok() {
            arrived.push("abstract socket".into());
        }
        if self.path_listener.accept().is_ok() {
            arrived.push("path socket".into());
        }
        arrived
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = self.decoy.kill();
        let _ = self.decoy.wait();
    }
}

fn alive(pid: i32) -> bool {
    // A zombie is not alive: it runs nothing.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Every mode this machine can run: the current user, and `nobody` too
/// when that is root.
fn modes() -> Vec<As> {
    let mut modes = vec![As(None)];
    if is_root() && Path::new("/usr/bin/setpriv").exists() {
        modes.push(As(Some(NOBODY)));
    }
    modes
}

#[test]
fn every_probe_of_a_hostile_campaign_skill_is_denied_and_nothing_survives() {
    for user in modes() {
        let rig = Rig::new(user);
        // Where the kernel does not enforce all of it, the launcher refuses.
        if !loreloom::skills::sandbox::enforceable() {
            let (_, out) = rig.run("probe");
            let said = String::from_utf8_lossy(&out.stderr);
            assert!(said.contains("refused"), "{user:?}: {said}");
            continue;
        }
        for run in 0..runs() {
            let (probes, out) = rig.run("probe");
            let said = format!(
                "{user:?} run {run}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(probes.len(), 17, "{said}");
            if run == 0 {
                eprintln!("{user:?}: {}", Value::Object(probes.clone()));
            }
            let allowed: Vec<String> = probes
                .iter()
                .filter(|(_, v)| !v.as_str().is_some_and(|s| s.starts_with("denied")))
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            assert!(
                allowed.is_empty(),
                "probes that got through: {allowed:?}\n{said}"
            );
            assert!(
                rig.nothing_arrived().is_empty(),
                "{:?}\n{said}",
                rig.nothing_arrived()
            );
            // A daemon that left its group and session is gone with the run.
            let pid_file = rig.skills.join("hostile/data/daemon.pid");
            let _ = std::fs::remove_file(&pid_file);
            let (_, out) = rig.run("daemon");
            assert!(
                out.status.success(),
                "{user:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let pid: i32 = std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert!(!alive(pid), "{user:?} run {run}: the daemon {pid} survived");
        }
        assert!(!rig.dir.path().join("escaped.txt").exists());
        // A flood of files stops at the cap and what it added is removed.
        let (_, out) = rig.run("files");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{user:?}: {said}");
        assert!(said.contains("more than 1000 files"), "{user:?}: {said}");
        let left = walk_count(&rig.skills.join("hostile/data"));
        assert!(left <= 1_000, "{user:?}: {left} entries left in data/");
        // A fork bomb stops at the process limit, and none of it survives.
        let (fields, out) = rig.run_tool("fork-bomb/run");
        let said = format!(
            "{user:?}: {fields:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{said}");
        let made = fields
            .get("made")
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX);
        assert!(made < 64, "{said}");
        let pids = std::fs::read_to_string(rig.skills.join("fork-bomb/data/pids.txt")).unwrap();
        let pids: Vec<i32> = pids.lines().filter_map(|l| l.parse().ok()).collect();
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            pids.iter().all(|p| !alive(*p))
        });
        assert!(
            gone,
            "{user:?}: the bomb's children outlived the run: {pids:?}"
        );
        // A 4 GiB allocation is refused; 1.6 GiB over four processes is
        // refused where the invocation has a memory cgroup (root here), and
        // is within what an ordinary user's skill may use (1 GiB a process).
        let (fields, out) = rig.run("memory");
        let said = format!(
            "{user:?}: {fields:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{said}");
        assert_eq!(
            fields.get("allocate_4gib").and_then(Value::as_str),
            Some("denied (MemoryError)"),
            "{said}"
        );
        if user.0.is_none() && is_root() && Path::new("/sys/fs/cgroup/memory").is_dir() {
            assert!(
                fields
                    .get("spread_1600mib")
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.starts_with("denied")),
                "{said}"
            );
        }
    }
}

fn walk_count(dir: &Path) -> usize {
    let mut count = 0;
    let mut folders = vec![dir.to_owned()];
    while let Some(f) = folders.pop() {
        for e in std::fs::read_dir(&f).unwrap().flatten() {
            count += 1;
            if e.file_type().unwrap().is_dir() {
                folders.push(e.path());
            }
        }
    }
    count
}

/// The control: the same probe with no sandbox reaches its targets, so
/// the denials above are the sandbox's doing.
#[test]
fn without_the_sandbox_the_same_probes_get_through() {
    use loreloom::skills::invoke::{Limits, Request, invoke};
    let rig = Rig::new(As(None));
    let input = json!({"requestId": "r", "tool": "t", "operation": "run", "input": rig.input()});
    let result = invoke(&Request {
        program: "python3".into(),
        args: vec!["scripts/probe.py".into()],
        dir: rig.skills.join("hostile"),
        stdin: input.to_string().into_bytes(),
        limits: Limits::default(),
        ..Request::default()
    });
    let fields = result
        .events
        .iter()
        .find_map(|e| match e {
            loreloom::skills::protocol::Event::Log { fields, .. } => fields.clone(),
            _ => None,
        })
        .unwrap();
    for probe in [
        "tcp_connect",
        "tcp_listen",
        "udp_send",
        "abstract_socket",
        "path_socket",
        "ssh_keys",
        "game_environ",
        "game_cmdline",
        "kill_game",
        "kill_parent",
        "write_outside",
    ] {
        assert!(
            fields[probe]
                .as_str()
                .is_some_and(|s| s.starts_with("allowed")),
            "{probe}: {}",
            fields[probe]
        );
    }
    assert!(!rig.nothing_arrived().is_empty());
}
