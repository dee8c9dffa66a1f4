//! `ssewire._core.HTTPResponseReader`: `crate::http`'s HTTP/1.1 response reader for Python
//! (used by `StreamProtocol` on raw sockets). Per feed: the body's bytes out, one `bytes`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::errors;
use super::input::Input;
use crate::http::{HttpError, ResponseReader};

pyo3::import_exception!(ssewire._errors, HTTPProtocolError);

fn protocol_error(err: &HttpError) -> PyErr {
    HTTPProtocolError::new_err(err.0.clone())
}

/// Reads one HTTP/1.1 response from raw socket bytes: `feed()` returns the body's bytes
/// (de-chunked); `status`, `reason` and `headers` once the head is read;
/// `HTTPProtocolError` (a `ValueError`) for bytes that are not such a response.
#[pyclass(module = "ssewire", name = "HTTPResponseReader")]
pub struct HttpResponseReader {
    reader: ResponseReader,
}

#[pymethods]
impl HttpResponseReader {
    #[new]
    fn new() -> Self {
        HttpResponseReader {
            reader: ResponseReader::new(),
        }
    }

    /// Reads `data` (bytes-like, cut anywhere); returns the body bytes it held.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut this = errors::exclusive(slf, "HTTP reader")?;
        let input = Input::extract(data)?;
        let mut body = Vec::new();
        this.reader
            .feed(input.as_bytes(), &mut body)
            .map_err(|e| protocol_error(&e))?;
        Ok(PyBytes::new(slf.py(), &body))
    }

    /// The connection ended: `HTTPProtocolError` if the head or a framed body was unfinished.
    fn finish(slf: &Bound<'_, Self>) -> PyResult<()> {
        let mut this = errors::exclusive(slf, "HTTP reader")?;
        this.reader.finish().map_err(|e| protocol_error(&e))
    }

    /// The status code, `None` until the head is read.
    #[getter]
    fn status(slf: &Bound<'_, Self>) -> PyResult<Option<u16>> {
        Ok(errors::shared(slf, "HTTP reader")?.reader.status())
    }

    #[getter]
    fn reason(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(errors::shared(slf, "HTTP reader")?
            .reader
            .reason()
            .to_owned())
    }

    /// The headers as (name, value) pairs, values decoded as Latin-1 (HTTP's own charset).
    #[getter]
    fn headers<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let this = errors::shared(slf, "HTTP reader")?;
        let pairs = this.reader.headers().iter().map(|(n, v)| {
            let value: String = v.iter().map(|&b| char::from(b)).collect();
            PyTuple::new(py, [n.clone(), value])
        });
        let pairs: PyResult<Vec<_>> = pairs.collect();
        PyList::new(py, pairs?)
    }

    /// Whether the whole (framed) body has arrived.
    #[getter]
    fn body_complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(errors::shared(slf, "HTTP reader")?.reader.body_complete())
    }
}
