//! Fuzz target `model_stream`: [`loreloom_fuzz::model_stream`] on libFuzzer's bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loreloom_fuzz::model_stream(data));
