//! `exports/graph.md`: a readable summary of the graph and what the stage under review changed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::author::dress::{ART_DIRECTION, budget, ranked_briefs};
use crate::author::graph::{Edge, Graph, GraphError, Node};
use crate::author::ontology::{EdgeType, NodeType, Stage};

fn list(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// `graph.md`: what the story is so far, type by type, and the changes the
/// stage under review (if any) made.
pub fn markdown(
    graph: &Graph,
    spark: &str,
    in_review: Option<Stage>,
) -> Result<String, GraphError> {
    let mut out = String::new();
    let _ = writeln!(out, "# Story graph\n\nSpark: {spark}\n");
    let sections: [Section; 14] = [
        vision,
        entities,
        voice,
        relationships,
        dilemmas,
        paths,
        beats,
        arcs,
        passages,
        art_direction,
        briefs,
        codex,
        illustrations,
        counts,
    ];
    for section in sections {
        section(graph, &mut out)?;
    }
    changed(graph, in_review, &mut out)?;
    Ok(out)
}

/// One section of `graph.md`, written onto the text so far.
type Section = fn(&Graph, &mut String) -> Result<(), GraphError>;

/// The vision: genre, tone, themes, audience, constraints, content notes, scope.
fn vision(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    if let Some(vision) = graph.node("vision")? {
        let d = &vision.data;
        let _ = writeln!(out, "## Vision\n");
        labelled(
            out,
            d,
            &[
                ("Genre", "genre"),
                ("Tone", "tone"),
                ("Themes", "themes"),
                ("Audience", "audience"),
                ("Constraints", "constraints"),
                ("Content notes", "content_notes"),
            ],
        );
        if let Some(scope) = d.get("scope") {
            let _ = writeln!(
                out,
                "- **Scope:** {} length, {} branching",
                list(scope.get("length")),
                list(scope.get("branches"))
            );
        }
        out.push('\n');
    }
    Ok(())
}

/// Every entity, cut or kept, with its overlays.
fn entities(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let entities = graph.nodes(NodeType::Entity)?;
    if !entities.is_empty() {
        let _ = writeln!(out, "## Entities\n");
        for e in &entities {
            let _ = writeln!(
                out,
                "- `{}` ({}){}: {}",
                e.id,
                e.str("type").unwrap_or("?"),
                if e.str("disposition") == Some("cut") {
                    ", cut"
                } else {
                    ""
                },
                e.str("concept").unwrap_or("")
            );
            for o in e
                .data
                .get("overlays")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let details: Vec<String> = o
                    .get("details")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| format!("{k}: {}", list(Some(v))))
                    .collect();
                let _ = writeln!(
                    out,
                    "  - once {}: {}",
                    list(o.get("when")),
                    details.join("; ")
                );
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// FILL's voice document.
fn voice(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    if let Some(v) = graph.node("voice")? {
        let _ = writeln!(out, "## Voice\n");
        let _ = writeln!(
            out,
            "- **Title:** {}\n- **Point of view:** {}{}, {} tense\n- **Register:** {}; rhythm {}\n- **Tone:** {}\n- **Avoid:** {}{}",
            list(v.data.get("story_title")),
            list(v.data.get("pov")).replace('_', " "),
            v.str("pov_character")
                .map(|c| format!(" (`{c}`)"))
                .unwrap_or_default(),
            list(v.data.get("tense")),
            list(v.data.get("register")),
            list(v.data.get("sentence_rhythm")),
            list(v.data.get("tone_words")),
            list(v.data.get("avoid_words")),
            v.data
                .get("avoid_patterns")
                .map(|p| format!("; {}", list(Some(p))))
                .filter(|p| p != "; ")
                .unwrap_or_default(),
        );
        if let Some(text) = v.data.get("exemplar").and_then(|e| e.get("text")) {
            let _ = writeln!(out, "- **Exemplar:** {}", list(Some(text)));
        }
        out.push('\n');
    }
    Ok(())
}

/// Every relationship between two entities.
fn relationships(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let bonds = graph.nodes(NodeType::Relationship)?;
    if !bonds.is_empty() {
        let _ = writeln!(out, "## Relationships\n");
        for r in &bonds {
            let _ = writeln!(
                out,
                "- `{}` → `{}`: {}",
                r.str("from_entity").unwrap_or("?"),
                r.str("to_entity").unwrap_or("?"),
                list(r.data.get("base").and_then(|b| b.get("nature")))
            );
        }
        out.push('\n');
    }
    Ok(())
}

/// Every dilemma with its answers, what SEED explored and its analysis.
fn dilemmas(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let dilemmas = graph.nodes(NodeType::Dilemma)?;
    if !dilemmas.is_empty() {
        let _ = writeln!(out, "## Dilemmas\n");
        for d in &dilemmas {
            let _ = writeln!(out, "### `{}`: {}\n", d.id, d.str("question").unwrap_or(""));
            for a in graph.targets(EdgeType::HasAnswer, &d.id)? {
                if let Some(answer) = graph.node(&a)? {
                    let canonical =
                        answer.data.get("canonical").and_then(Value::as_bool) == Some(true);
                    let _ = writeln!(
                        out,
                        "- `{a}`{}: {}",
                        if canonical { " (canonical)" } else { "" },
                        answer.str("description").unwrap_or("")
                    );
                }
            }
            if let Some(explored) = d.data.get("explored") {
                let _ = writeln!(out, "Explored: {}", list(Some(explored)));
            }
            if let Some(a) = d.data.get("analysis") {
                let _ = writeln!(
                    out,
                    "Convergence: {}, payoff budget {}; ending salience {}; residue {}. {}",
                    list(a.get("convergence_policy")),
                    list(a.get("payoff_budget")),
                    list(a.get("ending_salience")),
                    list(a.get("residue_weight")),
                    list(a.get("reasoning"))
                );
            }
            out.push('\n');
        }
    }
    Ok(())
}

/// Every path with its consequences.
fn paths(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let paths = graph.nodes(NodeType::Path)?;
    if !paths.is_empty() {
        let _ = writeln!(out, "## Paths\n");
        for p in &paths {
            let _ = writeln!(
                out,
                "- `{}` ({}): {}: {}",
                p.id,
                p.str("tier").unwrap_or("?"),
                p.str("name").unwrap_or(""),
                p.str("description").unwrap_or("")
            );
            for c in graph.targets(EdgeType::HasConsequence, &p.id)? {
                if let Some(c) = graph.node(&c)? {
                    let _ = writeln!(
                        out,
                        "  - consequence `{}`: {} (ripples: {})",
                        c.id,
                        c.str("description").unwrap_or(""),
                        list(c.data.get("ripples"))
                    );
                }
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// The beats in an order that respects every `sequenced_after`.
fn beats(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let beats = graph.nodes(NodeType::Beat)?;
    if !beats.is_empty() {
        let _ = writeln!(
            out,
            "## Beats (in an order that respects every `sequenced_after`)\n"
        );
        let order: Vec<(String, String)> = graph
            .edges(EdgeType::SequencedAfter)?
            .into_iter()
            .map(|e| (e.from, e.to))
            .collect();
        let ids: Vec<String> = beats.iter().map(|b| b.id.clone()).collect();
        for id in crate::author::graph::topological(&ids, &order) {
            let Some(b) = beats.iter().find(|b| b.id == id) else {
                continue;
            };
            let on = graph.targets(EdgeType::BelongsTo, &b.id)?;
            let impacts: Vec<String> = b
                .data
                .get("dilemma_impacts")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|i| format!("{} {}", list(i.get("effect")), list(i.get("dilemma_id"))))
                        .collect()
                })
                .unwrap_or_default();
            let after = graph.targets(EdgeType::SequencedAfter, &b.id)?;
            let kind = match (
                b.str("scene_type"),
                b.data.get("is_gap_beat") == Some(&true.into()),
            ) {
                (Some(t), true) => format!(
                    " {{{t}, bridging, {}}}",
                    b.str("transition_style").unwrap_or("cut")
                ),
                (Some(t), false) => format!(" {{{t}}}"),
                (None, _) => String::new(),
            };
            let _ = writeln!(
                out,
                "- `{}`{kind} [{}]{}: {}{}{}",
                b.id,
                on.join(", "),
                b.str("location")
                    .map(|l| format!(" at `{l}`"))
                    .unwrap_or_default(),
                b.str("summary").unwrap_or(""),
                if impacts.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", impacts.join("; "))
                },
                if after.is_empty() {
                    String::new()
                } else {
                    format!(" after {}", after.join(", "))
                },
            );
        }
        out.push('\n');
    }
    Ok(())
}

/// Every arc, where it parts from the spine and comes back.
fn arcs(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let arcs = graph.nodes(NodeType::Arc)?;
    if !arcs.is_empty() {
        let _ = writeln!(out, "## Arcs\n");
        for a in &arcs {
            let _ = writeln!(
                out,
                "- `{}` ({}; {}): {}{}{}",
                a.id,
                a.str("type").unwrap_or("?"),
                list(a.data.get("paths")),
                list(a.data.get("passages")).replace(", ", " → "),
                a.str("diverges_at")
                    .map(|d| format!("; parts after `{d}`"))
                    .unwrap_or_default(),
                a.str("converges_at")
                    .map(|c| format!("; back with the spine at `{c}`"))
                    .unwrap_or_default(),
            );
        }
        out.push('\n');
    }
    Ok(())
}

/// Every passage with its prose, flags and choices.
fn passages(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let passages = graph.nodes(NodeType::Passage)?;
    if !passages.is_empty() {
        let _ = writeln!(out, "## Passages and choices\n");
        let start = graph.meta("grow.start")?;
        let mut choices: BTreeMap<String, Vec<Edge>> = BTreeMap::new();
        for c in graph.edges(EdgeType::Choice)? {
            choices.entry(c.from.clone()).or_default().push(c);
        }
        for p in &passages {
            let mark = if start.as_ref().and_then(Value::as_str) == Some(p.id.as_str()) {
                " (start)"
            } else if !choices.contains_key(&p.id) {
                " (ending)"
            } else {
                ""
            };
            let routed = p
                .data
                .get("routed")
                .map(|r| format!(" (written for {})", list(Some(r))))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- `{}`{mark}{routed}: {}",
                p.id,
                p.str("summary").unwrap_or("")
            );
            if let Some(prose) = p.str("prose").filter(|t| !t.trim().is_empty()) {
                out.push('\n');
                for line in prose.lines() {
                    let _ = writeln!(out, "  > {line}");
                }
                out.push('\n');
            }
            for flag in
                crate::author::graph::strings(p.data.get("review").and_then(|r| r.get("flags")))
            {
                let _ = writeln!(out, "  - ⚑ {flag}");
            }
            for c in choices.get(&p.id).into_iter().flatten() {
                let gate = c
                    .data
                    .get("requires")
                    .map(|r| list(Some(r)))
                    .filter(|r| !r.is_empty());
                let grants = c
                    .data
                    .get("grants")
                    .map(|r| list(Some(r)))
                    .filter(|r| !r.is_empty());
                let _ = writeln!(
                    out,
                    "  - \"{}\" → `{}`{}{}",
                    c.data.get("label").and_then(Value::as_str).unwrap_or(""),
                    c.to,
                    gate.map(|g| format!(" if {g}")).unwrap_or_default(),
                    grants.map(|g| format!(", grants {g}")).unwrap_or_default(),
                );
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// How many nodes of the types no section lists there are.
fn counts(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let counts: BTreeMap<&str, usize> = NodeType::ALL
        .iter()
        .filter(|k| {
            !matches!(
                k,
                NodeType::Vision
                    | NodeType::Voice
                    | NodeType::Entity
                    | NodeType::Relationship
                    | NodeType::Dilemma
                    | NodeType::Answer
                    | NodeType::Path
                    | NodeType::Consequence
                    | NodeType::Beat
                    | NodeType::Arc
                    | NodeType::Passage
                    | NodeType::ArtDirection
                    | NodeType::EntityVisual
                    | NodeType::IllustrationBrief
                    | NodeType::Illustration
                    | NodeType::CodexEntry
            )
        })
        .map(|k| Ok((k.name(), graph.nodes(*k)?.len())))
        .collect::<Result<_, GraphError>>()?;
    let counted: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    if !counted.is_empty() {
        let _ = writeln!(out, "## Also in the graph\n\n{}\n", counted.join(", "));
    }
    Ok(())
}

/// What the stage under review changed, batch by batch.
fn changed(graph: &Graph, in_review: Option<Stage>, out: &mut String) -> Result<(), GraphError> {
    if let Some(stage) = in_review {
        let changes: Vec<_> = graph
            .audit(Some(stage))?
            .into_iter()
            .filter(|r| r.phase != "gate")
            .collect();
        let _ = writeln!(out, "## What {stage} changed ({} changes)\n", changes.len());
        let mut batch = None;
        for row in changes {
            if batch != Some(row.batch) {
                batch = Some(row.batch);
                let _ = writeln!(out, "- {} ({}):", row.phase, row.rationale);
            }
            let _ = writeln!(out, "  - {} {}", row.operation, row.target);
        }
    }
    Ok(())
}

/// One `- **Label:** value` line per field of a node's data.
fn labelled(out: &mut String, data: &serde_json::Map<String, Value>, fields: &[(&str, &str)]) {
    for (label, key) in fields {
        let _ = writeln!(out, "- **{label}:** {}", list(data.get(*key)));
    }
}

/// DRESS's art direction and each entity's visual profile.
fn art_direction(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    if let Some(a) = graph.node(ART_DIRECTION)? {
        let d = &a.data;
        let _ = writeln!(out, "## Art direction\n");
        labelled(
            out,
            d,
            &[
                ("Style", "style"),
                ("Medium", "medium"),
                ("Palette", "palette"),
                ("Composition", "composition_notes"),
                ("Avoid", "negative_defaults"),
                ("Aspect ratio", "aspect_ratio"),
            ],
        );
        out.push('\n');
        let mut profiles = graph.edges(EdgeType::DescribesVisual)?;
        profiles.sort_by(|x, y| x.to.cmp(&y.to));
        if !profiles.is_empty() {
            let _ = writeln!(out, "### Visual profiles\n");
        }
        for e in profiles {
            if let Some(v) = graph.node(&e.from)? {
                let _ = writeln!(
                    out,
                    "- `{}`: {}; features: {}; colours: {}; in every picture: \"{}\"",
                    e.to,
                    v.str("description").unwrap_or(""),
                    list(v.data.get("distinguishing_features")),
                    list(v.data.get("color_associations")),
                    v.str("reference_prompt_fragment").unwrap_or("")
                );
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// DRESS's briefs, best first, with their scores and what the budget draws.
fn briefs(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let ranked = ranked_briefs(graph)?;
    if !ranked.is_empty() {
        // A budget that does not parse reads as none chosen (approve says why).
        let budget = budget(graph).unwrap_or(None);
        let chosen = budget.map(|b| b.select(&ranked)).unwrap_or_default();
        let drawn: BTreeMap<String, String> = graph
            .edges(EdgeType::FromBrief)?
            .into_iter()
            .map(|e| (e.to, e.from))
            .collect();
        let _ = writeln!(
            out,
            "## Illustration briefs (best first; budget: {})\n",
            budget.map_or_else(|| "not chosen yet".to_owned(), |b| b.to_string())
        );
        for r in &ranked {
            let Some(b) = graph.node(&r.id)? else {
                continue;
            };
            let mark = if drawn.contains_key(&r.id) {
                "drawn"
            } else if chosen.contains(&r.id) {
                "to draw"
            } else {
                "not drawn"
            };
            let target = graph.targets(EdgeType::Targets, &r.id)?.join(", ");
            let _ = writeln!(
                out,
                "- **{}** (score {}: {}) `{}` → `{target}`, {mark}\n  - {} {}; {}; mood {}; avoid {}\n  - caption: \"{}\"",
                r.priority
                    .map_or_else(|| "skip".to_owned(), |p| format!("P{p}")),
                r.score,
                list(b.data.get("score_reasons")),
                r.id,
                b.str("category").unwrap_or("scene"),
                b.str("subject").unwrap_or(""),
                b.str("composition").unwrap_or(""),
                b.str("mood").unwrap_or(""),
                b.str("negative").unwrap_or(""),
                b.str("caption").unwrap_or(""),
            );
        }
        out.push('\n');
    }
    Ok(())
}

/// Each entity's codex tiers.
fn codex(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let mut entries: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    for e in graph.edges(EdgeType::HasEntry)? {
        if let Some(c) = graph.node(&e.from)? {
            entries.entry(e.to).or_default().push(c);
        }
    }
    if !entries.is_empty() {
        let _ = writeln!(out, "## Codex\n");
        for (entity, mut tiers) in entries {
            tiers.sort_by_key(|t| t.data.get("rank").and_then(Value::as_u64));
            let _ = writeln!(out, "- `{entity}`");
            for t in tiers {
                let when = list(t.data.get("visible_when"));
                let _ = writeln!(
                    out,
                    "  {}. ({}){} {}",
                    list(t.data.get("rank")),
                    if when.is_empty() {
                        "always".to_owned()
                    } else {
                        format!("once {when}")
                    },
                    t.str("title")
                        .map(|x| format!(" **{x}**"))
                        .unwrap_or_default(),
                    t.str("content").unwrap_or("")
                );
            }
        }
        out.push('\n');
    }
    Ok(())
}

/// The pictures drawn.
fn illustrations(graph: &Graph, out: &mut String) -> Result<(), GraphError> {
    let pictures = graph.nodes(NodeType::Illustration)?;
    if !pictures.is_empty() {
        let _ = writeln!(out, "## Illustrations\n");
        for i in &pictures {
            let _ = writeln!(
                out,
                "- `{}` → `{}` ({}, by {}): `{}` \"{}\"",
                i.id,
                graph.targets(EdgeType::Depicts, &i.id)?.join(", "),
                i.str("category").unwrap_or("scene"),
                i.str("provider").unwrap_or("?"),
                i.str("asset").unwrap_or(""),
                i.str("caption").unwrap_or("")
            );
        }
        out.push('\n');
    }
    Ok(())
}
