//! The HTTP/1.1 response reader: the body (and the outcome) of a response fed whole equals
//! that of it fed in two pieces and byte by byte; the head and line bounds hold (no growth past
//! them); no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::http::ResponseReader;

#[path = "common.rs"]
mod common;

fn run(pieces: &[&[u8]]) -> (Vec<u8>, Option<String>, Option<u16>, bool) {
    let mut r = ResponseReader::new();
    let mut body = Vec::new();
    let mut err = None;
    for piece in pieces {
        if let Err(e) = r.feed(piece, &mut body) {
            err = Some(e.0);
            break;
        }
    }
    if err.is_none() {
        err = r.finish().err().map(|e| e.0);
    }
    (body, err, r.status(), r.body_complete())
}

fuzz_target!(|data: &[u8]| {
    let Some((input, cut)) = common::split(data) else { return };
    let whole = run(&[input]);
    let (a, b) = input.split_at(cut);
    let two = run(&[a, b]);
    // An error is reached at the same byte whatever the cut, so the outcome is the same; the
    // body before it too.
    assert_eq!(two, whole, "two pieces");
    if input.len() <= 512 {
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&bytes), whole, "byte by byte");
    }
});
