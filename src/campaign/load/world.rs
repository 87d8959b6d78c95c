//! The starting world (`world/state.json`): entities, clocks, relations, inventory, facts, threads.
//!
//! Ids are unique across locations, items and factions; clocks run from 0
//! to a max of at least 1; relationships name characters and stay in the
//! ruleset's relation range; inventory names owners and items that exist.

use std::collections::BTreeSet;

use super::{Against, Assembly, Collected, Loader, Parsed};
use crate::campaign::format::WorldFile;

impl Loader {
    /// Assembly phase: the world file into the starting state, checked.
    pub(super) fn world(&mut self, c: &Collected, against: &Against, a: &mut Assembly) {
        let Some(w) = &c.world else {
            return;
        };
        self.entities(w, a);
        self.clocks(w, a);
        self.relationships(w, against, a);
        self.inventory(w, a);
        a.world.facts.clone_from(&w.value.facts);
        for t in &w.value.threads {
            a.world.threads.insert(t.id.clone(), t.clone());
        }
        self.routes(w, a);
    }

    /// Routes join two different places the world names.
    fn routes(&mut self, w: &Parsed<WorldFile>, a: &mut Assembly) {
        for (i, route) in w.value.routes.iter().enumerate() {
            let line = w.line(&format!("/routes/{i}"));
            for end in [&route.from, &route.to] {
                if !a.locations.contains_key(end) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!(
                            "route {i} names `{end}`, which is not one of the world's locations"
                        ),
                    );
                }
            }
            if let Some(shut) = &route.closed_when
                && !w.value.clocks.iter().any(|c| c.id == shut.clock)
            {
                self.report.error(
                    &w.rel,
                    line,
                    format!(
                        "route {i} is closed by the clock `{}`, which is not one of the world's clocks",
                        shut.clock
                    ),
                );
            }
            if route.from == route.to {
                self.report.error(
                    &w.rel,
                    line,
                    format!("route {i} goes from `{}` to itself", route.from),
                );
            }
        }
        a.routes.clone_from(&w.value.routes);
    }

    /// Locations, items and factions, one id space among them.
    fn entities(&mut self, w: &Parsed<WorldFile>, a: &mut Assembly) {
        let mut seen = BTreeSet::new();
        for (list, kind, target) in [
            (&w.value.locations, "locations", &mut a.locations),
            (&w.value.items, "items", &mut a.items),
            (&w.value.factions, "factions", &mut a.factions),
        ] {
            for (i, e) in list.iter().enumerate() {
                if !seen.insert(e.id.clone()) {
                    self.report.error(
                        &w.rel,
                        w.line(&format!("/{kind}/{i}/id")),
                        format!("duplicate id `{}`", e.id),
                    );
                }
                target.insert(e.id.clone(), e.clone());
            }
        }
    }

    fn clocks(&mut self, w: &Parsed<WorldFile>, a: &mut Assembly) {
        for (i, clock) in w.value.clocks.iter().enumerate() {
            let line = w.line(&format!("/clocks/{i}"));
            if clock.max < 1 || !(0..=clock.max).contains(&clock.value) {
                self.report.error(
                    &w.rel,
                    line,
                    format!(
                        "clock `{}` is at {} of {}; a clock runs from 0 to a max of at least 1",
                        clock.id, clock.value, clock.max
                    ),
                );
            }
            for at in clock.triggers.keys() {
                if !at
                    .parse::<i64>()
                    .is_ok_and(|v| (1..=clock.max).contains(&v))
                {
                    self.report.error(
                        &w.rel,
                        line,
                        format!(
                            "clock `{}` has a trigger at `{at}`; triggers are at values 1..={}",
                            clock.id, clock.max
                        ),
                    );
                }
            }
            if a.world
                .clocks
                .insert(clock.id.clone(), clock.clone())
                .is_some()
            {
                self.report
                    .error(&w.rel, line, format!("duplicate clock `{}`", clock.id));
            }
        }
    }

    fn relationships(&mut self, w: &Parsed<WorldFile>, against: &Against, a: &mut Assembly) {
        let (lo, hi) = against
            .ruleset
            .mechanics_guidance
            .relation_range
            .unwrap_or((0, 10));
        for (i, r) in w.value.relationships.iter().enumerate() {
            let line = w.line(&format!("/relationships/{i}"));
            for id in [&r.a, &r.b] {
                if !a.characters.contains_key(id) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!("relationship names `{id}`, who is not a character"),
                    );
                }
            }
            for (axis, v) in [
                ("trust", r.trust),
                ("tension", r.tension),
                ("closeness", r.closeness),
            ] {
                if !(lo..=hi).contains(&v) {
                    self.report.error(
                        &w.rel,
                        line,
                        format!(
                            "{axis} {v} between `{}` and `{}` is outside {lo}..={hi}",
                            r.a, r.b
                        ),
                    );
                }
            }
            a.world.relations.push(r.clone());
        }
    }

    fn inventory(&mut self, w: &Parsed<WorldFile>, a: &mut Assembly) {
        for (i, h) in w.value.inventory.iter().enumerate() {
            let line = w.line(&format!("/inventory/{i}"));
            if !a.characters.contains_key(&h.owner) && !a.locations.contains_key(&h.owner) {
                self.report.error(
                    &w.rel,
                    line,
                    format!(
                        "inventory owner `{}` is neither a character nor a location",
                        h.owner
                    ),
                );
            }
            if !a.items.contains_key(&h.item) {
                self.report.error(
                    &w.rel,
                    line,
                    format!("inventory item `{}` is not among the items", h.item),
                );
            }
            *a.world
                .inventory
                .entry(h.owner.clone())
                .or_default()
                .entry(h.item.clone())
                .or_default() += h.qty;
        }
    }
}
