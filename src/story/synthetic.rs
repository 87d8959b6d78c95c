//! Generated story graphs of any size, for benchmarks and scale tests.
//!
//! The shape is branch-and-bottleneck, as GROW produces: each unit is a hub
//! with three branches that rejoin at the next hub. Each codeword is granted on
//! one branch and read a few units later by a gated branch (and once more,
//! paired with its predecessor), so gates are satisfiable, every codeword is
//! read, and only a handful of codewords are live at any point.

use indexmap::IndexMap;

use super::model::{
    Appearance, Choice, Codeword, CodexEntry, Entity, Overlay, Passage, STORY_FORMAT,
    STORY_FORMAT_VERSION, StoryFile, StoryMeta,
};

/// Units between a codeword's grant and its gates.
const SPAN: usize = 12;

fn hub(u: usize) -> String {
    format!("hub-{u}")
}

fn word(c: usize) -> String {
    format!("cw-{c}")
}

/// The unit whose left road grants codeword `c`.
fn grant_unit(c: usize) -> usize {
    c * SPAN + 1
}

fn prose(id: &str) -> String {
    format!("Prose of {id}. The lamps burn low over the {id} road.")
}

/// A sound story of exactly `passages` passages (at least 8) using `codewords` codewords.
pub fn story(passages: usize, codewords: usize) -> StoryFile {
    assert!(passages >= 8, "a synthetic story needs at least 8 passages");
    // 4 passages per unit, plus the final hub and 3 endings.
    let units = (passages - 4) / 4;
    let extra = passages - 4 - units * 4;
    let codewords = codewords.min(units / SPAN).max(1);
    let mut out = Vec::with_capacity(passages);
    for u in 0..units {
        push_unit(&mut out, u, codewords);
    }
    push_finale(&mut out, units, extra);

    StoryFile {
        format: STORY_FORMAT.to_owned(),
        version: STORY_FORMAT_VERSION,
        meta: StoryMeta {
            id: format!("synthetic-{passages}"),
            title: format!("Synthetic story of {passages} passages"),
            ..StoryMeta::default()
        },
        start: Some(hub(0)),
        passages: out,
        codewords: (0..codewords)
            .map(|c| Codeword {
                id: word(c),
                ..Codeword::default()
            })
            .collect(),
        entities: entities(codewords),
        relationships: Vec::new(),
        codex: codex(codewords),
        illustrations: Vec::new(),
        art_direction: None,
        scenes: Vec::new(),
    }
}

/// Unit `u`: its hub (the left road granting the unit's codewords, the hidden road gated)
/// and the three branches that rejoin at the next hub.
fn push_unit(out: &mut Vec<Passage>, u: usize, codewords: usize) {
    let granted: Vec<String> = (0..codewords)
        .filter(|&c| grant_unit(c) == u)
        .map(word)
        .collect();
    let gated = (0..codewords).find(|&c| grant_unit(c) + SPAN / 2 == u);
    let paired = (1..codewords).find(|&c| grant_unit(c) + SPAN - 3 == u);
    let branch = |name: &str| format!("{name}-{u}");
    let mut hub_choices = vec![
        Choice {
            label: format!("Take the left road ({u})"),
            to: branch("left"),
            grants: granted,
            ..Choice::default()
        },
        Choice {
            label: format!("Take the middle road ({u})"),
            to: branch("middle"),
            ..Choice::default()
        },
    ];
    let requires = match (gated, paired) {
        (Some(c), _) => vec![word(c)],
        (None, Some(c)) => vec![word(c - 1), word(c)],
        (None, None) => Vec::new(),
    };
    hub_choices.push(Choice {
        label: format!("Take the hidden road ({u})"),
        to: branch("hidden"),
        requires,
        ..Choice::default()
    });
    let id = hub(u);
    out.push(Passage {
        prose: prose(&id),
        choices: hub_choices,
        appears: vec![Appearance {
            entity: format!("entity-{}", u % 50),
            role: Some("witness".to_owned()),
        }],
        id,
        ..Passage::default()
    });
    for name in ["left", "middle", "hidden"] {
        let id = branch(name);
        out.push(Passage {
            prose: prose(&id),
            choices: vec![Choice {
                label: format!("Walk on toward the crossing ({u})"),
                to: hub(u + 1),
                ..Choice::default()
            }],
            id,
            ..Passage::default()
        });
    }
}

/// The final hub and its three endings (the secret one gated on the first codeword); `extra`
/// spare passages (when the size is not 4k+4) form a corridor before the hub.
fn push_finale(out: &mut Vec<Passage>, units: usize, extra: usize) {
    let mut last = hub(units);
    for i in 0..extra {
        let next = format!("corridor-{i}");
        out.push(Passage {
            prose: prose(&last),
            choices: vec![Choice {
                label: "Keep to the corridor".to_owned(),
                to: next.clone(),
                ..Choice::default()
            }],
            id: last,
            ..Passage::default()
        });
        last = next;
    }
    let endings = ["end-dawn", "end-dusk", "end-secret"];
    out.push(Passage {
        prose: prose(&last),
        choices: endings
            .iter()
            .enumerate()
            .map(|(i, e)| Choice {
                label: format!("Go out by the {e} gate"),
                to: (*e).to_owned(),
                requires: if i == 2 { vec![word(0)] } else { Vec::new() },
                ..Choice::default()
            })
            .collect(),
        id: last,
        ..Passage::default()
    });
    for e in endings {
        out.push(Passage {
            id: e.to_owned(),
            title: Some(format!("The {e} ending")),
            prose: prose(e),
            ..Passage::default()
        });
    }
}

/// Fifty walkers, each warming and then devoted as codewords are held.
fn entities(codewords: usize) -> Vec<Entity> {
    (0..50)
        .map(|i| {
            let detail = |v: &str| IndexMap::from([("mood".to_owned(), v.to_owned())]);
            Entity {
                id: format!("entity-{i}"),
                kind: "character".to_owned(),
                name: format!("Walker {i}"),
                base: detail("wary"),
                overlays: vec![
                    Overlay {
                        when: vec![word(i % codewords)],
                        details: detail("warm"),
                    },
                    Overlay {
                        when: vec![word(i % codewords), word((i + 1) % codewords)],
                        details: detail("devoted"),
                    },
                ],
                ..Entity::default()
            }
        })
        .collect()
}

/// Three codex tiers per walker, each above the first gated on more codewords.
fn codex(codewords: usize) -> Vec<CodexEntry> {
    (0..50)
        .flat_map(|i| {
            (1..=3).map(move |rank| CodexEntry {
                id: format!("codex-{i}-{rank}"),
                entity: format!("entity-{i}"),
                rank,
                visible_when: (1..rank)
                    .map(|k| format!("cw-{}", (i + k as usize) % codewords))
                    .collect(),
                content: format!("What is known of walker {i}, tier {rank}."),
                ..CodexEntry::default()
            })
        })
        .collect()
}
