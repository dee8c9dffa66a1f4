//! Partial JSON, incrementally: one JSON document arriving in fragments (streamed tool-call
//! arguments, structured output), readable as a value at every point (API.md section 7).
//!
//! [`PartialJson`] is a push state machine with an explicit stack (no recursion, so no input
//! can overflow the native stack). Nesting is limited as everywhere in the crate: an array or
//! object opened inside [`MAX_DEPTH`] others is an error ("nested deeper than 128 levels"),
//! so a value can always be printed or re-encoded by recursive code (`repr`, `json.dumps`)
//! and its containers stay within a constant of the input. Carried
//! across feeds: the text received so far (kept for [`PartialJson::value_json`], for error
//! messages and as the raw text callers keep beside the value), up to 3 bytes of a UTF-8
//! character cut by a `&[u8]` feed, the lexer state (inside a string, an escape, a number, a
//! literal), the open containers, the decoded content of the open string, and, when asked for,
//! a log of [`Event`]s since it was last drained. Cost: each byte is looked at a constant
//! number of times (once, and a number's bytes once more when it ends), so a feed does work
//! proportional to its fragment whatever the split pattern; the text grows by the fragment
//! (amortised O(fragment)). Only an error (once: errors are sticky) and
//! [`PartialJson::value_json`] cost O(text).
//!
//! The partial value follows these rules (the tests' reference parser states them again):
//! open arrays and objects are closed; an unfinished string is included up to its last
//! complete character (a cut escape such as `\u12`, a high surrogate still waiting for its
//! pair, or a cut UTF-8 character is held back); an unfinished number, `true`/`false`/`null` or
//! object key (and a key whose value has not started) is left out. A number is complete once
//! the character after it arrives (or at [`PartialJson::finish`] for a top-level number).
//!
//! Text that is not JSON is an [`Error`] with the position `json.loads` reports for it (a
//! character index; see [`Error`]); the parser then stops, keeps what was valid before, and
//! reports the same error again. Two deliberate differences from Python's `json`: `NaN`,
//! `Infinity` and `-Infinity` are refused (they are not JSON, RFC 8259), and a `\uXXXX` escape
//! of a lone UTF-16 surrogate decodes to U+FFFD (a Rust string cannot hold it; the rest of the
//! crate does the same). Bytes that are not UTF-8 are an error, as for `json.loads(bytes)`.

use std::borrow::Cow;

pub mod changes;

/// The kind of an open container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `[`
    Array,
    /// `{`
    Object,
}

/// A complete number.
#[derive(Debug, Clone, PartialEq)]
pub enum Number {
    /// An integer that fits `i64` (`-0` is `0`, as in Python).
    Int(i64),
    /// An integer too large for `i64`, as written.
    Big(String),
    /// A number with a fraction or an exponent (out of range becomes infinity, as in Python).
    Float(f64),
}

/// One edit of the partial value, in document order; logged only by a parser made with
/// [`PartialJson::with_events`]. A mirror (the Python `value`) applies them to its objects:
/// values attach to the innermost open container (under the last [`Event::Key`] in an object)
/// or become the root when none is open.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A container opened: attach a new empty one and make it the innermost.
    Open(Kind),
    /// The innermost container closed.
    Close,
    /// The key of the next value in the innermost object.
    Key(String),
    /// A complete string value.
    Str(String),
    /// A complete number.
    Num(Number),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
}

/// Text that is not one JSON document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong, in the words of Python's `json` (so messages read the same).
    pub msg: &'static str,
    /// Byte offset in the UTF-8 text.
    pub byte: usize,
    /// Character index in the text: the `pos` that `json.loads` reports for the same text.
    pub pos: usize,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: char {}", self.msg, self.pos)
    }
}

impl std::error::Error for Error {}

const EXPECTING_VALUE: &str = "Expecting value";
const EXPECTING_KEY: &str = "Expecting property name enclosed in double quotes";
const EXPECTING_COLON: &str = "Expecting ':' delimiter";
const EXPECTING_COMMA: &str = "Expecting ',' delimiter";
const EXTRA_DATA: &str = "Extra data";
const UNTERMINATED: &str = "Unterminated string starting at";
const BAD_ESCAPE: &str = "Invalid \\escape";
const BAD_UNICODE: &str = "Invalid \\uXXXX escape";
const CONTROL: &str = "Invalid control character at";
const BAD_UTF8: &str = "Invalid UTF-8";
const CUT_UTF8: &str = "Incomplete UTF-8 character";
const TOO_DEEP: &str = "JSON nested deeper than 128 levels";

/// The deepest nesting read (the JSON decoder's limit, `crate::json::read::MAX_DEPTH`).
pub const MAX_DEPTH: usize = crate::json::read::MAX_DEPTH;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigit,
}

impl Num {
    /// Whether a number may end in this state.
    fn is_final(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpDigit)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// A value must come (root start, after `:` or after `,` in an array).
    Value,
    /// After `[`: a value or `]`.
    ArrayFirst,
    /// After `{`: a key or `}`.
    ObjectFirst,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value in a container: `,` or the closer.
    After,
    /// The top-level value is complete: only whitespace may follow.
    Done,
    /// Inside a string.
    Str,
    /// After a backslash at byte `at`.
    Escape { at: usize },
    /// In `\uXXXX` whose `u` is at byte `at`, `n` digits read.
    Unicode { at: usize, n: u8, acc: u32 },
    /// In a number; `mark` is where the unfinished part began (json.loads's error position).
    Number { num: Num, mark: usize },
    /// In `true`/`false`/`null` starting at byte `start`, `n` letters matched.
    Literal {
        start: usize,
        word: &'static [u8],
        n: usize,
    },
}

/// The parse state, apart from the text (so the text can be borrowed while this changes).
#[derive(Debug, Clone)]
struct Machine {
    state: State,
    stack: Vec<Kind>,
    log: bool,
    events: Vec<Event>,
    /// Decoded complete characters of the open string.
    cur: String,
    in_key: bool,
    /// Byte offset of the open string's opening quote.
    str_start: usize,
    /// End of the raw text of the open string's complete characters.
    str_raw_end: usize,
    /// A high surrogate escape waiting for its low half.
    hi: Option<u32>,
    num_start: usize,
    /// `text[..commit]` plus the closers of `stack` is the partial value (unless a string value
    /// is open); `begun` says whether there is any value at all.
    commit: usize,
    begun: bool,
    error: Option<Error>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn hex(b: u8) -> Option<u32> {
    char::from(b).to_digit(16)
}

impl Machine {
    fn new(log: bool) -> Self {
        Machine {
            state: State::Value,
            stack: Vec::new(),
            log,
            events: Vec::new(),
            cur: String::new(),
            in_key: false,
            str_start: 0,
            str_raw_end: 0,
            hi: None,
            num_start: 0,
            commit: 0,
            begun: false,
            error: None,
        }
    }

    fn fail(&mut self, text: &str, msg: &'static str, byte: usize) -> Error {
        let pos = text.get(..byte).map_or(byte, |t| t.chars().count());
        let err = Error { msg, byte, pos };
        self.error = Some(err.clone());
        err
    }

    fn emit(&mut self, event: Event) {
        if self.log {
            self.events.push(event);
        }
    }

    /// A value ended at byte `end`.
    fn value_done(&mut self, end: usize) {
        self.commit = end;
        self.begun = true;
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::After
        };
    }

    fn open(&mut self, kind: Kind, end: usize) {
        self.stack.push(kind);
        self.emit(Event::Open(kind));
        self.commit = end;
        self.begun = true;
        self.state = match kind {
            Kind::Array => State::ArrayFirst,
            Kind::Object => State::ObjectFirst,
        };
    }

    fn close(&mut self, end: usize) {
        self.stack.pop();
        self.emit(Event::Close);
        self.value_done(end);
    }

    fn start_string(&mut self, at: usize, key: bool) {
        self.cur.clear();
        self.in_key = key;
        self.str_start = at;
        self.str_raw_end = at + 1;
        self.hi = None;
        self.state = State::Str;
    }

    /// A pending high surrogate turned out to be alone: it becomes U+FFFD.
    fn flush_hi(&mut self) {
        if self.hi.take().is_some() {
            self.cur.push('\u{FFFD}');
        }
    }

    fn end_string(&mut self, end: usize) {
        self.flush_hi();
        if self.in_key {
            if self.log {
                let key = std::mem::take(&mut self.cur);
                self.events.push(Event::Key(key));
            }
            self.state = State::Colon;
        } else {
            if self.log {
                let s = std::mem::take(&mut self.cur);
                self.events.push(Event::Str(s));
            }
            self.value_done(end);
        }
    }

    fn end_number(&mut self, text: &str, end: usize, float: bool) {
        if self.log {
            let s = text.get(self.num_start..end).unwrap_or("0");
            let n = if float {
                Number::Float(s.parse().unwrap_or(f64::NAN))
            } else {
                s.parse()
                    .map_or_else(|_| Number::Big(s.to_owned()), Number::Int)
            };
            self.events.push(Event::Num(n));
        }
        self.value_done(end);
    }

    /// The error for a number that cannot end where it stands.
    fn number_error(&mut self, text: &str, num: Num, mark: usize) -> Error {
        if num == Num::Minus {
            self.fail(text, EXPECTING_VALUE, mark)
        } else if self.stack.is_empty() {
            self.fail(text, EXTRA_DATA, mark)
        } else {
            self.fail(text, EXPECTING_COMMA, mark)
        }
    }

    /// Starts the value whose first byte `b` is at `i`; `Ok(false)` if `b` starts none.
    fn start_value(&mut self, b: u8, i: usize) -> bool {
        match b {
            b'{' => self.open(Kind::Object, i + 1),
            b'[' => self.open(Kind::Array, i + 1),
            b'"' => self.start_string(i, false),
            b'-' | b'0'..=b'9' => {
                self.num_start = i;
                let num = match b {
                    b'-' => Num::Minus,
                    b'0' => Num::Zero,
                    _ => Num::Int,
                };
                self.state = State::Number { num, mark: i };
            }
            b't' | b'f' | b'n' => {
                let word: &'static [u8] = match b {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                self.state = State::Literal {
                    start: i,
                    word,
                    n: 1,
                };
            }
            _ => return false,
        }
        true
    }

    /// Parses `text[from..]` (the part just appended).
    fn run(&mut self, text: &str, from: usize) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let bytes = text.as_bytes();
        let mut i = from;
        while let Some(&b) = bytes.get(i) {
            match self.state {
                State::Value | State::ArrayFirst => {
                    if is_ws(b) {
                    } else if b == b']' && self.state == State::ArrayFirst {
                        self.close(i + 1);
                    } else if matches!(b, b'[' | b'{') && self.stack.len() >= MAX_DEPTH {
                        return Err(self.fail(text, TOO_DEEP, i));
                    } else if !self.start_value(b, i) {
                        return Err(self.fail(text, EXPECTING_VALUE, i));
                    }
                }
                State::ObjectFirst | State::Key => {
                    if is_ws(b) {
                    } else if b == b'"' {
                        self.start_string(i, true);
                    } else if b == b'}' && self.state == State::ObjectFirst {
                        self.close(i + 1);
                    } else {
                        return Err(self.fail(text, EXPECTING_KEY, i));
                    }
                }
                State::Colon => {
                    if is_ws(b) {
                    } else if b == b':' {
                        self.state = State::Value;
                    } else {
                        return Err(self.fail(text, EXPECTING_COLON, i));
                    }
                }
                State::After => match (b, self.stack.last()) {
                    (b' ' | b'\t' | b'\n' | b'\r', _) => {}
                    (b',', Some(Kind::Array)) => self.state = State::Value,
                    (b',', _) => self.state = State::Key,
                    (b']', Some(Kind::Array)) | (b'}', Some(Kind::Object)) => self.close(i + 1),
                    _ => return Err(self.fail(text, EXPECTING_COMMA, i)),
                },
                State::Done => {
                    if !is_ws(b) {
                        return Err(self.fail(text, EXTRA_DATA, i));
                    }
                }
                State::Str => {
                    // The run of plain characters up to the next quote, backslash or control
                    // character is copied at once; it ends at an ASCII byte, so on a char
                    // boundary.
                    let rest = bytes.get(i..).unwrap_or_default();
                    let len = rest
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                        .unwrap_or(rest.len());
                    if len > 0 {
                        self.flush_hi();
                        self.cur.push_str(text.get(i..i + len).unwrap_or_default());
                        self.str_raw_end = i + len;
                        i += len;
                        continue;
                    }
                    match b {
                        b'"' => self.end_string(i + 1),
                        b'\\' => self.state = State::Escape { at: i },
                        _ => return Err(self.fail(text, CONTROL, i)),
                    }
                }
                State::Escape { at } => {
                    let c = match b {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            self.state = State::Unicode {
                                at: i,
                                n: 0,
                                acc: 0,
                            };
                            i += 1;
                            continue;
                        }
                        _ => return Err(self.fail(text, BAD_ESCAPE, at)),
                    };
                    self.flush_hi();
                    self.cur.push(c);
                    self.str_raw_end = i + 1;
                    self.state = State::Str;
                }
                State::Unicode { at, n, acc } => {
                    let Some(d) = hex(b) else {
                        return Err(self.fail(text, BAD_UNICODE, at));
                    };
                    let unit = acc * 16 + d;
                    if n < 3 {
                        self.state = State::Unicode {
                            at,
                            n: n + 1,
                            acc: unit,
                        };
                    } else {
                        self.code_unit(unit, at, i + 1);
                        self.state = State::Str;
                    }
                }
                State::Number { num, mark } => {
                    let next = match (num, b) {
                        (Num::Minus, b'0') => Num::Zero,
                        (Num::Minus, b'1'..=b'9') => Num::Int,
                        (Num::Int, b'0'..=b'9') => Num::Int,
                        // `01`: json.loads reads `0` and fails at the `1`.
                        (Num::Zero, b'0'..=b'9') => return Err(self.number_error(text, num, i)),
                        (Num::Zero | Num::Int, b'.') => Num::Dot,
                        (Num::Dot | Num::Frac, b'0'..=b'9') => Num::Frac,
                        (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Num::Exp,
                        (Num::Exp, b'+' | b'-') => Num::ExpSign,
                        (Num::Exp | Num::ExpSign | Num::ExpDigit, b'0'..=b'9') => Num::ExpDigit,
                        _ if num.is_final() => {
                            let float = text
                                .get(self.num_start..i)
                                .is_some_and(|s| s.contains(['.', 'e', 'E']));
                            self.end_number(text, i, float);
                            // The byte after the number is read again in the new state.
                            continue;
                        }
                        _ => return Err(self.number_error(text, num, mark)),
                    };
                    // json.loads backs up to the longest number and fails at what follows it.
                    let mark = if num.is_final() && !next.is_final() {
                        i
                    } else {
                        mark
                    };
                    self.state = State::Number { num: next, mark };
                }
                State::Literal { start, word, n } => {
                    if word.get(n) != Some(&b) {
                        return Err(self.fail(text, EXPECTING_VALUE, start));
                    }
                    if n + 1 == word.len() {
                        self.emit(match word.first() {
                            Some(b't') => Event::Bool(true),
                            Some(b'f') => Event::Bool(false),
                            _ => Event::Null,
                        });
                        self.value_done(i + 1);
                    } else {
                        self.state = State::Literal {
                            start,
                            word,
                            n: n + 1,
                        };
                    }
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// A complete `\uXXXX` (its `u` at `at`, ending at `end`) with code unit `unit`.
    fn code_unit(&mut self, unit: u32, at: usize, end: usize) {
        if let Some(high) = self.hi.take() {
            if (0xDC00..=0xDFFF).contains(&unit) {
                let c = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                self.cur.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                self.str_raw_end = end;
                return;
            }
            // The high surrogate was alone; it ends where this escape's backslash begins.
            self.cur.push('\u{FFFD}');
            self.str_raw_end = at.saturating_sub(1);
        }
        if (0xD800..=0xDBFF).contains(&unit) {
            self.hi = Some(unit);
        } else {
            self.cur.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
            self.str_raw_end = end;
        }
    }

    /// End of input after `text`.
    fn finish(&mut self, text: &str) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let end = text.len();
        let (msg, at) = match self.state {
            State::Done => return Ok(()),
            State::Number { num, mark } => {
                if num.is_final() && self.stack.is_empty() {
                    let float = text
                        .get(self.num_start..)
                        .is_some_and(|s| s.contains(['.', 'e', 'E']));
                    self.end_number(text, end, float);
                    return Ok(());
                }
                if num.is_final() {
                    (EXPECTING_COMMA, end)
                } else {
                    return Err(self.number_error(text, num, mark));
                }
            }
            State::Literal { start, .. } => (EXPECTING_VALUE, start),
            State::Str | State::Escape { .. } => (UNTERMINATED, self.str_start),
            State::Unicode { at, .. } => (BAD_UNICODE, at),
            State::Value | State::ArrayFirst => (EXPECTING_VALUE, end),
            State::ObjectFirst | State::Key => (EXPECTING_KEY, end),
            State::Colon => (EXPECTING_COLON, end),
            State::After => (EXPECTING_COMMA, end),
        };
        Err(self.fail(text, msg, at))
    }

    fn string_value_open(&self) -> bool {
        !self.in_key
            && matches!(
                self.state,
                State::Str | State::Escape { .. } | State::Unicode { .. }
            )
    }
}

/// One JSON document fed in fragments; see the module docs for the rules of the partial value.
#[derive(Debug, Clone)]
pub struct PartialJson {
    /// Tells this parser from any other made in the process (a reader of its text can tell
    /// when a tool call was replaced by a new one under the same index).
    id: u64,
    text: String,
    /// The start of a UTF-8 character cut at the end of the last `&[u8]` feed.
    carry: [u8; 4],
    carry_len: usize,
    m: Machine,
}

impl Default for PartialJson {
    fn default() -> Self {
        Self::new()
    }
}

impl PartialJson {
    /// A parser that logs no events (for Rust callers that only need [`Self::value_json`]).
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        PartialJson {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            text: String::new(),
            carry: [0; 4],
            carry_len: 0,
            m: Machine::new(false),
        }
    }

    /// A parser that logs the [`Event`]s a mirror of the value needs ([`Self::drain_events`]).
    pub fn with_events() -> Self {
        PartialJson {
            m: Machine::new(true),
            ..Self::new()
        }
    }

    fn push(&mut self, s: &str) -> Result<(), Error> {
        let from = self.text.len();
        self.text.push_str(s);
        self.m.run(&self.text, from)
    }

    /// Feeds a text fragment. An error is sticky: later calls return it again (and still
    /// append their text to [`Self::text`]).
    pub fn feed_str(&mut self, s: &str) -> Result<(), Error> {
        if let Some(e) = &self.m.error {
            self.text.push_str(s);
            return Err(e.clone());
        }
        if self.carry_len > 0 && !s.is_empty() {
            return Err(self.m.fail(&self.text, CUT_UTF8, self.text.len()));
        }
        self.push(s)
    }

    /// Feeds UTF-8 bytes, cut anywhere (also inside a character). Bytes that are not UTF-8
    /// are an error at the character where they stand.
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if let Some(e) = &self.m.error {
            self.text.push_str(&crate::text::lossy(bytes));
            return Err(e.clone());
        }
        let mut rest = bytes;
        if self.carry_len > 0 {
            // Complete the cut character from the first bytes of this fragment.
            let width: usize = match self.carry.first() {
                Some(0xF0..) => 4,
                Some(0xE0..) => 3,
                _ => 2,
            };
            let take = width.saturating_sub(self.carry_len).min(rest.len());
            let mut buf = [0u8; 4];
            let have = self.carry_len;
            for (k, slot) in buf.iter_mut().enumerate().take(have + take) {
                *slot = if k < have {
                    self.carry.get(k).copied().unwrap_or(0)
                } else {
                    rest.get(k - have).copied().unwrap_or(0)
                };
            }
            let seq = buf.get(..have + take).unwrap_or_default();
            match std::str::from_utf8(seq) {
                Ok(s) => {
                    self.carry_len = 0;
                    self.push(s)?;
                }
                Err(e) if e.error_len().is_none() => {
                    self.carry = buf;
                    self.carry_len = seq.len();
                    return Ok(());
                }
                Err(_) => return Err(self.m.fail(&self.text, BAD_UTF8, self.text.len())),
            }
            rest = rest.get(take..).unwrap_or_default();
        }
        match std::str::from_utf8(rest) {
            Ok(s) => self.push(s),
            Err(e) => {
                let (valid, tail) = rest.split_at(e.valid_up_to());
                self.push(std::str::from_utf8(valid).unwrap_or_default())?;
                if e.error_len().is_some() || tail.len() > 3 {
                    return Err(self.m.fail(&self.text, BAD_UTF8, self.text.len()));
                }
                for (slot, &b) in self.carry.iter_mut().zip(tail) {
                    *slot = b;
                }
                self.carry_len = tail.len();
                Ok(())
            }
        }
    }

    /// End of input: completes a top-level number; an error if the text is not one whole
    /// document (at the position `json.loads` reports).
    pub fn finish(&mut self) -> Result<(), Error> {
        if self.m.error.is_none() && self.carry_len > 0 {
            return Err(self.m.fail(&self.text, CUT_UTF8, self.text.len()));
        }
        self.m.finish(&self.text)
    }

    /// This parser's identity (unique in the process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether one whole document has been received.
    pub fn complete(&self) -> bool {
        self.m.state == State::Done
    }

    /// The error that stopped the parser, if any.
    pub fn error(&self) -> Option<&Error> {
        self.m.error.as_ref()
    }

    /// The text received so far, also after an error (the raw arguments, for callers that
    /// keep them); after a `&[u8]` feed, without the start of a character still cut.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The decoded complete characters of the unfinished string value, if one is open (an
    /// unfinished key is not a value).
    pub fn open_string(&self) -> Option<&str> {
        self.m.string_value_open().then_some(self.m.cur.as_str())
    }

    /// The events logged since the last drain (none unless made by [`Self::with_events`]).
    pub fn drain_events(&mut self) -> std::vec::Drain<'_, Event> {
        self.m.events.drain(..)
    }

    /// The partial value as JSON text, by the module's rules; `None` before any value is
    /// known. Cost: O(text), meant for one call at the end (a tool call that never completed).
    pub fn value_json(&self) -> Option<String> {
        let m = &self.m;
        let mut out = if m.string_value_open() {
            let mut s = self
                .text
                .get(..m.str_raw_end)
                .unwrap_or_default()
                .to_owned();
            s.push('"');
            s
        } else if m.begun {
            self.text.get(..m.commit).unwrap_or_default().to_owned()
        } else {
            return None;
        };
        for kind in m.stack.iter().rev() {
            out.push(match kind {
                Kind::Array => ']',
                Kind::Object => '}',
            });
        }
        let trimmed = out.trim_start();
        let out = if trimmed.len() == out.len() {
            out
        } else {
            trimmed.to_owned()
        };
        Some(crate::text::fix_lone_surrogates(Cow::Owned(out)).into_owned())
    }
}

/// What a reader of a stream's tool arguments needs of them while they stream
/// (`partial_arguments`): the joined text so far, and the identity of the call's reader (a new
/// call under the same index has a new one).
pub trait SoFar {
    /// The reader's identity (unique in the process).
    fn id(&self) -> u64;
    /// The fragments received so far, joined.
    fn text(&self) -> &str;
}

impl SoFar for PartialJson {
    fn id(&self) -> u64 {
        PartialJson::id(self)
    }
    fn text(&self) -> &str {
        PartialJson::text(self)
    }
}

/// A document's fragments joined as they come, read as partial JSON only when asked
/// ([`Joined::read`]: the reader is then fed what came since it last read). A fold keeps a
/// tool call's arguments this way: a stream whose arguments nobody reads while they arrive
/// pays for joining them, not for reading them (reading them as they came was an eighth of
/// consuming a chat tool stream), and a read costs only what came since the last one.
#[derive(Debug, Clone, Default)]
pub struct Joined {
    text: String,
    /// Fed a prefix of `text` (its own text is that prefix).
    reader: PartialJson,
}

impl Joined {
    /// No fragment yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a fragment.
    pub fn push(&mut self, fragment: &str) {
        self.text.push_str(fragment);
    }

    /// How much of the text the reader has read (the tests' check that a fold reads lazily).
    #[cfg(test)]
    pub fn fed(&self) -> usize {
        self.reader.text().len()
    }

    /// The reader, fed every fragment so far (a text that is not JSON: its error, sticky).
    pub fn read(&mut self) -> &PartialJson {
        let fed = self.reader.text().len();
        if let Some(new) = self.text.get(fed..).filter(|new| !new.is_empty()) {
            let _ = self.reader.feed_str(new);
        }
        &self.reader
    }
}

impl SoFar for Joined {
    fn id(&self) -> u64 {
        self.reader.id()
    }
    fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests;
