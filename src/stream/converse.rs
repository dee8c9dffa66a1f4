//! The Bedrock Converse reader: each event (its `:event-type` the frame's event name, its
//! payload the document) read (`crate::dialect::converse`), folded (`crate::fold::converse`)
//! tapped, and handed to the sink as one item. The body is always the AWS event stream framing
//! (`super::eventstream`, its registry row's framing); exceptions are reported there. The common
//! deltas (text, a tool call's input, reasoning text) make a template of their payload, with
//! the block index and Bedrock's random `p` padding as holes: a later delta's payload of that
//! shape is folded without a decode. Carried across events: the fold and the template.

use std::borrow::Cow;

use super::{fit, Dialect, Frame, Reader, Sink, State, Subject, Value};
use crate::dialect::converse::{self, Delta, Event, ReasoningDelta, ToolUseDelta};
use crate::dialect::template::{Shape, MAX_RAW};
use crate::dialect::Belongs;
use crate::fold::converse::ConverseFold;
use crate::json::read::Str;

/// What a Converse stream taps: an event and its `:event-type`.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    /// The `:event-type`.
    pub kind: &'a str,
    /// The event.
    pub event: &'a Event<'a>,
}

/// What a sink makes of a Converse stream's events.
pub trait ConverseItems: Sink {
    /// The item of one event: `kind` is its `:event-type`, `doc` its payload.
    fn event(&mut self, kind: &str, ev: &Event<'_>, doc: &str) -> Result<(), Self::Error>;
}

/// The per-stream state of the Converse reader.
pub struct ConverseReader<I> {
    /// The fold of the stream's events so far.
    pub fold: ConverseFold,
    /// The shape of the last common delta's payload, which string its hole is, and its block
    /// index (when the shape has no number hole for it).
    template: Option<(Shape, Hole, Option<i64>)>,
    /// Where a fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    _items: std::marker::PhantomData<I>,
}

impl<I> Default for ConverseReader<I> {
    fn default() -> Self {
        ConverseReader {
            fold: ConverseFold::default(),
            template: None,
            buf: Vec::new(),
            _items: std::marker::PhantomData,
        }
    }
}

/// The string of a common delta a template leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    Text,
    ToolInput,
    Reasoning,
}

impl Hole {
    /// The hole of a decoded delta: its one string, if it has exactly one of the three.
    fn of<'e, 'a>(delta: &'e Delta<'a>) -> Option<(Hole, &'e Cow<'a, str>)> {
        let reasoning = delta.reasoning_content.as_ref();
        let only_text =
            reasoning.is_some_and(|r| r.signature.is_none() && r.redacted_content.is_none());
        let found = [
            (Hole::Text, delta.text.as_ref()),
            (
                Hole::ToolInput,
                delta.tool_use.as_ref().and_then(|t| t.input.as_ref()),
            ),
            (
                Hole::Reasoning,
                reasoning
                    .filter(|_| only_text)
                    .and_then(|r| r.text.as_ref()),
            ),
        ];
        let mut present = found.into_iter().filter_map(|(h, t)| Some((h, t?)));
        let one = present.next()?;
        (present.next().is_none() && delta.citation.is_none()).then_some(one)
    }

    /// The delta with `text` in this hole.
    fn delta(self, text: &str) -> Delta<'_> {
        let text = Some(Cow::Borrowed(text));
        match self {
            Hole::Text => Delta {
                text,
                ..Delta::default()
            },
            Hole::ToolInput => Delta {
                tool_use: Some(ToolUseDelta { input: text }),
                ..Delta::default()
            },
            Hole::Reasoning => Delta {
                reasoning_content: Some(ReasoningDelta {
                    text,
                    ..ReasoningDelta::default()
                }),
                ..Delta::default()
            },
        }
    }
}

/// The template of a `contentBlockDelta` frame whose payload is a common delta: its string
/// and its padding (`p`, Bedrock's random-length filler) left open, and its block index a
/// number hole.
fn template_of(frame: &Frame<'_>, ev: &Event<'_>, doc: &str) -> Option<(Shape, Hole, Option<i64>)> {
    let (hole, text) = Hole::of(ev.delta.as_ref()?)?;
    let text = Str::in_frame(&Some(Str(text.clone())), doc)?;
    // Only the common delta's keys and the padding: anything else stays with the decoder.
    let entries = crate::fold::Json::object(doc)?;
    let mut padding = Vec::new();
    for (key, value) in &entries {
        match key.as_ref() {
            "contentBlockIndex" | "delta" => {}
            "p" => padding.push(value.get().get(1..value.get().len().checked_sub(1)?)?),
            _ => return None,
        }
    }
    let shape = Shape::new(frame.event.as_deref(), doc, text, &padding)?;
    let shape = match ev.content_block_index {
        Some(index) => shape.or_number("contentBlockIndex", index),
        None => shape,
    };
    Some((shape, hole, ev.content_block_index))
}

impl<I> Dialect for ConverseReader<I> {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "a Bedrock Converse";
    const MARKER: &'static str = "messageStop";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Converse;

    fn belongs(doc: &Event<'_>, event: &[u8]) -> Belongs {
        doc.belongs(event)
    }

    fn is_output(_: &Event<'_>, event: &[u8]) -> bool {
        event == b"contentBlockDelta"
    }

    fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
        converse::decode(doc)
    }

    fn has_template(&self) -> bool {
        // Framed by the event stream decoder, never read off raw bytes.
        false
    }

    fn arguments(&self, _choice: i64, index: i64) -> Option<&dyn crate::json::partial::SoFar> {
        self.fold
            .arguments(index)
            .map(|p| p as &dyn crate::json::partial::SoFar)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }
}

impl<S: ConverseItems> Reader<S> for ConverseReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Event<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let kind = std::str::from_utf8(v.frame.event_type()).unwrap_or_default();
        self.fold.add(kind, &v.value);
        state.tap(super::Upstream::Converse(&View {
            kind,
            event: &v.value,
        }));
        if kind == "messageStop" {
            state.done = true;
        }
        if sink.items() {
            sink.event(kind, &v.value, v.doc)?;
        }
        if kind == "contentBlockDelta" && v.whole_frame() {
            if let Some(template) = template_of(v.frame, &v.value, v.doc) {
                self.template = Some(template);
            }
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let (Some((shape, hole, index)), Subject::Frame(frame)) = (&self.template, subject) else {
            return Ok(None);
        };
        let (hole, index) = (*hole, *index);
        let Some(hit) = fit(shape, subject, &mut [""; MAX_RAW], &mut self.buf) else {
            return Ok(None);
        };
        let ev = Event {
            content_block_index: hit.number.or(index),
            delta: Some(hole.delta(&hit.text)),
            ..Event::default()
        };
        let kind = "contentBlockDelta";
        self.fold.add(kind, &ev);
        state.tap(super::Upstream::Converse(&View { kind, event: &ev }));
        if sink.items() {
            sink.event(kind, &ev, &frame.data)?;
        }
        Ok(Some(0))
    }
}

impl ConverseItems for super::Quiet {
    fn event(&mut self, _: &str, _: &Event<'_>, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}
