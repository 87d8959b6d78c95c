//! Test-only: moves and narrations as a fuzzer would write them, for the text helpers' proptests.

use proptest::prelude::*;

/// `words` (a campaign's names and the helper's cue words) mixed with
/// sentence punctuation, case-changing letters and any Unicode at all.
pub(crate) fn text(words: &'static [&'static str]) -> impl Strategy<Value = String> {
    const MARKS: &[&str] = &[
        ".", "!", "?", "\u{2026}", "\"", "\u{201d}", "'", ")", " ", "\n", ",", "\u{0130}",
        "\u{1e9e}",
    ];
    let word = prop_oneof![
        3 => prop::sample::select(words).prop_map(str::to_owned),
        1 => "\\PC{0,6}",
        1 => prop::sample::select(MARKS).prop_map(str::to_owned),
    ];
    prop::collection::vec(word, 0..40).prop_map(|w| w.join(" "))
}
