//! What the dialect stream classes share on the Python side: `ErrorItem`, the conversion
//! state of a stream ([`Conv`]: its error objects, reused event names), the sink that turns
//! what `crate::stream` hands out into Python objects ([`Out`]), and the class macros.
//!
//! Nothing here reads a stream: `crate::stream::Stream` frames, decodes, checks and folds;
//! this layer builds the items and error objects it is handed, and releases the GIL while
//! the core frames a large input.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::errors;
use super::json;
use super::sse::EventStrings;
use super::strings::decode;
use crate::dialect::ErrorInfo;
use crate::framing::sse::RawEvent;
use crate::stream::{Failure, Frame, Report, ReportKind, Sink, State};

/// A frame that carried an error: `kind` is `"stream_error"` (the server reported one; the
/// stream records the same error on `.error`) or `"malformed_json"` (the frame did not decode;
/// the next frames still do).
#[pyclass(frozen, module = "ssewire", name = "ErrorItem")]
pub struct ErrorItem {
    #[pyo3(get)]
    kind: Py<PyString>,
    #[pyo3(get)]
    error: Py<PyAny>,
    /// The event type of the frame (`"message"` for plain `data:` frames).
    #[pyo3(get)]
    event: Py<PyString>,
    /// The frame's data as received.
    #[pyo3(get)]
    data: Py<PyString>,
}

impl ErrorItem {
    /// An error item of a framing that is not SSE (`event` and `data` are empty strings).
    pub fn framing(py: Python<'_>, kind: &str, error: Py<PyAny>) -> Self {
        ErrorItem {
            kind: PyString::new(py, kind).unbind(),
            error,
            event: PyString::new(py, "").unbind(),
            data: PyString::new(py, "").unbind(),
        }
    }

    /// Whether the server reported it (`kind == "stream_error"`), not a malformed frame.
    pub fn is_stream_error(&self, py: Python<'_>) -> bool {
        self.kind
            .bind(py)
            .to_cow()
            .is_ok_and(|k| k == "stream_error")
    }
}

/// What every accumulator does with items that are not its dialect's own: an `ErrorItem` is
/// recorded (the first server-reported one is `error`), an `Event` (a named event the
/// dialect does not decode) is ignored, anything else is a `TypeError` naming what was
/// expected.
#[derive(Default)]
pub struct AccumulatorErrors {
    pub error: Option<Py<PyAny>>,
    pub errors: Vec<Py<PyAny>>,
}

impl AccumulatorErrors {
    /// Visits the Python objects held (for the garbage collector).
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        traverse_errors(self.error.as_ref(), &self.errors, visit)
    }

    pub fn other(&mut self, item: &Bound<'_, PyAny>, expected: &str) -> PyResult<()> {
        let py = item.py();
        if let Ok(error_item) = item.cast::<ErrorItem>() {
            let e = error_item.get();
            if self.error.is_none() && e.is_stream_error(py) {
                self.error = Some(e.error.clone_ref(py));
            }
            self.errors.push(item.clone().unbind());
            return Ok(());
        }
        if item.is_instance_of::<super::sse::Event>() {
            return Ok(());
        }
        let type_name = item
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "expected an item of {expected} (or an ErrorItem / Event), not {type_name}"
        )))
    }

    pub fn error(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    pub fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.errors.iter().map(|e| e.clone_ref(py)))
    }
}

#[pymethods]
impl ErrorItem {
    /// The garbage collector's view of the error it holds (a raised error's traceback can lead
    /// back here: a cycle only the collector can break).
    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.error)
    }

    /// The item as a dict, as `ssewire --events` prints it: `{"kind", "error": {"message",
    /// "type", "code", "raw"}}`, and the frame's `event` and `data` when not empty.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", &self.kind)?;
        let error = PyDict::new(py);
        let e = self.error.bind(py);
        for name in ["message", "type", "code", "raw"] {
            error.set_item(name, e.getattr(name)?)?;
        }
        d.set_item("error", error)?;
        for (name, value) in [("event", &self.event), ("data", &self.data)] {
            if !value.bind(py).is_empty()? {
                d.set_item(name, value)?;
            }
        }
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ErrorItem(kind={}, error={})",
            self.kind.bind(py).repr()?,
            self.error.bind(py).repr()?
        ))
    }
}

/// Shows the garbage collector an error and a list of error items (a stream's or an
/// accumulator's).
fn traverse_errors(
    error: Option<&Py<PyAny>>,
    errors: &[Py<PyAny>],
    visit: &pyo3::PyVisit<'_>,
) -> Result<(), pyo3::PyTraverseError> {
    if let Some(e) = error {
        visit.call(e)?;
    }
    for e in errors {
        visit.call(e)?;
    }
    Ok(())
}

/// What a stream class keeps to convert: the Python objects of its errors (the stream's
/// first error, the same object its `ErrorItem` holds; every `ErrorItem`), and reused
/// strings.
pub struct Conv {
    names: EventStrings,
    /// The `data` string of the frame being converted, shared by all its `ErrorItem`s (one
    /// copy per frame, not one per item: what one frame's items hold stays linear in its
    /// size). Keyed by the text's address and length; let go at each frame.
    frame_data: Option<(usize, usize, Py<PyString>)>,
    /// The `StreamError` of the stream's recorded error, once made.
    pub error: Option<Py<PyAny>>,
    /// Every `ErrorItem` of the stream so far, in arrival order (`s.errors`).
    pub errors: Vec<Py<PyAny>>,
}

impl Conv {
    pub fn new() -> Self {
        Conv {
            names: EventStrings::default(),
            frame_data: None,
            error: None,
            errors: Vec::new(),
        }
    }

    /// Makes the `StreamError` of an error the core recorded on its own (wrong dialect, cut
    /// short), after a read.
    pub fn sync(&mut self, py: Python<'_>, state: &State) -> PyResult<()> {
        if let (None, Some(failure)) = (&self.error, &state.error) {
            self.error = Some(failure_error(py, failure)?);
        }
        Ok(())
    }

    pub fn error_ref(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.error.as_ref().map(|e| e.clone_ref(py))
    }

    /// Visits the Python objects held (for the garbage collector): the errors, which a user
    /// may raise (`raise stream.error`), so that their tracebacks lead back to the stream.
    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        traverse_errors(self.error.as_ref(), &self.errors, visit)
    }

    /// The Python string of `data` (the text of the frame being converted), built once per
    /// frame.
    fn data_string(&mut self, py: Python<'_>, data: &str) -> Py<PyString> {
        let key = (data.as_ptr() as usize, data.len());
        if let Some((ptr, len, s)) = &self.frame_data {
            if (*ptr, *len) == key {
                return s.clone_ref(py);
            }
        }
        let s = decode(py, data.as_bytes()).unbind();
        self.frame_data = Some((key.0, key.1, s.clone_ref(py)));
        s
    }
}

/// The item class of a dialect's conversion state (`ChunkStrings` makes `ChatChunk`s, ...):
/// what its templates keep.
pub trait Items {
    type Item;
}

/// The sink of one read: items appended to `list` when given (`feed`), none built otherwise
/// (`consume`); error items always.
pub struct Out<'a, 'py, X> {
    pub py: Python<'py>,
    pub list: Option<&'a Bound<'py, PyList>>,
    pub conv: &'a mut Conv,
    /// The dialect's own conversion state (reused strings).
    pub x: &'a mut X,
}

impl<'py, X> Out<'_, 'py, X> {
    /// Appends `item` to the list (there is one whenever an item is built).
    pub fn push<T>(&self, item: &Py<T>) -> PyResult<()> {
        match self.list {
            Some(list) => list.append(item.clone_ref(self.py).into_any()),
            None => Ok(()),
        }
    }
}

impl<X: Items> Sink for Out<'_, '_, X> {
    type Item = X::Item;
    type Error = PyErr;

    fn items(&self) -> bool {
        self.list.is_some()
    }

    fn report(&mut self, r: Report<'_>) -> PyResult<()> {
        let py = self.py;
        let error = stream_error(py, r.info)?;
        let kind = match r.kind {
            ReportKind::Stream { first } => {
                if first {
                    self.conv.error = Some(error.clone_ref(py));
                }
                pyo3::intern!(py, "stream_error").clone().unbind()
            }
            ReportKind::Malformed => pyo3::intern!(py, "malformed_json").clone().unbind(),
        };
        let item = ErrorItem {
            kind,
            error,
            event: self.conv.names.event_type(py, r.event),
            data: self.conv.data_string(py, r.data),
        };
        let item = Py::new(py, item)?.into_any();
        self.conv.errors.push(item.clone_ref(py));
        self.push(&item)
    }

    fn pass(&mut self, frame: &Frame<'_>) -> PyResult<()> {
        let raw = RawEvent {
            event: frame.event.as_deref().map(std::borrow::Cow::Borrowed),
            data: std::borrow::Cow::Borrowed(frame.data.as_bytes()),
            id: None,
            retry: None,
        };
        let event = Py::new(self.py, self.conv.names.event(self.py, &raw))?;
        self.push(&event)
    }

    fn next_frame(&mut self) {
        self.conv.frame_data = None;
    }

    fn detached<T: Send>(&mut self, f: impl FnOnce() -> T + Send) -> T {
        self.py.detach(f)
    }
}

/// The `StreamError` of an error the core recorded.
pub fn failure_error(py: Python<'_>, failure: &Failure) -> PyResult<Py<PyAny>> {
    stream_error(py, &failure.info())
}

/// Raises `EventTooLargeError` carrying `out` when the limit was hit, else returns `out`.
pub fn result<'py>(
    py: Python<'py>,
    out: Bound<'py, PyList>,
    too_large: Option<crate::framing::sse::TooLarge>,
) -> PyResult<Bound<'py, PyList>> {
    match too_large {
        Some(err) => Err(errors::too_large(py, err, out)),
        None => Ok(out),
    }
}

/// A dialect stream as Rust drives it (`ssewire.Translator` feeds its source stream this way,
/// with a translation on its tap).
pub trait Source {
    /// The translation reading the stream.
    fn tap(&mut self) -> &mut Option<Box<dyn crate::stream::Tap>>;
    /// Frames, decodes and folds `bytes` (items appended to `out` when given).
    fn run_bytes<'py>(
        &mut self,
        py: Python<'py>,
        bytes: &[u8],
        out: Option<&Bound<'py, PyList>>,
    ) -> PyResult<Option<crate::framing::sse::TooLarge>>;
    /// Ends the input as `finish()` does (items appended to `out` when given).
    fn finish_into<'py>(
        &mut self,
        py: Python<'py>,
        out: Option<&Bound<'py, PyList>>,
    ) -> PyResult<()>;
}

/// Runs `f` on `stream` as Rust drives it, when it is a dialect stream (`None` when not).
pub fn lend<R>(
    stream: &Bound<'_, PyAny>,
    f: impl FnOnce(&mut dyn Source) -> PyResult<R>,
) -> PyResult<Option<R>> {
    macro_rules! lend_each {
        ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
            $(if let Ok(s) = stream.cast::<crate::py::$m::$class>() {
                return f(&mut *errors::exclusive(s, "stream")?).map(Some);
            })*
        };
    }
    crate::dialect::registry::dialects!(lend_each);
    Ok(None)
}

/// Builds the `StreamError` for an error read out of the wire.
pub fn stream_error(py: Python<'_>, info: &ErrorInfo<'_>) -> PyResult<Py<PyAny>> {
    let value = |raw: Option<&str>| -> PyResult<Option<Py<PyAny>>> {
        raw.map(|t| json::to_py(py, t).map(Bound::unbind))
            .transpose()
    };
    let raw: Option<Bound<'_, PyDict>> = match info.raw {
        Some(doc) => Some(json::to_py_dict(py, doc)?),
        None => None,
    };
    errors::stream_error(
        py,
        &info.message,
        value(info.type_)?,
        value(info.code)?,
        raw,
    )
}

/// The reference between the core's clock and Python's `time.monotonic()`, handed over by
/// `ssewire._reading` on import (`_set_clock`): both read the same monotonic clock.
static CLOCK: std::sync::OnceLock<(std::time::Instant, f64)> = std::sync::OnceLock::new();

/// Records `time.monotonic()` read now (once; `ssewire._reading` calls it on import).
#[pyfunction]
#[pyo3(name = "_set_clock")]
pub fn set_clock(monotonic: f64) {
    let _ = CLOCK.set((std::time::Instant::now(), monotonic));
}

/// An instant as `time.monotonic()` seconds.
fn monotonic(at: std::time::Instant) -> f64 {
    let (reference, seconds) = *CLOCK.get_or_init(|| (std::time::Instant::now(), 0.0));
    match at.checked_duration_since(reference) {
        Some(after) => seconds + after.as_secs_f64(),
        None => seconds - reference.duration_since(at).as_secs_f64(),
    }
}

/// A [`crate::fold::summary::Summary`] as the gateway's log record holds it.
pub fn summary_dict<'py>(
    py: Python<'py>,
    summary: &crate::fold::summary::Summary,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    d.set_item("model", summary.model.as_deref())?;
    match &summary.usage {
        Some(usage) => d.set_item("usage", crate::py::json::out_to_py(py, usage)?)?,
        None => d.set_item("usage", py.None())?,
    }
    d.set_item("text_length", summary.text.chars().count())?;
    let start: String = summary.text.chars().take(40).collect();
    d.set_item("text_start", start)?;
    Ok(d)
}

/// The answer's text in `result_json`, a final object of `dialect` as JSON text (the
/// gateway's `final_text`; `crate::fold::summary` reads it).
#[pyfunction]
#[pyo3(name = "_final_text")]
pub fn final_text(dialect: &str, result_json: &str) -> PyResult<String> {
    let dialect = crate::dialect::Dialect::parse(dialect).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown dialect {:?}",
            dialect.chars().take(40).collect::<String>()
        ))
    })?;
    Ok(crate::fold::summary::final_text_of_json(
        dialect,
        result_json,
    ))
}

/// The `timing` dict of a stream.
pub fn timing_dict<'py>(
    py: Python<'py>,
    t: &crate::stream::timing::Timing,
    started: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let start = started.unwrap_or_else(|| monotonic(t.created));
    let at = |i: Option<std::time::Instant>| i.map(monotonic);
    let (first, last, finished) = (at(t.first_output), at(t.last_output), at(t.finished));
    d.set_item("started", start)?;
    d.set_item("first_byte", at(t.first_byte))?;
    d.set_item("first_output", first)?;
    d.set_item("last_output", last)?;
    d.set_item("finished", finished)?;
    d.set_item("output_chunks", t.output_chunks)?;
    d.set_item("time_to_first_output", first.map(|f| f - start))?;
    let per = match (first, last) {
        (Some(f), Some(l)) if t.output_chunks > 1 => Some((l - f) / (t.output_chunks - 1) as f64),
        _ => None,
    };
    d.set_item("time_per_output_chunk", per)?;
    d.set_item("duration", finished.or(last).map(|end| end - start))?;
    Ok(d)
}

/// Declares a dialect stream class: a `crate::stream::Stream` of the dialect's reader, the
/// conversion state ([`Conv`] and the dialect's reused strings, `$items`), and its Python
/// methods, the same for every dialect.
macro_rules! dialect_stream {
    ($name:ident, $pyname:literal, $reader:ident, $items:ty, $doc:literal) => {
        #[doc = $doc]
        #[pyclass(subclass, module = "ssewire", name = $pyname)]
        pub struct $name {
            stream: $crate::stream::Stream<$reader<<$items as $crate::py::stream::Items>::Item>>,
            conv: $crate::py::stream::Conv,
            items: $items,
            partial: $crate::py::partial::Partials,
            /// `started=`: when the request was sent (`time.monotonic()` seconds).
            started: Option<f64>,
        }

        impl $name {
            /// Frames, decodes and folds `data`; appends the items to `out` when given.
            fn run<'py>(
                &mut self,
                py: Python<'py>,
                data: &Bound<'py, PyAny>,
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<Option<$crate::framing::sse::TooLarge>> {
                let input = $crate::py::input::Input::extract(data)?;
                $crate::py::stream::Source::run_bytes(self, py, input.as_bytes(), out)
            }

            fn sink<'a, 'py>(
                conv: &'a mut $crate::py::stream::Conv,
                items: &'a mut $items,
                py: Python<'py>,
                list: Option<&'a Bound<'py, pyo3::types::PyList>>,
            ) -> $crate::py::stream::Out<'a, 'py, $items> {
                $crate::py::stream::Out {
                    py,
                    list,
                    conv,
                    x: items,
                }
            }
        }

        impl $crate::py::stream::Source for $name {
            fn tap(&mut self) -> &mut Option<Box<dyn $crate::stream::Tap>> {
                &mut self.stream.state.tap
            }

            fn run_bytes<'py>(
                &mut self,
                py: Python<'py>,
                bytes: &[u8],
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<Option<$crate::framing::sse::TooLarge>> {
                let mut sink = Self::sink(&mut self.conv, &mut self.items, py, out);
                let too_large = self.stream.run(bytes, &mut sink)?;
                self.conv.sync(py, &self.stream.state)?;
                Ok(too_large)
            }

            fn finish_into<'py>(
                &mut self,
                py: Python<'py>,
                out: Option<&Bound<'py, pyo3::types::PyList>>,
            ) -> PyResult<()> {
                let mut sink = Self::sink(&mut self.conv, &mut self.items, py, out);
                self.stream.finish(&mut sink)?;
                self.conv.sync(py, &self.stream.state)
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = (*, max_event_size = $crate::framing::sse::DEFAULT_MAX_EVENT_SIZE, framing = None, started = None))]
            fn new(
                max_event_size: usize,
                framing: Option<&str>,
                started: Option<f64>,
            ) -> PyResult<Self> {
                let mut stream = $crate::stream::Stream::new(max_event_size);
                // `None`: the dialect's own framing (SSE, or Converse's event stream).
                match (framing, stream.is_eventstream()) {
                    (None, _) | (Some("eventstream"), true) | (Some("sse"), false) => {}
                    (Some("eventstream"), false) => stream.read_eventstream(),
                    (Some(other), _) => {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "framing {:?} is not one this stream reads: expected {}",
                            other.chars().take(40).collect::<String>(),
                            if stream.is_eventstream() {
                                "\"eventstream\""
                            } else {
                                "\"sse\" or \"eventstream\""
                            }
                        )))
                    }
                }
                Ok($name {
                    stream,
                    conv: $crate::py::stream::Conv::new(),
                    items: <$items>::default(),
                    partial: Default::default(),
                    started,
                })
            }

            /// The stream's usage in one shape for every dialect (`input_tokens` with cached
            /// tokens, `output_tokens` with reasoning, `cached_input_tokens`,
            /// `cache_write_tokens`, `reasoning_tokens`, `total_tokens`; `None` for a count
            /// the provider did not send), or `None` until the stream reports usage. Built
            /// from the final object on each access (the provider's own figures stay in
            /// `result()`).
            #[getter]
            fn usage<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, pyo3::types::PyDict>>> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                let dialect = <$reader<()> as $crate::stream::Dialect>::REGISTRY;
                let usage = $crate::stream::Dialect::result_usage(&mut this.stream.reader)
                    .and_then(|u| $crate::translate::read::usage_in(dialect, &u));
                let Some(usage) = usage else {
                    return Ok(None);
                };
                let d = pyo3::types::PyDict::new(py);
                for (key, value) in usage.normalized() {
                    d.set_item(key, value)?;
                }
                Ok(Some(d))
            }

            /// The final object in brief, as the gateway logs it (`crate::fold::summary`, one
            /// reading for every dialect): `{"model", "usage", "text_length", "text_start"}`
            /// (the usage as the provider sent it; the length in code points, the start its
            /// first 40). Builds no Python object of the rest of the result.
            fn _summary<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                let py = slf.py();
                let summary = {
                    let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                    let dialect = <$reader<()> as $crate::stream::Dialect>::REGISTRY;
                    let result = $crate::stream::Dialect::result(&mut this.stream.reader);
                    $crate::fold::summary::summary(dialect, &result)
                };
                $crate::py::stream::summary_dict(py, &summary)
            }

            /// When the stream's bytes and output arrived, in `time.monotonic()` seconds, read
            /// in the core once per `feed()` / `consume()` call: `started` (the constructor's
            /// `started=`, else the stream's creation), `first_byte`, `first_output` (the
            /// first text, reasoning or tool-call piece), `last_output`, `finished`,
            /// `output_chunks`, and `time_to_first_output`, `time_per_output_chunk` (the mean
            /// after the first), `duration` (to `finished`, else to the last read with output).
            #[getter]
            fn timing<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                let this = $crate::py::errors::shared(slf, "stream")?;
                $crate::py::stream::timing_dict(slf.py(), &this.stream.timing, this.started)
            }

            /// How the body is framed: `"sse"`, `"ndjson"` (Ollama), or `"eventstream"` (Amazon
            /// Bedrock's InvokeModelWithResponseStream: each `chunk` event one document).
            #[getter]
            fn framing(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
                let this = $crate::py::errors::shared(slf, "stream")?;
                Ok(if this.stream.is_eventstream() {
                    "eventstream"
                } else {
                    <$reader<()> as $crate::stream::Dialect>::REGISTRY.spec().framing.name()
                })
            }

            /// The garbage collector's view: the errors the stream holds (a raised
            /// `stream.error` has a traceback that can lead back to the stream).
            fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
                self.conv.traverse(&visit)
            }

            /// Parses `data` (bytes, bytearray or memoryview); returns the decoded items.
            fn feed<'py>(
                slf: &Bound<'py, Self>,
                data: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                let out = pyo3::types::PyList::empty(py);
                let too_large = this.run(py, data, Some(&out))?;
                $crate::py::stream::result(py, out, too_large)
            }

            /// Frames, decodes and folds `data` exactly as `feed()` does, and records errors,
            /// but builds no item objects; returns `None`. `feed()` and `consume()` may be
            /// mixed on one stream.
            fn consume<'py>(slf: &Bound<'py, Self>, data: &Bound<'py, PyAny>) -> PyResult<()> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                match this.run(py, data, None)? {
                    Some(err) => Err($crate::py::errors::too_large(
                        py,
                        err,
                        pyo3::types::PyList::empty(py),
                    )),
                    None => Ok(()),
                }
            }

            /// Ends the input: decodes a last frame never closed by a blank line, and records
            /// an `incomplete_stream` error if the terminal marker never came (unless an error
            /// was already recorded).
            fn finish<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                let out = pyo3::types::PyList::empty(py);
                $crate::py::stream::Source::finish_into(&mut *this, py, Some(&out))?;
                Ok(out)
            }

            /// The final object folded from everything fed so far (partial before the
            /// terminal marker), shaped like the provider's non-streaming response; a new dict
            /// on each call. Each call builds the whole object, O(the result): for a live view
            /// read the items, or `partial_arguments()` for a tool call's arguments, rather
            /// than calling this after every delta.
            fn result<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                let mut guard = $crate::py::errors::exclusive(slf, "stream")?;
                $crate::stream::Dialect::result_in(
                    &mut guard.stream.reader,
                    &mut $crate::py::json::PyBuild(slf.py()),
                )
            }

            /// The arguments of tool call `index` so far, as `PartialJSON.value` gives them
            /// (the same containers from call to call, updated in place). `index` is the
            /// dialect's own: chat `tool_calls[].index` within choice `choice`, Messages content
            /// block index, Responses `output_index`. `KeyError` if there is no such call.
            #[pyo3(signature = (index, choice = 0))]
            fn partial_arguments(
                slf: &Bound<'_, Self>,
                index: i64,
                choice: i64,
            ) -> PyResult<Py<PyAny>> {
                let py = slf.py();
                let mut guard = $crate::py::errors::exclusive(slf, "stream")?;
                let this = &mut *guard;
                let source = $crate::stream::Dialect::arguments(&this.stream.reader, choice, index)
                    .ok_or_else(|| {
                        pyo3::exceptions::PyKeyError::new_err(format!(
                            "no tool call with index {index} in choice {choice}"
                        ))
                    })?;
                this.partial.read(py, (choice, index), source)
            }

            /// Notes about input the fold had to interpret or could not hold as sent (tool
            /// input that is not valid JSON, a delta for a block that never started, ...): the
            /// same list the dialect's accumulator gives (a new list on each read).
            #[getter]
            fn warnings(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
                let mut this = $crate::py::errors::exclusive(slf, "stream")?;
                Ok($crate::stream::Dialect::warnings(&mut this.stream.reader))
            }

            /// Whether the terminal marker was seen.
            #[getter]
            fn done(slf: &Bound<'_, Self>) -> PyResult<bool> {
                Ok($crate::py::errors::shared(slf, "stream")?.stream.state.done)
            }

            /// The first error the stream carried (or the incomplete-stream error after
            /// `finish()`), `None` if none.
            #[getter]
            fn error(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
                Ok($crate::py::errors::shared(slf, "stream")?
                    .conv
                    .error_ref(slf.py()))
            }

            /// Every `ErrorItem` of the stream so far, in arrival order (a new list).
            #[getter]
            fn errors<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                let py = slf.py();
                let this = $crate::py::errors::shared(slf, "stream")?;
                pyo3::types::PyList::new(py, this.conv.errors.iter().map(|e| e.clone_ref(py)))
            }

            /// How many frames the template fast path read without a decode (for the tests and
            /// the benches; not part of the API).
            #[getter]
            fn _fast_frames(slf: &Bound<'_, Self>) -> PyResult<u64> {
                Ok($crate::py::errors::shared(slf, "stream")?.stream.state.fast)
            }

            /// The limit on the size of one event, in bytes.
            #[getter]
            fn max_event_size(slf: &Bound<'_, Self>) -> PyResult<usize> {
                Ok($crate::py::errors::shared(slf, "stream")?
                    .stream
                    .max_event_size())
            }
        }
    };
}
pub(crate) use dialect_stream;

/// Declares an accumulator class: a dialect's fold (the same one its stream runs) fed with that
/// dialect's items, which it reads natively (`$fold_item`), plus what every accumulator does
/// with `ErrorItem`s, `Event`s and foreign objects ([`AccumulatorErrors`]). `$extra` adds the
/// dialect's own getters (its notes). Calls on an accumulator another call is using raise
/// `ConcurrentUseError`, as on the streams.
macro_rules! accumulator_class {
    ($name:ident, $pyname:literal, $fold:ty, $item:ty, $expected:literal, $fold_item:path,
     $doc:literal, { $($extra:tt)* }) => {
        #[doc = $doc]
        #[pyclass(module = "ssewire", name = $pyname)]
        pub struct $name {
            fold: $fold,
            errors: $crate::py::stream::AccumulatorErrors,
        }

        impl $name {
            fn add_one(&mut self, item: &Bound<'_, PyAny>) -> PyResult<()> {
                match item.cast::<$item>() {
                    Ok(event) => {
                        $fold_item(item.py(), &mut self.fold, event.get());
                        Ok(())
                    }
                    Err(_) => self.errors.other(item, $expected),
                }
            }
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new() -> Self {
                $name {
                    fold: <$fold>::default(),
                    errors: $crate::py::stream::AccumulatorErrors::default(),
                }
            }

            /// The garbage collector's view of the errors held.
            fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
                self.errors.traverse(&visit)
            }

            /// Adds one item of the dialect, an `ErrorItem` or an `Event` (the last is
            /// ignored); `TypeError` for anything else.
            fn add(slf: &Bound<'_, Self>, item: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::py::errors::exclusive(slf, "accumulator")?.add_one(item)
            }

            /// Adds every item of `items` (e.g. the list one `feed()` returned).
            fn add_all(slf: &Bound<'_, Self>, items: &Bound<'_, PyAny>) -> PyResult<()> {
                let mut this = $crate::py::errors::exclusive(slf, "accumulator")?;
                if let Ok(list) = items.cast::<pyo3::types::PyList>() {
                    // The list one feed() returned: no iterator object.
                    for item in list.iter() {
                        this.add_one(&item)?;
                    }
                    return Ok(());
                }
                for item in items.try_iter()? {
                    this.add_one(&item?)?;
                }
                Ok(())
            }

            /// The accumulated final object (a new dict on every call).
            fn result<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                let out = $crate::py::errors::exclusive(slf, "accumulator")?.fold.result();
                Ok($crate::py::json::out_to_py(slf.py(), &out)?.cast_into()?)
            }

            /// The first server-reported error (`ErrorItem.kind == "stream_error"`), else
            /// `None`.
            #[getter]
            fn error(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
                Ok($crate::py::errors::shared(slf, "accumulator")?.errors.error(slf.py()))
            }

            /// Every `ErrorItem` added (stream errors and malformed frames), in order.
            #[getter]
            fn errors<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<Bound<'py, pyo3::types::PyList>> {
                $crate::py::errors::shared(slf, "accumulator")?.errors.errors(slf.py())
            }

            $($extra)*
        }
    };
}
pub(crate) use accumulator_class;
