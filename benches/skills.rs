//! Skill invocations (seed 002 SC-005): how many end within their timeout, and the overhead.
//!
//! Skill invocations (seed 002 SC-005): 1,000 invocations of a well-behaved skill through the
//! invoker (process group, `prlimit`, reader threads, caps), how many end within their timeout
//! (target ≥ 99%), and the overhead from process start to `done` (median and 95th percentile), for
//! a shell script and a Python one.

use std::path::Path;
use std::time::{Duration, Instant};

use loreloom::skills::invoke::{Limits, Request, interpreter, invoke};
use loreloom::skills::manifest::discover_all_approved;

fn main() {
    // `cargo test --benches` runs this once in test mode; the figures need `cargo bench`.
    let bench = std::env::args().any(|a| a == "--bench");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The fault skills are ours: approved as they are, in memory.
    let found = discover_all_approved(&[root.join("skills"), root.join("tests/skills")]);
    for (name, input, runs) in [
        ("well-behaved", "{}", if bench { 1000 } else { 5 }),
        (
            "dice-roller",
            r#"{"formula": "2d6+1", "seed": 1}"#,
            if bench { 200 } else { 2 },
        ),
    ] {
        let skill = found.get(name).expect("discovered");
        let script = &skill.manifest.scripts[0];
        let program = interpreter(Path::new(&script.path))
            .map_or_else(|| skill.dir.join(&script.path), Into::into);
        let request = Request {
            program,
            args: vec![script.path.clone()],
            dir: skill.dir.clone(),
            stdin: format!(
                r#"{{"requestId":"b","tool":"{name}","operation":"run","input":{input}}}"#
            )
            .into_bytes(),
            limits: Limits {
                timeout: Duration::from_secs(30),
                ..Limits::default()
            },
            ..Request::default()
        };
        let mut times = Vec::with_capacity(runs);
        let mut within = 0u32;
        let started = Instant::now();
        for _ in 0..runs {
            let t = Instant::now();
            let run = invoke(&request);
            times.push(t.elapsed());
            if run.ok() {
                within += 1;
            }
        }
        times.sort();
        let pct = |p: usize| times[(times.len() * p / 100).min(times.len() - 1)];
        println!(
            "{name}: {within}/{runs} ended ok within the timeout ({:.1}%); median {:.1} ms, p95 {:.1} ms, total {:.1} s",
            100.0 * f64::from(within) / f64::from(u32::try_from(runs).unwrap_or(u32::MAX)),
            pct(50).as_secs_f64() * 1000.0,
            pct(95).as_secs_f64() * 1000.0,
            started.elapsed().as_secs_f64()
        );
        assert!(
            u64::from(within) * 100 >= u64::try_from(runs).unwrap_or(u64::MAX) * 99,
            "SC-005: at least 99% within the timeout"
        );
    }
}
