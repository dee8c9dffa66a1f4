//! A response body as the dialect streams see it, in its dialect's [`Framing`]: usually an
//! event stream, sometimes a bare JSON error object that a gateway passed through instead (a
//! pre-stream error); or, in the NDJSON framing, lines (where a body that opens with `{` is its
//! first record, never an error body: the framing says so, [`ndjson`](super::ndjson)).
//!
//! In the SSE framings the first significant byte decides: `{` or `[` means a JSON body, anything else an event
//! stream that goes to the [`Framer`]. Leading white space and a BOM are skipped while
//! deciding. A JSON body is one JSON document: it ends where its outermost bracket closes
//! (found by a scan that carries its depth and string state across feeds), it is handed over
//! then, and whatever follows it in the body is ignored. A document larger than the event size
//! limit is dropped (`TooLarge`, once) and the rest of the body is ignored too. So the result
//! does not depend on how the body was split into reads.
//!
//! An event stream that never dispatches an event is checked at the end: when none of its
//! lines is an SSE field (`data`, `event`, `id`, `retry`) or a comment, the body was not an
//! event stream at all (an HTML error page from a proxy, a plain-text 404) and its start (at
//! most [`HEAD_LIMIT`] bytes) is handed over as [`End::not_sse`], so the stream can report it
//! as what it is rather than as a stream cut short.
//!
//! Carried across feeds: the decision, the framer, the JSON document collected so far and its
//! scan state, and the body's first bytes until an event is dispatched. Cost: O(bytes): each
//! byte of a JSON body is scanned once, and the document is validated once, when it ends; at
//! most [`HEAD_LIMIT`] bytes of an event stream are copied, only before its first event.

use std::borrow::Cow;
use std::mem;

use super::ndjson::Lines;
use super::sse::{Framer, RawEvent, TooLarge};
use super::Framing;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sniffing,
    EventStream,
    /// Collecting a JSON document.
    Json,
    /// The document ended; not handed over yet.
    JsonComplete,
    /// The document was handed over (or dropped as too large): the rest is ignored.
    JsonTaken,
    /// A JSON array of documents read element by element ([`Framing::SseOrArray`]).
    Array,
    /// NDJSON lines ([`Framing::Ndjson`]): no sniffing.
    Lines,
}

/// Where a scan of a JSON document is: bracket depth and string state.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Scan {
    /// Scans `input`; returns the length of its prefix that ends the document (its outermost
    /// bracket closed), or `None` if the document goes on past `input`.
    fn end(&mut self, input: &[u8]) -> Option<usize> {
        for (i, &b) in input.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// How much of the start of an event stream is kept until its first event is dispatched: the
/// text of a body that turns out not to be an event stream.
pub const HEAD_LIMIT: usize = 16 * 1024;

/// Sniffer + framer for one response body.
#[derive(Debug)]
pub struct Body {
    framer: Framer,
    mode: Mode,
    json: Vec<u8>,
    scan: Scan,
    /// The start of an event stream (at most `HEAD_LIMIT` bytes), kept until an event is
    /// dispatched; then cleared and not kept again.
    head: Vec<u8>,
    dispatched: bool,
    /// Whether a body that is a JSON array is read element by element.
    arrays: bool,
    /// The line framer, in the NDJSON framing.
    lines: Option<Box<Lines>>,
    /// In the NDJSON framing: the body's first significant byte opens no object (an HTML
    /// page, a plain-text error): no line is framed, its head is kept for `not_sse`.
    not_lines: bool,
    /// The element of an array body read so far (the part of it before this feed).
    element: Vec<u8>,
    /// Whether the scan is inside an element; whether that element is being dropped (too
    /// large).
    in_element: bool,
    dropping: bool,
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
    /// The start of a body that was not an event stream (no event dispatched, no SSE field or
    /// comment line in it), at most [`HEAD_LIMIT`] bytes of it.
    pub not_sse: Option<String>,
}

impl Body {
    /// A body in `framing` ([`Framing::EventStream`]: the body behind the event stream
    /// decoder, read as SSE reads it).
    pub fn new(max_event_size: usize, framing: Framing) -> Self {
        let lines = framing == Framing::Ndjson;
        Body {
            framer: Framer::new(max_event_size),
            mode: if lines { Mode::Lines } else { Mode::Sniffing },
            json: Vec::new(),
            scan: Scan::default(),
            head: Vec::new(),
            dispatched: false,
            arrays: framing == Framing::SseOrArray,
            lines: lines.then(|| Box::new(Lines::new(max_event_size))),
            not_lines: false,
            element: Vec::new(),
            in_element: false,
            dropping: false,
        }
    }

    /// The longest event this body takes, in bytes.
    pub fn max_event_size(&self) -> usize {
        self.framer.max_event_size()
    }

    /// An event stream, past its first event, between events (see [`Framer::idle`]); or a
    /// body of JSON lines, past its head, between lines ([`Lines::idle`]).
    pub fn idle(&self) -> bool {
        if self.mode == Mode::EventStream {
            return self.dispatched && self.framer.idle();
        }
        self.dispatched && self.mode == Mode::Lines && self.lines.as_ref().is_some_and(|l| l.idle())
    }

    /// Whether the body is read as lines of JSON (the framer cuts it at each line feed, not at
    /// blank lines).
    pub fn is_lines(&self) -> bool {
        self.mode == Mode::Lines
    }

    /// Frames `input`; a JSON body is collected instead.
    pub fn feed<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        if self.lines.is_some() {
            // Lines of JSON open with `{`: a body that opens otherwise is no such body, and
            // only its head is kept.
            if self.dispatched {
                return self.feed_body(input, out);
            }
            // Until the first significant byte the head is kept (white space included), so a
            // body that opens with no object is reported the same however it is cut.
            let room = HEAD_LIMIT.saturating_sub(self.head.len());
            self.head
                .extend_from_slice(input.get(..room.min(input.len())).unwrap_or_default());
            if !self.not_lines {
                match significant_at(input).map(|at| input.get(at)) {
                    Some(Some(b'{')) => {
                        self.dispatched = true;
                        self.head = Vec::new();
                    }
                    Some(_) => self.not_lines = true,
                    None => {}
                }
            }
            if self.not_lines {
                return None;
            }
            return self.feed_body(input, out);
        }
        // The head is kept for a body that turns out to be no event stream.
        if self.dispatched || self.is_json() {
            return self.feed_body(input, out);
        }
        let room = HEAD_LIMIT.saturating_sub(self.head.len());
        self.head
            .extend_from_slice(input.get(..room.min(input.len())).unwrap_or_default());
        let before = out.len();
        let too_large = self.feed_body(input, out);
        if out.len() > before || self.is_json() {
            self.dispatched = true;
            self.head = Vec::new();
        }
        too_large
    }

    fn feed_body<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        match self.mode {
            Mode::EventStream => self.framer.feed(input, out),
            Mode::Lines => match &mut self.lines {
                Some(lines) => lines.feed(input, out),
                None => None,
            },
            Mode::Sniffing => match significant_at(input).map(|i| (i, input.get(i))) {
                Some((i, Some(b'['))) if self.arrays => {
                    let (lead, rest) = input.split_at(i);
                    self.framer.feed(lead, out);
                    self.mode = Mode::Array;
                    self.scan = Scan::default();
                    self.array(rest, out)
                }
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
            },
            Mode::Json => self.collect(input),
            Mode::Array => self.array(input, out),
            Mode::JsonComplete | Mode::JsonTaken => None,
        }
    }

    /// Reads `input` of an array body: each element that closes in it is handed over.
    fn array<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        let mut too_large = None;
        // Where the current element starts in `input` (0 when it began in an earlier feed).
        let mut start = 0;
        let mut i = 0;
        while let Some(&b) = input.get(i) {
            let scan = &mut self.scan;
            if scan.in_string {
                // Skip to the next quote or backslash at memchr speed.
                if scan.escaped {
                    scan.escaped = false;
                } else if let Some(at) =
                    memchr::memchr2(b'"', b'\\', input.get(i..).unwrap_or_default())
                {
                    i += at;
                    if input.get(i) == Some(&b'\\') {
                        scan.escaped = true;
                    } else {
                        scan.in_string = false;
                    }
                } else {
                    i = input.len();
                    continue;
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => scan.in_string = true,
                b'{' | b'[' => {
                    scan.depth += 1;
                    if scan.depth == 2 {
                        self.in_element = true;
                        self.dropping = false;
                        self.element.clear();
                        start = i;
                    }
                }
                b'}' | b']' => {
                    scan.depth = scan.depth.saturating_sub(1);
                    if scan.depth == 0 {
                        // The array closed: the rest of the body is ignored.
                        self.mode = Mode::JsonTaken;
                        self.in_element = false;
                        return too_large;
                    }
                    if scan.depth == 1 && self.in_element {
                        self.in_element = false;
                        let part = input.get(start..=i).unwrap_or_default();
                        if !self.dropping {
                            self.check_element(part.len(), &mut too_large);
                        }
                        if !self.dropping {
                            let data = if self.element.is_empty() {
                                Cow::Borrowed(part)
                            } else {
                                let mut whole = mem::take(&mut self.element);
                                whole.extend_from_slice(part);
                                Cow::Owned(whole)
                            };
                            out.push(RawEvent {
                                event: None,
                                data,
                                id: None,
                                retry: None,
                            });
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        if self.in_element && !self.dropping {
            self.element
                .extend_from_slice(input.get(start..).unwrap_or_default());
            self.check_element(0, &mut too_large);
        }
        too_large
    }

    /// Drops the element being read once it (`self.element` and `more` bytes) is larger than
    /// the event size limit: checked when it closes and at the end of each feed (bytes of the
    /// current feed are not copied before), so at most the limit plus one feed is held.
    fn check_element(&mut self, more: usize, too_large: &mut Option<TooLarge>) {
        let limit = self.framer.max_event_size();
        let size = self.element.len() + more;
        if size > limit {
            too_large.get_or_insert(TooLarge { limit, size });
            self.dropping = true;
            self.element = Vec::new();
        }
    }

    fn collect(&mut self, input: &[u8]) -> Option<TooLarge> {
        let end = self.scan.end(input);
        let part = match end {
            Some(n) => input.get(..n).unwrap_or(input),
            None => input,
        };
        let size = self.json.len() + part.len();
        let limit = self.framer.max_event_size();
        if size > limit {
            self.json = Vec::new();
            self.mode = Mode::JsonTaken;
            return Some(TooLarge { limit, size });
        }
        self.json.extend_from_slice(part);
        if end.is_some() {
            self.mode = Mode::JsonComplete;
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
        let lined = self.lines.as_mut().map(|l| (l.pending(), l.finish()));
        let cut_off = self.framer.pending()
            || matches!(self.mode, Mode::Json | Mode::Array)
            || lined.as_ref().is_some_and(|l| l.0);
        let last_event = match lined {
            Some((_, last)) => last,
            None => self.framer.finish(true),
        };
        let array =
            matches!(self.mode, Mode::Array) || (self.arrays && self.mode == Mode::JsonTaken);
        let lined = self.lines.is_some();
        let not_sse = (self.not_lines
            || (!self.dispatched
                && !array
                && !lined
                && last_event.is_none()
                && !is_event_stream(&self.head)))
        .then(|| {
            let text = crate::text::lossy_cow(Cow::Owned(mem::take(&mut self.head)));
            crate::text::fix_lone_surrogates(text).into_owned()
        });
        self.mode = if lined { Mode::Lines } else { Mode::Sniffing };
        self.json.clear();
        self.scan = Scan::default();
        self.head = Vec::new();
        self.dispatched = false;
        self.not_lines = false;
        self.element = Vec::new();
        self.in_element = false;
        self.dropping = false;
        End {
            last_event,
            cut_off,
            json,
            not_sse,
        }
    }
}

/// Where the first significant byte of a body's head is: past white space and a BOM (its
/// bytes anywhere in the lead, so a BOM cut across reads is skipped too).
pub fn significant_at(head: &[u8]) -> Option<usize> {
    head.iter()
        .position(|b| !(b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF)))
}

/// Whether a body whose head is `head` is one JSON document rather than an event stream:
/// `Some(true)` when its first significant byte opens an object or an array, `None` while
/// the head is only white space and a BOM.
pub fn opens_json(head: &[u8]) -> Option<bool> {
    let at = significant_at(head)?;
    Some(matches!(head.get(at), Some(b'{' | b'[')))
}

/// Whether the start of a body that dispatched no event reads as an event stream: it is empty
/// (or only white space), or one of its lines is a comment or an SSE field (`data`, `event`,
/// `id`, `retry`, with or without a colon). An HTML page or a plain-text error is neither.
pub fn is_event_stream(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    if head.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    head.split(|b| matches!(b, b'\r' | b'\n')).any(|line| {
        let name = line.split(|b| *b == b':').next().unwrap_or_default();
        line.first() == Some(&b':') || matches!(name, b"data" | b"event" | b"id" | b"retry")
    })
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
    fn a_lines_body_that_opens_with_no_object_is_no_body() {
        for cuts in [vec![], vec![3], vec![1, 2, 3, 9]] {
            let body = b"  <html>502\n{\"a\":1}\n";
            let mut b = Framing::Ndjson.body(1024);
            let mut events = Vec::new();
            let mut at = 0;
            for cut in cuts.iter().copied().chain([body.len()]) {
                b.feed(&body[at..cut], &mut events);
                at = cut;
            }
            assert!(events.is_empty());
            let end = b.finish();
            assert_eq!(end.not_sse.as_deref(), Some("  <html>502\n{\"a\":1}\n"));
            let mut lines = Framing::Ndjson.body(1024);
            lines.feed(b"\n {\"a\":1}\n", &mut events);
            assert_eq!(events.len(), 1);
            assert!(lines.finish().not_sse.is_none());
            events.clear();
        }
    }

    #[test]
    fn a_json_body_is_told_by_its_first_significant_byte() {
        assert_eq!(opens_json(b""), None);
        assert_eq!(opens_json(b" \r\n\xEF\xBB"), None);
        assert_eq!(opens_json(b"\xEF\xBB\xBF {"), Some(true));
        assert_eq!(opens_json(b"\n["), Some(true));
        assert_eq!(opens_json(b"data: {}"), Some(false));
        assert_eq!(opens_json(b": ping"), Some(false));
    }

    #[test]
    fn event_stream_goes_to_the_framer() {
        let mut b = Body::new(1024, Framing::Sse);
        let mut out = Vec::new();
        b.feed(b"\n: hi\n\ndata: x\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert!(!b.is_json());
    }

    #[test]
    fn json_body_is_collected_across_feeds() {
        let mut b = Body::new(1024, Framing::Sse);
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

    /// Every split of `body` into two feeds gives the same JSON text.
    fn taken_at_every_split(body: &[u8]) -> Vec<Option<String>> {
        (0..=body.len())
            .map(|cut| {
                let mut b = Body::new(1024, Framing::Sse);
                let mut out = Vec::new();
                let (head, tail) = body.split_at(cut);
                b.feed(head, &mut out);
                let first = b.take_json();
                b.feed(tail, &mut out);
                first.or_else(|| b.take_json()).or_else(|| b.finish().json)
            })
            .collect()
    }

    #[test]
    fn the_body_is_the_first_document_at_every_split() {
        let body = br#" {"error":{"message":"fir}st\"]"}}{"error":{"message":"second"}} x"#;
        let first = r#"{"error":{"message":"fir}st\"]"}}"#;
        for taken in taken_at_every_split(body) {
            assert_eq!(taken.as_deref(), Some(first));
        }
    }

    #[test]
    fn an_oversized_body_is_dropped_once_at_every_split() {
        let body = format!("{{\"a\":\"{}\"}} trailing", "x".repeat(2000));
        for cut in 0..=body.len() {
            let mut b = Body::new(1024, Framing::Sse);
            let (head, tail) = body.as_bytes().split_at(cut);
            let errors = [b.feed(head, &mut Vec::new()), b.feed(tail, &mut Vec::new())];
            assert_eq!(errors.iter().flatten().count(), 1, "cut {cut}");
            assert!(b.take_json().is_none() && b.finish().json.is_none());
        }
    }

    #[test]
    fn a_body_that_is_not_an_event_stream_is_handed_over_at_finish() {
        let page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n</html>\r\n";
        for cut in 0..=page.len() {
            let mut b = Body::new(1024, Framing::Sse);
            let mut out = Vec::new();
            let (head, tail) = page.as_bytes().split_at(cut);
            b.feed(head, &mut out);
            b.feed(tail, &mut out);
            assert!(out.is_empty());
            assert_eq!(b.finish().not_sse.as_deref(), Some(page), "cut {cut}");
        }
        let mut b = Body::new(1024, Framing::Sse);
        b.feed(b"404 page not found\n", &mut Vec::new());
        assert_eq!(b.finish().not_sse.as_deref(), Some("404 page not found\n"));
        // Only the first HEAD_LIMIT bytes are kept.
        let mut b = Body::new(1 << 20, Framing::Sse);
        b.feed("x".repeat(HEAD_LIMIT * 3).as_bytes(), &mut Vec::new());
        assert_eq!(b.finish().not_sse.map(|t| t.len()), Some(HEAD_LIMIT));
    }

    #[test]
    fn event_streams_without_events_are_still_event_streams() {
        for body in [
            &b""[..],
            b"  \r\n",
            b": ping\n\n: ping\n",
            b"event: message_start\n",
            b"retry: 10\n\n",
            b"data",
            b"\xEF\xBB\xBF: hi\n",
        ] {
            let mut b = Body::new(1024, Framing::Sse);
            b.feed(body, &mut Vec::new());
            assert_eq!(b.finish().not_sse, None, "{body:?}");
        }
        // Once an event was dispatched, nothing is kept and nothing is reported.
        let mut b = Body::new(1024, Framing::Sse);
        b.feed(b"data: x\n\n<html>\n", &mut Vec::new());
        assert!(b.head.is_empty());
        assert_eq!(b.finish().not_sse, None);
    }

    #[test]
    fn unfinished_json_is_handed_over_at_finish() {
        let mut b = Body::new(1024, Framing::Sse);
        b.feed(b"{\"error\":", &mut Vec::new());
        let end = b.finish();
        assert_eq!(end.json.as_deref(), Some("{\"error\":"));
        assert!(end.cut_off);
    }

    fn array_events(body: &[u8], cuts: &[usize], limit: usize) -> (Vec<String>, usize, bool) {
        let mut b = Body::new(limit, Framing::SseOrArray);
        let mut events = Vec::new();
        let mut too_large = 0;
        let mut at = 0;
        for &cut in cuts.iter().chain([body.len()].iter()) {
            let mut out = Vec::new();
            too_large += usize::from(b.feed(&body[at..cut], &mut out).is_some());
            events.extend(
                out.iter()
                    .map(|e| String::from_utf8_lossy(&e.data).into_owned()),
            );
            at = cut;
        }
        let end = b.finish();
        assert!(end.json.is_none() && end.not_sse.is_none() && end.last_event.is_none());
        (events, too_large, end.cut_off)
    }

    #[test]
    fn an_array_body_is_read_element_by_element_at_every_split() {
        let body =
            b"[{\"a\": \"]}\\\"{\"},\r\n 7, \"x]\", {\"b\": [1, {}]}\r\n] trailing {\"c\":1}";
        let want = vec![
            r#"{"a": "]}\"{"}"#.to_string(),
            r#"{"b": [1, {}]}"#.to_string(),
        ];
        for cut in 0..=body.len() {
            assert_eq!(
                array_events(body, &[cut], 1024),
                (want.clone(), 0, false),
                "cut {cut}"
            );
        }
        let every: Vec<usize> = (1..body.len()).collect();
        assert_eq!(array_events(body, &every, 1024), (want, 0, false));
    }

    #[test]
    fn an_array_body_drops_an_element_too_large_and_reads_on() {
        let big = format!("[{{\"a\":\"{}\"}}, {{\"b\":1}}", "x".repeat(100));
        for cut in 0..=big.len() {
            let (events, too_large, cut_off) = array_events(big.as_bytes(), &[cut], 50);
            assert_eq!(events, vec![r#"{"b":1}"#.to_string()], "cut {cut}");
            assert_eq!((too_large, cut_off), (1, true), "cut {cut}");
        }
        // Without arrays enabled, an array body is one JSON body, as before.
        let mut b = Body::new(1024, Framing::Sse);
        b.feed(b"[{\"a\":1}]", &mut Vec::new());
        assert_eq!(b.take_json().as_deref(), Some("[{\"a\":1}]"));
    }
}
