//! JSON text to Python objects, in one pass and without an intermediate tree. Used only for
//! the rarely read parts of items (usage, logprobs, vendor extras, error bodies), which are
//! kept as raw JSON text and converted when read.
//!
//! The text reaching here was checked when its frame was decoded (syntax by serde_json, depth
//! by `json::read::MAX_DEPTH`), so a read does not fail: numbers read as `json.loads` reads
//! them (`1e400` is `inf`, a 30-digit integer is exact), lone surrogate escapes become U+FFFD.
//! Recursion is bounded by [`MAX_READ_DEPTH`] (a raw part at most `MAX_DEPTH` deep inside a
//! document at most `MAX_DEPTH` deep), so no text can overflow the stack. Nothing is carried
//! across calls. Cost: one pass over the text.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::json::read::MAX_DEPTH;

/// Deepest nesting [`to_py`] follows: a raw part (at most `MAX_DEPTH` deep, checked at decode)
/// sits in a document whose typed parts serde_json bounds by `MAX_DEPTH` too.
const MAX_READ_DEPTH: usize = 2 * MAX_DEPTH + 8;

/// Converts one JSON document to Python objects (dict, list, str, int, float, bool, None).
/// `ValueError` only for text that is not JSON (never the case for text an item holds).
pub fn to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let mut reader = Reader { py, text, pos: 0 };
    let value = reader.value(0)?;
    reader.space();
    if reader.pos < text.len() {
        return Err(reader.error("trailing characters"));
    }
    Ok(value)
}

/// Like [`to_py`], for a document that must be an object; anything else is wrapped as
/// `{"value": ...}` so callers always get a dict.
pub fn to_py_dict<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let value = to_py(py, text)?;
    match value.cast_into::<PyDict>() {
        Ok(dict) => Ok(dict),
        Err(e) => {
            let dict = PyDict::new(py);
            dict.set_item("value", e.into_inner())?;
            Ok(dict)
        }
    }
}

/// A JSON-backed attribute of an item: `None`, or its JSON text decoded (on each read).
pub fn lazy<'py>(py: Python<'py>, text: Option<&str>) -> PyResult<Option<Bound<'py, PyAny>>> {
    text.map(|t| to_py(py, t)).transpose()
}

/// A recursive-descent reader over JSON text.
struct Reader<'a, 'py> {
    py: Python<'py>,
    text: &'a str,
    pos: usize,
}

impl<'py> Reader<'_, 'py> {
    fn error(&self, what: &str) -> PyErr {
        PyValueError::new_err(format!("invalid JSON: {what} at byte {}", self.pos))
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        self.space();
        let py = self.py;
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(self.string()?.into_any()),
            Some(b't') => self.literal("true", PyBool::new(py, true).to_owned().into_any()),
            Some(b'f') => self.literal("false", PyBool::new(py, false).to_owned().into_any()),
            Some(b'n') => self.literal("null", py.None().into_bound(py)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("expected a value")),
        }
    }

    fn literal(&mut self, word: &str, value: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let end = self.pos + word.len();
        if self.text.get(self.pos..end) != Some(word) {
            return Err(self.error("expected a value"));
        }
        self.pos = end;
        Ok(value)
    }

    fn enter(&self, depth: usize) -> PyResult<()> {
        if depth > MAX_READ_DEPTH {
            return Err(self.error(&format!("nested deeper than {MAX_READ_DEPTH} levels")));
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        self.enter(depth)?;
        self.pos += 1; // `{`
        let dict = PyDict::new(self.py);
        self.space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(dict.into_any());
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a key"));
            }
            let key = self.key()?;
            self.space();
            if self.peek() != Some(b':') {
                return Err(self.error("expected ':'"));
            }
            self.pos += 1;
            let value = self.value(depth)?;
            dict.set_item(key, value)?;
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(dict.into_any());
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> PyResult<Bound<'py, PyAny>> {
        self.enter(depth)?;
        self.pos += 1; // `[`
        let list = PyList::empty(self.py);
        self.space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(list.into_any());
        }
        loop {
            list.append(self.value(depth)?)?;
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(list.into_any());
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// A number as `json.loads` reads it: an integer of any size is exact (falling back to a
    /// float only past Python's integer-string limit), a float out of range is `inf`.
    fn number(&mut self) -> PyResult<Bound<'py, PyAny>> {
        let start = self.pos;
        let mut float = false;
        while let Some(b) = self.peek() {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => float = true,
                _ => break,
            }
            self.pos += 1;
        }
        let text = self.text.get(start..self.pos).unwrap_or_default();
        let py = self.py;
        if !float {
            if let Ok(v) = text.parse::<i64>() {
                return match v.into_pyobject(py) {
                    Ok(int) => Ok(int.into_any()),
                    Err(never) => match never {},
                };
            }
            if let Ok(int) = py.get_type::<PyInt>().call1((text,)) {
                return Ok(int);
            }
        }
        match text.parse::<f64>() {
            Ok(v) => Ok(PyFloat::new(py, v).into_any()),
            Err(_) => Err(self.error("invalid number")),
        }
    }

    /// An object's key (the reader is on its opening quote): a short key without escapes is
    /// the same string object from call to call (`strings::key`).
    fn key(&mut self) -> PyResult<Bound<'py, PyString>> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        if let Some(len) = memchr::memchr2(b'"', b'\\', bytes.get(start..).unwrap_or_default()) {
            if bytes.get(start + len) == Some(&b'"') {
                self.pos = start + len + 1;
                let raw = self.text.get(start..start + len).unwrap_or_default();
                return Ok(super::strings::key(self.py, raw));
            }
        }
        self.string()
    }

    /// A string (the reader is on its opening quote).
    fn string(&mut self) -> PyResult<Bound<'py, PyString>> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        let mut end = start;
        let mut escaped = false;
        // From quote or backslash to the next, at memchr speed (a long text is most of a
        // result's bytes).
        loop {
            let rest = bytes.get(end..).unwrap_or_default();
            let Some(at) = memchr::memchr2(b'"', b'\\', rest) else {
                self.pos = end.max(bytes.len());
                return Err(self.error("unterminated string"));
            };
            end += at;
            if bytes.get(end) == Some(&b'"') {
                break;
            }
            escaped = true;
            end += 2;
        }
        self.pos = end + 1;
        let raw = self.text.get(start..end).unwrap_or_default();
        if !escaped {
            return Ok(PyString::new(self.py, raw));
        }
        Ok(PyString::new(self.py, &unescape(raw)))
    }
}

/// The text of a JSON string with its escapes resolved; a lone surrogate becomes U+FFFD.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    loop {
        // The run up to the next backslash is copied whole.
        let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) else {
            out.push_str(rest);
            return out;
        };
        out.push_str(rest.get(..at).unwrap_or_default());
        let mut chars = rest.get(at + 1..).unwrap_or_default().chars();
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let Some(high) = hex4(&mut chars) else {
                    out.push('\u{fffd}');
                    rest = chars.as_str();
                    continue;
                };
                let code = if (0xD800..0xDC00).contains(&high) {
                    let mut ahead = chars.clone();
                    match (ahead.next(), ahead.next(), hex4(&mut ahead)) {
                        (Some('\\'), Some('u'), Some(low)) if (0xDC00..0xE000).contains(&low) => {
                            chars = ahead;
                            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                        }
                        _ => 0xFFFD,
                    }
                } else {
                    high
                };
                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
            }
            Some(other) => out.push(other), // `\"`, `\\`, `\/`
            None => {}
        }
        rest = chars.as_str();
    }
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut code = 0;
    for _ in 0..4 {
        code = code * 16 + chars.next()?.to_digit(16)?;
    }
    Some(code)
}

/// Converts a fold's result tree to Python objects (`dict`, `list`, `str`, `int`, `bool`,
/// `None`; raw JSON leaves through [`to_py`]). The tree's depth is the fold's own shape plus
/// that of JSON already decoded once, so the recursion is bounded.
pub fn out_to_py<'py>(py: Python<'py>, value: &crate::fold::Out) -> PyResult<Bound<'py, PyAny>> {
    use crate::fold::Out;
    Ok(match value {
        Out::Null => py.None().into_bound(py),
        Out::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Out::Int(i) => match i.into_pyobject(py) {
            Ok(int) => int.into_any(),
            Err(never) => match never {},
        },
        Out::Str(s) => PyString::new(py, s).into_any(),
        Out::Json(text) => to_py(py, text)?,
        Out::Bytes(b) => pyo3::types::PyBytes::new(py, b).into_any(),
        Out::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(out_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Out::Map(map) => {
            let dict = PyDict::new(py);
            set_over(&dict, map)?;
            dict.into_any()
        }
        // The object as sent, then the keys set over it.
        Out::Patched(p) => {
            let dict = to_py_dict(py, p.base())?;
            set_over(&dict, p.over())?;
            dict.into_any()
        }
    })
}

/// Sets each of `map`'s keys on `dict`, in order: a dict's update keeps a key's place and
/// takes the new value, as `Map::set` does. A known key's string is made without a hash of
/// its bytes.
fn set_over(dict: &Bound<'_, PyDict>, map: &crate::fold::Map) -> PyResult<()> {
    let py = dict.py();
    for (known, key, value) in map.iter_known() {
        let key = super::strings::known_key(py, known, key);
        dict.set_item(key, out_to_py(py, value)?)?;
    }
    Ok(())
}

/// The builder of a fold's result as Python objects (`crate::json::build`): what a fold
/// writes to it becomes `dict`, `list`, `str`, `int`, `bool` and `None` with no tree between
/// (raw JSON through [`to_py`], a value the fold holds as a tree through [`out_to_py`]).
pub struct PyBuild<'py>(pub Python<'py>);

impl<'py> crate::json::build::Build for PyBuild<'py> {
    type Value = Bound<'py, PyAny>;
    type Map = Bound<'py, PyDict>;
    type Error = PyErr;

    fn null(&mut self) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.0.None().into_bound(self.0))
    }

    fn int(&mut self, value: i64) -> PyResult<Bound<'py, PyAny>> {
        match value.into_pyobject(self.0) {
            Ok(int) => Ok(int.into_any()),
            Err(never) => match never {},
        }
    }

    fn bool(&mut self, value: bool) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyBool::new(self.0, value).to_owned().into_any())
    }

    fn str(&mut self, text: &str) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyString::new(self.0, text).into_any())
    }

    fn json(&mut self, text: &str) -> PyResult<Bound<'py, PyAny>> {
        to_py(self.0, text)
    }

    fn out(&mut self, value: &crate::fold::Out) -> PyResult<Bound<'py, PyAny>> {
        out_to_py(self.0, value)
    }

    fn list(&mut self, items: Vec<Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        Ok(PyList::new(self.0, items)?.into_any())
    }

    fn map(&mut self, _capacity: usize) -> PyResult<Bound<'py, PyDict>> {
        Ok(PyDict::new(self.0))
    }

    fn set(
        &mut self,
        map: &mut Bound<'py, PyDict>,
        key: &str,
        value: Bound<'py, PyAny>,
    ) -> PyResult<()> {
        map.set_item(super::strings::key(self.0, key), value)
    }

    fn has(&mut self, map: &Bound<'py, PyDict>, key: &str) -> PyResult<bool> {
        map.contains(super::strings::key(self.0, key))
    }

    fn object(&mut self, text: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
        Ok(to_py(self.0, text)?.cast_into::<PyDict>().ok())
    }

    fn first_keys(&mut self, map: &Bound<'py, PyDict>, keys: &[&str]) -> PyResult<bool> {
        // The dict's own iterator: no list of its keys made.
        let mut have = map.iter();
        for key in keys {
            match have.next() {
                Some((k, _))
                    if k.cast::<PyString>()
                        .is_ok_and(|k| k.to_str().ok() == Some(*key)) => {}
                _ => return Ok(false),
            }
        }
        Ok(true)
    }

    fn child(
        &mut self,
        map: &mut Bound<'py, PyDict>,
        key: &str,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        Ok(map
            .get_item(super::strings::key(self.0, key))?
            .and_then(|v| v.cast_into::<PyDict>().ok()))
    }

    fn blank(&mut self, map: &Bound<'py, PyDict>, key: &str) -> PyResult<bool> {
        Ok(match map.get_item(super::strings::key(self.0, key))? {
            None => true,
            Some(v) if v.is_none() => true,
            Some(v) => v
                .cast::<PyString>()
                .is_ok_and(|s| s.to_str().ok() == Some("")),
        })
    }

    fn done(&mut self, map: Bound<'py, PyDict>) -> Bound<'py, PyAny> {
        map.into_any()
    }

    fn set_all(&mut self, map: &mut Bound<'py, PyDict>, from: &crate::fold::Map) -> PyResult<()> {
        set_over(map, from)
    }
}

/// An item's `repr`: `Class(name=value, ...)` of the fields that are not `None`.
pub fn repr_of(py: Python<'_>, class: &str, fields: &[(&str, &Py<PyAny>)]) -> PyResult<String> {
    let mut parts = Vec::with_capacity(fields.len());
    for (name, value) in fields {
        if !value.is_none(py) {
            parts.push(format!("{name}={}", value.bind(py).repr()?));
        }
    }
    Ok(format!("{class}({})", parts.join(", ")))
}

/// An item's dict (`to_dict()`), built field by field: a field that is `None` is left out.
pub struct ItemDict<'py>(pub Bound<'py, PyDict>);

impl<'py> ItemDict<'py> {
    /// An empty dict.
    pub fn new(py: Python<'py>) -> Self {
        ItemDict(PyDict::new(py))
    }

    /// Sets `name` to `value` unless it is `None`.
    pub fn field(&self, name: &str, value: &Py<PyAny>) -> PyResult<()> {
        if value.is_none(self.0.py()) {
            return Ok(());
        }
        self.0.set_item(name, value)
    }

    /// Sets each of `fields` that is not `None`, in order.
    pub fn fields(&self, fields: &[(&str, &Py<PyAny>)]) -> PyResult<()> {
        for (name, value) in fields {
            self.field(name, value)?;
        }
        Ok(())
    }

    /// Sets `name` to the JSON `text` decoded, when there is one.
    pub fn json(&self, name: &str, text: Option<&str>) -> PyResult<()> {
        if let Some(text) = text {
            self.0.set_item(name, to_py(self.0.py(), text)?)?;
        }
        Ok(())
    }
}
