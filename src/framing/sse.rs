//! WHATWG "event stream" framing: bytes in, [`RawEvent`]s out. Pure Rust, no Python.
//!
//! Strategy: every `feed` scans only the bytes it is given, with `memchr2` for the next CR/LF.
//! A line that lies wholly inside the input is handled in place, and the fields of an event
//! that completes inside the input are *borrowed* from it ([`RawEvent`] holds `Cow`s), so a
//! complete event is never copied by the framer. Only the unfinished tail of the input (the
//! current partial line, and the fields of the current unfinished event) is copied into the
//! framer, once, at the end of the feed; scanning resumes at the new bytes, never at the start
//! of the buffered tail.
//!
//! Carried across feeds: the partial line, whether the last feed ended in CR (an LF that starts
//! the next feed then belongs to that CR), how much of a leading BOM was seen, and the fields of
//! the event being built (data, type, id, retry).
//!
//! Cost: O(bytes received) whatever the split pattern; no input can make it quadratic. Memory:
//! at most `max_event_size` bytes of one unfinished event, plus the caller's output vector.

use std::borrow::Cow;
use std::mem;

use memchr::{memchr, memchr2};

/// Default limit on the size of one event (64 MiB): large enough for multi-megabyte LLM events
/// such as base64 images, small enough to stop a runaway stream from taking the process down.
pub const DEFAULT_MAX_EVENT_SIZE: usize = 64 * 1024 * 1024;

const BOM: &[u8; 3] = b"\xEF\xBB\xBF";

/// One dispatched event. Fields borrow from the input of the feed that completed the event
/// where they could, and own their bytes where the event spanned several feeds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent<'a> {
    /// The event type; `None` when the event had no (or an empty) `event:` field, which means
    /// the default type `"message"`.
    pub event: Option<Cow<'a, [u8]>>,
    /// The data lines joined with `\n`, without a trailing `\n`. Raw bytes: UTF-8 decoding
    /// (lossy) is the consumer's job, done once per event.
    pub data: Cow<'a, [u8]>,
    /// The last event ID buffer at dispatch: `None` if no `id:` field was ever taken.
    pub id: Option<Cow<'a, [u8]>>,
    /// A valid `retry:` value given in this event, if any.
    pub retry: Option<u64>,
}

impl RawEvent<'_> {
    /// The event type, `b"message"` when none was given.
    pub fn event_type(&self) -> &[u8] {
        self.event.as_deref().unwrap_or(b"message")
    }

    /// Copies the borrowed parts so the event outlives the input it came from.
    pub fn into_owned(self) -> RawEvent<'static> {
        RawEvent {
            event: self.event.map(|e| Cow::Owned(e.into_owned())),
            data: Cow::Owned(self.data.into_owned()),
            id: self.id.map(|i| Cow::Owned(i.into_owned())),
            retry: self.retry,
        }
    }
}

/// An event grew past the configured limit. The framer has dropped that event and skips the
/// rest of it (up to the blank line that would have dispatched it); framing then resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge {
    /// The configured limit, in bytes.
    pub limit: usize,
    /// How large the event had become when it crossed the limit (a lower bound of its size).
    pub size: usize,
}

/// Where a field value lives: in the current input (valid only during one `feed`), or owned.
#[derive(Debug, Default)]
enum Slot {
    #[default]
    Empty,
    Input(usize, usize),
    Owned(Vec<u8>),
}

impl Slot {
    fn view<'a>(&'a self, input: &'a [u8]) -> &'a [u8] {
        match self {
            Slot::Empty => b"",
            Slot::Input(s, e) => input.get(*s..*e).unwrap_or_default(),
            Slot::Owned(v) => v,
        }
    }

    /// Moves the value out as a `Cow` that borrows the input where it can.
    fn take<'a>(&mut self, input: &'a [u8]) -> Cow<'a, [u8]> {
        match mem::take(self) {
            Slot::Empty => Cow::Borrowed(b""),
            Slot::Input(s, e) => Cow::Borrowed(input.get(s..e).unwrap_or_default()),
            Slot::Owned(v) => Cow::Owned(v),
        }
    }

    /// Like `take`, but leaves the value in place (the id persists across events).
    fn peek<'a>(&self, input: &'a [u8]) -> Cow<'a, [u8]> {
        match self {
            Slot::Empty => Cow::Borrowed(b""),
            Slot::Input(s, e) => Cow::Borrowed(input.get(*s..*e).unwrap_or_default()),
            Slot::Owned(v) => Cow::Owned(v.clone()),
        }
    }

    /// Copies a value that points into the input, before the input goes away.
    fn detach(&mut self, input: &[u8]) {
        if let Slot::Input(s, e) = *self {
            *self = Slot::Owned(input.get(s..e).unwrap_or_default().to_vec());
        }
    }
}

/// Where the line being handled lives.
#[derive(Clone, Copy)]
enum Origin {
    /// The line is `input[offset..offset + len]`.
    Input(usize),
    /// The line was assembled in the framer's own buffer (it began in an earlier feed).
    Buffered,
}

/// The push-based framer. Feed it bytes as they arrive; it appends finished events to `out`.
#[derive(Debug)]
pub struct Framer {
    max_event_size: usize,
    /// The current unfinished line (empty while `discarding`).
    tail: Vec<u8>,
    /// The previous feed ended in CR: an LF at the start of the next feed is part of it.
    skip_lf: bool,
    /// How many bytes of a leading BOM were matched; `None` once past the stream start.
    bom_matched: Option<usize>,
    data: Slot,
    data_lines: usize,
    event: Slot,
    retry: Option<u64>,
    /// The last event ID buffer (may hold a value from an event that is not finished).
    id: Slot,
    id_set: bool,
    /// The last event ID as of the last blank line (what a reconnect should send).
    committed_id: Vec<u8>,
    committed_id_set: bool,
    /// The last valid `retry:` value of the stream (the reconnection time).
    reconnection_time: Option<u64>,
    /// Bytes of the current event's lines so far (comments count while they are read).
    event_size: usize,
    /// The current event has had a field line.
    event_has_fields: bool,
    /// Skipping the rest of an oversized event, up to its blank line.
    discarding: bool,
    /// While discarding: the current (skipped) line is not empty.
    discard_line_nonempty: bool,
    /// The last `finish` found input ending mid-event (cleared by the next `feed`).
    ended_mid_event: bool,
}

impl Default for Framer {
    fn default() -> Self {
        Framer::new(DEFAULT_MAX_EVENT_SIZE)
    }
}

impl Framer {
    /// A framer that refuses events larger than `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        Framer {
            max_event_size,
            tail: Vec::new(),
            skip_lf: false,
            bom_matched: Some(0),
            data: Slot::Empty,
            data_lines: 0,
            event: Slot::Empty,
            retry: None,
            id: Slot::Empty,
            id_set: false,
            committed_id: Vec::new(),
            committed_id_set: false,
            reconnection_time: None,
            event_size: 0,
            event_has_fields: false,
            discarding: false,
            discard_line_nonempty: false,
            ended_mid_event: false,
        }
    }

    /// The configured event size limit.
    pub fn max_event_size(&self) -> usize {
        self.max_event_size
    }

    /// The last event ID as of the last completed event block (`""` if none).
    pub fn last_event_id(&self) -> &[u8] {
        &self.committed_id
    }

    /// Whether an `id:` field has ever been committed.
    pub fn last_event_id_set(&self) -> bool {
        self.committed_id_set
    }

    /// The reconnection time from the last valid `retry:` field, if any.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// Input so far ends in the middle of an event: a partial line, or field lines not yet
    /// followed by the blank line that dispatches them. After `finish`, tells whether the input
    /// had ended mid-event, until the next `feed`.
    pub fn pending(&self) -> bool {
        self.ended_mid_event
            || !self.tail.is_empty()
            || self.event_has_fields
            || self.discarding
            || matches!(self.bom_matched, Some(n) if n > 0)
    }

    /// Between events, with nothing held: no partial line, no field of an event yet, not
    /// skipping an oversized event, not waiting for the LF of a CRLF, past the BOM. Bytes
    /// that start with a whole event can then be read without the framer (see
    /// `dialect::template::Shape::fill_raw`): the framer would dispatch the same event and be
    /// back in this state.
    pub fn idle(&self) -> bool {
        !self.pending() && !self.skip_lf && self.bom_matched.is_none()
    }

    /// Frames `input`, appending every event it completes to `out`. Returns the first event of
    /// this input that went over the size limit, if any; that event is dropped, and the events
    /// before and after it are still framed.
    pub fn feed<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) -> Option<TooLarge> {
        let mut too_large = None;
        self.ended_mid_event = false;
        let mut pos = self.skip_bom(input);
        if self.skip_lf {
            if let Some(&first) = input.get(pos) {
                self.skip_lf = false;
                if first == b'\n' {
                    pos += 1;
                }
            }
        }
        let len = input.len();
        while pos < len {
            let rest = input.get(pos..).unwrap_or_default();
            let Some(found) = memchr2(b'\n', b'\r', rest) else {
                // An unfinished line: keep it for the next feed.
                if self.discarding {
                    self.discard_line_nonempty = true;
                } else {
                    self.tail.extend_from_slice(rest);
                    let size = self.event_size + self.tail.len();
                    if size > self.max_event_size {
                        too_large = too_large.or(Some(self.start_discarding(size, true)));
                    }
                }
                break;
            };
            let end = pos + found;
            let mut next = end + 1;
            if input.get(end) == Some(&b'\r') {
                match input.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            let line = input.get(pos..end).unwrap_or_default();
            if self.discarding {
                let blank = line.is_empty() && !self.discard_line_nonempty;
                self.discard_line_nonempty = false;
                if blank {
                    self.discarding = false;
                }
            } else if self.tail.is_empty() {
                if let Some(err) = self.line(line, Origin::Input(pos), input, out) {
                    too_large = too_large.or(Some(err));
                }
            } else {
                self.tail.extend_from_slice(line);
                let tail = mem::take(&mut self.tail);
                let (err, spare) = self.buffered_line(tail, input, out);
                too_large = too_large.or(err);
                self.tail = spare; // keep the allocation for the next partial line
            }
            pos = next;
        }
        // Nothing may point into `input` once it is gone.
        self.data.detach(input);
        self.event.detach(input);
        self.id.detach(input);
        too_large
    }

    /// End of input. Per the spec nothing incomplete is dispatched; with `flush` (the dialect
    /// streams' lenient mode) a final unterminated line counts as a line and an event that was
    /// never closed by a blank line is dispatched. The framer is reset for a new stream; the
    /// committed last event ID and the reconnection time are kept for a reconnect.
    pub fn finish(&mut self, flush: bool) -> Option<RawEvent<'static>> {
        let mut out = Vec::new();
        let ended_mid_event = self.pending();
        if flush && !self.discarding {
            if let Some(n) = self.bom_matched.filter(|&n| n > 0) {
                self.tail.splice(0..0, BOM.iter().take(n).copied());
            }
            let tail = mem::take(&mut self.tail);
            if !tail.is_empty() {
                let _ = self.line(&tail, Origin::Buffered, &[], &mut out);
            }
            let _ = self.line(b"", Origin::Buffered, &[], &mut out);
        }
        let reconnection_time = self.reconnection_time;
        let committed_id = mem::take(&mut self.committed_id);
        let committed_id_set = self.committed_id_set;
        *self = Framer::new(self.max_event_size);
        self.reconnection_time = reconnection_time;
        self.id = Slot::Owned(committed_id.clone());
        self.id_set = committed_id_set;
        self.committed_id = committed_id;
        self.committed_id_set = committed_id_set;
        self.ended_mid_event = ended_mid_event;
        out.pop().map(RawEvent::into_owned)
    }

    /// Skips a leading BOM (even one split across feeds); returns where framing starts.
    fn skip_bom(&mut self, input: &[u8]) -> usize {
        let Some(matched) = self.bom_matched else {
            return 0;
        };
        let want = BOM.get(matched..).unwrap_or_default();
        let n = want.len().min(input.len());
        if input.get(..n) == want.get(..n) {
            if n == want.len() {
                self.bom_matched = None;
                return n;
            }
            self.bom_matched = Some(matched + n);
            return n;
        }
        // Not a BOM after all: the bytes held back are the start of the first line.
        self.tail
            .extend_from_slice(BOM.get(..matched).unwrap_or_default());
        self.bom_matched = None;
        0
    }

    fn start_discarding(&mut self, size: usize, mid_line: bool) -> TooLarge {
        self.tail.clear();
        self.reset_event();
        self.discarding = true;
        self.discard_line_nonempty = mid_line;
        TooLarge {
            limit: self.max_event_size,
            size,
        }
    }

    fn reset_event(&mut self) {
        self.data = Slot::Empty;
        self.data_lines = 0;
        self.event = Slot::Empty;
        self.retry = None;
        self.event_size = 0;
        self.event_has_fields = false;
    }

    /// A complete line that was assembled in `tail` (it began in an earlier feed). The first
    /// data line of an event takes the buffer itself rather than a copy, so a multi-megabyte
    /// line that arrived in many reads is not copied once more when it completes. Returns the
    /// buffer to reuse for the next partial line.
    fn buffered_line<'a>(
        &mut self,
        mut line: Vec<u8>,
        input: &'a [u8],
        out: &mut Vec<RawEvent<'a>>,
    ) -> (Option<TooLarge>, Vec<u8>) {
        let fits = self.event_size + line.len() <= self.max_event_size;
        if let (0, true, Some(value_start)) = (self.data_lines, fits, data_value_start(&line)) {
            self.event_size += line.len();
            self.event_has_fields = true;
            line.drain(..value_start);
            self.data = Slot::Owned(line);
            self.data_lines = 1;
            return (None, Vec::new());
        }
        let err = self.line(&line, Origin::Buffered, input, out);
        line.clear();
        (err, line)
    }

    /// Handles one complete line (without its terminator).
    fn line<'a>(
        &mut self,
        line: &[u8],
        origin: Origin,
        input: &'a [u8],
        out: &mut Vec<RawEvent<'a>>,
    ) -> Option<TooLarge> {
        let Some(&first) = line.first() else {
            self.dispatch(input, out);
            return None;
        };
        let size = self.event_size + line.len();
        if size > self.max_event_size {
            return Some(self.start_discarding(size, false));
        }
        if first == b':' {
            return None; // a comment (heartbeat)
        }
        self.event_size = size;
        self.event_has_fields = true;
        let (name, value_start) = match memchr(b':', line) {
            Some(colon) => {
                let after = colon + 1;
                let skip = usize::from(line.get(after) == Some(&b' '));
                (line.get(..colon).unwrap_or_default(), after + skip)
            }
            None => (line, line.len()),
        };
        let value = line.get(value_start..).unwrap_or_default();
        let slot = |value: &[u8]| match origin {
            Origin::Input(offset) => Slot::Input(offset + value_start, offset + line.len()),
            Origin::Buffered => Slot::Owned(value.to_vec()),
        };
        match name {
            b"data" => {
                if self.data_lines == 0 {
                    self.data = slot(value);
                } else {
                    let mut joined = match mem::take(&mut self.data) {
                        Slot::Owned(v) => v,
                        other => other.view(input).to_vec(),
                    };
                    joined.push(b'\n');
                    joined.extend_from_slice(value);
                    self.data = Slot::Owned(joined);
                }
                self.data_lines += 1;
            }
            b"event" => self.event = slot(value),
            b"id" if memchr(0, value).is_none() => {
                self.id = slot(value);
                self.id_set = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                self.retry = Some(ms);
                self.reconnection_time = Some(ms);
            }
            _ => {} // unknown fields are ignored
        }
        None
    }

    /// A blank line: dispatch the event being built, if it has data.
    fn dispatch<'a>(&mut self, input: &'a [u8], out: &mut Vec<RawEvent<'a>>) {
        if self.id_set {
            let id = self.id.view(input);
            if !self.committed_id_set || self.committed_id != id {
                self.committed_id.clear();
                self.committed_id.extend_from_slice(id);
                self.committed_id_set = true;
            }
        }
        if self.data_lines == 0 {
            self.reset_event();
            return;
        }
        let event = self.event.take(input);
        let data = self.data.take(input);
        let id = self.id_set.then(|| self.id.peek(input));
        out.push(RawEvent {
            event: (!event.is_empty()).then_some(event),
            data,
            id,
            retry: self.retry,
        });
        self.reset_event();
    }
}

/// Where the value of a `data` field line starts, if `line` is one.
fn data_value_start(line: &[u8]) -> Option<usize> {
    if !line.starts_with(b"data") {
        return None;
    }
    match line.get(4) {
        None => Some(4),
        Some(b':') => Some(5 + usize::from(line.get(5) == Some(&b' '))),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (type, data, id, retry) of one event.
    type Ev = (String, String, Option<String>, Option<u64>);

    /// Frames `input` in the given pieces and returns the events plus the pending flag before
    /// finish.
    fn frame(pieces: &[&[u8]]) -> (Vec<Ev>, bool) {
        let mut f = Framer::default();
        let mut all = Vec::new();
        for piece in pieces {
            let mut out = Vec::new();
            assert!(f.feed(piece, &mut out).is_none());
            all.extend(out.into_iter().map(RawEvent::into_owned));
        }
        let pending = f.pending();
        assert!(f.finish(false).is_none());
        assert_eq!(f.pending(), pending, "finish keeps the answer");
        let events = all
            .into_iter()
            .map(|e| {
                (
                    String::from_utf8_lossy(e.event_type()).into_owned(),
                    String::from_utf8_lossy(&e.data).into_owned(),
                    e.id.map(|i| String::from_utf8_lossy(&i).into_owned()),
                    e.retry,
                )
            })
            .collect();
        (events, pending)
    }

    /// Frames `input` whole, byte by byte and at every two-way split; all must agree.
    fn frame_all_ways(input: &[u8]) -> (Vec<Ev>, bool) {
        let whole = frame(&[input]);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(frame(&bytes), whole, "byte by byte");
        for cut in 0..=input.len() {
            let (a, b) = input.split_at(cut);
            assert_eq!(frame(&[a, b]), whole, "split at {cut}");
        }
        whole
    }

    fn ev(t: &str, d: &str) -> Ev {
        (t.into(), d.into(), None, None)
    }

    #[test]
    fn line_endings_lf_cr_crlf_and_mixed() {
        let (events, _) = frame_all_ways(b"data: a\n\ndata: b\r\rdata: c\r\n\r\ndata: d\r\n\n");
        assert_eq!(
            events,
            vec![
                ev("message", "a"),
                ev("message", "b"),
                ev("message", "c"),
                ev("message", "d")
            ]
        );
    }

    #[test]
    fn cr_at_end_of_feed_dispatches_at_once_and_next_lf_is_skipped() {
        let mut f = Framer::default();
        let mut out = Vec::new();
        f.feed(b"data: x\r\r", &mut out);
        assert_eq!(out.len(), 1, "dispatched without waiting for the next read");
        let mut out2 = Vec::new();
        f.feed(b"\ndata: y\n\n", &mut out2);
        assert_eq!(out2.len(), 1);
        assert_eq!(&*out2[0].data, b"y");
    }

    #[test]
    fn split_crlf_is_one_line_end() {
        // CR ends the first line; the LF that starts the next feed must not be a blank line.
        let (events, _) = frame_all_ways(b"data: a\r\ndata: b\r\n\r\n");
        assert_eq!(events, vec![ev("message", "a\nb")]);
    }

    #[test]
    fn bom_is_skipped_once_even_when_split() {
        let (events, _) = frame_all_ways(b"\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n");
        // The second BOM starts a line whose field name is "\u{feff}data": unknown, ignored.
        assert_eq!(events, vec![ev("message", "a")]);
        let (events, _) = frame_all_ways(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n");
        assert_eq!(events, vec![]);
    }

    #[test]
    fn partial_bom_is_data() {
        let (events, _) = frame_all_ways(b"\xEF\xBBdata: a\n\n");
        assert_eq!(events, vec![]); // field name "\xEF\xBBdata" is unknown
        let (events, _) = frame_all_ways(b"\xEFdata\n\ndata:\xEF\n\n");
        assert_eq!(events, vec![ev("message", "\u{FFFD}")]);
    }

    #[test]
    fn comments_dispatch_nothing() {
        let (events, pending) = frame_all_ways(b": heartbeat\n\n:\n\n: x\ndata: a\n: y\n\n");
        assert_eq!(events, vec![ev("message", "a")]);
        assert!(!pending);
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        let (events, _) = frame_all_ways(b"data\n\ndata\ndata\n\n");
        assert_eq!(events, vec![ev("message", ""), ev("message", "\n")]);
    }

    #[test]
    fn at_most_one_space_is_removed() {
        let (events, _) = frame_all_ways(b"data:no space\n\ndata:  two\n\ndata:\ttab\n\n");
        assert_eq!(
            events,
            vec![
                ev("message", "no space"),
                ev("message", " two"),
                ev("message", "\ttab")
            ]
        );
    }

    #[test]
    fn field_names_are_case_sensitive_and_unknown_ignored() {
        let (events, _) = frame_all_ways(b"Data: a\nDATA: b\nfoo: c\ndata: d\n\n");
        assert_eq!(events, vec![ev("message", "d")]);
    }

    #[test]
    fn data_lines_join_with_lf() {
        let (events, _) = frame_all_ways(b"data: a\ndata:\ndata: c\n\n");
        assert_eq!(events, vec![ev("message", "a\n\nc")]);
    }

    #[test]
    fn event_without_data_is_not_dispatched_and_type_resets() {
        let (events, _) =
            frame_all_ways(b"event: x\n\ndata: a\n\nevent: y\ndata: b\n\ndata: c\n\n");
        assert_eq!(
            events,
            vec![ev("message", "a"), ev("y", "b"), ev("message", "c")]
        );
    }

    #[test]
    fn empty_event_type_is_message() {
        let (events, _) = frame_all_ways(b"event:\ndata: a\n\n");
        assert_eq!(events, vec![ev("message", "a")]);
    }

    #[test]
    fn id_persists_resets_and_ignores_nul() {
        let (events, _) =
            frame_all_ways(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0x\ndata: c\n\nid\ndata: d\n\n");
        let ids: Vec<Option<String>> = events.into_iter().map(|e| e.2).collect();
        assert_eq!(
            ids,
            vec![
                Some("1".into()),
                Some("1".into()),
                Some("1".into()),
                Some("".into())
            ]
        );
    }

    #[test]
    fn id_of_unfinished_block_is_not_committed() {
        let mut f = Framer::default();
        let mut out = Vec::new();
        f.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n", &mut out);
        assert_eq!(f.last_event_id(), b"1");
        assert!(f.pending());
        assert!(f.finish(false).is_none());
        assert_eq!(f.last_event_id(), b"1");
        // A reconnect on the same framer carries the committed id, not the uncommitted one.
        let mut out = Vec::new();
        f.feed(b"data: c\n\n", &mut out);
        assert_eq!(out[0].id.as_deref(), Some(&b"1"[..]));
    }

    #[test]
    fn id_without_data_is_committed_on_blank_line() {
        let mut f = Framer::default();
        let mut out = Vec::new();
        f.feed(b"id: 7\n\n", &mut out);
        assert!(out.is_empty());
        assert_eq!(f.last_event_id(), b"7");
    }

    #[test]
    fn retry_only_all_ascii_digits() {
        let input = "retry: 5\ndata: a\n\nretry: +5\ndata: b\n\nretry:  5\ndata: c\n\n\
                     retry: 1_000\ndata: d\n\nretry: \u{665}\ndata: e\n\nretry:\ndata: f\n\n";
        let (events, _) = frame_all_ways(input.as_bytes());
        let retries: Vec<Option<u64>> = events.into_iter().map(|e| e.3).collect();
        assert_eq!(retries, vec![Some(5), None, None, None, None, None]);
    }

    #[test]
    fn utf8_split_anywhere_and_invalid_is_kept_as_bytes() {
        let (events, _) = frame_all_ways("data: h\u{e9}llo \u{1F600}\n\n".as_bytes());
        assert_eq!(events, vec![ev("message", "h\u{e9}llo \u{1F600}")]);
        let (events, _) = frame_all_ways(b"data: \xFF\xC3\n\n");
        assert_eq!(events, vec![ev("message", "\u{FFFD}\u{FFFD}")]);
    }

    #[test]
    fn pending_and_finish_dispatch_nothing_incomplete() {
        let (events, pending) = frame_all_ways(b"data: a\n\ndata: b\n");
        assert_eq!(events, vec![ev("message", "a")]);
        assert!(pending);
        let (_, pending) = frame_all_ways(b"data: a\n\ndata: b");
        assert!(pending);
        let (_, pending) = frame_all_ways(b"data: a\n\n");
        assert!(!pending);
    }

    #[test]
    fn lenient_finish_flushes_the_unclosed_event() {
        let mut f = Framer::default();
        let mut out = Vec::new();
        f.feed(b"data: a\ndata: b", &mut out);
        assert!(out.is_empty());
        let last = f.finish(true).map(|e| e.data.into_owned());
        assert_eq!(last.as_deref(), Some(&b"a\nb"[..]));
        assert!(f.pending(), "it did end mid-event");
        f.feed(b"", &mut Vec::new());
        assert!(!f.pending());
    }

    #[test]
    fn borrows_complete_events_from_the_input() {
        let mut f = Framer::default();
        let mut out = Vec::new();
        f.feed(b"event: e\ndata: x\n\ndata: y", &mut out);
        assert!(matches!(out[0].data, Cow::Borrowed(_)));
        assert!(matches!(out[0].event, Some(Cow::Borrowed(_))));
        let mut out = Vec::new();
        f.feed(b"\n\n", &mut out);
        assert!(matches!(out[0].data, Cow::Owned(_)));
    }

    #[test]
    fn too_large_event_is_dropped_and_framing_resumes() {
        for pieces in [
            vec![&b"data: ok\n\ndata: 0123456789\ndata: more\n\ndata: after\n\n"[..]],
            b"data: ok\n\ndata: 0123456789\ndata: more\n\ndata: after\n\n"
                .chunks(1)
                .collect(),
        ] {
            let mut f = Framer::new(12);
            let mut events = Vec::new();
            let mut errors = Vec::new();
            for p in pieces {
                let mut out = Vec::new();
                if let Some(e) = f.feed(p, &mut out) {
                    errors.push(e);
                }
                events.extend(out.into_iter().map(|e| e.data.into_owned()));
            }
            assert_eq!(events, vec![b"ok".to_vec(), b"after".to_vec()]);
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].limit, 12);
            assert!(errors[0].size > 12);
        }
    }

    #[test]
    fn limit_counts_the_whole_event_not_one_line() {
        let mut f = Framer::new(10);
        let mut out = Vec::new();
        assert!(f.feed(b"data: 1\ndata: 2\n", &mut out).is_some());
    }

    #[test]
    fn huge_line_in_small_reads_is_linear() {
        // 4 MiB in 1 KiB reads: the tail is appended to, never rescanned.
        let mut input = b"data: ".to_vec();
        input.extend(std::iter::repeat_n(b'x', 4 << 20));
        input.extend_from_slice(b"\n\n");
        let mut f = Framer::default();
        let mut n = 0;
        for piece in input.chunks(1024) {
            let mut out = Vec::new();
            f.feed(piece, &mut out);
            n += out.iter().map(|e| e.data.len()).sum::<usize>();
        }
        assert_eq!(n, 4 << 20);
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        fn stream() -> impl Strategy<Value = Vec<u8>> {
            let line = prop_oneof![
                Just(b"data: hello".to_vec()),
                Just(b"data:".to_vec()),
                Just("data: h\u{e9}\u{1F600}".as_bytes().to_vec()),
                Just(b"event: e".to_vec()),
                Just(b"id: 42".to_vec()),
                Just(b"retry: 100".to_vec()),
                Just(b": ping".to_vec()),
                Just(b"".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..12),
            ];
            let end = prop_oneof![Just(&b"\n"[..]), Just(&b"\r"[..]), Just(&b"\r\n"[..])];
            proptest::collection::vec((line, end), 0..24).prop_map(|lines| {
                lines
                    .into_iter()
                    .flat_map(|(mut l, e)| {
                        l.extend_from_slice(e);
                        l
                    })
                    .collect()
            })
        }

        proptest! {
            #[test]
            fn any_split_gives_the_same_events(
                input in stream(),
                cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..6),
            ) {
                let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
                points.sort_unstable();
                let mut pieces = Vec::new();
                let mut prev = 0;
                for p in points {
                    pieces.push(&input[prev..p]);
                    prev = p;
                }
                pieces.push(&input[prev..]);
                prop_assert_eq!(frame(&pieces), frame(&[&input]));
                let bytes: Vec<&[u8]> = input.chunks(1).collect();
                prop_assert_eq!(frame(&bytes), frame(&[&input]));
            }
        }
    }
}
