//! The notes a Responses fold writes when the stream's final `response` disagrees with what its
//! deltas assembled: values shown the way the reference implementation's messages show them
//! (Python `repr()` of the decoded JSON), and the item and map differences listed.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A value's text as Python's `repr()` shows it, cut to 60 characters (for notes).
pub(super) fn short(value: Option<&Out>) -> String {
    let r = repr(value);
    if r.chars().count() <= 60 {
        return r;
    }
    let cut: String = r.chars().take(57).collect();
    cut + "..."
}

pub(super) fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

pub(super) fn repr(value: Option<&Out>) -> String {
    let Some(value) = value else {
        return "None".into();
    };
    match serde_json::from_str::<serde_json::Value>(&value.to_json()) {
        Ok(v) => repr_value(&v),
        Err(_) => value.to_json(),
    }
}

pub(super) fn repr_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "None".into(),
        Value::Bool(b) => (if *b { "True" } else { "False" }).into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => repr_str(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(repr_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", repr_str(k), repr_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// JSON equality of two values (`None`: absent, which equals only `null` or absent, as a
/// Python `dict.get` would see it).
pub(super) fn same(a: Option<&Out>, b: Option<&Out>) -> bool {
    // The common cases without a round trip through `serde_json::Value`: the streamed text
    // against the server's (a string against a string literal), the same text twice.
    pub(super) fn literal(t: &str) -> Option<std::borrow::Cow<'_, str>> {
        match Json::read(t) {
            Some(Json::Str(s)) => Some(s),
            _ => None,
        }
    }
    match (a, b) {
        (Some(Out::Str(x)), Some(Out::Str(y))) => return x == y,
        (Some(Out::Json(x)), Some(Out::Json(y))) if x.trim() == y.trim() => return true,
        (Some(Out::Str(x)), Some(Out::Json(t))) | (Some(Out::Json(t)), Some(Out::Str(x))) => {
            if let Some(s) = literal(t) {
                return *x == *s;
            }
        }
        _ => {}
    }
    let value = |v: Option<&Out>| -> Option<serde_json::Value> {
        match v {
            None => Some(serde_json::Value::Null),
            Some(v) => serde_json::from_str(&v.to_json()).ok(),
        }
    };
    match (value(a), value(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a.map(Out::to_json) == b.map(Out::to_json),
    }
}

/// `str()` of a value in a note.
pub(super) fn show(value: Option<&Out>) -> String {
    match value {
        None => "None".into(),
        Some(v) => string_of(Some(v)).unwrap_or_else(|| repr(Some(v))),
    }
}

/// The streamed strings of an output item, by path (what a mismatch note compares).
pub(super) fn streamed_texts(map: &Map) -> Vec<(String, Out)> {
    let mut out = Vec::new();
    for key in ["content", "summary"] {
        let parsed;
        let parts: &[Out] = match map.get(key) {
            Some(Out::List(items)) => items,
            other => {
                parsed = list_of(other).unwrap_or_default();
                &parsed
            }
        };
        for (i, part) in parts.iter().enumerate() {
            if let Some(part) = map_of(part) {
                for field in ["text", "refusal"] {
                    if let Some(v) = part.get(field) {
                        out.push((format!("{key}[{i}].{field}"), v.clone()));
                    }
                }
            }
        }
    }
    for field in ["arguments", "input", "code"] {
        if let Some(s) = string_of(map.get(field)) {
            out.push((field.into(), Out::Str(s)));
        }
    }
    out
}

/// A value as a map: borrowed when it is one, read one level deep when it is JSON text.
pub(super) fn map_of(value: &Out) -> Option<Cow<'_, Map>> {
    match value {
        Out::Map(m) => Some(Cow::Borrowed(m)),
        Out::Json(t) => object_map(t).map(Cow::Owned),
        _ => None,
    }
}

/// Notes each difference between an assembled item and the server's full one.
pub(super) fn diff_items(
    where_: &str,
    assembled: &Out,
    full: &Out,
    source: &str,
    notes: &mut Vec<String>,
) {
    // The terminal response repeats each item its `.done` event sent: the same text needs no
    // walk through its parts.
    if let (Out::Json(a), Out::Json(b)) = (assembled, full) {
        if a.trim() == b.trim() {
            return;
        }
    }
    let (Some(a), Some(b)) = (map_of(assembled), map_of(full)) else {
        if !same(Some(assembled), Some(full)) {
            note(
                notes,
                format!(
                    "{where_}: assembled {}, {source} sent {}",
                    short(Some(assembled)),
                    short(Some(full))
                ),
            );
        }
        return;
    };
    diff_maps(where_, &a, &b, source, notes);
}

/// [`diff_items`] of two items that are maps. Each is read once: the full item's text was
/// parsed five times here (as a map twice, its content list, each part, the text literal),
/// ~7% of consuming a Responses body whose `.done` events repeat a few KB of text.
pub(super) fn diff_maps(where_: &str, a: &Map, b: &Map, source: &str, notes: &mut Vec<String>) {
    for key in ["type", "id"] {
        if !same(a.get(key), b.get(key)) {
            note(
                notes,
                format!(
                    "{where_}: {key} {} assembled, {source} says {}",
                    short(a.get(key)),
                    short(b.get(key))
                ),
            );
            return;
        }
    }
    // Only what was assembled is compared: a part the stream never carried is not a mismatch.
    let theirs = streamed_texts(b);
    for (path, mine) in streamed_texts(a) {
        let other = theirs.iter().find(|(p, _)| *p == path).map(|(_, v)| v);
        if !same(Some(&mine), other) {
            note(
                notes,
                format!(
                    "{where_} {path}: the deltas give {}, {source} says {}",
                    short(Some(&mine)),
                    short(other)
                ),
            );
        }
    }
}
