//! Reading campaign files: JSON and YAML checked against their schemas, every problem on a line.
//!
//! JSON is parsed twice when it is wrong: `serde_json` for the value (its
//! errors carry a line), then `jsonc-parser`'s AST to find the line of the
//! value a schema error points at (a JSON pointer). YAML (pack manifests and
//! markdown frontmatter) goes through `serde_norway`, whose errors carry a line;
//! schema errors in YAML are placed on the line of their top-level key.

use std::collections::HashMap;
use std::path::Path;

use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, ast};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::report::Report;

/// A compiled schema for one kind of campaign file.
pub struct FileSchema {
    /// What the file is, for messages ("NPC profile").
    pub kind: &'static str,
    validator: jsonschema::Validator,
}

impl FileSchema {
    /// Compile the schema schemars derives for `T`.
    #[expect(
        clippy::expect_used,
        reason = "schemas derived from our own types, compiled in every test run"
    )]
    pub fn of<T: schemars::JsonSchema>(kind: &'static str) -> Self {
        let schema = serde_json::to_value(schemars::schema_for!(T)).expect("schemas serialize");
        let validator = jsonschema::validator_for(&schema).expect("derived schemas compile");
        Self { kind, validator }
    }
}

/// Parse `text` (the contents of `rel`) as JSON of schema `schema` and type `T`.
/// Problems go to `report` with their lines; `None` when the file cannot be used.
pub fn json<T: DeserializeOwned>(
    rel: &Path,
    text: &str,
    schema: &FileSchema,
    report: &mut Report,
) -> Option<(T, PointerLines)> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            report.error(
                rel,
                Some(e.line()),
                format!("not valid JSON: {}", strip_position(&e.to_string())),
            );
            return None;
        }
    };
    let lines = PointerLines::new(text);
    let mut ok = true;
    for error in schema.validator.iter_errors(&value) {
        ok = false;
        for (pointer, message) in explain(schema.kind, &error) {
            report.error(rel, lines.line(&pointer), message);
        }
    }
    if !ok {
        return None;
    }
    match serde_path_to_error::deserialize::<_, T>(&value) {
        Ok(t) => Some((t, lines)),
        Err(e) => {
            report.error(rel, None, format!("{}: {e}", schema.kind));
            None
        }
    }
}

/// Parse YAML `text` (in `rel`, starting at `first_line`) as schema `schema` and type `T`.
pub fn yaml<T: DeserializeOwned>(
    rel: &Path,
    text: &str,
    first_line: usize,
    schema: &FileSchema,
    report: &mut Report,
) -> Option<T> {
    let value: Value = match serde_norway::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let line = e.location().map(|l| l.line() + first_line - 1);
            report.error(
                rel,
                line,
                format!("not valid YAML: {}", strip_position(&e.to_string())),
            );
            return None;
        }
    };
    let value = if value.is_null() {
        Value::Object(serde_json::Map::default())
    } else {
        value
    };
    let mut ok = true;
    for error in schema.validator.iter_errors(&value) {
        ok = false;
        for (pointer, message) in explain(schema.kind, &error) {
            let key = pointer
                .trim_start_matches('/')
                .split('/')
                .next()
                .unwrap_or("");
            let line = yaml_key_line(text, key).map(|l| l + first_line - 1);
            report.error(rel, line, message);
        }
    }
    if !ok {
        return None;
    }
    match serde_json::from_value(value) {
        Ok(t) => Some(t),
        Err(e) => {
            report.error(rel, Some(first_line), format!("{}: {e}", schema.kind));
            None
        }
    }
}

/// Split markdown into YAML frontmatter (between `---` lines at the top) and body.
/// Returns the frontmatter, the line it starts on, and the body.
pub fn frontmatter(text: &str) -> Option<(&str, usize, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], 2, &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// A schema error as (JSON pointer to place it at, message): unknown fields are
/// placed on their own line and named plainly, one finding each.
fn explain(kind: &str, error: &jsonschema::ValidationError<'_>) -> Vec<(String, String)> {
    use jsonschema::error::ValidationErrorKind as K;
    let pointer = error.instance_path().to_string();
    match error.kind() {
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|key| {
                let at = format!("{pointer}/{key}");
                let message = schema_message(kind, &pointer, &format!("unknown field `{key}`"));
                (at, message)
            })
            .collect(),
        K::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let message =
                schema_message(kind, &pointer, &format!("missing required field `{name}`"));
            vec![(pointer, message)]
        }
        K::Pattern { pattern } => {
            let what = pattern_hint(pattern).map_or_else(
                || format!("does not match `{pattern}`"),
                |hint| format!("is not {hint}"),
            );
            let message = schema_message(kind, &pointer, &format!("{} {what}", error.instance()));
            vec![(pointer, message)]
        }
        _ => {
            let message = schema_message(kind, &pointer, &error.to_string());
            vec![(pointer, message)]
        }
    }
}

/// The patterns of `files.rs` and the ruleset, in words.
fn pattern_hint(pattern: &str) -> Option<&'static str> {
    Some(match pattern {
        p if p.starts_with("^(0|[1-9]") => "a semantic version such as 1.0.0",
        p if p.contains(':') => {
            "an id (`entry` or `pack:entry`) of lowercase letters, digits, `_` and `-`"
        }
        p if p.contains("[a-z0-9_-]") => "an id of lowercase letters, digits, `_` and `-`",
        p if p.contains("[a-z0-9_]") => "an id of lowercase letters, digits and `_`",
        p if p.contains("[a-z0-9-]") => "an id of lowercase letters, digits and `-`",
        p if p.contains("[A-Za-z0-9_-]") => "an id of letters, digits, `_` and `-`",
        _ => return None,
    })
}

fn schema_message(kind: &str, pointer: &str, error: &str) -> String {
    if pointer.is_empty() {
        format!("{kind}: {error}")
    } else {
        format!(
            "{kind}: `{}`: {error}",
            pointer.trim_start_matches('/').replace('/', ".")
        )
    }
}

/// serde's messages end with " at line L column C"; we print the line ourselves.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// The line of a top-level `key:` in YAML text (1-based).
fn yaml_key_line(text: &str, key: &str) -> Option<usize> {
    if key.is_empty() {
        return Some(1);
    }
    text.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|i| i + 1)
}

/// The line of every value in a JSON text, by JSON pointer (`/beats/2/id`).
#[derive(Debug, Default)]
pub struct PointerLines(HashMap<String, usize>);

impl PointerLines {
    /// Index a JSON text (empty when it does not parse).
    pub fn new(text: &str) -> Self {
        let mut map = HashMap::new();
        if let Some(ast) =
            jsonc_parser::parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
                .ok()
                .and_then(|r| r.value)
        {
            let lines = LineIndex::new(text);
            index(&ast, &mut String::new(), &lines, &mut map);
        }
        Self(map)
    }

    /// The line of the value at `pointer`, or of its nearest existing parent.
    pub fn line(&self, pointer: &str) -> Option<usize> {
        let mut at = pointer;
        loop {
            if let Some(&line) = self.0.get(at) {
                return Some(line);
            }
            at = &at[..at.rfind('/')?];
        }
    }
}

fn index(
    node: &ast::Value,
    pointer: &mut String,
    lines: &LineIndex,
    map: &mut HashMap<String, usize>,
) {
    map.insert(pointer.clone(), lines.line_of(node.start()));
    let len = pointer.len();
    match node {
        ast::Value::Object(obj) => {
            for p in &obj.properties {
                pointer.push('/');
                pointer.push_str(&p.name.as_str().replace('~', "~0").replace('/', "~1"));
                index(&p.value, pointer, lines, map);
                pointer.truncate(len);
            }
        }
        ast::Value::Array(arr) => {
            for (i, element) in arr.elements.iter().enumerate() {
                pointer.push('/');
                pointer.push_str(&i.to_string());
                index(element, pointer, lines, map);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// Line starts of a text, for offset → line.
pub struct LineIndex(Vec<usize>);

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self(starts)
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        self.0.partition_point(|&s| s <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_find_their_lines() {
        let text = "{\n  \"a\": 1,\n  \"b\": [\n    {\"c\": true},\n    {\"c\": \"x\"}\n  ]\n}\n";
        let lines = PointerLines::new(text);
        let line = |p: &str| lines.line(p).unwrap();
        assert_eq!(line(""), 1);
        assert_eq!(line("/a"), 2);
        assert_eq!(line("/b/1/c"), 5);
        assert_eq!(line("/b/7"), 3, "a missing element points at its parent");
    }

    #[test]
    fn frontmatter_is_split_from_the_body() {
        let (fm, line, body) = frontmatter("---\nid: x\ntype: npc\n---\n# Title\n").unwrap();
        assert_eq!((fm, line, body), ("id: x\ntype: npc\n", 2, "# Title\n"));
        assert!(frontmatter("# No frontmatter\n").is_none());
        assert!(frontmatter("---\nid: x\n").is_none(), "unterminated");
    }
}
