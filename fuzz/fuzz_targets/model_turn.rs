//! Fuzz target `model_turn`: [`loreloom_fuzz::model_turn`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::model_turn(data));
