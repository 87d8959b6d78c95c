//! The evaluation harness (seed 001): replays with overrides, unattended play, metrics, sheets.
//!
//! [`replay`] replays a range of a save exactly and with overrides (prompt
//! version, model, seed, live) and compares them turn by turn; [`play`] lets
//! the automatic [`player`] play a campaign for N turns, R times, each run a
//! real save; [`facts`] measures each turn and [`crate::session::continuity`] reads its words
//! against the world (contradictions, outcomes), all engine code; [`metrics`]
//! sums them into seed 001's six metrics and ours; [`report`] writes them for
//! machines and people; [`sheet`] hides the sources for blind rating.

pub mod facts;
pub mod metrics;
pub mod play;
pub mod player;
pub mod replay;
pub mod report;
pub mod sheet;
