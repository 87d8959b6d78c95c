//! Fuzz target `graph_yaml`: [`loreloom_fuzz::graph_yaml`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::graph_yaml(data));
