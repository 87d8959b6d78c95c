//! Skill routing (#42): how many labelled moves reach the skill they call for, and none the rest.
//!
//! Each move of `benches/data/skill-moves.json` (the test set, written blind
//! by someone who saw only the skills' descriptions) and of
//! `skill-moves-dev.json` (the set the triggers were written beside) is
//! routed among the bundled
//! skills as a turn routes it (`skills::route`: all-MiniLM-L6-v2 against the
//! moves each skill lists). A move the router fits to a skill makes the
//! planner's contract call that skill and only it (`skills::planner`: the
//! tool paths narrowed to it, at least one tool, its input to the script's
//! schema), so the plan calls a fitting skill exactly when the routing is
//! right. Target: at least 80% of the test set routed right (measured: 70%).

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
    // Every skill's closest move with its score; each threshold decides on them.
    router.threshold = -1.0;
    let dev = routed(
        &router,
        &found,
        &root.join("benches/data/skill-moves-dev.json"),
    );
    let test = routed(&router, &found, &root.join("benches/data/skill-moves.json"));
    for t in [0.45, 0.5, 0.55, MATCH] {
        println!(
            "threshold {t:.2}: development set {:.0}% routed right, test set {:.0}%",
            share(&dev, t),
            share(&test, t)
        );
    }
    let dev = measure(&dev, MATCH, "benches/data/skill-moves-dev.json");
    let test = measure(&test, MATCH, "benches/data/skill-moves.json");
    println!(
        "at the shipped threshold {MATCH}: development set {dev:.0}% routed right; test set {test:.0}%"
    );
    // #42's target is 80%; measured blind it is 70% (from 37% before the
    // skills named triggers and the threshold moved), so it is reported, and
    // what is guarded is that it does not fall back.
    println!(
        "#42 target: 80% of the test set routed right: {}",
        if test >= 80.0 { "met" } else { "not met" }
    );
    assert!(
        test >= 70.0 && dev >= 88.0,
        "routing fell back below what was measured (test 70%, development 88.9%)"
    );
}

/// One labelled move and what the router made of it.
struct Routed {
    text: String,
    label: Option<String>,
    fits: Vec<Fit>,
}

impl Routed {
    /// The skill the move goes to at `threshold` (the closest fit at or above it).
    fn choice(&self, threshold: f32) -> Option<&Fit> {
        self.fits.first().filter(|f| f.score >= threshold)
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

/// The share of `set` routed right at `threshold`.
fn share(set: &[Routed], threshold: f32) -> f64 {
    let right = set
        .iter()
        .filter(|m| m.choice(threshold).map(|f| f.skill.as_str()) == m.label.as_deref())
        .count();
    pct(right, set.len())
}

/// Prints each move of `set` as routed at `threshold` and answers the share routed right.
fn measure(set: &[Routed], threshold: f32, name: &str) -> f64 {
    println!("{name}:");
    let (mut right, mut called, mut wanted, mut stray) = (0usize, 0usize, 0usize, 0usize);
    for m in set {
        let first = m.choice(threshold).map(|f| f.skill.as_str());
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
