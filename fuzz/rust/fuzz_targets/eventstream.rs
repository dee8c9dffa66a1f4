//! The AWS event stream framing: the messages (and the one fault) of a body fed whole equal
//! those fed in two pieces and byte by byte; every message read encodes back to its own
//! bytes; nothing is read after a fault; no panic. The input is used raw (hostile preludes and
//! CRCs) and, from its second byte on, as headers and payload of messages written here
//! (valid CRCs, so the header parser and the payload boundary are reached too).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::framing::eventstream::{encode, read_headers, Decoder, Fault, Message};

#[path = "common.rs"]
mod common;

type Owned = (Vec<(String, Vec<u8>)>, Vec<u8>);

fn owned(m: &Message<'_>) -> Owned {
    let mut again = Vec::new();
    encode(&m.headers, m.payload, &mut again);
    let headers = m
        .headers
        .iter()
        .map(|(n, v)| (n.to_string(), format!("{v:?}").into_bytes()))
        .collect();
    (headers, again)
}

fn run(pieces: &[&[u8]]) -> (Vec<Owned>, Option<Fault>) {
    let mut d = Decoder::new(4096);
    let mut all = Vec::new();
    let mut fault = None;
    for piece in pieces {
        d.feed(piece, |r| match r {
            Ok(m) => {
                assert!(fault.is_none(), "a message after a fault");
                all.push(owned(&m));
            }
            Err(f) => fault = Some(f),
        });
    }
    if let Some(f) = d.finish() {
        assert!(fault.is_none());
        fault = Some(f);
    }
    (all, fault)
}

fn check(body: &[u8], cut: usize) {
    let whole = run(&[body]);
    // A message read whole is its own bytes again.
    let mut at = 0;
    for (_, bytes) in &whole.0 {
        assert_eq!(
            body.get(at..at + bytes.len()),
            Some(&bytes[..]),
            "re-encoded"
        );
        at += bytes.len();
    }
    let cut = cut.min(body.len());
    let (a, b) = body.split_at(cut);
    assert_eq!(run(&[a, b]), whole, "two pieces");
    if body.len() <= 512 {
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&bytes), whole, "byte by byte");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((body, cut)) = common::split(data) else {
        return;
    };
    check(body, cut);
    // Messages written here around the input as their headers block: a valid frame whose
    // headers may not read.
    if let Some((&n, rest)) = body.split_first() {
        let (headers, payload) = rest.split_at(usize::from(n).min(rest.len()));
        let _ = read_headers(headers);
        let mut written = Vec::new();
        encode(&[], payload, &mut written);
        let start = written.len();
        let total = (16 + headers.len() + payload.len()) as u32;
        written.extend_from_slice(&total.to_be_bytes());
        written.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        let crc = crc32(&written[start..]);
        written.extend_from_slice(&crc.to_be_bytes());
        written.extend_from_slice(headers);
        written.extend_from_slice(payload);
        let crc = crc32(&written[start..]);
        written.extend_from_slice(&crc.to_be_bytes());
        check(&written, cut);
    }
});

fn crc32(bytes: &[u8]) -> u32 {
    // The same polynomial as the decoder's (IEEE, reflected), bit by bit: an independent check.
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
