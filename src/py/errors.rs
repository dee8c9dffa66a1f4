//! The exceptions of ssewire, and the one function that turns a core error into one.
//!
//! Both are pyclasses with structured fields extending a builtin exception, so `except
//! ValueError` / `except Exception` catch them and `raise stream.error` works. Nothing is
//! carried across calls.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::sse::TooLarge;

/// An event grew past `max_event_size`. The parser dropped that event, skipped the rest of it,
/// and kept framing: `events` holds everything the failing call framed besides it.
#[pyclass(extends = PyValueError, module = "ssewire", subclass)]
pub struct EventTooLargeError {
    /// The configured limit in bytes.
    #[pyo3(get)]
    limit: usize,
    /// How large the event had become when it crossed the limit.
    #[pyo3(get)]
    size: usize,
    /// The events (or decoded items) of the failing call other than the dropped one.
    #[pyo3(get)]
    events: Py<PyList>,
}

#[pymethods]
impl EventTooLargeError {
    #[new]
    #[pyo3(signature = (limit, size, events = None))]
    fn new(py: Python<'_>, limit: usize, size: usize, events: Option<Py<PyList>>) -> Self {
        EventTooLargeError {
            limit,
            size,
            events: events.unwrap_or_else(|| PyList::empty(py).unbind()),
        }
    }

    fn __str__(&self) -> String {
        format!(
            "event larger than max_event_size={} bytes (reached {} bytes); it was dropped and \
             parsing resumes at the next event",
            self.limit, self.size
        )
    }
}

/// Raises `EventTooLargeError` for `err`, carrying the call's other results.
pub fn too_large(py: Python<'_>, err: TooLarge, events: Bound<'_, PyList>) -> PyErr {
    let value = EventTooLargeError {
        limit: err.limit,
        size: err.size,
        events: events.unbind(),
    };
    match Bound::new(py, value) {
        Ok(exc) => PyErr::from_value(exc.into_any()),
        Err(e) => e,
    }
}

/// An error reported by the server inside (or instead of) an event stream, or a stream that
/// ended before its terminal marker (`code == "incomplete_stream"`). Streams record it on
/// `.error`; they do not raise it.
#[pyclass(extends = PyException, module = "ssewire", subclass, frozen)]
pub struct StreamError {
    /// Human-readable message.
    #[pyo3(get)]
    message: String,
    /// The error type (`"overloaded_error"`, `"timeout_error"`, ...), if the server sent one.
    #[pyo3(get, name = "type")]
    type_: Option<Py<PyAny>>,
    /// The error code (`"provider_error"`, `429`, ...), if the server sent one.
    #[pyo3(get)]
    code: Option<Py<PyAny>>,
    /// The decoded JSON that carried the error (`{}` when there was none).
    #[pyo3(get)]
    raw: Py<PyDict>,
}

#[pymethods]
impl StreamError {
    #[new]
    #[pyo3(signature = (message, r#type = None, code = None, raw = None))]
    pub fn new(
        py: Python<'_>,
        message: String,
        r#type: Option<Py<PyAny>>,
        code: Option<Py<PyAny>>,
        raw: Option<Py<PyDict>>,
    ) -> Self {
        StreamError {
            message,
            type_: r#type,
            code,
            raw: raw.unwrap_or_else(|| PyDict::new(py).unbind()),
        }
    }

    fn __str__(&self, py: Python<'_>) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.type_ {
            parts.push(format!("type={}", t.bind(py)));
        }
        if let Some(c) = &self.code {
            parts.push(format!("code={}", c.bind(py)));
        }
        if parts.is_empty() {
            self.message.clone()
        } else {
            format!("{} ({})", self.message, parts.join(", "))
        }
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let show = |v: &Option<Py<PyAny>>| -> PyResult<String> {
            match v {
                Some(v) => Ok(v.bind(py).repr()?.to_string()),
                None => Ok("None".into()),
            }
        };
        Ok(format!(
            "StreamError({:?}, type={}, code={})",
            self.message,
            show(&self.type_)?,
            show(&self.code)?
        ))
    }
}
