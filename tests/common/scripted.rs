//! Scripted model replies for session tests and benches: one turn's worth for every stage.

use loreloom::llm::scripted::Reply;
use serde_json::json;

pub fn reply(stage: &str, text: impl Into<String>) -> Reply {
    Reply {
        stage: Some(stage.into()),
        prompt: None,
        text: text.into(),
    }
}

/// A `resolve` answer: possible, this check and stat (empty for none), maybe a question.
pub fn resolve(check: &str, stat: &str, question: &str) -> String {
    json!({"possible": true, "blocked_reason": "", "clarification_question": question,
           "check": check, "stat": stat, "modifiers": []})
    .to_string()
}

/// `replies` without those of `stage`.
pub fn without(stage: &str, replies: Vec<Reply>) -> Vec<Reply> {
    replies
        .into_iter()
        .filter(|r| r.stage.as_deref() != Some(stage))
        .collect()
}

/// A turn's worth of replies for every stage, generous enough for any NPC activation.
pub fn turn_replies(n: usize) -> Vec<Reply> {
    let mut r = vec![
        reply(
            "resolve",
            json!({"possible": true, "blocked_reason": "", "clarification_question": "",
                   "check": "action", "stat": "nerve", "modifiers": [{"name": "skill", "value": 1}]})
            .to_string(),
        ),
        reply(
            "extract",
            json!({"state_ops": [{"op": "add_tag", "path": "characters.player.tags", "value": format!("marked_{n}")}],
                   "observations": [{"character_id": "hesper_vane", "content": format!("The surveyor acted ({n})."), "importance": 3}]})
            .to_string(),
        ),
        reply("narrate", format!("Turn {n}: you grip the cold rail as the lanterns flare.")),
        reply(
            "lore_extract",
            json!({"facts": [{"subject": "Ferry", "predicate": "lantern colour", "object": format!("green ({n})")}]}).to_string(),
        ),
    ];
    for i in 0..4 {
        r.push(reply(
            "npc_intent",
            json!({"thought": format!("npc thought {n}.{i}"), "intention": format!("npc intention {n}.{i}")}).to_string(),
        ));
        r.push(reply(
            "narrate",
            format!("Turn {n}, NPC {i}: someone moves in the fog."),
        ));
        r.push(reply(
            "extract",
            json!({"state_ops": [], "observations": []}).to_string(),
        ));
        r.push(reply("lore_extract", json!({"facts": []}).to_string()));
    }
    r.push(reply(
        "choices",
        json!({"choices": ["Ask Hesper about the green", "Watch the quay", "Check the lantern wicks"]}).to_string(),
    ));
    r
}
