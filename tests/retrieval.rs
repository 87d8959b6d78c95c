//! Retrieval quality with the real all-MiniLM-L6-v2 on lore queries and memory recall.
//!
//! Measured as recall@3 and MRR.
//!
//! Retrieval quality with the real all-MiniLM-L6-v2: hand-labelled lore queries and memory recall
//! over the Drowned Reach (recall@3, MRR), and recall scoped to one branch.
//!
//! `./run.sh test` installs the embedding model first.
#![cfg(all(feature = "embed", feature = "store"))]

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use loreloom::campaign::Campaign;
use loreloom::memory::embed::MiniLm;
use loreloom::memory::recall::{Fusion, LoreQuery, MemoryIndex, MemoryQuery};
use loreloom::memory::{Embedder, MemoryEvent, Significance, default_model_dir};
use loreloom::session::controller::Controller;
use loreloom::session::remember::{RecallConfig, SessionMemory};
use loreloom::session::save_files::load_campaign;
use loreloom::store::Store;
use serde_json::Value;

fn embedder() -> Arc<dyn Embedder> {
    static E: OnceLock<Arc<dyn Embedder>> = OnceLock::new();
    E.get_or_init(|| {
        let dir = default_model_dir();
        Arc::new(
            MiniLm::load(&dir)
                .unwrap_or_else(|e| panic!("{e} (run `./run.sh test`, which installs it)")),
        )
    })
    .clone()
}

fn campaign_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("campaigns/drowned-reach")
}

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/retrieval")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str().map(str::to_owned))
        .collect()
}

fn name_of(c: &Campaign, id: &str) -> String {
    c.locations
        .get(id)
        .map(|l| l.name.clone())
        .or_else(|| c.characters.get(id).map(|ch| ch.name.clone()))
        .unwrap_or_else(|| id.replace('_', " "))
}

/// recall@k (a relevant item among the first k) and MRR over ranked lists.
#[allow(clippy::cast_precision_loss, reason = "counts of a few dozen")]
fn score(ranks: &[Option<usize>], k: usize) -> (f64, f64) {
    let n = ranks.len() as f64;
    let recall = ranks.iter().filter(|r| r.is_some_and(|r| r < k)).count() as f64 / n;
    let mrr = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / (r as f64 + 1.0)))
        .sum::<f64>()
        / n;
    (recall, mrr)
}

#[test]
fn lore_retrieval_meets_recall_at_3_on_the_labelled_queries() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", None, 1);
    let campaign = load_campaign(&campaign_dir()).unwrap();
    let mut store = Store::open(&save).unwrap();
    let memory = SessionMemory::open(&mut store, &campaign, Some(embedder())).unwrap();
    assert!(memory.lore.len() > 100, "{} chunks", memory.lore.len());
    let queries = fixture("drowned_reach_lore.json");
    let queries = queries["queries"].as_array().unwrap();
    assert!(queries.len() >= 30);
    let mut hybrid = Vec::new();
    let mut semantic_only = Vec::new();
    let mut keyword_only = Vec::new();
    let mut fused = Vec::new();
    let mut misses = Vec::new();
    for q in queries {
        let text = q["query"].as_str().unwrap();
        let location = q["location"].as_str().map(str::to_owned);
        let present = strs(&q["present"]);
        let names: Vec<String> = present.iter().map(|p| name_of(&campaign, p)).collect();
        let place = location
            .as_deref()
            .map_or(String::new(), |l| name_of(&campaign, l));
        // The query the session builds for a turn (SessionMemory::lore_query),
        // with room for every hit and the secrets a narrator may be shown.
        let ask = memory.lore_query(
            &store,
            (location.as_deref().unwrap_or(""), &place),
            &present,
            &names,
            text,
        );
        let vector = ask.vector.clone().expect("an embedder is loaded");
        let keywords = ask.keywords.clone();
        let lq = LoreQuery {
            max_tokens: 100_000,
            limit: 10,
            include_secrets: true,
            ..ask.query
        };
        let expect: Vec<(String, String)> = q["expect"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["file"].as_str().unwrap().to_owned(),
                    e["contains"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let rank = |hits: &[loreloom::memory::LoreHit]| {
            hits.iter().position(|h| {
                expect
                    .iter()
                    .any(|(f, c)| &h.file_path == f && h.text.contains(c.as_str()))
            })
        };
        let hits = memory.lore.retrieve(&lq, Some(&vector), &keywords);
        let r = rank(&hits);
        if r.is_none_or(|r| r >= 3) {
            misses.push(format!(
                "{} {text:?}: rank {r:?}; top {:?}",
                q["id"],
                hits.iter().take(3).map(|h| &h.chunk_id).collect::<Vec<_>>()
            ));
        }
        hybrid.push(r);
        semantic_only.push(rank(&memory.lore.retrieve(&lq, Some(&vector), &[])));
        let rrf = LoreQuery {
            fusion: Fusion::Rrf,
            ..lq.clone()
        };
        fused.push(rank(&memory.lore.retrieve(&rrf, Some(&vector), &keywords)));
        keyword_only.push(rank(&memory.lore.retrieve(&lq, None, &keywords)));
    }
    let (recall, mrr) = score(&hybrid, 3);
    let (s_recall, s_mrr) = score(&semantic_only, 3);
    let (k_recall, k_mrr) = score(&keyword_only, 3);
    let (f_recall, f_mrr) = score(&fused, 3);
    println!(
        "lore retrieval over {} labelled queries, {} chunks: hybrid (weighted) recall@3 {recall:.3} MRR {mrr:.3}; reciprocal rank fusion {f_recall:.3} / {f_mrr:.3}; semantic only {s_recall:.3} / {s_mrr:.3}; keywords only {k_recall:.3} / {k_mrr:.3}",
        queries.len(),
        memory.lore.len()
    );
    for m in &misses {
        println!("  miss: {m}");
    }
    // Seed 002 SC-042: recall@3 of at least 0.9 (measured 0.909, MRR 0.816).
    assert!(
        recall >= 0.9,
        "recall@3 {recall:.3} is under seed 002's 0.9"
    );
    assert!(
        recall > s_recall.max(k_recall) - 1e-9,
        "hybrid no better than one ranking alone"
    );
}

fn events() -> (Vec<MemoryEvent>, Value) {
    let m = fixture("drowned_reach_memories.json");
    let events = m["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let mut characters = vec!["player".to_owned()];
            characters.extend(strs(&e["characters"]));
            MemoryEvent {
                summary: e["summary"].as_str().unwrap().to_owned(),
                characters,
                location: e["location"].as_str().unwrap().to_owned(),
                significance: Significance::parse(e["significance"].as_str().unwrap_or("")),
                episodic: e["episodic"].as_bool().unwrap_or(false),
                action_type: "action".into(),
                turn: e["turn"].as_u64().unwrap(),
                play_session: 1,
                scene_id: format!("scene-{}", e["turn"]),
            }
        })
        .collect();
    (events, m)
}

#[test]
fn memory_recall_finds_the_labelled_events_with_filters() {
    let (events, m) = events();
    let texts: Vec<&str> = events.iter().map(|e| e.summary.as_str()).collect();
    let vectors = embedder().embed(&texts).unwrap();
    let mut index = MemoryIndex::default();
    for (e, v) in events.iter().zip(&vectors) {
        index.push(e.clone(), Some(v));
    }
    let queries = m["queries"].as_array().unwrap();
    let mut ranks = Vec::new();
    let mut above = 0;
    let mut kept = 0;
    let session_threshold = RecallConfig::default().threshold;
    let mut expected = 0;
    for q in queries {
        let f = &q["filters"];
        let query = MemoryQuery {
            location: f["location"].as_str().map(str::to_owned),
            characters: strs(&f["characters"]),
            turns: f["turns"]
                .as_array()
                .map(|t| (t[0].as_u64().unwrap(), t[1].as_u64().unwrap())),
            limit: 10,
            threshold: -1.0,
            ..MemoryQuery::new(q["query"].as_str().unwrap())
        };
        let v = embedder().embed(&[&query.text]).unwrap().pop().unwrap();
        let hits = index.recall(&query, Some(&v), None);
        let want: Vec<u64> = q["expect_turns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect();
        // Filters hold for every hit.
        for h in &hits {
            assert!(query.location.as_ref().is_none_or(|l| &h.location == l));
            assert!(query.turns.is_none_or(|(a, b)| (a..=b).contains(&h.turn)));
        }
        expected += want.len();
        above += hits
            .iter()
            .filter(|h| want.contains(&h.turn) && h.relevance >= 0.7)
            .count();
        kept += hits
            .iter()
            .filter(|h| want.contains(&h.turn) && h.relevance >= session_threshold)
            .count();
        ranks.push(hits.iter().position(|h| want.contains(&h.turn)));
    }
    let (recall, mrr) = score(&ranks, 3);
    println!(
        "memory recall over {} queries, {} events: recall@3 {recall:.3}, MRR {mrr:.3}; {above} of {expected} expected events score >= 0.7, {kept} >= the session threshold {session_threshold}",
        queries.len(),
        events.len()
    );
    // Measured 0.769 (seed 002 has no recall target for memories; SC-042's 0.9 is for lore).
    assert!(
        recall >= 0.75,
        "memory recall@3 {recall:.3} fell under 0.75"
    );
    // The seed's 0.7 would drop nearly every relevant memory (MiniLM scores a
    // question against a past-tense summary at 0.2–0.6); sessions use a
    // measured threshold that keeps most of them.
    assert!(
        kept * 2 >= expected,
        "{kept} of {expected} pass the session threshold"
    );
}

mod common;

use common::play::{compact_gateway, gateway, new_save, script};
use common::scripted;

/// Three scripted turns through the controller with the real embedder: each
/// leaves a memory event with its vector; the third turn recalls the first and
/// its narrator prompt carries that memory and retrieved lore; a rewind scopes
/// recall to the branch.
#[test]
fn a_session_remembers_earlier_turns_and_shows_them_to_the_narrator() {
    use loreloom::session::controller::{Controller, Report, Step};
    use loreloom::session::play::run_turn;

    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("low_water_crossing"), 5);
    let gateway = gateway(dir.path());
    script(&gateway, (0..3).flat_map(scripted::turn_replies).collect());
    let mut ctl = Controller::open_with(&save, Some(embedder())).unwrap();
    assert!(ctl.memory.has_embedder());
    let actions = [
        "I ask Hesper about the crossing ledger and its missing page",
        "I watch the eel traps bobbing by the quay",
        "I press Hesper again about the page cut from the ledger",
    ];
    let mut narrate_prompt = String::new();
    for (n, line) in actions.iter().enumerate() {
        let Step::Run(input) = ctl.handle(line) else {
            panic!("turn {n} did not run")
        };
        let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
        if n == 2 {
            let first = result
                .records
                .iter()
                .find(|r| r.stage == "narrate")
                .unwrap();
            narrate_prompt = first
                .first()
                .unwrap()
                .messages
                .iter()
                .map(|m| m.content.clone())
                .collect();
            assert_eq!(first.prompt_version, "v5");
        }
        assert!(matches!(
            ctl.finish(&input, Ok(result)),
            Report::Committed { .. }
        ));
    }
    let recalled = &ctl.state.recalled;
    println!("turn 3 recalled: {recalled:#?}");
    let first_memory = &ctl.memory.memories.events[0];
    assert!(
        first_memory.summary.contains("crossing ledger"),
        "{}",
        first_memory.summary
    );
    assert_eq!(
        recalled.memories.first().map(|m| m.turn),
        Some(1),
        "the first turn is the closest memory"
    );
    assert!(
        !recalled.memories.iter().any(|m| m.turn == 3),
        "a turn never recalls itself"
    );
    assert!(
        narrate_prompt.contains(&first_memory.summary),
        "{narrate_prompt}"
    );
    assert!(
        narrate_prompt.contains("What is true in this world"),
        "{narrate_prompt}"
    );
    assert!(
        recalled
            .lore
            .iter()
            .all(|h| !h.file_path.ends_with("secrets.md"))
    );
    assert!(!recalled.lore.is_empty());
    drop(ctl);
    let store = Store::open(&save).unwrap();
    assert_eq!(
        store
            .query_i64("SELECT count(*) FROM memories WHERE embedding IS NOT NULL")
            .unwrap(),
        3
    );
    assert_eq!(
        store
            .query_i64("SELECT count(*) FROM turn_events WHERE event_type = 'recall'")
            .unwrap(),
        3
    );
    drop(store);
    // Rewind to the first turn: what came after is on another branch and never recalled.
    let mut ctl = Controller::open_with(&save, Some(embedder())).unwrap();
    assert_eq!(ctl.memory.memories.len(), 3);
    assert!(matches!(
        ctl.handle("/rewind 1"),
        Step::Report(Report::Rewound { .. })
    ));
    let turns: Vec<u64> = ctl.memory.memories.events.iter().map(|e| e.turn).collect();
    assert_eq!(turns, [1]);
    let again = ctl
        .memory
        .recall_for(ctl.store(), &ctl.state, "the eel traps by the quay");
    assert!(again.memories.iter().all(|m| m.turn == 1), "{again:?}");
}

/// The default small model asks for compact prompts: the narrator gets the
/// remembered move as one "Last time" line and the player's move in the
/// second person, right before the question, and a choice is asked to go
/// back to that move.
#[test]
fn a_compact_prompt_puts_the_remembered_move_right_before_the_question() {
    use loreloom::session::controller::{Controller, Report, Step};
    use loreloom::session::play::run_turn;

    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", Some("green_night"), 5);
    let gateway = compact_gateway(dir.path());
    script(&gateway, (0..2).flat_map(scripted::turn_replies).collect());
    let mut ctl = Controller::open_with(&save, Some(embedder())).unwrap();
    let mut prompts = Vec::new();
    for line in [
        "I ask Hesper about the crossing ledger and its missing page",
        "I press Hesper again about the page cut from my ledger",
    ] {
        let Step::Run(input) = ctl.handle(line) else {
            panic!("`{line}` did not run")
        };
        let result = run_turn(&gateway, ctl.state.clone(), input.clone(), |_| {}).unwrap();
        let prompt = |stage: &str| -> Vec<String> {
            let record = result.records.iter().find(|r| r.stage == stage).unwrap();
            record
                .first()
                .unwrap()
                .messages
                .iter()
                .map(|m| m.content.clone())
                .collect()
        };
        prompts.push((prompt("narrate"), prompt("choices")));
        assert!(matches!(
            ctl.finish(&input, Ok(result)),
            Report::Committed { .. }
        ));
    }
    let first = &ctl.memory.memories.events[0].summary;
    assert!(
        first.starts_with(
            "At Reedmere Quay, you tried to ask Hesper about the crossing ledger and its missing page"
        ),
        "{first}"
    );
    let (narrate, choices) = &prompts[1];
    let (system, user) = (&narrate[0], &narrate[1]);
    println!(
        "compact narrator prompt:\n{system}\n---\n{user}\n--- choices:\n{}",
        choices[1]
    );
    assert!(system.len() < 600, "a compact system message: {system}");
    assert!(
        user.contains(
            "Last time: At Reedmere Quay, you tried to ask Hesper about the crossing ledger"
        ),
        "{user}"
    );
    assert!(
        user.contains("Now: you press Hesper again about the page cut from your ledger."),
        "{user}"
    );
    assert!(
        user.trim_end().ends_with("What happens next?"),
        "the question comes last: {user}"
    );
    assert!(
        !user.contains("The Surveyor"),
        "the player is \"you\", not listed among the others: {user}"
    );
    assert!(
        choices[1].contains("\"Ask Hesper about the crossing ledger and its missing page\""),
        "{}",
        choices[1]
    );
    // The first turn had nothing to remember: no "Last time" line at all.
    assert!(
        !prompts[0].0[1].contains("Last time:"),
        "{}",
        prompts[0].0[1]
    );
}

#[test]
fn a_version_3_save_gets_the_keyword_context_and_a_rebuilt_lore_index() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", None, 1);
    let campaign = load_campaign(&campaign_dir()).unwrap();
    // Turn the fresh save back into what version 3 wrote: a text-only
    // keyword index, no context column, an index already built.
    {
        let mut store = Store::open(&save).unwrap();
        SessionMemory::open(&mut store, &campaign, None).unwrap();
    }
    let conn = rusqlite::Connection::open(&save).unwrap();
    conn.execute_batch(
        "DROP TABLE bookmarks;
         DROP TABLE lore_fts;
         ALTER TABLE lore_chunks DROP COLUMN context;
         ALTER TABLE scenes DROP COLUMN play_minutes;
         CREATE VIRTUAL TABLE lore_fts USING fts5(text, content='lore_chunks',
           content_rowid='rowid', tokenize='porter unicode61');
         INSERT INTO lore_fts(lore_fts) VALUES('rebuild');
         PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    let mut store = Store::open(&save).unwrap();
    assert_eq!(store.lore_keywords("deckhand", 10).unwrap(), Vec::new());
    SessionMemory::open(&mut store, &campaign, None).unwrap();
    // "Deckhand" is in Tamsin's role, which only her chunks' context carries.
    let hits = store.lore_keywords("deckhand", 10).unwrap();
    assert!(
        hits.iter()
            .any(|(id, _)| id.starts_with("characters/npcs/tamsin_reed/")),
        "{hits:?}"
    );
    let version: i64 = rusqlite::Connection::open(&save)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, loreloom::store::SCHEMA_VERSION);
}

/// Seed 002 §4.2.1: a choice that leans on a stat the persona is low in is
/// marked unlikely; the stat is the one whose cue (from the ruleset's stat
/// guide) the move comes closest to. The first twelve moves chose the
/// threshold; the other sixteen were written afterwards and held out.
#[test]
fn choices_that_lean_on_a_low_stat_are_marked_unlikely() {
    let dir = tempfile::tempdir().unwrap();
    let save = new_save(dir.path(), "drowned-reach", None, 1);
    let mut ctl = Controller::open_with(&save, Some(embedder())).unwrap();
    let set = |ctl: &mut Controller, value: i64| {
        let block = &mut ctl.state.world.characters.get_mut("player").unwrap().stats;
        for stat in ["nerve", "wits", "heart", "guile"] {
            block.insert(stat.into(), value.into());
        }
    };
    set(&mut ctl, -1);
    let cases = [
        ("Persuade Hesper to tell you the truth", "heart"),
        ("Comfort Tamsin while she cries", "heart"),
        ("Confess to Hesper why you came", "heart"),
        ("Slip past the guard unseen", "guile"),
        ("Lie to Crane about the ledger", "guile"),
        ("Pocket the key while Crane looks away", "guile"),
        ("Leap across to the moving ferry", "nerve"),
        ("Stand your ground against the flood", "nerve"),
        ("Climb the sluice tower in the wind", "nerve"),
        ("Study the torn edge of the ledger page", "wits"),
        ("Work out who could read the gate records", "wits"),
        ("Read the tide chart by the window", "wits"),
        // Held out.
        ("Apologise to Brinny for the town's silence", "heart"),
        ("Win Ned's trust by telling him your own fears", "heart"),
        ("Beg Crane to spare the Lowmarsh", "heart"),
        ("Reassure the frightened passengers", "heart"),
        ("Hide in the shadows of the toll house", "guile"),
        ("Swap the real ledger page for a blank one", "guile"),
        ("Bluff your way past the Board's clerk", "guile"),
        ("Sneak aboard the punt before dawn", "guile"),
        ("Dive into the Reach after the lantern", "nerve"),
        ("Face down Osric and his rope-axe", "nerve"),
        ("Run along the flooded dyke in the dark", "nerve"),
        ("Hold the rope while the ferry swings", "nerve"),
        ("Recall what the gate-books said about the sluice", "wits"),
        ("Examine the green stains on the lantern glass", "wits"),
        ("Deduce who cut the rope from the knots", "wits"),
        ("Search the toll house for hidden papers", "wits"),
    ];
    let (mut right, mut wrong) = (0, 0);
    for (choice, want) in cases {
        let got = ctl.memory.difficulty(&ctl.state, choice);
        println!("{choice:?} -> {got:?} (want {want})");
        if let Some(d) = &got {
            // 2d6 - 1 beats failure (7+) on 8+: 15 of 36.
            assert!((d.chance - 15.0 / 36.0).abs() < 1e-9, "{d:?}");
            assert_eq!(d.to_string(), format!("unlikely: {} -1, 42%", d.stat));
            if d.stat == want {
                right += 1;
            } else {
                wrong += 1;
            }
        }
    }
    println!(
        "difficulty marks over {} labelled moves: {right} right, {wrong} wrong, {} unmarked",
        cases.len(),
        cases.len() - right - wrong
    );
    // Measured 15 right, 3 wrong: a floor, so a change that marks worse shows.
    assert!(right >= 15 && wrong <= 3, "{right} right, {wrong} wrong");
    for neutral in [
        "Wait",
        "Look around",
        "Ask Hesper about the green lanterns",
        "Walk down Ferry Street to the quay",
        "Wait for the ferry to come in",
        "Tell Tamsin you saw her at the landing",
    ] {
        assert_eq!(
            ctl.memory.difficulty(&ctl.state, neutral),
            None,
            "{neutral}"
        );
    }
    // A persona good at everything is never warned.
    set(&mut ctl, 2);
    for (choice, _) in cases {
        assert_eq!(ctl.memory.difficulty(&ctl.state, choice), None, "{choice}");
    }
}
