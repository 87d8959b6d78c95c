//! Fuzz target `skill_events`: [`loreloom_fuzz::skill_events`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::skill_events(data));
