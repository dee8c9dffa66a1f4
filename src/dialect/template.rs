//! Frame templates: the byte logic of the fast path for runs of near-identical frames.
//!
//! LLM streams send long runs of frames that are byte-identical but for one string, the text
//! delta: `{"id":"chatcmpl-1",...,"delta":{"content":"` + text + `"},...}`. After a full
//! decode, a dialect records where that string sat (it can when the decoded string was borrowed
//! from the frame, i.e. had no escapes): the bytes before it and after it. A later frame whose
//! bytes are that prefix, a valid JSON string literal, and that suffix decodes to the same
//! document with that string replaced — JSON is tokenised left to right, so the tokens before
//! the literal are the same, the literal is one token (it cannot swallow the suffix's quote:
//! an unescaped quote inside makes the literal fail to parse on its own), and the tokens after
//! it are the same. Measured on chat streams: the full decode was ~60% of `feed`; a template
//! hit costs two `memcmp`s and a scan of the new string.
//! Carries nothing across frames itself; the dialect keeps the last template.

use std::borrow::Cow;

/// The JSON number rule, `json::read`'s (the chat reader and the tests name it here).
pub use crate::json::read::num_len;
use crate::json::read::{scan_string, scan_string_in, skip_string};

/// What fills one hole of a shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    /// The string the item holds (the text delta).
    Text,
    /// A string whose value no item holds (OpenAI's random `obfuscation` padding).
    Padding,
    /// A non-negative integer (a sequence number).
    Number,
    /// A string of a key the decoder does not know (a vendor extra), returned as its raw
    /// contents (escapes kept) in slot `n` of the caller's raw slots ([`Shape::fill_all`]).
    RawStr(u8),
    /// A number of a key the decoder does not know, returned as its token in slot `n`.
    RawNum(u8),
    /// Any JSON value, kept whole (a Messages content block or citation, whose keys vary by
    /// type): checked by the strict cursor (`crate::json::cursor`, which says yes only to what
    /// serde_json accepts, lone surrogate escapes not among them) and returned as the fill's
    /// span. Only the last hole of a shape (see [`Shape::with_value`]).
    Value,
}

/// How many raw holes a shape may have; a frame's further vendor values stay fixed parts.
pub const MAX_RAW: usize = 8;

/// A vendor value of a frame a shape leaves open: a slice of the frame's data (a string's
/// contents between its quotes, or a number token).
#[derive(Debug, Clone, Copy)]
pub enum RawHole<'a> {
    /// A string's contents, between its quotes (escapes kept).
    Str(&'a str),
    /// A number token.
    Num(&'a str),
}

impl<'a> RawHole<'a> {
    /// The hole a value of a key the decoder does not know can be: a string or a number;
    /// `None` for the other JSON types (they stay fixed parts of a shape).
    pub fn of(value: &crate::json::read::Raw<'a>) -> Option<Self> {
        let text = value.get();
        match text.as_bytes() {
            [b'"', .., b'"'] if text.len() >= 2 => text.get(1..text.len() - 1).map(RawHole::Str),
            _ if num_len(text.as_bytes()) == Some(text.len()) => Some(RawHole::Num(text)),
            _ => None,
        }
    }

    /// The slice of the frame it is.
    pub fn text(&self) -> &'a str {
        match self {
            RawHole::Str(s) | RawHole::Num(s) => s,
        }
    }

    /// The raw holes of objects of keys the decoder does not know (in order, at most
    /// [`MAX_RAW`]; the values past that stay fixed parts).
    pub fn all_of<'e>(
        objects: impl IntoIterator<Item = &'e crate::json::read::Extra<'a>>,
    ) -> Vec<Self>
    where
        'a: 'e,
    {
        objects
            .into_iter()
            .flat_map(|extra| extra.0.iter())
            .filter_map(|(_, value)| RawHole::of(value))
            .take(MAX_RAW)
            .collect()
    }
}

/// A frame's shape: its event type, and its bytes cut into fixed parts around the holes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    event: Option<Box<[u8]>>,
    /// `parts.len() == holes.len() + 1`: part, hole, part, ..., hole, part.
    parts: Vec<Box<[u8]>>,
    holes: Vec<Hole>,
    /// Neither the event type nor the data has a line break (a frame of one data line: the
    /// only kind [`Shape::fill_raw`] reads).
    one_line: bool,
    /// The wire bytes before the data of a frame of this shape, as [`Shape::fill_raw`] reads
    /// them: `event: <type>\n` (when the shape has a type) and `data: `. One comparison
    /// instead of four. Empty for a line of JSON ([`Shape::as_line`]), which has none.
    head: Box<[u8]>,
    /// A raw value of the frame that spans holes (Gemini's `usageMetadata`, whose counts are
    /// number holes): where it starts and ends, each as (part, offset in the part).
    span: Option<((usize, usize), (usize, usize))>,
    /// The data ends with the `}` that closes it, and any run of spaces and tabs may stand
    /// before that brace (the last part is kept without one). Anthropic pads its frames so,
    /// a run of another length on each frame (against token-length side channels); the run
    /// lies outside every string (only the brace follows it), so it changes no value.
    pad_end: bool,
}

/// A frame that has a shape: the text hole's string, the first number hole's value, and the
/// span's text (see [`Shape::with_span`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Filled<'d> {
    /// The text hole's string, its escapes decoded.
    pub text: Cow<'d, str>,
    /// The first number hole's value, when the shape has a number hole.
    pub number: Option<i64>,
    /// The span's text in this frame, when the shape has a span.
    pub span: Option<&'d str>,
    /// The frame's data (what the shape covered).
    pub data: &'d [u8],
}

/// Bytes as pieces written one after the other, and what they become (see
/// [`Shape::respelled`]).
pub type Pieces<'a> = (&'a [&'a [u8]], &'a [&'a [u8]]);

/// Whether `bytes` are exactly `pieces`, one after the other.
fn pieces_at(mut bytes: &[u8], pieces: &[&[u8]]) -> bool {
    for piece in pieces {
        match bytes.strip_prefix(*piece) {
            Some(rest) => bytes = rest,
            None => return false,
        }
    }
    bytes.is_empty()
}

/// Where `inner` (a slice of `data`) lies in it.
pub fn span_of(data: &str, inner: &str) -> Option<(usize, usize)> {
    let start = (inner.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    (end <= data.len()).then_some((start, end))
}

/// Where `inner` (a slice of `data`) lies in it, if it lies between two quotes.
fn quoted_span(data: &str, inner: &str) -> Option<(usize, usize)> {
    let bytes = data.as_bytes();
    let start = (inner.as_ptr() as usize).checked_sub(bytes.as_ptr() as usize)?;
    let end = start.checked_add(inner.len())?;
    let quoted = bytes.get(start.checked_sub(1)?) == Some(&b'"') && bytes.get(end) == Some(&b'"');
    (quoted && end <= bytes.len()).then_some((start, end))
}

impl Shape {
    /// The shape of the frame `data` (of event type `event`) around `text`, the string the
    /// frame's item holds, and `padding`, strings no item holds: all of them strings that a
    /// decode of `data` borrowed from it. `None` if one does not lie inside `data` between
    /// quotes, or two overlap.
    pub fn new(event: Option<&[u8]>, data: &str, text: &str, padding: &[&str]) -> Option<Self> {
        Self::with_raws(event, data, text, padding, &[])
    }

    /// [`new`](Self::new), with raw holes too: `raws[n]` is slot `n` of a fill's
    /// raw slots ([`Shape::fill_all`]; at most [`MAX_RAW`]). A string must lie between quotes; a number
    /// must be a whole JSON number token.
    pub fn with_raws(
        event: Option<&[u8]>,
        data: &str,
        text: &str,
        padding: &[&str],
        raws: &[RawHole<'_>],
    ) -> Option<Self> {
        if raws.len() > MAX_RAW {
            return None;
        }
        // Room for every hole, and one number hole more (`with_number`): a shape is made on
        // the first frame of each kind of a stream, and growing these was a fifth of it.
        let mut spans = Vec::with_capacity(1 + padding.len() + raws.len());
        spans.push((quoted_span(data, text)?, Hole::Text));
        for pad in padding {
            spans.push((quoted_span(data, pad)?, Hole::Padding));
        }
        for (n, raw) in raws.iter().enumerate() {
            let slot = u8::try_from(n).ok()?;
            spans.push(match raw {
                RawHole::Str(inner) => (quoted_span(data, inner)?, Hole::RawStr(slot)),
                RawHole::Num(token) => {
                    let span = span_of(data, token)?;
                    if num_len(token.as_bytes()) != Some(token.len()) {
                        return None;
                    }
                    (span, Hole::RawNum(slot))
                }
            });
        }
        spans.sort_unstable_by_key(|((start, _), _)| *start);
        if spans
            .windows(2)
            .any(|w| matches!(w, [((_, end), _), ((start, _), _)] if start < end))
        {
            return None; // overlapping holes
        }
        let bytes = data.as_bytes();
        let mut parts = Vec::with_capacity(spans.len() + 2);
        let mut at = 0;
        for ((start, end), _) in &spans {
            parts.push(bytes.get(at..*start)?.into());
            at = *end;
        }
        let (last, pad_end) = unpadded(bytes.get(at..)?);
        parts.push(last.into());
        let breaks = |b: &[u8]| b.contains(&b'\n') || b.contains(&b'\r');
        let mut head = Vec::with_capacity(event.map_or(0, |e| e.len() + 8) + 6);
        if let Some(event) = event {
            head.extend_from_slice(b"event: ");
            head.extend_from_slice(event);
            head.push(b'\n');
        }
        head.extend_from_slice(b"data: ");
        Some(Shape {
            one_line: !breaks(bytes) && !event.is_some_and(breaks),
            head: head.into(),
            event: event.map(Box::from),
            parts,
            holes: {
                let mut holes = Vec::with_capacity(spans.len() + 1);
                holes.extend(spans.into_iter().map(|(_, hole)| hole));
                holes
            },
            span: None,
            pad_end,
        })
    }

    /// This shape as a line of newline-delimited JSON (Ollama's) rather than an SSE frame:
    /// [`fill_raw_all`](Self::fill_raw_all) reads a line's bytes from their first (no
    /// `data: `) to a line end, LF or CRLF, as `crate::framing::ndjson::Lines` cuts a line
    /// (one CR dropped before the LF). Only for a shape without an event type.
    pub fn as_line(mut self) -> Option<Self> {
        if self.event.is_some() {
            return None;
        }
        self.head = Box::default();
        Some(self)
    }

    /// Records `inner`, a raw value of the frame `data` this shape was made from (a slice of
    /// it), as the span a fill returns: on a later frame, the same value with other numbers in
    /// its number holes. It must start and end in fixed parts (an object or array value does:
    /// its brackets are fixed). `None` otherwise.
    pub fn with_span(mut self, data: &str, inner: &str) -> Option<Self> {
        let start = (inner.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
        let end = start.checked_add(inner.len())?;
        if end > data.len() || inner.is_empty() {
            return None;
        }
        let mut part_starts = Vec::with_capacity(self.parts.len());
        let (total, ..) = self.walk(data.as_bytes(), &mut [""; MAX_RAW], None, |_, at| {
            part_starts.push(at)
        })?;
        if total != data.len() {
            return None;
        }
        let locate = |pos: usize, closing: bool| {
            self.parts
                .iter()
                .zip(&part_starts)
                .enumerate()
                .find_map(|(k, (part, &at))| {
                    let inside = if closing {
                        pos > at && pos <= at + part.len()
                    } else {
                        pos >= at && pos < at + part.len()
                    };
                    inside.then(|| (k, pos - at))
                })
        };
        let (from, to) = (locate(start, false)?, locate(end, true)?);
        if self.pad_end
            && to.0 + 1 == self.parts.len()
            && Some(to.1) == self.parts.last().map(|p| p.len())
        {
            return None; // the span would take in the brace after the padding
        }
        self.span = Some((from, to));
        Some(self)
    }

    /// Makes `inner`, a value of the frame `data` this shape was made from (a slice of it,
    /// in the last fixed part), a value hole ([`Hole::Value`]): on a later frame, any JSON
    /// value there, returned as the fill's span. `None` unless it lies in the last part, the
    /// shape has no span, and the frame still has this shape.
    pub fn with_value(mut self, data: &str, inner: &str) -> Option<Self> {
        let (start, end) = span_of(data, inner)?;
        if self.span.is_some() || inner.is_empty() {
            return None;
        }
        let mut last_at = None;
        let count = self.parts.len();
        let (total, ..) = self.walk(data.as_bytes(), &mut [""; MAX_RAW], None, |k, at| {
            if k + 1 == count {
                last_at = Some(at);
            }
        })?;
        let last_at = last_at?;
        if total != data.len() || start < last_at {
            return None;
        }
        let last = self.parts.pop()?;
        let (a, b) = (start - last_at, end - last_at);
        if b > last.len() || (self.pad_end && b == last.len()) {
            return None;
        }
        self.parts.push(last.get(..a)?.into());
        self.parts.push(last.get(b..)?.into());
        self.holes.push(Hole::Value);
        Some(self)
    }

    /// This shape with its raw holes filled by `raws` (by slot, as a fill returned them, so
    /// each a string's contents or a number token): fixed parts from now on. A frame of a
    /// shape known ahead makes, this way, the template of the frames of its item that follow
    /// (a fixed part costs a comparison; a raw hole, a scan). The span is dropped.
    pub fn fixed(&self, raws: &[&str; MAX_RAW]) -> Self {
        let mut parts: Vec<Box<[u8]>> = Vec::with_capacity(self.parts.len());
        let mut holes = Vec::with_capacity(self.holes.len());
        let mut open: Vec<u8> = self.parts.first().map(|p| p.to_vec()).unwrap_or_default();
        for (hole, next) in self.holes.iter().zip(self.parts.iter().skip(1)) {
            match hole {
                Hole::RawStr(slot) | Hole::RawNum(slot) => {
                    let value = raws.get(usize::from(*slot)).copied().unwrap_or_default();
                    open.extend_from_slice(value.as_bytes());
                }
                _ => {
                    parts.push(std::mem::take(&mut open).into());
                    holes.push(*hole);
                }
            }
            open.extend_from_slice(next);
        }
        parts.push(open.into());
        Shape {
            event: self.event.clone(),
            parts,
            holes,
            one_line: self.one_line && !raws.iter().any(|r| r.contains(['\n', '\r'])),
            head: self.head.clone(),
            span: None,
            pad_end: self.pad_end,
        }
    }

    /// This shape with the bytes around its text hole spelled otherwise: the fixed part
    /// before the hole must end with the pieces `before.0` (one after the other) and the part
    /// after it start with `after.0`; they become `before.1` and `after.1`. A frame of the new
    /// shape is one whose bytes around its text differ that way: the caller states what that
    /// changes in the document (a chat stream's first text chunk without its `"role"`: the
    /// chunk that follows it). `None` when the parts do not read so, or the shape has a span
    /// (its place would move).
    pub fn respelled(&self, before: Pieces<'_>, after: Pieces<'_>) -> Option<Self> {
        let k = self.holes.iter().position(|h| *h == Hole::Text)?;
        let (head, tail) = (self.parts.get(k)?, self.parts.get(k + 1)?);
        let len = |pieces: &[&[u8]]| pieces.iter().map(|p| p.len()).sum::<usize>();
        let cut = head.len().checked_sub(len(before.0))?;
        let old_after = len(after.0);
        if self.span.is_some()
            || !pieces_at(head.get(cut..)?, before.0)
            || !pieces_at(tail.get(..old_after)?, after.0)
            || [before.1, after.1].iter().any(|pieces| {
                pieces
                    .iter()
                    .any(|p| memchr::memchr2(b'\n', b'\r', p).is_some())
            })
        {
            return None;
        }
        let mut new_head = Vec::with_capacity(cut + len(before.1));
        new_head.extend_from_slice(head.get(..cut)?);
        before.1.iter().for_each(|p| new_head.extend_from_slice(p));
        let mut new_tail = Vec::with_capacity(tail.len() - old_after + len(after.1));
        after.1.iter().for_each(|p| new_tail.extend_from_slice(p));
        new_tail.extend_from_slice(tail.get(old_after..)?);
        let mut parts = Vec::with_capacity(self.parts.len());
        for (i, part) in self.parts.iter().enumerate() {
            parts.push(match i {
                _ if i == k => std::mem::take(&mut new_head).into(),
                _ if i == k + 1 => std::mem::take(&mut new_tail).into(),
                _ => part.clone(),
            });
        }
        Some(Shape {
            event: self.event.clone(),
            parts,
            holes: self.holes.clone(),
            one_line: self.one_line,
            head: self.head.clone(),
            span: None,
            pad_end: self.pad_end,
        })
    }

    /// [`with_number`](Self::with_number) when the hole can be placed; else the shape as it
    /// was (the value then stays a fixed part).
    pub fn or_number(self, key: &str, value: i64) -> Self {
        match self.clone().with_number(key, value) {
            Some(shape) => shape,
            None => self,
        }
    }

    /// A shape no frame has (no parts: every fill fails), where a shape is not made yet.
    pub fn never() -> Self {
        Shape {
            event: None,
            parts: Vec::new(),
            holes: Vec::new(),
            one_line: false,
            head: Box::default(),
            span: None,
            pad_end: false,
        }
    }

    /// Adds a number hole: the value `value` of the key `key`. Only for a JSON object whose
    /// key token `"key":` can stand once and only as the object's own key (a flat object: no
    /// nested object holds keys). `None` (no template) unless `"key":<value>` appears exactly
    /// once in the fixed parts, as a whole number token.
    pub fn with_number(self, key: &str, value: i64) -> Option<Self> {
        self.with_numbers(&[(key, value)])
    }

    /// [`with_number`](Self::with_number) for each of `numbers` at once: the parts are read
    /// once for all the keys (a Gemini chunk's usage has several counts; a read per key was a
    /// third of a Gemini stream's first frame). `None` unless every one can be placed.
    pub fn with_numbers(mut self, numbers: &[(&str, i64)]) -> Option<Self> {
        if numbers.iter().any(|&(_, value)| value < 0) {
            return None;
        }
        // `"key":`, found from each quote (a shape's parts are short and a searcher costs
        // more to build than these few comparisons). The bytes after the key's place are
        // checked first: most quotes fail there without a call to compare the key.
        // Byte by byte: a two-byte slice compared as a slice was a call to `memcmp` for
        // every quote and key (most of making a Gemini chunk's template).
        let is_key_at = |part: &[u8], at: usize, key: &str| {
            let end = at + 1 + key.len();
            part.get(end) == Some(&b'"')
                && part.get(end + 1) == Some(&b':')
                && part.get(at + 1..end) == Some(key.as_bytes())
        };
        let mut found: Vec<Option<(usize, usize)>> = vec![None; numbers.len()];
        for (i, part) in self.parts.iter().enumerate() {
            for at in memchr::memchr_iter(b'"', part) {
                for (slot, &(key, _)) in found.iter_mut().zip(numbers) {
                    if is_key_at(part, at, key) {
                        if slot.is_some() {
                            return None; // ambiguous
                        }
                        *slot = Some((i, at));
                    }
                }
            }
        }
        // Each value: its part and where its digits are.
        let mut cuts = Vec::with_capacity(numbers.len());
        for (place, &(key, value)) in found.into_iter().zip(numbers) {
            let (i, at) = place?;
            let part = self.parts.get(i)?;
            let pattern_len = key.len() + 3;
            // The value after the colon and any spaces (Google's JSON puts one there).
            let spaces = part
                .get(at + pattern_len..)?
                .iter()
                .take_while(|&&b| b == b' ')
                .count();
            let digits_start = at + pattern_len + spaces;
            let digits_len = part
                .get(digits_start..)?
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let digits_end = digits_start + digits_len;
            let token = std::str::from_utf8(part.get(digits_start..digits_end)?).ok()?;
            // The whole token, written as `value` is (no leading zero, no other value).
            if token.parse::<i64>().ok() != Some(value)
                || (token.len() > 1 && token.starts_with('0'))
            {
                return None;
            }
            cuts.push((i, digits_start, digits_end));
        }
        cuts.sort_unstable();
        if cuts
            .windows(2)
            .any(|w| matches!(w, [(i, _, end), (j, start, _)] if i == j && start < end))
        {
            return None; // one value named twice
        }
        // The parts again, each cut at its values, a number hole in each cut.
        let mut parts = Vec::with_capacity(self.parts.len() + cuts.len());
        let mut holes = Vec::with_capacity(self.holes.len() + cuts.len() + 1);
        let mut cuts = cuts.into_iter().peekable();
        for (i, part) in self.parts.iter().enumerate() {
            let mut from = 0;
            while let Some((_, start, end)) = cuts.next_if(|&(at, _, _)| at == i) {
                parts.push(part.get(from..start)?.into());
                holes.push(Hole::Number);
                from = end;
            }
            parts.push(part.get(from..)?.into());
            if let Some(hole) = self.holes.get(i) {
                holes.push(*hole);
            }
        }
        self.parts = parts;
        self.holes = holes;
        self.span = None; // made again by the caller after its holes (`with_span`)
        Some(self)
    }

    /// The text hole's string (and the number hole's value, if the shape has one), when the
    /// frame `data` (of event type `event`) has this shape with other values in the holes.
    pub fn fill<'d>(
        &self,
        event: Option<&[u8]>,
        data: &'d str,
    ) -> Option<(Cow<'d, str>, Option<i64>)> {
        self.fill_all(event, data, &mut [""; MAX_RAW], None)
            .map(|f| (f.text, f.number))
    }

    /// [`fill`](Self::fill), with the span; the raw holes' values go to `raws`, by slot (see
    /// [`Hole::RawStr`]). A text with escapes is decoded into `buf` when one is given (its
    /// room kept from frame to frame), else into a new string.
    pub fn fill_all<'d>(
        &self,
        event: Option<&[u8]>,
        data: &'d str,
        raws: &mut [&'d str; MAX_RAW],
        buf: Option<&'d mut Vec<u8>>,
    ) -> Option<Filled<'d>> {
        if event != self.event.as_deref() {
            return None;
        }
        match self.filled(data.as_bytes(), raws, buf)? {
            (end, filled) if end == data.len() => Some(filled),
            _ => None,
        }
    }

    /// Walks the start of `data` and reads the span: where the shape ends, and what filled it.
    fn filled<'d>(
        &self,
        data: &'d [u8],
        raws: &mut [&'d str; MAX_RAW],
        buf: Option<&'d mut Vec<u8>>,
    ) -> Option<(usize, Filled<'d>)> {
        let mut bounds = (None, None);
        let ((from_part, from), (to_part, to)) = self.span.unwrap_or_default();
        let (end, mut filled) = self.walk(data, raws, buf, |k, at| {
            if k == from_part {
                bounds.0 = Some(at + from);
            }
            if k == to_part {
                bounds.1 = Some(at + to);
            }
        })?;
        match (self.span, bounds) {
            // The value hole's, if the shape has one.
            (None, _) => {}
            // Fixed parts (decoded text) and checked holes only: valid UTF-8; checked anyway.
            (Some(_), (Some(a), Some(b))) => {
                filled.span = Some(crate::text::utf8(data.get(a..b)?)?);
            }
            _ => return None,
        }
        Some((end, filled))
    }

    /// [`fill`](Self::fill) for a whole frame still in the wire's bytes, read without the
    /// framer: `bytes` starts with `event: <type>\n` (when the shape has an event type), then
    /// `data: ` + the data + `\n\n`. Any other spelling (CR line ends, no space after the
    /// colon, an `id:` line, a comment, the data on two lines) is not recognised and is left
    /// to the framer, which reads the same frame the same way. Returns the frame's length too.
    /// The framer must be between events (`Framer::idle`): it would then dispatch exactly this
    /// frame, with `data` valid UTF-8 (every byte of it is a fixed part taken from decoded
    /// text or a hole checked here; a padding's bytes are not checked: the framer's U+FFFD in
    /// a value nobody reads changes nothing, and [`Filled::data`] is checked where it is read)
    /// and no lone surrogate escape (a hole with one does not decode here), so nothing the
    /// framer and the text repair would do changes it.
    pub fn fill_raw<'d>(&self, bytes: &'d [u8]) -> Option<(usize, Cow<'d, str>, Option<i64>)> {
        self.fill_raw_all(bytes, &mut [""; MAX_RAW], None)
            .map(|(len, f)| (len, f.text, f.number))
    }

    /// [`fill_raw`](Self::fill_raw), with the span and the raw holes' values (as
    /// [`fill_all`](Self::fill_all)). The data line and the blank line after it may end in LF
    /// or in CRLF (Gemini's), both the same way; a line shape's ([`Shape::as_line`]) line
    /// ends in LF or CRLF.
    pub fn fill_raw_all<'d>(
        &self,
        bytes: &'d [u8],
        raws: &mut [&'d str; MAX_RAW],
        buf: Option<&'d mut Vec<u8>>,
    ) -> Option<(usize, Filled<'d>)> {
        if !self.one_line || !bytes.starts_with(&self.head) {
            return None;
        }
        let start = self.head.len();
        let rest = bytes.get(start..)?;
        // The walk stops at the first line break: the fixed parts have none, a number hole is
        // digits, and a string hole ends where its line does (a raw line break is not valid
        // JSON inside a string). So where the shape ends, the data line must end too; that
        // costs no scan of the line for its end (~4% of consuming a Responses body).
        let (line, filled) = self.filled(rest, raws, buf)?;
        let after = rest.get(line..)?;
        // A frame's data line and the blank line after it; a JSON line's own end (a blank
        // line after it taken too, as the line framer skips one).
        let ending = if after.starts_with(b"\n\n") {
            2
        } else if after.starts_with(b"\r\n\r\n") {
            4
        } else if !self.head.is_empty() {
            // A frame's (a line shape has no head).
            return None;
        } else if after.starts_with(b"\n") {
            1
        } else if after.starts_with(b"\r\n") {
            2
        } else {
            return None;
        };
        Some((start + line + ending, filled))
    }

    /// Walks the fixed parts and the holes from the start of `bytes`: where the last part
    /// ends, and what filled the holes (the span is left to the caller).
    /// `part_at(k, at)` is told where each part `k` starts.
    #[inline]
    fn walk<'d>(
        &self,
        bytes: &'d [u8],
        raws: &mut [&'d str; MAX_RAW],
        mut buf: Option<&'d mut Vec<u8>>,
        mut part_at: impl FnMut(usize, usize),
    ) -> Option<(usize, Filled<'d>)> {
        let mut at = 0;
        let mut text = None;
        let mut number = None;
        let mut value = None;
        for (k, (part, hole)) in self.parts.iter().zip(&self.holes).enumerate() {
            if !bytes.get(at..)?.starts_with(part) {
                return None;
            }
            part_at(k, at);
            at += part.len();
            match hole {
                Hole::Number => {
                    let (value, len) = number_at(bytes.get(at..)?)?;
                    number.get_or_insert(value);
                    at += len;
                }
                Hole::RawNum(slot) => {
                    let len = num_len(bytes.get(at..)?)?;
                    let token = std::str::from_utf8(bytes.get(at..at + len)?).ok()?;
                    *raws.get_mut(usize::from(*slot))? = token;
                    at += len;
                }
                Hole::RawStr(slot) => {
                    // Written back as sent (escapes kept): only checked, never decoded.
                    let len = skip_string(bytes.get(at..)?)?;
                    let contents = std::str::from_utf8(bytes.get(at..at + len)?).ok()?;
                    *raws.get_mut(usize::from(*slot))? = contents;
                    at += len;
                }
                Hole::Text => {
                    // The part before ends with the opening quote: the closing one is found
                    // and the escapes decoded in one pass.
                    let (len, value) = match buf.take() {
                        Some(buf) => scan_string_in(bytes.get(at..)?, buf)
                            .map(|(len, text)| (len, Cow::Borrowed(text)))?,
                        None => scan_string(bytes.get(at..)?)?,
                    };
                    text = Some(value);
                    at += len;
                }
                Hole::Padding => at += skip_string(bytes.get(at..)?)?,
                Hole::Value => {
                    // A one-line frame's data ends where its line does: the value is read
                    // from the line (checked as UTF-8 once, then as JSON).
                    let rest = bytes.get(at..)?;
                    let line =
                        rest.get(..memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len()))?;
                    let found = crate::json::cursor::value_at_start(crate::text::utf8(line)?)?;
                    value = Some(found);
                    at += found.len();
                }
            }
        }
        let last = self.parts.last()?;
        let end = if self.pad_end {
            // The part without its brace, any run of spaces and tabs, the brace.
            let core = last.get(..last.len() - 1)?;
            if !bytes.get(at..)?.starts_with(core) {
                return None;
            }
            let after = at + core.len();
            let run = bytes
                .get(after..)?
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            if bytes.get(after + run) != Some(&b'}') {
                return None;
            }
            after + run + 1
        } else {
            if !bytes.get(at..)?.starts_with(last) {
                return None;
            }
            at + last.len()
        };
        part_at(self.parts.len() - 1, at);
        let filled = Filled {
            text: text?,
            number,
            span: value,
            data: bytes.get(..end)?,
        };
        Some((end, filled))
    }
}

/// The last fixed part of a shape's data without the spaces and tabs before its closing brace,
/// and whether it ends with that brace (then a fill takes any such run there).
fn unpadded(last: &[u8]) -> (Vec<u8>, bool) {
    match last.split_last() {
        Some((b'}', body)) => {
            let kept = body.len()
                - body
                    .iter()
                    .rev()
                    .take_while(|&&b| b == b' ' || b == b'\t')
                    .count();
            let mut part = Vec::with_capacity(kept + 1);
            part.extend_from_slice(body.get(..kept).unwrap_or(body));
            part.push(b'}');
            (part, true)
        }
        _ => (last.to_vec(), false),
    }
}

/// A JSON non-negative integer token at the start of `bytes`: its value and length.
fn number_at(bytes: &[u8]) -> Option<(i64, usize)> {
    let len = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    let digits = bytes.get(..len)?;
    // JSON has no leading zeros; 18 digits always fit an i64.
    if len == 0 || len > 18 || (len > 1 && digits.first() == Some(&b'0')) {
        return None;
    }
    let value = digits
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    Some((value, len))
}

#[cfg(test)]
mod tests;
