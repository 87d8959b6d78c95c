//! Skill routing (#42): how many labelled moves reach the skill they call for, and none the rest.
//!
//! Each move of `benches/data/skill-moves.json` (the test set, written blind
//! by someone who saw only the skills' descriptions), of `skill-moves-test2.json`
//! (a second such set of 40, written when the first had been measured and its
//! misses read) and of `skill-moves-dev.json` (the set the triggers, the
//! threshold and its near rule were chosen on) is
//! routed among the bundled
//! skills as a turn routes it (`skills::route`: all-MiniLM-L6-v2 against the
//! moves each skill lists). A move the router fits to a skill makes the
//! planner's contract call that skill and only it (`skills::planner`: the
//! tool paths narrowed to it, at least one tool, its input to the script's
//! schema), so the plan calls a fitting skill exactly when the routing is
//! right. Target: at least 80% of the test set routed right.

use std::path::Path;
use std::sync::Arc;

use loreloom::memory::default_model_dir;
use loreloom::memory::embed::MiniLm;
use loreloom::skills::manifest::{Discovery, discover};
use loreloom::skills::route::{Fit, MATCH, Router};
use serde_json::Value;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = discover(&[root.join("skills")]);
    let embedder = MiniLm::load(&default_model_dir())
        .unwrap_or_else(|e| panic!("{e} (run `./run.sh test`, which installs it)"));
    let mut router = Router::new(Arc::new(embedder));
    let sets = [
        "benches/data/skill-moves-dev.json",
        "benches/data/skill-moves.json",
        "benches/data/skill-moves-test2.json",
    ];
    // The thresholds either side of the shipped one; the shipped one is measured move by move below.
    for t in [0.45, 0.55] {
        router.threshold = t;
        let shares: Vec<String> = sets
            .iter()
            .map(|s| format!("{s} {:.0}%", share(&routed(&router, &found, &root.join(s)))))
            .collect();
        println!("threshold {t:.2}: {}", shares.join(", "));
    }
    router.threshold = MATCH;
    let [dev, test, test2] = sets.map(|s| measure(&routed(&router, &found, &root.join(s)), s));
    println!(
        "at the shipped threshold {MATCH}: development set {dev:.0}% routed right; test set {test:.0}%; second test set {test2:.0}%"
    );
    println!(
        "#42 target: 80% of the test set routed right: {}",
        if test >= 80.0 { "met" } else { "not met" }
    );
    // What is guarded is that routing does not fall back below what was
    // measured (#42: test 70% → 80%, second test 65% → 78%, development
    // 89% → 94% when triggers needed a likeness and near moves stood clear).
    assert!(
        test >= 80.0 && test2 >= 77.5 && dev >= 93.0,
        "routing fell back below what was measured (test 80%, second test 77.5%, development 94.4%)"
    );
}

/// One labelled move and what the router made of it.
struct Routed {
    text: String,
    label: Option<String>,
    fits: Vec<Fit>,
}

impl Routed {
    /// The skill the move goes to (the closest fit; a trigger's comes first).
    fn choice(&self) -> Option<&Fit> {
        self.fits.first()
    }
}

/// Every move of the set in `file`, routed.
fn routed(router: &Router, found: &Discovery, file: &Path) -> Vec<Routed> {
    let set: Value = serde_json::from_str(&std::fs::read_to_string(file).expect("the set"))
        .expect("the set is JSON");
    set["moves"]
        .as_array()
        .expect("moves")
        .iter()
        .map(|m| {
            let text = m["move"].as_str().expect("a move").to_owned();
            let fits = router.route(found, &text).expect("routed").fits;
            Routed {
                label: m["skill"].as_str().map(str::to_owned),
                text,
                fits,
            }
        })
        .collect()
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * f64::from(u32::try_from(a).unwrap_or(u32::MAX))
        / f64::from(u32::try_from(b.max(1)).unwrap_or(u32::MAX))
}

/// The share of `set` routed right.
fn share(set: &[Routed]) -> f64 {
    let right = set
        .iter()
        .filter(|m| m.choice().map(|f| f.skill.as_str()) == m.label.as_deref())
        .count();
    pct(right, set.len())
}

/// Prints each move of `set` as routed and answers the share routed right.
fn measure(set: &[Routed], name: &str) -> f64 {
    println!("{name}:");
    let (mut right, mut called, mut wanted, mut stray) = (0usize, 0usize, 0usize, 0usize);
    for m in set {
        let first = m.choice().map(|f| f.skill.as_str());
        let ok = first == m.label.as_deref();
        right += usize::from(ok);
        if m.label.is_some() {
            wanted += 1;
            called += usize::from(ok);
        } else {
            stray += usize::from(first.is_some());
        }
        let best = m.fits.first().map_or_else(
            || "none".to_owned(),
            |f| format!("{} ({:.2}, like \"{}\")", f.skill, f.score, f.cue),
        );
        println!(
            "{} {:<58} → {best}{}",
            if ok { "ok  " } else { "MISS" },
            m.text,
            m.label
                .as_ref()
                .map_or_else(String::new, |l| format!("  [wants {l}]"))
        );
    }
    println!(
        "routed right: {right}/{} ({:.0}%); moves that call a skill routed to it: {called}/{wanted} ({:.0}%); moves that call none routed to one: {stray}",
        set.len(),
        pct(right, set.len()),
        pct(called, wanted)
    );
    pct(right, set.len())
}
