//! `ssewire._core.HTTPResponseReader`: the HTTP/1.1 response reader of `crate::http` for
//! Python (what `StreamProtocol` uses on a raw connection).
//!
//! Per feed: one pass of the core over the input, and one `bytes` object for the body bytes it
//! held. Carried across calls: the core reader only. The head's fields become Python objects
//! when read (a head is read a few times, not per feed).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use pyo3::types::PyType;

use super::errors;
use super::input::Input;
use crate::http::{latin1, Field, HttpError, ResponseReader};

pyo3::import_exception!(ssewire._errors, HTTPProtocolError);

/// `HTTPProtocolError` for a response that cannot be read (its `kind` names why), carrying
/// the body bytes the failing call read before the error (so none is lost, however the input
/// was cut).
fn protocol_error(py: Python<'_>, err: &HttpError, body: &[u8]) -> PyErr {
    let class: Bound<'_, PyType> = py.get_type::<HTTPProtocolError>();
    match class.call1((
        err.message.as_str(),
        err.kind.name(),
        PyBytes::new(py, body),
    )) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Reads one HTTP/1.x response off a raw connection: status line and header fields, then the
/// body de-framed (chunked, Content-Length or close-delimited).
#[pyclass(module = "ssewire", name = "HTTPResponseReader")]
pub struct HttpResponseReader {
    core: ResponseReader,
}

fn fields<'py>(py: Python<'py>, fields: &[Field]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for (name, value) in fields {
        list.append(PyTuple::new(py, [name.clone(), latin1(value)])?)?;
    }
    Ok(list)
}

#[pymethods]
impl HttpResponseReader {
    #[new]
    #[pyo3(signature = (*, max_head_size = crate::http::DEFAULT_MAX_HEAD))]
    fn new(max_head_size: usize) -> Self {
        HttpResponseReader {
            core: ResponseReader::with_max_head(max_head_size),
        }
    }

    /// Bytes received, cut anywhere; returns the body bytes they held (`b""` when none).
    /// Raises `HTTPProtocolError` when the bytes are not a readable response (its `body`: the
    /// body bytes this call read before the error); after that, every call raises it again.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "HTTP reader")?;
        let input = Input::extract(data)?;
        let mut body = Vec::new();
        if let Err(e) = this.core.feed(input.as_bytes(), &mut body) {
            return Err(protocol_error(py, &e, &body));
        }
        Ok(PyBytes::new(py, &body))
    }

    /// The connection ended: a close-delimited body ends here; a response that has not ended
    /// raises `HTTPProtocolError` (kind "incomplete").
    fn finish(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "HTTP reader")?;
        this.core.finish().map_err(|e| protocol_error(py, &e, b""))
    }

    /// Whether the final response's head has been read (interim 1xx responses skipped).
    #[getter]
    fn head_complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(errors::shared(slf, "HTTP reader")?.core.head().is_some())
    }

    /// Whether the body has ended (a close-delimited one: after `finish()`).
    #[getter]
    fn body_complete(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(errors::shared(slf, "HTTP reader")?.core.body_complete())
    }

    /// The status code, `None` before the head.
    #[getter]
    fn status(slf: &Bound<'_, Self>) -> PyResult<Option<u16>> {
        Ok(errors::shared(slf, "HTTP reader")?
            .core
            .head()
            .map(|h| h.status))
    }

    /// The reason phrase, `""` before the head.
    #[getter]
    fn reason(slf: &Bound<'_, Self>) -> PyResult<String> {
        Ok(errors::shared(slf, "HTTP reader")?.core.reason().to_owned())
    }

    /// `"HTTP/1.1"` or `"HTTP/1.0"`, `None` before the head.
    #[getter]
    fn http_version(slf: &Bound<'_, Self>) -> PyResult<Option<String>> {
        Ok(errors::shared(slf, "HTTP reader")?
            .core
            .head()
            .map(|h| format!("HTTP/1.{}", h.version)))
    }

    /// The header fields as sent, in order: a new list of `(name, value)` (values decoded as
    /// ISO-8859-1); empty before the head.
    #[getter]
    fn headers<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let this = errors::shared(slf, "HTTP reader")?;
        fields(slf.py(), this.core.head().map_or(&[], |h| &h.headers))
    }

    /// The trailer fields of a chunked body, once it ended (a new list of `(name, value)`).
    #[getter]
    fn trailers<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let this = errors::shared(slf, "HTTP reader")?;
        fields(slf.py(), this.core.trailers())
    }

    /// The values of every header field named `name` (any case) joined with ", ", or
    /// `default` when there is none.
    #[pyo3(signature = (name, default = None))]
    fn header(
        slf: &Bound<'_, Self>,
        name: &str,
        default: Option<Py<PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let py = slf.py();
        let this = errors::shared(slf, "HTTP reader")?;
        let values: Vec<String> = this
            .core
            .head()
            .map_or(&[][..], |h| &h.headers)
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| latin1(v))
            .collect();
        if values.is_empty() {
            return Ok(default);
        }
        Ok(Some(
            pyo3::types::PyString::new(py, &values.join(", "))
                .into_any()
                .unbind(),
        ))
    }

    /// How the body is delimited: "chunked", "length", "close" or "none" (204, 304); `None`
    /// before the head.
    #[getter]
    fn framing(slf: &Bound<'_, Self>) -> PyResult<Option<&'static str>> {
        Ok(errors::shared(slf, "HTTP reader")?
            .core
            .head()
            .map(|h| h.framing.name()))
    }

    /// The status codes of the interim (1xx) responses skipped (a new list).
    #[getter]
    fn interim(slf: &Bound<'_, Self>) -> PyResult<Vec<u16>> {
        Ok(errors::shared(slf, "HTTP reader")?.core.interim().to_vec())
    }

    /// Body bytes returned so far.
    #[getter]
    fn body_size(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(errors::shared(slf, "HTTP reader")?.core.body_len())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = errors::shared(slf, "HTTP reader")?;
        Ok(match this.core.head() {
            None => "<HTTPResponseReader: head not read>".to_owned(),
            Some(h) => format!(
                "<HTTPResponseReader: {} {:?}, {} body, {} bytes{}>",
                h.status,
                h.reason,
                h.framing.name(),
                this.core.body_len(),
                if this.core.body_complete() {
                    ", complete"
                } else {
                    ""
                }
            ),
        })
    }
}
