//! The OpenAI Responses reader: each event read (`crate::dialect::responses`; `error` events
//! and `response.failed` are reported), folded (`crate::fold::responses`), tapped, and handed
//! to the sink as one item; a plain delta makes the frame template (its holes: the delta text
//! and the sequence number). The frames OpenAI writes in every stream (each item's first
//! delta, the announcements of items and empty parts, the `.done` events) are shapes known
//! ahead (`ahead`). Carried across frames: the fold and the template.

use super::Upstream;
use super::{fit, ByEvent, Dialect, Reader, Sink, State, Subject, Template, Value};
use crate::dialect::responses::{self, Event, Read, TERMINAL};
use crate::dialect::template::{RawHole, Shape, MAX_RAW};
use crate::dialect::Belongs;
use crate::fold::responses::{EventView, ResponsesFold};
use crate::json::read::Str;

/// What a Responses stream taps: an event (not an error).
pub type View<'a> = crate::fold::responses::EventView<'a>;

/// What a sink makes of a Responses stream's events.
pub trait ResponsesItems: Sink {
    /// The item of one event: `kind` is its type, `raw` the whole event's JSON when the view
    /// keeps it (every event but the plain deltas).
    fn event(
        &mut self,
        ev: &Event<'_>,
        kind: &[u8],
        raw: Option<&str>,
    ) -> Result<Self::Item, Self::Error>;
    /// A copy of `item` with `delta` as its delta and, when given, a new sequence number (and
    /// `raw` as its raw JSON, for an event that keeps it).
    fn refill(
        &mut self,
        item: &Self::Item,
        delta: &str,
        sequence_number: Option<i64>,
        raw: Option<&str>,
    ) -> Result<(), Self::Error>;
}

/// The per-stream state of the Responses reader.
pub struct ResponsesReader<I> {
    /// The fold of the stream's events so far.
    pub fold: ResponsesFold,
    /// Where a template fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    template: Option<ResponsesTemplate<I>>,
}

impl<I> Default for ResponsesReader<I> {
    fn default() -> Self {
        ResponsesReader {
            // A stream has no `mismatches` to report (only the accumulator does): its full
            // values win without a comparison with the assembled pieces.
            fold: ResponsesFold::unchecked(),
            buf: Vec::new(),
            template: None,
        }
    }
}

/// The template of the last plain delta, and what the fold needs of it: a frame that fits
/// folds as that delta with new text.
struct ResponsesTemplate<I> {
    template: Template<I>,
    kind: Box<str>,
    output_index: Option<i64>,
    content_index: Option<i64>,
    summary_index: Option<i64>,
    item_id: Option<Box<str>>,
    /// The event has keys the decoder does not know: its raw JSON is kept (a fit's data).
    keeps_raw: bool,
}

/// The index a shape known ahead has after `output_index`, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Second {
    Content,
    Summary,
    None,
}

/// What a frame of a shape known ahead is.
#[derive(Debug, Clone, Copy)]
enum Known {
    /// A delta (its text in the text hole).
    Delta,
    /// The announcement of an empty part: the part, as sent (the text hole holds its empty
    /// text).
    PartAdded(&'static str),
    /// The announcement of an item (its text hole must hold this text; the item is the
    /// shape's span).
    ItemAdded(&'static str),
    /// A `.done` event, its full text in the text hole: where the view takes it from.
    Done(Field),
}

/// What of a `.done` event the view holds: its text or arguments (the text hole's string), or
/// its part or item (the shape's span).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Text,
    Arguments,
    Part,
    Item,
}

/// A frame shape known before a stream's first byte. Its raw holes are, by slot, the item id,
/// `output_index`, and the second index (`Second`); the sequence number is its number hole.
struct Ahead {
    event: &'static str,
    known: Known,
    second: Second,
    shape: Shape,
}

/// The item id and the indexes of a frame of a shape known ahead, from its raw holes: `None`
/// (the frame is decoded instead) for an id with an escape or an index that is not a plain
/// non-negative integer (the decoder reads those; the fast path does not repeat it).
#[derive(Debug, Clone, Copy)]
struct Ids<'d> {
    item_id: &'d str,
    output_index: i64,
    content_index: Option<i64>,
    summary_index: Option<i64>,
}

impl<'d> Ids<'d> {
    fn read(raws: &[&'d str; MAX_RAW], second: Second) -> Option<Self> {
        let index = |slot: usize| {
            let token = raws.get(slot)?;
            // Digits only: no sign, fraction or exponent (`-0` reads as a float to serde).
            token.bytes().all(|b| b.is_ascii_digit()).then_some(())?;
            token.parse::<i64>().ok()
        };
        let item_id = *raws.first()?;
        if item_id.contains('\\') {
            return None;
        }
        let value = match second {
            Second::None => None,
            _ => Some(index(2)?),
        };
        Some(Ids {
            item_id,
            output_index: index(1)?,
            content_index: value.filter(|_| second == Second::Content),
            summary_index: value.filter(|_| second == Second::Summary),
        })
    }
}

/// The frames OpenAI writes in every stream, known before a stream's first byte, taken under
/// `consume()` (no item to copy): the first text, reasoning-summary and function-argument
/// delta of each item (the hit becomes the item's template), the announcements of a new
/// message, function call or reasoning item and of an empty text or summary part, and the
/// `.done` events of a text, a summary part and a function call. Written as OpenAI's captured
/// streams write them: the sequence number right after the type, `logprobs: []` and the
/// `obfuscation` padding after a delta, each of those two present or not. A frame spelled
/// another way is decoded as before, and a delta's template learnt from it.
fn ahead() -> &'static ByEvent<Ahead> {
    static AHEAD: std::sync::OnceLock<ByEvent<Ahead>> = std::sync::OnceLock::new();
    AHEAD.get_or_init(|| {
        let second_key = |second: Second| match second {
            Second::Content => r#","content_index":0"#,
            Second::Summary => r#","summary_index":0"#,
            Second::None => "",
        };
        let head = |event: &str, second: Second| {
            format!(
                r#"{{"type":"{event}","sequence_number":0,"item_id":"i","output_index":0{}"#,
                second_key(second)
            )
        };
        let mut shapes: Vec<(&'static str, Known, Second, String)> = Vec::new();
        for (event, second, tails) in [
            (
                "response.output_text.delta",
                Second::Content,
                &[
                    r#","logprobs":[],"obfuscation":"p"}"#,
                    r#","obfuscation":"p"}"#,
                    r#","logprobs":[]}"#,
                    "}",
                ][..],
            ),
            (
                "response.function_call_arguments.delta",
                Second::None,
                &[r#","obfuscation":"p"}"#, "}"][..],
            ),
            (
                "response.reasoning_summary_text.delta",
                Second::Summary,
                &[r#","obfuscation":"p"}"#, "}"][..],
            ),
        ] {
            for tail in tails {
                let data = format!(r#"{},"delta":"x"{tail}"#, head(event, second));
                shapes.push((event, Known::Delta, second, data));
            }
        }
        for (event, second, part) in [
            (
                "response.content_part.added",
                Second::Content,
                r#"{"type":"output_text","annotations":[],"logprobs":[],"text":""}"#,
            ),
            (
                "response.content_part.added",
                Second::Content,
                r#"{"type":"output_text","annotations":[],"text":""}"#,
            ),
            (
                "response.reasoning_summary_part.added",
                Second::Summary,
                r#"{"type":"summary_text","text":""}"#,
            ),
        ] {
            let data = format!(r#"{},"part":{part}}}"#, head(event, second));
            shapes.push((event, Known::PartAdded(part), second, data));
        }
        // The `.done` events of a text, a summary and a function call, each its full text.
        for (event, second, rest, field) in [
            ("response.output_text.done", Second::Content, r#","text":"x","logprobs":[]}"#, Field::Text),
            ("response.output_text.done", Second::Content, r#","text":"x"}"#, Field::Text),
            (
                "response.content_part.done",
                Second::Content,
                r#","part":{"type":"output_text","annotations":[],"logprobs":[],"text":"x"}}"#,
                Field::Part,
            ),
            (
                "response.content_part.done",
                Second::Content,
                r#","part":{"type":"output_text","annotations":[],"text":"x"}}"#,
                Field::Part,
            ),
            ("response.reasoning_summary_text.done", Second::Summary, r#","text":"x"}"#, Field::Text),
            (
                "response.reasoning_summary_part.done",
                Second::Summary,
                r#","part":{"type":"summary_text","text":"x"}}"#,
                Field::Part,
            ),
            ("response.function_call_arguments.done", Second::None, r#","arguments":"x"}"#, Field::Arguments),
        ] {
            shapes.push((event, Known::Done(field), second, format!("{}{rest}", head(event, second))));
        }
        for item in [
            r#"{"id":"i","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"x"}],"role":"assistant"}"#,
            r#"{"id":"i","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"x"}],"role":"assistant"}"#,
            r#"{"id":"i","type":"function_call","status":"completed","arguments":"x","call_id":"c","name":"n"}"#,
            r#"{"id":"i","type":"reasoning","summary":[{"type":"summary_text","text":"x"}]}"#,
        ] {
            let data = format!(
                r#"{{"type":"response.output_item.done","sequence_number":0,"output_index":0,"item":{item}}}"#
            );
            shapes.push(("response.output_item.done", Known::Done(Field::Item), Second::None, data));
        }
        // A new item: a message, a function call (its call id and name raw holes too) or a
        // reasoning item, as OpenAI announces each (in progress, nothing in it yet).
        for (item, required) in [
            (
                r#"{"id":"i","type":"message","status":"in_progress","content":[],"role":"assistant"}"#,
                "assistant",
            ),
            (
                r#"{"id":"i","type":"function_call","status":"in_progress","arguments":"","call_id":"c","name":"n"}"#,
                "",
            ),
            (r#"{"id":"i","type":"reasoning","summary":[]}"#, "reasoning"),
        ] {
            let data = format!(
                r#"{{"type":"response.output_item.added","sequence_number":0,"output_index":0,"item":{item}}}"#
            );
            shapes.push((
                "response.output_item.added",
                Known::ItemAdded(required),
                Second::None,
                data,
            ));
        }
        // Each shape in OpenAI's compact spelling, then in the one Python's `json.dumps`
        // writes (`": "` and `", "`: recorders and Python servers), tried after it.
        let shapes: Vec<Ahead> = shapes
            .into_iter()
            .flat_map(|(event, known, second, data)| {
                let wide = super::spaced(&data);
                [(event, known, second, data, false), (event, known, second, wide, true)]
            })
            .filter_map(|(event, known, second, data, wide)| {
                let key = |k: &str| if wide { super::spaced(k) } else { k.to_owned() };
                // Each hole is the string or number after its key, which stands once.
                let after = |needle: &str, len: usize| {
                    let needle = key(needle);
                    let at = data.find(&needle)? + needle.len();
                    data.get(at..at + len)
                };
                let text = match known {
                    Known::Delta => after(r#""delta":""#, 1)?,
                    Known::PartAdded(_) => after(r#""text":""#, 0)?,
                    Known::ItemAdded("assistant") => after(r#""role":""#, 9)?,
                    Known::ItemAdded("reasoning") => {
                        let at = data.find(&key(r#""type":"reasoning""#))? + key(r#""type":""#).len();
                        data.get(at..at + "reasoning".len())?
                    }
                    Known::ItemAdded(_) => after(r#""arguments":""#, 0)?,
                    Known::Done(_) => after(r#""text":""#, 1)
                        .or_else(|| after(r#""arguments":""#, 1))?,
                };
                let padding: Vec<&str> = after(r#""obfuscation":""#, 1).into_iter().collect();
                // The span: an item, or a done part (its text is a hole).
                let (id, span) = match known {
                    Known::ItemAdded(_) | Known::Done(Field::Item) => (r#""id":""#, Some(r#""item":"#)),
                    Known::Done(Field::Part) => (r#""item_id":""#, Some(r#""part":"#)),
                    _ => (r#""item_id":""#, None),
                };
                let span = span.map(key).and_then(|k| Some(data.find(&k)? + k.len()));
                let mut raws = vec![
                    RawHole::Str(after(id, 1)?),
                    RawHole::Num(after(r#""output_index":"#, 1)?),
                ];
                match second {
                    Second::Content => raws.push(RawHole::Num(after(r#""content_index":"#, 1)?)),
                    Second::Summary => raws.push(RawHole::Num(after(r#""summary_index":"#, 1)?)),
                    Second::None => {}
                }
                if let (Some(call_id), Some(name)) = (after(r#""call_id":""#, 1), after(r#""name":""#, 1)) {
                    raws.extend([RawHole::Str(call_id), RawHole::Str(name)]);
                }
                let shape = Shape::with_raws(Some(event.as_bytes()), &data, text, &padding, &raws)?
                    .with_number("sequence_number", 0)?;
                // The object after `"item":` or `"part":`, to the data's closing brace.
                let shape = match span {
                    Some(at) => shape.with_span(&data, data.get(at..data.len() - 1)?)?,
                    None => shape,
                };
                Some(Ahead {
                    event,
                    known,
                    second,
                    shape,
                })
            })
            .collect();
        ByEvent::new(shapes, |a| a.event)
    })
}

/// How many shapes are known ahead (each of [`ahead`]'s made).
#[cfg(test)]
pub fn ahead_count() -> usize {
    ahead().len()
}

impl<I> Dialect for ResponsesReader<I> {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "an OpenAI Responses";
    const MARKER: &'static str = "a terminal response event";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Responses;

    fn belongs(doc: &Event<'_>, event: &[u8]) -> Belongs {
        doc.belongs(event)
    }

    fn is_output(doc: &Event<'_>, event: &[u8]) -> bool {
        doc.kind_of(event).ends_with(".delta")
    }

    fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
        responses::decode(doc)
    }

    fn has_template(&self) -> bool {
        // The shapes known ahead (`ahead`) are always there.
        true
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&dyn crate::json::partial::SoFar> {
        (choice == 0)
            .then(|| self.fold.arguments(index))
            .flatten()
            .map(|p| p as &dyn crate::json::partial::SoFar)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings().to_vec()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }
}

impl<S: ResponsesItems> Reader<S> for ResponsesReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Event<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let whole_frame = v.whole_frame();
        let ev: Event<'_> = v.value;
        let kind_text = ev.kind_of(v.frame.event_type());
        let view = match ev.read(&kind_text, v.doc) {
            Read::Error(info) => return state.report_in(sink, &info, v.frame),
            Read::Fold(view, failed) => {
                if let Some(info) = failed {
                    state.report_in(sink, &info, v.frame)?;
                }
                view
            }
        };
        let kind = kind_text.as_bytes();
        if TERMINAL.iter().any(|t| t.as_bytes() == kind) {
            state.done = true;
        }
        self.fold.add(&view);
        state.tap(Upstream::Responses(&view));
        let item = if sink.items() {
            Some(sink.event(&ev, kind, view.raw)?)
        } else {
            None
        };
        if !whole_frame || !ev.is_delta() {
            return Ok(());
        }
        // Vendor strings and numbers are raw holes (their values may change frame to frame).
        let raws = RawHole::all_of([&ev.extra]);
        let raw_strings: Vec<&str> = raws.iter().map(RawHole::text).collect();
        let Some(text) = Str::in_frame_except(&ev.delta, v.doc, &raw_strings) else {
            return Ok(());
        };
        let padding: Vec<&str> = Str::in_frame(&ev.obfuscation, v.doc).into_iter().collect();
        let keeps_raw = view.raw.is_some();
        let template = Template::new(v.frame, text, &padding, &raws, 0, item);
        let new = match ev.sequence_number {
            Some(n) => template.and_then(|t| t.with_number("sequence_number", n)),
            None => template,
        };
        if let Some(template) = new {
            self.template = Some(ResponsesTemplate {
                template,
                kind: kind_text.as_ref().into(),
                output_index: ev.output_index,
                content_index: ev.content_index,
                summary_index: ev.summary_index,
                item_id: ev.item_id.as_ref().map(|s| s.as_str().into()),
                keeps_raw,
            });
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let Some(t) = &self.template else {
            return self.ahead(state, subject, sink);
        };
        let Some(hit) = t
            .template
            .fit(subject, sink.items(), &mut [""; MAX_RAW], &mut self.buf)
        else {
            return self.ahead(state, subject, sink);
        };
        let Some(raw) = hit.raw(t.keeps_raw) else {
            return Ok(None);
        };
        if let Some(item) = t.template.item.as_ref().filter(|_| sink.items()) {
            sink.refill(item, &hit.text, hit.number, raw)?;
        }
        let view = EventView {
            kind: &t.kind,
            output_index: t.output_index,
            content_index: t.content_index,
            summary_index: t.summary_index,
            item_id: t.item_id.as_deref(),
            delta: Some(&hit.text),
            raw,
            ..EventView::default()
        };
        self.fold.add(&view);
        state.tap(Upstream::Responses(&view));
        Ok(Some(hit.len))
    }
}

impl<I> ResponsesReader<I> {
    /// The fast path of the shapes known ahead ([`ahead`]), when the caller wants no items
    /// (there is no item to copy): the frame is folded as the event it decodes to, and a
    /// delta's shape becomes the stream's template.
    fn ahead<S: Sink<Item = I>>(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        if sink.items() {
            return Ok(None);
        }
        // Only the shapes of the frame's event type are tried.
        let event = subject.event();
        for known in ahead().of(event) {
            let mut raws = [""; MAX_RAW];
            let Some(hit) = fit(&known.shape, subject, &mut raws, &mut self.buf) else {
                continue;
            };
            let Some(ids) = Ids::read(&raws, known.second) else {
                return Ok(None);
            };
            let mut view = EventView {
                kind: known.event,
                output_index: Some(ids.output_index),
                content_index: ids.content_index,
                summary_index: ids.summary_index,
                item_id: Some(ids.item_id),
                ..EventView::default()
            };
            match known.known {
                Known::Delta => view.delta = Some(&hit.text),
                Known::PartAdded(part) if hit.text.is_empty() => view.part = Some(part),
                Known::ItemAdded(text) if hit.text == text => view.item = hit.span,
                Known::Done(Field::Text) => view.text = Some(&hit.text),
                Known::Done(Field::Arguments) => view.arguments = Some(&hit.text),
                Known::Done(Field::Part) => view.part = hit.span,
                Known::Done(Field::Item) => view.item = hit.span,
                Known::PartAdded(_) | Known::ItemAdded(_) => continue,
            }
            if matches!(known.known, Known::ItemAdded(_) | Known::Done(Field::Item)) {
                // An item's id is in the item, which the fold reads.
                view.item_id = None;
                if view.item.is_none() {
                    return Ok(None);
                }
            }
            if !matches!(known.known, Known::Delta) {
                // Kept as the decoder keeps an event that is not a plain delta.
                let Some(raw) = crate::text::utf8(hit.data) else {
                    return Ok(None);
                };
                view.raw = Some(raw);
                state.quiet_hit = true;
            }
            if view.part.is_none() && matches!(known.known, Known::Done(Field::Part)) {
                return Ok(None);
            }
            state.saw(crate::dialect::Belongs::Own, "");
            self.fold.add(&view);
            state.tap(Upstream::Responses(&view));
            if let Known::Delta = known.known {
                // The shape, with this frame's item id and indexes fixed, is the stream's
                // template from now on: the item's next deltas fit at the first try.
                self.template = Some(ResponsesTemplate {
                    template: Template {
                        shape: std::borrow::Cow::Owned(known.shape.fixed(&raws)),
                        hole: 0,
                        item: None,
                    },
                    kind: known.event.into(),
                    output_index: Some(ids.output_index),
                    content_index: ids.content_index,
                    summary_index: ids.summary_index,
                    item_id: Some(ids.item_id.into()),
                    keeps_raw: false,
                });
            }
            return Ok(Some(hit.len));
        }
        Ok(None)
    }
}

impl ResponsesItems for super::Quiet {
    fn event(&mut self, _: &Event<'_>, _: &[u8], _: Option<&str>) -> Result<(), Self::Error> {
        Ok(())
    }
    fn refill(
        &mut self,
        _: &(),
        _: &str,
        _: Option<i64>,
        _: Option<&str>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}
