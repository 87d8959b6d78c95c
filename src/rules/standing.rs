//! Faction reputation and NPC perception: scores in −100..=100, their start, tiers and decay.
//!
//! Seed 002 §4.1.4, §4.2.3, §7.6: the scores' initialisation, tiers, dice
//! modifiers, decay and the choice filter.
//!
//! Plain Rust over [`WorldState`]: the scores live in the world (so they are
//! saved with every scene snapshot, rewound with it and replayed exactly) and
//! change through the same typed ops as everything else
//! (`increment perception.<npc>`, `increment reputation.<faction>`). The turn
//! pipeline also derives perception from what the extractors already report:
//! a change of trust or tension between the persona and an NPC moves that
//! NPC's perception by [`StandingConfig::points_per_relation`] per point, and a
//! share of every perception change spills over to the NPC's factions.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::op::SCALE;
use super::op::{Change, OpKind, StateOp};
use super::state::WorldState;

/// Perception above this enables cooperation; below its negative hides friendly options (§4.2.1).
pub const COOPERATION: f64 = 30.0;

/// How a campaign tunes standing (`world/state.json` → `standing`); every field has the seed's default.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct StandingConfig {
    /// In-game minutes in one decay unit (seed 002: a week).
    pub time_unit_minutes: f64,
    /// Share lost per unit by scores within ±50 (seed 002: about 10%).
    pub decay_rate: f64,
    /// Share lost per unit by strong opinions beyond ±50 (seed 002: slower).
    pub strong_decay_rate: f64,
    /// Weights of a new NPC's perception (seed 002 §4.2.3: 50% / 30% / 20%).
    pub faction_weight: f64,
    pub traits_weight: f64,
    pub variance_weight: f64,
    /// Perception points per point of trust gained (or tension lost) with the persona.
    pub points_per_relation: f64,
    /// Largest perception change one turn may make (seed 002 §7.6: ±0.1 to ±0.5 of the scale).
    pub max_change_per_turn: f64,
    /// Share of a member's perception change that reaches their factions' reputation.
    pub faction_spillover: f64,
    /// Starting reputation by faction id (absent ones start at 0).
    pub reputation: BTreeMap<String, i64>,
}

impl Default for StandingConfig {
    fn default() -> Self {
        Self {
            time_unit_minutes: 7.0 * 24.0 * 60.0,
            decay_rate: 0.10,
            strong_decay_rate: 0.05,
            faction_weight: 0.5,
            traits_weight: 0.3,
            variance_weight: 0.2,
            points_per_relation: 10.0,
            max_change_per_turn: 50.0,
            faction_spillover: 0.25,
            reputation: BTreeMap::new(),
        }
    }
}

/// What one NPC brings to its first impression of the persona.
#[derive(Clone, Debug, PartialEq)]
pub struct Acquaintance<'a> {
    pub id: &'a str,
    /// The factions the NPC belongs to.
    pub factions: &'a [String],
    /// How the NPC regards visible traits: a persona tag or carried item id → −100..=100.
    pub regards: &'a BTreeMap<String, i64>,
}

/// A score's tier: the dice modifier it grants (seed 002 §4.2.3: ±1..3 beyond ±30).
pub fn modifier(score: f64) -> i64 {
    let magnitude = match score.abs() {
        s if s > 80.0 => 3,
        s if s > 55.0 => 2,
        s if s > COOPERATION => 1,
        _ => 0,
    };
    if score < 0.0 { -magnitude } else { magnitude }
}

/// A score in words, for prompts, the overlay and the side panel.
pub fn label(score: f64) -> &'static str {
    match score {
        s if s > 55.0 => "devoted",
        s if s > COOPERATION => "warm",
        s if s >= -COOPERATION => "neutral",
        s if s >= -55.0 => "cold",
        _ => "hostile",
    }
}

/// A deterministic draw in −1..=1 for the variance share, from the session seed and the NPC.
fn variance(seed: u64, id: &str) -> f64 {
    // FNV-1a over the id, mixed with the seed (splitmix64): stable across
    // builds and platforms, so a replayed session starts from the same scores.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = h ^ seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    #[expect(
        clippy::cast_precision_loss,
        reason = "53 bits of a 64-bit draw suffice"
    )]
    let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
    unit.mul_add(2.0, -1.0)
}

/// Seed 002 §4.2.3: a new NPC's perception from faction reputation (50%),
/// visible traits and equipment (30%) and variance (20%). Traits are the
/// NPC's `regards` that match the persona's tags or carried items (averaged);
/// an NPC without matching regards reads the persona through the authored
/// relation (trust − tension, scaled).
pub fn initial_perception(
    config: &StandingConfig,
    world: &WorldState,
    persona: &str,
    npc: &Acquaintance<'_>,
    seed: u64,
) -> f64 {
    let factions: Vec<f64> = npc
        .factions
        .iter()
        .map(|f| world.reputation.get(f).copied().unwrap_or(0.0))
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "a handful of factions")]
    let faction = if factions.is_empty() {
        0.0
    } else {
        factions.iter().sum::<f64>() / factions.len() as f64
    };
    let tags = world.characters.get(persona).map(|c| &c.tags);
    let items = world.inventory.get(persona);
    let matched: Vec<f64> = npc
        .regards
        .iter()
        .filter(|(what, _)| {
            tags.is_some_and(|t| t.contains(*what)) || items.is_some_and(|i| i.contains_key(*what))
        })
        .map(|(_, v)| f64::from(i32::try_from(*v).unwrap_or(0)))
        .collect();
    #[expect(clippy::cast_precision_loss, reason = "a handful of regards")]
    let traits = if matched.is_empty() {
        world
            .relations
            .iter()
            .find(|r| (r.a == persona && r.b == npc.id) || (r.b == persona && r.a == npc.id))
            .map_or(0.0, |r| {
                #[expect(clippy::cast_precision_loss, reason = "small integers")]
                let d = (r.trust - r.tension) as f64;
                d * config.points_per_relation
            })
    } else {
        matched.iter().sum::<f64>() / matched.len() as f64
    };
    let score = config.faction_weight * faction.clamp(-SCALE, SCALE)
        + config.traits_weight * traits.clamp(-SCALE, SCALE)
        + config.variance_weight * SCALE * variance(seed, npc.id);
    round(score.clamp(-SCALE, SCALE))
}

fn round(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Seed the world's standing: a reputation for every faction (the configured
/// start, else 0), then a perception for every NPC that has none.
pub fn initialise(
    config: &StandingConfig,
    world: &mut WorldState,
    persona: &str,
    factions: &[&str],
    npcs: &[Acquaintance<'_>],
    seed: u64,
) {
    for faction in factions {
        let start = config.reputation.get(*faction).copied().unwrap_or(0);
        world
            .reputation
            .entry((*faction).to_owned())
            .or_insert(f64::from(i32::try_from(start).unwrap_or(0)).clamp(-SCALE, SCALE));
    }
    for npc in npcs {
        if !world.perception.contains_key(npc.id) {
            let p = initial_perception(config, world, persona, npc, seed);
            world.perception.insert(npc.id.to_owned(), p);
        }
    }
}

/// One score after `units` of decay units: toward 0 at `decay_rate`, at
/// `strong_decay_rate` while beyond ±50 (a strong opinion fades to 50 slowly,
/// then as any other).
pub fn decayed(config: &StandingConfig, score: f64, units: f64) -> f64 {
    if units <= 0.0 || score == 0.0 {
        return score;
    }
    let mut s = score.abs();
    let mut left = units;
    if s > 50.0 {
        let keep = 1.0 - config.strong_decay_rate;
        // Units it takes to fall to 50 at the strong rate.
        let to_fifty = if keep > 0.0 && keep < 1.0 {
            (50.0 / s).ln() / keep.ln()
        } else {
            f64::INFINITY
        };
        if to_fifty >= left {
            return round((s * keep.powf(left)).copysign(score));
        }
        s = 50.0;
        left -= to_fifty;
    }
    s *= (1.0 - config.decay_rate).powf(left);
    round(s.copysign(score))
}

/// Decay every score for `elapsed` in-game minutes, and advance the world's
/// standing clock by them (the clock lives in the world snapshot, so a replay
/// from any saved scene decays exactly as the original did).
pub fn decay(config: &StandingConfig, world: &mut WorldState, elapsed: f64) {
    if elapsed <= 0.0 || config.time_unit_minutes <= 0.0 {
        return;
    }
    let units = elapsed / config.time_unit_minutes;
    for s in world
        .perception
        .values_mut()
        .chain(world.reputation.values_mut())
    {
        *s = decayed(config, *s, units);
    }
    world.standing_minute += elapsed;
}

/// The perception changes the relation changes of one batch imply: trust with
/// the persona raises the NPC's perception, tension lowers it. One op per NPC,
/// capped at `max_change_per_turn`.
pub fn perception_ops(config: &StandingConfig, persona: &str, changes: &[Change]) -> Vec<StateOp> {
    let mut deltas: BTreeMap<String, f64> = BTreeMap::new();
    for c in changes {
        let parts: Vec<&str> = c.op.path.split('.').collect();
        let ["relations", a, b, axis] = parts.as_slice() else {
            continue;
        };
        let other = match (*a == persona, *b == persona) {
            (true, false) => *b,
            (false, true) => *a,
            _ => continue,
        };
        let (Some(before), Some(after)) = (c.before.as_i64(), c.after.as_i64()) else {
            continue;
        };
        #[expect(clippy::cast_precision_loss, reason = "small integers")]
        let moved = (after - before) as f64;
        let sign = match *axis {
            "trust" => 1.0,
            "tension" => -1.0,
            _ => continue,
        };
        *deltas.entry(other.to_owned()).or_default() += sign * moved * config.points_per_relation;
    }
    deltas
        .into_iter()
        .filter(|(_, d)| *d != 0.0)
        .map(|(npc, d)| {
            let d = d.clamp(-config.max_change_per_turn, config.max_change_per_turn);
            StateOp::new(OpKind::Increment, &format!("perception.{npc}"), round(d))
        })
        .collect()
}

/// The reputation changes a batch's perception changes spill into.
pub fn spillover_ops(
    config: &StandingConfig,
    changes: &[Change],
    factions_of: impl Fn(&str) -> Vec<String>,
) -> Vec<StateOp> {
    let mut deltas: BTreeMap<String, f64> = BTreeMap::new();
    for c in changes {
        let Some(npc) = c.op.path.strip_prefix("perception.") else {
            continue;
        };
        let (Some(before), Some(after)) = (c.before.as_f64(), c.after.as_f64()) else {
            continue;
        };
        for f in factions_of(npc) {
            *deltas.entry(f).or_default() += (after - before) * config.faction_spillover;
        }
    }
    deltas
        .into_iter()
        .filter(|(_, d)| d.abs() >= 0.1)
        .map(|(f, d)| StateOp::new(OpKind::Increment, &format!("reputation.{f}"), round(d)))
        .collect()
}

/// Words that ask an NPC to work with the persona (seed 002 §4.2.1 "cooperation options").
const COOPERATION_WORDS: [&str; 14] = [
    "help",
    "aid",
    "assist",
    "join",
    "lend",
    "teach",
    "vouch",
    "cover for",
    "together",
    "enlist",
    "borrow",
    "favour",
    "favor",
    "team up",
];
/// Words of warmth toward an NPC ("friendly options", hidden by hostile NPCs).
const FRIENDLY_WORDS: [&str; 12] = [
    "thank",
    "comfort",
    "reassure",
    "befriend",
    "confide",
    "console",
    "embrace",
    "share a",
    "cheer",
    "joke with",
    "drink with",
    "sit with",
];

/// Why a choice was withheld, for the overlay.
#[derive(Clone, Debug, PartialEq)]
pub struct Withheld {
    pub choice: String,
    pub npc: String,
    pub perception: f64,
    pub reason: &'static str,
}

/// Seed 002 §4.2.1 on generated choices: a choice that asks an NPC for
/// cooperation needs their perception above 30; one of warmth toward an NPC
/// below −30 is hidden. `names` maps each NPC id to the names the player may
/// use (full name, first name). Returns the kept choices and the withheld ones.
pub fn filter_choices(
    choices: Vec<String>,
    world: &WorldState,
    names: &[(String, Vec<String>)],
) -> (Vec<String>, Vec<Withheld>) {
    let mut kept = Vec::new();
    let mut withheld = Vec::new();
    for choice in choices {
        let lower = choice.to_lowercase();
        let verdict = addressed(&lower, names).and_then(|npc| {
            let p = world.perception.get(npc).copied()?;
            let cooperative = contains_any(&lower, &COOPERATION_WORDS);
            let friendly = cooperative || contains_any(&lower, &FRIENDLY_WORDS);
            let reason = if cooperative && p <= COOPERATION {
                "asks for cooperation, which needs perception above 30"
            } else if friendly && p < -COOPERATION {
                "is friendly toward someone hostile to the persona"
            } else {
                return None;
            };
            Some(Withheld {
                choice: choice.clone(),
                npc: npc.to_owned(),
                perception: p,
                reason,
            })
        });
        match verdict {
            Some(w) => withheld.push(w),
            None => kept.push(choice),
        }
    }
    (kept, withheld)
}

/// The NPC a text addresses: the first whose id or one of whose names it mentions as a word.
pub fn addressed<'a>(lower: &str, names: &'a [(String, Vec<String>)]) -> Option<&'a str> {
    mentions(lower, names).into_iter().min().map(|(_, id)| id)
}

/// Every NPC a text names (by id or one of its names, as a word), in the
/// order of `names`.
pub fn named<'a>(lower: &str, names: &'a [(String, Vec<String>)]) -> Vec<&'a str> {
    mentions(lower, names)
        .into_iter()
        .map(|(_, id)| id)
        .collect()
}

/// Where the text first names each NPC it names, with the NPC's id.
fn mentions<'a>(lower: &str, names: &'a [(String, Vec<String>)]) -> Vec<(usize, &'a str)> {
    names
        .iter()
        .filter_map(|(id, ns)| {
            ns.iter()
                .chain(std::iter::once(id))
                .filter_map(|n| word_at(lower, &n.to_lowercase()))
                .min()
                .map(|at| (at, id.as_str()))
        })
        .collect()
}

fn contains_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| word_at(lower, w).is_some())
}

/// Where `word` starts in `text` as a whole word (a word prefix followed by
/// letters counts too, so "help" finds "helps" and "helping").
fn word_at(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() {
        return None;
    }
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_follow_the_seed() {
        assert_eq!(modifier(0.0), 0);
        assert_eq!(modifier(30.0), 0);
        assert_eq!(modifier(31.0), 1);
        assert_eq!(modifier(60.0), 2);
        assert_eq!(modifier(95.0), 3);
        assert_eq!(modifier(-31.0), -1);
        assert_eq!(modifier(-100.0), -3);
        assert_eq!(label(40.0), "warm");
        assert_eq!(label(-70.0), "hostile");
    }

    #[test]
    fn strong_opinions_decay_slower() {
        let c = StandingConfig::default();
        // One unit: 40 loses 10%, 90 loses 5%.
        assert!((decayed(&c, 40.0, 1.0) - 36.0).abs() < 1e-9);
        assert!((decayed(&c, 90.0, 1.0) - 85.5).abs() < 1e-9);
        assert!((decayed(&c, -40.0, 1.0) + 36.0).abs() < 1e-9);
        // A strong opinion falls to 50 at the slow rate, then at the normal one.
        let long = decayed(&c, 90.0, 30.0);
        assert!(long < 50.0 && long > 0.0, "{long}");
        assert!((decayed(&c, 0.0, 5.0)).abs() < 1e-12);
        // Decay is continuous: two halves equal one whole.
        let halves = decayed(&c, decayed(&c, 70.0, 0.5), 0.5);
        assert!((halves - decayed(&c, 70.0, 1.0)).abs() < 0.11, "{halves}");
    }

    #[test]
    fn variance_is_stable_and_bounded() {
        let a = variance(7, "hesper_vane");
        assert!((a - variance(7, "hesper_vane")).abs() < f64::EPSILON);
        assert!((a - variance(8, "hesper_vane")).abs() > 1e-9);
        for i in 0..200 {
            let v = variance(i, "x");
            assert!((-1.0..=1.0).contains(&v));
        }
    }

    #[test]
    fn names_are_matched_as_words() {
        let names = vec![
            (
                "ned_fallow".to_owned(),
                vec!["Ned Fallow".into(), "Ned".into()],
            ),
            (
                "hesper_vane".to_owned(),
                vec!["Hesper Vane".into(), "Hesper".into()],
            ),
        ];
        assert_eq!(
            addressed("ask hesper for help", &names),
            Some("hesper_vane")
        );
        assert_eq!(addressed("wander the needle shop", &names), None);
        assert_eq!(
            addressed("tell ned what hesper said", &names),
            Some("ned_fallow")
        );
    }
}
