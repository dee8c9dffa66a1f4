//! `ssewire.ChatCompletionStream` and its items `ChatChunk` / `ToolCallDelta`.
//!
//! Per feed: frame (pure Rust), decode every frame into borrowed `chat::Chunk`s (pure Rust, GIL
//! released for a large immutable input), then one pass builds the items: one `ChatChunk` per
//! choice, its common fields ready-made Python objects, repeated strings (id, object, model,
//! system_fingerprint, service_tier, role, finish_reason) reused per stream, and rarely read
//! parts kept as JSON text until read. Carried across feeds: the stream core and the reused
//! strings.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::json;
use super::stream::{dialect_stream, Frame, Reader, Route, StreamCore};
use super::strings::Reused;
use crate::dialect::chat::{self, Chunk, ToolCall};
use crate::dialect::json::Str;
use crate::dialect::ErrorInfo;

/// One fragment of a streamed tool call, flattened (`function.name` is `name`).
#[pyclass(frozen, module = "ssewire", name = "ToolCallDelta")]
pub struct ToolCallDelta {
    #[pyo3(get)]
    index: i64,
    #[pyo3(get)]
    id: Option<Py<PyString>>,
    #[pyo3(get, name = "type")]
    type_: Option<Py<PyString>>,
    #[pyo3(get)]
    name: Option<Py<PyString>>,
    #[pyo3(get)]
    arguments: Option<Py<PyString>>,
}

#[pymethods]
impl ToolCallDelta {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "ToolCallDelta(index={}, id={}, type={}, name={}, arguments={})",
            self.index,
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
    id: Option<Py<PyString>>,
    #[pyo3(get)]
    object: Option<Py<PyString>>,
    #[pyo3(get)]
    created: Option<i64>,
    #[pyo3(get)]
    model: Option<Py<PyString>>,
    #[pyo3(get)]
    system_fingerprint: Option<Py<PyString>>,
    #[pyo3(get)]
    service_tier: Option<Py<PyString>>,
    #[pyo3(get)]
    index: Option<i64>,
    #[pyo3(get)]
    role: Option<Py<PyString>>,
    #[pyo3(get)]
    content: Option<Py<PyString>>,
    #[pyo3(get)]
    refusal: Option<Py<PyString>>,
    #[pyo3(get)]
    reasoning: Option<Py<PyString>>,
    #[pyo3(get)]
    reasoning_content: Option<Py<PyString>>,
    #[pyo3(get)]
    tool_calls: Option<Py<PyList>>,
    #[pyo3(get)]
    finish_reason: Option<Py<PyString>>,
    reasoning_details_json: Option<Box<str>>,
    logprobs_json: Option<Box<str>>,
    choice_extra_json: Option<Box<str>>,
    delta_extra_json: Option<Box<str>>,
    usage_json: Option<Arc<str>>,
    extra_json: Option<Arc<str>>,
}

fn lazy<'py>(py: Python<'py>, text: Option<&str>) -> PyResult<Option<Bound<'py, PyAny>>> {
    text.map(|t| json::to_py(py, t)).transpose()
}

fn repr(py: Python<'_>, value: &Option<Py<PyString>>) -> PyResult<String> {
    match value {
        Some(v) => Ok(v.bind(py).repr()?.to_string()),
        None => Ok("None".into()),
    }
}

#[pymethods]
impl ChatChunk {
    /// `delta.reasoning_details` (list of blocks), decoded on each access.
    #[getter]
    fn reasoning_details<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.reasoning_details_json.as_deref())
    }

    /// `choices[].logprobs` (`{"content": [...], "refusal": [...]}`), decoded on each access.
    #[getter]
    fn logprobs<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.logprobs_json.as_deref())
    }

    /// The chunk's `usage`, decoded on each access.
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.usage_json.as_deref())
    }

    /// Top-level keys of the chunk this decoder does not know (vendor extras), as a dict.
    #[getter]
    fn extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.extra_json.as_deref())
    }

    /// Keys of the choice this decoder does not know (e.g. `native_finish_reason`).
    #[getter]
    fn choice_extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.choice_extra_json.as_deref())
    }

    /// Keys of the delta this decoder does not know (e.g. `annotations`, `audio`).
    #[getter]
    fn delta_extra<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        lazy(py, self.delta_extra_json.as_deref())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut parts = vec![format!(
            "index={}",
            self.index.map_or_else(|| "None".into(), |i| i.to_string())
        )];
        for (name, value) in [
            ("role", &self.role),
            ("content", &self.content),
            ("refusal", &self.refusal),
            ("reasoning", &self.reasoning),
            ("reasoning_content", &self.reasoning_content),
            ("finish_reason", &self.finish_reason),
        ] {
            if value.is_some() {
                parts.push(format!("{name}={}", repr(py, value)?));
            }
        }
        if let Some(calls) = &self.tool_calls {
            parts.push(format!("tool_calls={}", calls.bind(py).repr()?));
        }
        if self.usage_json.is_some() {
            parts.push("usage=...".into());
        }
        Ok(format!("ChatChunk({})", parts.join(", ")))
    }
}

/// Strings that repeat in every chunk, reused per stream.
#[derive(Default)]
struct ChunkStrings {
    id: Reused,
    object: Reused,
    model: Reused,
    system_fingerprint: Reused,
    service_tier: Reused,
    role: Reused,
    finish_reason: Reused,
    tool_type: Reused,
}

fn reuse(py: Python<'_>, cache: &mut Reused, value: Option<&Str<'_>>) -> Option<Py<PyString>> {
    value.map(|v| cache.get(py, v.as_str().as_bytes()))
}

fn text(py: Python<'_>, value: Option<&Str<'_>>) -> Option<Py<PyString>> {
    value.map(|v| PyString::new(py, v.as_str()).unbind())
}

fn route(event: &[u8]) -> Route {
    match event {
        b"message" => Route::Decode,
        b"error" => Route::Error,
        _ => Route::Pass,
    }
}

/// Turns decoded frames into `ChatChunk` / `ErrorItem` / `Event` items.
fn convert<'f>(
    core: &mut StreamCore,
    strings: &mut ChunkStrings,
    py: Python<'_>,
    frames: &'f [Frame<'f>],
    at_end: bool,
    out: &Bound<'_, PyList>,
) -> PyResult<bool> {
    let reader = Reader {
        route,
        decode: chat::decode,
    };
    core.convert(py, frames, reader, at_end, out, |core, v| {
        if let Some(error) = v.value.error {
            let info = ErrorInfo::from_error_value(Some(v.doc), error);
            let name = core.event_name(py, v.frame);
            out.append(core.stream_error_item(py, &info, name, &v.frame.data)?)?;
            if v.value.choices.is_empty() {
                return Ok(()); // an error envelope, not a chunk
            }
        }
        chunk_items(py, strings, v.value, out)
    })
}

fn chunk_items(
    py: Python<'_>,
    s: &mut ChunkStrings,
    chunk: Chunk<'_>,
    out: &Bound<'_, PyList>,
) -> PyResult<()> {
    let id = reuse(py, &mut s.id, chunk.id.as_ref());
    let object = reuse(py, &mut s.object, chunk.object.as_ref());
    let model = reuse(py, &mut s.model, chunk.model.as_ref());
    let fingerprint = reuse(
        py,
        &mut s.system_fingerprint,
        chunk.system_fingerprint.as_ref(),
    );
    let tier = reuse(py, &mut s.service_tier, chunk.service_tier.as_ref());
    let usage: Option<Arc<str>> = chunk.usage.map(|u| Arc::from(u.get()));
    let extra: Option<Arc<str>> = chunk.extra.to_json().map(Arc::from);
    let base = |index: Option<i64>| ChatChunk {
        id: id.as_ref().map(|v| v.clone_ref(py)),
        object: object.as_ref().map(|v| v.clone_ref(py)),
        created: chunk.created,
        model: model.as_ref().map(|v| v.clone_ref(py)),
        system_fingerprint: fingerprint.as_ref().map(|v| v.clone_ref(py)),
        service_tier: tier.as_ref().map(|v| v.clone_ref(py)),
        index,
        role: None,
        content: None,
        refusal: None,
        reasoning: None,
        reasoning_content: None,
        tool_calls: None,
        finish_reason: None,
        reasoning_details_json: None,
        logprobs_json: None,
        choice_extra_json: None,
        delta_extra_json: None,
        usage_json: usage.clone(),
        extra_json: extra.clone(),
    };
    if chunk.choices.is_empty() {
        out.append(Py::new(py, base(None))?)?;
        return Ok(());
    }
    for (position, choice) in chunk.choices.iter().enumerate() {
        let delta = &choice.delta;
        let mut item = base(Some(choice.index.unwrap_or(position as i64)));
        item.role = reuse(py, &mut s.role, delta.role.as_ref());
        item.content = text(py, delta.content.as_ref());
        item.refusal = text(py, delta.refusal.as_ref());
        item.reasoning = text(py, delta.reasoning.as_ref());
        item.reasoning_content = text(py, delta.reasoning_content.as_ref());
        item.finish_reason = reuse(py, &mut s.finish_reason, choice.finish_reason.as_ref());
        item.reasoning_details_json = delta.reasoning_details.map(|r| r.get().into());
        item.logprobs_json = choice.logprobs.map(|r| r.get().into());
        item.choice_extra_json = choice.extra.to_json().map(String::into_boxed_str);
        item.delta_extra_json = delta.extra.to_json().map(String::into_boxed_str);
        if !delta.tool_calls.is_empty() {
            item.tool_calls = Some(tool_calls(py, &mut s.tool_type, &delta.tool_calls)?);
        }
        out.append(Py::new(py, item)?)?;
    }
    Ok(())
}

fn tool_calls(py: Python<'_>, types: &mut Reused, calls: &[ToolCall<'_>]) -> PyResult<Py<PyList>> {
    let items = calls
        .iter()
        .enumerate()
        .map(|(position, call)| {
            Py::new(
                py,
                ToolCallDelta {
                    index: call.index.unwrap_or(position as i64),
                    id: text(py, call.id.as_ref()),
                    type_: reuse(py, types, call.type_.as_ref()),
                    name: text(py, call.name.as_ref()),
                    arguments: text(py, call.arguments.as_ref()),
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
    convert,
    "[DONE]",
    "OpenAI-compatible `POST /v1/chat/completions` stream: framing and chunk decoding."
);
