//! Fuzz target `story_slot`: [`loreloom_fuzz::story_slot`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::story_slot(data));
