//! `ssewire._core._DropUsage` and `_ask_for_usage`: the gateway's relay of a chat stream whose
//! usage it asked for on the client's behalf (`crate::relay`, `crate::request::ask_for_usage`).
//! Converts only.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors;
use super::input::Input;
use crate::relay::DropUsage as Filter;

/// A chat stream's bytes with the usage-only chunk taken out (`crate::relay::DropUsage`).
#[pyclass(module = "ssewire", name = "_DropUsage")]
pub struct DropUsage {
    filter: Filter,
    out: Vec<u8>,
}

#[pymethods]
impl DropUsage {
    #[new]
    #[pyo3(signature = (max_event_size = crate::framing::sse::DEFAULT_MAX_EVENT_SIZE))]
    fn new(max_event_size: usize) -> Self {
        DropUsage {
            filter: Filter::new(max_event_size),
            out: Vec::new(),
        }
    }

    /// Stream bytes (cut anywhere) in; the bytes to pass on now out.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut this = errors::exclusive(slf, "relay")?;
        let input = Input::extract(data)?;
        let this = &mut *this;
        this.filter.feed(input.as_bytes(), &mut this.out);
        let out = PyBytes::new(slf.py(), &this.out);
        this.out.clear();
        Ok(out)
    }

    /// The end of the body: the bytes still held.
    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        let mut this = errors::exclusive(slf, "relay")?;
        let this = &mut *this;
        this.filter.finish(&mut this.out);
        let out = PyBytes::new(slf.py(), &this.out);
        this.out.clear();
        Ok(out)
    }
}

/// What asks `body` (a request of `dialect`, JSON text) for its stream's usage where the
/// client did not: the top-level key to set and its value as JSON text, or `None` when no ask
/// is needed (`crate::request::ask_for_usage`). The caller sets the key on the body it sends,
/// so the rest of the body keeps its order.
#[pyfunction]
#[pyo3(name = "_ask_for_usage")]
pub fn ask_for_usage(body: &[u8], dialect: &str) -> Option<(&'static str, String)> {
    let dialect = crate::translate::Dialect::parse(dialect)?;
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    crate::request::ask_for_usage(dialect, &value).map(|(key, v)| (key, v.to_string()))
}

/// The ids of the store form of carrier ids in a request body (`crate::translate::carry`).
#[pyfunction]
#[pyo3(name = "_stored_ids")]
pub fn stored_ids(body: &[u8]) -> Vec<String> {
    crate::translate::carry::stored_ids(body)
}
