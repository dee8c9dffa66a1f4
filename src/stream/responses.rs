//! The OpenAI Responses reader: each event read (`crate::dialect::responses`; `error` events
//! and `response.failed` are reported), folded (`crate::fold::responses`), tapped, and handed
//! to the sink as one item; a plain delta makes the frame template (its holes: the delta text
//! and the sequence number). Carried across frames: the fold and the template.

use super::Upstream;
use super::{Dialect, Reader, Sink, State, Subject, Template, Value};
use crate::dialect::json::Str;
use crate::dialect::responses::{self, Event, Read, TERMINAL};
use crate::dialect::template::{RawHole, MAX_RAW};
use crate::dialect::Belongs;
use crate::fold::responses::{EventView, ResponsesFold};

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
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        (choice == 0).then(|| self.fold.arguments(index)).flatten()
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
            return Ok(None);
        };
        let Some(hit) = t
            .template
            .fit(subject, sink.items(), &mut [""; MAX_RAW], &mut self.buf)
        else {
            return Ok(None);
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
