//! `ssewire._core._Assembly`: the one driver of `accumulate()`, `aaccumulate()` and the command
//! line: a body read in the dialect it names or its first events tell, folded by that
//! dialect's stream (`result()`), or, for the generic `"sse"` dialect, its events collected.
//!
//! Converts only: which dialect a head is (`crate::translate::Sniffer`, holding the bytes until
//! an event tells, then handing them over), whether a body is one JSON document
//! (`crate::framing::body::opens_json`), an event stream cut mid-event
//! (`ErrorKind::IncompleteStream`) and the first server-reported error
//! (`AccumulatorErrors`) are the core's rules. A dialect stream is driven as Rust drives it
//! (`Source`): `items=False` builds no item object. Carried across feeds: the sniffer or the
//! stream, the head of the body (16 KiB, for the command line's diagnostics), its size, the
//! oversized events met (with `record_too_large`).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyDict, PyList, PyString};

use super::errors::{self, EventTooLargeError};
use super::input::Input;
use super::sse::{Event, SseParser};
use super::stream::{failure_error, lend, AccumulatorErrors, ErrorItem};
use super::translate::new_stream;
use crate::dialect::{Dialect, ErrorKind};
use crate::framing::sse::TooLarge;
use crate::stream::Failure;
use crate::translate::Sniffer;

/// How much of a body's head is kept for diagnostics.
const HEAD_KEPT: usize = 16 * 1024;

/// The generic `"sse"` dialect: the body's events collected, or, for a body that is one JSON
/// document, that document read as a chat stream reads it (its error reported).
#[derive(Default)]
struct Events {
    /// White space and a BOM read before the first significant byte.
    lead: Vec<u8>,
    /// `SSEParser`, or a `ChatCompletionStream` for a JSON body; `None` until decided.
    reader: Option<Py<PyAny>>,
    events: Vec<Py<PyAny>>,
    errors: AccumulatorErrors,
    /// The stream's own error (a cut event, a JSON body's error).
    error: Option<Py<PyAny>>,
}

impl Events {
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        bytes: &[u8],
        max: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let reader = match &self.reader {
            Some(reader) => reader.bind(py).clone(),
            None => {
                self.lead.extend_from_slice(bytes);
                let Some(json) = crate::framing::body::opens_json(&self.lead) else {
                    return Ok(PyList::empty(py));
                };
                let reader = if json {
                    new_stream(py, Dialect::Chat, max, None)?.into_bound(py)
                } else {
                    py.get_type::<SseParser>()
                        .call((), Some(&[("max_event_size", max)].into_py_dict(py)?))?
                };
                self.reader = Some(reader.clone().unbind());
                let lead = std::mem::take(&mut self.lead);
                return self.read(
                    py,
                    reader.call_method1("feed", (pyo3::types::PyBytes::new(py, &lead),)),
                );
            }
        };
        self.read(
            py,
            reader.call_method1("feed", (pyo3::types::PyBytes::new(py, bytes),)),
        )
    }

    /// Collects the items of one call (those an `EventTooLargeError` carries too).
    fn read<'py>(
        &mut self,
        py: Python<'py>,
        called: PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let items = match called {
            Ok(items) => items.cast_into::<PyList>()?,
            Err(e) if e.is_instance_of::<EventTooLargeError>(py) => {
                self.add(&e.value(py).getattr("events")?.cast_into::<PyList>()?)?;
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        self.add(&items)?;
        Ok(items)
    }

    fn add(&mut self, items: &Bound<'_, PyList>) -> PyResult<()> {
        for item in items.iter() {
            if item.cast::<ErrorItem>().is_ok() {
                self.errors.other(&item, "an event stream")?;
            } else {
                self.events.push(item.unbind());
            }
        }
        Ok(())
    }

    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let Some(reader) = self.reader.as_ref().map(|r| r.bind(py).clone()) else {
            return Ok(PyList::empty(py)); // nothing but white space: an empty stream
        };
        let items = self.read(py, reader.call_method0("finish"))?;
        if let Ok(parser) = reader.cast::<SseParser>() {
            if parser.getattr("pending")?.is_truthy()? {
                let cut = Failure::own(
                    "the stream ended in the middle of an event".into(),
                    ErrorKind::IncompleteStream,
                );
                self.error = Some(failure_error(py, &cut)?);
            }
        } else {
            let error = reader.getattr("error")?;
            self.error = (!error.is_none()).then(|| error.unbind());
        }
        Ok(items)
    }

    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let events = PyList::empty(py);
        for event in &self.events {
            events.append(event.bind(py).cast::<Event>()?.call_method0("to_dict")?)?;
        }
        let d = PyDict::new(py);
        d.set_item("events", events)?;
        Ok(d)
    }
}

/// What the body is read by once its dialect is known.
enum Reader {
    /// A dialect stream (`ssewire.<stream_class>`).
    Stream(Py<PyAny>),
    /// The generic `"sse"` dialect.
    Events(Events),
}

/// The driver of `accumulate()`, `aaccumulate()` and the command line (private: the
/// package's functions guard it).
#[pyclass(module = "ssewire._core", name = "_Assembly")]
pub struct Assembly {
    sniffer: Option<Sniffer>,
    reader: Option<Reader>,
    dialect: Option<&'static str>,
    head: Vec<u8>,
    size: u64,
    too_large: Vec<Py<PyAny>>,
    record_too_large: bool,
    items: bool,
    max_event_size: usize,
    framing: Option<String>,
}

impl Assembly {
    fn start(&mut self, py: Python<'_>, name: &'static str) -> PyResult<()> {
        self.reader = Some(match Dialect::parse(name) {
            Some(dialect) => Reader::Stream(new_stream(
                py,
                dialect,
                self.max_event_size,
                self.framing.as_deref(),
            )?),
            None => {
                self.items = true;
                Reader::Events(Events::default())
            }
        });
        self.dialect = Some(name);
        Ok(())
    }

    /// Reads `bytes` with the decided reader; an oversized event is recorded (with
    /// `record_too_large`) or raised.
    fn read<'py>(&mut self, py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let (items, max) = (self.items, self.max_event_size);
        let too_large: Option<TooLarge> = match &mut self.reader {
            Some(Reader::Stream(stream)) => {
                let list = items.then_some(&out);
                lend(stream.bind(py), |s| s.run_bytes(py, bytes, list))?.flatten()
            }
            Some(Reader::Events(events)) => match events.feed(py, bytes, max) {
                Ok(items) => return Ok(items),
                Err(e) => return self.oversized(py, e),
            },
            None => None,
        };
        match too_large {
            Some(err) => self.oversized(py, errors::too_large(py, err, out)),
            None => Ok(out),
        }
    }

    fn oversized<'py>(&mut self, py: Python<'py>, e: PyErr) -> PyResult<Bound<'py, PyList>> {
        if !(self.record_too_large && e.is_instance_of::<EventTooLargeError>(py)) {
            return Err(e);
        }
        let events = e.value(py).getattr("events")?.cast_into::<PyList>()?;
        self.too_large.push(e.into_value(py).into_any());
        Ok(events)
    }
}

#[pymethods]
impl Assembly {
    #[new]
    #[pyo3(signature = (dialect = "auto", max_event_size = None, record_too_large = false, items = true, framing = None))]
    fn new(
        dialect: &str,
        max_event_size: Option<usize>,
        record_too_large: bool,
        items: bool,
        framing: Option<String>,
        py: Python<'_>,
    ) -> PyResult<Self> {
        let name: &'static str = match dialect {
            "auto" => "auto",
            "sse" => "sse",
            other => Dialect::parse(other).map(Dialect::name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown dialect {:?}: expected 'auto', {}",
                    other.chars().take(40).collect::<String>(),
                    crate::dialect::SPECS
                        .iter()
                        .map(|s| format!("'{}'", s.name))
                        .chain(["'sse'".to_string()])
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?,
        };
        if framing.is_some() && matches!(name, "auto" | "sse") {
            return Err(PyValueError::new_err(
                "a framing needs the dialect of the model's chunks named (dialect='messages' \
                 for Claude on Bedrock's InvokeModelWithResponseStream)",
            ));
        }
        let max_event_size = max_event_size.unwrap_or(crate::framing::sse::DEFAULT_MAX_EVENT_SIZE);
        let mut this = Assembly {
            sniffer: None,
            reader: None,
            dialect: None,
            head: Vec::new(),
            size: 0,
            too_large: Vec::new(),
            record_too_large,
            items,
            max_event_size,
            framing,
        };
        if name == "auto" {
            this.sniffer = Some(Sniffer::new(max_event_size));
        } else {
            this.start(py, name)?;
        }
        Ok(this)
    }

    /// Reads `data`; returns the decoded items (empty while sniffing, or with `items=False`).
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        if data.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "response bodies are bytes: got a str chunk (use iter_bytes(), not iter_text())",
            ));
        }
        let input = Input::extract(data)?;
        let bytes = input.as_bytes();
        let room = HEAD_KEPT.saturating_sub(self.head.len()).min(bytes.len());
        self.head
            .extend_from_slice(bytes.get(..room).unwrap_or_default());
        self.size += bytes.len() as u64;
        if let Some(sniffer) = &mut self.sniffer {
            let Some(name) = sniffer.feed_name(bytes) else {
                return Ok(PyList::empty(py));
            };
            let held = sniffer.take_held();
            self.sniffer = None;
            self.start(py, name)?;
            return self.read(py, &held);
        }
        self.read(py, bytes)
    }

    /// Ends the input; returns the last items.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(mut sniffer) = self.sniffer.take() {
            let name = sniffer.at_end_name();
            let held = sniffer.take_held();
            self.start(py, name)?;
            out.as_any()
                .call_method1("extend", (self.read(py, &held)?,))?;
        }
        let last = match &mut self.reader {
            Some(Reader::Stream(stream)) => {
                let list = PyList::empty(py);
                let items = self.items.then_some(&list);
                lend(stream.bind(py), |s| s.finish_into(py, items))?;
                list
            }
            Some(Reader::Events(events)) => events.finish(py)?,
            None => PyList::empty(py),
        };
        out.as_any().call_method1("extend", (last,))?;
        Ok(out)
    }

    /// The dialect in use (`None` while sniffing).
    #[getter]
    fn dialect(&self) -> Option<&'static str> {
        self.dialect
    }

    /// The first bytes of the body (up to 16 KiB), for diagnostics.
    #[getter]
    fn head<'py>(&self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.head)
    }

    /// How many bytes were read.
    #[getter]
    fn size(&self) -> u64 {
        self.size
    }

    /// The `EventTooLargeError`s met (only with `record_too_large`; else they raise).
    #[getter]
    fn too_large<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.too_large.iter().map(|e| e.clone_ref(py)))
    }

    /// The stream's error (after `finish`), else the first error its events carried.
    #[getter]
    fn error(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        Ok(match &self.reader {
            Some(Reader::Stream(stream)) => {
                let error = stream.bind(py).getattr("error")?;
                (!error.is_none()).then(|| error.unbind())
            }
            Some(Reader::Events(events)) => events
                .error
                .as_ref()
                .map(|e| e.clone_ref(py))
                .or_else(|| events.errors.error(py)),
            None => None,
        })
    }

    /// The final object: the dialect stream's `result()`, or `{"events": [...]}` (each
    /// event's `to_dict()`) for the generic `"sse"` dialect.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.reader {
            Some(Reader::Stream(stream)) => stream.bind(py).call_method0("result"),
            Some(Reader::Events(events)) => Ok(events.result(py)?.into_any()),
            None => Ok(Events::default().result(py)?.into_any()),
        }
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        for e in &self.too_large {
            visit.call(e)?;
        }
        match &self.reader {
            Some(Reader::Stream(stream)) => visit.call(stream),
            Some(Reader::Events(events)) => {
                for obj in events
                    .reader
                    .iter()
                    .chain(&events.events)
                    .chain(&events.error)
                {
                    visit.call(obj)?;
                }
                events.errors.traverse(&visit)
            }
            None => Ok(()),
        }
    }

    fn __clear__(&mut self) {
        self.reader = None;
        self.too_large.clear();
    }
}
