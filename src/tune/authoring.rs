//! The authoring corpus: chains (`training/authoring/*.json`), one story from a spark through
//! DREAM, BRAINSTORM and SEED, rendered with the stages' own variable builders.
//!
//! A chain may carry the discussion before DREAM and BRAINSTORM (`talk`): each of the
//! collaborator's turns is an `author/discuss` example, the brief an `author/summarize`
//! one, and the brief is what the stage's own prompt then reads, as in the pipeline.
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
use crate::author::discuss::{MAX_ROUNDS, Turn, Who, discuss_vars, summary_vars};
use crate::author::seed::seed_mutations;
use crate::author::stages::{
    Shape, brainstorm_vars, dream_vars, seed_inputs, seed_vars, vision_lines, vision_of,
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
    /// DREAM's brief for a chain without a `talk` (empty).
    #[serde(default)]
    pub brief: String,
    /// The discussions before DREAM and BRAINSTORM and their briefs.
    #[serde(default)]
    pub talk: Option<Talk>,
    pub dream: Value,
    pub brainstorm: Value,
    pub seed: Value,
}

/// The discussions a chain's stages begin with.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Talk {
    pub dream: Discussion,
    pub brainstorm: Discussion,
}

/// One stage's discussion: the collaborator opens, the author may reply and the
/// collaborator answers each reply, then the summary. (The pipeline's loop can also end
/// on an author's reply, in its last round; the corpus keeps to answered ones.)
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Discussion {
    pub turns: Vec<Turn>,
    pub brief: String,
}

/// The most lines a brief has (the summary prompt's "at most eight short lines").
const BRIEF_LINES: usize = 8;

impl Discussion {
    /// Why the discussion could not have come from the pipeline's loop, if it could not.
    fn fault(&self) -> Option<String> {
        let you = self.turns.iter().filter(|t| t.who == Who::You).count();
        if self.turns.is_empty() || self.turns.last().map(|t| t.who) != Some(Who::You) {
            return Some(
                "the collaborator answers the author's last reply before the summary".into(),
            );
        }
        // The pipeline trims what each side says, so a turn or brief is kept trimmed.
        let trimmed = |t: &str| !t.is_empty() && t.trim() == t;
        if let Some(i) = (0..self.turns.len()).find(|&i| {
            let want = if i % 2 == 0 { Who::You } else { Who::Author };
            self.turns[i].who != want || !trimmed(&self.turns[i].text)
        }) {
            return Some(format!(
                "turn {i}: the collaborator opens, then author and collaborator alternate, none empty or untrimmed"
            ));
        }
        if you > MAX_ROUNDS {
            return Some(format!("{you} rounds; the pipeline stops at {MAX_ROUNDS}"));
        }
        let lines: Vec<&str> = self.brief.split('\n').collect();
        if !trimmed(&self.brief)
            || lines.len() > BRIEF_LINES
            || lines.iter().any(|l| l.trim().is_empty())
        {
            return Some(format!(
                "a brief of {} lines; the summary writes 1 to {BRIEF_LINES}, trimmed, none empty",
                lines.len()
            ));
        }
        None
    }
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

/// One example: the stage's chat for `vars`, then `answer` as the model writes it
/// (structured stages' JSON, the discussion's plain text). A failure names the chain's
/// part (`talk.dream turn 2`, `seed`).
fn example(
    chain: &Chain,
    registry: &PromptRegistry,
    stage: &'static str,
    part: &str,
    vars: Value,
    answer: String,
) -> Result<Example, CorpusError> {
    chat(registry, stage, vars, answer)
        .map(|messages| Example {
            stage: stage.to_owned(),
            setting: chain.id.clone(),
            index: 0,
            messages,
        })
        .map_err(|e| chain_error(chain, part, format!("{stage}: {e}")))
}

/// A discussion as the pipeline holds it: a `discuss` call per collaborator turn (the
/// turns before it its conversation), then the summary, whose brief the stage reads.
fn discussion(
    chain: &Chain,
    registry: &PromptRegistry,
    stage: Stage,
    name: &str,
    talk: &Discussion,
    context: &[String],
) -> Result<Vec<Example>, CorpusError> {
    if let Some(fault) = talk.fault() {
        return Err(chain_error(chain, name, fault));
    }
    let mut out = Vec::new();
    for (i, turn) in talk.turns.iter().enumerate() {
        if turn.who == Who::You {
            let vars = discuss_vars(stage, &chain.spark, context, &talk.turns[..i]);
            let part = format!("{name} turn {i}");
            out.push(example(
                chain,
                registry,
                "author/discuss",
                &part,
                vars,
                turn.text.clone(),
            )?);
        }
    }
    let vars = summary_vars(stage, &chain.spark, &talk.turns);
    let part = format!("{name} brief");
    out.push(example(
        chain,
        registry,
        "author/summarize",
        &part,
        vars,
        talk.brief.clone(),
    )?);
    Ok(out)
}

/// A chain's examples (its discussions, DREAM, BRAINSTORM, SEED), each the chat the pipeline sends.
fn render_chain(chain: &Chain, registry: &PromptRegistry) -> Result<Vec<Example>, CorpusError> {
    let dream: DreamAnswer = typed(chain, "dream", &chain.dream)?;
    let brainstorm: BrainstormAnswer = typed(chain, "brainstorm", &chain.brainstorm)?;
    let seed: SeedAnswer = typed(chain, "seed", &chain.seed)?;
    let shape = Shape::of(chain.scope);
    let example = |stage: &'static str, part: &str, vars: Value, answer: String| {
        example(chain, registry, stage, part, vars, answer)
    };
    let talked = |stage: Stage, name: &str, talk: &Discussion, context: &[String]| {
        discussion(chain, registry, stage, name, talk, context)
    };
    let mut out = Vec::new();
    let (dream_brief, brainstorm_brief) = match &chain.talk {
        Some(_) if !chain.brief.is_empty() => {
            return Err(chain_error(
                chain,
                "dream",
                "a chain with a `talk` takes DREAM's brief from it; `brief` stays empty".into(),
            ));
        }
        Some(talk) => {
            out.extend(talked(Stage::Dream, "talk.dream", &talk.dream, &[])?);
            (talk.dream.brief.as_str(), talk.brainstorm.brief.as_str())
        }
        None => (chain.brief.as_str(), chain.brief.as_str()),
    };
    out.push(example(
        "author/dream",
        "dream",
        dream_vars(&chain.spark, chain.scope, dream_brief),
        chain.dream.to_string(),
    )?);
    let vision = vision_of(&dream, chain.scope, dream_brief);
    if let Some(talk) = &chain.talk {
        let context = vision_lines(&vision);
        out.extend(talked(
            Stage::Brainstorm,
            "talk.brainstorm",
            &talk.brainstorm,
            &context,
        )?);
    }
    out.push(example(
        "author/brainstorm",
        "brainstorm",
        brainstorm_vars(&chain.spark, &vision, brainstorm_brief, shape),
        chain.brainstorm.to_string(),
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
        "seed",
        seed_vars(&chain.spark, &vision, &entities, &dilemmas, shape),
        chain.seed.to_string(),
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
