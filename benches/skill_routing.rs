//! Skill routing (#42): of 30 labelled moves, how many reach the skill they call for, and none the rest.
//!
//! Each move of `benches/data/skill-moves.json` is routed among the bundled
//! skills as a turn routes it (`skills::route`: all-MiniLM-L6-v2 against the
//! moves each skill lists). A move the router fits to a skill makes the
//! planner's contract call that skill and only it (`skills::planner`: the
//! tool paths narrowed to it, at least one tool, its input to the script's
//! schema), so the plan calls a fitting skill exactly when the routing is
//! right. Target: at least 80% of the labelled moves routed right.

use std::path::Path;
use std::sync::Arc;

use loreloom::memory::default_model_dir;
use loreloom::memory::embed::MiniLm;
use loreloom::skills::manifest::discover;
use loreloom::skills::route::Router;
use serde_json::Value;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("benches/data/skill-moves.json")).expect("the set"),
    )
    .expect("the set is JSON");
    let moves = set["moves"].as_array().expect("moves");
    let found = discover(&[root.join("skills")]);
    let embedder = MiniLm::load(&default_model_dir())
        .unwrap_or_else(|e| panic!("{e} (run `./run.sh test`, which installs it)"));
    let router = Router::new(Arc::new(embedder));
    let (mut right, mut called, mut wanted, mut stray) = (0usize, 0usize, 0usize, 0usize);
    for m in moves {
        let text = m["move"].as_str().expect("a move");
        let label = m["skill"].as_str();
        let routing = router.route(&found, text).expect("routed");
        let first = routing.fits.first().map(|f| f.skill.as_str());
        let ok = first == label;
        right += usize::from(ok);
        if label.is_some() {
            wanted += 1;
            called += usize::from(ok);
        } else {
            stray += usize::from(first.is_some());
        }
        let best = routing.fits.first().map_or_else(
            || "none".to_owned(),
            |f| format!("{} ({:.2}, like \"{}\")", f.skill, f.score, f.cue),
        );
        println!(
            "{} {text:<58} → {best}{}",
            if ok { "ok  " } else { "MISS" },
            label.map_or_else(String::new, |l| format!("  [wants {l}]"))
        );
    }
    let pct = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "routed right: {right}/{} ({:.0}%); moves that call a skill routed to it: {called}/{wanted} ({:.0}%); moves that call none routed to one: {stray}",
        moves.len(),
        pct(right, moves.len()),
        pct(called, wanted)
    );
    assert!(
        right * 100 >= moves.len() * 80,
        "#42: at least 80% of the labelled moves routed to the skill they call for"
    );
}
