//! Fuzz target `ruleset`: [`loreloom_fuzz::ruleset`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::ruleset(data));
