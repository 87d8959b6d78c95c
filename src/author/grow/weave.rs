//! GROW's weave: every beat in one order, and what each later phase asks of beats and paths.

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Beat, Dilemma, GrowError, MAX_ARCS, Path, Seeded};
use crate::author::graph::{cycle_member, topological};

/// SEED's beats and paths, indexed, with the one global order of the beats.
pub(super) struct Weave<'a> {
    /// Beat ids in SEED's order.
    pub ids: Vec<String>,
    /// Every beat, in one order respecting every `sequenced_after`.
    pub order: Vec<String>,
    pub beats: BTreeMap<&'a str, &'a Beat>,
    pub path_of: BTreeMap<&'a str, &'a Path>,
    /// Each dilemma's explored paths, canonical first.
    pub by_dilemma: BTreeMap<&'a str, Vec<&'a Path>>,
    /// Each dilemma's convergence contract.
    pub contract: BTreeMap<&'a str, &'a Dilemma>,
    /// Where in the weave each beat lies.
    pub at: BTreeMap<&'a str, usize>,
    /// Where in the weave each dilemma's last beat of a branch's own lies.
    pub last_own: BTreeMap<&'a str, usize>,
    /// The dilemmas whose answers each have a beat of their own (where their codewords are
    /// granted): variant routing can tell their answers apart.
    pub routable: BTreeSet<&'a str>,
}

impl<'a> Weave<'a> {
    /// The weave of what SEED left; refuses a cycle, a path without beats and too many arcs.
    pub fn new(seeded: &'a Seeded) -> Result<Self, GrowError> {
        let beats: BTreeMap<&str, &Beat> =
            seeded.beats.iter().map(|b| (b.id.as_str(), b)).collect();
        let ids: Vec<String> = seeded.beats.iter().map(|b| b.id.clone()).collect();
        if let Some(on_cycle) = cycle_member(&seeded.order) {
            return Err(GrowError::Cycle(on_cycle));
        }
        let order = topological(&ids, &seeded.order);

        let path_of: BTreeMap<&str, &Path> =
            seeded.paths.iter().map(|p| (p.id.as_str(), p)).collect();
        let mut by_dilemma: BTreeMap<&str, Vec<&Path>> = BTreeMap::new();
        for p in &seeded.paths {
            by_dilemma.entry(p.dilemma.as_str()).or_default().push(p);
        }
        for list in by_dilemma.values_mut() {
            list.sort_by_key(|p| (!p.canonical, p.id.clone()));
        }
        for p in &seeded.paths {
            if !seeded.beats.iter().any(|b| b.paths.contains(&p.id)) {
                return Err(GrowError::EmptyPath(p.id.clone()));
            }
        }
        let contract = seeded.dilemmas.iter().map(|d| (d.id.as_str(), d)).collect();
        let count: usize = by_dilemma.values().map(Vec::len).product();
        if count > MAX_ARCS {
            return Err(GrowError::TooManyArcs(count));
        }
        let at = order
            .iter()
            .enumerate()
            .filter_map(|(i, b)| beats.get_key_value(b.as_str()).map(|(k, _)| (*k, i)))
            .collect();
        let mut weave = Self {
            ids,
            order,
            beats,
            path_of,
            by_dilemma,
            contract,
            at,
            last_own: BTreeMap::new(),
            routable: BTreeSet::new(),
        };
        weave.last_own = weave.last_own();
        weave.routable = weave.routable(seeded);
        Ok(weave)
    }

    fn last_own(&self) -> BTreeMap<&'a str, usize> {
        let mut last_own = BTreeMap::new();
        for (i, b) in self.order.iter().enumerate() {
            for d in self.by_dilemma.keys() {
                if self.exclusive_to(self.beats[b.as_str()], d) {
                    last_own.insert(*d, i);
                }
            }
        }
        last_own
    }

    fn routable(&self, seeded: &'a Seeded) -> BTreeSet<&'a str> {
        self.by_dilemma
            .iter()
            .filter(|(d, list)| {
                list.len() > 1
                    && list.iter().all(|p| {
                        seeded
                            .beats
                            .iter()
                            .any(|b| b.paths.contains(&p.id) && self.exclusive_to(b, d))
                    })
            })
            .map(|(d, _)| *d)
            .collect()
    }

    /// A beat by id (every id in the weave is one of SEED's beats).
    pub fn beat(&self, id: &str) -> &'a Beat {
        self.beats[id]
    }

    /// Whether a beat serves some of a dilemma's explored paths but not all (a branch's own).
    pub fn exclusive_to(&self, beat: &Beat, dilemma: &str) -> bool {
        let theirs = &self.by_dilemma[dilemma];
        let serves = theirs.iter().filter(|p| beat.paths.contains(&p.id)).count();
        serves > 0 && serves < theirs.len()
    }

    /// Whether a beat is on an arc: for every dilemma its paths touch, the arc's path for
    /// that dilemma is one of them.
    pub fn on_arc(&self, beat: &Beat, arc: &[&Path]) -> bool {
        let touched: BTreeSet<&str> = beat
            .paths
            .iter()
            .filter_map(|p| self.path_of.get(p.as_str()).map(|p| p.dilemma.as_str()))
            .collect();
        !touched.is_empty()
            && touched.iter().all(|d| {
                arc.iter()
                    .find(|p| p.dilemma == *d)
                    .is_some_and(|p| beat.paths.contains(&p.id))
            })
    }
}
