//! Gemini's one-pass chunk reading (`ssewire::dialect::gemini::decode`, by hand through
//! `json::cursor`, serde_json for what it leaves) against serde_json alone
//! (`decode_serde`): the same chunk, or the same refusal; no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::dialect::gemini::{decode, decode_serde};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = std::str::from_utf8(data) else {
        return;
    };
    match (decode(doc), decode_serde(doc)) {
        (Ok(fast), Ok(slow)) => assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{doc}"),
        (Err(_), Err(_)) => {}
        (fast, slow) => panic!("{doc}: one pass {:?}, serde_json {:?}", fast.is_ok(), slow.is_ok()),
    }
});
