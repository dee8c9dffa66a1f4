//! `ssewire.OllamaChunk`, the item of `ssewire.OllamaStream` (Ollama's native `/api/chat` and
//! `/api/generate`, NDJSON; API.md section 16).
//!
//! Converts only: `crate::stream::ollama` reads and folds the lines, each handed here
//! (`OllamaItems`) to become one flat `OllamaChunk`. The model name is built once per stream;
//! tool calls, the counts and the whole line stay JSON text, decoded when read.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::json::{lazy, repr_of, ItemDict};
use super::stream::{dialect_stream, Items, Out};
use super::strings::{flag, name_or_none, str_or_none, Names};
use crate::dialect::ollama::Line;
use crate::stream::ollama::{OllamaItems, OllamaReader};

/// One line of an Ollama stream, flattened: a chat line's `message` fields and a generate
/// line's `response` side by side.
#[pyclass(frozen, module = "ssewire", name = "OllamaChunk")]
pub struct OllamaChunk {
    #[pyo3(get)]
    model: Py<PyAny>,
    #[pyo3(get)]
    created_at: Py<PyAny>,
    /// The message's role (chat lines).
    #[pyo3(get)]
    role: Py<PyAny>,
    /// A piece of the answer: the message's `content`, or generate's `response`.
    #[pyo3(get)]
    content: Py<PyAny>,
    /// A piece of the model's thinking.
    #[pyo3(get)]
    thinking: Py<PyAny>,
    /// `True` on the terminal line.
    #[pyo3(get)]
    done: Py<PyAny>,
    /// The terminal line's `done_reason` (`stop`, `length`, `load`, `unload`).
    #[pyo3(get)]
    done_reason: Py<PyAny>,
    tool_calls_json: Option<Box<str>>,
    raw_json: Box<str>,
}

#[pymethods]
impl OllamaChunk {
    /// The message's whole tool calls (`[{"function": {"name", "arguments": {...}}}]`).
    #[getter]
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.tool_calls_json.as_deref())
    }

    /// The whole line as a dict, decoded on each access (the terminal line's counts and
    /// durations are here).
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, Some(&self.raw_json))
    }

    /// The line as a dict, as `ssewire --events` prints it: the fields that are not `None`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&self.plain())?;
        d.json("tool_calls", self.tool_calls_json.as_deref())?;
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(py, "OllamaChunk", &self.plain()[2..])
    }
}

impl OllamaChunk {
    /// The fields held as Python objects, by name, in order.
    fn plain(&self) -> [(&'static str, &Py<PyAny>); 7] {
        [
            ("model", &self.model),
            ("created_at", &self.created_at),
            ("role", &self.role),
            ("content", &self.content),
            ("thinking", &self.thinking),
            ("done", &self.done),
            ("done_reason", &self.done_reason),
        ]
    }
}

/// The conversion state of an Ollama stream: the names (model, role, reasons) built once.
#[derive(Default)]
pub struct OllamaNames {
    names: Names,
}

impl Items for OllamaNames {
    type Item = ();
}

impl OllamaItems for Out<'_, '_, OllamaNames> {
    fn line(&mut self, line: &Line<'_>, doc: &str) -> PyResult<()> {
        let py = self.py;
        let names = &mut self.x.names;
        let message = line.message.as_ref();
        let content = message
            .and_then(|m| m.content.as_deref())
            .or(line.response.as_deref());
        let thinking = message
            .and_then(|m| m.thinking.as_deref())
            .or(line.thinking.as_deref());
        let item = OllamaChunk {
            model: name_or_none(py, names, line.model.as_ref()),
            created_at: str_or_none(py, line.created_at.as_deref()),
            role: str_or_none(py, message.and_then(|m| m.role.as_deref())),
            content: str_or_none(py, content),
            thinking: str_or_none(py, thinking),
            done: line.done.map_or_else(|| py.None(), |d| flag(py, d)),
            done_reason: str_or_none(py, line.done_reason.as_deref()),
            tool_calls_json: message.and_then(|m| m.tool_calls).map(|r| r.get().into()),
            raw_json: doc.into(),
        };
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    OllamaStream,
    "OllamaStream",
    OllamaReader,
    OllamaNames,
    "Ollama's native `POST /api/chat` and `/api/generate` stream (NDJSON, one JSON object a line; never keyed on the content type): framing, line decoding and the fold into the non-streaming response."
);
