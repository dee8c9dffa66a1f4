//! Newline-delimited JSON (Ollama's native API): one JSON document a line, each handed over as
//! an unnamed event whose data is the line. Lines end with LF (a CR before it is dropped, as
//! some servers and proxies write CRLF); a line of only white space is skipped. A line is not
//! checked here: a line that is not JSON is the dialect's `malformed_json` report, and a line
//! `{"error": ...}` is its error record.
//!
//! Carried across feeds: the unfinished line (at most `max_event_size` bytes: a longer one is
//! dropped up to its end, [`TooLarge`] once) and whether a line is being dropped. Cost: O(bytes),
//! the line ends found with `memchr`; a line split across feeds is copied once.

use std::borrow::Cow;
use std::mem;

use memchr::memchr;

use super::sse::{RawEvent, TooLarge};

/// The line framer of one body.
#[derive(Debug)]
pub struct Lines {
    max_event_size: usize,
    /// The unfinished line so far (the part before this feed).
    tail: Vec<u8>,
    /// Whether the current line is longer than the limit and is being skipped to its end.
    dropping: bool,
}

impl Lines {
    /// A framer of lines of at most `max_event_size` bytes (a longer line is dropped).
    pub fn new(max_event_size: usize) -> Self {
        Lines {
            max_event_size,
            tail: Vec::new(),
            dropping: false,
        }
    }

    /// Whether the framer is between lines: nothing of a line kept, none being dropped. The
    /// bytes of a line that starts the next input can then be read without it (see
    /// `dialect::template::Shape::as_line`): it would hand over that line and be back in this
    /// state.
    pub fn idle(&self) -> bool {
        self.tail.is_empty() && !self.dropping
    }

    /// Whether a line was begun and not ended.
    pub fn pending(&self) -> bool {
        self.dropping || self.tail.iter().any(|b| !b.is_ascii_whitespace())
    }

    /// Frames `input`: every line it ends is pushed to `out` (borrowed when it lies whole in
    /// `input`).
    pub fn feed<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        let mut too_large = None;
        let mut rest = input;
        while let Some(at) = memchr(b'\n', rest) {
            let (line, after) = rest.split_at(at);
            rest = after.get(1..).unwrap_or_default();
            if mem::take(&mut self.dropping) {
                self.tail.clear();
                continue;
            }
            let size = self.tail.len() + line.len();
            if size > self.max_event_size {
                too_large.get_or_insert(TooLarge {
                    limit: self.max_event_size,
                    size,
                });
                self.tail = Vec::new();
                continue;
            }
            let data = if self.tail.is_empty() {
                Cow::Borrowed(line)
            } else {
                let mut whole = mem::take(&mut self.tail);
                whole.extend_from_slice(line);
                Cow::Owned(whole)
            };
            push_line(data, out);
        }
        if self.dropping || rest.is_empty() {
            return too_large;
        }
        let size = self.tail.len() + rest.len();
        if size > self.max_event_size {
            too_large.get_or_insert(TooLarge {
                limit: self.max_event_size,
                size,
            });
            self.tail = Vec::new();
            self.dropping = true;
        } else {
            self.tail.extend_from_slice(rest);
        }
        too_large
    }

    /// The end of the body: its last line when it did not end with a newline (Ollama Cloud's
    /// `application/json` answers may not). The framer is ready for a new body afterwards.
    pub fn finish(&mut self) -> Option<RawEvent<'static>> {
        self.dropping = false;
        let mut out = Vec::new();
        push_line(Cow::Owned(mem::take(&mut self.tail)), &mut out);
        out.pop().map(|ev| RawEvent {
            data: Cow::Owned(ev.data.into_owned()),
            ..ev
        })
    }
}

/// Hands one line over as an unnamed event, without its CR and unless it is blank.
fn push_line<'a>(line: Cow<'a, [u8]>, out: &mut Vec<RawEvent<'a>>) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    let data = match line {
        Cow::Borrowed(b) => Cow::Borrowed(b.strip_suffix(b"\r").unwrap_or(b)),
        Cow::Owned(mut v) => {
            if v.last() == Some(&b'\r') {
                v.pop();
            }
            Cow::Owned(v)
        }
    };
    out.push(RawEvent {
        event: None,
        data,
        id: None,
        retry: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]], limit: usize) -> (Vec<String>, usize) {
        let mut f = Lines::new(limit);
        let mut got = Vec::new();
        let mut refused = 0;
        for chunk in chunks {
            let mut out = Vec::new();
            refused += usize::from(f.feed(chunk, &mut out).is_some());
            got.extend(
                out.iter()
                    .map(|e| String::from_utf8_lossy(&e.data).into_owned()),
            );
        }
        got.extend(
            f.finish()
                .map(|e| String::from_utf8_lossy(&e.data).into_owned()),
        );
        (got, refused)
    }

    #[test]
    fn lines_are_the_same_however_the_body_is_cut() {
        let body = b"{\"a\":1}\n\r\n  \n{\"b\":\"x\\ny\"}\r\n{\"c\":3}";
        let whole = lines(&[body], 1024).0;
        assert_eq!(whole, ["{\"a\":1}", "{\"b\":\"x\\ny\"}", "{\"c\":3}"]);
        for cut in 0..=body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(lines(&[a, b], 1024).0, whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(lines(&bytes, 1024).0, whole);
    }

    #[test]
    fn a_line_over_the_limit_is_dropped_and_the_next_is_read() {
        let long = format!("{{\"a\":\"{}\"}}", "x".repeat(50));
        let body = format!("{long}\n{{\"b\":1}}\n");
        for step in [1, 7, body.len()] {
            let chunks: Vec<&[u8]> = body.as_bytes().chunks(step).collect();
            let (got, refused) = lines(&chunks, 20);
            assert_eq!(got, ["{\"b\":1}"], "step {step}");
            assert_eq!(refused, 1, "step {step}");
        }
    }

    #[test]
    fn the_tail_never_holds_more_than_the_limit() {
        let mut f = Lines::new(16);
        let mut out = Vec::new();
        for _ in 0..1000 {
            f.feed(b"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", &mut out);
            assert!(f.tail.len() <= 16);
        }
        assert!(out.is_empty());
        assert!(f.pending());
        assert!(f.finish().is_none());
    }
}
