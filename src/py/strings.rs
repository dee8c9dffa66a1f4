//! Building Python strings from event bytes: one lossy UTF-8 decode straight into a `str`, and
//! per-parser reuse of strings that repeat from event to event (event type, id, model, ...).
//! The reuse is per parser object, never global, so it stays correct under free-threaded
//! Python. Cost: one comparison of the previous value's bytes per reuse check.

use pyo3::prelude::*;
use pyo3::types::PyString;

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
/// A linear scan over at most `NAMES_MAX` entries beats hashing for this handful.
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
