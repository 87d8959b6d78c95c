//! The state ops one character's intention may change, as the JSON Schema of one op.
//!
//! Constrained decoding can then only write ops the rules would accept.
//!
//! The extractor's contract (`schemas/stages/extract.schema.json`) says what an
//! op looks like; this says which ones exist right now, from the world and the
//! ruleset: the owner's integer stats with room to move, its tags, the clocks
//! not yet full, its relations with those present, its inventory, and for the
//! player's character a move of the scene to another known place. The engine
//! lists the valid moves and the model only picks among them, so an extractor
//! cannot put a sentence where a path goes (what #20's refused ops were).

use serde_json::{Value, json};

use super::op::{NewKind, RELATION_AXES};
use super::ruleset::Ruleset;
use super::state::WorldState;

/// A tag or an item name: a short `snake_case` word.
const WORD: &str = "[a-z][a-z0-9_]{1,30}";

/// The largest change one op may make to a stat, clock, relation or quantity.
pub const MAX_STEP: i64 = 3;

/// The schema of one op `owner`'s extractor may propose, with `others` present
/// (ids; those the world does not know are left out), who may move the scene
/// to one of `places` (location ids; the player's extractor gets the
/// campaign's other places, an NPC's none). `None` when nothing at all could
/// change (the extractor then can only answer with no ops).
pub fn extractor_ops(
    world: &WorldState,
    ruleset: &Ruleset,
    owner: &str,
    others: &[String],
    places: &[String],
) -> Option<Value> {
    let mut shapes = Vec::new();
    if !places.is_empty() {
        shapes.push(shape(
            &json!({"const": "set"}),
            &json!({"const": "scene.location"}),
            json!({"enum": places}),
        ));
    }
    shapes.extend(character_shapes(world, ruleset, owner));
    let clocks: Vec<(i64, String)> = world
        .clocks
        .values()
        .filter(|c| c.value < c.max)
        .map(|c| ((c.max - c.value).min(MAX_STEP), format!("clocks.{}", c.id)))
        .collect();
    shapes.extend(by_room("tick_clock", clocks));
    shapes.extend(relation_shapes(world, ruleset, owner, others));
    shapes.extend(inventory_shapes(world, owner));
    shapes.extend(growth_shapes(world));
    match shapes.len() {
        0 => None,
        1 => shapes.pop(),
        _ => Some(json!({"anyOf": shapes})),
    }
}

/// The owner's own changes: its integer stats, up or down by the room each
/// has, and its tags. None when the world has no such character.
fn character_shapes(world: &WorldState, ruleset: &Ruleset, owner: &str) -> Vec<Value> {
    let mut shapes = Vec::new();
    let Some(character) = world.characters.get(owner) else {
        return shapes;
    };
    let mut up: Vec<(i64, String)> = Vec::new();
    let mut down: Vec<(i64, String)> = Vec::new();
    for stat in ruleset.stat_names() {
        let Some(now) = character.stats.get(&stat).and_then(Value::as_i64) else {
            continue;
        };
        let bound = |key: &str| ruleset.character_stat_schema["properties"][&stat][key].as_i64();
        let path = format!("characters.{owner}.stats.{stat}");
        let room_up = bound("maximum").map_or(MAX_STEP, |max| (max - now).min(MAX_STEP));
        let room_down = bound("minimum").map_or(MAX_STEP, |min| (now - min).min(MAX_STEP));
        if room_up > 0 {
            up.push((room_up, path.clone()));
        }
        if room_down > 0 {
            down.push((room_down, path));
        }
    }
    shapes.extend(by_room("increment", up));
    shapes.extend(by_room("decrement", down));
    let tags = format!("characters.{owner}.tags");
    shapes.push(shape(
        &json!({"const": "add_tag"}),
        &json!({"const": tags}),
        json!({"type": "string", "pattern": format!("^{WORD}$")}),
    ));
    if !character.tags.is_empty() {
        shapes.push(shape(
            &json!({"const": "remove_tag"}),
            &json!({"const": tags}),
            json!({"enum": character.tags.iter().collect::<Vec<_>>()}),
        ));
    }
    shapes
}

/// The owner's relations with the `others` present, each axis within its
/// room in the ruleset's range.
fn relation_shapes(
    world: &WorldState,
    ruleset: &Ruleset,
    owner: &str,
    others: &[String],
) -> Vec<Value> {
    if !world.characters.contains_key(owner) {
        return Vec::new();
    }
    // A relation not yet kept starts at the range's floor (or 0), as the rules do.
    let (lo, hi) = ruleset.relation_range();
    let mut relations: Vec<((i64, i64), String)> = Vec::new();
    for other in others
        .iter()
        .filter(|o| *o != owner && world.characters.contains_key(*o))
    {
        let kept = world.relations.iter().find(|r| r.is_between(owner, other));
        for axis in RELATION_AXES {
            let now = kept.and_then(|r| r.axis(axis)).unwrap_or(lo.max(0));
            let room = ((now - lo).min(MAX_STEP), (hi - now).min(MAX_STEP));
            relations.push((room, format!("relations.{owner}.{other}.{axis}")));
        }
    }
    grouped(relations)
        .into_iter()
        .map(|((down, up), paths)| {
            shape(
                &json!({"const": "relation"}),
                &json!({"enum": paths}),
                json!({"type": "integer", "minimum": -down, "maximum": up}),
            )
        })
        .collect()
}

/// Gaining a thing the owner names; losing only what it holds, at most all of it.
fn inventory_shapes(world: &WorldState, owner: &str) -> Vec<Value> {
    let mut shapes = vec![shape(
        &json!({"const": "inventory"}),
        &json!({"type": "string", "pattern": format!("^inventory\\.{}\\.{WORD}$", regex_escape(owner))}),
        json!({"type": "integer", "minimum": 1, "maximum": MAX_STEP}),
    )];
    let held: Vec<(i64, String)> = world
        .inventory
        .get(owner)
        .into_iter()
        .flatten()
        .map(|(item, n)| {
            (
                i64::from(*n).min(MAX_STEP),
                format!("inventory.{owner}.{item}"),
            )
        })
        .collect();
    for (room, paths) in by_largest_room(held) {
        shapes.push(shape(
            &json!({"const": "inventory"}),
            &json!({"enum": paths}),
            json!({"type": "integer", "minimum": -room, "maximum": -1}),
        ));
    }
    shapes
}

/// #41: the world may grow (someone, something, somewhere or a thread new
/// to it, named and described), and its open threads may move on.
fn growth_shapes(world: &WorldState) -> Vec<Value> {
    let mut shapes = vec![shape(
        &json!({"const": "introduce"}),
        &json!({"type": "string", "pattern": format!("^(people|items|places|threads)\\.{WORD}$")}),
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2, "maxLength": 60},
                "description": {"type": "string", "maxLength": 200}
            },
            "required": ["name", "description"],
            "additionalProperties": false
        }),
    )];
    let moving: Vec<String> = world
        .threads
        .values()
        .filter(|t| matches!(t.status.as_str(), "open" | "active"))
        .map(|t| format!("threads.{}.status", t.id))
        .collect();
    if !moving.is_empty() {
        shapes.push(shape(
            &json!({"const": "thread"}),
            &json!({"enum": moving}),
            json!({"enum": ["active", "resolved", "failed", "abandoned"]}),
        ));
    }
    shapes
}

/// The offer for the prompt, short (the grammar holds the amounts): the paths
/// of each kind of op, folded (`increment/decrement: characters.ada.stats.<grit|wits>;
/// relation: relations.ada.<bo|cy>.<trust|tension>`).
pub fn describe(offer: &Value) -> String {
    let shapes = offer["anyOf"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| vec![offer.clone()]);
    let mut by_op: Vec<(String, Vec<String>)> = Vec::new();
    for s in &shapes {
        let p = &s["properties"];
        let op = p["op"]["const"].as_str().unwrap_or_default().to_owned();
        if op == "introduce" {
            let kinds: Vec<&str> = [
                NewKind::Person,
                NewKind::Item,
                NewKind::Place,
                NewKind::Thread,
            ]
            .iter()
            .map(|k| k.segment())
            .collect();
            let shape = format!("<{}>.<new_id> = {{name, description}}", kinds.join("|"));
            by_op.push((op, vec![shape]));
            continue;
        }
        // A move names where to: `set: scene.location = <lamp_chapel|toll_house>`.
        if let Some(places) = p["value"]["enum"].as_array().filter(|_| op == "set") {
            let places: Vec<&str> = places.iter().filter_map(Value::as_str).collect();
            let path = p["path"]["const"].as_str().unwrap_or_default();
            by_op.push((op, vec![format!("{path} = <{}>", places.join("|"))]));
            continue;
        }
        let paths: Vec<String> = match (p["path"]["enum"].as_array(), p["path"]["const"].as_str()) {
            (Some(list), _) => list
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            (None, Some(one)) => vec![one.to_owned()],
            // The inventory pattern: any item of the owner's.
            (None, None) => {
                let pattern = p["path"]["pattern"].as_str().unwrap_or_default();
                let stem = pattern
                    .strip_prefix('^')
                    .and_then(|p| p.strip_suffix(&format!("\\.{WORD}$")))
                    .unwrap_or(pattern);
                vec![format!("{}.<item>", stem.replace('\\', ""))]
            }
        };
        match by_op.iter_mut().find(|(o, _)| *o == op) {
            Some((_, list)) => {
                for path in paths {
                    if !list.contains(&path) {
                        list.push(path);
                    }
                }
            }
            None => by_op.push((op, paths)),
        }
    }
    let mut lines: Vec<(Vec<String>, String)> = Vec::new();
    for (op, mut paths) in by_op {
        // `inventory.ada.<item>` says the held items too.
        if paths.iter().any(|p| p.ends_with(".<item>")) {
            paths.retain(|p| p.ends_with(".<item>"));
        }
        let folded = fold(&paths).join(", ");
        match lines.iter_mut().find(|(_, f)| *f == folded) {
            Some((ops, _)) => ops.push(op),
            None => lines.push((vec![op], folded)),
        }
    }
    lines
        .into_iter()
        .map(|(ops, folded)| format!("{}: {folded}", ops.join("/")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Paths folded in two steps: `a.b.x, a.b.y` → `a.b.<x|y>`, then stems whose
/// folded tails agree: `r.o.b.<x|y>, r.o.c.<x|y>` → `r.o.<b|c>.<x|y>`.
fn fold(paths: &[String]) -> Vec<String> {
    let tails = grouped(
        paths
            .iter()
            .map(|path| path.rsplit_once('.').unwrap_or(("", path))),
    );
    let stems = grouped(tails.into_iter().map(|(stem, mut lasts)| {
        lasts.sort_unstable();
        let (head, mid) = stem.rsplit_once('.').unwrap_or(("", stem));
        ((head, lasts), mid)
    }));
    let alt = |v: &[&str]| match v {
        [one] => (*one).to_owned(),
        many => format!("<{}>", many.join("|")),
    };
    stems
        .into_iter()
        .map(|((head, lasts), mids)| {
            [head.to_owned(), alt(&mids), alt(&lasts)]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect()
}

/// The paths of `ops` (one op name, positive amounts), one shape per room.
fn by_room(op: &str, paths: Vec<(i64, String)>) -> Vec<Value> {
    by_largest_room(paths)
        .into_iter()
        .map(|(room, paths)| {
            shape(
                &json!({"const": op}),
                &json!({"enum": paths}),
                json!({"type": "integer", "minimum": 1, "maximum": room}),
            )
        })
        .collect()
}

/// Paths grouped by how far they may move, largest first.
fn by_largest_room(paths: Vec<(i64, String)>) -> Vec<(i64, Vec<String>)> {
    let mut groups = grouped(paths);
    groups.sort_by_key(|g| std::cmp::Reverse(g.0));
    groups
}

/// Values grouped by key, in the order each key first comes.
fn grouped<K: PartialEq, V>(items: impl IntoIterator<Item = (K, V)>) -> Vec<(K, Vec<V>)> {
    let mut groups: Vec<(K, Vec<V>)> = Vec::new();
    for (key, value) in items {
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => groups.push((key, vec![value])),
        }
    }
    groups
}

fn shape(op: &Value, path: &Value, value: Value) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["op", "path", "value"],
        "properties": {"op": op, "path": path, "value": value}
    })
}

/// `id` with the characters a regular expression gives meaning escaped.
fn regex_escape(id: &str) -> String {
    id.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$-".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offer_reads_as_one_line_per_kind_of_op() {
        let offer = json!({"anyOf": [
            shape(&json!({"const": "increment"}), &json!({"enum": ["characters.ada.stats.grit", "characters.ada.stats.wits"]}), json!({"type": "integer", "minimum": 1, "maximum": 2})),
            shape(&json!({"const": "add_tag"}), &json!({"const": "characters.ada.tags"}), json!({"type": "string"})),
            shape(&json!({"const": "inventory"}), &json!({"type": "string", "pattern": "^inventory\\.ada\\.[a-z][a-z0-9_]{1,30}$"}), json!({"type": "integer", "minimum": 1, "maximum": 2})),
        ]});
        assert_eq!(
            describe(&offer),
            "increment: characters.ada.stats.<grit|wits>; add_tag: characters.ada.tags; inventory: inventory.ada.<item>"
        );
        let paths: Vec<String> = [
            "relations.a.b.trust",
            "relations.a.b.tension",
            "relations.a.c.trust",
            "relations.a.c.tension",
            "clocks.x",
            "clocks.y",
        ]
        .map(str::to_owned)
        .to_vec();
        assert_eq!(
            fold(&paths),
            ["relations.a.<b|c>.<tension|trust>", "clocks.<x|y>"]
        );
    }

    #[test]
    fn ids_are_escaped_in_patterns() {
        assert_eq!(regex_escape("a.b-c"), "a\\.b\\-c");
    }
}
