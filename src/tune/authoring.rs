//! The authoring corpus: chains (`training/authoring/*.json`), one story from a spark through
//! DREAM, BRAINSTORM and SEED, rendered with the stages' own variable builders.
//!
//! Each chain is played into a graph in memory as the pipeline would: DREAM's vision, then
//! BRAINSTORM's entities and dilemmas; SEED's prompt is built from that graph, and SEED's answer
//! must apply with nothing dropped or mended by the engine (`seed_mutations`' notes), so the
//! model learns answers the engine takes whole.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::render::chat;
use super::{CorpusError, Example};
use crate::author::answers::{BrainstormAnswer, DreamAnswer, SeedAnswer};
use crate::author::brainstorm::brainstorm_mutations;
use crate::author::seed::seed_mutations;
use crate::author::stages::{
    Shape, brainstorm_vars, dream_vars, seed_inputs, seed_vars, vision_of,
};
use crate::author::{Graph, Mutation, NodeType, Scope, Stage};
use crate::llm::prompts::PromptRegistry;

/// One story's answers at the first three authoring stages.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chain {
    pub id: String,
    pub scope: Scope,
    pub spark: String,
    /// The discussion's summary (empty as with `--yes`).
    #[serde(default)]
    pub brief: String,
    pub dream: Value,
    pub brainstorm: Value,
    pub seed: Value,
}

/// Reads every `*.json` chain in `dir`, sorted by file name; a folder that is not there holds none.
pub fn load_chains(dir: &Path) -> Result<Vec<Chain>, CorpusError> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| {
            let fail = |message: String| CorpusError::File {
                path: path.clone(),
                message,
            };
            let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
            let chain: Chain = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
            if path.file_stem().and_then(|s| s.to_str()) != Some(chain.id.as_str()) {
                return Err(fail(format!("its id `{}` is not its file name", chain.id)));
            }
            Ok(chain)
        })
        .collect()
}

/// A stage's answer read as its type, or an error naming the chain and stage.
fn typed<T: serde::de::DeserializeOwned>(
    chain: &Chain,
    stage: &str,
    value: &Value,
) -> Result<T, CorpusError> {
    serde_json::from_value(value.clone()).map_err(|e| chain_error(chain, stage, e.to_string()))
}

fn chain_error(chain: &Chain, stage: &str, message: String) -> CorpusError {
    CorpusError::File {
        path: PathBuf::from(format!("training/authoring/{}.json", chain.id)),
        message: format!("{stage}: {message}"),
    }
}

/// A chain's three examples (DREAM, BRAINSTORM, SEED), each the chat the pipeline sends.
fn render_chain(chain: &Chain, registry: &PromptRegistry) -> Result<Vec<Example>, CorpusError> {
    let dream: DreamAnswer = typed(chain, "dream", &chain.dream)?;
    let brainstorm: BrainstormAnswer = typed(chain, "brainstorm", &chain.brainstorm)?;
    let seed: SeedAnswer = typed(chain, "seed", &chain.seed)?;
    let shape = Shape::of(chain.scope);
    let fail = |stage: &'static str| move |e: String| chain_error(chain, stage, e);
    let example = |stage: &'static str, vars: Value, answer: &Value| {
        chat(registry, stage, vars, answer.to_string())
            .map(|messages| Example {
                stage: stage.to_owned(),
                setting: chain.id.clone(),
                index: 0,
                messages,
            })
            .map_err(fail(stage))
    };
    let mut out = Vec::new();
    out.push(example(
        "author/dream",
        dream_vars(&chain.spark, chain.scope, &chain.brief),
        &chain.dream,
    )?);
    let vision = vision_of(&dream, chain.scope, &chain.brief);
    out.push(example(
        "author/brainstorm",
        brainstorm_vars(&chain.spark, &vision, &chain.brief, shape),
        &chain.brainstorm,
    )?);

    // The graph as the pipeline leaves it at the BRAINSTORM gate.
    let graph_error = |stage: &'static str| {
        move |e: crate::author::GraphError| chain_error(chain, stage, e.to_string())
    };
    let mut graph = Graph::open(Path::new(":memory:")).map_err(graph_error("graph"))?;
    graph
        .apply(
            Stage::Dream,
            "serialize",
            "corpus",
            &[Mutation::create("vision", NodeType::Vision, vision.clone())],
        )
        .map_err(graph_error("dream"))?;
    let (changes, notes) = brainstorm_mutations(&brainstorm)
        .map_err(|e| chain_error(chain, "brainstorm", e.to_string()))?;
    if !notes.is_empty() {
        return Err(chain_error(chain, "brainstorm", notes.join("; ")));
    }
    let dilemmas = brainstorm.dilemmas.len();
    if dilemmas < shape.dilemmas.0 || dilemmas > shape.dilemmas.1 {
        return Err(chain_error(
            chain,
            "brainstorm",
            format!(
                "{dilemmas} dilemmas; a {} story has {}",
                chain.scope.name(),
                shape.dilemmas_text()
            ),
        ));
    }
    graph
        .apply(Stage::Brainstorm, "serialize", "corpus", &changes)
        .map_err(graph_error("brainstorm"))?;
    let (entities, dilemmas) = seed_inputs(&graph).map_err(graph_error("seed"))?;
    out.push(example(
        "author/seed",
        seed_vars(&chain.spark, &vision, &entities, &dilemmas, shape),
        &chain.seed,
    )?);
    let (_, notes) = seed_mutations(&graph, &seed, shape.both_ways)
        .map_err(|e| chain_error(chain, "seed", e.to_string()))?;
    if !notes.is_empty() {
        return Err(chain_error(chain, "seed", notes.join("; ")));
    }
    Ok(out)
}

/// Every chain's examples, rendered with the newest prompt versions.
pub fn render_chains(
    chains: &[Chain],
    registry: &PromptRegistry,
) -> Result<Vec<Example>, CorpusError> {
    let mut out = Vec::new();
    for chain in chains {
        out.extend(render_chain(chain, registry)?);
    }
    Ok(out)
}
