//! The gateway's usage-chunk filter (`relay::DropUsage`) and the store form of carrier ids:
//! what the filter passes is the same fed whole, in two pieces and byte by byte, never more
//! than its input, and every byte of the input when no event decodes as a usage chunk; the
//! short ids found in a body are bounded in number and length; no panic. A small bound
//! reaches the passing path.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::relay::DropUsage;
use ssewire::translate::carry;

#[path = "common.rs"]
mod common;

fn run(pieces: &[&[u8]]) -> Vec<u8> {
    let mut f = DropUsage::new(256);
    let mut out = Vec::new();
    for piece in pieces {
        f.feed(piece, &mut out);
    }
    f.finish(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    let whole = run(&[body]);
    assert!(whole.len() <= body.len(), "more out than in");
    if !body.windows(5).any(|w| w == b"usage") {
        assert_eq!(whole, body, "nothing to take out");
    }
    let (a, b) = body.split_at(cut);
    assert_eq!(run(&[a, b]), whole, "two pieces");
    if body.len() <= 256 {
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&bytes), whole, "byte by byte");
    }
    let ids = carry::stored_ids(body);
    assert!(ids.len() <= carry::MAX_STORED_IDS);
    for id in &ids {
        assert!(
            id.starts_with(carry::PREFIX) && id.len() <= carry::PREFIX.len() + 85,
            "{id}"
        );
    }
});
