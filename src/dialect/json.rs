//! Small serde building blocks for decoding frames straight into borrowed structs: strings
//! that borrow from the frame text when they hold no escapes, lenient integers, and the capture
//! of unknown keys as raw JSON. Nothing is carried across frames. Cost: one pass over the JSON.

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

/// An integer that some servers send as a float (`1700000000.0`); fractions are truncated.
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
                Ok(Int(i64::try_from(v).unwrap_or(i64::MAX)))
            }
            #[allow(clippy::cast_possible_truncation)]
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Int, E> {
                Ok(Int(v as i64)) // saturating cast; NaN becomes 0
            }
        }
        d.deserialize_any(V)
    }
}

/// Raw JSON values of keys a struct does not know, kept in arrival order.
#[derive(Debug, Default)]
pub struct Extra<'a>(pub Vec<(Str<'a>, &'a RawValue)>);

impl<'a> Extra<'a> {
    /// Reads the value of `key` (already read) as raw JSON and keeps it.
    pub fn keep<A: MapAccess<'a>>(&mut self, key: Str<'a>, map: &mut A) -> Result<(), A::Error> {
        let value: &'a RawValue = map.next_value()?;
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
    let value: &'a RawValue = map.next_value()?;
    Ok((value.get() != "null").then_some(value))
}

/// A string, or the raw JSON text of any other value (some servers send tool arguments as an
/// object instead of a JSON string).
pub fn str_or_raw<'a, A: MapAccess<'a>>(map: &mut A) -> Result<Option<Str<'a>>, A::Error> {
    let value: &'a RawValue = map.next_value()?;
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
}
