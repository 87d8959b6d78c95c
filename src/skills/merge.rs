//! Seed 002's deep merge (§2.4) of a `state_patch` into the skill state, and dot-path reads.
//!
//! Seed 002's deep merge (§2.4) of a `state_patch` into the skill state (objects recurse, arrays
//! and scalars replace, null deletes) and dot-path reads (`inventory.torch.lit`).

use serde_json::{Map, Value};

/// Merges `patch` into `target`.
pub fn deep_merge(target: &mut Map<String, Value>, patch: &Map<String, Value>) {
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(inner) => {
                if let Some(Value::Object(existing)) = target.get_mut(key) {
                    deep_merge(existing, inner);
                } else {
                    let mut fresh = Map::new();
                    deep_merge(&mut fresh, inner);
                    target.insert(key.clone(), Value::Object(fresh));
                }
            }
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
}

/// The value at a dot path (`inventory.torch.lit`), if there is one.
pub fn get<'a>(state: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut here = state.get(parts.next()?)?;
    for part in parts {
        here = here.as_object()?.get(part)?;
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_seeds_examples() {
        let mut t = obj(json!({"a": {"b": 1, "c": 2}}));
        deep_merge(&mut t, &obj(json!({"a": {"c": 3, "d": 4}})));
        assert_eq!(Value::Object(t), json!({"a": {"b": 1, "c": 3, "d": 4}}));
        let mut t = obj(json!({"items": [1, 2, 3]}));
        deep_merge(&mut t, &obj(json!({"items": [4, 5]})));
        assert_eq!(Value::Object(t), json!({"items": [4, 5]}));
        let mut t = obj(json!({"a": 1, "b": 2}));
        deep_merge(&mut t, &obj(json!({"b": null})));
        assert_eq!(Value::Object(t.clone()), json!({"a": 1}));
        // A null inside a new object is not kept either.
        deep_merge(&mut t, &obj(json!({"n": {"x": null, "y": 1}})));
        assert_eq!(Value::Object(t.clone()), json!({"a": 1, "n": {"y": 1}}));
        assert_eq!(get(&t, "n.y"), Some(&json!(1)));
        assert_eq!(get(&t, "n.z"), None);
        assert_eq!(get(&t, "a.b"), None);
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..5).prop_map(Value::from),
            "[a-c]{1,2}".prop_map(Value::from),
            prop::collection::vec((-3i64..3).prop_map(Value::from), 0..3).prop_map(Value::Array),
        ]
    }

    fn tree() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(3, 24, 4, |inner| {
            prop::collection::btree_map("[a-d]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect()))
        })
    }

    fn no_nulls(v: &Value) -> bool {
        match v {
            Value::Null => false,
            Value::Object(m) => m.values().all(no_nulls),
            _ => true,
        }
    }

    proptest! {
        /// Merging never leaves a null in an object, every non-null scalar
        /// or array the patch sets is there after, a key the patch does not
        /// name keeps its value, and merging the same patch twice changes
        /// nothing more (idempotent).
        #[test]
        fn merge_laws(target in tree(), patch in tree()) {
            let (Value::Object(mut t), Value::Object(p)) = (target.clone(), patch) else {
                return Ok(());
            };
            let mut clean = Map::new();
            deep_merge(&mut clean, &t);
            t = clean;
            let before = t.clone();
            deep_merge(&mut t, &p);
            prop_assert!(no_nulls(&Value::Object(t.clone())));
            for (k, v) in &p {
                match v {
                    Value::Null => prop_assert!(!t.contains_key(k)),
                    Value::Object(_) => prop_assert!(t[k].is_object()),
                    other => prop_assert_eq!(&t[k], other),
                }
            }
            for (k, v) in &before {
                if !p.contains_key(k) {
                    prop_assert_eq!(&t[k], v);
                }
            }
            let once = t.clone();
            deep_merge(&mut t, &p);
            prop_assert_eq!(t, once);
        }
    }
}
