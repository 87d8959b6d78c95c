//! Fuzz target `campaign`: [`loreloom_fuzz::campaign`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::campaign(data));
