//! WHATWG framing: the events of a body fed whole equal those fed in two pieces and byte by
//! byte; finish() agrees; no panic. A small max_event_size reaches the too-large paths.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::framing::sse::{Framer, RawEvent};

#[path = "common.rs"]
mod common;

fn owned(events: Vec<RawEvent<'_>>) -> Vec<(Vec<u8>, Vec<u8>, Option<Vec<u8>>, Option<u64>)> {
    events
        .into_iter()
        .map(|e| {
            (
                e.event_type().to_vec(),
                e.data.to_vec(),
                e.id.map(|i| i.to_vec()),
                e.retry,
            )
        })
        .collect()
}

fn run(pieces: &[&[u8]]) -> (Vec<(Vec<u8>, Vec<u8>, Option<Vec<u8>>, Option<u64>)>, usize) {
    let mut f = Framer::new(256);
    let mut all = Vec::new();
    let mut too_large = 0;
    for piece in pieces {
        let mut out = Vec::new();
        if f.feed(piece, &mut out).is_some() {
            too_large += 1;
        }
        all.extend(owned(out));
    }
    let pending = f.pending();
    all.extend(owned(f.finish(true).into_iter().collect()));
    (all, usize::from(pending) + usize::from(too_large > 0) * 2)
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    let whole = run(&[body]);
    let (a, b) = body.split_at(cut);
    assert_eq!(run(&[a, b]).0, whole.0, "two pieces");
    if body.len() <= 256 {
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&bytes).0, whole.0, "byte by byte");
    }
});
