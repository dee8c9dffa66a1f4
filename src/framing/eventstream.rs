//! The AWS event stream framing (`application/vnd.amazon.eventstream`), push-based: what
//! Amazon Bedrock's `ConverseStream` and `InvokeModelWithResponseStream` answer instead of SSE.
//!
//! A message is binary, all integers big-endian:
//!
//! ```text
//! total length (u32) | headers length (u32) | prelude CRC32 (of the 8 bytes before it)
//! headers (headers length bytes) | payload | message CRC32 (of every byte before it)
//! ```
//!
//! Each header is a name (u8 length, UTF-8), a type byte and a value: 0 `true`, 1 `false` (no
//! value bytes), 2 byte (i8), 3 short (i16), 4 int (i32), 5 long (i64), 6 byte array (u16
//! length), 7 string (u16 length, UTF-8), 8 timestamp (i64 milliseconds since the epoch),
//! 9 UUID (16 bytes). Values are read as botocore reads them (signed integers, a timestamp as
//! its milliseconds).
//!
//! Input is hostile: the prelude CRC is checked before its lengths are believed, a length that
//! cannot be (under 16, headers past the message, a message over the decoder's limit or
//! headers over [`MAX_HEADERS`]) is refused before anything is buffered for it, and a message
//! is buffered only up to its declared length. The first fault stops the framing: after a bad
//! CRC or length nothing in the stream can be trusted to start a message. Cost: linear in the
//! input (each byte is copied at most once, into the buffer of a message cut across feeds, and
//! CRC-checked once).

use std::fmt;

/// The most header bytes one message may declare (AWS's limit, and botocore's).
pub const MAX_HEADERS: usize = 128 * 1024;
/// The prelude (two lengths and their CRC) and the message CRC: the size of an empty message.
pub const OVERHEAD: usize = 16;

/// One header value, borrowing its bytes from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// `true` or `false` (types 0 and 1, no value bytes).
    Bool(bool),
    /// A byte (type 2).
    Byte(i8),
    /// A short (type 3).
    Short(i16),
    /// An int (type 4).
    Int(i32),
    /// A long (type 5).
    Long(i64),
    /// A byte array (type 6).
    Bytes(&'a [u8]),
    /// A string (type 7).
    String(&'a str),
    /// Milliseconds since the Unix epoch.
    Timestamp(i64),
    /// A UUID (type 9).
    Uuid(&'a [u8; 16]),
}

impl Value<'_> {
    /// The wire type byte of the value.
    pub fn type_byte(&self) -> u8 {
        match self {
            Value::Bool(true) => 0,
            Value::Bool(false) => 1,
            Value::Byte(_) => 2,
            Value::Short(_) => 3,
            Value::Int(_) => 4,
            Value::Long(_) => 5,
            Value::Bytes(_) => 6,
            Value::String(_) => 7,
            Value::Timestamp(_) => 8,
            Value::Uuid(_) => 9,
        }
    }
}

/// One message: its headers in wire order, and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    /// The message's headers, name and value, in wire order.
    pub headers: Vec<(&'a str, Value<'a>)>,
    /// The message's payload.
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// The value of the header named `name` (a name stands once: [`read_headers`]).
    pub fn header(&self, name: &str) -> Option<Value<'a>> {
        self.headers
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// The value of string header `name`.
    pub fn string(&self, name: &str) -> Option<&'a str> {
        match self.header(name)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Why framing stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// The prelude's CRC32 does not match its 8 bytes.
    PreludeCrc {
        /// The CRC32 the prelude carries.
        expected: u32,
        /// The CRC32 of the prelude's 8 bytes.
        computed: u32,
    },
    /// The message's CRC32 does not match its bytes.
    MessageCrc {
        /// The CRC32 the message ends with.
        expected: u32,
        /// The CRC32 of the message's bytes before it.
        computed: u32,
    },
    /// A length that cannot be: under [`OVERHEAD`], or headers past the message's end.
    Length {
        /// The message's declared total length.
        total: u32,
        /// The message's declared headers length.
        headers: u32,
    },
    /// Headers longer than [`MAX_HEADERS`].
    HeadersTooLong {
        /// The message's declared headers length.
        headers: u32,
    },
    /// A message longer than the decoder's limit.
    TooLarge {
        /// The message's declared total length.
        total: u32,
        /// The decoder's limit, in bytes.
        limit: usize,
    },
    /// A header that does not read: cut short, an unknown type, a name or string that is not
    /// UTF-8.
    Header(String),
    /// The input ended inside a message (`finish()`): how many of its bytes came.
    Truncated {
        /// How many bytes of the message came.
        have: usize,
    },
}

impl Fault {
    /// The fault's kind, for error items and exception codes.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::PreludeCrc { .. } => "prelude_crc_mismatch",
            Fault::MessageCrc { .. } => "message_crc_mismatch",
            Fault::Length { .. } => "invalid_length",
            Fault::HeadersTooLong { .. } => "headers_too_long",
            Fault::TooLarge { .. } => "event_too_large",
            Fault::Header(_) => "invalid_header",
            Fault::Truncated { .. } => "incomplete_stream",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::PreludeCrc { expected, computed } => write!(
                f,
                "event stream prelude CRC mismatch: the message says {expected:#010x}, its \
                 bytes give {computed:#010x}"
            ),
            Fault::MessageCrc { expected, computed } => write!(
                f,
                "event stream message CRC mismatch: the message says {expected:#010x}, its \
                 bytes give {computed:#010x}"
            ),
            Fault::Length { total, headers } => write!(
                f,
                "event stream message lengths that cannot be: {total} bytes in all with \
                 {headers} bytes of headers (a message is at least {OVERHEAD} bytes beside \
                 its headers)"
            ),
            Fault::HeadersTooLong { headers } => write!(
                f,
                "event stream message with {headers} bytes of headers (at most {MAX_HEADERS})"
            ),
            Fault::TooLarge { total, limit } => write!(
                f,
                "event stream message of {total} bytes is over max_event_size ({limit} bytes)"
            ),
            Fault::Header(why) => write!(f, "event stream header that does not read: {why}"),
            Fault::Truncated { have } => write!(
                f,
                "the event stream ended inside a message ({have} bytes of it came)"
            ),
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let bytes: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(bytes))
}

/// Reads `n` bytes at `*at` of `b`, moving `*at` past them.
fn take<'a>(b: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], Fault> {
    let end = at.checked_add(n).filter(|e| *e <= b.len());
    let Some(end) = end else {
        return Err(Fault::Header(format!(
            "a header cut short ({n} bytes wanted at byte {} of {})",
            *at,
            b.len()
        )));
    };
    let out = b.get(*at..end).unwrap_or_default();
    *at = end;
    Ok(out)
}

fn fixed<const N: usize>(b: &[u8], at: &mut usize) -> Result<[u8; N], Fault> {
    let bytes = take(b, at, N)?;
    bytes
        .try_into()
        .map_err(|_| Fault::Header("a header cut short".into()))
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, Fault> {
    std::str::from_utf8(bytes).map_err(|e| Fault::Header(format!("{what} is not UTF-8 ({e})")))
}

/// Reads the headers block of a message.
pub fn read_headers(b: &[u8]) -> Result<Vec<(&str, Value<'_>)>, Fault> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let [name_len] = fixed::<1>(b, &mut at)?;
        let name = utf8(take(b, &mut at, usize::from(name_len))?, "a header name")?;
        let [kind] = fixed::<1>(b, &mut at)?;
        let value = match kind {
            0 => Value::Bool(true),
            1 => Value::Bool(false),
            2 => Value::Byte(i8::from_be_bytes(fixed(b, &mut at)?)),
            3 => Value::Short(i16::from_be_bytes(fixed(b, &mut at)?)),
            4 => Value::Int(i32::from_be_bytes(fixed(b, &mut at)?)),
            5 => Value::Long(i64::from_be_bytes(fixed(b, &mut at)?)),
            6 | 7 => {
                let len = u16::from_be_bytes(fixed(b, &mut at)?);
                let bytes = take(b, &mut at, usize::from(len))?;
                if kind == 6 {
                    Value::Bytes(bytes)
                } else {
                    Value::String(utf8(bytes, "a string header value")?)
                }
            }
            8 => Value::Timestamp(i64::from_be_bytes(fixed(b, &mut at)?)),
            9 => {
                let bytes = take(b, &mut at, 16)?;
                let uuid: &[u8; 16] = bytes
                    .try_into()
                    .map_err(|_| Fault::Header("a UUID cut short".into()))?;
                Value::Uuid(uuid)
            }
            other => {
                return Err(Fault::Header(format!(
                    "header {name:?} has type {other} (the types are 0 to 9)"
                )))
            }
        };
        out.push((name, value));
    }
    // A name given twice is an error, as botocore's parser and AWS's test vectors have it
    // (which value would count is not said). A scan while there are few; a set past that,
    // so that a block of 40,000 one-byte names costs no quadratic time.
    let twice = if out.len() <= 8 {
        out.iter()
            .enumerate()
            .find(|(i, (name, _))| out.iter().skip(i + 1).any(|(other, _)| other == name))
            .map(|(_, (name, _))| *name)
    } else {
        let mut seen = std::collections::HashSet::with_capacity(out.len());
        out.iter()
            .map(|(name, _)| *name)
            .find(|name| !seen.insert(*name))
    };
    if let Some(name) = twice {
        return Err(Fault::Header(format!("header {name:?} appears twice")));
    }
    Ok(out)
}

/// Reads one whole message (`b` is exactly its bytes, its length checked by the caller
/// against the prelude).
pub fn read_message(b: &[u8]) -> Result<Message<'_>, Fault> {
    let (Some(total), Some(headers_len), Some(prelude_crc)) = (be32(b, 0), be32(b, 4), be32(b, 8))
    else {
        return Err(Fault::Truncated { have: b.len() });
    };
    check_prelude(b, total, headers_len, prelude_crc, usize::MAX)?;
    let total = total as usize;
    if b.len() != total {
        return Err(Fault::Truncated { have: b.len() });
    }
    let body_end = total - 4;
    let expected = be32(b, body_end).unwrap_or_default();
    let computed = crc32fast::hash(b.get(..body_end).unwrap_or_default());
    if expected != computed {
        return Err(Fault::MessageCrc { expected, computed });
    }
    let headers_end = 12 + headers_len as usize;
    let headers = read_headers(b.get(12..headers_end).unwrap_or_default())?;
    Ok(Message {
        headers,
        payload: b.get(headers_end..body_end).unwrap_or_default(),
    })
}

/// The prelude's checks: its CRC first (a length is believed only when it is intact), then
/// the lengths.
fn check_prelude(
    b: &[u8],
    total: u32,
    headers: u32,
    expected: u32,
    limit: usize,
) -> Result<(), Fault> {
    let computed = crc32fast::hash(b.get(..8).unwrap_or_default());
    if expected != computed {
        return Err(Fault::PreludeCrc { expected, computed });
    }
    if (total as usize) < OVERHEAD || headers as usize > (total as usize) - OVERHEAD {
        return Err(Fault::Length { total, headers });
    }
    if headers as usize > MAX_HEADERS {
        return Err(Fault::HeadersTooLong { headers });
    }
    if total as usize > limit {
        return Err(Fault::TooLarge { total, limit });
    }
    Ok(())
}

/// The push-based decoder: bytes in, whole messages (or the fault that stopped it) out.
#[derive(Debug)]
pub struct Decoder {
    /// The start of a message cut across feeds (at most its declared length).
    held: Vec<u8>,
    limit: usize,
    failed: bool,
    /// Whether any byte was fed.
    fed: bool,
}

impl Decoder {
    /// A decoder refusing messages over `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Decoder {
            held: Vec::new(),
            limit,
            failed: false,
            fed: false,
        }
    }

    /// Whether `first`, the first byte of a body, can start a message under the limit (a
    /// message's first byte is the top byte of its length: 0 for any under 16 MiB). A body
    /// that starts with text (a JSON error, an HTML page) cannot.
    pub fn can_start_with(&self, first: u8) -> bool {
        (usize::from(first) << 24) <= self.limit
    }

    /// Whether nothing was fed yet.
    pub fn fresh(&self) -> bool {
        !self.fed
    }

    /// The longest message this decoder takes, in bytes.
    pub fn max_event_size(&self) -> usize {
        self.limit
    }

    /// Whether a fault stopped the framing.
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Bytes of a message started and not finished.
    pub fn pending(&self) -> usize {
        self.held.len()
    }

    /// The declared length of the message starting at `b`, once its prelude is all there
    /// and checked (`Ok(None)`: not all there yet).
    fn declared(&self, b: &[u8]) -> Result<Option<usize>, Fault> {
        let (Some(total), Some(headers), Some(crc)) = (be32(b, 0), be32(b, 4), be32(b, 8)) else {
            return Ok(None);
        };
        check_prelude(b, total, headers, crc, self.limit)?;
        Ok(Some(total as usize))
    }

    /// Reads `data`; calls `out` with each whole message in order, then with the fault that
    /// stopped the framing, if one did (nothing is read after it, in this feed or later).
    pub fn feed(&mut self, mut data: &[u8], mut out: impl FnMut(Result<Message<'_>, Fault>)) {
        if self.failed {
            return;
        }
        self.fed |= !data.is_empty();
        // A message cut across feeds: complete it from the front of `data`.
        if !self.held.is_empty() {
            let need = match self.fill_prelude(&mut data) {
                Ok(Some(n)) => n,
                Ok(None) => return,
                Err(fault) => return self.fail(fault, &mut out),
            };
            let more = (need - self.held.len()).min(data.len());
            let (head, rest) = data.split_at(more);
            self.held.extend_from_slice(head);
            data = rest;
            if self.held.len() < need {
                return;
            }
            let held = std::mem::take(&mut self.held);
            match read_message(&held) {
                Ok(message) => out(Ok(message)),
                Err(fault) => return self.fail(fault, &mut out),
            }
        }
        // Whole messages straight from `data`, borrowed.
        while !data.is_empty() {
            let total = match self.declared(data) {
                Ok(Some(total)) => total,
                Ok(None) => break,
                Err(fault) => return self.fail(fault, &mut out),
            };
            let Some(message) = data.get(..total) else {
                break;
            };
            match read_message(message) {
                Ok(m) => out(Ok(m)),
                Err(fault) => return self.fail(fault, &mut out),
            }
            data = data.get(total..).unwrap_or_default();
        }
        self.held.extend_from_slice(data);
    }

    /// Completes the held prelude from `data`; the message's declared length once known.
    fn fill_prelude(&mut self, data: &mut &[u8]) -> Result<Option<usize>, Fault> {
        if self.held.len() < 12 {
            let more = (12 - self.held.len()).min(data.len());
            let (head, rest) = data.split_at(more);
            self.held.extend_from_slice(head);
            *data = rest;
        }
        let held = std::mem::take(&mut self.held);
        let declared = self.declared(&held);
        self.held = held;
        declared
    }

    fn fail(&mut self, fault: Fault, out: &mut impl FnMut(Result<Message<'_>, Fault>)) {
        self.failed = true;
        self.held = Vec::new();
        out(Err(fault));
    }

    /// End of input: a message started and not finished is a fault.
    pub fn finish(&mut self) -> Option<Fault> {
        if self.failed || self.held.is_empty() {
            return None;
        }
        let have = self.held.len();
        self.failed = true;
        self.held = Vec::new();
        Some(Fault::Truncated { have })
    }
}

/// Writes one message: the prelude, `headers`, `payload` and both CRCs.
pub fn encode(headers: &[(&str, Value<'_>)], payload: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 12]);
    for (name, value) in headers {
        let name = name.as_bytes();
        let name = name.get(..name.len().min(255)).unwrap_or_default();
        out.push(name.len() as u8);
        out.extend_from_slice(name);
        out.push(value.type_byte());
        match value {
            Value::Bool(_) => {}
            Value::Byte(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Short(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Long(v) | Value::Timestamp(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Bytes(b) => {
                let b = b
                    .get(..b.len().min(usize::from(u16::MAX)))
                    .unwrap_or_default();
                out.extend_from_slice(&(b.len() as u16).to_be_bytes());
                out.extend_from_slice(b);
            }
            Value::String(s) => {
                let b = s.as_bytes();
                let b = b
                    .get(..b.len().min(usize::from(u16::MAX)))
                    .unwrap_or_default();
                out.extend_from_slice(&(b.len() as u16).to_be_bytes());
                out.extend_from_slice(b);
            }
            Value::Uuid(u) => out.extend_from_slice(&u[..]),
        }
    }
    let headers_len = out.len() - start - 12;
    out.extend_from_slice(payload);
    let total = out.len() - start + 4;
    let prelude = [
        (total as u32).to_be_bytes(),
        (headers_len as u32).to_be_bytes(),
    ];
    if let Some(p) = out.get_mut(start..start + 8) {
        p.get_mut(..4)
            .unwrap_or_default()
            .copy_from_slice(&prelude[0]);
        p.get_mut(4..)
            .unwrap_or_default()
            .copy_from_slice(&prelude[1]);
    }
    let prelude_crc = crc32fast::hash(out.get(start..start + 8).unwrap_or_default());
    if let Some(p) = out.get_mut(start + 8..start + 12) {
        p.copy_from_slice(&prelude_crc.to_be_bytes());
    }
    let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_be_bytes());
}

#[cfg(test)]
mod tests;
