//! `ssewire.ChatCompletionStream` and its items `ChatChunk` / `ToolCallDelta`.
//!
//! Per feed: the stream core frames the input (pure Rust), then each frame is decoded into a
//! borrowed `chat::Chunk` (pure Rust) and turned into items at once: one `ChatChunk` per choice,
//! its common fields ready-made Python objects, repeated strings (id, object, model,
//! system_fingerprint, service_tier, role, finish_reason) and `created` reused per stream, and
//! rarely read parts kept as JSON text until read. A frame that matches the previous text
//! frame's template (see `crate::dialect::template`) skips the decode: the previous item is
//! copied with the new text. Carried across feeds: the stream core, the reused strings and the
//! template.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::json::lazy;
use super::stream::{dialect_stream, Dialect, Frame, Refill, Route, StreamCore, Template, Value};
use super::strings::{flag, int_or_none, reused_or_none, text_or_none, Reused, ReusedInt};
use crate::dialect::chat::{self, Chunk, ToolCall};
use crate::dialect::json::Str;
use crate::dialect::ErrorInfo;

/// One fragment of a streamed tool call, flattened (`function.name` is `name`).
#[pyclass(frozen, module = "ssewire", name = "ToolCallDelta")]
pub struct ToolCallDelta {
    #[pyo3(get)]
    index: Py<PyAny>,
    #[pyo3(get)]
    id: Py<PyAny>,
    #[pyo3(get, name = "type")]
    type_: Py<PyAny>,
    #[pyo3(get)]
    name: Py<PyAny>,
    #[pyo3(get)]
    arguments: Py<PyAny>,
}

#[pymethods]
impl ToolCallDelta {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolCallDelta(index={}, id={}, type={}, name={}, arguments={})",
            repr(py, &self.index)?,
            repr(py, &self.id)?,
            repr(py, &self.type_)?,
            repr(py, &self.name)?,
            repr(py, &self.arguments)?
        ))
    }
}

/// One choice of one `chat.completion.chunk`, flattened (chunk + choice + delta fields).
#[pyclass(frozen, module = "ssewire", name = "ChatChunk")]
pub struct ChatChunk {
    #[pyo3(get)]
    id: Py<PyAny>,
    #[pyo3(get)]
    object: Py<PyAny>,
    #[pyo3(get)]
    created: Py<PyAny>,
    #[pyo3(get)]
    model: Py<PyAny>,
    #[pyo3(get)]
    system_fingerprint: Py<PyAny>,
    #[pyo3(get)]
    service_tier: Py<PyAny>,
    #[pyo3(get)]
    index: Py<PyAny>,
    #[pyo3(get)]
    role: Py<PyAny>,
    #[pyo3(get)]
    content: Py<PyAny>,
    #[pyo3(get)]
    refusal: Py<PyAny>,
    #[pyo3(get)]
    reasoning: Py<PyAny>,
    #[pyo3(get)]
    reasoning_content: Py<PyAny>,
    #[pyo3(get)]
    tool_calls: Py<PyAny>,
    #[pyo3(get)]
    finish_reason: Py<PyAny>,
    /// Whether any of the JSON-backed attributes (`usage`, `logprobs`, `reasoning_details`,
    /// `extra`, `choice_extra`, `delta_extra`) is set: readers can skip them all when not.
    #[pyo3(get)]
    has_json: Py<PyAny>,
    json: Option<Box<ChunkJson>>,
}

/// The rarely present parts of a chat chunk item, kept as JSON text until read.
#[derive(Default, Clone)]
struct ChunkJson {
    reasoning_details: Option<Box<str>>,
    logprobs: Option<Box<str>>,
    choice_extra: Option<Box<str>>,
    delta_extra: Option<Box<str>>,
    usage: Option<Arc<str>>,
    extra: Option<Arc<str>>,
}

impl ChunkJson {
    fn is_empty(&self) -> bool {
        self.reasoning_details.is_none()
            && self.logprobs.is_none()
            && self.choice_extra.is_none()
            && self.delta_extra.is_none()
            && self.usage.is_none()
            && self.extra.is_none()
    }
}

fn repr(py: Python<'_>, value: &Py<PyAny>) -> PyResult<String> {
    Ok(value.bind(py).repr()?.to_string())
}

#[pymethods]
impl ChatChunk {
    /// `delta.reasoning_details` (list of blocks), decoded on each access.
    #[getter]
    fn reasoning_details<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(
            py,
            self.json
                .as_ref()
                .and_then(|j| j.reasoning_details.as_deref()),
        )
    }

    /// `choices[].logprobs` (`{"content": [...], "refusal": [...]}`), decoded on each access.
    #[getter]
    fn logprobs<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.json.as_ref().and_then(|j| j.logprobs.as_deref()))
    }

    /// The chunk's `usage`, decoded on each access.
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.json.as_ref().and_then(|j| j.usage.as_deref()))
    }

    /// Top-level keys of the chunk this decoder does not know (vendor extras), as a dict.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.json.as_ref().and_then(|j| j.extra.as_deref()))
    }

    /// Keys of the choice this decoder does not know (e.g. `native_finish_reason`).
    #[getter]
    fn choice_extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(
            py,
            self.json.as_ref().and_then(|j| j.choice_extra.as_deref()),
        )
    }

    /// Keys of the delta this decoder does not know (e.g. `annotations`, `audio`).
    #[getter]
    fn delta_extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(
            py,
            self.json.as_ref().and_then(|j| j.delta_extra.as_deref()),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = vec![format!("index={}", repr(py, &self.index)?)];
        for (name, value) in [
            ("role", &self.role),
            ("content", &self.content),
            ("refusal", &self.refusal),
            ("reasoning", &self.reasoning),
            ("reasoning_content", &self.reasoning_content),
            ("finish_reason", &self.finish_reason),
        ] {
            if !value.is_none(py) {
                parts.push(format!("{name}={}", repr(py, value)?));
            }
        }
        if !self.tool_calls.is_none(py) {
            parts.push(format!("tool_calls={}", repr(py, &self.tool_calls)?));
        }
        if self.json.as_ref().is_some_and(|j| j.usage.is_some()) {
            parts.push("usage=...".into());
        }
        Ok(format!("ChatChunk({})", parts.join(", ")))
    }
}

/// The per-stream state of the chat dialect: strings that repeat in every chunk (reused), and
/// the frame template of the last text chunk.
#[derive(Default)]
pub struct ChunkStrings {
    template: Option<Template<ChatChunk>>,
    id: Reused,
    object: Reused,
    model: Reused,
    system_fingerprint: Reused,
    service_tier: Reused,
    role: Reused,
    finish_reason: Reused,
    tool_type: Reused,
    created: ReusedInt,
}

// The string of a chunk that a frame template leaves open (see `Template`).
const HOLE_CONTENT: u8 = 0;
const HOLE_REASONING: u8 = 1;
const HOLE_REASONING_CONTENT: u8 = 2;
const HOLE_REFUSAL: u8 = 3;
const HOLE_ARGUMENTS: u8 = 4;

/// The one text of a one-choice chunk that a template can leave open: a string borrowed from
/// the frame (so its place in the frame is known).
fn hole<'f>(chunk: &Chunk<'f>) -> Option<(u8, &'f str)> {
    let [choice] = chunk.choices.as_slice() else {
        return None;
    };
    let d = &choice.delta;
    let borrowed = Str::borrowed;
    let args = match d.tool_calls.as_slice() {
        [call] => borrowed(&call.arguments),
        _ => None,
    };
    [
        (HOLE_CONTENT, borrowed(&d.content)),
        (HOLE_REASONING, borrowed(&d.reasoning)),
        (HOLE_REASONING_CONTENT, borrowed(&d.reasoning_content)),
        (HOLE_REFUSAL, borrowed(&d.refusal)),
        (HOLE_ARGUMENTS, args),
    ]
    .into_iter()
    .find_map(|(kind, text)| text.map(|t| (kind, t)))
}

impl Refill for ChatChunk {
    fn refill(&self, py: Python<'_>, hole: u8, text: &str, _: Option<i64>) -> PyResult<Py<Self>> {
        let mut item = ChatChunk {
            id: self.id.clone_ref(py),
            object: self.object.clone_ref(py),
            created: self.created.clone_ref(py),
            model: self.model.clone_ref(py),
            system_fingerprint: self.system_fingerprint.clone_ref(py),
            service_tier: self.service_tier.clone_ref(py),
            index: self.index.clone_ref(py),
            role: self.role.clone_ref(py),
            content: self.content.clone_ref(py),
            refusal: self.refusal.clone_ref(py),
            reasoning: self.reasoning.clone_ref(py),
            reasoning_content: self.reasoning_content.clone_ref(py),
            tool_calls: self.tool_calls.clone_ref(py),
            finish_reason: self.finish_reason.clone_ref(py),
            has_json: self.has_json.clone_ref(py),
            json: self.json.clone(),
        };
        let text = PyString::new(py, text).into_any().unbind();
        match hole {
            HOLE_CONTENT => item.content = text,
            HOLE_REASONING => item.reasoning = text,
            HOLE_REASONING_CONTENT => item.reasoning_content = text,
            HOLE_REFUSAL => item.refusal = text,
            _ => {
                let calls = self.tool_calls.bind(py).cast::<PyList>()?;
                let call = calls.get_item(0)?;
                let call = call.cast::<ToolCallDelta>()?.get();
                let fragment = ToolCallDelta {
                    index: call.index.clone_ref(py),
                    id: call.id.clone_ref(py),
                    type_: call.type_.clone_ref(py),
                    name: call.name.clone_ref(py),
                    arguments: text,
                };
                item.tool_calls = PyList::new(py, [Py::new(py, fragment)?])?
                    .into_any()
                    .unbind();
            }
        }
        Py::new(py, item)
    }
}

impl Dialect for ChunkStrings {
    type Doc<'f> = Chunk<'f>;
    const PLACEHOLDER_ACCUMULATOR: &'static str = "ChatCompletionAccumulator";

    fn route(event: &[u8]) -> Route {
        match event {
            b"message" => Route::Decode,
            b"error" => Route::Error,
            _ => Route::Pass,
        }
    }

    fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
        chat::decode(doc)
    }

    fn value<'f>(
        &mut self,
        core: &mut StreamCore,
        py: Python<'_>,
        v: Value<'f, '_, Chunk<'f>>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        // PLACEHOLDER (issue 8): while `FOLDS` is false, `convert` always passes a list.
        let Some(out) = out else {
            return Ok(());
        };
        if let Some(error) = v.value.error {
            let info = ErrorInfo::from_error_value(Some(v.doc), error);
            let name = core.event_name(py, v.frame);
            out.append(core.stream_error_item(py, &info, name, &v.frame.data)?)?;
            if v.value.choices.is_empty() {
                return Ok(()); // an error envelope, not a chunk
            }
            return chunk_items(py, self, v.value, out).map(|_| ());
        }
        let whole_frame = v.doc.len() == v.frame.data.len();
        let hole = if whole_frame { hole(&v.value) } else { None };
        let padding: Vec<&str> = Str::borrowed(&v.value.obfuscation).into_iter().collect();
        let last = chunk_items(py, self, v.value, out)?;
        if let (Some((kind, text)), Some(item)) = (hole, last) {
            let new = Template::new(v.frame, text, &padding, kind, item);
            Template::renew(&mut self.template, new);
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        py: Python<'_>,
        frame: &Frame<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<bool> {
        match &self.template {
            Some(template) => template.apply(py, frame, out),
            None => Ok(false),
        }
    }
}

/// Builds the items of one chunk; returns the last one.
fn chunk_items(
    py: Python<'_>,
    s: &mut ChunkStrings,
    chunk: Chunk<'_>,
    out: &Bound<'_, PyList>,
) -> PyResult<Option<Py<ChatChunk>>> {
    let id = reused_or_none(py, &mut s.id, chunk.id.as_ref());
    let object = reused_or_none(py, &mut s.object, chunk.object.as_ref());
    let created = s.created.get(py, chunk.created);
    let model = reused_or_none(py, &mut s.model, chunk.model.as_ref());
    let fingerprint = reused_or_none(
        py,
        &mut s.system_fingerprint,
        chunk.system_fingerprint.as_ref(),
    );
    let tier = reused_or_none(py, &mut s.service_tier, chunk.service_tier.as_ref());
    let usage: Option<Arc<str>> = chunk.usage.map(|u| Arc::from(u.get()));
    let extra: Option<Arc<str>> = chunk.extra.to_json().map(Arc::from);
    let item = |index: Py<PyAny>, json: ChunkJson| ChatChunk {
        id: id.clone_ref(py),
        object: object.clone_ref(py),
        created: created.clone_ref(py),
        model: model.clone_ref(py),
        system_fingerprint: fingerprint.clone_ref(py),
        service_tier: tier.clone_ref(py),
        index,
        role: py.None(),
        content: py.None(),
        refusal: py.None(),
        reasoning: py.None(),
        reasoning_content: py.None(),
        tool_calls: py.None(),
        finish_reason: py.None(),
        has_json: flag(py, !json.is_empty()),
        json: (!json.is_empty()).then(|| Box::new(json)),
    };
    let chunk_json = || ChunkJson {
        usage: usage.clone(),
        extra: extra.clone(),
        ..ChunkJson::default()
    };
    if chunk.choices.is_empty() {
        let obj = Py::new(py, item(py.None(), chunk_json()))?;
        out.append(&obj)?;
        return Ok(Some(obj));
    }
    let mut last = None;
    for (position, choice) in chunk.choices.iter().enumerate() {
        let delta = &choice.delta;
        let json = ChunkJson {
            reasoning_details: delta.reasoning_details.map(|r| r.get().into()),
            logprobs: choice.logprobs.map(|r| r.get().into()),
            choice_extra: choice.extra.to_json().map(String::into_boxed_str),
            delta_extra: delta.extra.to_json().map(String::into_boxed_str),
            ..chunk_json()
        };
        let index = int_or_none(py, Some(choice.index.unwrap_or(position as i64)));
        let mut it = item(index, json);
        it.role = reused_or_none(py, &mut s.role, delta.role.as_ref());
        it.content = text_or_none(py, delta.content.as_ref());
        it.refusal = text_or_none(py, delta.refusal.as_ref());
        it.reasoning = text_or_none(py, delta.reasoning.as_ref());
        it.reasoning_content = text_or_none(py, delta.reasoning_content.as_ref());
        it.finish_reason = reused_or_none(py, &mut s.finish_reason, choice.finish_reason.as_ref());
        if !delta.tool_calls.is_empty() {
            it.tool_calls = tool_calls(py, &mut s.tool_type, &delta.tool_calls)?.into_any();
        }
        let obj = Py::new(py, it)?;
        out.append(&obj)?;
        last = Some(obj);
    }
    Ok(last)
}

fn tool_calls(py: Python<'_>, types: &mut Reused, calls: &[ToolCall<'_>]) -> PyResult<Py<PyList>> {
    let items = calls
        .iter()
        .enumerate()
        .map(|(position, call)| {
            Py::new(
                py,
                ToolCallDelta {
                    index: int_or_none(py, Some(call.index.unwrap_or(position as i64))),
                    id: text_or_none(py, call.id.as_ref()),
                    type_: reused_or_none(py, types, call.type_.as_ref()),
                    name: text_or_none(py, call.name.as_ref()),
                    arguments: text_or_none(py, call.arguments.as_ref()),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

dialect_stream!(
    ChatCompletionStream,
    "ChatCompletionStream",
    ChunkStrings,
    "[DONE]",
    "OpenAI-compatible `POST /v1/chat/completions` stream: framing and chunk decoding."
);
