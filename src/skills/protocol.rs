//! Seed 002's tool protocol (§2.1): the NDJSON events a skill script writes, and its input.
//!
//! Seed 002's tool protocol (§2.1): the NDJSON events a skill script writes (`log`, `state_patch`,
//! `asset`, `ui_event`, `error`, `done`; envelope version "0"; unknown fields ignored, an unknown
//! type or a line that is not a JSON object is a protocol error) and the JSON input it reads on
//! stdin.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version every event carries.
pub const VERSION: &str = "0";

/// A log line's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// One event of a script's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Progress or diagnostics, for the tool panel; never an error.
    Log {
        level: Level,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fields: Option<Map<String, Value>>,
    },
    /// A change to the session's skill state, deep-merged.
    StatePatch { patch: Map<String, Value> },
    /// A file the script made, to be copied into the save's asset store.
    Asset {
        #[serde(rename = "assetId")]
        asset_id: String,
        kind: String,
        #[serde(rename = "mediaType")]
        media_type: String,
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// A request to the presentation (`narrative_choice` offers choices).
    UiEvent {
        event: String,
        #[serde(default)]
        payload: Value,
    },
    /// A structured error; the invocation goes on until `done`.
    Error {
        #[serde(rename = "errorCode")]
        error_code: String,
        #[serde(rename = "errorMessage")]
        error_message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// The end: `ok` says whether the work succeeded.
    Done {
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// Why a line broke the protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("not JSON ({0})")]
    NotJson(String),
    #[error("not a JSON object")]
    NotObject,
    #[error("no `version` \"0\" (found {0})")]
    Version(String),
    #[error("unknown event type `{0}`")]
    UnknownType(String),
    #[error("a `{kind}` event without what it needs ({message})")]
    Malformed { kind: String, message: String },
}

const TYPES: [&str; 6] = ["log", "state_patch", "asset", "ui_event", "error", "done"];

/// Reads one line of a script's output as an event.
pub fn parse_line(line: &str) -> Result<Event, LineError> {
    let value: Value = serde_json::from_str(line).map_err(|e| LineError::NotJson(e.to_string()))?;
    let Value::Object(object) = &value else {
        return Err(LineError::NotObject);
    };
    match object.get("version") {
        Some(Value::String(v)) if v == VERSION => {}
        other => {
            return Err(LineError::Version(
                other.map_or_else(|| "nothing".to_owned(), Value::to_string),
            ));
        }
    }
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !TYPES.contains(&kind.as_str()) {
        return Err(LineError::UnknownType(kind));
    }
    serde_json::from_value(value).map_err(|e| LineError::Malformed {
        kind,
        message: e.to_string(),
    })
}

/// What a script reads on stdin (seed §2.1.4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInput {
    #[serde(rename = "requestId")]
    pub request_id: String,
    pub tool: String,
    pub operation: String,
    pub input: Value,
    /// The skill's configuration, resolved (a script may ignore it).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub config: Map<String, Value>,
    /// (Loreloom) The skill's own part of the session's skill state
    /// (`state[<skill name>]`, as the plan began), so a script can carry on
    /// from it; absent when it has none.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub state: Value,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_event_type_reads_and_extra_fields_are_ignored() {
        let lines = [
            json!({"version": "0", "type": "log", "level": "info", "message": "Starting", "future": 1}),
            json!({"version": "0", "type": "state_patch", "patch": {"flags": {"torchLit": true}}}),
            json!({"version": "0", "type": "asset", "assetId": "a1", "kind": "image", "mediaType": "image/png", "path": "data/a.png"}),
            json!({"version": "0", "type": "ui_event", "event": "narrative_choice", "payload": {"choices": ["a", "b"]}}),
            json!({"version": "0", "type": "error", "errorCode": "E1", "errorMessage": "bad"}),
            json!({"version": "0", "type": "done", "ok": true, "summary": "Torch lit.", "requestId": "r"}),
        ];
        let events: Vec<Event> = lines
            .iter()
            .map(|l| parse_line(&l.to_string()).expect("an event"))
            .collect();
        assert!(matches!(
            events[0],
            Event::Log {
                level: Level::Info,
                ..
            }
        ));
        assert!(
            matches!(&events[1], Event::StatePatch { patch } if patch["flags"]["torchLit"] == true)
        );
        assert!(matches!(&events[2], Event::Asset { media_type, .. } if media_type == "image/png"));
        assert!(matches!(&events[3], Event::UiEvent { event, .. } if event == "narrative_choice"));
        assert!(matches!(&events[4], Event::Error { error_code, .. } if error_code == "E1"));
        assert_eq!(
            events[5],
            Event::Done {
                ok: true,
                summary: Some("Torch lit.".into())
            }
        );
    }

    #[test]
    fn what_breaks_the_envelope_is_said() {
        assert!(matches!(parse_line("hello"), Err(LineError::NotJson(_))));
        assert_eq!(parse_line("[1]"), Err(LineError::NotObject));
        assert!(matches!(
            parse_line(r#"{"type":"done","ok":true}"#),
            Err(LineError::Version(_))
        ));
        assert!(matches!(
            parse_line(r#"{"version":"1","type":"done","ok":true}"#),
            Err(LineError::Version(_))
        ));
        assert_eq!(
            parse_line(r#"{"version":"0","type":"shout"}"#),
            Err(LineError::UnknownType("shout".into()))
        );
        assert!(matches!(
            parse_line(r#"{"version":"0","type":"done"}"#),
            Err(LineError::Malformed { .. })
        ));
    }
}
