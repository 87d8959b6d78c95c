//! The narrator corpus: settings render, training files are current, held-out settings stay out.
//!
//! Every setting renders with today's prompts, the rendered files in `training/data/` are exactly
//! what the settings and prompts make now, and the held-out settings never appear in training.

use std::path::PathBuf;

use loreloom::llm::{Contract, PromptRegistry};
use loreloom::tune::{
    Example, Split, load_chains, load_settings, read_jsonl, render, render_chains,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every example of the corpus as the game renders it today: the settings' and the
/// authoring chains'.
fn every_example(registry: &PromptRegistry) -> Vec<Example> {
    let settings = load_settings(&root().join("training/settings")).unwrap();
    let mut examples = render(&settings, registry, &[root().join("campaigns/rulesets")]).unwrap();
    let chains = load_chains(&root().join("training/authoring")).unwrap();
    examples.extend(render_chains(&chains, registry).unwrap());
    examples
}

#[test]
fn the_rendered_corpus_is_current_and_the_split_is_by_setting() {
    let settings = load_settings(&root().join("training/settings")).unwrap();
    let registry = PromptRegistry::load(root().join("prompts")).unwrap();
    let examples = every_example(&registry);
    let split: Split =
        serde_json::from_str(&std::fs::read_to_string(root().join("training/split.json")).unwrap())
            .unwrap();
    let heldout: Vec<&str> = split.heldout.iter().map(String::as_str).collect();
    let train = read_jsonl(&root().join("training/data/train.jsonl")).unwrap();
    let held = read_jsonl(&root().join("training/data/heldout.jsonl")).unwrap();
    let key = |e: &Example| serde_json::to_string(e).unwrap();
    let fresh: Vec<String> = examples.iter().map(key).collect();
    let stored: Vec<String> = train.iter().chain(&held).map(key).collect();
    let mut a = fresh.clone();
    let mut b = stored.clone();
    a.sort();
    b.sort();
    assert!(
        a == b,
        "training/data is stale: run `loreloom tune render` after changing settings or prompts ({} rendered now, {} stored)",
        a.len(),
        b.len()
    );
    assert!(train.iter().all(|e| !heldout.contains(&e.setting.as_str())));
    assert!(held.iter().all(|e| heldout.contains(&e.setting.as_str())));
    // The issue's floor: at least 12 training settings, 600 narrations, 200 each of choices and intents.
    let count = |stage: &str| train.iter().filter(|e| e.stage == stage).count();
    let settings_trained = settings
        .iter()
        .filter(|s| !heldout.contains(&s.id.as_str()))
        .count();
    assert!(
        settings_trained >= 12,
        "{settings_trained} training settings"
    );
    assert!(count("narrate") >= 600 && count("choices") >= 200 && count("npc_intent") >= 200);
    // #42: the structured stages the corpus now holds.
    assert!(count("recap") >= 250 && count("lore_extract") >= 250);
    // #42: the first authoring stages, from chains.
    for stage in [
        "author/dream",
        "author/brainstorm",
        "author/seed",
        "author/discuss",
        "author/summarize",
    ] {
        assert!(count(stage) >= 20, "{stage}: {}", count(stage));
    }
    // Every example ends in our answer, after the stage's system and user messages.
    for e in &train {
        let roles: Vec<&str> = e.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant"],
            "{} {}[{}]",
            e.setting,
            e.stage,
            e.index
        );
    }
}

/// Every answer of a stage with an output contract passes that contract as
/// the game holds the default (compact) model to it: what the model learns
/// is what the game would accept.
#[test]
fn every_structured_answer_passes_its_stages_contract() {
    let registry = PromptRegistry::load(root().join("prompts")).unwrap();
    let examples = every_example(&registry);
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for e in &examples {
        let info = registry.stage(&e.stage).unwrap();
        let Some(file) = &info.contract else {
            continue;
        };
        let narrowing: Vec<(String, serde_json::Value)> = info
            .compact_narrowing
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let contract = Contract::load(&root().join("schemas"), file)
            .unwrap()
            .narrowed(&narrowing)
            .unwrap();
        let answer = &e.messages.last().unwrap().content;
        if let Err(errors) = contract.check(answer) {
            panic!(
                "{} {}[{}]: {errors:?}: {answer}",
                e.setting, e.stage, e.index
            );
        }
        *checked.entry(e.stage.clone()).or_default() += 1;
    }
    for stage in [
        "choices",
        "npc_intent",
        "lore_extract",
        "author/dream",
        "author/brainstorm",
        "author/seed",
    ] {
        assert!(
            checked.get(stage).copied().unwrap_or(0) > 0,
            "{stage}: {checked:?}"
        );
    }
}

#[test]
fn a_broken_setting_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.json"), r#"{"id": "bad", "title": 3}"#).unwrap();
    let err = load_settings(dir.path()).unwrap_err().to_string();
    assert!(err.contains("bad.json") && err.contains("title"), "{err}");
}

/// A chain whose SEED the engine would have to mend is refused, naming the file, the stage
/// and what the engine would have done: the corpus teaches only answers taken whole.
#[test]
fn a_chain_the_engine_would_mend_is_refused_naming_it() {
    let registry = PromptRegistry::load(root().join("prompts")).unwrap();
    let chains = load_chains(&root().join("training/authoring")).unwrap();
    let mut chain = chains.first().expect("the corpus has chains").clone();
    // The last path given goes: SEED explores that answer no more.
    let paths = chain.seed["paths"].as_array_mut().unwrap();
    let gone = paths.pop().unwrap();
    let err = render_chains(std::slice::from_ref(&chain), &registry)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("training/authoring/{}.json", chain.id)) && err.contains("seed:"),
        "{err}"
    );
    let answer = gone["answer_id"].as_str().unwrap();
    assert!(
        err.contains(answer) || err.contains("explored on both answers"),
        "{err}"
    );

    // A micro story with two dilemmas is not one.
    let mut chain = chains
        .iter()
        .find(|c| c.scope == loreloom::author::Scope::Micro)
        .unwrap()
        .clone();
    chain.brainstorm["dilemmas"].as_array_mut().unwrap().pop();
    let err = render_chains(std::slice::from_ref(&chain), &registry)
        .unwrap_err()
        .to_string();
    assert!(err.contains("brainstorm: 2 dilemmas"), "{err}");
}

/// A chain's discussions become what the pipeline asks: one `author/discuss` example per
/// collaborator turn (the turns before it its conversation; BRAINSTORM's told what DREAM
/// settled), one `author/summarize` per stage, and each brief reaches its stage's prompt.
/// A discussion the pipeline's loop could not have held is refused, naming the file.
#[test]
fn a_chains_talk_becomes_the_discussions_and_their_briefs_reach_the_stages() {
    use loreloom::author::discuss::{Turn, Who};
    use loreloom::tune::{Discussion, Talk};
    let registry = PromptRegistry::load(root().join("prompts")).unwrap();
    let chains = load_chains(&root().join("training/authoring")).unwrap();
    let mut chain = chains.first().expect("the corpus has chains").clone();
    let turn = |who, text: &str| Turn::new(who, text.to_owned());
    chain.brief = String::new();
    chain.talk = Some(Talk {
        dream: Discussion {
            turns: vec![
                turn(Who::You, "Regency, or something stranger. Which?"),
                turn(Who::Author, "Regency, and witty."),
                turn(Who::You, "Witty it is. How tender?"),
            ],
            brief: "Genre: Regency romance\nTone: witty, tender".into(),
        },
        brainstorm: Discussion {
            turns: vec![turn(
                Who::You,
                "Harriet, Sir Edmund, Quayle. Three questions?",
            )],
            brief: "Harriet, Sir Edmund and Quayle\nThree dilemmas".into(),
        },
    });
    let examples = render_chains(std::slice::from_ref(&chain), &registry).unwrap();
    let stages: Vec<&str> = examples.iter().map(|e| e.stage.as_str()).collect();
    assert_eq!(
        stages,
        [
            "author/discuss",
            "author/discuss",
            "author/summarize",
            "author/dream",
            "author/discuss",
            "author/summarize",
            "author/brainstorm",
            "author/seed"
        ]
    );
    let user = |i: usize| examples[i].messages[1].content.clone();
    let answer = |i: usize| examples[i].messages[2].content.clone();
    assert!(user(0).contains("Open the discussion"), "{}", user(0));
    assert!(
        user(1).contains("Author: Regency, and witty.") && answer(1) == "Witty it is. How tender?",
        "{}",
        user(1)
    );
    assert_eq!(answer(2), "Genre: Regency romance\nTone: witty, tender");
    assert!(user(3).contains("Tone: witty, tender"), "{}", user(3));
    // BRAINSTORM's discussion is told what DREAM settled, and its brief reaches BRAINSTORM.
    let genre = chain.dream["genre"].as_str().unwrap();
    assert!(user(4).contains(&format!("genre: {genre}")), "{}", user(4));
    assert!(user(6).contains("Three dilemmas"), "{}", user(6));

    // The corpus keeps to discussions whose every reply the collaborator answered.
    let mut broken = chain.clone();
    if let Some(talk) = broken.talk.as_mut() {
        talk.brainstorm.turns.push(turn(Who::Author, "Fine."));
    }
    let err = render_chains(std::slice::from_ref(&broken), &registry)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!("training/authoring/{}.json", chain.id))
            && err.contains("talk.brainstorm")
            && err.contains("last reply"),
        "{err}"
    );
}
