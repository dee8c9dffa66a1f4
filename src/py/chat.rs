//! `ssewire.ChatCompletionStream` and its items `ChatChunk` / `ToolCallDelta`.
//!
//! Converts only: `crate::stream::chat` reads, folds and templates the chunks and hands each
//! choice here (`ChatItems`), which builds one `ChatChunk` per choice: its common fields
//! ready-made Python objects, repeated strings (id, object, model, system_fingerprint,
//! service_tier, role, finish_reason) and `created` reused per stream, rarely read parts kept
//! as JSON text until read; a template hit is the template's item copied with the new text
//! (and vendor objects). Carried across feeds: the stream and the reused strings.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::json::{lazy, to_py, ItemDict};
use super::stream::{accumulator_class, dialect_stream, Items, Out};
use super::strings::{
    flag, int_or_none, item_int, item_str, reused_or_none, text_or_none, Reused, ReusedInt,
};
use crate::dialect::chat::{self, Chunk, Content};
use crate::fold::chat::{ChatFold, ChunkView, ContentView, Hole, ToolView};
use crate::stream::chat::{ChatItems, ChatReader, Extras};

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
    /// The fragment as a dict: the fields that are not `None`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&[
            ("index", &self.index),
            ("id", &self.id),
            ("type", &self.type_),
            ("name", &self.name),
            ("arguments", &self.arguments),
        ])?;
        Ok(d.0)
    }

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
    /// `delta.content` when it was a list of typed parts (the `content` attribute holds it
    /// decoded), for the fold.
    content_parts: Option<Box<str>>,
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

    /// The chunk as a dict, as `ssewire --events` prints it: the fields that are not `None`
    /// (tool call fragments as dicts).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = ItemDict::new(py);
        d.fields(&[
            ("id", &self.id),
            ("object", &self.object),
            ("created", &self.created),
            ("model", &self.model),
            ("system_fingerprint", &self.system_fingerprint),
            ("service_tier", &self.service_tier),
            ("index", &self.index),
            ("role", &self.role),
            ("content", &self.content),
            ("refusal", &self.refusal),
            ("reasoning", &self.reasoning),
            ("reasoning_content", &self.reasoning_content),
        ])?;
        if let Ok(calls) = self.tool_calls.bind(py).cast::<PyList>() {
            let dicts = PyList::empty(py);
            for call in calls.iter() {
                dicts.append(call.cast::<ToolCallDelta>()?.get().to_dict(py)?)?;
            }
            d.0.set_item("tool_calls", dicts)?;
        }
        d.field("finish_reason", &self.finish_reason)?;
        let json = self.json.as_deref();
        d.json(
            "reasoning_details",
            json.and_then(|j| j.reasoning_details.as_deref()),
        )?;
        d.json("logprobs", json.and_then(|j| j.logprobs.as_deref()))?;
        d.json("usage", json.and_then(|j| j.usage.as_deref()))?;
        d.json("extra", json.and_then(|j| j.extra.as_deref()))?;
        d.json("choice_extra", json.and_then(|j| j.choice_extra.as_deref()))?;
        d.json("delta_extra", json.and_then(|j| j.delta_extra.as_deref()))?;
        Ok(d.0)
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

/// The conversion state of a chat stream: strings that repeat in every chunk (reused), and
/// what the items of the chunk being converted share.
#[derive(Default)]
pub struct ChunkStrings {
    id: Reused,
    object: Reused,
    model: Reused,
    system_fingerprint: Reused,
    service_tier: Reused,
    role: Reused,
    finish_reason: Reused,
    tool_type: Reused,
    created: ReusedInt,
    chunk: Option<Shared>,
}

impl Items for ChunkStrings {
    type Item = Py<ChatChunk>;
}

/// What the items of one chunk share: its chunk-level fields, built once per chunk.
struct Shared {
    id: Py<PyAny>,
    object: Py<PyAny>,
    created: Py<PyAny>,
    model: Py<PyAny>,
    fingerprint: Py<PyAny>,
    tier: Py<PyAny>,
    usage: Option<Arc<str>>,
    extra: Option<Arc<str>>,
}

impl ChatChunk {
    /// A copy of this item with `text` in its string hole `hole`.
    fn refilled(&self, py: Python<'_>, hole: Hole, text: &str) -> PyResult<Self> {
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
        if hole == Hole::Thinking {
            // The parts the text is, decoded and kept as JSON (as a decoded chunk's are).
            let parts = chat::thinking_parts(text);
            item.content = to_py(py, &parts)?.unbind();
            let mut json = item.json.as_deref().cloned().unwrap_or_default();
            json.content_parts = Some(parts.into());
            item.json = Some(Box::new(json));
            return Ok(item);
        }
        let text = PyString::new(py, text).into_any().unbind();
        match hole {
            Hole::Content => item.content = text,
            Hole::Thinking => {} // its parts, above
            Hole::Reasoning => item.reasoning = text,
            Hole::ReasoningContent => item.reasoning_content = text,
            Hole::Refusal => item.refusal = text,
            Hole::Arguments => {
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
        Ok(item)
    }
}

impl ChatItems for Out<'_, '_, ChunkStrings> {
    fn choice(
        &mut self,
        chunk: &Chunk<'_>,
        view: &ChunkView<'_>,
        choice: Option<&chat::Choice<'_>>,
        first: bool,
    ) -> PyResult<Py<ChatChunk>> {
        let py = self.py;
        let s = &mut *self.x;
        let shared = match s.chunk.take() {
            Some(shared) if !first => shared,
            _ => Shared {
                id: reused_or_none(py, &mut s.id, chunk.id.as_ref()),
                object: reused_or_none(py, &mut s.object, chunk.object.as_ref()),
                created: s.created.get(py, chunk.created),
                model: reused_or_none(py, &mut s.model, chunk.model.as_ref()),
                fingerprint: reused_or_none(
                    py,
                    &mut s.system_fingerprint,
                    chunk.system_fingerprint.as_ref(),
                ),
                tier: reused_or_none(py, &mut s.service_tier, chunk.service_tier.as_ref()),
                usage: chunk.usage.map(|u| Arc::from(u.get())),
                extra: view.extra.map(Arc::from),
            },
        };
        let json = match choice {
            Some(_) => ChunkJson {
                reasoning_details: view.reasoning_details.map(Box::from),
                logprobs: view.logprobs.map(Box::from),
                choice_extra: view.choice_extra.map(Box::from),
                delta_extra: view.delta_extra.map(Box::from),
                content_parts: match view.content {
                    Some(ContentView::Parts(raw)) => Some(raw.into()),
                    Some(ContentView::Thinking(text)) => Some(chat::thinking_parts(text).into()),
                    _ => None,
                },
                ..ChunkJson::default()
            },
            None => ChunkJson::default(),
        };
        let json = ChunkJson {
            usage: shared.usage.clone(),
            extra: shared.extra.clone(),
            ..json
        };
        let has_json = !json.is_empty();
        let keep_json = has_json || json.content_parts.is_some();
        let mut it = ChatChunk {
            id: shared.id.clone_ref(py),
            object: shared.object.clone_ref(py),
            created: shared.created.clone_ref(py),
            model: shared.model.clone_ref(py),
            system_fingerprint: shared.fingerprint.clone_ref(py),
            service_tier: shared.tier.clone_ref(py),
            index: int_or_none(py, view.index),
            role: py.None(),
            content: py.None(),
            refusal: py.None(),
            reasoning: py.None(),
            reasoning_content: py.None(),
            tool_calls: py.None(),
            finish_reason: py.None(),
            has_json: flag(py, has_json),
            json: keep_json.then(|| Box::new(json)),
        };
        if let Some(choice) = choice {
            let delta = &choice.delta;
            it.role = reused_or_none(py, &mut s.role, delta.role.as_ref());
            it.content = match &delta.content {
                Some(Content::Text(text)) => PyString::new(py, text.as_str()).into_any().unbind(),
                Some(Content::Parts(raw)) => to_py(py, raw)?.unbind(),
                None => py.None(),
            };
            it.refusal = text_or_none(py, delta.refusal.as_ref());
            it.reasoning = text_or_none(py, delta.reasoning.as_ref());
            it.reasoning_content = text_or_none(py, delta.reasoning_content.as_ref());
            it.finish_reason =
                reused_or_none(py, &mut s.finish_reason, choice.finish_reason.as_ref());
            if !delta.tool_calls.is_empty() {
                it.tool_calls = tool_calls(py, &mut s.tool_type, &delta.tool_calls)?.into_any();
            }
        }
        s.chunk = Some(shared);
        let obj = Py::new(py, it)?;
        self.push(&obj)?;
        Ok(obj)
    }

    fn refill(
        &mut self,
        item: &Py<ChatChunk>,
        hole: Hole,
        text: &str,
        extras: Option<&Extras<'_>>,
    ) -> PyResult<()> {
        let py = self.py;
        let this = item.get();
        let mut item = this.refilled(py, hole, text)?;
        if let Some([extra, choice_extra, delta_extra, details]) = extras {
            let mut json = item.json.as_deref().cloned().unwrap_or_default();
            json.extra = extra.as_deref().map(Arc::from);
            json.choice_extra = choice_extra.as_deref().map(Box::from);
            json.delta_extra = delta_extra.as_deref().map(Box::from);
            json.reasoning_details = details.as_deref().map(Box::from);
            item.json = Some(Box::new(json));
        }
        self.push(&Py::new(py, item)?)
    }
}

fn tool_calls(
    py: Python<'_>,
    types: &mut Reused,
    calls: &[chat::ToolCall<'_>],
) -> PyResult<Py<PyList>> {
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
    ChatReader,
    ChunkStrings,
    "OpenAI-compatible `POST /v1/chat/completions` stream: framing, chunk decoding and the fold."
);

/// Folds one `ChatChunk` item, reading its fields natively.
fn fold_item(py: Python<'_>, fold: &mut ChatFold, item: &ChatChunk) {
    let json = item.json.as_deref();
    let calls: Vec<Bound<'_, ToolCallDelta>> = match item.tool_calls.bind(py).cast::<PyList>() {
        Ok(list) => list
            .iter()
            .filter_map(|c| c.cast_into::<ToolCallDelta>().ok())
            .collect(),
        Err(_) => Vec::new(),
    };
    let call_fields: Vec<_> = calls
        .iter()
        .map(|c| {
            let c = c.get();
            (
                item_int(py, &c.index).unwrap_or(0),
                item_str(py, &c.id),
                item_str(py, &c.type_),
                item_str(py, &c.name),
                item_str(py, &c.arguments),
            )
        })
        .collect();
    let tools: Vec<ToolView<'_>> = call_fields
        .iter()
        .map(|(index, id, type_, name, arguments)| ToolView {
            index: *index,
            id: id.as_deref(),
            type_: type_.as_deref(),
            name: name.as_deref(),
            arguments: arguments.as_deref(),
        })
        .collect();
    let (id, model) = (item_str(py, &item.id), item_str(py, &item.model));
    let (fingerprint, tier) = (
        item_str(py, &item.system_fingerprint),
        item_str(py, &item.service_tier),
    );
    let (role, refusal) = (item_str(py, &item.role), item_str(py, &item.refusal));
    let (reasoning, reasoning_content) = (
        item_str(py, &item.reasoning),
        item_str(py, &item.reasoning_content),
    );
    let finish_reason = item_str(py, &item.finish_reason);
    let content_text = item_str(py, &item.content);
    let content = match (&content_text, json.and_then(|j| j.content_parts.as_deref())) {
        (Some(t), _) => Some(ContentView::Text(t)),
        (None, Some(parts)) => Some(ContentView::Parts(parts)),
        (None, None) => None,
    };
    fold.add(&ChunkView {
        id: id.as_deref(),
        created: item_int(py, &item.created),
        model: model.as_deref(),
        system_fingerprint: fingerprint.as_deref(),
        service_tier: tier.as_deref(),
        usage: json.and_then(|j| j.usage.as_deref()),
        extra: json.and_then(|j| j.extra.as_deref()),
        index: item_int(py, &item.index),
        role: role.as_deref(),
        content,
        refusal: refusal.as_deref(),
        reasoning: reasoning.as_deref(),
        reasoning_content: reasoning_content.as_deref(),
        tool_calls: &tools,
        finish_reason: finish_reason.as_deref(),
        reasoning_details: json.and_then(|j| j.reasoning_details.as_deref()),
        logprobs: json.and_then(|j| j.logprobs.as_deref()),
        choice_extra: json.and_then(|j| j.choice_extra.as_deref()),
        delta_extra: json.and_then(|j| j.delta_extra.as_deref()),
        skeleton: 0,
    });
}

accumulator_class!(
    ChatCompletionAccumulator,
    "ChatCompletionAccumulator",
    ChatFold,
    ChatChunk,
    "a ChatCompletionStream (ChatChunk)",
    fold_item,
    "Folds `ChatCompletionStream` items into a non-streaming `chat.completion` dict, by the same fold the stream runs itself (`crate::fold::chat` states the rules). For items that come from elsewhere (stored, filtered, relayed); a stream's own `result()` needs none.",
    {
        /// Notes about what the result cannot show as sent (tool-call arguments that are not
        /// valid JSON), in choice and call order.
        #[getter]
        fn warnings(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
            Ok(crate::py::errors::exclusive(slf, "accumulator")?.fold.warnings())
        }
    }
);
