//! Plot beats (`plot/beats.json`): ids unique, references to beats and characters that exist.
//!
//! A beat may not require itself; its scene window must be a window; its
//! outcomes' probabilities should add up to 1; its music should exist.

use std::collections::BTreeSet;
use std::path::Path;

use super::{Against, Assembly, Collected, Loader};
use crate::campaign::format::Beat;

impl Loader {
    /// Assembly phase: the beats, checked against each other and the cast.
    pub(super) fn beats(&mut self, c: &Collected, against: &Against, a: &mut Assembly) {
        let Some(b) = &c.beats else {
            return;
        };
        let ids: BTreeSet<&str> = b.value.beats.iter().map(|b| b.id.as_str()).collect();
        let mut seen = BTreeSet::new();
        for (i, beat) in b.value.beats.iter().enumerate() {
            let at = |field: &str| b.line(&format!("/beats/{i}/{field}"));
            if !seen.insert(beat.id.as_str()) {
                self.report
                    .error(&b.rel, at("id"), format!("duplicate beat id `{}`", beat.id));
            }
            for (field, target) in beat_references(beat) {
                if target == &beat.id {
                    self.report.error(
                        &b.rel,
                        at(field),
                        format!("beat `{}` requires itself", beat.id),
                    );
                } else if !ids.contains(target.as_str()) {
                    self.report.error(
                        &b.rel,
                        at(field),
                        format!(
                            "beat `{}` refers to beat `{target}`, which does not exist",
                            beat.id
                        ),
                    );
                }
            }
            let cond = &beat.conditions;
            if let Some(w) = &cond.scene_count
                && let (Some(lo), Some(hi)) = (w.min, w.max)
                && lo > hi
            {
                self.report.error(
                    &b.rel,
                    at("conditions/scene_count"),
                    format!("scene_count min {lo} is above max {hi}"),
                );
            }
            for npc in cond.npc_state.keys() {
                if !a.characters.contains_key(npc) {
                    self.report.error(
                        &b.rel,
                        at("conditions/npc_state"),
                        format!("npc_state names `{npc}`, who is not a character"),
                    );
                }
            }
            let total: f64 = beat.outcomes.iter().map(|o| o.probability).sum();
            if !beat.outcomes.is_empty() && (total - 1.0).abs() > 0.01 {
                self.report.warning(
                    &b.rel,
                    at("outcomes"),
                    format!(
                        "outcome probabilities of `{}` add up to {total:.2}, not 1",
                        beat.id
                    ),
                );
            }
            if let Some(music) = &beat.music
                && !against.asset_paths.contains(Path::new(music))
            {
                self.report.warning(
                    &b.rel,
                    at("music"),
                    format!("music `{music}` does not exist (orphaned reference)"),
                );
            }
        }
        a.beats.clone_from(&b.value.beats);
    }
}

/// The beats `beat` names, each with the field (a JSON pointer below the
/// beat) that names it: what it requires, its timeout's fallback, its
/// outcomes' next beats.
fn beat_references(beat: &Beat) -> Vec<(&'static str, &String)> {
    let cond = &beat.conditions;
    let mut wanted: Vec<(&str, &String)> = Vec::new();
    if let Some(r) = &cond.requires_beat {
        wanted.push(("conditions/requires_beat", r));
    }
    wanted.extend(
        cond.requires_any_beat
            .iter()
            .map(|r| ("conditions/requires_any_beat", r)),
    );
    if let Some(t) = &beat.timeout
        && let Some(f) = &t.fallback_beat
    {
        wanted.push(("timeout/fallback_beat", f));
    }
    wanted.extend(
        beat.outcomes
            .iter()
            .filter_map(|o| o.next_beat.as_ref())
            .map(|n| ("outcomes", n)),
    );
    wanted
}
