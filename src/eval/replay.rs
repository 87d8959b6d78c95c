//! `eval replay`: a save's range replayed exactly and with overrides, compared and measured.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::facts::{self, Context, TurnFacts};
use super::metrics::Metrics;
use super::player::{Move, Source};
use crate::session::replay::{
    Answered, Difference, Overrides, RangeReplay, ReplayError, Skipped, TurnReplay, replay_range,
};

/// One replayed turn, for the report.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayTurn {
    pub scene_index: i64,
    pub action: String,
    /// Not replayed: a turn of this kind calls no model.
    pub skipped: Option<String>,
    /// The replay failed where the recording did not.
    pub failed: Option<String>,
    pub differences: Vec<ReplayDifference>,
    /// Calls answered from the record, from the record although their prompt
    /// changed, and by the live model.
    pub recorded: usize,
    pub stale: usize,
    pub live: usize,
    pub stored_narration: Vec<String>,
    pub replayed_narration: Vec<String>,
}

/// A difference, as the report keeps it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayDifference {
    pub area: String,
    pub detail: String,
}

impl From<&Difference> for ReplayDifference {
    fn from(d: &Difference) -> Self {
        Self {
            area: d.area.name().to_owned(),
            detail: d.detail.clone(),
        }
    }
}

/// What `eval replay` found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayReport {
    pub version: u32,
    pub kind: String,
    pub save: PathBuf,
    pub scenes: (i64, i64),
    /// The overrides, in words (`narrate=v3`, `model=…`, `seed=…`, `live`).
    pub overrides: Vec<String>,
    pub commit: String,
    pub seconds: f64,
    /// The recording's metrics (the range replayed exactly) and the replay's.
    pub recorded_metrics: Metrics,
    pub replayed_metrics: Metrics,
    pub notes: Vec<String>,
    pub turns: Vec<ReplayTurn>,
}

impl ReplayReport {
    /// Turns that differ from their recording.
    pub fn differing(&self) -> usize {
        self.turns
            .iter()
            .filter(|t| !t.differences.is_empty() || t.failed.is_some())
            .count()
    }
}

/// The overrides in words.
pub fn describe(o: &Overrides) -> Vec<String> {
    let mut out: Vec<String> = o.prompts.iter().map(|(s, v)| format!("{s}={v}")).collect();
    if let Some(m) = &o.model {
        out.push(format!("model={m}"));
    }
    if let Some(s) = o.seed {
        out.push(format!("seed={s}"));
    }
    if o.live {
        out.push("live".into());
    }
    out
}

/// The facts of each replayed turn (for the metrics).
fn facts_of(range: &RangeReplay) -> Vec<TurnFacts> {
    let corpus = HashSet::new();
    let mut said = HashSet::new();
    range
        .turns
        .iter()
        .filter_map(|t| {
            let (before, result) = (t.before.as_deref()?, t.result.as_deref()?);
            let mut ctx = Context {
                campaign: &before.campaign,
                before,
                corpus: &corpus,
                said: &mut said,
            };
            let mv = Move {
                text: t.action.clone(),
                source: Source::File,
                invalid: None,
            };
            let turn = usize::try_from(t.scene_index).unwrap_or(0);
            Some(facts::of_turn(
                turn,
                t.scene_index,
                mv,
                false,
                result,
                0.0,
                &mut ctx,
            ))
        })
        .collect()
}

fn turn_of(t: &TurnReplay) -> ReplayTurn {
    let count = |how| t.answered.iter().filter(|(_, a)| *a == how).count();
    ReplayTurn {
        scene_index: t.scene_index,
        action: t.action.clone(),
        skipped: match &t.skipped {
            Skipped::No => None,
            Skipped::Yes(kind) => Some(kind.clone()),
        },
        failed: t.failed.clone(),
        differences: t.differences.iter().map(ReplayDifference::from).collect(),
        recorded: count(Answered::Recorded),
        stale: count(Answered::Stale),
        live: count(Answered::Live),
        stored_narration: t.stored_narration.clone(),
        replayed_narration: t.replayed_narration.clone(),
    }
}

/// Replays scenes `first..=last` of `save` exactly, then with `overrides`
/// (when any), and reports both.
pub fn replay(
    save: &Path,
    first: i64,
    last: i64,
    overrides: &Overrides,
) -> Result<ReplayReport, ReplayError> {
    let started = std::time::Instant::now();
    let exact = replay_range(save, first..=last, &Overrides::default());
    let changed = describe(overrides);
    let (recorded, replayed) = if changed.is_empty() {
        let exact = exact?;
        (exact.clone(), exact)
    } else {
        // An exact replay that cannot run (a prompt edited since, say) still
        // lets the overridden one be reported; its metrics then read empty.
        let exact = exact.unwrap_or(RangeReplay {
            turns: Vec::new(),
            notes: vec!["the exact replay of this range failed: recorded metrics are empty".into()],
        });
        (exact, replay_range(save, first..=last, overrides)?)
    };
    let recorded_facts = facts_of(&recorded);
    let replayed_facts = facts_of(&replayed);
    let mut notes = recorded.notes.clone();
    notes.extend(
        replayed
            .notes
            .iter()
            .filter(|n| !recorded.notes.contains(n))
            .cloned(),
    );
    Ok(ReplayReport {
        version: super::report::REPORT_VERSION,
        kind: "replay".into(),
        save: save.to_owned(),
        scenes: (first, last),
        overrides: changed,
        commit: super::report::commit(),
        seconds: started.elapsed().as_secs_f64(),
        recorded_metrics: Metrics::of(&recorded_facts.iter().collect::<Vec<_>>()),
        replayed_metrics: Metrics::of(&replayed_facts.iter().collect::<Vec<_>>()),
        notes,
        turns: replayed.turns.iter().map(turn_of).collect(),
    })
}

impl ReplayReport {
    /// The report for people: what differs per turn, the metrics before and
    /// after, and the narrations side by side.
    pub fn markdown(&self) -> String {
        let mut md = format!(
            "# Replay of {}, scenes {}..{}\n\nOverrides: {}. Commit {}, {:.1} s. {} of {} turns differ.\n",
            self.save.display(),
            self.scenes.0,
            self.scenes.1,
            if self.overrides.is_empty() {
                "none (exact)".to_owned()
            } else {
                self.overrides.join(", ")
            },
            self.commit,
            self.seconds,
            self.differing(),
            self.turns.len()
        );
        for n in &self.notes {
            let _ = writeln!(md, "\nNote: {n}");
        }
        md.push_str("\n## Metrics (recorded → replayed)\n\n");
        md.push_str(&super::report::metrics_table(
            &self.replayed_metrics,
            Some(&self.recorded_metrics),
        ));
        md.push_str("\n## Turns\n");
        for t in &self.turns {
            let _ = writeln!(md, "\n### Scene {}: > {}\n", t.scene_index, t.action);
            if let Some(kind) = &t.skipped {
                let _ = writeln!(md, "A {kind} turn: not replayed.");
                continue;
            }
            let _ = writeln!(
                md,
                "Calls: {} from the record, {} from the record though their prompt changed, {} live.\n",
                t.recorded, t.stale, t.live
            );
            if let Some(f) = &t.failed {
                let _ = writeln!(md, "The replay failed: {f}\n");
            }
            if t.differences.is_empty() && t.failed.is_none() {
                md.push_str("Identical.\n");
            }
            for d in &t.differences {
                let _ = writeln!(md, "- {}: {}", d.area, d.detail);
            }
            md.push_str("\n| recorded | replayed |\n|---|---|\n");
            let rows = t.stored_narration.len().max(t.replayed_narration.len());
            for i in 0..rows {
                let cell = |v: &Vec<String>| {
                    v.get(i)
                        .map_or_else(String::new, |s| s.replace('|', "/").replace('\n', " "))
                };
                let _ = writeln!(
                    md,
                    "| {} | {} |",
                    cell(&t.stored_narration),
                    cell(&t.replayed_narration)
                );
            }
        }
        md
    }
}
