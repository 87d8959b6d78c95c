//! DRESS sub-stage 3: the budget's pictures, the sample first, each a content-addressed asset.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{Value, json};

use super::read::{short, visuals};
use super::report::Report;
use crate::author::ask::StageError;
use crate::author::dress::{
    self, ART_DIRECTION, BriefText, Direction, Figure, budget, ranked_briefs,
};
use crate::author::graph::{Graph, Mutation, Node};
use crate::author::illustrate::{self, Illustrator};
use crate::author::ontology::{EdgeType, NodeType, Stage};

/// What every brief's prompt reads, read once per run: the art direction,
/// the visual profiles and each entity's type.
struct Prompter {
    direction: Direction,
    profiles: BTreeMap<String, Node>,
    kinds: BTreeMap<String, String>,
}

impl Prompter {
    fn read(graph: &Graph) -> Result<Self, StageError> {
        let art = graph
            .node(ART_DIRECTION)?
            .ok_or(StageError::NoArtDirection)?;
        let direction =
            serde_json::from_value(Value::Object(art.data)).map_err(StageError::ArtDirection)?;
        let kinds = graph
            .nodes(NodeType::Entity)?
            .into_iter()
            .filter_map(|e| Some((e.id.clone(), e.str("type")?.to_owned())))
            .collect();
        Ok(Self {
            direction,
            profiles: visuals(graph)?,
            kinds,
        })
    }

    /// The prompt for one brief (seed ).
    fn prompt(&self, brief: &Node) -> Result<dress::ImagePrompt, StageError> {
        let text: BriefText =
            serde_json::from_value(Value::Object(brief.data.clone())).map_err(|source| {
                StageError::Brief {
                    brief: brief.id.clone(),
                    source,
                }
            })?;
        let figures = brief
            .strings("entities")
            .into_iter()
            .map(|e| {
                let profile = self.profiles.get(&e);
                Figure {
                    colours: profile
                        .map(|p| p.strings("color_associations"))
                        .unwrap_or_default(),
                    fragment: profile
                        .and_then(|p| p.str("reference_prompt_fragment"))
                        .unwrap_or_default()
                        .to_owned(),
                    kind: self
                        .kinds
                        .get(&e)
                        .cloned()
                        .unwrap_or_else(|| "character".into()),
                    entity: e,
                }
            })
            .collect();
        Ok(dress::image_prompt(
            &brief.id,
            &self.direction,
            &text,
            figures,
        ))
    }
}

/// Sub-stage 3: draws the budget's briefs not drawn yet: only the best one
/// when `sample` (seed: the style is confirmed on one picture before
/// the batch), else all the others; a picture the provider cannot draw is
/// said and skipped (no retry). After the batch, files in `assets/` no
/// illustration uses are removed.
pub fn draw(
    graph: &mut Graph,
    dir: &Path,
    provider: &dyn Illustrator,
    sample: bool,
) -> Result<Report, StageError> {
    let mut report = Report::default();
    let budget = budget(graph)?.ok_or(StageError::NoBudget)?;
    let chosen = budget.select(&ranked_briefs(graph)?);
    let drawn: BTreeSet<String> = graph
        .edges(EdgeType::FromBrief)?
        .into_iter()
        .map(|e| e.to)
        .collect();
    let todo: Vec<String> = chosen.into_iter().filter(|b| !drawn.contains(b)).collect();
    let take = if sample { 1 } else { todo.len() };
    let prompter = Prompter::read(graph)?;
    for brief_id in todo.iter().take(take) {
        let Some(brief) = graph.node(brief_id)? else {
            continue;
        };
        let Some(passage) = graph
            .targets(EdgeType::Targets, brief_id)?
            .into_iter()
            .next()
        else {
            continue;
        };
        let prompt = prompter.prompt(&brief)?;
        let asset = provider
            .draw(&prompt)
            .and_then(|png| illustrate::store(dir, &png));
        let asset = match asset {
            Ok(asset) => asset,
            Err(e) => {
                tracing::error!(brief = %brief_id, provider = provider.name(), "not drawn: {e}");
                report.notes.push(format!(
                    "{brief_id}: {} could not draw it: {e}",
                    provider.name()
                ));
                report.failed.push(brief_id.clone());
                continue;
            }
        };
        let id = format!("illustration::{}", short(&passage));
        graph.apply(
            Stage::Dress,
            if sample { "sample" } else { "draw" },
            &format!("{brief_id} drawn by {}", provider.name()),
            &[
                Mutation::create(
                    id.clone(),
                    NodeType::Illustration,
                    json!({"asset": asset, "caption": brief.str("caption").unwrap_or_default(),
                               "category": brief.str("category").unwrap_or("scene"),
                               "provider": provider.name(), "prompt": prompt.text,
                               "negative": prompt.negative}),
                ),
                Mutation::link(EdgeType::Depicts, id.clone(), passage),
                Mutation::link(EdgeType::FromBrief, id.clone(), brief_id.clone()),
            ],
        )?;
        report.drawn.push(id);
    }
    report.done = !sample || todo.len() <= 1;
    if report.done {
        let removed = remove_orphans(graph, dir)?;
        if removed > 0 {
            report.notes.push(format!(
                "{removed} pictures in assets/ no illustration uses were removed"
            ));
        }
    }
    Ok(report)
}

/// Removes the files in `dir/assets/` no illustration names.
fn remove_orphans(graph: &Graph, dir: &Path) -> Result<usize, StageError> {
    let used: BTreeSet<String> = graph
        .nodes(NodeType::Illustration)?
        .iter()
        .filter_map(|i| i.str("asset").map(str::to_owned))
        .collect();
    let assets = dir.join("assets");
    let Ok(entries) = std::fs::read_dir(&assets) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = format!("assets/{}", entry.file_name().to_string_lossy());
        if entry.path().is_file() && !used.contains(&name) {
            std::fs::remove_file(entry.path()).map_err(|source| StageError::Io {
                path: entry.path(),
                source,
            })?;
            removed += 1;
        }
    }
    Ok(removed)
}
