//! Where a fold writes its result: [`Build`], a builder of JSON-shaped values that a fold's
//! result is written into bottom-up, so the one rule for a result's shape builds either an
//! [`Out`] tree ([`OutBuild`], for Rust callers and tests) or, in `py`, the Python objects
//! straight away (no tree built, copied and dropped on the way: issue 47).
//!
//! Carries nothing across calls. Cost: what the builder's values cost; [`OutBuild`] copies a
//! raw JSON text it is given, as [`Out::json`] does.

use std::convert::Infallible;

use super::tree::{json_string, object_map, Json, Map, Out};

/// A builder of a result's values. Keys are set as [`Map::set`] sets them: a key set again
/// keeps its place and takes the new value, as a Python `dict` does.
pub trait Build {
    /// A value built.
    type Value;
    /// An object under construction.
    type Map;
    /// What building can fail with (Python's `MemoryError`; never for a tree).
    type Error;

    /// JSON `null`.
    fn null(&mut self) -> Result<Self::Value, Self::Error>;
    /// An integer.
    fn int(&mut self, value: i64) -> Result<Self::Value, Self::Error>;
    /// `true` or `false`.
    fn bool(&mut self, value: bool) -> Result<Self::Value, Self::Error>;
    /// A string.
    fn str(&mut self, text: &str) -> Result<Self::Value, Self::Error>;
    /// A string, or `null` for `None`.
    fn opt_str(&mut self, text: Option<&str>) -> Result<Self::Value, Self::Error> {
        match text {
            Some(text) => self.str(text),
            None => self.null(),
        }
    }
    /// One JSON document's text as sent (checked when its frame was decoded).
    fn json(&mut self, text: &str) -> Result<Self::Value, Self::Error>;
    /// A value the fold holds as a tree.
    fn out(&mut self, value: &Out) -> Result<Self::Value, Self::Error>;
    /// A list of values built.
    fn list(&mut self, items: Vec<Self::Value>) -> Result<Self::Value, Self::Error>;
    /// An empty object, room made for `capacity` keys.
    fn map(&mut self, capacity: usize) -> Result<Self::Map, Self::Error>;
    /// Sets `key` of `map`.
    fn set(
        &mut self,
        map: &mut Self::Map,
        key: &str,
        value: Self::Value,
    ) -> Result<(), Self::Error>;
    /// Sets `key`, which `map` does not have yet (no search for it where a builder can skip
    /// one; a key the input names goes through [`set`](Self::set)).
    fn set_new(
        &mut self,
        map: &mut Self::Map,
        key: &'static str,
        value: Self::Value,
    ) -> Result<(), Self::Error> {
        self.set(map, key, value)
    }
    /// Whether `map` has `key`.
    fn has(&mut self, map: &Self::Map, key: &str) -> Result<bool, Self::Error>;
    /// A JSON object's text as sent, as an object to set keys over (its keys in their order,
    /// the last of duplicate keys winning in the first one's place); `None` when the text is
    /// not an object or the builder cannot say (the caller then builds it key by key).
    fn object(&mut self, text: &str) -> Result<Option<Self::Map>, Self::Error>;
    /// Whether `map`'s first keys are `keys`, in that order.
    fn first_keys(&mut self, map: &Self::Map, keys: &[&str]) -> Result<bool, Self::Error>;
    /// The value of `key` as an object to set keys over, when it is one (put it back with
    /// [`set`](Self::set), which keeps its place); `None` otherwise.
    fn child(&mut self, map: &mut Self::Map, key: &str) -> Result<Option<Self::Map>, Self::Error>;
    /// Whether `key`'s value is missing, `null` or the empty string.
    fn blank(&mut self, map: &Self::Map, key: &str) -> Result<bool, Self::Error>;
    /// The object built.
    fn done(&mut self, map: Self::Map) -> Self::Value;

    /// Sets each of `from`'s keys over `map`, in order (a fold's map of values kept whole).
    fn set_all(&mut self, map: &mut Self::Map, from: &Map) -> Result<(), Self::Error> {
        for (key, value) in from.iter() {
            let value = self.out(value)?;
            self.set(map, key, value)?;
        }
        Ok(())
    }
}

/// The builder of [`Out`] trees: what a fold's `result()` returns to Rust callers.
pub struct OutBuild;

impl Build for OutBuild {
    type Value = Out;
    type Map = Map;
    type Error = Infallible;

    fn null(&mut self) -> Result<Out, Infallible> {
        Ok(Out::Null)
    }

    fn int(&mut self, value: i64) -> Result<Out, Infallible> {
        Ok(Out::Int(value))
    }

    fn bool(&mut self, value: bool) -> Result<Out, Infallible> {
        Ok(Out::Bool(value))
    }

    fn str(&mut self, text: &str) -> Result<Out, Infallible> {
        Ok(Out::Str(text.to_owned()))
    }

    fn json(&mut self, text: &str) -> Result<Out, Infallible> {
        Ok(Out::json(text))
    }

    fn out(&mut self, value: &Out) -> Result<Out, Infallible> {
        Ok(value.clone())
    }

    fn list(&mut self, items: Vec<Out>) -> Result<Out, Infallible> {
        Ok(Out::List(items))
    }

    fn map(&mut self, capacity: usize) -> Result<Map, Infallible> {
        Ok(Map::with_capacity(capacity))
    }

    fn set(&mut self, map: &mut Map, key: &str, value: Out) -> Result<(), Infallible> {
        map.set(key, value);
        Ok(())
    }

    fn set_new(&mut self, map: &mut Map, key: &'static str, value: Out) -> Result<(), Infallible> {
        map.set_new(key, value);
        Ok(())
    }

    fn has(&mut self, map: &Map, key: &str) -> Result<bool, Infallible> {
        Ok(map.contains_key(key))
    }

    fn object(&mut self, text: &str) -> Result<Option<Map>, Infallible> {
        Ok(object_map(text))
    }

    fn first_keys(&mut self, map: &Map, keys: &[&str]) -> Result<bool, Infallible> {
        let mut have = map.iter();
        Ok(keys
            .iter()
            .all(|&key| have.next().is_some_and(|(k, _)| k == key)))
    }

    fn child(&mut self, map: &mut Map, key: &str) -> Result<Option<Map>, Infallible> {
        Ok(match map.get(key) {
            Some(Out::Map(child)) => Some(child.clone()),
            Some(Out::Json(text)) => object_map(text),
            Some(Out::Patched(p)) => Some(p.to_map()),
            _ => None,
        })
    }

    fn blank(&mut self, map: &Map, key: &str) -> Result<bool, Infallible> {
        Ok(match map.get(key) {
            None | Some(Out::Null) => true,
            Some(Out::Str(s)) => s.is_empty(),
            Some(Out::Json(text)) => {
                matches!(Json::read(text), Some(Json::Null))
                    || json_string(text).is_some_and(|s| s.is_empty())
            }
            Some(_) => false,
        })
    }

    fn done(&mut self, map: Map) -> Out {
        Out::Map(map)
    }
}

/// The tree a result written to [`OutBuild`] is.
pub fn tree(built: Result<Out, Infallible>) -> Out {
    match built {
        Ok(out) => out,
        Err(never) => match never {},
    }
}
