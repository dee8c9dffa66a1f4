//! `EventStreamParser` and its `EventStreamMessage`: the AWS event stream framing
//! (`crate::framing::eventstream`) for Python. Conversion only: each message's headers become a dict
//! (values as botocore gives them), its payload bytes; a fault becomes an `ErrorItem` whose
//! error is a `StreamError` with the fault's kind as its `code`.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList};

use super::errors;
use super::input::Input;
use super::stream::ErrorItem;
use crate::framing::eventstream::{Decoder, Fault, Message, Value};
use crate::framing::sse::DEFAULT_MAX_EVENT_SIZE;

/// One event stream message: its headers (a dict: `bool`, `int`, `bytes` or `str` values, a
/// timestamp as its milliseconds since the epoch, a UUID as its 16 bytes) and its payload.
#[pyclass(frozen, module = "ssewire", name = "EventStreamMessage")]
pub struct EventStreamMessage {
    #[pyo3(get)]
    headers: Py<PyDict>,
    #[pyo3(get)]
    payload: Py<PyBytes>,
}

#[pymethods]
impl EventStreamMessage {
    /// The `:event-type` header (`"contentBlockDelta"`, `"chunk"`, ...), or None.
    #[getter]
    fn event_type(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(self
            .headers
            .bind(py)
            .get_item(":event-type")?
            .map(Bound::unbind))
    }

    /// The `:message-type` header (`"event"`, `"exception"` or `"error"`), or None.
    #[getter]
    fn message_type(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(self
            .headers
            .bind(py)
            .get_item(":message-type")?
            .map(Bound::unbind))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "EventStreamMessage(headers={}, payload={})",
            self.headers.bind(py).repr()?,
            self.payload.bind(py).repr()?
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        let Ok(other) = other.cast::<EventStreamMessage>() else {
            return Ok(false);
        };
        let other = other.get();
        Ok(self.headers.bind(py).eq(other.headers.bind(py))?
            && self.payload.bind(py).as_bytes() == other.payload.bind(py).as_bytes())
    }
}

fn value<'py>(py: Python<'py>, v: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match *v {
        Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Value::Byte(n) => n.into_pyobject(py)?.into_any(),
        Value::Short(n) => n.into_pyobject(py)?.into_any(),
        Value::Int(n) => n.into_pyobject(py)?.into_any(),
        Value::Long(n) | Value::Timestamp(n) => n.into_pyobject(py)?.into_any(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any(),
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Uuid(u) => PyBytes::new(py, &u[..]).into_any(),
    })
}

/// The Python message of a decoded one.
pub fn message(py: Python<'_>, m: &Message<'_>) -> PyResult<EventStreamMessage> {
    let headers = PyDict::new(py);
    for (name, v) in &m.headers {
        headers.set_item(name, value(py, v)?)?;
    }
    Ok(EventStreamMessage {
        headers: headers.unbind(),
        payload: PyBytes::new(py, m.payload).unbind(),
    })
}

/// The error item of a fault.
pub fn fault_item(py: Python<'_>, fault: &Fault) -> PyResult<Py<PyAny>> {
    let kind = fault.kind();
    let error = errors::stream_error(
        py,
        &fault.to_string(),
        Some(
            crate::dialect::INVALID_RESPONSE
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        ),
        Some(kind.into_pyobject(py)?.into_any().unbind()),
        None,
    )?;
    Ok(Py::new(py, ErrorItem::framing(py, kind, error))?.into_any())
}

/// Push-based parser of the AWS event stream framing (`application/vnd.amazon.eventstream`,
/// Amazon Bedrock's streaming responses): `feed()` bytes, get `EventStreamMessage`s. A CRC
/// that does not match, a length that cannot be or a message over `max_event_size` is an
/// `ErrorItem` (its `kind` names the fault) and framing stops.
#[pyclass(subclass, module = "ssewire", name = "EventStreamParser")]
pub struct EventStreamParser {
    decoder: Decoder,
    error: Option<Py<PyAny>>,
}

#[pymethods]
impl EventStreamParser {
    #[new]
    #[pyo3(signature = (*, max_event_size = DEFAULT_MAX_EVENT_SIZE))]
    fn new(max_event_size: usize) -> Self {
        EventStreamParser {
            decoder: Decoder::new(max_event_size),
            error: None,
        }
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(e) = &self.error {
            visit.call(e)?;
        }
        Ok(())
    }

    /// Parses `data` (bytes, bytearray or memoryview); returns the messages it completed (and
    /// the error item of a fault, last).
    fn feed<'py>(slf: &Bound<'py, Self>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let mut guard = errors::exclusive(slf, "parser")?;
        let this = &mut *guard;
        let input = Input::extract(data)?;
        let out = PyList::empty(py);
        let mut failed: PyResult<()> = Ok(());
        let mut error = None;
        this.decoder.feed(input.as_bytes(), |r| {
            if failed.is_err() {
                return;
            }
            failed = match r {
                Ok(m) => message(py, &m).and_then(|m| out.append(Py::new(py, m)?)),
                Err(fault) => fault_item(py, &fault).and_then(|item| {
                    error = Some(item.clone_ref(py));
                    out.append(item)
                }),
            };
        });
        failed?;
        if this.error.is_none() {
            this.error = error;
        }
        Ok(out)
    }

    /// End of input: the error item of a message started and not finished, if any.
    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "parser")?;
        let out = PyList::empty(py);
        if let Some(fault) = this.decoder.finish() {
            let item = fault_item(py, &fault)?;
            if this.error.is_none() {
                this.error = Some(item.clone_ref(py));
            }
            out.append(item)?;
        }
        Ok(out)
    }

    /// Whether input ended (so far) inside a message.
    #[getter]
    fn pending(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(errors::shared(slf, "parser")?.decoder.pending() > 0)
    }

    /// The error item that stopped the framing, if one did.
    #[getter]
    fn error_item(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
        let this = errors::shared(slf, "parser")?;
        Ok(this.error.as_ref().map(|e| e.clone_ref(slf.py())))
    }

    /// The limit on the size of one message, in bytes.
    #[getter]
    fn max_event_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(errors::shared(slf, "parser")?.decoder.max_event_size())
    }
}

/// Encodes one event stream message (`headers`: a dict of str to `bool`, `int` (written as
/// a 4-byte int when it fits, else 8), `str` or `bytes`): what a Bedrock client reads.
#[pyfunction]
#[pyo3(name = "encode_eventstream_message")]
pub fn encode_message<'py>(
    py: Python<'py>,
    headers: &Bound<'py, PyDict>,
    payload: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let input = Input::extract(payload)?;
    let mut owned: Vec<(String, Owned)> = Vec::new();
    for (k, v) in headers.iter() {
        let name: String = k.extract()?;
        if name.len() > 255 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "header name of {} bytes (at most 255)",
                name.len()
            )));
        }
        let v = if let Ok(b) = v.cast::<PyBool>() {
            Owned::Bool(b.is_true())
        } else if let Ok(n) = v.extract::<i64>() {
            Owned::Int(n)
        } else if let Ok(s) = v.extract::<String>() {
            Owned::Str(s)
        } else if let Ok(b) = v.extract::<Vec<u8>>() {
            Owned::Bytes(b)
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "header {name:?}: a value must be bool, int, str or bytes"
            )));
        };
        if let Owned::Str(s) = &v {
            check_len(&name, s.len())?;
        }
        if let Owned::Bytes(b) = &v {
            check_len(&name, b.len())?;
        }
        owned.push((name, v));
    }
    let headers: Vec<(&str, Value<'_>)> = owned
        .iter()
        .map(|(n, v)| {
            let v = match v {
                Owned::Bool(b) => Value::Bool(*b),
                Owned::Int(n) => match i32::try_from(*n) {
                    Ok(small) => Value::Int(small),
                    Err(_) => Value::Long(*n),
                },
                Owned::Str(s) => Value::String(s),
                Owned::Bytes(b) => Value::Bytes(b),
            };
            (n.as_str(), v)
        })
        .collect();
    let mut out = Vec::new();
    crate::framing::eventstream::encode(&headers, input.as_bytes(), &mut out);
    Ok(PyBytes::new(py, &out))
}

fn check_len(name: &str, len: usize) -> PyResult<()> {
    if len > usize::from(u16::MAX) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "header {name:?}: a value of {len} bytes (at most 65535)"
        )));
    }
    Ok(())
}

enum Owned {
    Bool(bool),
    Int(i64),
    Str(String),
    Bytes(Vec<u8>),
}
