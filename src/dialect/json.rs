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

impl<'a> Str<'a> {
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
}

impl<'de> Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
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
        d.deserialize_str(V)
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

/// Raw JSON values of keys a struct does not know, kept in arrival order.
#[derive(Debug, Default)]
pub struct Extra<'a>(pub Vec<(Str<'a>, &'a RawValue)>);

impl<'a> Extra<'a> {
    /// Reads the value of `key` (already read) as raw JSON and keeps it.
    pub fn keep<A: MapAccess<'a>>(&mut self, key: Str<'a>, map: &mut A) -> Result<(), A::Error> {
        let value = raw(map)?;
        self.0.push((key, value));
        Ok(())
    }

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
            // Keys came out of JSON, so re-encoding one cannot fail.
            out.push_str(&serde_json::to_string(key.as_str()).unwrap_or_default());
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
                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $ty<'de>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        mut $map: A,
                    ) -> Result<Self::Value, A::Error> {
                        let mut $value = $ty::default();
                        while let Some($key) = $map.next_key::<$crate::dialect::json::Str<'de>>()? {
                            $body
                        }
                        Ok($value)
                    }
                }
                d.deserialize_map(V)
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
}
