//! Fuzz target `save`: [`loreloom_fuzz::save`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::save(data));
