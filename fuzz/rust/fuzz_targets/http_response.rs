//! The HTTP/1.1 response reader: the body, head, trailers and outcome of a response fed whole
//! equal those of it fed in two pieces and byte by byte, also behind a chunked head that makes
//! the input chunk framing from its first byte; the body is never longer than the input; the
//! head and line bounds hold (a small head limit, so that the fuzzer reaches it); no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::http::{Head, HttpError, ResponseReader};

#[path = "common.rs"]
mod common;

const CHUNKED_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";

type Outcome = (Vec<u8>, Option<Head>, String, bool, Result<(), HttpError>);

fn run(pieces: &[&[u8]]) -> Outcome {
    let mut r = ResponseReader::with_max_head(512);
    let mut body = Vec::new();
    let mut result = Ok(());
    for piece in pieces {
        result = r.feed(piece, &mut body);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() {
        result = r.finish();
    }
    let input: usize = pieces.iter().map(|p| p.len()).sum();
    assert!(body.len() <= input, "more body than input");
    let trailers = format!("{:?}", r.trailers());
    (body, r.head().cloned(), trailers, r.body_complete(), result)
}

fuzz_target!(|data: &[u8]| {
    let Some((input, cut)) = common::split(data) else {
        return;
    };
    let (a, b) = input.split_at(cut);
    // An error is reached at the same byte whatever the cut, so the outcome is the same; the
    // body before it too.
    let whole = run(&[input]);
    assert_eq!(run(&[a, b]), whole, "two pieces");
    assert_eq!(
        run(&[CHUNKED_HEAD, a, b]),
        run(&[CHUNKED_HEAD, input]),
        "chunked, two pieces"
    );
    if input.len() <= 512 {
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&bytes), whole, "byte by byte");
    }
});
