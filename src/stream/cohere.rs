//! The Cohere reader: each SSE event read (`crate::dialect::cohere`), folded
//! (`crate::fold::cohere`; `message-end` ends the stream, `[DONE]` or not), tapped, and handed
//! to the sink as one item. A `message-end` with `finish_reason: "ERROR"` is the stream's
//! error (and still ends it). A plain delta (one piece of text, thinking, plan or arguments)
//! makes the frame template, its string and its index left open: a later delta of that shape
//! is folded without a decode. Carried across frames: the fold and the template.

use std::borrow::Cow;

use super::{fit, Dialect, Reader, Sink, State, Subject, Value};
use crate::dialect::cohere::{self, Call, Content, Delta, Event, Function, Message, One};
use crate::dialect::template::{Shape, MAX_RAW};
use crate::dialect::Belongs;
use crate::fold::cohere::CohereFold;
use crate::json::read::{Int, Str};

/// What a Cohere stream taps: one event and its kind (its JSON `type`, else its `event:`
/// name).
#[derive(Debug)]
pub struct View<'a> {
    /// The event's kind.
    pub kind: &'a str,
    /// The event.
    pub event: &'a Event<'a>,
}

/// What a sink makes of a Cohere stream's events.
pub trait CohereItems: Sink {
    /// The item of one event (`kind`: its kind; `doc`: its JSON).
    fn event(&mut self, event: &Event<'_>, kind: &str, doc: &str) -> Result<(), Self::Error>;
}

/// The string a delta template leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hole {
    /// A `content-delta`'s text.
    Text,
    /// A `content-delta`'s thinking.
    Thinking,
    /// A `tool-plan-delta`'s piece of the plan.
    Plan,
    /// A `tool-call-delta`'s piece of the arguments.
    Arguments,
}

/// A delta template: its shape (the piece's string and the index left open) and which piece
/// it holds.
struct Template {
    shape: Shape,
    hole: Hole,
    /// The index, when the shape could not leave it open (or the event has none).
    index: Option<i64>,
}

/// The per-stream state of the Cohere reader.
pub struct CohereReader<I> {
    /// The fold of the stream's events so far.
    pub fold: CohereFold,
    template: Option<Template>,
    /// Where a fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    _items: std::marker::PhantomData<I>,
}

impl<I> Default for CohereReader<I> {
    fn default() -> Self {
        CohereReader {
            fold: CohereFold::default(),
            template: None,
            buf: Vec::new(),
            _items: std::marker::PhantomData,
        }
    }
}

/// The template of a plain delta (`type`, `index`, and one piece of text, thinking, plan or
/// arguments, nothing else), decoded from `doc`.
fn template_of(event: Option<&[u8]>, e: &Event<'_>, doc: &str) -> Option<Template> {
    if e.logprobs.is_some() || e.id.is_some() {
        return None;
    }
    let delta = e.delta.as_ref()?;
    let message = delta.message.as_ref()?;
    if delta.finish_reason.is_some()
        || delta.usage.is_some()
        || delta.error.is_some()
        || delta.error_type.is_some()
        || message.role.is_some()
        || message.citations.is_some()
    {
        return None;
    }
    let (content, plan, call) = (
        message.content.0.as_ref(),
        message.tool_plan.as_ref(),
        message.tool_calls.0.as_ref(),
    );
    let (hole, text) = match (e.type_.as_deref()?, content, plan, call) {
        ("content-delta", Some(c), None, None) if c.type_.is_none() => match (&c.text, &c.thinking)
        {
            (Some(_), None) => (Hole::Text, &c.text),
            (None, Some(_)) => (Hole::Thinking, &c.thinking),
            _ => return None,
        },
        ("tool-plan-delta", None, Some(_), None) => (Hole::Plan, &message.tool_plan),
        ("tool-call-delta", None, None, Some(c)) if c.id.is_none() && c.type_.is_none() => {
            let f = c.function.as_ref()?;
            if f.name.is_some() {
                return None;
            }
            (Hole::Arguments, &f.arguments)
        }
        _ => return None,
    };
    let text = Str::in_frame(text, doc)?;
    // A key spelled with escapes decodes as its plain spelling, but the shape matches bytes:
    // a frame with an escape outside its piece makes no template.
    let at = (text.as_ptr() as usize).checked_sub(doc.as_ptr() as usize)?;
    let (before, after) = (doc.get(..at)?, doc.get(at + text.len()..)?);
    if before.contains('\\') || after.contains('\\') {
        return None;
    }
    let shape = Shape::with_raws(event, doc, text, &[], &[])?;
    let index = e.index();
    let shape = match index {
        Some(index) => shape.or_number("index", index),
        None => shape,
    };
    Some(Template { shape, hole, index })
}

impl<I> Dialect for CohereReader<I> {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "a Cohere";
    const MARKER: &'static str = "message-end";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Cohere;

    fn belongs(doc: &Event<'_>, event: &[u8]) -> Belongs {
        doc.belongs(event)
    }

    fn is_output(doc: &Event<'_>, event: &[u8]) -> bool {
        let said = |t: Option<&str>| t.is_some_and(|t| !t.is_empty());
        match doc.kind(event) {
            "content-delta" => doc
                .content()
                .is_some_and(|c| said(c.text.as_deref()) || said(c.thinking.as_deref())),
            "tool-plan-delta" => said(doc.tool_plan()),
            "tool-call-start" => true,
            "tool-call-delta" => said(doc.arguments()),
            _ => false,
        }
    }

    fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
        cohere::decode(doc)
    }

    fn has_template(&self) -> bool {
        self.template.is_some()
    }

    fn arguments(&self, choice: i64, index: i64) -> Option<&dyn crate::json::partial::SoFar> {
        (choice == 0)
            .then(|| self.fold.arguments(index))
            .flatten()
            .map(|p| p as &dyn crate::json::partial::SoFar)
    }

    fn warnings(&mut self) -> Vec<String> {
        Vec::new()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }

    fn result_usage(&mut self) -> Option<crate::fold::Out> {
        self.fold.usage()
    }
}

impl<S: CohereItems> Reader<S> for CohereReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Event<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let e = &v.value;
        let kind = e.kind(v.frame.event_type());
        if kind == "message-end" {
            if let Some(info) = e.failure(v.doc) {
                state.report_in(sink, &info, v.frame)?;
            }
        }
        self.fold.add(e, v.frame.event_type());
        state.tap(super::Upstream::Cohere(&View { kind, event: e }));
        if self.fold.done() {
            state.done = true;
        }
        if sink.items() {
            sink.event(e, kind, v.doc)?;
        }
        if v.whole_frame() {
            if let Some(template) = template_of(v.frame.event.as_deref(), e, v.doc) {
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
        let Some(t) = &self.template else {
            return Ok(None);
        };
        let mut raws = [""; MAX_RAW];
        let Some(hit) = fit(&t.shape, subject, &mut raws, &mut self.buf) else {
            return Ok(None);
        };
        let doc = match sink.items() {
            true => match crate::text::utf8(hit.data) {
                Some(doc) => doc,
                None => return Ok(None), // the frame is decoded in full
            },
            false => "",
        };
        let piece = Some(Str(Cow::Borrowed(hit.text.as_ref())));
        let mut message = Message::default();
        let kind = match t.hole {
            Hole::Text | Hole::Thinking => {
                let (text, thinking) = match t.hole {
                    Hole::Thinking => (None, piece),
                    _ => (piece, None),
                };
                message.content = One(Some(Content {
                    type_: None,
                    text,
                    thinking,
                }));
                "content-delta"
            }
            Hole::Plan => {
                message.tool_plan = piece;
                "tool-plan-delta"
            }
            Hole::Arguments => {
                message.tool_calls = One(Some(Call {
                    function: Some(Function {
                        name: None,
                        arguments: piece,
                    }),
                    ..Call::default()
                }));
                "tool-call-delta"
            }
        };
        let e = Event {
            type_: Some(Str(Cow::Borrowed(kind))),
            index: hit.number.or(t.index).map(Int),
            delta: Some(Delta {
                message: Some(message),
                ..Delta::default()
            }),
            ..Event::default()
        };
        // An empty piece is no output, as a decode counts it.
        state.quiet_hit = hit.text.is_empty();
        self.fold.add(&e, b"");
        state.tap(super::Upstream::Cohere(&View { kind, event: &e }));
        if sink.items() {
            sink.event(&e, kind, doc)?;
        }
        Ok(Some(hit.len))
    }
}

impl CohereItems for super::Quiet {
    fn event(&mut self, _: &Event<'_>, _: &str, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{Quiet, Stream};

    #[test]
    fn plain_deltas_take_the_template() {
        let mut body = String::from("event: message-start\ndata: {\"id\":\"x\",\"type\":\"message-start\",\"delta\":{\"message\":{\"role\":\"assistant\",\"content\":[],\"tool_plan\":\"\",\"tool_calls\":[],\"citations\":[]}}}\n\n");
        for i in 0..10 {
            body.push_str(&format!("event: content-delta\ndata: {{\"type\":\"content-delta\",\"index\":0,\"delta\":{{\"message\":{{\"content\":{{\"text\":\"w{i} \\\"q\\\"\"}}}}}}}}\n\n"));
        }
        let mut s: Stream<CohereReader<()>> = Stream::new(1 << 20);
        let _ = s.run(body.as_bytes(), &mut Quiet);
        assert_eq!(s.state.fast, 9);
        let text = s.reader.fold.result().to_json();
        assert!(text.contains(r#"w9 \"q\""#), "{text}");
    }
}
