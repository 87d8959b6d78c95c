//! Seed 002's Plan JSON (§2.2.1) and its checks before anything runs (§2.2.3).
//!
//! Seed 002's Plan JSON (§2.2.1) and its checks before anything runs (§2.2.3): unique tool ids,
//! known dependencies, no cycle (Kahn's algorithm gives the order), tools the discovered skills
//! have and the plan has not disabled.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How often and how patiently a tool is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    #[serde(default = "three")]
    pub max_retries: u32,
    #[serde(default = "hundred")]
    pub backoff_ms: u64,
}

fn three() -> u32 {
    3
}
fn hundred() -> u64 {
    100
}
fn yes() -> bool {
    true
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            backoff_ms: 100,
        }
    }
}

impl RetryPolicy {
    /// The wait before retry `attempt` (1-based): `backoffMs × 2^(attempt−1)`.
    pub fn delay(self, attempt: u32) -> std::time::Duration {
        let factor = 1u64 << attempt.saturating_sub(1).min(16);
        std::time::Duration::from_millis(self.backoff_ms.saturating_mul(factor))
    }
}

/// One tool in a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub tool_id: String,
    /// `skill` or `skill/script` (never a path on disk: the model names
    /// what was discovered, and only that runs).
    pub tool_path: String,
    #[serde(default)]
    pub input: Value,
    #[serde(default)]
    pub dependencies: Vec<String>,
    #[serde(default = "yes")]
    pub required: bool,
    #[serde(default, rename = "async")]
    pub is_async: bool,
    #[serde(default)]
    pub retry_policy: Option<RetryPolicy>,
}

/// Where a plan stands in the replan loop.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanMeta {
    #[serde(default = "one")]
    pub generation_attempt: u32,
    #[serde(default)]
    pub parent_plan_id: Option<String>,
}

fn one() -> u32 {
    1
}

/// A plan.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    pub request_id: String,
    #[serde(default)]
    pub narrative: Option<String>,
    pub tools: Vec<ToolCall>,
    #[serde(default)]
    pub parallel: bool,
    #[serde(default)]
    pub disabled_skills: Vec<String>,
    #[serde(default)]
    pub metadata: PlanMeta,
}

/// Why a plan is refused before anything runs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("two tools are called `{0}`")]
    Duplicate(String),
    #[error("`{tool}` depends on `{missing}`, which the plan does not have")]
    UnknownDependency { tool: String, missing: String },
    #[error("the tools' dependencies go round in a circle (through `{0}`)")]
    Cycle(String),
    #[error("`{tool}` calls `{path}`, which no enabled skill has")]
    UnknownTool { tool: String, path: String },
}

impl PlanError {
    /// Seed §2.2.4's category for this refusal.
    pub fn category(&self) -> super::invoke::Category {
        match self {
            PlanError::Cycle(_) => super::invoke::Category::CircularDependency,
            _ => super::invoke::Category::ToolFailure,
        }
    }
}

/// Why the planner gave no plan (the replan loop asks again).
#[derive(Debug, thiserror::Error)]
pub enum PlannerError {
    /// The model call failed (after the gateway's repairs and retries).
    #[error(transparent)]
    Call(#[from] Box<crate::llm::LlmError>),
    #[error("the planner's answer is no plan: {0}")]
    NotAPlan(#[from] serde_json::Error),
}

/// The skill a tool path names (`dice-roller/roll` → `dice-roller`).
pub fn skill_of(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

impl Plan {
    /// The tools' indices in an order that respects every dependency
    /// (Kahn's algorithm, ties in the plan's order), or why there is none.
    /// `known` says whether a tool path names an enabled skill's script.
    #[expect(
        clippy::indexing_slicing,
        reason = "indices come from the plan's own tool list"
    )]
    pub fn order(&self, known: &dyn Fn(&str) -> bool) -> Result<Vec<usize>, PlanError> {
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, t) in self.tools.iter().enumerate() {
            if index.insert(t.tool_id.as_str(), i).is_some() {
                return Err(PlanError::Duplicate(t.tool_id.clone()));
            }
            if !known(&t.tool_path)
                || self
                    .disabled_skills
                    .iter()
                    .any(|d| d == skill_of(&t.tool_path))
            {
                return Err(PlanError::UnknownTool {
                    tool: t.tool_id.clone(),
                    path: t.tool_path.clone(),
                });
            }
        }
        let mut indegree = vec![0usize; self.tools.len()];
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); self.tools.len()];
        for (i, t) in self.tools.iter().enumerate() {
            let deps: BTreeSet<&String> = t.dependencies.iter().collect();
            for d in deps {
                let Some(&j) = index.get(d.as_str()) else {
                    return Err(PlanError::UnknownDependency {
                        tool: t.tool_id.clone(),
                        missing: d.clone(),
                    });
                };
                next[j].push(i);
                indegree[i] += 1;
            }
        }
        let mut queue: VecDeque<usize> = (0..self.tools.len())
            .filter(|i| indegree[*i] == 0)
            .collect();
        let mut out = Vec::with_capacity(self.tools.len());
        while let Some(i) = queue.pop_front() {
            out.push(i);
            for &j in &next[i] {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    queue.push_back(j);
                }
            }
        }
        if out.len() == self.tools.len() {
            Ok(out)
        } else {
            let stuck = (0..self.tools.len())
                .find(|i| indegree[*i] > 0)
                .map_or_else(String::new, |i| self.tools[i].tool_id.clone());
            Err(PlanError::Cycle(stuck))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(tools: Value) -> Plan {
        serde_json::from_value(json!({"requestId": "p1", "tools": tools})).expect("a plan")
    }

    #[test]
    fn kahn_orders_the_seeds_diamond() {
        let p = plan(json!([
            {"toolId": "D", "toolPath": "s", "dependencies": ["B", "C"]},
            {"toolId": "A", "toolPath": "s"},
            {"toolId": "B", "toolPath": "s", "dependencies": ["A"]},
            {"toolId": "C", "toolPath": "s", "dependencies": ["A"]}
        ]));
        let order: Vec<&str> = p
            .order(&|_| true)
            .expect("ordered")
            .into_iter()
            .map(|i| p.tools[i].tool_id.as_str())
            .collect();
        assert_eq!(order, ["A", "B", "C", "D"]);
        // Defaults: required, not async, no retry policy (the skill's).
        assert!(p.tools[0].required && !p.tools[0].is_async);
    }

    #[test]
    fn bad_plans_are_refused_before_anything_runs() {
        let cycle = plan(json!([
            {"toolId": "A", "toolPath": "s", "dependencies": ["C"]},
            {"toolId": "B", "toolPath": "s", "dependencies": ["A"]},
            {"toolId": "C", "toolPath": "s", "dependencies": ["B"]}
        ]));
        let err = cycle.order(&|_| true).unwrap_err();
        assert!(matches!(err, PlanError::Cycle(_)));
        assert_eq!(
            err.category(),
            super::super::invoke::Category::CircularDependency
        );
        let missing = plan(json!([{"toolId": "A", "toolPath": "s", "dependencies": ["Z"]}]));
        assert!(matches!(
            missing.order(&|_| true),
            Err(PlanError::UnknownDependency { .. })
        ));
        let twice =
            plan(json!([{"toolId": "A", "toolPath": "s"}, {"toolId": "A", "toolPath": "s"}]));
        assert_eq!(
            twice.order(&|_| true),
            Err(PlanError::Duplicate("A".into()))
        );
        let unknown = plan(json!([{"toolId": "A", "toolPath": "rm -rf /"}]));
        assert!(matches!(
            unknown.order(&|p| p == "s"),
            Err(PlanError::UnknownTool { .. })
        ));
        let mut disabled = plan(json!([{"toolId": "A", "toolPath": "dice/roll"}]));
        disabled.disabled_skills = vec!["dice".into()];
        assert!(matches!(
            disabled.order(&|_| true),
            Err(PlanError::UnknownTool { .. })
        ));
    }

    #[test]
    fn backoff_doubles() {
        let p = RetryPolicy {
            max_retries: 3,
            backoff_ms: 100,
        };
        let ms: Vec<u128> = (1..=3).map(|a| p.delay(a).as_millis()).collect();
        assert_eq!(ms, [100, 200, 400]);
    }
}
