//! Input through the buffer protocol: `bytes` is borrowed as is (it is immutable), any other
//! buffer (`bytearray`, `memoryview`, `array`, ...) is copied once into a `Vec`.
//! `str` is refused with a `TypeError`: text has no defined byte form here.
//! Nothing is carried across calls; no borrowed slice outlives the call that made it.
//!
//! Why mutable buffers are copied: a borrowed `bytearray` can be written by Python code that
//! runs during the call (a finalizer run by the garbage collector, another thread while the GIL
//! is released), and a Rust slice over it would then be unsound. The copy is one `memcpy` of
//! the input, the only way to read it without `unsafe` (the crate forbids `unsafe_code`).

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyMemoryView, PyString};

/// Bytes passed to `feed()`, borrowed where possible.
pub enum Input<'py> {
    /// Borrowed: `bytes` cannot change.
    Bytes(Bound<'py, PyBytes>),
    /// Copied out of a mutable (or foreign) buffer.
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
        // `to_vec` copies through `PyBuffer_ToContiguous`, holding the GIL: no Python code
        // runs during the copy, and the copy is ours afterwards.
        Ok(Input::Copied(buffer.to_vec(obj.py())?))
    }

    /// The bytes, valid while `self` lives.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Input::Bytes(b) => b.as_bytes(),
            Input::Copied(v) => v,
        }
    }
}
