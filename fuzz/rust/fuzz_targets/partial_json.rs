//! Partial JSON: the value and the outcome of a text fed whole equal those of it fed in two
//! pieces (bytes cut anywhere, even inside a character); values are valid JSON within the
//! nesting limit; no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::json::partial::PartialJson;

#[path = "common.rs"]
mod common;

fn run(pieces: &[&[u8]]) -> (Option<String>, bool, Option<usize>, Option<usize>) {
    let mut p = PartialJson::new();
    let mut err = None;
    for piece in pieces {
        if let Err(e) = p.feed_bytes(piece) {
            err.get_or_insert(e.byte);
        }
    }
    let value = p.value_json();
    if let Some(v) = &value {
        // One JSON document (numbers out of the float range included, as json.loads reads).
        assert!(
            ssewire::json::tree::check_json(v).is_ok(),
            "the partial value is not JSON: {v}"
        );
    }
    let complete = p.complete();
    let fin = p.finish().err().map(|e| e.byte);
    (value, complete, err, fin)
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    let whole = run(&[body]);
    let (a, b) = body.split_at(cut);
    assert_eq!(run(&[a, b]), whole);
});
