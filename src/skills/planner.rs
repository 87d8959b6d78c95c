//! The planner stage (seed 002 §2.2, issue #25): the model writes a Plan JSON for a move.
//!
//! The planner stage (seed 002 §2.2, issue #25): the model writes a Plan JSON for a move, choosing
//! among the skills offered (the contract's `toolPath` narrowed to their tool paths), at most four
//! tools: the enabled ones the router did not pass over, or only those the move calls for, of which
//! it must then call one ([`super::route`]); with none offered it is not asked at all.

use serde_json::{Value, json};

use super::execute::PlanRequest;
use super::manifest::{Discovery, Skill};
use super::plan::{Plan, PlannerError};
use super::route::Routing;
use crate::llm::{CallRequest, Gateway};

/// The planner's stage (`prompts/skills/plan/`).
pub const STAGE: &str = "skills/plan";

/// The skills offered for one attempt and their tool paths, as the prompt
/// lists them: the enabled ones, less those the router passed over; when the
/// move calls for some ([`Routing::calls_for`]), just those.
fn offered(
    skills: &Discovery,
    disabled: &[String],
    routing: Option<&Routing>,
) -> (Vec<Value>, bool) {
    let enabled: Vec<&Skill> = skills
        .skills
        .iter()
        .filter(|s| !disabled.contains(&s.manifest.name))
        .filter(|s| !routing.is_some_and(|r| r.passes_over(&s.manifest.name)))
        .collect();
    let fitting: Vec<&Skill> = enabled
        .iter()
        .copied()
        .filter(|s| routing.is_some_and(|r| r.calls_for(&s.manifest.name)))
        .collect();
    let must = !fitting.is_empty();
    let listed = if must { fitting } else { enabled };
    let listed = listed
        .iter()
        .map(|s| {
            json!({"name": s.manifest.name, "description": s.manifest.description,
                   "prompt": s.prompt.as_deref().map(str::trim), "tools": s.tool_paths()})
        })
        .collect();
    (listed, must)
}

/// The call for one attempt, or `None` when no skill is left to choose. With
/// a routing that found skills the move calls for, the plan must call at
/// least one of them (and only them); without one, the model decides.
pub fn request(
    skills: &Discovery,
    model: &str,
    player_move: &str,
    outcome: &str,
    attempt: &PlanRequest,
    routing: Option<&Routing>,
) -> Option<CallRequest> {
    let (listed, must) = offered(skills, &attempt.disabled_skills, routing);
    let paths: Vec<Value> = listed
        .iter()
        .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
        .collect();
    if paths.is_empty() {
        return None;
    }
    let call = CallRequest::new(
        STAGE,
        model,
        json!({"move": player_move, "outcome": outcome, "skills": listed, "must": must,
               "attempt": attempt.attempt, "disabled": attempt.disabled_skills}),
    )
    .narrow(
        "/tools/items/toolPath",
        json!({"type": "string", "enum": paths}),
    );
    // One tool offered: its input is written to its own schema.
    let input_schema = match paths.as_slice() {
        [only] => only
            .as_str()
            .and_then(|p| skills.get(super::plan::skill_of(p))?.script(p))
            .and_then(|s| s.input_schema.clone()),
        _ => None,
    };
    let call = match input_schema {
        Some(schema) => call.narrow("/tools/items/input", schema),
        None => call,
    };
    Some(if must {
        call.tighten("/tools", json!({"minItems": 1}))
    } else {
        call
    })
}

/// The model's answer as a plan with its id.
pub fn parse(answer: Value, id: &str) -> Result<Plan, PlannerError> {
    let mut answer = answer;
    if let Some(fields) = answer.as_object_mut() {
        fields.insert("requestId".into(), json!(id));
    }
    Ok(serde_json::from_value(answer)?)
}

/// Asks the model for one attempt's plan (an empty plan when no skill is
/// left to choose).
#[expect(clippy::too_many_arguments, reason = "one stage's inputs, named")]
pub fn ask(
    gateway: &Gateway,
    skills: &Discovery,
    model: &str,
    player_move: &str,
    outcome: &str,
    attempt: &PlanRequest,
    routing: Option<&Routing>,
    id: &str,
) -> Result<Plan, PlannerError> {
    let Some(call) = request(skills, model, player_move, outcome, attempt, routing) else {
        return parse(json!({"tools": []}), id);
    };
    let answer = gateway.call(call).wait().result.map_err(Box::new)?;
    parse(answer, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::contract::Contract;
    use crate::skills::route::Fit;

    fn bundled() -> Discovery {
        super::super::manifest::discover(&[crate::files::resource_dir("skills")])
    }

    fn routing(fits: &[&str], passed: &[&str]) -> Routing {
        Routing {
            fits: fits
                .iter()
                .map(|s| Fit {
                    skill: (*s).to_owned(),
                    cue: String::new(),
                    score: 0.7,
                })
                .collect(),
            passed: passed.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    fn contract(call: &CallRequest) -> Contract {
        Contract::load(
            &crate::files::resource_dir("schemas"),
            "stages/plan.schema.json",
        )
        .unwrap()
        .narrowed(&call.narrowing)
        .unwrap()
    }

    #[test]
    fn a_move_the_router_fits_to_one_skill_must_call_it_with_input_its_script_takes() {
        let found = bundled();
        let first = PlanRequest {
            attempt: 1,
            ..PlanRequest::default()
        };
        let routed = routing(&["dice-roller"], &["weather", "character-portraits"]);
        let call = request(&found, "m", "I roll", "", &first, Some(&routed)).unwrap();
        assert_eq!(call.vars["must"], json!(true));
        assert_eq!(call.vars["skills"].as_array().unwrap().len(), 1);
        let c = contract(&call);
        let dice = |input: &str| {
            format!(
                r#"{{"tools": [{{"toolId": "d", "toolPath": "dice-roller/roll", "input": {input}}}]}}"#
            )
        };
        assert!(c.check(&dice(r#"{"formula": "2d6+1"}"#)).is_ok());
        // Not an empty plan, no other skill, no formula the script refuses.
        assert!(c.check(r#"{"tools": []}"#).is_err());
        assert!(c.check(&dice(r#"{"formula": "NdS+M"}"#)).is_err());
        assert!(c.check(&dice(r#"{"why": "luck"}"#)).is_err());
        let weather = r#"{"tools": [{"toolId": "w", "toolPath": "weather/advance", "input": {}}]}"#;
        assert!(c.check(weather).is_err());

        // Nothing fits and every skill lists moves: the planner is not asked.
        let none = routing(&[], &["dice-roller", "weather", "character-portraits"]);
        assert!(request(&found, "m", "I talk", "", &first, Some(&none)).is_none());

        // No router: every skill is offered and the model may choose none.
        let call = request(&found, "m", "I talk", "", &first, None).unwrap();
        assert_eq!(call.vars["must"], json!(false));
        assert_eq!(call.vars["skills"].as_array().unwrap().len(), 3);
        let c = contract(&call);
        assert!(c.check(r#"{"tools": []}"#).is_ok());
        assert!(c.check(weather).is_ok());

        // The fitting skill failed this turn: the others the router passed
        // over stay out, so there is nothing left to plan.
        let again = PlanRequest {
            attempt: 2,
            disabled_skills: vec!["dice-roller".into()],
            ..PlanRequest::default()
        };
        assert!(request(&found, "m", "I roll", "", &again, Some(&routed)).is_none());
    }
}
