#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| skald::fuzzing::ollama_stream(data));
