//! `ssewire.GeminiChunk`, the item of `ssewire.GeminiStream` (Google `streamGenerateContent`,
//! Gemini API and Vertex AI; API.md section 9).
//!
//! Converts only: `crate::stream::gemini` reads, folds and templates the chunks and cuts them
//! into items (one per candidate, per run of text of one kind), each handed here
//! (`GeminiItems`) to become one flat `GeminiChunk`. Model version, response id and finish
//! reasons are built once per stream; the rarely read parts (usage, the function call, the
//! parts, the whole chunk) stay JSON text, decoded when read. Carried across feeds: the
//! stream, the names.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::json::{lazy, ItemDict};
use super::stream::{dialect_stream, Items, Out};
use super::strings::{flag, int_or_none, name_or_none, str_or_none, Names};
use crate::dialect::gemini::{unshown, Chunk};
use crate::stream::gemini::{GeminiItem, GeminiItems, GeminiReader};

/// One candidate of one chunk of a Gemini stream, flattened.
#[pyclass(frozen, module = "ssewire", name = "GeminiChunk")]
pub struct GeminiChunk {
    /// The candidate's index (its position in the chunk when it has none); `None` for a chunk
    /// without candidates (usage or prompt feedback only).
    #[pyo3(get)]
    index: Py<PyAny>,
    /// The text of the candidate's text parts in this chunk, joined; `None` if it has none.
    #[pyo3(get)]
    text: Py<PyAny>,
    /// Whether that text is the model's thinking (`thought: true` parts).
    #[pyo3(get)]
    thought: Py<PyAny>,
    #[pyo3(get)]
    thought_signature: Py<PyAny>,
    #[pyo3(get)]
    finish_reason: Py<PyAny>,
    #[pyo3(get)]
    model_version: Py<PyAny>,
    #[pyo3(get)]
    response_id: Py<PyAny>,
    function_call_json: Option<Box<str>>,
    /// Every `functionCall` of the candidate in this chunk, as a JSON list (with the first).
    function_calls_json: Option<Box<str>>,
    usage_json: Option<Box<str>>,
    raw_json: Option<std::sync::Arc<str>>,
    /// The candidate's position in the chunk's `candidates` (for `parts`).
    position: Option<usize>,
}

#[pymethods]
impl GeminiChunk {
    /// The candidate's first `functionCall` in this chunk, as sent (a whole call's `name` and
    /// `args`, or one piece of a Vertex streamed call: `partialArgs`, `willContinue`).
    #[getter]
    fn function_call<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.function_call_json.as_deref())
    }

    /// Every `functionCall` of the candidate in this chunk, in order, as sent (a list; empty
    /// when there is none). A model that calls tools in parallel sends them in one chunk.
    #[getter]
    fn function_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match lazy(py, self.function_calls_json.as_deref())? {
            Some(list) => Ok(list),
            None => Ok(pyo3::types::PyList::empty(py).into_any()),
        }
    }

    /// The chunk's `usageMetadata` (cumulative: the last one counts the whole answer).
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.usage_json.as_deref())
    }

    /// The whole chunk as a dict, decoded on each access.
    #[getter]
    fn raw<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.raw_json.as_deref())
    }

    /// The candidate's `content.parts` in this chunk, as sent (a list of dicts), decoded on
    /// each access; `None` for a chunk without candidates.
    #[getter]
    fn parts<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let (Some(raw), Some(at)) = (self.raw(py)?, self.position) else {
            return Ok(None);
        };
        let part_list = raw
            .get_item("candidates")
            .and_then(|c| c.get_item(at))
            .and_then(|c| c.get_item("content"))
            .and_then(|c| c.get_item("parts"));
        Ok(Some(match part_list {
            Ok(parts) if !parts.is_none() => parts,
            _ => PyList::empty(py).into_any(),
        }))
    }

    /// The chunk as a dict, as `ssewire --events` prints it: the fields that are not `None`
    /// (`thought` only when true); `parts` when a part holds more than text; under `"other"`
    /// the candidate's members no field shows; the chunk's `prompt_feedback`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&[("index", &self.index), ("text", &self.text)])?;
        if self.thought.bind(py).is_truthy()? {
            d.field("thought", &self.thought)?;
        }
        d.field("thought_signature", &self.thought_signature)?;
        d.json("function_call", self.function_call_json.as_deref())?;
        d.field("finish_reason", &self.finish_reason)?;
        d.json("usage", self.usage_json.as_deref())?;
        d.fields(&[
            ("model_version", &self.model_version),
            ("response_id", &self.response_id),
        ])?;
        if let Some(raw) = self.raw_json.as_deref() {
            let rest = unshown(raw, self.position);
            if rest.parts {
                if let Some(parts) = self.parts(py)? {
                    d.0.set_item("parts", parts)?;
                }
            }
            d.json("other", rest.candidate.as_deref())?;
            d.json("prompt_feedback", rest.prompt_feedback)?;
        }
        Ok(d.0)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = Vec::new();
        for (name, value) in [
            ("index", &self.index),
            ("text", &self.text),
            ("thought_signature", &self.thought_signature),
            ("finish_reason", &self.finish_reason),
        ] {
            if !value.is_none(py) {
                parts.push(format!("{name}={}", value.bind(py).repr()?));
            }
        }
        if self.thought.bind(py).is_truthy()? {
            parts.push("thought=True".into());
        }
        if let Some(call) = self.function_call(py)? {
            parts.push(format!("function_call={}", call.repr()?));
        }
        Ok(format!("GeminiChunk({})", parts.join(", ")))
    }
}

/// The conversion state of a Gemini stream: the names (model version, response id, finish
/// reasons) built once, and what the items of the chunk being converted share.
#[derive(Default)]
pub struct GeminiNames {
    names: Names,
    chunk: Option<Shared>,
}

/// What the items of one chunk share.
struct Shared {
    raw: Arc<str>,
    model_version: Py<PyAny>,
    response_id: Py<PyAny>,
    usage: Option<Box<str>>,
}

impl Items for GeminiNames {
    /// What a template's items share: the index, the model version, the response id.
    type Item = (Py<PyAny>, Py<PyAny>, Py<PyAny>);
}

impl GeminiItems for Out<'_, '_, GeminiNames> {
    fn item(
        &mut self,
        chunk: &Chunk<'_>,
        doc: &str,
        it: &GeminiItem<'_>,
        first: bool,
    ) -> PyResult<()> {
        let py = self.py;
        let x = &mut *self.x;
        let names = &mut x.names;
        let shared = match x.chunk.take() {
            Some(shared) if !first => shared,
            _ => Shared {
                raw: doc.into(),
                model_version: name_or_none(py, names, chunk.model_version.as_ref()),
                response_id: name_or_none(py, names, chunk.response_id.as_ref()),
                usage: chunk.usage.map(Box::from),
            },
        };
        let item = GeminiChunk {
            index: int_or_none(py, it.index),
            text: str_or_none(py, it.text),
            thought: flag(py, it.thought),
            thought_signature: str_or_none(py, it.thought_signature),
            finish_reason: name_or_none(py, names, it.finish_reason),
            model_version: shared.model_version.clone_ref(py),
            response_id: shared.response_id.clone_ref(py),
            function_call_json: it.function_call.map(Box::from),
            function_calls_json: it.function_call.map(|_| calls_json(it.parts)),
            usage_json: shared.usage.clone(),
            raw_json: Some(shared.raw.clone()),
            position: it.position,
        };
        x.chunk = Some(shared);
        self.push(&Py::new(py, item)?)
    }

    fn shared(&mut self, index: i64, chunk: &Chunk<'_>) -> PyResult<Self::Item> {
        let py = self.py;
        let names = &mut self.x.names;
        Ok((
            int_or_none(py, Some(index)),
            name_or_none(py, names, chunk.model_version.as_ref()),
            name_or_none(py, names, chunk.response_id.as_ref()),
        ))
    }

    fn hit(
        &mut self,
        shared: &Self::Item,
        text: &str,
        thought: bool,
        usage: Option<&str>,
        doc: Option<&str>,
    ) -> PyResult<()> {
        let py = self.py;
        let (index, model_version, response_id) = shared;
        let item = GeminiChunk {
            index: index.clone_ref(py),
            text: PyString::new(py, text).into_any().unbind(),
            thought: flag(py, thought),
            thought_signature: py.None(),
            finish_reason: py.None(),
            model_version: model_version.clone_ref(py),
            response_id: response_id.clone_ref(py),
            function_call_json: None,
            function_calls_json: None,
            usage_json: usage.map(Box::from),
            raw_json: doc.map(Arc::from),
            position: Some(0),
        };
        self.push(&Py::new(py, item)?)
    }
}

dialect_stream!(
    GeminiStream,
    "GeminiStream",
    GeminiReader,
    GeminiNames,
    "Google Gemini `streamGenerateContent` stream (Gemini API and Vertex AI, `?alt=sse` or a JSON array): framing and chunk decoding."
);

/// The `functionCall`s of `parts`, as sent, in a JSON list.
fn calls_json(parts: &[crate::dialect::gemini::Part<'_>]) -> Box<str> {
    let mut out = String::from("[");
    for raw in parts.iter().filter_map(|p| p.function_call.as_ref()?.raw) {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(raw.get());
    }
    out.push(']');
    out.into()
}
