//! Input through the buffer protocol: `bytes` is borrowed as is, a contiguous `bytearray` or
//! `memoryview` is borrowed for the duration of one call, a non-contiguous view is copied once.
//! `str` is refused with a `TypeError`: text has no defined byte form here.
//! Nothing is carried across calls; no borrowed slice outlives the call that made it.

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PyString};

/// Bytes passed to `feed()`, borrowed where possible.
pub enum Input<'py> {
    Bytes(Bound<'py, PyBytes>),
    View(PyBuffer<u8>),
    Copied(Vec<u8>),
}

impl<'py> Input<'py> {
    /// Accepts `bytes`, `bytearray`, `memoryview` (of any item format: its raw bytes are read),
    /// or any other object exporting a buffer.
    pub fn extract(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = obj.cast::<PyBytes>() {
            return Ok(Input::Bytes(bytes.clone()));
        }
        let refuse = || {
            let type_name = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            let hint = if obj.is_instance_of::<PyString>() {
                " (encode the text to UTF-8 first)"
            } else {
                ""
            };
            PyTypeError::new_err(format!(
                "feed() takes bytes, bytearray or memoryview, not {type_name}{hint}"
            ))
        };
        if obj.is_instance_of::<PyString>() {
            return Err(refuse());
        }
        let buffer = match PyBuffer::<u8>::get(obj) {
            Ok(buffer) => buffer,
            // Another item format ('b', 'i', ...): read the raw bytes of the buffer, as
            // `socket.send` does, through a byte view of it (a copy if it is not contiguous).
            Err(_) => {
                let view = PyMemoryView::from(obj).map_err(|_| refuse())?;
                match view.call_method1("cast", ("B",)) {
                    Ok(bytes_view) => PyBuffer::<u8>::get(&bytes_view)?,
                    Err(_) => {
                        let copy = view.call_method0("tobytes")?;
                        return Ok(Input::Bytes(copy.cast_into::<PyBytes>()?));
                    }
                }
            }
        };
        if buffer.is_c_contiguous() {
            Ok(Input::View(buffer))
        } else {
            Ok(Input::Copied(buffer.to_vec(obj.py())?))
        }
    }

    /// The bytes, valid while `self` lives and no Python code runs.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Input::Bytes(b) => b.as_bytes(),
            Input::View(buffer) => {
                let len = buffer.len_bytes();
                if len == 0 {
                    return &[];
                }
                // SAFETY: the buffer is C-contiguous, non-empty (so the pointer is valid for
                // `len` bytes) and stays exported while `self` holds the `PyBuffer` (a
                // `bytearray` cannot be resized while exported). The slice is only used while
                // the caller holds the GIL and runs no Python code, so nothing can write to it,
                // and it does not outlive `self`.
                unsafe { std::slice::from_raw_parts(buffer.buf_ptr().cast::<u8>(), len) }
            }
            Input::Copied(v) => v,
        }
    }

    /// Whether the bytes cannot change while the GIL is released (then a long parse may
    /// release it): `bytes` is immutable and a copy is ours.
    pub fn immutable(&self) -> bool {
        !matches!(self, Input::View(_))
    }
}
