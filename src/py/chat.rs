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

use super::json::{lazy, out_to_py, to_py};
use super::stream::{
    accumulator_class, dialect_stream, emit, Dialect, Hit, Refill, Route, StreamCore, Subject,
    Template, Value,
};
use super::strings::{
    flag, int_or_none, item_int, item_str, reused_or_none, text_or_none, Reused, ReusedInt,
};
use crate::dialect::chat::{self, Chunk, Content, VendorRecipes};
use crate::dialect::json::Str;
use crate::dialect::template::RawHole;
use crate::dialect::ErrorInfo;
use crate::fold::chat::{ChatFold, ChunkOwned, ChunkView, ContentView, Hole, ToolView};
use crate::translate::Upstream;

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

/// The per-stream state of the chat dialect: the fold, strings that repeat in every chunk
/// (reused), and the frame template of the last text chunk.
#[derive(Default)]
pub struct ChunkStrings {
    fold: ChatFold,
    template: Option<ChatTemplate>,
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

/// The template of the last text chunk: its shape and item (see `Template`), and the chunk's
/// data for the fold (a frame that fits folds as this chunk with new text in the hole).
struct ChatTemplate {
    template: Template<ChatChunk>,
    snapshot: ChunkOwned,
    hole: Hole,
    /// How the vendor objects are written from a fit's raw holes (when it has any).
    vendor: Option<VendorRecipes>,
}

const HOLES: [Hole; 5] = [
    Hole::Content,
    Hole::Reasoning,
    Hole::ReasoningContent,
    Hole::Refusal,
    Hole::Arguments,
];

fn hole_number(hole: Hole) -> u8 {
    match hole {
        Hole::Content => 0,
        Hole::Reasoning => 1,
        Hole::ReasoningContent => 2,
        Hole::Refusal => 3,
        Hole::Arguments => 4,
    }
}

/// The one text of a one-choice chunk that a template can leave open, as its place in `data`,
/// the frame's JSON (escaped or not).
fn hole<'f>(chunk: &Chunk<'f>, data: &'f str, except: &[&str]) -> Option<(Hole, &'f str)> {
    let [choice] = chunk.choices.as_slice() else {
        return None;
    };
    let d = &choice.delta;
    let at = |text: &Option<Str<'f>>| Str::in_frame_except(text, data, except);
    // The first text present is the hole (a chunk seldom has two); HOLES's order.
    let present = [
        d.content.is_some(),
        d.reasoning.is_some(),
        d.reasoning_content.is_some(),
        d.refusal.is_some(),
        matches!(d.tool_calls.as_slice(), [call] if call.arguments.is_some()),
    ];
    let i = present.iter().position(|p| *p)?;
    let text = match i {
        0 => Content::in_frame(&d.content, data, except),
        1 => at(&d.reasoning),
        2 => at(&d.reasoning_content),
        3 => at(&d.refusal),
        _ => match d.tool_calls.as_slice() {
            [call] => at(&call.arguments),
            _ => None,
        },
    }?;
    Some((*HOLES.get(i)?, text))
}

impl ChatChunk {
    /// [`Refill::refill`], with the vendor objects (`extra`, `choice_extra`, `delta_extra`)
    /// written anew.
    fn refill_vendor(
        &self,
        py: Python<'_>,
        hole: u8,
        text: &str,
        extras: &[Option<std::borrow::Cow<'_, str>>; 3],
    ) -> PyResult<Py<Self>> {
        let mut item = self.refilled(py, hole, text)?;
        let mut json = self.json.clone().unwrap_or_default();
        let [extra, choice_extra, delta_extra] = extras;
        json.extra = extra.as_deref().map(Arc::from);
        json.choice_extra = choice_extra.as_deref().map(Box::from);
        json.delta_extra = delta_extra.as_deref().map(Box::from);
        item.json = Some(json);
        Py::new(py, item)
    }
}

impl Refill for ChatChunk {
    fn refill(&self, py: Python<'_>, hole: u8, text: &str, _: Option<i64>) -> PyResult<Py<Self>> {
        Py::new(py, self.refilled(py, hole, text)?)
    }
}

impl ChatChunk {
    /// A copy of this item with `text` in its string hole `hole`.
    fn refilled(&self, py: Python<'_>, hole: u8, text: &str) -> PyResult<Self> {
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
        match HOLES.into_iter().find(|h| hole_number(*h) == hole) {
            Some(Hole::Content) => item.content = text,
            Some(Hole::Reasoning) => item.reasoning = text,
            Some(Hole::ReasoningContent) => item.reasoning_content = text,
            Some(Hole::Refusal) => item.refusal = text,
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
        Ok(item)
    }
}

impl Dialect for ChunkStrings {
    type Doc<'f> = Chunk<'f>;

    const NAME: &'static str = "a chat completions";

    fn belongs(doc: &Self::Doc<'_>, _: &[u8]) -> crate::dialect::Belongs {
        doc.belongs()
    }

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
        if let Some(error) = v.value.error {
            let info = ErrorInfo::from_error_value(Some(v.doc), error);
            let name = core.event_name(py, v.frame);
            emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?)?;
            if v.value.choices.is_empty() {
                return Ok(()); // an error envelope, not a chunk
            }
            return self.chunk(py, core, &v.value, out, false).map(|_| ());
        }
        let whole_frame = v.doc.len() == v.frame.data.len();
        let (raws, vendor) = if whole_frame {
            VendorRecipes::of(&v.value)
        } else {
            Default::default()
        };
        let raw_strings: Vec<&str> = raws
            .iter()
            .filter_map(|r| match r {
                RawHole::Str(s) => Some(*s),
                RawHole::Int(_) => None,
            })
            .collect();
        let hole = if whole_frame {
            hole(&v.value, v.doc, &raw_strings)
        } else {
            None
        };
        let padding: Vec<&str> = Str::in_frame(&v.value.obfuscation, v.doc)
            .into_iter()
            .collect();
        let (item, snapshot) = self.chunk(py, core, &v.value, out, hole.is_some())?;
        if let (Some((kind, text)), Some(snapshot)) = (hole, snapshot) {
            let vendor = vendor.has_holes().then_some(vendor);
            let raws = if vendor.is_some() { &raws[..] } else { &[] };
            let new = Template::with_raws(v.frame, text, &padding, raws, hole_number(kind), item)
                .map(|template| ChatTemplate {
                    template,
                    snapshot,
                    hole: kind,
                    vendor,
                });
            if new.is_some() {
                self.template = new;
            }
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        py: Python<'_>,
        core: &mut StreamCore,
        frame: Subject<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<usize>> {
        let Some(t) = &self.template else {
            return Ok(None);
        };
        let Some(vendor) = &t.vendor else {
            let Some(Hit { text, len, .. }) = t.template.hit(py, frame, out)? else {
                return Ok(None);
            };
            let fold = &mut self.fold;
            t.snapshot.view_with(t.hole, &text, None, |view| {
                fold.add(view);
                core.tap(Upstream::Chat(view));
            });
            return Ok(Some(len));
        };
        // Vendor values in holes: the item is made here, with the vendor objects written.
        if out.is_some() && t.template.item.is_none() {
            return Ok(None);
        }
        let Some(Hit {
            text, len, raws, ..
        }) = t.template.hit(py, frame, None)?
        else {
            return Ok(None);
        };
        let extras = vendor.write(&raws);
        if let (Some(out), Some(item)) = (out, &t.template.item) {
            let hole = t.template.hole;
            out.append(item.get().refill_vendor(py, hole, &text, &extras)?)?;
        }
        let fold = &mut self.fold;
        t.snapshot.view_with(t.hole, &text, Some(&extras), |view| {
            fold.add(view);
            core.tap(Upstream::Chat(view));
        });
        Ok(Some(len))
    }

    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        self.fold.arguments(choice, index)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings()
    }

    fn result<'py>(&mut self, _: &StreamCore, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        out_to_py(py, &self.fold.result())
    }
}

impl ChunkStrings {
    /// Folds one chunk (one view per choice) and, with `out`, appends its items (one per
    /// choice). Returns the last item, and with `snapshot` the last choice's data for a
    /// frame template.
    fn chunk(
        &mut self,
        py: Python<'_>,
        core: &mut StreamCore,
        chunk: &Chunk<'_>,
        out: Option<&Bound<'_, PyList>>,
        snapshot: bool,
    ) -> PyResult<(Option<Py<ChatChunk>>, Option<ChunkOwned>)> {
        let mut last = None;
        let mut snap = None;
        let mut items: Option<ItemBuilder<'_, '_>> = None;
        let mut result = Ok(());
        chat::views(chunk, |view, choice| {
            if result.is_err() {
                return;
            }
            self.fold.add(view);
            core.tap(Upstream::Chat(view));
            if snapshot {
                snap = ChunkOwned::new(view);
            }
            let Some(out) = out else {
                return;
            };
            let items =
                items.get_or_insert_with(|| ItemBuilder::new(py, self, chunk, view.extra, out));
            let json = match choice {
                Some(_) => ChunkJson {
                    reasoning_details: view.reasoning_details.map(Box::from),
                    logprobs: view.logprobs.map(Box::from),
                    choice_extra: view.choice_extra.map(Box::from),
                    delta_extra: view.delta_extra.map(Box::from),
                    content_parts: match view.content {
                        Some(ContentView::Parts(raw)) => Some(raw.into()),
                        _ => None,
                    },
                    ..ChunkJson::default()
                },
                None => ChunkJson::default(),
            };
            match items.push(py, self, view.index, choice, json) {
                Ok(obj) => last = Some(obj),
                Err(e) => result = Err(e),
            }
        });
        result?;
        Ok((last, snap))
    }
}

/// Builds the `ChatChunk` items of one chunk: the chunk-level strings once, then one item per
/// choice.
struct ItemBuilder<'o, 'py> {
    out: &'o Bound<'py, PyList>,
    id: Py<PyAny>,
    object: Py<PyAny>,
    created: Py<PyAny>,
    model: Py<PyAny>,
    fingerprint: Py<PyAny>,
    tier: Py<PyAny>,
    usage: Option<Arc<str>>,
    extra: Option<Arc<str>>,
}

impl<'o, 'py> ItemBuilder<'o, 'py> {
    fn new(
        py: Python<'py>,
        s: &mut ChunkStrings,
        chunk: &Chunk<'_>,
        extra: Option<&str>,
        out: &'o Bound<'py, PyList>,
    ) -> Self {
        ItemBuilder {
            out,
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
            extra: extra.map(Arc::from),
        }
    }

    /// Appends the item of one choice (`None`: the one item of a chunk without choices).
    fn push(
        &mut self,
        py: Python<'py>,
        s: &mut ChunkStrings,
        index: Option<i64>,
        choice: Option<&chat::Choice<'_>>,
        json: ChunkJson,
    ) -> PyResult<Py<ChatChunk>> {
        let json = ChunkJson {
            usage: self.usage.clone(),
            extra: self.extra.clone(),
            ..json
        };
        let has_json = !json.is_empty();
        let keep_json = has_json || json.content_parts.is_some();
        let mut it = ChatChunk {
            id: self.id.clone_ref(py),
            object: self.object.clone_ref(py),
            created: self.created.clone_ref(py),
            model: self.model.clone_ref(py),
            system_fingerprint: self.fingerprint.clone_ref(py),
            service_tier: self.tier.clone_ref(py),
            index: int_or_none(py, index),
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
                Some(Content::Parts(raw)) => to_py(py, raw.get())?.unbind(),
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
        let obj = Py::new(py, it)?;
        self.out.append(&obj)?;
        Ok(obj)
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
    ChunkStrings,
    "[DONE]",
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
            Ok(crate::py::errors::shared(slf, "accumulator")?.fold.warnings())
        }
    }
);
