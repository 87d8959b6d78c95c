//! The authoring pipeline (#23): a project from spark through DREAM with the scripted model, its gates, review exports and byte-identical rollback; the graph store refusing what seed 000 forbids, with nothing written.

#![cfg(feature = "store")]

mod common;

use std::path::Path;

use loreloom::author::{EdgeType, Graph, GraphError, Mutation, NodeType, Rule, Stage};
use serde_json::json;

/// DREAM's three calls, answered by the scripted model.
fn dream_script(dir: &Path) -> std::path::PathBuf {
    use common::scripted::reply;
    let replies = vec![
        reply(
            "author/discuss",
            "A keeper who trades years of her life for storms. Is the sea an enemy or a partner in a bargain?",
        ),
        reply(
            "author/summarize",
            "Folk horror on a lighthouse island; the sea bargains; quiet dread, no gore.",
        ),
        reply(
            "author/dream",
            json!({"genre": "folk horror", "tone": ["quiet", "dread"], "themes": ["bargains", "isolation"],
                   "audience": "adults", "constraints": ["no gore"], "content_notes": ["drowning"],
                   "branches": "moderate"})
            .to_string(),
        ),
    ];
    let file = dir.join("dream.json");
    std::fs::write(
        &file,
        serde_json::to_string(&loreloom::llm::Script { replies }).unwrap(),
    )
    .unwrap();
    file
}

fn author(args: &[&str]) -> std::process::Output {
    let mut all = vec!["author"];
    all.extend_from_slice(args);
    common::loreloom(&all, None)
}

/// An author makes a project, runs DREAM (the scripted model's discussion,
/// summary and vision), reviews it, approves, and rolls DREAM back: the
/// graph is byte for byte what it was before DREAM ran.
#[test]
fn a_project_runs_dream_reviews_approves_and_rolls_back() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("lighthouse");
    let p = project.to_str().unwrap();
    let out = author(&[
        "new",
        p,
        "--spark",
        "A lighthouse keeper bargains with the sea",
        "--scope",
        "micro",
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let before = std::fs::read(project.join("graph.db")).unwrap();

    let script = dream_script(dir.path());
    let out = author(&[
        "run",
        p,
        "--to",
        "dream",
        "--model-script",
        script.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stdout(&out).contains("DREAM       run, waiting for review"));
    assert_eq!(
        std::fs::read(project.join("snapshots/pre-dream.db")).unwrap(),
        before,
        "the snapshot is the graph before DREAM"
    );

    // The next stage waits for the gate.
    let out = author(&["run", p, "--to", "brainstorm"]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("DREAM is waiting for review"),
        "{}",
        common::stderr(&out)
    );

    let out = author(&["review", p]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let md = std::fs::read_to_string(project.join("exports/graph.md")).unwrap();
    insta::assert_snapshot!("graph_md_after_dream", md);
    let yaml = std::fs::read_to_string(project.join("exports/graph.yaml")).unwrap();
    let doc: serde_json::Value = serde_norway::from_str(&yaml).unwrap();
    assert_eq!(doc["nodes"]["vision"]["vision"]["genre"], "folk horror");
    assert_eq!(doc["nodes"]["vision"]["vision"]["scope"]["length"], "micro");

    let out = author(&["approve", p]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stdout(&out).contains("next: run BRAINSTORM"));
    let out = author(&["audit", p]);
    let audit = common::stdout(&out);
    for line in ["create vision", "meta:gate.dream  (approved by the author)"] {
        assert!(audit.contains(line), "{audit}");
    }

    let out = author(&["rollback", p, "dream"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(
        std::fs::read(project.join("graph.db")).unwrap(),
        before,
        "rollback restores the graph byte for byte"
    );
    assert!(common::stdout(&out).contains("next: run DREAM"));
}

/// A failing model leaves the graph as it was: a DREAM answer that breaks
/// its contract is a typed error naming the stage, and nothing is written.
#[test]
fn a_dream_answer_that_breaks_its_contract_writes_nothing() {
    use common::scripted::reply;
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("p");
    let p = project.to_str().unwrap();
    assert!(
        author(&["new", p, "--spark", "A heist on a glacier"])
            .status
            .success()
    );
    let before = std::fs::read(project.join("graph.db")).unwrap();
    let bad = json!({"genre": "heist", "tone": [], "themes": "greed"}).to_string();
    let replies = vec![
        reply("author/discuss", "Ice, greed, a vault."),
        reply("author/summarize", "A glacier heist."),
        reply("author/dream", bad.clone()),
        reply("author/dream", bad.clone()),
        reply("author/dream", bad),
    ];
    let script = dir.path().join("bad.json");
    std::fs::write(
        &script,
        serde_json::to_string(&loreloom::llm::Script { replies }).unwrap(),
    )
    .unwrap();
    let out = author(&["run", p, "--model-script", script.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("DREAM failed"), "{err}");
    assert_eq!(std::fs::read(project.join("graph.db")).unwrap(), before);
}

/// A small graph as BRAINSTORM and SEED would leave it.
fn seeded(path: &Path) -> Graph {
    let mut g = Graph::open(path).unwrap();
    g.apply(
        Stage::Brainstorm,
        "serialize",
        "test",
        &[
            Mutation::create(
                "keeper",
                NodeType::Entity,
                json!({"type": "character", "concept": "the keeper"}),
            ),
            Mutation::create(
                "dilemma::sea",
                NodeType::Dilemma,
                json!({"question": "Bargain with the sea?"}),
            ),
            Mutation::create(
                "bargain",
                NodeType::Answer,
                json!({"description": "She bargains", "canonical": true}),
            ),
            Mutation::create(
                "refuse",
                NodeType::Answer,
                json!({"description": "She refuses", "canonical": false}),
            ),
            Mutation::link(EdgeType::HasAnswer, "dilemma::sea", "bargain"),
            Mutation::link(EdgeType::HasAnswer, "dilemma::sea", "refuse"),
            Mutation::link(EdgeType::DilemmaInvolves, "dilemma::sea", "keeper"),
        ],
    )
    .unwrap();
    g.apply(
        Stage::Seed,
        "serialize",
        "test",
        &[
            Mutation::create(
                "path::sea__bargain",
                NodeType::Path,
                json!({"name": "The bargain", "tier": "major"}),
            ),
            Mutation::link(EdgeType::Explores, "path::sea__bargain", "bargain"),
            Mutation::create(
                "beat::a",
                NodeType::Beat,
                json!({"summary": "A storm comes."}),
            ),
            Mutation::create(
                "beat::b",
                NodeType::Beat,
                json!({"summary": "She speaks to the sea."}),
            ),
            Mutation::link(EdgeType::BelongsTo, "beat::a", "path::sea__bargain"),
            Mutation::link(EdgeType::BelongsTo, "beat::b", "path::sea__bargain"),
            Mutation::link(EdgeType::SequencedAfter, "beat::b", "beat::a"),
        ],
    )
    .unwrap();
    g
}

fn rule_of(result: Result<(), GraphError>) -> (Stage, String, Rule) {
    match result {
        Err(GraphError::Rule {
            stage, node, rule, ..
        }) => (stage, node, rule),
        other => panic!("expected a rule violation, got {other:?}"),
    }
}

/// Seed 000's rules are the store's: GROW creating a path (PATH FREEZE),
/// FILL creating an entity, a `sequenced_after` cycle, a third answer, a
/// path id that does not match what it explores, GROW changing an entity's
/// base, SEED changing a dilemma's question, BRAINSTORM writing after SEED
/// ran: each is refused with a typed error naming the stage, the node and
/// the rule, and nothing of the batch is written.
#[test]
fn the_graph_refuses_what_the_seed_forbids_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("graph.db");
    let mut g = seeded(&db);
    let audit = g.audit(None).unwrap().len();
    let bytes = std::fs::read(&db).unwrap();

    let (stage, node, rule) = rule_of(g.apply(
        Stage::Grow,
        "weave",
        "test",
        &[
            Mutation::create(
                "beat::c",
                NodeType::Beat,
                json!({"summary": "ok on its own"}),
            ),
            Mutation::create("path::sea__refuse", NodeType::Path, json!({})),
        ],
    ));
    assert_eq!(
        (stage, node.as_str(), rule),
        (Stage::Grow, "path::sea__refuse", Rule::Ownership)
    );
    assert!(
        g.node("beat::c").unwrap().is_none(),
        "the whole batch was refused"
    );

    let cases: Vec<(Stage, Vec<Mutation>, &str, Rule)> = vec![
        (
            Stage::Seed,
            vec![Mutation::link(
                EdgeType::SequencedAfter,
                "beat::a",
                "beat::b",
            )],
            "beat::a",
            Rule::Cycle,
        ),
        (
            Stage::Brainstorm,
            vec![
                Mutation::create("maybe", NodeType::Answer, json!({"canonical": false})),
                Mutation::link(EdgeType::HasAnswer, "dilemma::sea", "maybe"),
            ],
            "dilemma::sea",
            Rule::StagePassed,
        ),
        (
            Stage::Seed,
            vec![
                Mutation::create("path::sea__refuse", NodeType::Path, json!({})),
                Mutation::link(EdgeType::Explores, "path::sea__refuse", "bargain"),
            ],
            "path::sea__refuse",
            Rule::PathId,
        ),
        (
            Stage::Seed,
            vec![Mutation::update(
                "dilemma::sea",
                json!({"question": "Something else?"}),
            )],
            "dilemma::sea",
            Rule::Ownership,
        ),
        (
            Stage::Grow,
            vec![Mutation::update(
                "keeper",
                json!({"base": {"eyes": "grey"}}),
            )],
            "keeper",
            Rule::Ownership,
        ),
        (
            Stage::Fill,
            vec![Mutation::create(
                "stranger",
                NodeType::Entity,
                json!({"type": "character"}),
            )],
            "stranger",
            Rule::Ownership,
        ),
    ];
    for (stage, changes, node, rule) in cases {
        let got = rule_of(g.apply(stage, "test", "test", &changes));
        // A BRAINSTORM change after SEED ran is refused before its content is looked at.
        let want_node = if rule == Rule::StagePassed {
            "maybe"
        } else {
            node
        };
        assert_eq!((got.0, got.1.as_str(), got.2), (stage, want_node, rule));
    }
    drop(g);
    assert_eq!(std::fs::read(&db).unwrap(), bytes, "nothing was written");
    let g = Graph::open(&db).unwrap();
    assert_eq!(g.audit(None).unwrap().len(), audit);
    // What SEED may change, it may: which answers are explored.
    let mut g = g;
    g.apply(
        Stage::Seed,
        "review",
        "the author explores only the canonical answer",
        &[Mutation::update(
            "dilemma::sea",
            json!({"explored": ["bargain"], "unexplored": ["refuse"]}),
        )],
    )
    .unwrap();
    let last = g.audit(Some(Stage::Seed)).unwrap().pop().unwrap();
    assert_eq!(
        last.before,
        Some(json!({"explored": null, "unexplored": null}))
    );
    assert_eq!(last.phase, "review");
}

/// A dilemma must have exactly two answers, one canonical.
#[test]
fn a_dilemma_has_two_answers_one_canonical() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Graph::open(&dir.path().join("graph.db")).unwrap();
    let (_, node, rule) = rule_of(g.apply(
        Stage::Brainstorm,
        "serialize",
        "test",
        &[
            Mutation::create("dilemma::x", NodeType::Dilemma, json!({"question": "?"})),
            Mutation::create("a", NodeType::Answer, json!({"canonical": true})),
            Mutation::create("b", NodeType::Answer, json!({"canonical": true})),
            Mutation::link(EdgeType::HasAnswer, "dilemma::x", "a"),
            Mutation::link(EdgeType::HasAnswer, "dilemma::x", "b"),
        ],
    ));
    assert_eq!((node.as_str(), rule), ("dilemma::x", Rule::TwoAnswers));
    assert!(g.nodes(NodeType::Dilemma).unwrap().is_empty());
}
