//! Scenarios (`scenarios/<id>.json`): named for their file, on the campaign's ruleset and cast.
//!
//! A scenario's characters and location must exist, its goals belong to its
//! characters, and its `scene_seed` must fit the ruleset's
//! `scene_state_schema` (the opening scene starts from it).

use std::collections::BTreeMap;

use serde_json::Value;

use super::checks::{field_of, known};
use super::{Against, Assembly, Collected, Loader, Parsed};
use crate::campaign::format::Scenario;

impl Loader {
    /// Assembly phase: every scenario, checked, by id.
    pub(super) fn scenarios(&mut self, c: &Collected, against: &Against, a: &mut Assembly) {
        let mut scenarios = BTreeMap::new();
        for s in &c.scenarios {
            self.scenario(s, against, a);
            scenarios.insert(s.value.id.clone(), s.value.clone());
        }
        a.scenarios = scenarios;
    }

    fn scenario(&mut self, s: &Parsed<Scenario>, against: &Against, a: &Assembly) {
        let sc = &s.value;
        let ruleset = &against.ruleset.id;
        let expected = s.rel.file_stem().and_then(|n| n.to_str()).unwrap_or("");
        if sc.id != expected {
            self.report.error(
                &s.rel,
                s.line("/id"),
                format!(
                    "scenario id `{}` differs from its file name `{expected}`",
                    sc.id
                ),
            );
        }
        if let Some(r) = &sc.ruleset_id
            && r != ruleset
        {
            self.report.error(
                &s.rel,
                s.line("/ruleset_id"),
                format!("scenario plays by `{r}`, but the campaign's ruleset is `{ruleset}`"),
            );
        }
        for (i, id) in sc.character_ids.iter().enumerate() {
            if !a.characters.contains_key(id) {
                self.report.error(
                    &s.rel,
                    s.line(&format!("/character_ids/{i}")),
                    format!(
                        "`{id}` is not a character of the campaign ({})",
                        known(a.characters.keys())
                    ),
                );
            }
        }
        for who in sc.goals.keys() {
            if who != "user" && !sc.character_ids.contains(who) {
                self.report.warning(
                    &s.rel,
                    s.line(&format!("/goals/{who}")),
                    format!("a goal for `{who}`, who is not in character_ids"),
                );
            }
        }
        if let Some(loc) = &sc.location
            && !a.locations.contains_key(loc)
        {
            self.report.error(
                &s.rel,
                s.line("/location"),
                format!("location `{loc}` is not defined (world/state.json or a pack)"),
            );
        }
        if let Some(v) = &against.scene {
            let seed = Value::Object(sc.scene_seed.clone());
            for e in v.iter_errors(&seed) {
                let ptr = e.instance_path().to_string();
                self.report.error(
                    &s.rel,
                    s.line(&format!("/scene_seed{ptr}")),
                    format!(
                        "scene_seed does not fit ruleset `{ruleset}`'s scene_state_schema: {}{e}",
                        field_of(&ptr)
                    ),
                );
            }
        }
    }
}
