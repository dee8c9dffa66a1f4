//! `ssewire.SSEParser` and `ssewire.Event`: the generic framer for Python.
//!
//! Per `feed()`: borrow the input, frame it in pure Rust into a `Vec` of borrowed events, then
//! one pass builds the `Event` objects and the list. Carried across calls: the framer's state
//! and the reused strings (`"message"`, the last event type, the last id). The GIL is released
//! only while framing a large immutable `bytes` input (a one-shot parse of a whole body).
//!
//! Also the way out: `encode_event()` and `Event.encode()` wrap [`crate::encode`], borrowing
//! the strings' UTF-8 and building one `bytes`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyInt, PyList, PyString};

use super::errors;
use super::input::Input;
use super::strings::{decode, lossy_text, Reused};
use crate::encode::EncodeError;
use crate::framing::sse::{Framer, RawEvent, DEFAULT_MAX_EVENT_SIZE};

/// Inputs at least this large are framed with the GIL released. Below it the release and
/// re-acquire cost more than they free (a typical socket read is 4-64 KiB).
pub use crate::stream::DETACH_THRESHOLD;

/// One dispatched server-sent event. Immutable; its fields are ready-made Python objects.
#[pyclass(frozen, module = "ssewire", name = "Event")]
pub struct Event {
    /// The event type; `"message"` when the event had no `event:` field.
    #[pyo3(get)]
    event: Py<PyString>,
    /// The data lines joined with `"\n"`.
    #[pyo3(get)]
    data: Py<PyString>,
    /// The last event id seen so far, `None` if the stream never set one.
    #[pyo3(get)]
    id: Option<Py<PyString>>,
    /// The `retry:` value given in this event, if any.
    #[pyo3(get)]
    retry: Option<u64>,
}

#[pymethods]
impl Event {
    /// `retry`: an int from 0 to 2**64-1 (`TypeError` for another type, `bool` included;
    /// `ValueError` out of range), as `encode_event` takes it.
    #[new]
    #[pyo3(signature = (data, event = None, id = None, retry = None))]
    fn new(
        py: Python<'_>,
        data: Py<PyString>,
        event: Option<Py<PyString>>,
        id: Option<Py<PyString>>,
        retry: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(Event {
            event: event.unwrap_or_else(|| PyString::new(py, "message").unbind()),
            data,
            id,
            retry: retry_arg(retry)?,
        })
    }

    /// The event as a dict: `{"event", "data", "id", "retry"}` (all four, `None` kept).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("event", &self.event)?;
        d.set_item("data", &self.data)?;
        d.set_item("id", &self.id)?;
        d.set_item("retry", self.retry)?;
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let id = match &self.id {
            Some(id) => id.bind(py).repr()?.to_string(),
            None => "None".into(),
        };
        let retry = self.retry.map_or_else(|| "None".into(), |r| r.to_string());
        Ok(format!(
            "Event(event={}, data={}, id={id}, retry={retry})",
            self.event.bind(py).repr()?,
            self.data.bind(py).repr()?
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: PyRef<'_, Event>) -> PyResult<bool> {
        let same = |a: &Py<PyString>, b: &Py<PyString>| a.bind(py).as_any().eq(b.bind(py));
        let same_id = match (&self.id, &other.id) {
            (None, None) => true,
            (Some(a), Some(b)) => same(a, b)?,
            _ => false,
        };
        Ok(same_id
            && self.retry == other.retry
            && same(&self.event, &other.event)?
            && same(&self.data, &other.data)?)
    }

    /// Events pickle (so an `EventTooLargeError` carrying them can cross a process pool).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (
        Bound<'py, pyo3::types::PyType>,
        (
            Py<PyString>,
            Py<PyString>,
            Option<Py<PyString>>,
            Option<u64>,
        ),
    ) {
        let py = slf.py();
        let this = slf.get();
        (
            slf.get_type(),
            (
                this.data.clone_ref(py),
                this.event.clone_ref(py),
                this.id.as_ref().map(|i| i.clone_ref(py)),
                this.retry,
            ),
        )
    }

    /// The event in its wire form (see `encode_event`); `ValueError` if its type or id cannot
    /// be written (only possible for an `Event` built by hand).
    fn encode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let (data, event) = (self.data.bind(py), self.event.bind(py));
        let id = self.id.as_ref().map(|id| id.bind(py));
        let id = id.map(lossy_text).transpose()?;
        encode(
            py,
            &lossy_text(data)?,
            Some(&lossy_text(event)?),
            id.as_deref(),
            self.retry,
        )
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        (
            self.event.clone_ref(py),
            self.data.clone_ref(py),
            self.id.as_ref().map(|i| i.clone_ref(py)),
            self.retry,
        )
            .into_pyobject(py)?
            .hash()
    }
}

/// Per-parser reuse of the strings that repeat from event to event.
#[derive(Default)]
pub struct EventStrings {
    event: Reused,
    id: Reused,
}

impl EventStrings {
    /// The event type (`None`: no `event:` field) as a Python string, `"message"` for none.
    pub fn event_type(&mut self, py: Python<'_>, event: Option<&[u8]>) -> Py<PyString> {
        match event {
            // One string for the process (made once, not per stream).
            None | Some(b"message") => pyo3::intern!(py, "message").clone().unbind(),
            Some(t) => self.event.get(py, t),
        }
    }

    /// Builds the `Event` for a framed event.
    pub fn event(&mut self, py: Python<'_>, raw: &RawEvent<'_>) -> Event {
        Event {
            event: self.event_type(py, raw.event.as_deref()),
            data: decode(py, &raw.data).unbind(),
            id: raw.id.as_deref().map(|id| self.id.get(py, id)),
            retry: raw.retry,
        }
    }
}

/// Frames `bytes`, releasing the GIL when the input is large (the bytes are immutable or our
/// own copy, see `input`, so nothing can change them meanwhile).
pub fn frame<'a>(
    py: Python<'_>,
    framer: &mut Framer,
    bytes: &'a [u8],
    out: &mut Vec<RawEvent<'a>>,
) -> Option<crate::framing::sse::TooLarge> {
    if bytes.len() >= DETACH_THRESHOLD {
        py.detach(|| framer.feed(bytes, out))
    } else {
        framer.feed(bytes, out)
    }
}

/// Push-based, sans-IO parser of a `text/event-stream` body (WHATWG HTML "Interpreting an
/// event stream"). Feed it bytes as they arrive; it returns the events they complete.
#[pyclass(subclass, module = "ssewire", name = "SSEParser")]
pub struct SseParser {
    framer: Framer,
    strings: EventStrings,
}

#[pymethods]
impl SseParser {
    #[new]
    #[pyo3(signature = (*, max_event_size = DEFAULT_MAX_EVENT_SIZE))]
    fn new(max_event_size: usize) -> Self {
        SseParser {
            framer: Framer::new(max_event_size),
            strings: EventStrings::default(),
        }
    }

    /// Parses `data` (bytes, bytearray or memoryview) and returns the events it completes.
    fn feed<'py>(slf: &Bound<'py, Self>, data: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let py = slf.py();
        let mut guard = errors::exclusive(slf, "parser")?;
        let this = &mut *guard;
        let input = Input::extract(data)?;
        let bytes = input.as_bytes();
        let mut raw = Vec::new();
        let too_large = frame(py, &mut this.framer, bytes, &mut raw);
        let events = PyList::new(py, raw.iter().map(|ev| this.strings.event(py, ev)))?;
        match too_large {
            Some(err) => Err(errors::too_large(py, err, events)),
            None => Ok(events),
        }
    }

    /// Ends the input. Nothing incomplete is dispatched (per the spec), so this returns `[]`;
    /// `pending` then tells whether the input ended mid-event. The parser is reset for a new
    /// stream, keeping `last_event_id` and `retry` for a reconnect.
    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let _ = errors::exclusive(slf, "parser")?.framer.finish(false);
        Ok(PyList::empty(slf.py()))
    }

    /// The last event id as of the last complete event block, for `Last-Event-ID` on
    /// reconnect (`""` if none).
    #[getter]
    fn last_event_id<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyString>> {
        let this = errors::shared(slf, "parser")?;
        Ok(decode(slf.py(), this.framer.last_event_id()))
    }

    /// Whether the input so far ends in the middle of an event.
    #[getter]
    fn pending(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(errors::shared(slf, "parser")?.framer.pending())
    }

    /// The reconnection time in milliseconds from the last valid `retry:` field, if any.
    #[getter]
    fn retry(slf: &Bound<'_, Self>) -> PyResult<Option<u64>> {
        Ok(errors::shared(slf, "parser")?.framer.reconnection_time())
    }

    /// The limit on the size of one event, in bytes.
    #[getter]
    fn max_event_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(errors::shared(slf, "parser")?.framer.max_event_size())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let this = errors::shared(slf, "parser")?;
        Ok(format!(
            "SSEParser(max_event_size={}, pending={})",
            this.framer.max_event_size(),
            if this.framer.pending() {
                "True"
            } else {
                "False"
            }
        ))
    }
}

/// Encodes one event, turning an encoder error into `ValueError`.
fn encode<'py>(
    py: Python<'py>,
    data: &str,
    event: Option<&str>,
    id: Option<&str>,
    retry: Option<u64>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut out = Vec::new();
    crate::encode::encode_event(
        &mut out,
        data.as_bytes(),
        event.map(str::as_bytes),
        id.map(str::as_bytes),
        retry,
    )
    .map_err(|err| {
        let value = match err {
            EncodeError::EventLineBreak => event,
            EncodeError::IdLineBreak | EncodeError::IdNul => id,
        };
        errors::encode(err, value.unwrap_or_default())
    })?;
    Ok(PyBytes::new(py, &out))
}

/// A `retry` argument: `None`, or an int from 0 to 2**64-1 (`TypeError` for any other type,
/// `bool` included; `ValueError` out of range, the value shown in short).
fn retry_arg(retry: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match retry {
        None => Ok(None),
        Some(r) if r.is_none() => Ok(None),
        Some(r) if r.is_instance_of::<PyBool>() || !r.is_instance_of::<PyInt>() => {
            Err(PyTypeError::new_err(format!(
                "retry must be an int (milliseconds), not {}",
                r.get_type().name()?
            )))
        }
        Some(r) => r.extract::<u64>().map(Some).map_err(|_| {
            let text = r.str().map(|s| s.to_string()).unwrap_or_default();
            PyValueError::new_err(format!(
                "retry must be from 0 to 2**64-1, not {}",
                errors::shown(&text)
            ))
        }),
    }
}

/// One event in its wire form, for services that emit SSE: `event:`, `id:`, `retry:` when
/// given, one `data:` line per line of `data` (split on CRLF, LF or CR), then a blank line.
/// `SSEParser` reads it back as the same event (with CR / CRLF in the data read as LF).
/// Lone surrogates in a `str` (which UTF-8 cannot carry) are written as U+FFFD.
/// `ValueError` for an event type or id containing CR or LF, an id containing NUL, or a
/// `retry` out of 0..2**64-1; `TypeError` for a `retry` that is not an int.
#[pyfunction]
#[pyo3(signature = (data, event = None, id = None, retry = None))]
pub fn encode_event<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyString>,
    event: Option<&Bound<'py, PyString>>,
    id: Option<&Bound<'py, PyString>>,
    retry: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let retry = retry_arg(retry)?;
    let event = event.map(lossy_text).transpose()?;
    let id = id.map(lossy_text).transpose()?;
    encode(
        py,
        &lossy_text(data)?,
        event.as_deref(),
        id.as_deref(),
        retry,
    )
}
