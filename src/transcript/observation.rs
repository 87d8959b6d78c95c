//! Per-character observations and their decay, computed on read and never written back.
//!
//! Seed 003 "Observation Priority & Decay":
//! `priority = importance × exp(−λ × age_minutes) × (1 + min(reinforcement, 3) × 0.15)`.
//!
//! Age is measured on the save's *play clock* (minutes of play, advanced by each
//! turn), not the wall clock: a player who comes back after a week finds the
//! characters remembering what they remembered when the game was closed.

use serde::{Deserialize, Serialize};

/// λ when the ruleset names none: an unreinforced memory halves in 90 minutes of play.
pub const DEFAULT_LAMBDA: f64 = std::f64::consts::LN_2 / 90.0;

/// One thing one character noticed.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Observation {
    pub character_id: String,
    pub content: String,
    /// 1 (trivia) to 5 (life-changing).
    pub importance: u8,
    #[serde(default)]
    pub reinforcement_count: u32,
    /// Play-clock minute it was made.
    pub created_minute: f64,
}

/// `exp(−λ × age)`, with negative ages (clock skew) counting as 0.
pub fn decay_weight(age_minutes: f64, lambda: f64) -> f64 {
    (-lambda * age_minutes.max(0.0)).exp()
}

/// `1 + min(reinforcement, 3) × 0.15`.
pub fn reinforcement_multiplier(reinforcement_count: u32) -> f64 {
    1.0 + f64::from(reinforcement_count.min(3)) * 0.15
}

impl Observation {
    /// Seed 003's priority at play-clock minute `now`.
    pub fn priority(&self, now: f64, lambda: f64) -> f64 {
        f64::from(self.importance)
            * decay_weight(now - self.created_minute, lambda)
            * reinforcement_multiplier(self.reinforcement_count)
    }
}

/// The `limit` highest-priority observations at `now`, highest first (ties: newer first).
pub fn recall(
    observations: &[Observation],
    now: f64,
    lambda: f64,
    limit: usize,
) -> Vec<(f64, &Observation)> {
    let mut scored: Vec<(f64, &Observation)> = observations
        .iter()
        .map(|o| (o.priority(now, lambda), o))
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.created_minute.total_cmp(&a.1.created_minute))
    });
    scored.truncate(limit);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(importance: u8, reinforcement_count: u32, created_minute: f64) -> Observation {
        Observation {
            character_id: "ada".into(),
            content: format!("{importance}/{reinforcement_count}/{created_minute}"),
            importance,
            reinforcement_count,
            created_minute,
        }
    }

    #[test]
    fn the_seed_formula() {
        let o = obs(4, 2, 10.0);
        let lambda = 0.01;
        let expected = 4.0 * (-0.01f64 * 30.0).exp() * 1.3;
        assert!((o.priority(40.0, lambda) - expected).abs() < 1e-12);
        assert!((reinforcement_multiplier(0) - 1.0).abs() < 1e-12);
        assert!((reinforcement_multiplier(3) - 1.45).abs() < 1e-12);
        assert!(
            (reinforcement_multiplier(99) - 1.45).abs() < 1e-12,
            "capped at 3"
        );
        assert!((decay_weight(-5.0, lambda) - 1.0).abs() < 1e-12);
        assert!(
            (decay_weight(90.0, DEFAULT_LAMBDA) - 0.5).abs() < 1e-12,
            "90-minute half-life"
        );
    }

    #[test]
    fn recall_prefers_important_recent_reinforced_memories() {
        // At minute 120: 5 made 2 h ago ≈ 1.98; 2 made 20 min ago ≈ 1.71 (×1.45 reinforced ≈ 2.49).
        let all = vec![
            obs(5, 0, 0.0),
            obs(2, 0, 100.0),
            obs(2, 3, 100.0),
            obs(1, 0, 119.0),
        ];
        let top = recall(&all, 120.0, DEFAULT_LAMBDA, 3);
        let order: Vec<&str> = top.iter().map(|(_, o)| o.content.as_str()).collect();
        assert_eq!(order, ["2/3/100", "5/0/0", "2/0/100"]);
        // Five hours on, the once-vital memory has faded below fresh trivia.
        let later = vec![obs(5, 0, 0.0), obs(1, 0, 299.0)];
        let top = recall(&later, 300.0, DEFAULT_LAMBDA, 1);
        assert_eq!(top[0].1.content, "1/0/299");
        assert!(top.windows(2).all(|w| w[0].0 >= w[1].0));
    }
}
