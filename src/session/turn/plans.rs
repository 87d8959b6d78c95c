//! The skills' part of a turn (#25): the planner's plans, their runs, replans and the fallback.
//!
//! The runner hands a plan to its driver ([`TurnRunner::take_skill_work`]),
//! which runs it (or, replaying, hands back the recorded run) and gives the
//! result to [`TurnRunner::deliver_skills`]; a failed plan is replanned
//! without the skills that failed, up to `MAX_ATTEMPTS`.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::Purpose;
use super::TurnRunner;
use crate::session::phrasing::without_roll;
use crate::session::skills::{SkillAttempt, SkillRun, SkillWork};
use crate::skills::execute::{MAX_ATTEMPTS, PlanRequest, fallback_narration};
use crate::skills::{Plan, planner};

impl TurnRunner {
    /// A plan the skills should run now (#25), handed out once: the driver
    /// runs it (or, replaying, hands back the recorded run) and gives the
    /// result to [`Self::deliver_skills`].
    pub fn take_skill_work(&mut self) -> Option<SkillWork> {
        let work = self.skills.work.take();
        self.skills.running |= work.is_some();
        work
    }

    /// Hand back what running the plan came to.
    pub fn deliver_skills(&mut self, run: SkillRun) {
        if !self.skills.running {
            return;
        }
        self.skills.running = false;
        let Some(attempt) = self.skills.attempts.last_mut() else {
            return;
        };
        self.state.skills.health.record_result(&run.result);
        let number = attempt.attempt;
        let success = run.result.success;
        for r in &run.refused {
            self.ledger.refused.push(format!("skills: {r}"));
        }
        if success {
            let before = std::mem::replace(
                &mut self.state.world.skills,
                run.result.aggregated_state.clone(),
            );
            let mut told = std::collections::BTreeSet::new();
            for tool in &run.result.tool_results {
                if let Some(summary) = tool.summary() {
                    self.skills.notes.push(format!("{}: {summary}", tool.skill));
                    told.insert(tool.skill.clone());
                }
            }
            // A skill's summary is its own words for the narrator; its state
            // keys go to the narrator only where it gave none (a small model
            // copies `weather.clock: 19:40` into the story word for word).
            let changed = crate::session::skills::changed_keys(&before, &self.state.world.skills);
            self.skills.notes.extend(
                crate::session::skills::entries(&self.state.world.skills)
                    .into_iter()
                    .filter(|(k, _)| changed.contains(k))
                    .filter(|(k, _)| !told.contains(k.split('.').next().unwrap_or(k)))
                    .take(6)
                    .map(|(k, v)| format!("{k}: {v}")),
            );
            if let Some(choices) = run.result.choices().filter(|c| !c.is_empty()) {
                self.skills.choices = choices;
            }
        } else {
            let why = run.result.refused.as_ref().map_or_else(
                || format!("failed: {}", run.result.failed_tools.join(", ")),
                |f| format!("refused: {}", f.message),
            );
            self.ledger
                .refused
                .push(format!("skills: plan {number} of {MAX_ATTEMPTS} {why}"));
            self.skills
                .disabled
                .extend(run.result.disabled_skills.iter().cloned());
        }
        attempt.run = Some(run);
        let replanned = !success && number < MAX_ATTEMPTS && self.ask_planner(number + 1);
        if !success && !replanned {
            let fallback = fallback_narration(&self.input.text, self.skills.attempts.len());
            self.ledger.refused.push(format!(
                "skills: every plan failed; the player was told: {fallback}"
            ));
            self.skills.fallback = Some(fallback);
        }
        self.advance();
    }

    /// Ask the planner for attempt `n` (#25), with the skills that failed so
    /// far left out; false when no skill is left to choose from.
    pub(super) fn ask_planner(&mut self, attempt: u32) -> bool {
        let request = PlanRequest {
            attempt,
            disabled_skills: self.left_out().into_iter().collect(),
            parent_plan_id: self.last_plan_id(),
        };
        let outcome = if self.blocked.is_empty() {
            without_roll(&self.outcome_text)
        } else {
            format!("it cannot happen: {}", self.blocked)
        };
        let Some(call) = planner::request(
            &self.state.skills.found,
            &self.state.small_model,
            &self.input.text,
            &outcome,
            &request,
            self.state.recalled.skills.as_ref(),
        ) else {
            return false;
        };
        let call = call.seed(self.call_seed());
        self.queue(Purpose::Plan { attempt }, call);
        true
    }

    /// With no skill offered to the planner (none enabled, or none the move
    /// calls for among those that list moves), the campaign's every-turn
    /// tools still run: a plan of just those; false when there are none.
    pub(super) fn plan_every_turn(&mut self) -> bool {
        let mut every_turn = Plan::default();
        self.add_every_turn(&mut every_turn);
        if every_turn.tools.is_empty() {
            // Nothing to run: no plan to record either.
            return false;
        }
        self.on_plan(1, Ok(json!({"tools": []})));
        true
    }

    /// The planner's answer for attempt `n`, with the campaign's every-turn
    /// tools added: a plan for the driver to run, or none (no tools; no plan
    /// at all and nothing every turn: the turn goes on without skills).
    pub(super) fn on_plan(&mut self, attempt: u32, answer: Result<Value, String>) {
        let id = format!("plan-{}-{attempt}", self.turn_id);
        let (mut plan, planner_error) =
            match answer.and_then(|v| planner::parse(v, &id).map_err(|e| e.to_string())) {
                Ok(plan) => (plan, None),
                Err(e) => {
                    // Leaving skills out cannot mend a planner that gives no
                    // plan: it is not asked again this turn.
                    self.ledger
                        .refused
                        .push(format!("skills: no plan this turn ({e})"));
                    let empty = Plan {
                        request_id: id,
                        ..Plan::default()
                    };
                    (empty, Some(e))
                }
            };
        plan.metadata.generation_attempt = attempt;
        plan.metadata.parent_plan_id = self.last_plan_id();
        plan.disabled_skills = self.skills.disabled.iter().cloned().collect();
        self.add_every_turn(&mut plan);
        if !plan.tools.is_empty() {
            self.skills.work = Some(SkillWork {
                plan: plan.clone(),
                state: self.state.world.skills.clone(),
            });
        }
        self.skills.attempts.push(SkillAttempt {
            attempt,
            plan: Some(plan),
            planner_error,
            run: None,
        });
    }

    /// The campaign's `skills_every_turn` tools the plan does not call yet,
    /// each optional, when their skill is found and not left out.
    fn add_every_turn(&self, plan: &mut Plan) {
        let found = &self.state.skills.found;
        let left_out = self.left_out();
        for path in &self.state.campaign.manifest.skills_every_turn {
            let name = crate::skills::plan::skill_of(path);
            let Some(skill) = found.get(name) else {
                continue;
            };
            let Some(script) = skill.script(path) else {
                continue;
            };
            let left_out = left_out.contains(name);
            // Called already (`weather` and `weather/advance` name one script).
            let called = plan.tools.iter().any(|t| {
                crate::skills::plan::skill_of(&t.tool_path) == name
                    && skill
                        .script(&t.tool_path)
                        .is_some_and(|s| s.name == script.name)
            });
            if left_out || called {
                continue;
            }
            plan.tools.push(crate::skills::plan::ToolCall {
                tool_id: format!("every-turn-{}", path.replace('/', "-")),
                tool_path: path.clone(),
                // Where and when the scene is, for a skill starting out.
                input: json!({"scene": self.state.world.scene}),
                dependencies: Vec::new(),
                required: false,
                is_async: false,
                retry_policy: None,
            });
        }
    }

    /// The skills left out of this turn's plans: those that failed in an
    /// earlier plan, and those health has disabled for the session.
    fn left_out(&self) -> BTreeSet<String> {
        let mut out = self.skills.disabled.clone();
        out.extend(self.state.skills.health.disabled());
        out
    }

    /// The request id of this turn's last plan, the next one's parent.
    fn last_plan_id(&self) -> Option<String> {
        self.skills
            .attempts
            .last()
            .and_then(|a| a.plan.as_ref())
            .map(|p| p.request_id.clone())
    }

    /// A plan waits to be taken or is running.
    pub(super) fn skills_busy(&self) -> bool {
        self.skills.running || self.skills.work.is_some()
    }
}
