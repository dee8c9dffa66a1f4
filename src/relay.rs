//! What a gateway changes in a stream it passes on (API.md section 15): a chat stream's usage
//! chunk that the gateway asked for on the client's behalf (`request::ask_for_usage`) is taken
//! out again, every other byte passed as it came.
//!
//! [`DropUsage`] holds the bytes of the event being read until the blank line that ends it
//! (each line break found with `memchr2`), then passes the event on whole unless its data is a
//! chat chunk of usage alone (`dialect::chat::Chunk::usage_only`). Only an event whose bytes
//! hold a `"usage"` object is decoded. An event larger than `max_event_size` is passed on
//! (it is not the small usage chunk), as it comes once it outgrows the bound, so what is held
//! stays bounded.

use memchr::{memchr2, memmem};

use crate::dialect::chat;
use crate::framing::sse::{Framer, RawEvent};

/// A chat stream's bytes with the usage-only chunk taken out.
#[derive(Debug)]
pub struct DropUsage {
    /// The bytes of the event being read, from its first byte.
    held: Vec<u8>,
    /// How far `held` has been scanned for line breaks.
    scanned: usize,
    /// The line being read has no bytes yet (a line break now ends the event).
    blank: bool,
    /// The event being read outgrew the bound: its bytes pass as they come, to its end.
    passing: bool,
    max_event_size: usize,
}

impl DropUsage {
    /// A filter that holds at most about `max_event_size` bytes of one event.
    pub fn new(max_event_size: usize) -> Self {
        DropUsage {
            held: Vec::new(),
            scanned: 0,
            blank: true,
            passing: false,
            max_event_size,
        }
    }

    /// The bytes of `input` to pass on now, appended to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.held.extend_from_slice(input);
        // The current event's first byte in `held`: what is before it is handled, and let go
        // once per feed.
        let mut start = 0;
        loop {
            let rest = self.held.get(self.scanned..).unwrap_or_default();
            let Some(found) = memchr2(b'\n', b'\r', rest) else {
                if !rest.is_empty() {
                    self.blank = false;
                }
                self.scanned = self.held.len();
                break;
            };
            let at = self.scanned + found;
            let end = match (self.held.get(at), self.held.get(at + 1)) {
                (Some(b'\r'), None) => {
                    // A CR last: it may be the first half of a CRLF.
                    if found > 0 {
                        self.blank = false;
                    }
                    self.scanned = at;
                    break;
                }
                (Some(b'\r'), Some(b'\n')) => at + 2,
                _ => at + 1,
            };
            let ends_event = self.blank && found == 0;
            self.blank = true;
            self.scanned = end;
            if ends_event {
                let event = self.held.get(start..end).unwrap_or_default();
                if self.passing || !usage_only(event, self.max_event_size) {
                    out.extend_from_slice(event);
                }
                self.passing = false;
                start = end;
            }
        }
        if self.passing || self.held.len() - start > self.max_event_size {
            // Too large to be the usage chunk: passed on as it comes. A CR held last stays.
            let pending_cr = self.held.last() == Some(&b'\r') && self.scanned < self.held.len();
            let cut = self.held.len() - usize::from(pending_cr);
            out.extend_from_slice(self.held.get(start..cut).unwrap_or_default());
            start = cut;
            self.passing = true;
        }
        self.held.drain(..start);
        self.scanned -= start;
    }

    /// The bytes still held when the body ends (an event with no blank line after it),
    /// appended to `out`: passed on as they are.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
        self.scanned = 0;
        self.blank = true;
        self.passing = false;
    }
}

/// Whether `event` (one whole SSE event, its blank line included) is a chat chunk of usage
/// alone: a default-typed event whose data decodes as one.
fn usage_only(event: &[u8], max_event_size: usize) -> bool {
    if event.len() > max_event_size {
        return false; // larger than the bound: passed, however the reads were cut
    }
    // Cheap first: a usage object, not the `"usage":null` OpenAI writes on every chunk.
    let objects = memmem::find_iter(event, b"\"usage\"").any(|at| {
        let after = event.get(at + 7..).unwrap_or_default();
        let mut rest = after.iter().skip_while(|b| b.is_ascii_whitespace());
        rest.next() == Some(&b':') && rest.find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
    });
    if !objects {
        return false;
    }
    let mut framer = Framer::new(max_event_size);
    let mut events: Vec<RawEvent<'_>> = Vec::new();
    if framer.feed(event, &mut events).is_some() {
        return false;
    }
    match events.as_slice() {
        [one] if one.event_type() == b"message" => std::str::from_utf8(&one.data)
            .ok()
            .and_then(|doc| chat::decode(doc).ok())
            .is_some_and(|chunk| chunk.usage_only()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &[u8] = b"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":null}],\"usage\":null}\n\n\
data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n\
data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n\
data: [DONE]\n\n";

    fn run(parts: &[&[u8]], max: usize) -> Vec<u8> {
        let mut f = DropUsage::new(max);
        let mut out = Vec::new();
        for p in parts {
            f.feed(p, &mut out);
        }
        f.finish(&mut out);
        out
    }

    fn expected(stream: &[u8]) -> Vec<u8> {
        let text = std::str::from_utf8(stream).unwrap();
        let mut kept = String::new();
        for event in text.split_inclusive("\n\n") {
            if !event.contains("\"choices\":[]") {
                kept.push_str(event);
            }
        }
        kept.into_bytes()
    }

    #[test]
    fn the_usage_chunk_is_taken_out_however_the_bytes_are_cut() {
        let want = expected(STREAM);
        assert_eq!(run(&[STREAM], 1 << 20), want);
        let bytes: Vec<&[u8]> = STREAM.chunks(1).collect();
        assert_eq!(run(&bytes, 1 << 20), want);
        for cut in 0..STREAM.len() {
            let (a, b) = STREAM.split_at(cut);
            assert_eq!(run(&[a, b], 1 << 20), want, "cut at {cut}");
        }
    }

    #[test]
    fn every_line_ending_and_what_is_not_the_usage_chunk() {
        for ending in ["\n", "\r", "\r\n"] {
            let stream = String::from_utf8(STREAM.to_vec())
                .unwrap()
                .replace('\n', ending);
            let out = run(&stream.as_bytes().chunks(7).collect::<Vec<_>>(), 1 << 20);
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains("\"choices\":[]"), "{ending:?}");
            assert_eq!(out.matches("data:").count(), 3, "{ending:?}");
        }
        // Usage on a chunk with a choice (some vendors), a named event, an error: all kept.
        let kept: &[&[u8]] = &[
            b"data: {\"choices\":[{\"index\":0,\"delta\":{}}],\"usage\":{\"total_tokens\":1}}\n\n",
            b"event: usage\ndata: {\"id\":\"c\",\"choices\":[],\"usage\":{\"total_tokens\":1}}\n\n",
            b"data: {\"choices\":[],\"usage\":{\"total_tokens\":1},\"error\":{\"message\":\"x\"}}\n\n",
            b"data: {\"choices\":[],\"usage\":null}\n\n",
            b"data: {\"choices\":[],\"usage\"\n\n",
            b": a comment\n\n",
            b"data: {\"usage\":{}}",
        ];
        for event in kept {
            assert_eq!(run(&[event], 1 << 20), event.to_vec());
        }
    }

    #[test]
    fn a_large_event_passes_as_it_comes_and_what_is_held_stays_bounded() {
        let mut f = DropUsage::new(256);
        let mut out = Vec::new();
        let big = vec![b'x'; 50];
        f.feed(b"data: ", &mut out);
        for _ in 0..100 {
            f.feed(&big, &mut out);
            assert!(f.held.len() <= 256 + 50);
        }
        f.feed(b"\r", &mut out);
        f.feed(b"\n\r\n", &mut out);
        f.feed(STREAM, &mut out);
        f.finish(&mut out);
        let mut want = b"data: ".to_vec();
        for _ in 0..100 {
            want.extend_from_slice(&big);
        }
        want.extend_from_slice(b"\r\n\r\n");
        want.extend_from_slice(&expected(STREAM));
        assert_eq!(out, want);
    }

    mod prop {
        use super::super::DropUsage;
        use proptest::prelude::*;

        /// Events a chat stream may hold, as lines; the one at `USAGE` is the usage chunk.
        const EVENTS: &[&[&str]] = &[
            &["data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}],\"usage\":null}"],
            &["data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"total_tokens\":4}}"],
            &["data: {\"choices\": [], \"usage\": null}"],
            &[": keep-alive"],
            &["event: usage", "data: {\"choices\":[],\"usage\":{\"total_tokens\":1}}"],
            &["data: {\"choices\":[],", "data: \"usage\":{\"prompt_tokens\":1}}"],
            &["id: 7", "data: {\"choices\":[{\"index\":0,\"delta\":{}}],\"usage\":{\"total_tokens\":2}}"],
            &["data: {\"choices\":[],\"usage\":{\"total_tokens\":3},\"error\":{\"message\":\"x\"}}"],
        ];
        /// The usage-only events (a chunk cut over two data lines is one too).
        const USAGE: &[usize] = &[1, 5];

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]
            #[test]
            fn only_the_usage_chunk_goes_however_the_stream_is_written_and_cut(
                events in proptest::collection::vec((0..EVENTS.len(), 0..3usize), 0..12),
                cuts in proptest::collection::vec(0..400usize, 0..8),
                max in prop_oneof![Just(1usize << 20), 16usize..200],
            ) {
                let mut stream = Vec::new();
                let mut want = Vec::new();
                for (event, ending) in &events {
                    let ending = ["\n", "\r", "\r\n"][*ending];
                    let mut text = String::new();
                    for line in EVENTS[*event] {
                        text.push_str(line);
                        text.push_str(ending);
                    }
                    text.push_str(ending);
                    stream.extend_from_slice(text.as_bytes());
                    let large = text.len() > max;
                    if !USAGE.contains(event) || large {
                        want.extend_from_slice(text.as_bytes());
                    }
                }
                stream.extend_from_slice(b"data: [DONE]\n\n");
                want.extend_from_slice(b"data: [DONE]\n\n");
                let mut points: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
                points.sort_unstable();
                let mut out = Vec::new();
                let mut f = DropUsage::new(max);
                let mut at = 0;
                for p in points {
                    f.feed(&stream[at..p], &mut out);
                    at = p;
                }
                f.feed(&stream[at..], &mut out);
                f.finish(&mut out);
                prop_assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want));
            }
        }
    }
}
