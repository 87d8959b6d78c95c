//! Fuzz target `story`: [`loreloom_fuzz::story`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::story(data));
