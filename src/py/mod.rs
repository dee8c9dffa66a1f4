//! The Python module `ssewire._core`: the only part of the crate that uses PyO3.
//!
//! Each submodule converts; none parses. `input` borrows the caller's bytes through the buffer
//! protocol, `strings` builds (and reuses) Python strings, `errors` is the one place where Rust
//! errors become Python exceptions, and `sse` exposes the framer. Per `feed()` there is one
//! crossing: the core fills a `Vec` in pure Rust, then one pass turns it into a Python list.

use pyo3::prelude::*;

mod assemble;
crate::dialect::registry::dialects!(crate::dialect::registry::modules);
mod errors;
mod eventstream;
mod http;
mod input;
mod json;
mod partial;
mod relay;
mod request;
mod sse;
mod stream;
mod strings;
mod translate;

// Free-threading: the module declares that it does not need the GIL. It has no global
// mutable state (string reuse is per parser; the exception classes are imported once through
// pyo3's thread-safe cells), every object guards its own state with pyo3's borrow flag, and a
// call that overlaps another call on the same object raises `ConcurrentUseError` instead of
// racing (see `errors::exclusive`). One parser per stream, as the README says.
/// Whether the start of a body that dispatched no event reads as an event stream (empty, or a
/// comment or SSE field line in it): the rule the dialect streams use to report
/// `not_event_stream`, for the command line's `--dialect sse`.
#[pyfunction]
#[pyo3(name = "_is_event_stream")]
fn is_event_stream(head: &Bound<'_, PyAny>) -> PyResult<bool> {
    let input = crate::py::input::Input::extract(head)?;
    Ok(crate::framing::body::is_event_stream(input.as_bytes()))
}

/// The dialect a body's head shows, by the Rust decoders' rules (`crate::translate::detect`):
/// `detect_dialect` and `accumulate(dialect="auto")` ask it, as `Translator("auto")` does.
#[pyfunction]
#[pyo3(name = "_detect_dialect")]
fn detect_dialect(head: &Bound<'_, PyAny>, fin: bool) -> PyResult<Option<&'static str>> {
    let input = crate::py::input::Input::extract(head)?;
    Ok(crate::translate::detect(input.as_bytes(), fin))
}

/// The one dialect detector with its one buffering policy (`crate::translate::Sniffer`), for
/// `accumulate(dialect="auto")`, `detect_dialect()` and the command line (private: the
/// package's own objects guard it).
#[pyclass(module = "ssewire._core", name = "_DialectSniffer")]
struct DialectSniffer {
    inner: crate::translate::Sniffer,
}

#[pymethods]
impl DialectSniffer {
    #[new]
    #[pyo3(signature = (max_event_size = crate::framing::sse::DEFAULT_MAX_EVENT_SIZE))]
    fn new(max_event_size: usize) -> Self {
        DialectSniffer {
            inner: crate::translate::Sniffer::new(max_event_size),
        }
    }

    /// Holds `data`; the dialect's name once it is told.
    fn feed(&mut self, data: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
        let input = crate::py::input::Input::extract(data)?;
        Ok(self.inner.feed_name(input.as_bytes()))
    }

    /// The dialect's name at the end of the input (`"sse"` when nothing tells).
    fn finish(&self) -> &'static str {
        self.inner.at_end_name()
    }

    /// The bytes held, taken.
    fn take<'py>(&mut self, py: Python<'py>) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &self.inner.take_held())
    }

    #[getter]
    fn held(&self) -> usize {
        self.inner.held_len()
    }
}

/// `ssewire._core` made in this process without importing the package: for
/// `benches/stages.rs`, which links the crate into a binary that embeds an interpreter and
/// times the Python side (item objects, `result()`'s dict) beside the pure-Rust stages.
#[doc(hidden)]
pub fn bench_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let m = PyModule::new(py, "_core")?;
    core_module(&m)?;
    Ok(m)
}

/// The dialect registry (`crate::dialect::registry`) as a tuple of dicts, one per dialect in
/// its order: what Python code needs to know of the dialects, so it keeps no list of its own.
fn registry(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyTuple>> {
    let rows = crate::dialect::SPECS.iter().map(|s| {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("name", s.name)?;
        d.set_item("stream_class", s.stream_class)?;
        d.set_item("family", s.family.name())?;
        d.set_item("terminal", s.terminal)?;
        d.set_item("stream_path", s.stream_path)?;
        d.set_item("whole_path", s.whole_path)?;
        d.set_item("invoke_paths", s.invoke_paths)?;
        d.set_item("other_paths", pyo3::types::PyTuple::new(py, s.other_paths)?)?;
        d.set_item("query", pyo3::types::PyTuple::new(py, s.query)?)?;
        d.set_item("key_header", s.key_header)?;
        d.set_item(
            "client_key_headers",
            pyo3::types::PyTuple::new(py, s.client_key.0)?,
        )?;
        d.set_item(
            "client_key_query",
            (!s.client_key.1.is_empty()).then_some(s.client_key.1),
        )?;
        d.set_item("request_id", s.request_id)?;
        d.set_item("version_header", s.version_header)?;
        d.set_item("otel_provider", s.otel_provider)?;
        d.set_item("model_key", s.result_keys.0)?;
        d.set_item("usage_key", s.result_keys.1)?;
        d.set_item("framing", s.framing.name())?;
        d.set_item("content_type", s.framing.content_type())?;
        d.set_item("streams_by_default", s.streams_by_default)?;
        d.set_item("translates", s.translates)?;
        d.set_item("requests", s.requests)?;
        d.set_item("serves", s.serves)?;
        d.set_item("upstream", s.upstream)?;
        d.set_item("source", s.source)?;
        d.set_item("sigv4", s.sigv4)?;
        Ok(d)
    });
    pyo3::types::PyTuple::new(py, rows.collect::<PyResult<Vec<_>>>()?)
}

#[pymodule(gil_used = false)]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_MAX_EVENT_SIZE",
        crate::framing::sse::DEFAULT_MAX_EVENT_SIZE,
    )?;
    m.add_class::<sse::SseParser>()?;
    m.add_class::<sse::Event>()?;
    m.add_class::<eventstream::EventStreamParser>()?;
    m.add_class::<eventstream::EventStreamMessage>()?;
    m.add_function(wrap_pyfunction!(eventstream::encode_message, m)?)?;
    m.add_function(wrap_pyfunction!(sse::encode_event, m)?)?;
    m.add_function(wrap_pyfunction!(is_event_stream, m)?)?;
    m.add_function(wrap_pyfunction!(detect_dialect, m)?)?;
    m.add_class::<DialectSniffer>()?;
    m.add_class::<assemble::Assembly>()?;
    m.add_function(wrap_pyfunction!(translate::set_stream_classes, m)?)?;
    m.add_function(wrap_pyfunction!(stream::set_clock, m)?)?;
    m.add_function(wrap_pyfunction!(stream::final_text, m)?)?;
    m.add("DIALECTS", registry(m.py())?)?;
    m.add("SNIFF_BYTES", crate::translate::SNIFF_BYTES)?;
    m.add("SNIFF_EVENTS", crate::translate::SNIFF_EVENTS)?;
    m.add_function(wrap_pyfunction!(request::translate_request, m)?)?;
    m.add_function(wrap_pyfunction!(request::translate_error, m)?)?;
    m.add_function(wrap_pyfunction!(request::error_body, m)?)?;
    m.add_function(wrap_pyfunction!(request::model_segment, m)?)?;
    m.add_function(wrap_pyfunction!(relay::ask_for_usage, m)?)?;
    m.add_function(wrap_pyfunction!(relay::stored_ids, m)?)?;
    m.add_class::<relay::DropUsage>()?;
    errors::register(m)?;
    m.add_class::<stream::ErrorItem>()?;
    m.add_class::<chat::ToolCallDelta>()?;
    m.add_class::<chat::ChatCompletionAccumulator>()?;
    m.add_class::<messages::MessageAccumulator>()?;
    m.add_class::<responses::ResponseAccumulator>()?;
    // Each dialect's stream class and item class, from the dialect list.
    macro_rules! add_each {
        ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
            $(
                m.add_class::<$m::$item>()?;
                m.add_class::<$m::$class>()?;
            )*
        };
    }
    crate::dialect::registry::dialects!(add_each);
    m.add_class::<partial::PartialJSON>()?;
    m.add_class::<translate::Translator>()?;
    m.add_class::<http::HttpResponseReader>()?;
    m.add("DEFAULT_MAX_HEAD_SIZE", crate::http::DEFAULT_MAX_HEAD)?;
    m.add(
        "HTTPProtocolError",
        m.py().get_type::<http::HTTPProtocolError>(),
    )?;
    Ok(())
}
