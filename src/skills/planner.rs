//! The planner stage (seed 002 §2.2, issue #25): the model writes a Plan JSON for a move, choosing among the enabled skills only (the contract's `toolPath` narrowed to their tool paths), at most four tools; with no skill enabled it is not asked at all.

use serde_json::{Value, json};

use super::execute::PlanRequest;
use super::manifest::Discovery;
use super::plan::Plan;
use crate::llm::{CallRequest, Gateway};

/// The planner's stage (`prompts/skills/plan/`).
pub const STAGE: &str = "skills/plan";

/// The enabled skills and their tool paths, as the prompt lists them.
fn enabled(skills: &Discovery, disabled: &[String]) -> Vec<Value> {
    skills
        .skills
        .iter()
        .filter(|s| !disabled.contains(&s.manifest.name))
        .map(|s| {
            json!({"name": s.manifest.name, "description": s.manifest.description,
                   "prompt": s.prompt.as_deref().map(str::trim), "tools": s.tool_paths()})
        })
        .collect()
}

/// The call for one attempt, or `None` when no skill is left to choose.
pub fn request(
    skills: &Discovery,
    model: &str,
    player_move: &str,
    outcome: &str,
    attempt: &PlanRequest,
) -> Option<CallRequest> {
    let listed = enabled(skills, &attempt.disabled_skills);
    let paths: Vec<Value> = listed
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .collect();
    if paths.is_empty() {
        return None;
    }
    let mut call = CallRequest::new(
        STAGE,
        model,
        json!({"move": player_move, "outcome": outcome, "skills": listed,
               "attempt": attempt.attempt, "disabled": attempt.disabled_skills}),
    );
    call.narrowing = vec![(
        "/tools/items/toolPath".to_owned(),
        json!({"type": "string", "enum": paths}),
    )];
    Some(call)
}

/// The model's answer as a plan with its id.
pub fn to_plan(answer: Value, id: &str) -> Result<Plan, String> {
    let mut answer = answer;
    answer["requestId"] = json!(id);
    serde_json::from_value(answer).map_err(|e| format!("the planner's answer is no plan: {e}"))
}

/// Asks the model for one attempt's plan (an empty plan when no skill is
/// left to choose).
pub fn ask(
    gateway: &Gateway,
    skills: &Discovery,
    model: &str,
    player_move: &str,
    outcome: &str,
    attempt: &PlanRequest,
    id: &str,
) -> Result<Plan, String> {
    let Some(call) = request(skills, model, player_move, outcome, attempt) else {
        return to_plan(json!({"tools": []}), id);
    };
    let answer = gateway
        .call(call)
        .wait()
        .result
        .map_err(|e| e.to_string())?;
    to_plan(answer, id)
}
