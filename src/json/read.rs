//! Small serde building blocks for decoding frames straight into borrowed structs: strings
//! that borrow from the frame text when they hold no escapes, lenient integers, and the capture
//! of unknown keys as raw JSON. Nothing is carried across frames. Cost: one pass over the JSON,
//! plus one pass over each raw part kept for later reads (its depth check).
//!
//! Hostile input: a raw part is checked here, when its frame decodes, so that reading it later
//! cannot fail — it nests at most [`MAX_DEPTH`] levels (serde_json's own limit for the typed
//! parts) or the frame is malformed. An integer field that does not fit an `i64` makes the
//! frame malformed rather than saturate (two distinct indexes must not merge).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// A JSON string, borrowed from the frame text unless it contained escapes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Str<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Str<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'a> Str<'a> {
    /// The string's value, its escapes decoded.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The string when it was borrowed from the frame (it had no escapes), so its place in
    /// the frame is known.
    pub fn borrowed(value: &Option<Str<'a>>) -> Option<&'a str> {
        match value {
            Some(Str(Cow::Borrowed(text))) => Some(*text),
            _ => None,
        }
    }

    /// Where the string lies in `data`, the JSON text it was decoded from: the contents of its
    /// literal, between the quotes. A borrowed string is its own place; one that held escapes
    /// is found by [`locate_escaped`]. `None` when that place cannot be told.
    pub fn in_frame(value: &Option<Str<'a>>, data: &'a str) -> Option<&'a str> {
        Self::in_frame_except(value, data, &[])
    }

    /// [`in_frame`](Self::in_frame), not counting the literals `except` (see
    /// [`locate_escaped_except`]).
    pub fn in_frame_except(
        value: &Option<Str<'a>>,
        data: &'a str,
        except: &[&str],
    ) -> Option<&'a str> {
        match value {
            Some(Str(Cow::Borrowed(text))) => Some(*text),
            Some(Str(Cow::Owned(text))) => locate_escaped_except(data, text, except),
            None => None,
        }
    }
}

/// Reads a JSON string literal whose opening quote is just before `bytes`, decoding its escapes
/// in the same pass that finds its closing quote: the length of its contents (up to, not
/// including, the closing quote) and its value, borrowed when it holds no escape.
///
/// `None` when it is not a valid JSON string: a raw control character (a raw CR or LF among
/// them, so a scan never runs past the end of a line), a bad escape, a lone surrogate escape
/// (serde_json refuses those too), bytes that are not UTF-8, or no closing quote.
pub fn scan_string(bytes: &[u8]) -> Option<(usize, Cow<'_, str>)> {
    let i = plain_run(bytes, 0)?;
    if *bytes.get(i)? == b'"' {
        let text = std::str::from_utf8(bytes.get(..i)?).ok()?;
        return Some((i, Cow::Borrowed(text)));
    }
    // An escape: the contents so far are copied once, and the rest decoded into the copy.
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len().min(i + 64));
    let end = unescape_into(bytes, i, &mut out)?;
    Some((end, Cow::Owned(String::from_utf8(out).ok()?)))
}

/// [`scan_string`], decoding a string with escapes into `buf` (cleared first; its room is
/// kept from call to call) rather than into a new allocation.
pub fn scan_string_in<'d>(bytes: &'d [u8], buf: &'d mut Vec<u8>) -> Option<(usize, &'d str)> {
    let i = plain_run(bytes, 0)?;
    if *bytes.get(i)? == b'"' {
        return Some((i, std::str::from_utf8(bytes.get(..i)?).ok()?));
    }
    buf.clear();
    let end = unescape_into(bytes, i, buf)?;
    Some((end, std::str::from_utf8(buf).ok()?))
}

/// Decodes the contents of the string in `bytes` (whose first `i` bytes are plain) into `out`;
/// where its closing quote is. The bytes are not checked to be UTF-8 here: the caller checks
/// `out`.
fn unescape_into(bytes: &[u8], mut i: usize, out: &mut Vec<u8>) -> Option<usize> {
    out.extend_from_slice(bytes.get(..i)?);
    loop {
        // The plain bytes up to the next quote or backslash, copied at once (a byte at a time
        // was a tenth of a long Gemini chunk's cost).
        let end = plain_run(bytes, i)?;
        out.extend_from_slice(bytes.get(i..end)?);
        i = end;
        if *bytes.get(i)? == b'"' {
            return Some(i);
        }
        let escape = *bytes.get(i + 1)?;
        i += 2;
        let byte = match escape {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let (c, len) = unicode_escape(bytes.get(i..)?)?;
                i += len;
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                continue;
            }
            _ => return None,
        };
        out.push(byte);
    }
}

/// Where the run of plain string bytes (not a quote, a backslash or a control character) that
/// starts at `from` ends; `None` if the bytes end first.
///
/// Eight bytes at a time (each word tested at once for a quote, a backslash and a byte below
/// 0x20: the "has a zero byte" test on the word XORed with each, and on the word less 0x20 in
/// each byte). The lowest flagged byte of a word is exact (a false flag can only follow a true
/// one, where a borrow ran on), so the end is the word's lowest flag; the last bytes short of
/// a word are tested one at a time. A run longer than [`SHORT_RUN`] bytes (a document, a
/// result's encrypted content) goes on by [`long_run`]. Always inlined: with `long_run` apart,
/// the compiler stopped inlining it into the templates' walk and the cursor (1-2% of a short
/// stream's instructions).
#[inline(always)]
pub(crate) fn plain_run(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    let mut at = 0;
    for _ in 0..SHORT_RUN / 8 {
        let Some(word) = rest.get(at..at + 8) else {
            // The last bytes short of a word, one at a time.
            let len = at
                + rest
                    .get(at..)?
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
            return match rest.get(len) {
                Some(b'"' | b'\\') => Some(from + len),
                _ => None, // a raw control character
            };
        };
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w);
        let quote = x ^ (ONES * u64::from(b'"'));
        let slash = x ^ (ONES * u64::from(b'\\'));
        let found = ((quote.wrapping_sub(ONES) & !quote)
            | (slash.wrapping_sub(ONES) & !slash)
            | (x.wrapping_sub(ONES * 0x20) & !x))
            & HIGH;
        if found != 0 {
            // The byte's index in the word: little-endian, the first byte is the lowest.
            let len = at + (found.trailing_zeros() / 8) as usize;
            return match rest.get(len) {
                Some(b'"' | b'\\') => Some(from + len),
                _ => None, // a raw control character
            };
        }
        at += 8;
    }
    long_run(rest.get(at..)?).map(|len| from + at + len)
}

/// A byte's worth of 1 in each byte of a word, and its high bit in each: the word-at-a-time
/// tests of [`plain_run`] and [`long_run`].
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// How many plain bytes [`plain_run`] reads a word at a time before it takes the run for a
/// long one ([`long_run`]): most strings of a stream (a delta's text, a key, an id) end
/// sooner.
const SHORT_RUN: usize = 64;

/// [`plain_run`] of a long run, from its start: `memchr2` (SIMD, tens of bytes an
/// instruction) finds the next quote or backslash, and the bytes before it are checked for a
/// control byte in blocks the compiler vectorises. A fifth of the instructions a byte of the
/// word-at-a-time test.
#[inline(never)]
fn long_run(rest: &[u8]) -> Option<usize> {
    let end = memchr::memchr2(b'"', b'\\', rest)?;
    let run = rest.get(..end)?;
    let mut blocks = run.chunks_exact(32);
    let tail = blocks.remainder();
    let mut control = blocks.any(|block| block.iter().fold(false, |seen, &b| seen | (b < 0x20)));
    // The last bytes short of a block, a word at a time, then one at a time.
    let words = tail.chunks_exact(8);
    let bytes = words.remainder();
    for word in words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w);
        control |= x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0;
    }
    control |= bytes.iter().any(|&b| b < 0x20);
    (!control).then_some(end)
}

/// [`scan_string`] for a string whose value nobody reads (a padding): only where its closing
/// quote is. Its escapes are checked as `scan_string` checks them, its bytes are not (a byte
/// that is not UTF-8 would become U+FFFD in the framer's text, in a value nobody reads).
pub fn skip_string(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    loop {
        // The plain run up to the next quote or backslash, a word at a time.
        i = plain_run(bytes, i)?;
        if *bytes.get(i)? == b'"' {
            return Some(i);
        }
        i += 2;
        match *bytes.get(i - 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
            b'u' => i += unicode_escape(bytes.get(i..)?)?.1,
            _ => return None,
        }
    }
}

/// The length of the JSON number token (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`) at
/// the start of `bytes`.
pub fn num_len(bytes: &[u8]) -> Option<usize> {
    let digits = |from: usize| {
        bytes
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let sign = usize::from(bytes.first() == Some(&b'-'));
    let int = digits(sign);
    let mut end = match (int, bytes.get(sign)) {
        (0, _) => return None,
        (1.., Some(b'0')) if int > 1 => return None, // a leading zero
        _ => sign + int,
    };
    if bytes.get(end) == Some(&b'.') {
        let fraction = digits(end + 1);
        if fraction == 0 {
            return None;
        }
        end += 1 + fraction;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-')));
        let exponent = digits(end + 1 + sign);
        if exponent == 0 {
            return None;
        }
        end += 1 + sign + exponent;
    }
    Some(end)
}

/// The character of a `\uXXXX` escape whose `XXXX` starts `bytes` (a high surrogate must be
/// followed by `\u` and a low one), and how many bytes it took after the `\u`.
fn unicode_escape(bytes: &[u8]) -> Option<(char, usize)> {
    let hex4 = |b: &[u8]| -> Option<u32> {
        let mut value = 0u32;
        for &d in b.get(..4)? {
            let nibble = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return None,
            };
            value = value << 4 | u32::from(nibble);
        }
        Some(value)
    };
    let high = hex4(bytes)?;
    match high {
        0xD800..=0xDBFF => {
            if bytes.get(4..6)? != b"\\u" {
                return None;
            }
            let low = hex4(bytes.get(6..)?)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return None;
            }
            let c = char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?;
            Some((c, 10))
        }
        0xDC00..=0xDFFF => None,
        _ => Some((char::from_u32(high)?, 4)),
    }
}

/// Where the value string literal of the JSON text `data` whose escapes decode to `value` lies
/// (the contents between its quotes): for a string that a decode had to copy, so that a frame
/// template can still leave it open. Only literals holding an escape are candidates (one
/// without would have been borrowed), keys are not; `None` unless exactly one matches, so the
/// place is never a guess. One pass over `data`, decoding only the literals that hold escapes;
/// run when a template is made, not per hit.
pub fn locate_escaped<'a>(data: &'a str, value: &str) -> Option<&'a str> {
    locate_escaped_except(data, value, &[])
}

/// [`locate_escaped`], not counting the literals whose contents are `except` (slices of
/// `data` that are holes of their own).
pub fn locate_escaped_except<'a>(data: &'a str, value: &str, except: &[&str]) -> Option<&'a str> {
    let bytes = data.as_bytes();
    let mut at = 0;
    let mut found = None;
    // Outside strings valid JSON holds no quote: each quote after a literal opens the next.
    while let Some(quote) = memchr::memchr(b'"', bytes.get(at..)?) {
        let start = at + quote + 1;
        let rest = bytes.get(start..)?;
        // The literal's end is found without decoding it (a plain run, then its escapes
        // checked): only a literal that holds an escape and whose length allows `value` is
        // decoded. An escape is 2 to 12 bytes for 1 to 4 of UTF-8, so the literal is no shorter
        // than `value` and at most six times as long.
        let plain = plain_run(rest, 0)?;
        let len = if *rest.get(plain)? == b'"' {
            plain
        } else {
            skip_string(rest)?
        };
        let end = start + len;
        at = end + 1;
        if len == plain || len < value.len() || len > value.len().saturating_mul(6) {
            continue;
        }
        let Cow::Owned(decoded) = scan_string(rest)?.1 else {
            continue;
        };
        let is_key = bytes
            .get(at..)
            .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()))
            == Some(&b':');
        let excepted = || {
            except
                .iter()
                .any(|e| e.as_ptr() == bytes.as_ptr().wrapping_add(start) && e.len() == len)
        };
        if !is_key && decoded == value && !excepted() {
            if found.is_some() {
                return None; // two places: neither is known to be the one
            }
            found = Some((start, end));
        }
    }
    let (start, end) = found?;
    data.get(start..end)
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// Deepest nesting of arrays and objects a frame may hold, in its typed parts (serde_json's
/// recursion limit) and in each raw part kept as JSON text. Deeper is a malformed frame.
pub const MAX_DEPTH: usize = 128;

/// Whether the JSON value `text` nests arrays and objects at most [`MAX_DEPTH`] levels deep.
/// One pass; brackets inside strings do not count.
pub fn depth_ok(text: &str) -> bool {
    // The depth never exceeds the number of opening brackets (those inside strings counted
    // too): nearly every value has fewer than the limit, and they are counted at memchr speed
    // (the byte-by-byte walk below was a third of decoding a 5 KB `response.completed`).
    let openers = memchr::memchr2_iter(b'[', b'{', text.as_bytes());
    if openers.take(MAX_DEPTH + 1).count() <= MAX_DEPTH {
        return true;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in text.as_bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return false;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    true
}

/// Reads the next value of `map` as raw JSON text, checked for depth (see [`depth_ok`]).
pub fn raw<'a, A: MapAccess<'a>>(map: &mut A) -> Result<&'a RawValue, A::Error> {
    let value: &'a RawValue = map.next_value()?;
    if !depth_ok(value.get()) {
        return Err(de::Error::custom(format_args!(
            "JSON nested deeper than {MAX_DEPTH} levels"
        )));
    }
    Ok(value)
}

/// A string value, or `None` for any other JSON value (which must still be valid JSON): for
/// fields whose other types carry nothing to keep (padding, an error's message).
pub fn str_or_skip<'a, A: MapAccess<'a>>(map: &mut A) -> Result<Option<Str<'a>>, A::Error> {
    let value: &'a RawValue = map.next_value()?;
    let text = value.get();
    if !text.starts_with('"') {
        return Ok(None);
    }
    serde_json::from_str::<Str<'a>>(text)
        .map(Some)
        .map_err(de::Error::custom)
}

/// An integer that some servers send as a float (`1700000000.0`); fractions are truncated.
/// A value outside the `i64` range is an error (saturating would merge distinct indexes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Int(pub i64);

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v).map(Int).map_err(|_| out_of_range(v))
            }
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                // -2^63 is exact as an f64; 2^63 is the first value past i64::MAX.
                if v >= -(i64::MAX as f64) - 1.0 && v < i64::MAX as f64 {
                    Ok(Int(v as i64))
                } else {
                    Err(out_of_range(v))
                }
            }
        }
        d.deserialize_any(V)
    }
}

fn out_of_range<E: de::Error>(v: impl fmt::Display) -> E {
    E::custom(format_args!("integer {v} out of range (64-bit signed)"))
}

/// A JSON value's text where it lies in its document: checked as JSON (by serde_json, or by
/// the strict cursor, which only takes what serde_json takes) and at most [`MAX_DEPTH`] deep.
/// A `&RawValue` can only be made by serde_json reading the value again; this is the text the
/// one-pass readers (`crate::dialect::gemini`, `crate::dialect::chat`) have already read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// `text`, a JSON value checked as [`Raw`] says (the caller checked it).
    pub(crate) fn checked(text: &'a str) -> Raw<'a> {
        Raw(text)
    }

    /// The value's text.
    pub fn get(&self) -> &'a str {
        self.0
    }
}

/// Raw JSON values of keys a struct does not know, kept in arrival order.
#[derive(Debug, Default)]
pub struct Extra<'a>(pub Vec<(Str<'a>, Raw<'a>)>);

impl<'a> Extra<'a> {
    /// Reads the value of `key` (already read) as raw JSON and keeps it.
    pub fn keep<A: MapAccess<'a>>(&mut self, key: Str<'a>, map: &mut A) -> Result<(), A::Error> {
        let value = raw(map)?;
        self.0.push((key, Raw(value.get())));
        Ok(())
    }

    /// Whether no key was kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The kept keys as the text of one JSON object.
    pub fn to_json(&self) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        let mut out = String::from("{");
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            super::write::push_str(&mut out, key.as_str());
            out.push(':');
            out.push_str(value.get());
        }
        out.push('}');
        Some(out)
    }
}

/// Reads an optional raw value, treating JSON `null` as absent.
pub fn raw_opt<'a, A: MapAccess<'a>>(map: &mut A) -> Result<Option<&'a RawValue>, A::Error> {
    let value = raw(map)?;
    Ok((value.get() != "null").then_some(value))
}

/// A string, or the raw JSON text of any other value (some servers send tool arguments as an
/// object instead of a JSON string).
pub fn str_or_raw<'a, A: MapAccess<'a>>(map: &mut A) -> Result<Option<Str<'a>>, A::Error> {
    let value = raw(map)?;
    let text = value.get();
    if text == "null" {
        return Ok(None);
    }
    if text.starts_with('"') {
        return serde_json::from_str::<Str<'a>>(text)
            .map(Some)
            .map_err(de::Error::custom);
    }
    Ok(Some(Str(Cow::Borrowed(text))))
}

/// Implements `Deserialize` for a borrowed struct by visiting its JSON object key by key:
/// `map_struct!(Type, "what it is", |value, key, map| { match key.as_str() { ... } })`.
/// The body reads each key's value from `map` (a `MapAccess`) and may use `?`.
macro_rules! map_struct {
    ($ty:ident, $what:literal, |$value:ident, $key:ident, $map:ident| $body:block) => {
        impl<'de> serde::Deserialize<'de> for $ty<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                // The visitor fills a struct in place: returned through serde's layers by
                // value, a decoded event (a few hundred bytes) was copied at each of them
                // (a quarter of the time of a small frame off the fast path).
                struct V<'a, 'de>(&'a mut $ty<'de>);
                impl<'a, 'de> serde::de::Visitor<'de> for V<'a, 'de> {
                    type Value = ();
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut $map: A,
                    ) -> Result<(), A::Error> {
                        let $value = self.0;
                        while let Some($key) = $map.next_key::<$crate::json::read::Str<'de>>()? {
                            $body
                        }
                        Ok(())
                    }
                }
                let mut value = $ty::default();
                d.deserialize_map(V(&mut value))?;
                Ok(value)
            }
        }
    };
}
pub(crate) use map_struct;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_borrows_without_escapes() {
        let s: Str = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(s.0, Cow::Borrowed("plain")));
        let s: Str = serde_json::from_str(r#""a\nb""#).unwrap();
        assert_eq!(s.as_str(), "a\nb");
    }

    #[test]
    fn int_accepts_floats() {
        let i: Int = serde_json::from_str("1700000000.0").unwrap();
        assert_eq!(i, Int(1_700_000_000));
    }

    #[test]
    fn int_out_of_range_is_an_error() {
        for text in [
            "9223372036854775808",
            "18446744073709551616",
            "9.3e18",
            "-9.3e18",
        ] {
            assert!(serde_json::from_str::<Int>(text).is_err(), "{text}");
        }
        let max: Int = serde_json::from_str("9223372036854775807").unwrap();
        assert_eq!(max, Int(i64::MAX));
        let min: Int = serde_json::from_str("-9223372036854775808").unwrap();
        assert_eq!(min, Int(i64::MIN));
    }

    #[test]
    fn depth_is_checked_outside_strings() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(!depth_ok(&deep));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(depth_ok(&ok));
        let quoted = format!("\"{}\\\"\"", "[".repeat(MAX_DEPTH + 1));
        assert!(depth_ok(&quoted));
        // More openers than the limit but shallow (the count alone cannot tell): walked.
        let wide = format!("[{}[]]", "[],{}".repeat(MAX_DEPTH));
        assert!(depth_ok(&wide));
        let deep_after_wide = format!("[{}{}]", "[],".repeat(MAX_DEPTH), &deep);
        assert!(!depth_ok(&deep_after_wide));
        let deep_in_object = format!("{{\"a\":{}}}", &deep);
        assert!(!depth_ok(&deep_in_object));
    }

    proptest::proptest! {
        /// `plain_run` ends where a byte-at-a-time scan ends, with any number of stops in a
        /// word (the lowest one found from the word's flags) and bytes next to every edge of
        /// the word's tests (a borrow from one lane runs into the next).
        #[test]
        fn plain_run_takes_the_first_of_many_stops(
            bytes in proptest::collection::vec(
                proptest::sample::select(vec![
                    0u8, 1, 0x1f, 0x20, 0x21, b'"', b'#', b'\\', b']', b'[', 0x7f, 0x80, 0xa0, 0xff, b'a',
                ]),
                0..40,
            ),
            from in 0usize..9,
            // A long run of plain bytes before them (`long_run`'s part), perhaps none.
            lead in proptest::sample::select(vec![0usize, 31, 32, 33, 40, 63, 64, 65, 200]),
        ) {
            let bytes: Vec<u8> = std::iter::repeat_n(b'a', lead).chain(bytes).collect();
            let reference = bytes.get(from..).and_then(|rest| {
                let len = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
                matches!(rest[len], b'"' | b'\\').then_some(from + len)
            });
            proptest::prop_assert_eq!(plain_run(&bytes, from), reference);
        }
    }

    /// `plain_run`'s word-at-a-time scan ends where a byte-at-a-time scan ends: every byte
    /// that ends a run (a quote, a backslash, each control byte) in every lane of the first
    /// three words, among plain bytes at the edges of each test (0x20, 0x7f, 0x80, 0xa0, 0xff,
    /// and the bytes next to the quote and the backslash).
    #[test]
    fn plain_run_ends_where_a_byte_scan_ends() {
        let reference = |bytes: &[u8], from: usize| -> Option<usize> {
            let rest = bytes.get(from..)?;
            let len = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
            matches!(rest[len], b'"' | b'\\').then_some(from + len)
        };
        let stops: Vec<u8> = (0u8..0x20).chain([b'"', b'\\']).collect();
        for filler in [0x20u8, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xa0, 0xff] {
            for len in (0..=24).chain([31, 32, 33, 39, 40, 41, 64, 65, 100]) {
                for at in 0..len {
                    for &stop in &stops {
                        let mut bytes = vec![filler; len];
                        bytes[at] = stop;
                        for from in [0, 1, 7] {
                            assert_eq!(
                                plain_run(&bytes, from),
                                reference(&bytes, from),
                                "filler {filler:#x} len {len} stop {stop:#x} at {at} from {from}"
                            );
                        }
                    }
                }
                let plain = vec![filler; len];
                assert_eq!(plain_run(&plain, 0), None); // no end: the bytes end first
            }
        }
    }

    /// `scan_string` decodes what serde_json decodes, and refuses what it refuses.
    #[test]
    fn scan_string_is_serde_json_in_one_pass() {
        let cases = [
            r#"plain""#,
            r#"""#,
            r#"a\"b\\c\/d""#,
            r#"\b\f\n\r\t""#,
            r#"caf\u00e9 \u00E9""#,
            r#"\ud83d\ude00 and \uD83D\uDE00""#,
            r#"\u0000\u001f""#,
            "h\u{e9}\u{1F600} raw\"",
            r#"\ud800""#,
            r#"\ud800\u0041""#,
            r#"\udc00""#,
            r#"\ud83d\ude0""#,
            r#"\x""#,
            r#"\u12g4""#,
            "a\u{1}\"",
            r#"no closing quote"#,
            r#"ends in a backslash\"#,
        ];
        for contents in cases {
            let literal = format!("\"{contents}");
            let expected = serde_json::from_str::<String>(&literal).ok();
            let got = scan_string(contents.as_bytes()).map(|(len, value)| {
                assert_eq!(contents.as_bytes().get(len), Some(&b'"'), "{contents:?}");
                value.into_owned()
            });
            assert_eq!(got, expected, "{contents:?}");
            // A padding's skip ends where the scan ends, and refuses what it refuses.
            let skipped = skip_string(contents.as_bytes());
            assert_eq!(
                skipped,
                scan_string(contents.as_bytes()).map(|(len, _)| len)
            );
        }
        // A skip takes bytes that are not UTF-8 (the framer's text would hold U+FFFD).
        assert_eq!(skip_string(b"a\xffb\""), Some(3));
        // Borrowed exactly when there is no escape.
        assert!(matches!(
            scan_string(b"abc\""),
            Some((3, Cow::Borrowed("abc")))
        ));
        assert!(matches!(scan_string(b"a\\nc\""), Some((4, Cow::Owned(_)))));
        // Bytes that are not UTF-8, before or after an escape.
        assert_eq!(scan_string(b"a\xffb\""), None);
        assert_eq!(scan_string(b"\\na\xffb\""), None);
    }

    #[test]
    fn locate_escaped_finds_the_one_value_literal() {
        let data = r#"{"a":"x\ny","b\n":"z","c":["q\"",1]}"#;
        let found = locate_escaped(data, "x\ny").unwrap();
        assert_eq!(found, r"x\ny");
        let at = found.as_ptr() as usize - data.as_ptr() as usize;
        assert_eq!(&data[at - 1..at], "\"");
        assert_eq!(locate_escaped(data, "q\""), Some(r#"q\""#));
        // A key is not a value; a plain literal would have been borrowed.
        assert_eq!(locate_escaped(data, "b\n"), None);
        assert_eq!(locate_escaped(data, "z"), None);
        // Two places: none.
        assert_eq!(locate_escaped(r#"{"a":"\n","b":"\n"}"#, "\n"), None);
        // Two spellings of one string are two places too.
        assert_eq!(locate_escaped(r#"{"a":"\u00e9\n","b":"é\n"}"#, "é\n"), None);
        assert_eq!(
            locate_escaped(r#"{"a":"\u00e9\n","b":"é"}"#, "é\n"),
            Some(r"\u00e9\n")
        );
    }

    /// The reading that decodes every literal, for the proptest below.
    fn locate_by_decoding_all<'a>(data: &'a str, value: &str) -> Option<&'a str> {
        let bytes = data.as_bytes();
        let (mut at, mut found) = (0, None);
        while let Some(quote) = memchr::memchr(b'"', bytes.get(at..)?) {
            let start = at + quote + 1;
            let (len, decoded) = scan_string(bytes.get(start..)?)?;
            at = start + len + 1;
            let is_key = bytes[at..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':');
            if matches!(decoded, Cow::Owned(ref d) if d == value) && !is_key {
                if found.is_some() {
                    return None;
                }
                found = Some(&data[start..start + len]);
            }
        }
        found
    }

    proptest::proptest! {
        /// Finding a literal's end before decoding it (and decoding only literals of a length
        /// that can hold the value) finds what decoding every literal finds.
        #[test]
        fn locate_escaped_is_the_full_decode(
            values in proptest::collection::vec(
                proptest::string::string_regex("[ab\n\"\\\\é𝄞\u{1}]{0,6}").unwrap(), 1..6),
            pick in 0usize..6,
        ) {
            let members: Vec<String> = values
                .iter()
                .enumerate()
                .map(|(i, v)| format!("\"k{i}\": {}", serde_json::to_string(v).unwrap()))
                .collect();
            let data = format!("{{{}}}", members.join(", "));
            let value = &values[pick % values.len()];
            proptest::prop_assert_eq!(
                locate_escaped(&data, value),
                locate_by_decoding_all(&data, value)
            );
            // And a spelling with \u escapes, which is six bytes for one.
            let spelled = data.replace('a', "\\u0061");
            proptest::prop_assert_eq!(
                locate_escaped(&spelled, value),
                locate_by_decoding_all(&spelled, value)
            );
        }
    }
}
