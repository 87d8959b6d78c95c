//! What a DRESS run did, for the author at the terminal.

/// What a DRESS run did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Report {
    pub visuals: usize,
    pub briefs: usize,
    /// Briefs per priority: 1, 2, 3 and skipped.
    pub priorities: [usize; 4],
    pub codex_entries: usize,
    /// Illustrations drawn by this run.
    pub drawn: Vec<String>,
    /// Briefs whose picture the provider could not draw.
    pub failed: Vec<String>,
    /// Whether the stage has nothing left to draw after this run.
    pub done: bool,
    pub notes: Vec<String>,
}
