//! The Google Gemini reader: each chunk read (`crate::dialect::gemini`; an error in it and a
//! blocked prompt are reported), folded (`crate::fold::gemini`; a finish reason ends the
//! stream), tapped, and handed to the sink as one item per candidate (per run of text of one
//! kind, when a candidate mixes thought and answer text in one chunk). A plain text chunk
//! makes the frame template, its usage counts number holes. Carried across frames: the fold
//! and the template.

use std::borrow::Cow;

use super::Upstream;
use super::{Dialect, Frame, Reader, Sink, State, Subject, Value};
use crate::dialect::gemini::{self, Candidate, Chunk, Part};
use crate::dialect::template::{Filled, Shape};
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::gemini::GeminiFold;
use crate::json::read::{Extra, Raw, Str};

/// What a Gemini stream taps: a chunk (one `GenerateContentResponse`).
pub type View<'a> = crate::dialect::gemini::Chunk<'a>;

/// One item of a chunk: one candidate's text run (or the candidate, when it has no text; or
/// the chunk, when it has no candidates).
pub struct GeminiItem<'a> {
    /// The candidate's index (its position when it has none); `None` for a chunk without
    /// candidates.
    pub index: Option<i64>,
    /// The candidate's position in the chunk's `candidates`.
    pub position: Option<usize>,
    /// The run's text, its parts' texts joined (`None` for an item without text).
    pub text: Option<&'a str>,
    /// Whether the run is thought (reasoning) text.
    pub thought: bool,
    /// The run's first thought signature; on the candidate's last item, failing that, one on a
    /// part that is not text.
    pub thought_signature: Option<&'a str>,
    /// The candidate's first `functionCall` in this chunk, as sent (on its last item).
    pub function_call: Option<&'a str>,
    /// The candidate's parts (for all its `functionCall`s, on the item that has the first).
    pub parts: &'a [crate::dialect::gemini::Part<'a>],
    /// The candidate's `finishReason` (on its last item only).
    pub finish_reason: Option<&'a Str<'a>>,
}

/// What a sink makes of a Gemini stream's chunks.
pub trait GeminiItems: Sink {
    /// One item of `chunk` (whose JSON is `doc`); `first` for the chunk's first item.
    fn item(
        &mut self,
        chunk: &Chunk<'_>,
        doc: &str,
        item: &GeminiItem<'_>,
        first: bool,
    ) -> Result<(), Self::Error>;
    /// What the items of a template made from `chunk` share (its candidate's index, the model
    /// version, the response id).
    fn shared(&mut self, index: i64, chunk: &Chunk<'_>) -> Result<Self::Item, Self::Error>;
    /// The item of a chunk that fits a template: `text` (thought or not), its usage object,
    /// and the chunk's JSON when known.
    fn hit(
        &mut self,
        shared: &Self::Item,
        text: &str,
        thought: bool,
        usage: Option<&str>,
        doc: Option<&str>,
    ) -> Result<(), Self::Error>;
}

/// The per-stream state of the Gemini reader.
pub struct GeminiReader<I> {
    /// The fold of the stream's chunks so far.
    pub fold: GeminiFold,
    /// Where a template fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    template: Option<GeminiTemplate<I>>,
    /// The room of the candidate list and the part list of the chunk a template fit folds as,
    /// kept empty from frame to frame (two allocations and their frees were a sixth of a fit).
    spare: (Vec<Candidate<'static>>, Vec<Part<'static>>),
    /// The kind of the last chunk when it was plain text (`plain_kind`: thought or not).
    last_plain: Option<bool>,
}

impl<I> Default for GeminiReader<I> {
    fn default() -> Self {
        GeminiReader {
            fold: GeminiFold::default(),
            buf: Vec::new(),
            template: None,
            spare: (Vec::new(), Vec::new()),
            last_plain: None,
        }
    }
}

/// `v`'s room as an empty list of another type of the same layout (here: the same type with
/// other lifetimes). Safe code: the standard library's collection in place keeps a list's
/// allocation when the layouts match; were that ever not so, the list would be new (correct,
/// only slower).
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

/// The shape of the last plain text chunk (one candidate, one text part, nothing else but
/// usage, model version and response id), with the usage counts as number holes and the
/// usage object as the span: a chunk that fits folds as that chunk with new text and usage.
struct GeminiTemplate<I> {
    /// The shape; no frame has it until it is made from `kept`.
    shape: Shape,
    /// The chunk the shape is made from, kept until a frame looks like it ([`Kept`]).
    kept: Option<Box<Kept>>,
    index: Option<i64>,
    thought: bool,
    role: Option<Box<str>>,
    model_version: Option<Box<str>>,
    response_id: Option<Box<str>>,
    /// The other keys of the candidate and of the chunk (Vertex's `createTime`, a
    /// `safetyRatings` sent with every chunk): the same in every chunk that fits, and folded
    /// again with each (the last value sent wins, and a chunk of another shape may have sent
    /// another value in between).
    candidate_extra: Vec<(Box<str>, Box<str>)>,
    chunk_extra: Vec<(Box<str>, Box<str>)>,
    /// What its items share (the sink's: the index, the model version, the response id).
    item: Option<I>,
}

impl<I> GeminiTemplate<I> {
    /// The template of `chunk` (the whole data of `frame`), when it is a plain text chunk
    /// whose text was borrowed from the frame.
    fn of(frame: &Frame<'_>, chunk: &Chunk<'_>) -> Option<Self> {
        plain_kind(chunk)?;
        let c = chunk.candidates.first()?;
        let part = c.parts.first()?;
        // The text's literal as the chunk's reading found it (a place in the frame's data:
        // `Shape::new` checks that), else looked for.
        let text = match part.text_literal.0 {
            Some(literal) => literal,
            None => Str::in_frame(&part.text, &frame.data)?,
        };
        let data: &str = &frame.data;
        // Each a slice of the data (checked: its bytes there are its own).
        let place = |inner: &str| {
            let (start, end) = crate::dialect::template::span_of(data, inner)?;
            (data.get(start..end)? == inner).then_some(start..end)
        };
        let kept = Kept {
            event: frame.event.as_deref().map(Box::from),
            data: data.into(),
            text: place(text)?,
            usage: match chunk.usage {
                Some(usage) => Some(place(usage)?),
                None => None,
            },
        };
        let owned = |s: &Option<Str<'_>>| s.as_ref().map(|s| Box::from(s.as_str()));
        let extra = |e: &Extra<'_>| -> Option<Vec<(Box<str>, Box<str>)>> {
            e.0.iter()
                .map(|(k, v)| Some((Box::from(k.as_str()), Box::from(v.get()))))
                .collect()
        };
        Some(GeminiTemplate {
            shape: Shape::never(),
            kept: Some(Box::new(kept)),
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

    /// Whether the template can be tried on `subject`: its shape is made, or made now from
    /// the kept chunk because `subject` looks like it. `None` when the shape cannot be made
    /// (the template is then dropped).
    #[cold]
    fn make_for(&mut self, subject: Subject<'_>) -> Option<bool> {
        let Some(kept) = &self.kept else {
            return Some(true);
        };
        if !kept.looks_alike(subject) {
            return Some(false);
        }
        self.shape = kept.shape()?;
        self.kept = None;
        Some(true)
    }

    /// The chunk a frame that fits holds: `text` and `usage` in this template's chunk, its
    /// lists in the room of `spare` (empty lists).
    fn chunk<'t>(
        &'t self,
        text: Cow<'t, str>,
        usage: Option<&'t str>,
        spare: (Vec<Candidate<'t>>, Vec<Part<'t>>),
    ) -> Chunk<'t> {
        let (mut candidates, mut parts) = spare;
        let borrowed = |s: &'t Option<Box<str>>| s.as_deref().map(|s| Str(Cow::Borrowed(s)));
        let extra = |e: &'t [(Box<str>, Box<str>)]| {
            Extra(
                e.iter()
                    .map(|(k, v)| (Str(Cow::Borrowed(&**k)), Raw::checked(v)))
                    .collect(),
            )
        };
        parts.push(Part {
            text: Some(Str(text)),
            thought: self.thought,
            ..Part::default()
        });
        candidates.push(Candidate {
            index: self.index,
            has_content: true,
            role: borrowed(&self.role),
            parts,
            extra: extra(&self.candidate_extra),
            ..Candidate::default()
        });
        Chunk {
            candidates,
            usage,
            model_version: borrowed(&self.model_version),
            response_id: borrowed(&self.response_id),
            has_candidates: true,
            extra: extra(&self.chunk_extra),
            ..Chunk::default()
        }
    }
}

/// The members of the JSON object `text` whose values are integers (a usage object's counts),
/// in order; `None` when it is not an object the cursor reads.
fn integer_members(text: &str) -> Option<Vec<(&str, i64)>> {
    let mut c = crate::json::cursor::Cursor::new(text);
    let mut counts = Vec::new();
    c.members(|c, key| {
        match c.integer() {
            Some(n) => counts.push((key, n)),
            None => {
                c.value()?;
            }
        }
        Some(())
    })?;
    c.at_end().then_some(counts)
}

/// Whether `chunk` is a plain text chunk (one candidate, one text part, nothing else but
/// usage, model version and response id, as [`GeminiTemplate`] reads them), and then whether
/// its text is thought.
fn plain_kind(chunk: &Chunk<'_>) -> Option<bool> {
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
    plain.then_some(part.thought)
}

/// The plain text chunk a template's shape is made from, kept until a frame looks like it:
/// making the shape (the usage counts found as number holes) costs about two decodes, and
/// the usual short answer's next chunk is of another shape (its last, with the finish reason
/// and a signature), so a stream of one or two chunks made a shape it never used.
struct Kept {
    event: Option<Box<[u8]>>,
    data: Box<str>,
    /// The text literal's contents in `data`.
    text: std::ops::Range<usize>,
    /// The usage object in `data`.
    usage: Option<std::ops::Range<usize>>,
}

impl Kept {
    /// How many bytes after the chunk's text a frame must repeat to look like it.
    const TAIL: usize = 16;

    /// Whether `subject` looks like the chunk: its data begins with the same bytes up to the
    /// text (up to the usage, when the usage comes first), and repeats the bytes after the
    /// text (a frame with an event type always does: the shape is made at once). Only a
    /// gate: a frame that looks alike and does not fit is decoded, as one that does not look
    /// alike is.
    fn looks_alike(&self, subject: Subject<'_>) -> bool {
        if self.event.is_some() {
            return true;
        }
        let line = match subject {
            Subject::Frame(frame) => frame.data.as_bytes(),
            Subject::Raw(_) => match subject.data_line().strip_prefix(b"data: ") {
                Some(line) => line,
                None => return false,
            },
        };
        // A usage sent before the candidates is in the bytes before the text, its counts
        // other in each chunk: the bytes up to it are compared, and the fit decides.
        let head_end = match &self.usage {
            Some(usage) if usage.start < self.text.start => usage.start,
            _ => self.text.start,
        };
        let (Some(head), Some(tail)) = (self.data.get(..head_end), self.data.get(self.text.end..))
        else {
            return false;
        };
        let Some(rest) = line.strip_prefix(head.as_bytes()) else {
            return false;
        };
        if head_end < self.text.start {
            return true;
        }
        let tail = tail.as_bytes();
        let tail = tail.get(..Self::TAIL.min(tail.len())).unwrap_or_default();
        crate::json::read::skip_string(rest)
            .and_then(|end| rest.get(end..))
            .is_some_and(|after| after.starts_with(tail))
    }

    /// The chunk's shape: the text a hole, the usage counts number holes and the usage
    /// object the span. `None` when it cannot be made.
    fn shape(&self) -> Option<Shape> {
        let data = &*self.data;
        let mut shape = Shape::new(
            self.event.as_deref(),
            data,
            data.get(self.text.clone())?,
            &[],
        )?;
        if let Some(usage) = self.usage.clone().and_then(|at| data.get(at)) {
            let counts = integer_members(usage)?;
            shape = shape.with_numbers(&counts)?.with_span(data, usage)?;
        }
        Some(shape)
    }
}

/// The text runs of a candidate's parts in one chunk: (thought, text, first signature).
fn text_runs<'a>(c: &'a Candidate<'a>) -> Vec<(bool, String, Option<&'a Str<'a>>)> {
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

/// Hands the sink the items of one chunk.
fn items<S: GeminiItems>(sink: &mut S, chunk: &Chunk<'_>, doc: &str) -> Result<(), S::Error> {
    if chunk.candidates.is_empty() {
        let item = GeminiItem {
            index: None,
            position: None,
            text: None,
            thought: false,
            thought_signature: None,
            function_call: None,
            parts: &[],
            finish_reason: None,
        };
        return sink.item(chunk, doc, &item, true);
    }
    let mut first = true;
    for (pos, (index, c)) in chunk.indexed().enumerate() {
        let call = c
            .parts
            .iter()
            .find_map(|p| p.function_call.as_ref()?.raw.map(|r| r.get()));
        let runs = text_runs(c);
        // A signature on a part that is not text goes with the candidate's last item.
        let sig_elsewhere = c
            .parts
            .iter()
            .find_map(|p| p.thought_signature.as_ref().filter(|_| !p.is_text()));
        let mut item = GeminiItem {
            index: Some(index),
            position: Some(pos),
            text: None,
            thought: false,
            thought_signature: sig_elsewhere.map(Str::as_str),
            function_call: call,
            parts: &c.parts,
            finish_reason: c.finish_reason.as_ref(),
        };
        if runs.is_empty() {
            sink.item(chunk, doc, &item, first)?;
            first = false;
        }
        let last = runs.len().saturating_sub(1);
        for (i, (thought, text, sig)) in runs.iter().enumerate() {
            let is_last = i == last;
            item.text = Some(text);
            item.thought = *thought;
            item.thought_signature = sig
                .or(if is_last { sig_elsewhere } else { None })
                .map(Str::as_str);
            item.function_call = if is_last { call } else { None };
            item.finish_reason = if is_last {
                c.finish_reason.as_ref()
            } else {
                None
            };
            sink.item(chunk, doc, &item, first)?;
            first = false;
        }
    }
    Ok(())
}

impl<I> Dialect for GeminiReader<I> {
    type Doc<'f> = Chunk<'f>;

    const NAME: &'static str = "a Gemini";
    const MARKER: &'static str = "a finishReason";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Gemini;

    fn belongs(doc: &Chunk<'_>, _event: &[u8]) -> Belongs {
        doc.belongs()
    }

    fn is_output(doc: &Chunk<'_>, _: &[u8]) -> bool {
        doc.candidates.iter().any(|c| {
            c.parts.iter().any(|p| {
                p.text.as_ref().is_some_and(|t| !t.as_str().is_empty()) || p.function_call.is_some()
            })
        })
    }

    fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
        gemini::decode(doc)
    }

    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&dyn crate::json::partial::SoFar> {
        self.fold
            .arguments(choice, index)
            .map(|p| p as &dyn crate::json::partial::SoFar)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings().to_vec()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }

    fn result_in<B: crate::json::build::Build>(&mut self, b: &mut B) -> Result<B::Value, B::Error> {
        self.fold.result_in(b)
    }
}

impl<S: GeminiItems> Reader<S> for GeminiReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Chunk<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let chunk = &v.value;
        if let Some(error) = chunk.error {
            let info = ErrorInfo::of_document(v.doc, Some(error));
            state.report_in(sink, &info, v.frame)?;
            if chunk.belongs() != Belongs::Own {
                return Ok(());
            }
        }
        self.fold.add(chunk);
        state.tap(Upstream::Gemini(chunk));
        if !state.done && self.fold.finished() {
            state.done = true;
        }
        if sink.items() {
            items(sink, chunk, v.doc)?;
        }
        // A template is made from the first plain text chunk, and from the second plain
        // thought chunk in a row; its shape (about two decodes: its usage counts found as
        // number holes) only once a frame looks like that chunk (`Kept`). Gemini's answers
        // are about seven chunks, their text in a run of plain chunks (each one that fits
        // spares a decode), their thought summary, when one is asked for, in one or two (a
        // template made from the first was not used); a short answer is two chunks, the last
        // of another shape.
        let kind = plain_kind(chunk);
        let make = kind == Some(false) || (kind.is_some() && kind == self.last_plain);
        self.last_plain = kind;
        if v.whole_frame() && make {
            if let Some(mut t) = GeminiTemplate::of(v.frame, chunk) {
                if sink.items() {
                    t.item = Some(sink.shared(t.index.unwrap_or(0), chunk)?);
                }
                self.template = Some(t);
            }
        }
        if let Some(reason) = chunk.block_reason() {
            let blocked = gemini::blocked(&reason, v.doc);
            state.report_in(sink, &blocked.info(), v.frame)?;
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let Some(t) = &mut self.template else {
            return Ok(None);
        };
        if sink.items() && t.item.is_none() {
            return Ok(None); // made without items: no item parts kept
        }
        if t.kept.is_some() {
            match t.make_for(subject) {
                Some(true) => {}
                Some(false) => return Ok(None),
                None => {
                    self.template = None;
                    return Ok(None);
                }
            }
        }
        let Some(t) = &self.template else {
            return Ok(None);
        };
        let raws = &mut [""; crate::dialect::template::MAX_RAW];
        let (len, filled, data) = match subject {
            Subject::Frame(frame) => {
                match t.shape.fill_all(
                    frame.event.as_deref(),
                    &frame.data,
                    raws,
                    Some(&mut self.buf),
                ) {
                    Some(f) => (0, f, Some(&*frame.data)),
                    None => return Ok(None),
                }
            }
            Subject::Raw(bytes) => match t.shape.fill_raw_all(bytes, raws, Some(&mut self.buf)) {
                Some((len, f)) => (len, f, None),
                None => return Ok(None),
            },
        };
        let Filled { text, span, .. } = filled;
        if let Some(shared) = t.item.as_ref().filter(|_| sink.items()) {
            // The chunk's text, for `raw`: the data line (`data: ` and the line end cut off).
            let data = match (data, subject) {
                (Some(d), _) => Some(d),
                (None, Subject::Raw(bytes)) => bytes
                    .get(6..)
                    .and_then(|rest| rest.get(..memchr::memchr2(b'\r', b'\n', rest)?))
                    .and_then(|d| std::str::from_utf8(d).ok()),
                (None, Subject::Frame(_)) => None,
            };
            sink.hit(shared, &text, t.thought, span, data)?;
        }
        self.last_plain = Some(t.thought);
        // An empty text is no output, as a decode counts it (`is_output`).
        state.quiet_hit = text.is_empty();
        let (candidates, parts) = std::mem::take(&mut self.spare);
        let chunk = t.chunk(text, span, (recycle(candidates), recycle(parts)));
        self.fold.add(&chunk);
        state.tap(Upstream::Gemini(&chunk));
        let mut candidates = chunk.candidates;
        let parts = candidates.pop().map(|c| c.parts).unwrap_or_default();
        self.spare = (recycle(candidates), recycle(parts));
        Ok(Some(len))
    }
}

impl GeminiItems for super::Quiet {
    fn item(
        &mut self,
        _: &Chunk<'_>,
        _: &str,
        _: &GeminiItem<'_>,
        _: bool,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    fn shared(&mut self, _: i64, _: &Chunk<'_>) -> Result<(), Self::Error> {
        Ok(())
    }
    fn hit(
        &mut self,
        _: &(),
        _: &str,
        _: bool,
        _: Option<&str>,
        _: Option<&str>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Quiet, Stream};
    use super::*;

    /// `body`'s frames (each ending in CRLF CRLF), each spelled unlike the one before (one
    /// space or two after `"role":`), read: none fits the template the one before made, and
    /// each is decoded.
    fn spelled_apart(body: &str) -> Stream<GeminiReader<()>> {
        let mut s = Stream::<GeminiReader<()>>::new(1 << 16);
        for (n, frame) in body.split_inclusive("\r\n\r\n").enumerate() {
            let spaces = " ".repeat(n % 2 + 1);
            let spelled = frame.replace("\"role\": ", &format!("\"role\":{spaces}"));
            s.run(spelled.as_bytes(), &mut Quiet).unwrap();
        }
        assert_eq!(s.state.fast, 0);
        s
    }

    /// A chunk that fits the template folds in the room of the last one's lists: after the
    /// first fit the reader keeps a candidate list and a part list with room, and the fits
    /// that follow fold the same as a decode of each chunk.
    #[test]
    fn a_fit_folds_in_the_last_fits_room() {
        let chunk = |text: &str, n: u32| {
            format!(
                "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"{text}\"}}], \"role\": \"model\"}}, \"index\": 0}}], \"usageMetadata\": {{\"promptTokenCount\": 5, \"candidatesTokenCount\": {n}, \"totalTokenCount\": {}}}, \"modelVersion\": \"g\"}}\r\n\r\n",
                5 + n
            )
        };
        let body: String = (1..=12).map(|n| chunk(&format!("w{n} "), n * 7)).collect();
        let mut fast = Stream::<GeminiReader<()>>::new(1 << 16);
        fast.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(fast.state.fast, 11); // the template is made from the first chunk
        assert!(fast.reader.spare.0.capacity() >= 1 && fast.reader.spare.1.capacity() >= 1);
        assert!(fast.reader.spare.0.is_empty() && fast.reader.spare.1.is_empty());
        let mut slow = spelled_apart(&body);
        let result = fast.reader.result().to_json();
        assert_eq!(result, slow.reader.result().to_json());
        assert!(result.contains("\"candidatesTokenCount\": 84"), "{result}");
        assert!(result.contains("w1 w2 w3"), "{result}");
    }

    /// A template's shape is made only once a frame looks like the chunk it is kept from
    /// (the same bytes up to the text and after it): a short answer whose next chunk is its
    /// last (an empty text with a signature and the finish reason) makes none, and folds as
    /// its decode does; a frame that looks alike makes it and fits; one that looks alike but
    /// does not fit (another usage key) is decoded. Fed whole, by byte and in pieces.
    #[test]
    fn a_shape_is_made_when_a_frame_looks_like_the_kept_chunk() {
        let frame = |part: &str, more: &str, usage: &str| {
            format!("data: {{\"candidates\": [{{\"content\": {{\"parts\": [{{{part}}}],\"role\": \"model\"}}{more},\"index\": 0}}],\"usageMetadata\": {{{usage}}},\"modelVersion\": \"g\"}}\r\n\r\n")
        };
        let usage = |n: u32| {
            format!(
                "\"promptTokenCount\": 7,\"candidatesTokenCount\": {n},\"totalTokenCount\": {}",
                7 + n
            )
        };
        let first = frame(r#""text": "fixture ok""#, "", &usage(2));
        let last = frame(
            r#""text": "","thoughtSignature": "c2ln""#,
            r#","finishReason": "STOP""#,
            &usage(2),
        );
        let alike = frame(r#""text": "more \"quoted\"""#, "", &usage(5));
        let odd = frame(r#""text": "odd""#, "", &format!("{},\"x\": 1", usage(6)));
        let run = |body: &str, cuts: usize| {
            let mut s = Stream::<GeminiReader<()>>::new(1 << 16);
            let bytes = body.as_bytes();
            let step = if cuts == 0 { bytes.len().max(1) } else { cuts };
            for piece in bytes.chunks(step) {
                s.run(piece, &mut Quiet).unwrap();
            }
            s
        };
        let decoded = |body: &str| spelled_apart(body).reader.result().to_json();
        for cuts in [0, 1, 7] {
            let two = [first.as_str(), last.as_str()].concat();
            let mut s = run(&two, cuts);
            assert_eq!(s.state.fast, 0);
            let kept = s.reader.template.as_ref().map(|t| t.kept.is_some());
            assert_eq!(kept, Some(true), "the shape is never made");
            assert_eq!(s.reader.result().to_json(), decoded(&two));
            let four = [first.as_str(), alike.as_str(), alike.as_str(), odd.as_str()].concat();
            let mut s = run(&four, cuts);
            assert_eq!(s.state.fast, 2, "cuts {cuts}");
            // The odd chunk, plain, is kept in its turn.
            assert!(s.reader.template.as_ref().is_some_and(|t| t.kept.is_some()));
            let result = s.reader.result().to_json();
            assert_eq!(result, decoded(&four));
            assert!(
                result.contains(r#"fixture okmore \"quoted\"more \"quoted\"odd"#),
                "{result}"
            );
            // A usage sent before the candidates: its counts stand before the text and change
            // with each chunk; the chunks after the first still fit.
            let usage_first: String = (1..=5)
                .map(|n| {
                    format!("data: {{\"usageMetadata\": {{{}}},\"candidates\": [{{\"content\": {{\"parts\": [{{\"text\": \"w{n} \"}}],\"role\": \"model\"}},\"index\": 0}}]}}\r\n\r\n", usage(n * 3))
                })
                .collect();
            let mut s = run(&usage_first, cuts);
            assert_eq!(s.state.fast, 4, "cuts {cuts}");
            assert_eq!(s.reader.result().to_json(), decoded(&usage_first));
        }
    }

    #[test]
    fn integer_members_of_a_usage_object() {
        let usage = r#"{"a": 1, "b": -2, "c": 1.5, "d": [3], "e": {"f": 4}, "g": 9223372036854775808, "h": 0}"#;
        assert_eq!(
            integer_members(usage),
            Some(vec![("a", 1), ("b", -2), ("h", 0)])
        );
        assert_eq!(integer_members("[1]"), None);
        assert_eq!(integer_members(r#"{"a\n": 1}"#), None);
    }

    /// A frame of one candidate with `part`, `n` candidate tokens and `finish` after its
    /// content (`""`, or `, "finishReason": ...`).
    fn chunk(part: &str, n: u32, finish: &str) -> String {
        format!(
            "data: {{\"candidates\": [{{\"content\": {{\"parts\": [{part}], \"role\": \"model\"}}{finish}, \"index\": 0}}], \"usageMetadata\": {{\"promptTokenCount\": 5, \"candidatesTokenCount\": {n}}}, \"modelVersion\": \"g\"}}\r\n\r\n"
        )
    }

    /// [`chunk`] of a plain text.
    fn text(text: &str, n: u32, finish: &str) -> String {
        chunk(&format!(r#"{{"text": "{text}"}}"#), n, finish)
    }

    /// A chunk of an empty text that fits the template is no output, as a decoded one is not
    /// (a review's finding: the fast path counted it).
    #[test]
    fn an_empty_text_on_the_fast_path_is_no_output() {
        let body = [
            text("a", 1, ""),
            text("", 2, ""),
            text("b", 3, ""),
            text("", 4, r#", "finishReason": "STOP""#),
        ]
        .concat();
        let run = |piece: usize| {
            let mut s = Stream::<GeminiReader<()>>::new(1 << 16);
            for p in body.as_bytes().chunks(piece) {
                s.run(p, &mut Quiet).unwrap();
            }
            (s.state.outputs, s.state.fast)
        };
        let (whole, by_byte) = (run(body.len()), run(1));
        assert_eq!(whole.0, 2, "{whole:?}");
        assert_eq!(whole.0, by_byte.0);
        assert!(whole.1 >= 2, "{whole:?}");
    }

    /// A template is made from the first plain text chunk, and from the second plain thought
    /// chunk in a row: on an answer of Gemini's usual shape (a thought, a text with its
    /// signature, texts, the finish) one template is made, from the first plain text, and the
    /// texts after it fit it; a lone thought makes none, two thoughts in a row make one.
    #[test]
    fn a_template_is_made_from_the_first_plain_text_and_the_second_plain_thought() {
        let body = [
            chunk(r#"{"text": "plan", "thought": true}"#, 1, ""),
            chunk(r#"{"text": "a", "thoughtSignature": "c2ln"}"#, 2, ""),
            text("b", 3, ""),
            text("c", 4, ""),
            text("d", 5, ""),
            text("e", 6, r#", "finishReason": "STOP""#),
        ]
        .concat();
        let mut s = Stream::<GeminiReader<()>>::new(1 << 16);
        s.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(s.state.fast, 2);
        let result = s.reader.result().to_json();
        assert!(result.contains(r#""text":"abcde""#), "{result}");
        assert!(result.contains(r#""candidatesTokenCount": 6"#), "{result}");
        let made = |chunks: &[String]| {
            let mut s = Stream::<GeminiReader<()>>::new(1 << 16);
            s.run(chunks.concat().as_bytes(), &mut Quiet).unwrap();
            s.reader.template.map(|t| t.thought)
        };
        let thought = |t: &str| chunk(&format!(r#"{{"text": "{t}", "thought": true}}"#), 1, "");
        assert_eq!(made(&[thought("p")]), None);
        assert_eq!(made(&[thought("p"), thought("q")]), Some(true));
        assert_eq!(made(&[text("q", 2, "")]), Some(false));
        assert_eq!(made(&[thought("p"), text("q", 2, "")]), Some(false));
    }
}
