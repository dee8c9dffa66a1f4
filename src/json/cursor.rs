//! A strict JSON reader over a document's bytes, for decoders that read a shape they know in
//! one pass (`crate::dialect::gemini::decode`): object keys, strings (borrowed when they hold
//! no escape), small integers, booleans, and any other value skipped, checked and handed back
//! as its text.
//!
//! It only says yes to what serde_json accepts too, and reads it as serde_json would; anything
//! it is not sure of (a key with an escape, a number with a fraction where an integer is
//! wanted, nesting past [`DEPTH`], a value of another type than the field's) is `None`: the
//! caller then decodes the document with serde_json, which accepts it or names the error. So a
//! `None` is never an answer, only "not here". Nothing is carried across documents; each byte
//! is read once (a skipped string at word speed).

use std::borrow::Cow;

use super::read::{num_len, plain_run, scan_string, skip_string};

/// How deep a skipped value may nest here; deeper goes to serde_json (which skips a value it
/// keeps raw without a depth limit of its own: the decoders' `MAX_DEPTH` checks bound those).
pub const DEPTH: usize = 64;

/// A position in a JSON document.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Cursor {
            bytes: text.as_bytes(),
            text,
            at: 0,
        }
    }

    /// Skips JSON white space (space, tab, line feed, carriage return).
    #[inline]
    pub fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next byte after white space, not taken.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.at).copied()
    }

    /// Takes `byte` after white space.
    #[inline]
    pub fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Whether only white space is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Where the next value starts (white space taken): a mark for [`since`](Self::since).
    pub fn mark(&mut self) -> usize {
        self.ws();
        self.at
    }

    /// The document's text from `mark` to the cursor.
    pub fn since(&self, mark: usize) -> Option<&'a str> {
        self.text.get(mark..self.at)
    }

    /// Reads `{`; then [`next_key`](Self::next_key) reads each key until the object closes.
    pub fn open_object(&mut self) -> Option<()> {
        self.eat(b'{')
    }

    /// The next key of an object opened by [`open_object`](Self::open_object) (its colon
    /// taken), or `Some(None)` when the object closes. `first` is whether no key was read yet.
    /// A key with an escape is `None`, as is a malformed object: serde_json's to read.
    pub fn next_key(&mut self, first: &mut bool) -> Option<Option<&'a str>> {
        match self.peek() {
            Some(b'}') => {
                self.at += 1;
                return Some(None);
            }
            Some(b',') if !*first => {
                self.at += 1;
                self.ws();
            }
            Some(b'"') if *first => {}
            _ => return None,
        }
        *first = false;
        if self.bytes.get(self.at) != Some(&b'"') {
            return None;
        }
        let start = self.at + 1;
        let end = plain_run(self.bytes, start)?;
        if self.bytes.get(end) != Some(&b'"') {
            return None; // an escape
        }
        let key = self.text.get(start..end)?;
        self.at = end + 1;
        self.eat(b':')?;
        Some(Some(key))
    }

    /// Reads an object, each member by `each` (given its key; it reads the value).
    pub fn members(
        &mut self,
        mut each: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.open_object()?;
        let mut first = true;
        while let Some(key) = self.next_key(&mut first)? {
            each(self, key)?;
        }
        Some(())
    }

    /// Reads an array (`null`: none), each item by `each`.
    pub fn items<T>(&mut self, mut each: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        if self.null()? {
            return Some(Vec::new());
        }
        self.open_array()?;
        let mut items = Vec::new();
        let mut first = true;
        while self.next_item(&mut first)? {
            items.push(each(self)?);
        }
        Some(items)
    }

    /// Reads `[`; then [`next_item`](Self::next_item) says whether another item follows.
    pub fn open_array(&mut self) -> Option<()> {
        self.eat(b'[')
    }

    /// Whether another item of an array opened by [`open_array`](Self::open_array) follows
    /// (its comma taken); `Some(false)` when the array closes.
    pub fn next_item(&mut self, first: &mut bool) -> Option<bool> {
        match self.peek()? {
            b']' => {
                self.at += 1;
                Some(false)
            }
            b',' if !*first => {
                self.at += 1;
                Some(true)
            }
            _ if *first => {
                *first = false;
                Some(true)
            }
            _ => None,
        }
    }

    /// A string value: its value (borrowed when it holds no escape) and its literal's contents
    /// in the document (between the quotes).
    pub fn string(&mut self) -> Option<(Cow<'a, str>, &'a str)> {
        self.eat(b'"')?;
        let start = self.at;
        // The document is text already: a plain string is a slice of it (no UTF-8 check).
        let end = plain_run(self.bytes, start)?;
        if self.bytes.get(end) == Some(&b'"') {
            self.at = end + 1;
            let value = self.text.get(start..end)?;
            return Some((Cow::Borrowed(value), value));
        }
        let (len, value) = scan_string(self.bytes.get(start..)?)?;
        self.at = start + len + 1;
        Some((value, self.text.get(start..start + len)?))
    }

    /// Whether the next value is `null` (taken when it is).
    pub fn null(&mut self) -> Option<bool> {
        if self.peek()? == b'n' {
            self.literal(b"null")?;
            return Some(true);
        }
        Some(false)
    }

    /// A boolean value.
    pub fn boolean(&mut self) -> Option<bool> {
        match self.peek()? {
            b't' => self.literal(b"true").map(|()| true),
            b'f' => self.literal(b"false").map(|()| false),
            _ => None,
        }
    }

    /// An integer value written as one (an optional minus, digits, no leading zero, no
    /// fraction or exponent) within the `i64` range.
    pub fn integer(&mut self) -> Option<i64> {
        self.ws();
        let start = self.at;
        let end = self.number_end()?;
        let text = self.text.get(start..end)?;
        if text.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
            return None;
        }
        let value = text.parse::<i64>().ok()?;
        self.at = end;
        Some(value)
    }

    /// Skips any value, checked as JSON, and returns its text.
    pub fn value(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.at;
        self.skip(0)?;
        self.text.get(start..self.at)
    }

    /// A value read by serde_json as a `RawValue` (for a value kept whole as one: serde_json
    /// checks it once, and the cursor moves past it).
    pub fn raw_value(&mut self) -> Option<&'a serde_json::value::RawValue> {
        self.ws();
        let rest = self.text.get(self.at..)?;
        let mut values = serde_json::Deserializer::from_str(rest).into_iter();
        let value: &'a serde_json::value::RawValue = values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(value)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// Where the number at the cursor ends, checked against JSON's grammar.
    fn number_end(&self) -> Option<usize> {
        Some(self.at + num_len(self.bytes.get(self.at..)?)?)
    }

    fn skip(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                let len = skip_string(self.bytes.get(self.at..)?)?;
                self.at += len + 1;
            }
            b'{' => {
                if depth >= DEPTH {
                    return None;
                }
                self.at += 1;
                let mut first = true;
                while self.next_key(&mut first)?.is_some() {
                    self.skip(depth + 1)?;
                }
            }
            b'[' => {
                if depth >= DEPTH {
                    return None;
                }
                self.at += 1;
                let mut first = true;
                while self.next_item(&mut first)? {
                    self.skip(depth + 1)?;
                }
            }
            b't' => self.literal(b"true")?,
            b'f' => self.literal(b"false")?,
            b'n' => self.literal(b"null")?,
            _ => self.at = self.number_end()?,
        }
        Some(())
    }
}

/// The JSON value `text` starts with (no white space before it), checked as JSON: its text;
/// `None` when there is none or the reader is not sure (the caller's decoder then reads it).
pub fn value_at_start(text: &str) -> Option<&str> {
    let mut c = Cursor::new(text);
    if matches!(c.bytes.first(), None | Some(b' ' | b'\t' | b'\n' | b'\r')) {
        return None;
    }
    c.skip(0)?;
    text.get(..c.at)
}

/// The entries of the JSON object `text` in order (duplicate keys kept), each value as its
/// text, read in one pass; `None` when `text` is not an object or the reader is not sure
/// (`crate::json::tree::object_entries` then asks serde_json).
pub fn entries(text: &str) -> Option<Vec<(Cow<'_, str>, &str)>> {
    let mut c = Cursor::new(text);
    let mut out = Vec::with_capacity(8);
    c.members(|c, key| {
        out.push((Cow::Borrowed(key), c.value()?));
        Some(())
    })?;
    c.at_end().then_some(out)
}

/// The fields of the one-pass chunk readers (`crate::dialect::chat`, `crate::dialect::gemini`),
/// each read as the serde readers beside them read it (`crate::json::read`): `None` leaves the
/// chunk to serde_json.
pub mod field {
    use std::borrow::Cow;

    use serde_json::value::RawValue;

    use super::Cursor;
    use crate::json::read::{depth_ok, Extra, Raw, Str};

    /// A string or `null`.
    pub fn opt_str<'a>(c: &mut Cursor<'a>) -> Option<Option<Str<'a>>> {
        if c.null()? {
            return Some(None);
        }
        Some(Some(Str(c.string()?.0)))
    }

    /// An integer or `null`.
    pub fn opt_int(c: &mut Cursor<'_>) -> Option<Option<i64>> {
        if c.null()? {
            return Some(None);
        }
        c.integer().map(Some)
    }

    /// Any value as raw JSON, as `json::read::raw` keeps it (checked for depth).
    pub fn raw<'a>(c: &mut Cursor<'a>) -> Option<&'a RawValue> {
        let value = c.raw_value()?;
        depth_ok(value.get()).then_some(value)
    }

    /// Any value as raw JSON, `null` as absence (`json::read::raw_opt`).
    pub fn raw_opt<'a>(c: &mut Cursor<'a>) -> Option<Option<&'a RawValue>> {
        if c.null()? {
            return Some(None);
        }
        raw(c).map(Some)
    }

    /// `key`'s value kept as an unknown key's (`Extra::keep`): the text the cursor read,
    /// checked for depth.
    pub fn keep<'a>(extra: &mut Extra<'a>, key: &'a str, c: &mut Cursor<'a>) -> Option<()> {
        let text = c.value()?;
        extra.0.push((Str(Cow::Borrowed(key)), Raw::checked(text)));
        depth_ok(text).then_some(())
    }
}

/// The value of the JSON string `text` (white space around it allowed), read in one pass;
/// `None` when it is not a string or the reader is not sure.
pub fn string(text: &str) -> Option<Cow<'_, str>> {
    let mut c = Cursor::new(text);
    let (value, _) = c.string()?;
    c.at_end().then_some(value)
}

#[cfg(test)]
pub(crate) mod tests;
