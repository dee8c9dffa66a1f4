//! `ssewire.CohereEvent`, the item of `ssewire.CohereStream` (Cohere's v2 chat stream; API.md
//! section 16).
//!
//! Converts only: `crate::stream::cohere` reads and folds the events, each handed here
//! (`CohereItems`) to become one flat `CohereEvent`. Event kinds and names are built once per
//! stream; the usage, a citation and the whole event stay JSON text, decoded when read.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::json::{lazy, repr_of, ItemDict};
use super::stream::{dialect_stream, Items, Out};
use super::strings::{int_or_none, name_or_none, str_or_none, Names};
use crate::dialect::cohere::Event;
use crate::json::read::Str;
use crate::stream::cohere::{CohereItems, CohereReader};

/// One event of a Cohere stream, flattened: a content piece's `text` or `thinking`, a
/// `tool_plan` piece, a tool call's `tool_call_id`, `name` and `arguments` piece, and
/// `message-end`'s `finish_reason` side by side.
#[pyclass(frozen, module = "ssewire", name = "CohereEvent")]
pub struct CohereEvent {
    /// `message-start`, `content-delta`, `tool-call-start`, ..., `message-end`.
    #[pyo3(get, name = "type")]
    type_: Py<PyAny>,
    #[pyo3(get)]
    index: Py<PyAny>,
    /// The message's id (`message-start`).
    #[pyo3(get)]
    id: Py<PyAny>,
    /// A content part's type (`text` or `thinking`, `content-start`).
    #[pyo3(get)]
    content_type: Py<PyAny>,
    #[pyo3(get)]
    text: Py<PyAny>,
    #[pyo3(get)]
    thinking: Py<PyAny>,
    #[pyo3(get)]
    tool_plan: Py<PyAny>,
    #[pyo3(get)]
    tool_call_id: Py<PyAny>,
    #[pyo3(get)]
    name: Py<PyAny>,
    /// A piece of a tool call's arguments (JSON text).
    #[pyo3(get)]
    arguments: Py<PyAny>,
    #[pyo3(get)]
    finish_reason: Py<PyAny>,
    citation_json: Option<Box<str>>,
    usage_json: Option<Box<str>>,
    raw_json: Box<str>,
}

#[pymethods]
impl CohereEvent {
    /// The citation of a `citation-start` (`{start, end, text, sources, ...}`).
    #[getter]
    fn citation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.citation_json.as_deref())
    }

    /// The usage of a `message-end` (`billed_units`, `tokens`, `cached_tokens`).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.usage_json.as_deref())
    }

    /// The whole event as a dict, decoded on each access.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, Some(&self.raw_json))
    }

    /// The event as a dict, as `ssewire --events` prints it: the fields that are not `None`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&self.plain())?;
        d.json("citation", self.citation_json.as_deref())?;
        d.json("usage", self.usage_json.as_deref())?;
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "CohereEvent", &self.plain())
    }
}

impl CohereEvent {
    /// The fields held as Python objects, by name, in order.
    fn plain(&self) -> [(&'static str, &Py<PyAny>); 11] {
        [
            ("type", &self.type_),
            ("index", &self.index),
            ("id", &self.id),
            ("content_type", &self.content_type),
            ("text", &self.text),
            ("thinking", &self.thinking),
            ("tool_plan", &self.tool_plan),
            ("tool_call_id", &self.tool_call_id),
            ("name", &self.name),
            ("arguments", &self.arguments),
            ("finish_reason", &self.finish_reason),
        ]
    }
}

/// The conversion state of a Cohere stream: the names (kinds, reasons, tool names) built once.
#[derive(Default)]
pub struct CohereNames {
    names: Names,
}

impl Items for CohereNames {
    type Item = ();
}

impl CohereItems for Out<'_, '_, CohereNames> {
    fn event(&mut self, e: &Event<'_>, kind: &str, doc: &str) -> PyResult<()> {
        let py = self.py;
        let names = &mut self.x.names;
        let content = e.content();
        let call = e.call();
        let function = call.and_then(|c| c.function.as_ref());
        let kind = Str(std::borrow::Cow::Borrowed(kind));
        let item = CohereEvent {
            type_: name_or_none(py, names, Some(&kind)),
            index: int_or_none(py, e.index()),
            id: str_or_none(py, e.id.as_deref()),
            content_type: name_or_none(py, names, content.and_then(|c| c.type_.as_ref())),
            text: str_or_none(py, content.and_then(|c| c.text.as_deref())),
            thinking: str_or_none(py, content.and_then(|c| c.thinking.as_deref())),
            tool_plan: str_or_none(py, e.tool_plan()),
            tool_call_id: str_or_none(py, call.and_then(|c| c.id.as_deref())),
            name: name_or_none(py, names, function.and_then(|f| f.name.as_ref())),
            arguments: str_or_none(py, function.and_then(|f| f.arguments.as_deref())),
            finish_reason: name_or_none(
                py,
                names,
                e.delta.as_ref().and_then(|d| d.finish_reason.as_ref()),
            ),
            citation_json: e.citation().map(|c| c.get().into()),
            usage_json: e.usage().map(|u| u.get().into()),
            raw_json: doc.into(),
        };
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    CohereStream,
    "CohereStream",
    CohereReader,
    CohereNames,
    "Cohere's v2 chat stream (`POST /v2/chat`, `stream: true`; SSE, typed events): framing, event decoding and the fold into the non-streaming v2 chat response."
);
