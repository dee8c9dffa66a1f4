//! `ssewire.Translator`: an upstream stream in one dialect, re-served live in another
//! (`crate::translate` does the work in pure Rust).
//!
//! Per feed: one pass of the translation (frame, decode, read, write) over the input; the
//! same input is consumed by the source stream (`t.source`: done, error, errors, result()) and
//! the output by a target stream, whose fold is `t.result()` — what the client's SDK assembles
//! from the bytes written. Carried across feeds: the translation, the two streams, and with
//! `source="auto"` the input read before the dialect was told (at most
//! `translate::SNIFF_EVENTS` events).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::errors;
use super::input::Input;
use crate::translate::{Dialect, Translation};

/// The public stream class of a dialect (`ssewire.MessagesStream`, ...).
fn stream_class<'py>(py: Python<'py>, dialect: Dialect) -> PyResult<Bound<'py, PyAny>> {
    let name = match dialect {
        Dialect::Chat => "ChatCompletionStream",
        Dialect::Messages => "MessagesStream",
        Dialect::Responses => "ResponsesStream",
    };
    py.import("ssewire._reading")?.getattr(name)
}

fn new_stream(py: Python<'_>, dialect: Dialect, max_event_size: usize) -> PyResult<Py<PyAny>> {
    let kwargs = pyo3::types::PyDict::new(py);
    kwargs.set_item("max_event_size", max_event_size)?;
    Ok(stream_class(py, dialect)?.call((), Some(&kwargs))?.unbind())
}

fn dialect(name: &str, what: &str) -> PyResult<Dialect> {
    Dialect::parse(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown {what} dialect {:?}: expected \"chat\", \"messages\" or \"responses\"",
            name.chars().take(40).collect::<String>()
        ))
    })
}

/// Translates an upstream stream in one dialect into another, event by event.
#[pyclass(subclass, module = "ssewire", name = "Translator")]
pub struct Translator {
    t: Translation,
    source: Option<Py<PyAny>>,
    target: Py<PyAny>,
    /// Input read before an "auto" source was told, for the source stream.
    held: Vec<u8>,
    max_event_size: usize,
    /// An upstream event was over `max_event_size` (dropped; noted once).
    too_large: bool,
}

impl Translator {
    /// Feeds the source stream (created once the source dialect is known); an oversized event
    /// is reported by the translation, so the source's own `EventTooLargeError` is not raised.
    fn feed_source(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        if self.source.is_none() {
            match self.t.source() {
                Some(d) => self.source = Some(new_stream(py, d, self.max_event_size)?),
                None => {
                    self.held.extend_from_slice(data);
                    return Ok(());
                }
            }
        }
        let held = std::mem::take(&mut self.held);
        let Some(source) = &self.source else {
            return Ok(());
        };
        for chunk in [held.as_slice(), data] {
            if chunk.is_empty() {
                continue;
            }
            match source.call_method1(py, "consume", (PyBytes::new(py, chunk),)) {
                Ok(_) => {}
                Err(e) if e.is_instance_of::<errors::EventTooLargeError>(py) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn feed_target(&self, py: Python<'_>, out: &[u8]) -> PyResult<()> {
        if !out.is_empty() {
            self.target
                .call_method1(py, "consume", (PyBytes::new(py, out),))?;
        }
        Ok(())
    }
}

#[pymethods]
impl Translator {
    #[new]
    #[pyo3(signature = (source, target, *, max_event_size = crate::sse::DEFAULT_MAX_EVENT_SIZE))]
    fn new(py: Python<'_>, source: &str, target: &str, max_event_size: usize) -> PyResult<Self> {
        let target = dialect(target, "target")?;
        let source = match source {
            "auto" => None,
            name => Some(dialect(name, "source")?),
        };
        Ok(Translator {
            t: Translation::new(source, target, max_event_size),
            source: source
                .map(|d| new_stream(py, d, max_event_size))
                .transpose()?,
            // The target stream reads only this translation's own output, whose events can be
            // larger than the upstream's (a Responses `response.completed` holds every item):
            // it is bounded by the translation, not by `max_event_size`.
            target: new_stream(py, target, usize::MAX)?,
            held: Vec::new(),
            max_event_size,
            too_large: false,
        })
    }

    /// The garbage collector's view of the two streams held.
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        if let Some(source) = &self.source {
            visit.call(source)?;
        }
        visit.call(&self.target)
    }

    /// Upstream bytes (cut anywhere) in; the bytes of the target's complete events out
    /// (`b""` when nothing is owed yet). The same bytes however the reads were cut.
    fn feed<'py>(
        slf: &Bound<'py, Self>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "translator")?;
        let input = Input::extract(data)?;
        let bytes = input.as_bytes();
        let (out, too_large) = this.t.feed(bytes);
        if too_large.is_some() {
            this.too_large = true;
        }
        this.feed_source(py, bytes)?;
        this.feed_target(py, &out)?;
        Ok(PyBytes::new(py, &out))
    }

    /// End of the upstream: the bytes still owed. An upstream cut before its terminal marker
    /// gets no made-up ending (nothing is closed, no terminal event is written).
    fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        let py = slf.py();
        let mut this = errors::exclusive(slf, "translator")?;
        let out = this.t.finish();
        this.feed_source(py, b"")?;
        if let Some(source) = &this.source {
            source.call_method0(py, "finish")?;
        }
        this.feed_target(py, &out)?;
        this.target.call_method0(py, "finish")?;
        Ok(PyBytes::new(py, &out))
    }

    /// The final object in the target dialect: what the client's SDK assembles from the bytes
    /// written so far (the target stream's `result()`; a new dict on each call).
    fn result<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        let this = errors::exclusive(slf, "translator")?;
        this.target.bind(py).call_method0("result")
    }

    /// The upstream's dialect stream (`done`, `error`, `errors`, `result()`); `None` while an
    /// "auto" source is not told yet.
    #[getter]
    fn source(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
        let this = errors::shared(slf, "translator")?;
        Ok(this.source.as_ref().map(|s| s.clone_ref(slf.py())))
    }

    /// The source dialect's name ("chat", "messages", "responses"), `None` while "auto" is
    /// not told yet.
    #[getter]
    fn source_dialect(slf: &Bound<'_, Self>) -> PyResult<Option<&'static str>> {
        Ok(errors::shared(slf, "translator")?
            .t
            .source()
            .map(Dialect::name))
    }

    /// The target dialect's name.
    #[getter]
    fn target_dialect(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(errors::shared(slf, "translator")?.t.target().name())
    }

    /// What the target could not hold and was dropped, once per kind (a new list).
    #[getter]
    fn notes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyList>> {
        let this = errors::shared(slf, "translator")?;
        let mut notes: Vec<String> = this.t.notes().to_vec();
        if this.too_large {
            notes.push("upstream events larger than max_event_size (dropped)".into());
        }
        PyList::new(slf.py(), notes)
    }
}
