//! An HTTP/1.1 response read off a raw connection: the status line and header fields, then the
//! body de-framed (chunked, `Content-Length` or close-delimited, RFC 9112 §6.3). Pure Rust,
//! sans-IO: bytes in, body bytes out. `py::http` exposes it as `ssewire.HTTPResponseReader`,
//! and `StreamProtocol` feeds what comes out to a stream.
//!
//! Strategy: the head is collected until the blank line that ends it (found by a scan of each
//! byte once, carrying only "what the current line holds so far" across feeds) and only then
//! parsed, once, by `httparse`. Interim 1xx responses (`100 Continue`, `103 Early Hints`) are
//! skipped. The body is de-framed by a byte-level state machine: the chunk-size line (hex
//! size, optional white space, chunk extensions) is never buffered, only counted; chunk data
//! is copied straight to the output; the trailer section is collected and parsed like a head.
//! Bytes after the end of the response are ignored (nothing is pipelined on the connection).
//!
//! Carried across feeds: the unfinished head (or trailer section), at most `max_head` bytes;
//! the chunk state (size read so far, bytes left in the chunk, length of the size line); the
//! body bytes still owed under `Content-Length`; the parsed status and header fields. A
//! failure is final: every later call returns the same error.
//!
//! Cost: O(bytes received) whatever the split pattern; every byte is looked at a bounded
//! number of times (head bytes: once by the scan, once by the parse). Memory: at most
//! `max_head` bytes of head or trailers (and at most [`MAX_FIELDS`] header fields), plus the
//! body bytes of one feed, which go to the caller's vector.

use std::fmt;
use std::mem;

/// Default bound on the response head (status line and header fields) and on the trailer
/// section, in bytes: 64 KiB, four times h11's default, far above any real API's head.
pub const DEFAULT_MAX_HEAD: usize = 64 * 1024;

/// Most header fields one head (or trailer section) may hold.
pub const MAX_FIELDS: usize = 256;

/// Longest chunk-size line (size, white space and chunk extensions), in bytes. It is counted,
/// never buffered; the bound stops a peer that sends one endless line.
pub const MAX_CHUNK_LINE: usize = 16 * 1024;

/// What went wrong, for callers that act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes are not a well-formed HTTP/1.x response (status line, header fields, chunk
    /// framing, conflicting `Content-Length`).
    Malformed,
    /// The head or the trailer section grew past `max_head` (or past [`MAX_FIELDS`] fields),
    /// or a chunk-size line past [`MAX_CHUNK_LINE`].
    TooLarge,
    /// The connection ended before the response did.
    Incomplete,
    /// Well-formed, but not readable as a body: a transfer coding other than chunked, or a
    /// `101 Switching Protocols`.
    Unsupported,
}

impl ErrorKind {
    /// The kind's name, as Python sees it (`HTTPProtocolError.kind`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Malformed => "malformed",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Incomplete => "incomplete",
            ErrorKind::Unsupported => "unsupported",
        }
    }
}

/// The response cannot be read (see [`ErrorKind`]); the message says where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A one-line description, for people.
    pub message: String,
}

impl HttpError {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        HttpError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HttpError {}

/// How the body of the final response is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Content-Length: n`.
    Length(u64),
    /// Neither: the body ends when the connection does.
    Close,
    /// No body at all (204, 304).
    Empty,
}

impl Framing {
    /// The framing's name, as Python sees it.
    pub fn name(self) -> &'static str {
        match self {
            Framing::Chunked => "chunked",
            Framing::Length(_) => "length",
            Framing::Close => "close",
            Framing::Empty => "none",
        }
    }
}

/// One header (or trailer) field: the name as sent, the value's bytes (white space around it
/// removed by `httparse`).
pub type Field = (String, Vec<u8>);

/// The parsed head of the final response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Minor version: 1 for HTTP/1.1, 0 for HTTP/1.0.
    pub version: u8,
    /// The status code.
    pub status: u16,
    /// The reason phrase (empty when missing, or when it held bytes `httparse` refuses).
    pub reason: String,
    /// The header fields in the order sent.
    pub headers: Vec<Field>,
    /// How the body is delimited.
    pub framing: Framing,
}

/// What the last line of a head (or trailer section) held so far, for finding its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    /// Nothing since the last LF: an LF (or CR LF) now ends the section.
    Empty,
    /// Only a CR since the last LF.
    Cr,
    /// Something else.
    Text,
}

impl Line {
    /// Advances over `b`; true when `b` ends a blank line (the end of the section).
    fn step(&mut self, b: u8) -> bool {
        match (b, *self) {
            (b'\n', Line::Empty | Line::Cr) => return true,
            (b'\n', Line::Text) => *self = Line::Empty,
            (b'\r', Line::Empty) => *self = Line::Cr,
            _ => *self = Line::Text,
        }
        false
    }
}

/// Where the chunked decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading the hex size (`digits` read so far).
    Size { value: u64, digits: u32 },
    /// After the size: white space, then `;` extensions or the line end.
    AfterSize { value: u64 },
    /// Inside chunk extensions, up to the line end.
    Ext { value: u64 },
    /// A CR ended the size line; its LF must follow.
    SizeLf { value: u64 },
    /// Chunk data, this many bytes left.
    Data(u64),
    /// After the data: CR LF (or LF) must follow.
    DataEnd,
    /// A CR followed the data; its LF must follow.
    DataLf,
    /// After the last chunk: trailer fields up to a blank line.
    Trailers(Line),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Before (or inside) the head; `started`: a byte other than CR/LF was seen.
    Head { line: Line, started: bool },
    /// Chunked body.
    Chunked(Chunk),
    /// `Content-Length` body, this many bytes left.
    Length(u64),
    /// Close-delimited body.
    Close,
    /// The response ended (its body is complete); later bytes are ignored.
    Done,
    /// Failed; the error is final.
    Failed(HttpError),
}

/// Reads one HTTP/1.x response, fed in pieces cut anywhere (see the module docs).
#[derive(Debug, Clone)]
pub struct ResponseReader {
    state: State,
    max_head: usize,
    /// The unfinished head, or trailer section.
    buf: Vec<u8>,
    /// Bytes of the head (leading blank lines included) or trailers received so far.
    section: usize,
    head: Option<Head>,
    trailers: Vec<Field>,
    /// Status codes of the interim (1xx) responses skipped.
    interim: Vec<u16>,
    /// Length of the current chunk-size line.
    chunk_line: usize,
    /// Body bytes delivered so far.
    body_len: u64,
    /// Bytes received in all.
    received: u64,
}

impl Default for ResponseReader {
    fn default() -> Self {
        Self::new()
    }
}

fn malformed(message: impl Into<String>) -> HttpError {
    HttpError::new(ErrorKind::Malformed, message)
}

/// The value of a hex digit.
fn hex(b: u8) -> Option<u64> {
    (b as char).to_digit(16).map(u64::from)
}

/// `bytes` decoded as ISO-8859-1 (one char per byte), the fallback charset of HTTP fields.
pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The comma-separated elements of every field named `name` (case-insensitive), trimmed,
/// empty ones left out.
fn elements<'a>(headers: &'a [Field], name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
    headers
        .iter()
        .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
        .flat_map(|(_, v)| v.split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
        .filter(|e| !e.is_empty())
}

/// The body framing of a final response (RFC 9112 §6.3).
fn framing(status: u16, headers: &[Field]) -> Result<Framing, HttpError> {
    if status == 204 || status == 304 {
        return Ok(Framing::Empty);
    }
    let mut chunked = 0usize;
    let mut codings = 0usize;
    for coding in elements(headers, "transfer-encoding") {
        // Transfer codings may carry parameters (`;q=...` is not allowed here, but be exact
        // about the name only).
        let name = coding
            .split(|&b| b == b';')
            .next()
            .unwrap_or_default()
            .trim_ascii();
        if name.eq_ignore_ascii_case(b"identity") {
            continue;
        }
        if !name.eq_ignore_ascii_case(b"chunked") {
            return Err(HttpError::new(
                ErrorKind::Unsupported,
                format!(
                    "unsupported transfer coding {:?} (only chunked can be read)",
                    latin1(name.get(..name.len().min(40)).unwrap_or_default())
                ),
            ));
        }
        chunked += 1;
        codings += 1;
    }
    if codings > 0 {
        if chunked > 1 {
            return Err(malformed("chunked transfer coding applied more than once"));
        }
        // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3, rule 3).
        return Ok(Framing::Chunked);
    }
    let mut length: Option<u64> = None;
    for value in elements(headers, "content-length") {
        let parsed = if value.len() <= 19 && value.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(value)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
        } else {
            None
        };
        let Some(n) = parsed else {
            return Err(malformed(format!(
                "invalid Content-Length {:?}",
                latin1(value.get(..value.len().min(40)).unwrap_or_default())
            )));
        };
        match length {
            Some(m) if m != n => {
                return Err(malformed(format!(
                    "conflicting Content-Length values {m} and {n}"
                )))
            }
            _ => length = Some(n),
        }
    }
    Ok(length.map_or(Framing::Close, Framing::Length))
}

/// Parses a complete head (ending with its blank line).
fn parse_head(buf: &[u8]) -> Result<Head, HttpError> {
    let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
    let mut response = httparse::Response::new(&mut fields);
    match response.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(malformed("malformed response head (it ended early)"))
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(HttpError::new(
                ErrorKind::TooLarge,
                format!("more than {MAX_FIELDS} header fields"),
            ))
        }
        Err(e) => return Err(malformed(format!("malformed response head: {e}"))),
    }
    let (Some(version), Some(status)) = (response.version, response.code) else {
        return Err(malformed("malformed response head: no status line"));
    };
    let headers: Vec<Field> = response
        .headers
        .iter()
        .map(|h| (h.name.to_owned(), h.value.to_vec()))
        .collect();
    Ok(Head {
        version,
        status,
        reason: response.reason.unwrap_or_default().to_owned(),
        framing: Framing::Empty,
        headers,
    })
}

impl ResponseReader {
    /// A reader with the default bound on the head ([`DEFAULT_MAX_HEAD`]).
    pub fn new() -> Self {
        Self::with_max_head(DEFAULT_MAX_HEAD)
    }

    /// A reader whose head (and trailer section) may hold at most `max_head` bytes.
    pub fn with_max_head(max_head: usize) -> Self {
        ResponseReader {
            state: State::Head {
                line: Line::Text,
                started: false,
            },
            max_head,
            buf: Vec::new(),
            section: 0,
            head: None,
            trailers: Vec::new(),
            interim: Vec::new(),
            chunk_line: 0,
            body_len: 0,
            received: 0,
        }
    }

    /// The final response's head, once it has been read.
    pub fn head(&self) -> Option<&Head> {
        self.head.as_ref()
    }

    /// The final response's status code, once its head has been read.
    pub fn status(&self) -> Option<u16> {
        self.head.as_ref().map(|h| h.status)
    }

    /// The final response's reason phrase (empty before its head).
    pub fn reason(&self) -> &str {
        self.head.as_ref().map_or("", |h| h.reason.as_str())
    }

    /// The final response's header fields, in order, names as sent (empty before its head).
    pub fn headers(&self) -> &[Field] {
        self.head.as_ref().map_or(&[], |h| h.headers.as_slice())
    }

    /// Whether the final response's head has been read.
    pub fn head_complete(&self) -> bool {
        self.head.is_some()
    }

    /// The trailer fields of a chunked body (empty until its end, and for other framings).
    pub fn trailers(&self) -> &[Field] {
        &self.trailers
    }

    /// The status codes of the interim (1xx) responses skipped before the final one.
    pub fn interim(&self) -> &[u16] {
        &self.interim
    }

    /// Whether the body has ended (for a close-delimited body: once `finish` was called).
    pub fn body_complete(&self) -> bool {
        self.state == State::Done
    }

    /// The error the reader failed with, if it did.
    pub fn error(&self) -> Option<&HttpError> {
        match &self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// Body bytes delivered so far.
    pub fn body_len(&self) -> u64 {
        self.body_len
    }

    fn fail(&mut self, err: HttpError) -> HttpError {
        self.buf = Vec::new();
        self.state = State::Failed(err.clone());
        err
    }

    /// Reads `input`; appends the body bytes it holds to `body`. After a failure, returns the
    /// same error again (and reads nothing).
    pub fn feed(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<(), HttpError> {
        self.received = self.received.saturating_add(input.len() as u64);
        let start = body.len();
        let result = self.run(input, body);
        self.body_len = self
            .body_len
            .saturating_add(body.len().saturating_sub(start) as u64);
        result.map_err(|e| self.fail(e))
    }

    /// The end of the connection: a close-delimited body ends here; any other response that
    /// has not ended is an [`ErrorKind::Incomplete`] error.
    pub fn finish(&mut self) -> Result<(), HttpError> {
        let err = match &self.state {
            State::Done => return Ok(()),
            State::Failed(e) => return Err(e.clone()),
            State::Close => {
                self.state = State::Done;
                return Ok(());
            }
            State::Head { started: false, .. } if self.head.is_none() => {
                "the connection closed before any response".to_owned()
            }
            State::Head { .. } => format!(
                "the connection closed inside the response head ({} bytes of it received)",
                self.section
            ),
            State::Length(left) => format!(
                "the connection closed {left} bytes before the end of the body \
                 ({} of its Content-Length received)",
                self.body_len
            ),
            State::Chunked(_) => format!(
                "the connection closed before the end of the chunked body \
                 ({} body bytes received)",
                self.body_len
            ),
        };
        Err(self.fail(HttpError::new(ErrorKind::Incomplete, err)))
    }

    fn run(&mut self, mut input: &[u8], body: &mut Vec<u8>) -> Result<(), HttpError> {
        loop {
            match &mut self.state {
                State::Failed(e) => return Err(e.clone()),
                State::Done => return Ok(()),
                _ if input.is_empty() => return Ok(()),
                State::Head { .. } => {
                    let used = self.read_head(input)?;
                    input = input.get(used..).unwrap_or_default();
                }
                State::Close => {
                    body.extend_from_slice(input);
                    return Ok(());
                }
                State::Length(left) => {
                    let take = input
                        .len()
                        .min(usize::try_from(*left).unwrap_or(usize::MAX));
                    let (data, _) = input.split_at(take);
                    body.extend_from_slice(data);
                    *left -= take as u64;
                    if *left == 0 {
                        self.state = State::Done;
                    }
                    return Ok(());
                }
                State::Chunked(_) => {
                    let used = self.read_chunked(input, body)?;
                    input = input.get(used..).unwrap_or_default();
                }
            }
        }
    }

    /// Reads head bytes from `input`; returns how many it used. Once the head is complete, the
    /// state moves on (to the body, or to the next head after an interim response).
    fn read_head(&mut self, input: &[u8]) -> Result<usize, HttpError> {
        let State::Head {
            mut line,
            mut started,
        } = self.state
        else {
            return Ok(0);
        };
        let mut end = None;
        let mut skipped = 0;
        for (i, &b) in input.iter().enumerate() {
            if !started {
                // Blank lines before the status line are skipped (RFC 9112 §2.2), not kept.
                if b == b'\r' || b == b'\n' {
                    skipped += 1;
                    continue;
                }
                started = true;
            }
            if line.step(b) {
                end = Some(i + 1);
                break;
            }
        }
        let used = end.unwrap_or(input.len());
        self.section += used;
        if self.section > self.max_head {
            return Err(HttpError::new(
                ErrorKind::TooLarge,
                format!(
                    "the response head is larger than max_head_size={} bytes",
                    self.max_head
                ),
            ));
        }
        self.buf
            .extend_from_slice(input.get(skipped..used).unwrap_or_default());
        self.state = State::Head { line, started };
        if end.is_none() {
            return Ok(used);
        }
        let buf = mem::take(&mut self.buf);
        self.section = 0;
        let mut head = parse_head(&buf)?;
        self.state = State::Head {
            line: Line::Text,
            started: false,
        };
        match head.status {
            101 => {
                return Err(HttpError::new(
                    ErrorKind::Unsupported,
                    "101 Switching Protocols: the connection left HTTP",
                ))
            }
            100..=199 => {
                self.interim.push(head.status);
                return Ok(used);
            }
            _ => {}
        }
        head.framing = framing(head.status, &head.headers)?;
        self.state = match head.framing {
            Framing::Chunked => State::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
            }),
            Framing::Length(0) | Framing::Empty => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::Close => State::Close,
        };
        self.chunk_line = 0;
        self.head = Some(head);
        Ok(used)
    }

    /// Reads chunked-body bytes from `input`, body data to `body`; returns how many it used.
    fn read_chunked(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<usize, HttpError> {
        let State::Chunked(mut chunk) = self.state else {
            return Ok(0);
        };
        let mut i = 0;
        let result = loop {
            let Some(&b) = input.get(i) else {
                break Ok(i);
            };
            if let Chunk::Data(left) = chunk {
                let rest = input.get(i..).unwrap_or_default();
                let take = rest.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                body.extend_from_slice(rest.get(..take).unwrap_or_default());
                i += take;
                chunk = match left - take as u64 {
                    0 => Chunk::DataEnd,
                    n => Chunk::Data(n),
                };
                continue;
            }
            if let Chunk::Trailers(_) = chunk {
                // `read_trailers` keeps its own state from here on.
                self.state = State::Chunked(chunk);
                return self
                    .read_trailers(input.get(i..).unwrap_or_default())
                    .map(|used| i + used);
            }
            i += 1;
            let size_line = matches!(
                chunk,
                Chunk::Size { .. } | Chunk::AfterSize { .. } | Chunk::Ext { .. }
            );
            if size_line {
                self.chunk_line += 1;
                if self.chunk_line > MAX_CHUNK_LINE {
                    break Err(HttpError::new(
                        ErrorKind::TooLarge,
                        format!("a chunk-size line longer than {MAX_CHUNK_LINE} bytes"),
                    ));
                }
            }
            let next = match (chunk, b) {
                (Chunk::Size { value, digits }, _) if hex(b).is_some() => {
                    let digit = hex(b).unwrap_or_default();
                    match value.checked_mul(16).and_then(|v| v.checked_add(digit)) {
                        Some(value) => Ok(Chunk::Size {
                            value,
                            digits: digits + 1,
                        }),
                        None => Err(malformed("a chunk size larger than 2**64-1")),
                    }
                }
                (Chunk::Size { digits: 0, .. }, _) => Err(malformed(format!(
                    "invalid chunk size line: {:?} where a hex digit must be",
                    char::from(b)
                ))),
                (Chunk::Size { value, .. } | Chunk::AfterSize { value }, b' ' | b'\t') => {
                    Ok(Chunk::AfterSize { value })
                }
                (Chunk::Size { value, .. } | Chunk::AfterSize { value }, b';') => {
                    Ok(Chunk::Ext { value })
                }
                (
                    Chunk::Size { value, .. } | Chunk::AfterSize { value } | Chunk::Ext { value },
                    b'\r',
                ) => Ok(Chunk::SizeLf { value }),
                (
                    Chunk::Size { value, .. }
                    | Chunk::AfterSize { value }
                    | Chunk::Ext { value }
                    | Chunk::SizeLf { value },
                    b'\n',
                ) => {
                    self.chunk_line = 0;
                    Ok(if value == 0 {
                        Chunk::Trailers(Line::Empty)
                    } else {
                        Chunk::Data(value)
                    })
                }
                (Chunk::Size { .. } | Chunk::AfterSize { .. }, _) => Err(malformed(format!(
                    "invalid chunk size line: {:?} after the size",
                    char::from(b)
                ))),
                // Extensions are skipped; only control characters other than HTAB are refused.
                (Chunk::Ext { value }, _) if b == b'\t' || !b.is_ascii_control() => {
                    Ok(Chunk::Ext { value })
                }
                (Chunk::Ext { .. }, _) => Err(malformed(format!(
                    "invalid chunk extension: control character {:?}",
                    char::from(b)
                ))),
                (Chunk::SizeLf { .. }, _) => {
                    Err(malformed("a CR not followed by LF in a chunk-size line"))
                }
                (Chunk::DataEnd, b'\r') => Ok(Chunk::DataLf),
                (Chunk::DataEnd | Chunk::DataLf, b'\n') => Ok(Chunk::Size {
                    value: 0,
                    digits: 0,
                }),
                (Chunk::DataEnd | Chunk::DataLf, _) => Err(malformed(
                    "chunk data longer than its size (no CRLF after it)",
                )),
                // Handled before the match.
                (Chunk::Data(_) | Chunk::Trailers(_), _) => Ok(chunk),
            };
            match next {
                Ok(c) => chunk = c,
                Err(e) => break Err(e),
            }
        };
        if let State::Chunked(c) = &mut self.state {
            *c = chunk;
        }
        result
    }

    /// Reads trailer-section bytes; returns how many it used. At the blank line that ends it,
    /// the fields are parsed and the response is done.
    fn read_trailers(&mut self, input: &[u8]) -> Result<usize, HttpError> {
        let State::Chunked(Chunk::Trailers(mut line)) = self.state else {
            return Ok(0);
        };
        let end = input.iter().position(|&b| line.step(b)).map(|i| i + 1);
        let used = end.unwrap_or(input.len());
        self.section += used;
        if self.section > self.max_head {
            return Err(HttpError::new(
                ErrorKind::TooLarge,
                format!(
                    "the trailer section is larger than max_head_size={} bytes",
                    self.max_head
                ),
            ));
        }
        self.buf
            .extend_from_slice(input.get(..used).unwrap_or_default());
        self.state = State::Chunked(Chunk::Trailers(line));
        if end.is_none() {
            return Ok(used);
        }
        let buf = mem::take(&mut self.buf);
        self.section = 0;
        let mut fields = vec![httparse::EMPTY_HEADER; MAX_FIELDS];
        match httparse::parse_headers(&buf, &mut fields) {
            Ok(httparse::Status::Complete((_, parsed))) => {
                self.trailers = parsed
                    .iter()
                    .map(|h| (h.name.to_owned(), h.value.to_vec()))
                    .collect();
            }
            Ok(httparse::Status::Partial) => {
                return Err(malformed("malformed trailer section (it ended early)"))
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(HttpError::new(
                    ErrorKind::TooLarge,
                    format!("more than {MAX_FIELDS} trailer fields"),
                ))
            }
            Err(e) => return Err(malformed(format!("malformed trailer section: {e}"))),
        }
        self.state = State::Done;
        Ok(used)
    }
}

#[cfg(test)]
mod tests;
