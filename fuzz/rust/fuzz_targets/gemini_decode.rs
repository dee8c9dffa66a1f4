//! Gemini's one-pass chunk reading (`ssewire::dialect::gemini::decode`, by hand through
//! `json::cursor`, serde_json for what it leaves) against serde_json alone
//! (`decode_serde`): the same chunk, or the same refusal; each text's literal (the place a
//! frame template leaves open) inside the chunk, between quotes, and its text; no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::dialect::gemini::{decode, decode_serde};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = std::str::from_utf8(data) else {
        return;
    };
    match (decode(doc), decode_serde(doc)) {
        (Ok(fast), Ok(slow)) => {
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{doc}");
            for part in fast.candidates.iter().flat_map(|c| &c.parts) {
                let Some(literal) = part.text_literal.0 else {
                    continue;
                };
                let at = (literal.as_ptr() as usize).wrapping_sub(doc.as_ptr() as usize);
                assert!(at >= 1 && at + literal.len() < doc.len(), "{doc}");
                assert_eq!(doc.get(at - 1..at), Some("\""), "{doc}");
                assert_eq!(doc.get(at..at + literal.len()), Some(literal), "{doc}");
                let read: String = serde_json::from_str(&format!("\"{literal}\"")).expect("a literal");
                assert_eq!(Some(read.as_str()), part.text.as_deref(), "{doc}");
            }
        }
        (Err(_), Err(_)) => {}
        (fast, slow) => panic!("{doc}: one pass {:?}, serde_json {:?}", fast.is_ok(), slow.is_ok()),
    }
});
