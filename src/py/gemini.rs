//! `ssewire.GeminiStream` and its item `GeminiChunk` (Google `streamGenerateContent`, Gemini
//! API and Vertex AI; API.md section 9).
//!
//! Per feed: frame (or, for a JSON-array body, cut out each element), decode each chunk into a
//! borrowed `gemini::Chunk` (pure Rust), fold it (`crate::fold::gemini`), and build one flat
//! `GeminiChunk` per candidate (per run of text of one kind, when a candidate mixes thought and
//! answer text in one chunk). Model version, response id and finish reasons are built once per
//! stream; the rarely read parts (usage, the function call, the parts, the whole chunk) stay
//! JSON text, decoded when read. Carried across feeds: the stream core, the fold, the names.

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::json::{lazy, out_to_py};
use std::borrow::Cow;

use super::stream::{dialect_stream, emit, Dialect, Frame, Route, StreamCore, Subject, Value};
use super::strings::{flag, int_or_none, name_or_none, Names};
use crate::dialect::gemini::{self, Chunk};
use crate::dialect::json::{Extra, Str};
use crate::dialect::template::{Filled, Shape};
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::gemini::GeminiFold;
use crate::fold::Json;
use crate::translate::Upstream;
use serde_json::value::RawValue;

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

/// The per-stream state of the Gemini dialect: the fold, the names, and the template of the
/// last plain text chunk.
#[derive(Default)]
pub struct GeminiState {
    fold: GeminiFold,
    names: Names,
    template: Option<GeminiTemplate>,
}

/// The shape of the last plain text chunk (one candidate, one text part, nothing else but
/// usage, model version and response id), with the usage counts as number holes and the
/// usage object as the span: a chunk that fits folds as that chunk with new text and usage.
struct GeminiTemplate {
    shape: Shape,
    index: Option<i64>,
    thought: bool,
    role: Option<Box<str>>,
    model_version: Option<Box<str>>,
    response_id: Option<Box<str>>,
    /// The other keys of the candidate and of the chunk (Vertex's `createTime`, a
    /// `safetyRatings` sent with every chunk): the same in every chunk that fits, and folded
    /// again with each (the last value sent wins, and a chunk of another shape may have sent
    /// another value in between).
    candidate_extra: Vec<(Box<str>, Box<RawValue>)>,
    chunk_extra: Vec<(Box<str>, Box<RawValue>)>,
    /// What its items share (the index, the model version, the response id).
    item: Option<(Py<PyAny>, Py<PyAny>, Py<PyAny>)>,
}

impl GeminiTemplate {
    /// The template of `chunk` (the whole data of `frame`), when it is a plain text chunk
    /// whose text was borrowed from the frame.
    fn of(frame: &Frame<'_>, chunk: &Chunk<'_>) -> Option<Self> {
        let [c] = chunk.candidates.as_slice() else {
            return None;
        };
        let [part] = c.parts.as_slice() else {
            return None;
        };
        let plain = c.index.unwrap_or(0) == 0
            && c.has_content
            && c.finish_reason.is_none()
            && part.is_text()
            && part.thought_signature.is_none()
            && part.extra.is_empty()
            && chunk.error.is_none()
            && chunk.prompt_feedback.is_none();
        if !plain {
            return None;
        }
        let text = Str::in_frame(&part.text, &frame.data)?;
        let mut shape = Shape::new(frame.event.as_deref(), &frame.data, text, &[])?;
        if let Some(usage) = chunk.usage {
            for (key, value) in Json::object(usage)? {
                if let Ok(n) = value.get().parse::<i64>() {
                    shape = shape.with_number(&key, n)?;
                }
            }
            shape = shape.with_span(&frame.data, usage)?;
        }
        let owned = |s: &Option<Str<'_>>| s.as_ref().map(|s| Box::from(s.as_str()));
        let extra = |e: &Extra<'_>| -> Option<Vec<(Box<str>, Box<RawValue>)>> {
            e.0.iter()
                .map(|(k, v)| {
                    Some((
                        Box::from(k.as_str()),
                        RawValue::from_string(v.get().into()).ok()?,
                    ))
                })
                .collect()
        };
        Some(GeminiTemplate {
            shape,
            index: c.index,
            thought: part.thought,
            role: owned(&c.role),
            model_version: owned(&chunk.model_version),
            response_id: owned(&chunk.response_id),
            candidate_extra: extra(&c.extra)?,
            chunk_extra: extra(&chunk.extra)?,
            item: None,
        })
    }

    /// The chunk a frame that fits holds: `text` and `usage` in this template's chunk.
    fn chunk<'t>(&'t self, text: Cow<'t, str>, usage: Option<&'t str>) -> Chunk<'t> {
        let borrowed = |s: &'t Option<Box<str>>| s.as_deref().map(|s| Str(Cow::Borrowed(s)));
        let extra = |e: &'t [(Box<str>, Box<RawValue>)]| {
            Extra(
                e.iter()
                    .map(|(k, v)| (Str(Cow::Borrowed(&**k)), &**v))
                    .collect(),
            )
        };
        Chunk {
            candidates: vec![gemini::Candidate {
                index: self.index,
                has_content: true,
                role: borrowed(&self.role),
                parts: vec![gemini::Part {
                    text: Some(Str(text)),
                    thought: self.thought,
                    ..gemini::Part::default()
                }],
                extra: extra(&self.candidate_extra),
                ..gemini::Candidate::default()
            }],
            usage,
            model_version: borrowed(&self.model_version),
            response_id: borrowed(&self.response_id),
            has_candidates: true,
            extra: extra(&self.chunk_extra),
            ..Chunk::default()
        }
    }
}

/// The text runs of a candidate's parts in one chunk: (thought, text, first signature).
fn text_runs<'a>(c: &'a gemini::Candidate<'a>) -> Vec<(bool, String, Option<&'a Str<'a>>)> {
    let mut runs: Vec<(bool, String, Option<&Str<'_>>)> = Vec::new();
    for p in &c.parts {
        let Some(text) = p.text.as_ref().filter(|_| p.is_text()) else {
            continue;
        };
        match runs.last_mut() {
            Some((thought, joined, sig)) if *thought == p.thought => {
                joined.push_str(text.as_str());
                if sig.is_none() {
                    *sig = p.thought_signature.as_ref();
                }
            }
            _ => runs.push((
                p.thought,
                text.as_str().to_owned(),
                p.thought_signature.as_ref(),
            )),
        }
    }
    runs
}

impl GeminiState {
    /// The items of one chunk, appended to `out`.
    fn items(
        &mut self,
        py: Python<'_>,
        chunk: &Chunk<'_>,
        doc: &str,
        out: &Bound<'_, PyList>,
    ) -> PyResult<()> {
        let names = &mut self.names;
        let raw: std::sync::Arc<str> = doc.into();
        let model_version = name_or_none(py, names, chunk.model_version.as_ref());
        let response_id = name_or_none(py, names, chunk.response_id.as_ref());
        let usage: Option<Box<str>> = chunk.usage.map(Box::from);
        let item = |index: Option<i64>,
                    position: Option<usize>,
                    text: Option<&str>,
                    thought: bool,
                    sig: Option<&Str<'_>>,
                    call: Option<&str>,
                    finish: Option<&Str<'_>>,
                    names: &mut Names|
         -> PyResult<()> {
            let item = GeminiChunk {
                index: int_or_none(py, index),
                text: text.map_or_else(
                    || py.None(),
                    |t| pyo3::types::PyString::new(py, t).into_any().unbind(),
                ),
                thought: flag(py, thought),
                thought_signature: sig.map_or_else(
                    || py.None(),
                    |s| {
                        pyo3::types::PyString::new(py, s.as_str())
                            .into_any()
                            .unbind()
                    },
                ),
                finish_reason: name_or_none(py, names, finish),
                model_version: model_version.clone_ref(py),
                response_id: response_id.clone_ref(py),
                function_call_json: call.map(Box::from),
                usage_json: usage.clone(),
                raw_json: Some(raw.clone()),
                position,
            };
            out.append(Py::new(py, item)?)
        };
        if chunk.candidates.is_empty() {
            return item(None, None, None, false, None, None, None, names);
        }
        for (pos, (index, c)) in chunk.indexed().enumerate() {
            let index = Some(index);
            let call = c
                .parts
                .iter()
                .find_map(|p| p.function_call.as_ref()?.raw.map(|r| r.get()));
            let runs = text_runs(c);
            let sig_elsewhere = || {
                c.parts
                    .iter()
                    .find_map(|p| p.thought_signature.as_ref().filter(|_| !p.is_text()))
            };
            let last = runs.len().saturating_sub(1);
            if runs.is_empty() {
                item(
                    index,
                    Some(pos),
                    None,
                    false,
                    sig_elsewhere(),
                    call,
                    c.finish_reason.as_ref(),
                    names,
                )?;
            }
            for (i, (thought, text, sig)) in runs.iter().enumerate() {
                let is_last = i == last;
                item(
                    index,
                    Some(pos),
                    Some(text),
                    *thought,
                    sig.or_else(|| if is_last { sig_elsewhere() } else { None }),
                    if is_last { call } else { None },
                    if is_last {
                        c.finish_reason.as_ref()
                    } else {
                        None
                    },
                    names,
                )?;
            }
        }
        Ok(())
    }
}

impl Dialect for GeminiState {
    type Doc<'f> = Chunk<'f>;

    const NAME: &'static str = "a Gemini";
    const JSON_ARRAYS: bool = true;

    fn belongs(doc: &Self::Doc<'_>, _event: &[u8]) -> Belongs {
        doc.belongs()
    }

    fn route(event: &[u8]) -> Route {
        match event {
            b"error" => Route::Error,
            _ => Route::Decode,
        }
    }

    fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
        gemini::decode(doc)
    }

    fn value<'f>(
        &mut self,
        core: &mut StreamCore,
        py: Python<'_>,
        v: Value<'f, '_, Chunk<'f>>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<()> {
        let chunk = &v.value;
        if let Some(error) = chunk.error {
            let info = ErrorInfo::of_document(v.doc, Some(error));
            let name = core.event_name(py, v.frame);
            emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?)?;
            if chunk.belongs() != Belongs::Own {
                return Ok(());
            }
        }
        self.fold.add(chunk);
        core.tap(Upstream::Gemini(chunk));
        if !core.done && self.fold.finished() {
            core.done = true;
        }
        if let Some(out) = out {
            self.items(py, chunk, v.doc, out)?;
        }
        if v.doc.len() == v.frame.data.len() {
            if let Some(mut t) = GeminiTemplate::of(v.frame, chunk) {
                if out.is_some() {
                    let names = &mut self.names;
                    t.item = Some((
                        int_or_none(py, Some(t.index.unwrap_or(0))),
                        name_or_none(py, names, chunk.model_version.as_ref()),
                        name_or_none(py, names, chunk.response_id.as_ref()),
                    ));
                }
                self.template = Some(t);
            }
        }
        if let Some(reason) = chunk.block_reason() {
            let blocked = gemini::blocked(&reason, v.doc);
            let info = blocked.info();
            let name = core.event_name(py, v.frame);
            emit(out, core.stream_error_item(py, &info, name, &v.frame.data)?)?;
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        py: Python<'_>,
        core: &mut StreamCore,
        subject: Subject<'_>,
        out: Option<&Bound<'_, PyList>>,
    ) -> PyResult<Option<usize>> {
        let Some(t) = &self.template else {
            return Ok(None);
        };
        if out.is_some() && t.item.is_none() {
            return Ok(None); // made by consume(): no item parts kept
        }
        let (len, filled, data) = match subject {
            Subject::Frame(frame) => match t.shape.fill_all(frame.event.as_deref(), &frame.data) {
                Some(f) => (0, f, Some(&*frame.data)),
                None => return Ok(None),
            },
            Subject::Raw(bytes) => match t.shape.fill_raw_all(bytes) {
                Some((len, f)) => (len, f, None),
                None => return Ok(None),
            },
        };
        let Filled { text, span, .. } = filled;
        if let (Some(out), Some((index, model_version, response_id))) = (out, &t.item) {
            // The chunk's text, for `raw`: the data line (`data: ` and the line end cut off).
            let data = match (data, subject) {
                (Some(d), _) => Some(d),
                (None, Subject::Raw(bytes)) => bytes
                    .get(6..)
                    .and_then(|rest| rest.get(..memchr::memchr2(b'\r', b'\n', rest)?))
                    .and_then(|d| std::str::from_utf8(d).ok()),
                (None, Subject::Frame(_)) => None,
            };
            let item = GeminiChunk {
                index: index.clone_ref(py),
                text: pyo3::types::PyString::new(py, &text).into_any().unbind(),
                thought: flag(py, t.thought),
                thought_signature: py.None(),
                finish_reason: py.None(),
                model_version: model_version.clone_ref(py),
                response_id: response_id.clone_ref(py),
                function_call_json: None,
                usage_json: span.map(Box::from),
                raw_json: data.map(std::sync::Arc::from),
                position: Some(0),
            };
            out.append(Py::new(py, item)?)?;
        }
        let chunk = t.chunk(text, span);
        self.fold.add(&chunk);
        core.tap(Upstream::Gemini(&chunk));
        Ok(Some(len))
    }

    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        self.fold.arguments(choice, index)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings().to_vec()
    }

    fn result<'py>(&mut self, _: &StreamCore, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        out_to_py(py, &self.fold.result())
    }
}

dialect_stream!(
    GeminiStream,
    "GeminiStream",
    GeminiState,
    "a finishReason",
    "Google Gemini `streamGenerateContent` stream (Gemini API and Vertex AI, `?alt=sse` or a JSON array): framing and chunk decoding."
);
