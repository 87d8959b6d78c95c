//! Output contracts: a stage's JSON Schema (a file under `schemas/`) and the
//! check that turns a model's raw text into a validated JSON value or a list of
//! reasons it is not one.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

/// The narrowing keyword that keeps the rest of a subschema ([`Contract::narrowed`]).
pub const KEEP: &str = "$keep";

/// A compiled output contract.
#[derive(Clone)]
pub struct Contract {
    name: String,
    schema: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for Contract {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Contract")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ContractError {
    #[error("cannot read the output contract {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{name}: not a usable JSON Schema: {message}")]
    Schema { name: String, message: String },
}

impl Contract {
    /// Compiles `schema`; `name` identifies it in errors and records.
    pub fn new(name: impl Into<String>, schema: Value) -> Result<Self, ContractError> {
        let name = name.into();
        let validator = jsonschema::validator_for(&schema).map_err(|e| ContractError::Schema {
            name: name.clone(),
            message: e.to_string(),
        })?;
        Ok(Self {
            name,
            schema: Arc::new(schema),
            validator: Arc::new(validator),
        })
    }

    /// Loads `schemas_dir/relative`.
    pub fn load(schemas_dir: &Path, relative: &str) -> Result<Self, ContractError> {
        let path = schemas_dir.join(relative);
        let text = crate::files::read_to_string(&path).map_err(|source| ContractError::Io {
            path: path.clone(),
            source,
        })?;
        let schema = serde_json::from_str(&text).map_err(|source| ContractError::Json {
            path: path.clone(),
            source,
        })?;
        Self::new(relative, schema)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// This contract with the subschemas at instance `pointers` replaced by the
    /// ones given, their `description` kept (each step of a pointer names a
    /// property; `items` steps into arrays). A replacement with `"$keep": true`
    /// only sets its keywords and keeps the rest of the subschema.
    pub fn narrowed(&self, narrowing: &[(String, Value)]) -> Result<Self, ContractError> {
        let mut schema = (*self.schema).clone();
        for (pointer, with) in narrowing {
            let mut node = &mut schema;
            for step in pointer.trim_start_matches('/').split('/') {
                let next = if step == "items" {
                    node.get_mut("items")
                } else {
                    node.get_mut("properties").and_then(|p| p.get_mut(step))
                };
                let Some(next) = next else {
                    return Err(ContractError::Schema {
                        name: self.name.clone(),
                        message: format!("no property at {pointer} to narrow"),
                    });
                };
                node = next;
            }
            if let Some(obj) = node.as_object_mut() {
                let mut with = with.as_object().cloned().unwrap_or_default();
                // `"$keep": true`: the keywords given tighten the subschema
                // (`minItems`), the rest of it stays.
                if with.remove(KEEP) != Some(Value::Bool(true)) {
                    obj.retain(|k, _| k == "description");
                }
                obj.extend(with);
            }
        }
        Self::new(self.name.clone(), schema)
    }

    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Parses and validates a model's raw output. On failure returns every reason,
    /// phrased for the repair prompt (`/path: message`).
    pub fn check(&self, raw: &str) -> Result<Value, Vec<String>> {
        let body = strip_fences(raw);
        let value: Value =
            serde_json::from_str(body).map_err(|e| vec![format!("not valid JSON: {e}")])?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|e| {
                let path = e.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_owned()
                } else {
                    path
                };
                format!("{path}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(value)
        } else {
            Err(errors)
        }
    }
}

/// A JSON Schema as JSON text with each object's `properties` in the order of
/// its `required` list (then any others), for the grammar converters
/// (llama.cpp's, a server's): they make the model write the fields in the order
/// the text lists them, and `serde_json` would list them alphabetically. The
/// order is part of the prompt: the referee decides `possible` before it writes
/// a `blocked_reason`, an NPC its `thought` before its `intention`, as the
/// tuned adapter learned.
pub fn schema_text(schema: &Value) -> String {
    let mut out = String::new();
    write_ordered(schema, None, &mut out);
    out
}

fn write_ordered(value: &Value, order: Option<&[Value]>, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if let Some(order) = order {
                let rank = |k: &str| {
                    order
                        .iter()
                        .position(|r| r.as_str() == Some(k))
                        .unwrap_or(order.len())
                };
                keys.sort_by_key(|k| rank(k));
            }
            let required = map.get("required").and_then(Value::as_array);
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                let inner = if key == "properties" {
                    required.map(Vec::as_slice)
                } else {
                    None
                };
                write_ordered(&map[key], inner, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_ordered(item, None, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Models often wrap JSON in a Markdown code fence; accept the JSON inside.
fn strip_fences(raw: &str) -> &str {
    let t = raw.trim();
    let Some(rest) = t.strip_prefix("```") else {
        return t;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

#[cfg(test)]
mod tests {

    #[test]
    fn prose_is_told_from_leaked_code() {
        assert!(super::looks_like_prose("Ask Hesper about the green light"));
        assert!(super::looks_like_prose(
            "Wait by the winch-house, lantern shuttered."
        ));
        for garbled in [
            "]} This is the only one",
            "<p>He is the first",
            ".innerHTML = 'x'",
            "1.2, 2, 3, 4, 5, 6, 7",
            "https://example.org/x",
            "",
        ] {
            assert!(!super::looks_like_prose(garbled), "{garbled}");
        }
    }

    use super::*;
    use serde_json::json;

    fn contract() -> Contract {
        Contract::new(
            "test",
            json!({
                "type": "object",
                "required": ["text", "importance"],
                "additionalProperties": false,
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "importance": {"type": "integer", "minimum": 1, "maximum": 5}
                }
            }),
        )
        .unwrap()
    }

    #[test]
    fn valid_output_parses_even_inside_a_code_fence() {
        let c = contract();
        assert_eq!(
            c.check("```json\n{\"text\": \"a\", \"importance\": 3}\n```")
                .unwrap(),
            json!({"text": "a", "importance": 3})
        );
    }

    #[test]
    fn every_violation_is_reported_with_its_path() {
        let errors = contract()
            .check(r#"{"text": "", "importance": 9, "extra": 1}"#)
            .unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("/importance:") && e.contains('9')),
            "{errors:?}"
        );
        assert!(errors.iter().any(|e| e.starts_with("/text:")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("extra")), "{errors:?}");
    }

    #[test]
    fn prose_instead_of_json_is_one_clear_reason() {
        let errors = contract()
            .check("Sure! Here is the JSON you asked for")
            .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with("not valid JSON"), "{errors:?}");
    }

    #[test]
    fn a_broken_schema_is_refused_with_its_name() {
        let err = Contract::new("bad.json", json!({"type": 12})).unwrap_err();
        assert!(err.to_string().starts_with("bad.json"), "{err}");
    }
}

#[cfg(test)]
mod narrow_tests {
    use super::*;

    #[test]
    fn schema_text_lists_properties_in_required_order_at_every_depth() {
        let schema = serde_json::json!({
            "type": "object",
            "required": ["possible", "check"],
            "properties": {
                "check": {"type": "string"},
                "extra": {"type": "string"},
                "possible": {"type": "object", "required": ["why", "also"], "properties": {
                    "also": {"type": "string"}, "why": {"type": "string"}
                }}
            }
        });
        let text = schema_text(&schema);
        let at = |s: &str| text.find(s).unwrap();
        assert!(at("\"possible\"") < at("\"check\""), "{text}");
        assert!(at("\"check\"") < at("\"extra\""), "{text}");
        assert!(at("\"why\"") < at("\"also\""), "{text}");
        // Still the same schema.
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), schema);
    }

    #[test]
    fn narrowing_restricts_nested_properties_to_the_allowed_values() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "check": {"type": "string", "maxLength": 40},
                "observations": {"type": "array", "items": {"type": "object", "properties": {
                    "character_id": {"type": "string", "minLength": 1}
                }}}
            }
        });
        let c = Contract::new("t", schema).unwrap();
        let n = c
            .narrowed(&[
                ("/check".into(), serde_json::json!({"enum": ["", "action"]})),
                (
                    "/observations/items/character_id".into(),
                    serde_json::json!({"enum": ["ada"]}),
                ),
            ])
            .unwrap();
        assert!(
            n.check(r#"{"check": "action", "observations": [{"character_id": "ada"}]}"#)
                .is_ok()
        );
        assert!(n.check(r#"{"check": "swim"}"#).is_err());
        assert!(
            n.check(r#"{"observations": [{"character_id": "bo"}]}"#)
                .is_err()
        );
        assert!(
            c.check(r#"{"check": "swim"}"#).is_ok(),
            "the original is unchanged"
        );
        assert!(
            c.narrowed(&[("/nope".into(), serde_json::json!({"enum": []}))])
                .is_err()
        );

        // Kept: the list must now have an item, and its items are still checked.
        let k = c
            .narrowed(&[(
                "/observations".into(),
                serde_json::json!({"minItems": 1, KEEP: true}),
            )])
            .unwrap();
        assert!(k.check(r#"{"observations": []}"#).is_err());
        assert!(
            k.check(r#"{"observations": [{"character_id": ""}]}"#)
                .is_err()
        );
        assert!(
            k.check(r#"{"observations": [{"character_id": "bo"}]}"#)
                .is_ok()
        );
        assert!(!k.schema().to_string().contains(KEEP));
    }
}

/// Whether a string a model put in a prose field reads as words rather than
/// code or markup (small models leak JSON, HTML and URLs into string fields
/// that the schema alone cannot tell apart from prose).
pub fn looks_like_prose(s: &str) -> bool {
    let t = s.trim();
    !t.is_empty()
        && !t.contains(['{', '}', '[', ']', '<', '>', '=', '"', '\\'])
        && !t.contains("://")
        && t.chars().filter(|c| c.is_alphabetic()).count() * 2 >= t.chars().count()
}
