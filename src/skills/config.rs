//! A skill's configuration (seed 002 §3.3): its schema's fields, `${VAR}` substitution, validation.
//!
//! A skill's configuration (seed 002 §3.3): the fields its `config-schema.json` declares (string,
//! number, integer, boolean, enum; `x-sensitive` masked, `x-category` grouping, `x-env-var` naming
//! the environment variable a value comes from and is handed to the script as), `${VAR}`
//! substitution in values, validation against the schema before `config.json` is saved, and the
//! environment a script gets from it.

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

/// A field's kind, for a form.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    Choice(Vec<String>),
}

/// One configurable field.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    pub key: String,
    pub kind: Kind,
    pub description: Option<String>,
    pub default: Option<Value>,
    pub required: bool,
    /// Masked in the window and in `skills config`.
    pub sensitive: bool,
    pub category: Option<String>,
    /// The environment variable the value comes from and is passed as.
    pub env_var: Option<String>,
}

/// The fields a config schema declares, in its order.
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(key, p)| {
            let kind = if let Some(values) = p["enum"].as_array() {
                Kind::Choice(
                    values
                        .iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                        .collect(),
                )
            } else {
                match p["type"].as_str() {
                    Some("boolean") => Kind::Boolean,
                    Some("integer") => Kind::Integer,
                    Some("number") => Kind::Number,
                    _ => Kind::Text,
                }
            };
            Field {
                key: key.clone(),
                kind,
                description: p["description"].as_str().map(str::to_owned),
                default: p.get("default").cloned(),
                required: required.contains(&key.as_str()),
                sensitive: p["x-sensitive"] == true || p["format"] == "password",
                category: p["x-category"].as_str().map(str::to_owned),
                env_var: p["x-env-var"].as_str().map(str::to_owned),
            }
        })
        .collect()
}

/// The prefix of the variables skill `name` may have: `LORELOOM_SKILL_`,
/// its name in capitals with `_` for `-`, and `_` (`dice-roller` →
/// `LORELOOM_SKILL_DICE_ROLLER_`).
pub fn variable_prefix(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("LORELOOM_SKILL_{upper}_")
}

/// Whether `var` is one of skill `name`'s own variables: its prefix, then
/// capitals, digits and `_`. Nothing else of the player's environment (keys,
/// `HOME`, `PATH`, `LD_PRELOAD`…) can be read from it or set through it.
pub fn own_variable(name: &str, var: &str) -> bool {
    var.strip_prefix(&variable_prefix(name))
        .is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// `${VAR}` in every string of `value` replaced by `lookup(VAR)` (empty
/// when it has none).
pub fn substitute(value: &Value, lookup: &dyn Fn(&str) -> Option<String>) -> Value {
    match value {
        Value::String(s) => {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(start) = rest.find("${") {
                out.push_str(&rest[..start]);
                let after = &rest[start + 2..];
                if let Some(end) = after.find('}') {
                    out.push_str(&lookup(&after[..end]).unwrap_or_default());
                    rest = &after[end + 1..];
                } else {
                    out.push_str(&rest[start..]);
                    rest = "";
                }
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| substitute(v, lookup)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), substitute(v, lookup)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The configuration a script works with: the saved values over the
/// schema's defaults, `${VAR}` substituted, and a field mapped to an
/// environment variable taking that variable's value when it has none.
pub fn resolve(
    schema: Option<&Value>,
    saved: &Value,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Map<String, Value> {
    let mut out = Map::new();
    for f in schema.map(fields).unwrap_or_default() {
        if let Some(d) = &f.default {
            out.insert(f.key.clone(), d.clone());
        }
        if let (Some(var), false) = (&f.env_var, saved.get(&f.key).is_some())
            && let Some(v) = lookup(var)
        {
            out.insert(f.key.clone(), Value::String(v));
        }
    }
    if let Some(saved) = saved.as_object() {
        for (k, v) in saved {
            out.insert(k.clone(), substitute(v, lookup));
        }
    }
    out
}

/// The environment a script gets from its configuration: each field with
/// an `x-env-var`, as that variable (nothing else of the player's
/// environment reaches it).
pub fn child_env(schema: Option<&Value>, resolved: &Map<String, Value>) -> Vec<(String, String)> {
    schema
        .map(fields)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|f| {
            let var = f.env_var?;
            let value = resolved.get(&f.key)?;
            let text = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            (!text.is_empty()).then_some((var, text))
        })
        .collect()
}

/// Every problem of `config` under `schema`, phrased for the form.
pub fn problems(schema: &Value, config: &Value) -> Vec<String> {
    match jsonschema::validator_for(schema) {
        Ok(v) => v
            .iter_errors(config)
            .map(|e| {
                let at = e.instance_path().to_string();
                let field = at.trim_start_matches('/');
                if field.is_empty() {
                    e.to_string()
                } else {
                    format!("{field}: {e}")
                }
            })
            .collect(),
        Err(e) => vec![format!("the config schema itself is broken: {e}")],
    }
}

/// Checks `config` and writes it to `dir/config.json` (atomically); nothing
/// is written when it breaks the schema.
pub fn save(dir: &Path, schema: Option<&Value>, config: &Value) -> Result<(), Vec<String>> {
    if let Some(schema) = schema {
        let found = problems(schema, config);
        if !found.is_empty() {
            return Err(found);
        }
    }
    let text = serde_json::to_string_pretty(config).map_err(|e| vec![e.to_string()])?;
    crate::files::write_atomically(&dir.join("config.json"), text.as_bytes())
        .map_err(|e| vec![format!("{}: {e}", dir.join("config.json").display())])
}

/// A value as a form shows it (sensitive ones masked).
pub fn shown(field: &Field, value: Option<&Value>) -> String {
    match value {
        None => "(not set)".to_owned(),
        Some(_) if field.sensitive => "••••••••".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    }
}

/// Where the player's on/off switches for skills are kept: `<data dir>/skills.json`.
pub fn switches_path() -> std::path::PathBuf {
    crate::files::data_dir().join("skills.json")
}

/// The skills the player switched off: none when `skills.json` is missing;
/// an error when it is there but cannot be read or understood, and then
/// every skill stays off until it is fixed (#43: it fails closed).
pub fn switched_off() -> Result<Vec<String>, String> {
    switched_off_in(&switches_path())
}

fn switched_off_in(path: &Path) -> Result<Vec<String>, String> {
    let text = match crate::files::read_to_string_within(path, 1 << 20) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "{}: {e}; every skill stays off until it is fixed",
                path.display()
            ));
        }
    };
    let unreadable = |why: &str| {
        format!(
            "{}: {why}; every skill stays off until it is fixed or removed",
            path.display()
        )
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| unreadable(&e.to_string()))?;
    let off = match value.get("off") {
        None => return Ok(Vec::new()),
        Some(Value::Array(a)) => a,
        Some(_) => return Err(unreadable("`off` is not a list of skill names")),
    };
    off.iter()
        .map(|n| {
            n.as_str()
                .map(str::to_owned)
                .ok_or_else(|| unreadable("`off` holds something that is not a skill name"))
        })
        .collect()
}

/// Switches a skill on or off for every session from now on (written atomically).
pub fn switch(name: &str, on: bool) -> std::io::Result<()> {
    // An unreadable file is not overwritten: that would switch every other skill on.
    let mut off = switched_off().map_err(std::io::Error::other)?;
    off.retain(|n| n != name);
    if !on {
        off.push(name.to_owned());
        off.sort();
    }
    let text = serde_json::to_string_pretty(&serde_json::json!({ "off": off }))?;
    crate::files::write_atomically(&switches_path(), text.as_bytes())
}

#[cfg(test)]
mod variable_tests {
    use super::{own_variable, switched_off_in, variable_prefix};

    #[test]
    fn an_unreadable_switch_file_fails_closed_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skills.json");
        assert_eq!(switched_off_in(&path), Ok(Vec::new()));
        std::fs::write(&path, r#"{"off": ["weather"]}"#).unwrap();
        assert_eq!(switched_off_in(&path), Ok(vec!["weather".to_owned()]));
        for broken in [
            r#"{"off": ["weather""#,
            r#"{"off": "weather"}"#,
            r#"{"off": [3]}"#,
        ] {
            std::fs::write(&path, broken).unwrap();
            let said = switched_off_in(&path).unwrap_err();
            assert!(said.contains("every skill stays off"), "{said}");
        }
    }

    #[test]
    fn a_skill_has_only_its_own_variables() {
        assert_eq!(
            variable_prefix("dice-roller"),
            "LORELOOM_SKILL_DICE_ROLLER_"
        );
        assert!(own_variable(
            "dice-roller",
            "LORELOOM_SKILL_DICE_ROLLER_TOKEN"
        ));
        for var in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "PATH",
            "HOME",
            "TMPDIR",
            "PYTHONPATH",
            "NODE_OPTIONS",
            "OPENAI_API_KEY",
            "SSH_AUTH_SOCK",
            "LORELOOM_SKILL_DICE_ROLLER_",
            "LORELOOM_SKILL_WEATHER_TOKEN",
            "LORELOOM_SKILL_DICE_ROLLER_x",
            "lORELOOM_SKILL_DICE_ROLLER_TOKEN",
        ] {
            assert!(!own_variable("dice-roller", var), "{var}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["style"],
            "properties": {
                "style": {"enum": ["terse", "vivid"], "default": "terse", "x-category": "Voice"},
                "apiKey": {"type": "string", "x-sensitive": true, "x-env-var": "STORY_API_KEY", "x-category": "Provider"},
                "endpoint": {"type": "string", "default": "http://${HOST}:8080"},
                "retries": {"type": "integer", "minimum": 0, "maximum": 5}
            },
            "additionalProperties": false
        })
    }

    fn env(var: &str) -> Option<String> {
        match var {
            "STORY_API_KEY" => Some("sk-123".into()),
            "HOST" => Some("127.0.0.1".into()),
            _ => None,
        }
    }

    #[test]
    fn fields_read_the_extensions() {
        let f = fields(&schema());
        assert_eq!(f[0].key, "apiKey");
        assert!(f[0].sensitive);
        assert_eq!(f[0].env_var.as_deref(), Some("STORY_API_KEY"));
        let style = f.iter().find(|f| f.key == "style").unwrap();
        assert_eq!(
            style.kind,
            Kind::Choice(vec!["terse".into(), "vivid".into()])
        );
        assert!(style.required);
        assert_eq!(style.category.as_deref(), Some("Voice"));
        assert_eq!(shown(&f[0], Some(&json!("sk-123"))), "••••••••");
    }

    #[test]
    fn values_resolve_and_only_mapped_ones_reach_the_script() {
        let resolved = resolve(
            Some(&schema()),
            &json!({"endpoint": "http://${HOST}:9"}),
            &env,
        );
        assert_eq!(resolved["apiKey"], "sk-123", "taken from its variable");
        assert_eq!(resolved["endpoint"], "http://127.0.0.1:9");
        assert_eq!(resolved["style"], "terse");
        assert_eq!(
            child_env(Some(&schema()), &resolved),
            [("STORY_API_KEY".to_owned(), "sk-123".to_owned())]
        );
        assert_eq!(substitute(&json!("${NOPE}x${HOST"), &env), json!("x${HOST"));
    }

    #[test]
    fn a_config_that_breaks_its_schema_is_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let bad = json!({"style": "loud", "retries": 9});
        let found = save(dir.path(), Some(&schema()), &bad).unwrap_err();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().any(|p| p.starts_with("retries:")), "{found:?}");
        assert!(!dir.path().join("config.json").exists());
        save(dir.path(), Some(&schema()), &json!({"style": "vivid"})).unwrap();
        let saved: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("config.json")).unwrap())
                .unwrap();
        assert_eq!(saved["style"], "vivid");
    }
}
