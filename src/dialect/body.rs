//! A response body as the dialect streams see it: usually an event stream, sometimes a bare
//! JSON error object that a gateway passed through instead (a pre-stream error).
//!
//! The first significant byte decides: `{` or `[` means a JSON body, which is collected (up to
//! the event size limit) and handed over once it parses; anything else is an event stream and
//! goes to the [`Framer`]. Leading white space and a BOM are skipped while deciding. Carried
//! across feeds: the decision, the framer, and the JSON body collected so far.
//! Cost: framing is O(bytes); a JSON body is re-checked only when it ends in `}` or `]`.

use std::borrow::Cow;
use std::mem;

use serde::de::IgnoredAny;

use crate::sse::{Framer, RawEvent, TooLarge};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sniffing,
    EventStream,
    Json,
    JsonComplete,
    JsonTaken,
}

/// Sniffer + framer for one response body.
#[derive(Debug)]
pub struct Body {
    framer: Framer,
    mode: Mode,
    json: Vec<u8>,
}

/// What `finish` found at the end of the body.
#[derive(Debug, Default)]
pub struct End {
    /// An event that was never closed by a blank line (lenient flush), if any.
    pub last_event: Option<RawEvent<'static>>,
    /// The input ended in the middle of an event.
    pub cut_off: bool,
    /// A JSON body that was not handed over yet (it may be incomplete).
    pub json: Option<String>,
}

impl Body {
    pub fn new(max_event_size: usize) -> Self {
        Body {
            framer: Framer::new(max_event_size),
            mode: Mode::Sniffing,
            json: Vec::new(),
        }
    }

    pub fn max_event_size(&self) -> usize {
        self.framer.max_event_size()
    }

    /// Frames `input`; a JSON body is collected instead.
    pub fn feed<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        match self.mode {
            Mode::EventStream => self.framer.feed(input, out),
            Mode::Sniffing => {
                let first = input
                    .iter()
                    .position(|b| !(b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF)));
                match first.map(|i| (i, input.get(i))) {
                    Some((i, Some(b'{' | b'['))) => {
                        let (lead, json) = input.split_at(i);
                        self.framer.feed(lead, out);
                        self.mode = Mode::Json;
                        self.collect(json)
                    }
                    Some(_) => {
                        self.mode = Mode::EventStream;
                        self.framer.feed(input, out)
                    }
                    None => self.framer.feed(input, out),
                }
            }
            Mode::Json => self.collect(input),
            Mode::JsonComplete | Mode::JsonTaken => None,
        }
    }

    fn collect(&mut self, input: &[u8]) -> Option<TooLarge> {
        self.json.extend_from_slice(input);
        if self.json.len() > self.framer.max_event_size() {
            let size = self.json.len();
            self.json = Vec::new();
            self.mode = Mode::JsonTaken;
            return Some(TooLarge {
                limit: self.framer.max_event_size(),
                size,
            });
        }
        let last = self.json.iter().rev().find(|b| !b.is_ascii_whitespace());
        if matches!(last, Some(b'}' | b']')) {
            let complete = std::str::from_utf8(&self.json)
                .is_ok_and(|s| serde_json::from_str::<IgnoredAny>(s).is_ok());
            if complete {
                self.mode = Mode::JsonComplete;
            }
        }
        None
    }

    /// The JSON body, once it is complete (handed over once).
    pub fn take_json(&mut self) -> Option<String> {
        if self.mode != Mode::JsonComplete {
            return None;
        }
        self.mode = Mode::JsonTaken;
        Some(json_text(mem::take(&mut self.json)))
    }

    /// Whether the body turned out to be JSON rather than an event stream.
    pub fn is_json(&self) -> bool {
        matches!(self.mode, Mode::Json | Mode::JsonComplete | Mode::JsonTaken)
    }

    /// End of the body: flushes an unclosed event leniently and hands over an unfinished JSON
    /// body. The body is ready for a new response afterwards.
    pub fn finish(&mut self) -> End {
        let json = match self.mode {
            Mode::Json | Mode::JsonComplete => Some(json_text(mem::take(&mut self.json))),
            _ => None,
        };
        let cut_off = self.framer.pending() || self.mode == Mode::Json;
        let last_event = self.framer.finish(true);
        self.mode = Mode::Sniffing;
        self.json.clear();
        End {
            last_event,
            cut_off,
            json,
        }
    }
}

/// The text of a JSON body, without the white space around it: the body is handed over as
/// soon as it parses, so trailing white space must not depend on how the bytes were split.
fn json_text(bytes: Vec<u8>) -> String {
    let text = crate::text::lossy_cow(std::borrow::Cow::Owned(bytes));
    crate::text::fix_lone_surrogates(Cow::Borrowed(text.trim())).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_stream_goes_to_the_framer() {
        let mut b = Body::new(1024);
        let mut out = Vec::new();
        b.feed(b"\n: hi\n\ndata: x\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert!(!b.is_json());
    }

    #[test]
    fn json_body_is_collected_across_feeds() {
        let mut b = Body::new(1024);
        let mut out = Vec::new();
        b.feed(b"  \n{\"error\": {\"mess", &mut out);
        assert!(b.take_json().is_none());
        b.feed(b"age\": \"no\"}}\n", &mut out);
        assert!(out.is_empty());
        assert_eq!(
            b.take_json().as_deref(),
            Some("{\"error\": {\"message\": \"no\"}}")
        );
        assert!(b.take_json().is_none());
    }

    #[test]
    fn unfinished_json_is_handed_over_at_finish() {
        let mut b = Body::new(1024);
        b.feed(b"{\"error\":", &mut Vec::new());
        let end = b.finish();
        assert_eq!(end.json.as_deref(), Some("{\"error\":"));
        assert!(end.cut_off);
    }
}
