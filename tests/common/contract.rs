//! Whether a Rust type reads every value a hand-written JSON Schema contract admits.
//!
//! A stage's contract (`schemas/stages/*.schema.json`, `schemas/author/*`) is
//! the source of truth for what a model may answer; the type the engine reads
//! the answer as must agree with it: the same fields, nothing required that the
//! contract leaves out, and every JSON type and enum value the contract admits
//! admitted by the type too (the contract's limits, such as `maxLength`, only
//! narrow it further). [`disagreements`] lists where they part, by path.

use serde_json::Value;

/// Every way `ty` (a `schemars` schema of the type) fails to read what
/// `contract` admits, as `path: reason` lines; empty when they agree.
pub fn disagreements(ty: &Value, contract: &Value) -> Vec<String> {
    let mut out = Vec::new();
    compare(ty, ty, contract, contract, "", &mut out);
    out
}

const TYPES: [&str; 7] = [
    "null", "boolean", "integer", "number", "string", "array", "object",
];

/// `node` with its `$ref` (to `#/$defs/…` or `#/definitions/…` of `root`) followed.
fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    let mut node = node;
    for _ in 0..32 {
        let Some(pointer) = node.get("$ref").and_then(Value::as_str) else {
            return node;
        };
        match pointer.strip_prefix('#').and_then(|p| root.pointer(p)) {
            Some(target) => node = target,
            None => return node,
        }
    }
    node
}

fn add(types: &mut Vec<&'static str>, t: &str) {
    if let Some(known) = TYPES.iter().find(|k| **k == t)
        && !types.contains(known)
    {
        types.push(known);
    }
}

/// The JSON types a schema node admits (`None`: any value).
fn admitted(root: &Value, node: &Value) -> Option<Vec<&'static str>> {
    let node = resolve(root, node);
    if node == &Value::Bool(true) || node.as_object().is_some_and(serde_json::Map::is_empty) {
        return None;
    }
    let mut types: Vec<&'static str> = Vec::new();
    match node.get("type") {
        Some(Value::String(t)) => add(&mut types, t),
        Some(Value::Array(ts)) => {
            for t in ts.iter().filter_map(Value::as_str) {
                add(&mut types, t);
            }
        }
        _ => {}
    }
    for value in enum_values(root, node).into_iter().flatten() {
        add(&mut types, json_type(&value));
    }
    for key in ["anyOf", "oneOf"] {
        for branch in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for t in admitted(root, branch)? {
                add(&mut types, t);
            }
        }
    }
    if types.is_empty() && node.get("properties").is_some() {
        add(&mut types, "object");
    }
    if types.is_empty() { None } else { Some(types) }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The values a node is limited to (`enum`, `const`, or branches of them), if any.
fn enum_values(root: &Value, node: &Value) -> Option<Vec<Value>> {
    let node = resolve(root, node);
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return Some(values.clone());
    }
    if let Some(value) = node.get("const") {
        return Some(vec![value.clone()]);
    }
    let mut all = Vec::new();
    for key in ["anyOf", "oneOf"] {
        let Some(branches) = node.get(key).and_then(Value::as_array) else {
            continue;
        };
        for branch in branches {
            all.extend(enum_values(root, branch)?);
        }
    }
    (!all.is_empty()).then_some(all)
}

fn strings<'a>(node: &'a Value, key: &str) -> Vec<&'a str> {
    node.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The object branch of a node (itself, or its one object-typed `anyOf` branch: an `Option`).
fn object_of<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let node = resolve(root, node);
    if node.get("properties").is_some() {
        return Some(node);
    }
    ["anyOf", "oneOf"].iter().find_map(|key| {
        node.get(*key)?
            .as_array()?
            .iter()
            .map(|b| resolve(root, b))
            .find(|b| b.get("properties").is_some())
    })
}

/// The items schema of a node's array branch, if it has one.
fn items_of<'a>(root: &'a Value, node: &'a Value) -> Option<&'a Value> {
    let node = resolve(root, node);
    if let Some(items) = node.get("items") {
        return Some(items);
    }
    ["anyOf", "oneOf"].iter().find_map(|key| {
        node.get(*key)?
            .as_array()?
            .iter()
            .find_map(|b| resolve(root, b).get("items"))
    })
}

fn compare(
    ty_root: &Value,
    ty: &Value,
    c_root: &Value,
    contract: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let at = if path.is_empty() { "/" } else { path };
    let Some(ty_types) = admitted(ty_root, ty) else {
        return; // the type reads any value
    };
    let Some(c_types) = admitted(c_root, contract) else {
        out.push(format!(
            "{at}: the contract admits any value, the type only {ty_types:?}"
        ));
        return;
    };
    for t in &c_types {
        let read = ty_types.contains(t) || (*t == "integer" && ty_types.contains(&"number"));
        if !read {
            out.push(format!(
                "{at}: the contract admits {t}, the type reads {ty_types:?}"
            ));
        }
    }
    if let Some(ty_values) = enum_values(ty_root, ty) {
        match enum_values(c_root, contract) {
            None => out.push(format!(
                "{at}: the type reads only {ty_values:?}, the contract admits any {c_types:?}"
            )),
            Some(c_values) => {
                for v in c_values.iter().filter(|v| !ty_values.contains(v)) {
                    out.push(format!(
                        "{at}: the contract admits {v}, the type does not read it"
                    ));
                }
            }
        }
    }
    if let (Some(ty_obj), Some(c_obj)) = (object_of(ty_root, ty), object_of(c_root, contract)) {
        compare_objects(ty_root, ty_obj, c_root, c_obj, path, out);
    }
    if let (Some(ty_items), Some(c_items)) = (items_of(ty_root, ty), items_of(c_root, contract)) {
        compare(
            ty_root,
            ty_items,
            c_root,
            c_items,
            &format!("{path}/items"),
            out,
        );
    }
}

fn compare_objects(
    ty_root: &Value,
    ty: &Value,
    c_root: &Value,
    contract: &Value,
    path: &str,
    out: &mut Vec<String>,
) {
    let empty = serde_json::Map::new();
    let ty_props = ty
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let c_props = contract
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for name in c_props.keys().filter(|n| !ty_props.contains_key(*n)) {
        out.push(format!("{path}/{name}: in the contract, not in the type"));
    }
    for name in ty_props.keys().filter(|n| !c_props.contains_key(*n)) {
        out.push(format!("{path}/{name}: in the type, not in the contract"));
    }
    let c_required = strings(contract, "required");
    for name in strings(ty, "required") {
        if !c_required.contains(&name) {
            out.push(format!(
                "{path}/{name}: the type requires it, the contract does not"
            ));
        }
    }
    for (name, c_prop) in c_props {
        if let Some(ty_prop) = ty_props.get(name) {
            compare(
                ty_root,
                ty_prop,
                c_root,
                c_prop,
                &format!("{path}/{name}"),
                out,
            );
        }
    }
}
