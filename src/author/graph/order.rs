//! Orders on beats: a topological order of `(after, before)` pairs, and a cycle in them.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// `ids` in an order where each comes after everything these `(after,
/// before)` pairs put before it; ties (and anything on a cycle, at the end)
/// in the order of `ids`. Deterministic.
pub fn topological(ids: &[String], pairs: &[(String, String)]) -> Vec<String> {
    let index: BTreeMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let mut indegree = vec![0usize; ids.len()];
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); ids.len()];
    for (after, before) in pairs {
        if let (Some(&a), Some(&b)) = (index.get(after.as_str()), index.get(before.as_str())) {
            indegree[a] += 1;
            next[b].push(a);
        }
    }
    let mut ready: BTreeSet<usize> = (0..ids.len()).filter(|i| indegree[*i] == 0).collect();
    let mut out = Vec::with_capacity(ids.len());
    let mut placed = vec![false; ids.len()];
    while let Some(i) = ready.pop_first() {
        out.push(ids[i].clone());
        placed[i] = true;
        for &m in &next[i] {
            indegree[m] -= 1;
            if indegree[m] == 0 {
                ready.insert(m);
            }
        }
    }
    out.extend(
        (0..ids.len())
            .filter(|i| !placed[*i])
            .map(|i| ids[i].clone()),
    );
    out
}

/// A node on a cycle of these `(after, before)` pairs, if there is one.
pub fn cycle_member(pairs: &[(String, String)]) -> Option<String> {
    let mut indegree: BTreeMap<&str, usize> = BTreeMap::new();
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (after, before) in pairs {
        indegree.entry(before).or_default();
        *indegree.entry(after).or_default() += 1;
        next.entry(before).or_default().push(after);
    }
    let mut queue: VecDeque<&str> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    while let Some(n) = queue.pop_front() {
        done.insert(n);
        for m in next.get(n).into_iter().flatten() {
            let d = indegree.get_mut(m).expect("every node has a degree");
            *d -= 1;
            if *d == 0 {
                queue.push_back(m);
            }
        }
    }
    indegree
        .keys()
        .find(|n| !done.contains(*n))
        .map(|n| (*n).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let p = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(cycle_member(&[p("b", "a"), p("c", "b")]), None);
        assert!(cycle_member(&[p("b", "a"), p("c", "b"), p("a", "c")]).is_some());
    }
}
