//! The exceptions of ssewire, and the functions that create them from core errors.
//!
//! The classes themselves are Python (`ssewire._errors`): a pyclass extending `BaseException`
//! cannot take keyword arguments and does not pickle. They are imported once, on first use,
//! and re-exported by this module. Nothing else is carried across calls.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyType};

use crate::encode::EncodeError;
use crate::framing::sse::TooLarge;

pyo3::import_exception!(ssewire._errors, StreamError);
pyo3::import_exception!(ssewire._errors, EventTooLargeError);
pyo3::import_exception!(ssewire._errors, ConcurrentUseError);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("StreamError", py.get_type::<StreamError>())?;
    m.add("EventTooLargeError", py.get_type::<EventTooLargeError>())?;
    m.add("ConcurrentUseError", py.get_type::<ConcurrentUseError>())?;
    Ok(())
}

/// `EventTooLargeError` for `err`, carrying the call's other results.
pub fn too_large(py: Python<'_>, err: TooLarge, events: Bound<'_, PyList>) -> PyErr {
    let class: Bound<'_, PyType> = py.get_type::<EventTooLargeError>();
    match class.call1((err.limit, err.size, events)) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// A `StreamError` instance (not raised: streams record it).
pub fn stream_error(
    py: Python<'_>,
    message: &str,
    type_: Option<Py<PyAny>>,
    code: Option<Py<PyAny>>,
    raw: Option<Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let class: Bound<'_, PyType> = py.get_type::<StreamError>();
    Ok(class.call1((message, type_, code, raw))?.unbind())
}

/// `ValueError` for an event that cannot be encoded, quoting the offending value.
pub fn encode(err: EncodeError, value: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("{err}: {}", shown(value)))
}

/// A value quoted in an error message: at most its first 60 characters, so a message stays
/// small whatever the value (a 10 MB id).
pub fn shown(value: &str) -> String {
    let mut chars = value.chars();
    let head: String = chars.by_ref().take(60).collect();
    match chars.next() {
        None => format!("{head:?}"),
        Some(_) => format!("{head:?}... ({} characters)", value.chars().count()),
    }
}

/// `ConcurrentUseError` for a call on an object that another call is using (pyo3's borrow
/// flag said so: another thread, or a re-entrant call from a finalizer).
pub fn busy(what: &str) -> PyErr {
    ConcurrentUseError::new_err(format!(
        "this {what} is in use by another call (one {what} serves one thread at a time)"
    ))
}

/// Borrows `obj` mutably for one call, or `ConcurrentUseError`.
pub fn exclusive<'py, T: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::False>>(
    obj: &Bound<'py, T>,
    what: &str,
) -> PyResult<PyRefMut<'py, T>> {
    obj.try_borrow_mut().map_err(|_| busy(what))
}

/// Borrows `obj` for reading, or `ConcurrentUseError`.
pub fn shared<'py, T: pyo3::PyClass>(obj: &Bound<'py, T>, what: &str) -> PyResult<PyRef<'py, T>> {
    obj.try_borrow().map_err(|_| busy(what))
}
