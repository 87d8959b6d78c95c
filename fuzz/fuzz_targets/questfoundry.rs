//! Fuzz target `questfoundry`: [`loreloom_fuzz::questfoundry`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::questfoundry(data));
