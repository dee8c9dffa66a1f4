//! Building Python strings from event bytes: one lossy UTF-8 decode straight into a `str`, and
//! per-parser reuse of strings that repeat from event to event (event type, id, model, ...).
//! The reuse is per parser object, never global, so it stays correct under free-threaded
//! Python. Cost: one comparison of the previous value's bytes per reuse check.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::json::read::Str;

/// Decodes UTF-8 bytes into a Python `str`, replacing invalid sequences with U+FFFD.
pub fn decode<'py>(py: Python<'py>, bytes: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(bytes) {
        Ok(s) => PyString::new(py, s),
        Err(_) => PyString::new(py, &String::from_utf8_lossy(bytes)),
    }
}

/// Hands out the same Python string while the same bytes keep coming.
#[derive(Default)]
pub struct Reused {
    bytes: Vec<u8>,
    string: Option<Py<PyString>>,
}

impl Reused {
    /// The string for `bytes`: the previous object when the bytes are the same.
    pub fn get(&mut self, py: Python<'_>, bytes: &[u8]) -> Py<PyString> {
        if let Some(s) = &self.string {
            if self.bytes == bytes {
                return s.clone_ref(py);
            }
        }
        let s = decode(py, bytes).unbind();
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.string = Some(s.clone_ref(py));
        s
    }
}

/// A few short strings that alternate (event types, delta types), each built once per parser.
/// A linear scan over at most `NAMES_MAX` entries beats hashing for this handful. Bounded: past
/// `NAMES_MAX` distinct names, a name gets a fresh string each time. Never interned: the
/// server picks the names, and interned strings are immortal on CPython 3.12+, so a stream of
/// distinct names would leak for the life of the process.
#[derive(Default)]
pub struct Names {
    entries: Vec<(Box<[u8]>, Py<PyString>)>,
}

const NAMES_MAX: usize = 32;

impl Names {
    /// The string for `bytes`, built once while the table has room.
    pub fn get(&mut self, py: Python<'_>, bytes: &[u8]) -> Py<PyString> {
        if let Some((_, s)) = self.entries.iter().find(|(b, _)| **b == *bytes) {
            return s.clone_ref(py);
        }
        let s = decode(py, bytes).unbind();
        if self.entries.len() < NAMES_MAX {
            self.entries.push((bytes.into(), s.clone_ref(py)));
        }
        s
    }
}

/// A field value for an item: the string, or `None`. Item fields are `Py<PyAny>` rather than
/// `Option<...>` because pyo3 serves `Py<...>` fields of frozen classes through a plain member
/// descriptor, about 8x cheaper to read than a getter (the accumulators read every field).
pub fn text_or_none(py: Python<'_>, value: Option<&Str<'_>>) -> Py<PyAny> {
    str_or_none(py, value.map(Str::as_str))
}

/// [`text_or_none`] of a plain string.
pub fn str_or_none(py: Python<'_>, value: Option<&str>) -> Py<PyAny> {
    match value {
        Some(v) => PyString::new(py, v).into_any().unbind(),
        None => py.None(),
    }
}

/// Like [`text_or_none`], through a reuse cache.
pub fn reused_or_none(py: Python<'_>, cache: &mut Reused, value: Option<&Str<'_>>) -> Py<PyAny> {
    match value {
        Some(v) => cache.get(py, v.as_str().as_bytes()).into_any(),
        None => py.None(),
    }
}

/// Like [`text_or_none`], through a name table.
pub fn name_or_none(py: Python<'_>, names: &mut Names, value: Option<&Str<'_>>) -> Py<PyAny> {
    match value {
        Some(v) => names.get(py, v.as_str().as_bytes()).into_any(),
        None => py.None(),
    }
}

/// An integer field, or `None`.
pub fn int_or_none(py: Python<'_>, value: Option<i64>) -> Py<PyAny> {
    match value {
        Some(v) => match v.into_pyobject(py) {
            Ok(int) => int.into_any().unbind(),
            Err(never) => match never {},
        },
        None => py.None(),
    }
}

/// Reuses the Python int for a value that repeats (a chunk's `created`).
#[derive(Default)]
pub struct ReusedInt(Option<(i64, Py<PyAny>)>);

impl ReusedInt {
    pub fn get(&mut self, py: Python<'_>, value: Option<i64>) -> Py<PyAny> {
        let Some(v) = value else {
            return py.None();
        };
        if let Some((last, obj)) = &self.0 {
            if *last == v {
                return obj.clone_ref(py);
            }
        }
        let obj = int_or_none(py, Some(v));
        self.0 = Some((v, obj.clone_ref(py)));
        obj
    }
}

/// `True` / `False` as a field value.
pub fn flag(py: Python<'_>, value: bool) -> Py<PyAny> {
    pyo3::types::PyBool::new(py, value)
        .to_owned()
        .into_any()
        .unbind()
}

/// A string field of an item, borrowed from its Python `str`: `None` for `None` (checked
/// first: a failed conversion would cost a Python exception object per field) or another type.
pub fn item_str<'a>(py: Python<'a>, value: &'a Py<PyAny>) -> Option<std::borrow::Cow<'a, str>> {
    if value.is_none(py) {
        return None;
    }
    value.bind(py).cast::<PyString>().ok()?.to_cow().ok()
}

/// An integer field of an item: `None` for `None` (checked first, see [`item_str`]), or for a
/// value that is not an `int` in the `i64` range.
pub fn item_int(py: Python<'_>, value: &Py<PyAny>) -> Option<i64> {
    if value.is_none(py) {
        return None;
    }
    value.bind(py).extract::<i64>().ok()
}

/// The text of a Python `str` as UTF-8: borrowed when it is valid, else (it holds surrogates,
/// which UTF-8 cannot carry) a copy in which a surrogate pair becomes its character and a lone
/// surrogate U+FFFD, as the core reads `\ud800` escapes and invalid UTF-8. A rare path.
pub fn lossy_text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    if let Ok(text) = s.to_str() {
        return Ok(std::borrow::Cow::Borrowed(text));
    }
    let (text, held) = utf16_text(s, None)?;
    let mut text = text;
    if held.is_some() {
        text.push('\u{FFFD}');
    }
    Ok(std::borrow::Cow::Owned(text))
}

/// A `str` read as UTF-16 code units (`high`, a high surrogate held from an earlier piece,
/// first): pairs make their character, lone surrogates U+FFFD, and a high surrogate at the end
/// is held back and returned (its pair may start the next piece).
pub fn utf16_text(s: &Bound<'_, PyString>, high: Option<u16>) -> PyResult<(String, Option<u16>)> {
    let encoded = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let bytes = encoded.cast::<pyo3::types::PyBytes>()?.as_bytes();
    let mut units: Vec<u16> = high.into_iter().collect();
    units.extend(bytes.chunks_exact(2).map(|pair| match pair {
        [lo, hi] => u16::from_le_bytes([*lo, *hi]),
        _ => 0xFFFD,
    }));
    let held = match units.last() {
        Some(&u) if (0xD800..0xDC00).contains(&u) => units.pop(),
        _ => None,
    };
    Ok((String::from_utf16_lossy(&units), held))
}

/// How many keys [`key`] keeps per thread (a direct-mapped table: a slot per hash, the last
/// key of that hash in it).
const KEYS: usize = 256;
/// Keys longer than this are built each time (the keys of results are short names).
const KEY_MAX: usize = 40;

/// A slot of the key table: a key and its string.
type KeySlot = Option<(Box<str>, Py<PyString>)>;

thread_local! {
    static KEY_TABLE: std::cell::RefCell<Vec<KeySlot>> =
        std::cell::RefCell::new((0..KEYS).map(|_| None).collect());
}

/// The Python string for an object key of a result or a raw JSON part: the same object for
/// the same short key on this thread (building a dict of known keys then costs no string
/// and no hash of one), else a new string. Bounded: [`KEYS`] entries of at most [`KEY_MAX`]
/// bytes per thread, whatever the keys; per thread, so it needs no lock under free-threaded
/// Python. Not interned (an interned string is immortal on CPython 3.12+).
pub fn key<'py>(py: Python<'py>, text: &str) -> Bound<'py, PyString> {
    if text.len() > KEY_MAX {
        return PyString::new(py, text);
    }
    // FNV-1a over the key's bytes: a handful of bytes, no hasher state to build.
    let mut hash: u32 = 0x811c_9dc5;
    for &b in text.as_bytes() {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let slot = (hash as usize) % KEYS;
    KEY_TABLE
        .try_with(|table| {
            let mut table = table.try_borrow_mut().ok()?;
            let entry = table.get_mut(slot)?;
            if let Some((k, s)) = entry.as_ref() {
                if **k == *text {
                    return Some(s.bind(py).clone());
                }
            }
            let s = PyString::new(py, text);
            *entry = Some((text.into(), s.clone().unbind()));
            Some(s)
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| PyString::new(py, text))
}

/// The Python string of each of the result maps' known keys (`crate::json::tree::KNOWN_COUNT`),
/// each made the first time it is asked for and kept for the process: a fixed list, so keeping
/// them for good costs a bounded few KiB.
static KNOWN: [pyo3::sync::PyOnceLock<Py<PyString>>; crate::json::tree::KNOWN_COUNT] =
    [const { pyo3::sync::PyOnceLock::new() }; crate::json::tree::KNOWN_COUNT];

/// The string for a map key that is known key `index` (`text`): the one made for it, without a
/// hash or a compare of its bytes ([`key`] for any other).
pub fn known_key<'py>(py: Python<'py>, index: Option<usize>, text: &str) -> Bound<'py, PyString> {
    match index.and_then(|i| KNOWN.get(i)) {
        Some(slot) => slot
            .get_or_init(py, || PyString::new(py, text).unbind())
            .bind(py)
            .clone(),
        None => key(py, text),
    }
}
