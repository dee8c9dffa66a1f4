//! `ssewire.ConverseEvent`, the item of `ssewire.ConverseStream` (Amazon Bedrock
//! `ConverseStream`; API.md section 11).
//!
//! Converts only: `crate::stream::converse` reads and folds the events, each handed here
//! (`ConverseItems`) to become one flat `ConverseEvent`. The rarely read parts (a block's
//! start, a citation, usage, metrics, the whole payload) stay JSON text, decoded when read.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use super::json::{lazy, repr_of, ItemDict};
use super::stream::{dialect_stream, Items, Out};
use super::strings::{int_or_none, str_or_none};
use crate::dialect::converse::Event;
use crate::stream::converse::{ConverseItems, ConverseReader};

/// One event of a Bedrock Converse stream, flattened: `type` is its `:event-type`
/// (`messageStart`, `contentBlockStart`, `contentBlockDelta`, `contentBlockStop`,
/// `messageStop`, `metadata`).
#[pyclass(frozen, module = "ssewire", name = "ConverseEvent")]
pub struct ConverseEvent {
    #[pyo3(get, name = "type")]
    type_: Py<PyString>,
    #[pyo3(get)]
    content_block_index: Py<PyAny>,
    /// `messageStart`'s role.
    #[pyo3(get)]
    role: Py<PyAny>,
    /// A text delta.
    #[pyo3(get)]
    text: Py<PyAny>,
    /// `contentBlockStart` of a tool call: its id and name.
    #[pyo3(get)]
    tool_use_id: Py<PyAny>,
    #[pyo3(get)]
    name: Py<PyAny>,
    /// A piece of a tool call's JSON input.
    #[pyo3(get)]
    input: Py<PyAny>,
    /// Reasoning text, its signature, or redacted reasoning (bytes).
    #[pyo3(get)]
    reasoning_text: Py<PyAny>,
    #[pyo3(get)]
    signature: Py<PyAny>,
    #[pyo3(get)]
    redacted_content: Py<PyAny>,
    /// `messageStop`'s stop reason.
    #[pyo3(get)]
    stop_reason: Py<PyAny>,
    usage_json: Option<Box<str>>,
    metrics_json: Option<Box<str>>,
    citation_json: Option<Box<str>>,
    start_json: Option<Box<str>>,
    raw_json: Box<str>,
}

#[pymethods]
impl ConverseEvent {
    /// `metadata`'s usage (`inputTokens`, `outputTokens`, `totalTokens`, cache counts).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.usage_json.as_deref())
    }

    /// `metadata`'s metrics (`latencyMs`).
    #[getter]
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.metrics_json.as_deref())
    }

    /// A citation delta, as sent.
    #[getter]
    fn citation<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.citation_json.as_deref())
    }

    /// `contentBlockStart`'s `start`, as sent.
    #[getter]
    fn start<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.start_json.as_deref())
    }

    /// The whole payload as a dict, decoded on each access.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, Some(&self.raw_json))
    }

    /// The event as a dict, as `ssewire --events` prints it: the fields that are not `None`
    /// (`redacted_content` as bytes).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.0.set_item("type", &self.type_)?;
        d.fields(&self.plain())?;
        d.json("usage", self.usage_json.as_deref())?;
        d.json("metrics", self.metrics_json.as_deref())?;
        d.json("citation", self.citation_json.as_deref())?;
        d.json("start", self.start_json.as_deref())?;
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let type_ = self.type_.clone_ref(py).into_any();
        let mut fields = vec![("type", &type_)];
        fields.extend(
            self.plain()
                .into_iter()
                .filter(|(n, _)| *n != "redacted_content"),
        );
        repr_of(py, "ConverseEvent", &fields)
    }
}

impl ConverseEvent {
    /// The fields held as Python objects (but `type`), by name, in order.
    fn plain(&self) -> [(&'static str, &Py<PyAny>); 10] {
        [
            ("content_block_index", &self.content_block_index),
            ("role", &self.role),
            ("text", &self.text),
            ("tool_use_id", &self.tool_use_id),
            ("name", &self.name),
            ("input", &self.input),
            ("reasoning_text", &self.reasoning_text),
            ("signature", &self.signature),
            ("redacted_content", &self.redacted_content),
            ("stop_reason", &self.stop_reason),
        ]
    }
}

/// The conversion state of a Converse stream (nothing reused yet).
#[derive(Default)]
pub struct ConverseNames;

impl Items for ConverseNames {
    type Item = ();
}

impl ConverseItems for Out<'_, '_, ConverseNames> {
    fn event(&mut self, kind: &str, ev: &Event<'_>, doc: &str) -> PyResult<()> {
        let py = self.py;
        let delta = ev.delta.as_ref();
        let reasoning = delta.and_then(|d| d.reasoning_content.as_ref());
        let tool = ev.tool_start();
        let redacted = reasoning
            .and_then(|r| r.redacted_content.as_deref())
            .map(|b64| match crate::base64::decode(b64) {
                Some(bytes) => PyBytes::new(py, &bytes).into_any().unbind(),
                None => PyString::new(py, b64).into_any().unbind(),
            })
            .unwrap_or_else(|| py.None());
        let item = ConverseEvent {
            type_: PyString::new(py, kind).unbind(),
            content_block_index: int_or_none(py, ev.content_block_index),
            role: str_or_none(py, ev.role.as_deref()),
            text: str_or_none(py, delta.and_then(|d| d.text.as_deref())),
            tool_use_id: str_or_none(py, tool.as_ref().and_then(|t| t.tool_use_id.as_deref())),
            name: str_or_none(py, tool.as_ref().and_then(|t| t.name.as_deref())),
            input: str_or_none(
                py,
                delta.and_then(|d| d.tool_use.as_ref()?.input.as_deref()),
            ),
            reasoning_text: str_or_none(py, reasoning.and_then(|r| r.text.as_deref())),
            signature: str_or_none(py, reasoning.and_then(|r| r.signature.as_deref())),
            redacted_content: redacted,
            stop_reason: str_or_none(py, ev.stop_reason.as_deref()),
            usage_json: ev.usage.map(|r| r.get().into()),
            metrics_json: ev.metrics.map(|r| r.get().into()),
            citation_json: delta.and_then(|d| d.citation).map(|r| r.get().into()),
            start_json: ev.start.map(|r| r.get().into()),
            raw_json: doc.into(),
        };
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    ConverseStream,
    "ConverseStream",
    ConverseReader,
    ConverseNames,
    "Amazon Bedrock `ConverseStream` stream (the AWS event stream framing, `application/vnd.amazon.eventstream`): framing, event decoding and the fold into `converse()`'s response."
);
