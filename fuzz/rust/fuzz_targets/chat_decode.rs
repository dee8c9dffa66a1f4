//! The chat dialect's one-pass chunk reading (`ssewire::dialect::chat::decode`, by hand
//! through `json::cursor`, serde_json for what it leaves) against serde_json alone
//! (`decode_serde`): the same chunk, or the same refusal; each text fragment borrowed from the
//! chunk exactly when serde_json's is (a frame template finds a borrowed text's place); no
//! panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::dialect::chat::{decode, decode_serde, Content};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = std::str::from_utf8(data) else {
        return;
    };
    match (decode(doc), decode_serde(doc)) {
        (Ok(fast), Ok(slow)) => {
            assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{doc}");
            let borrowed = |c: &ssewire::dialect::chat::Chunk<'_>| -> Vec<bool> {
                c.choices
                    .iter()
                    .filter_map(|choice| match &choice.delta.content {
                        Some(Content::Text(t)) => Some(matches!(t.0, std::borrow::Cow::Borrowed(_))),
                        _ => None,
                    })
                    .collect()
            };
            assert_eq!(borrowed(&fast), borrowed(&slow), "{doc}");
        }
        (Err(_), Err(_)) => {}
        (fast, slow) => panic!("{doc}: one pass {:?}, serde_json {:?}", fast.is_ok(), slow.is_ok()),
    }
});
