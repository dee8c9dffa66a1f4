//! The Bedrock Converse reader: each event (its `:event-type` the frame's event name, its
//! payload the document) read (`crate::dialect::converse`), folded (`crate::fold::converse`)
//! tapped, and handed to the sink as one item. The body is always the AWS event stream framing
//! (`super::eventstream`, [`Dialect::EVENTSTREAM`]); exceptions are reported there. No frame
//! template yet: every event is decoded. Carried across events: the fold.

use super::{Dialect, Reader, Sink, State, Subject, Value};
use crate::dialect::converse::{self, Event};
use crate::dialect::Belongs;
use crate::fold::converse::ConverseFold;

/// What a sink makes of a Converse stream's events.
pub trait ConverseItems: Sink {
    /// The item of one event: `kind` is its `:event-type`, `doc` its payload.
    fn event(&mut self, kind: &str, ev: &Event<'_>, doc: &str) -> Result<(), Self::Error>;
}

/// The per-stream state of the Converse reader.
pub struct ConverseReader<I> {
    pub fold: ConverseFold,
    _items: std::marker::PhantomData<I>,
}

impl<I> Default for ConverseReader<I> {
    fn default() -> Self {
        ConverseReader {
            fold: ConverseFold::default(),
            _items: std::marker::PhantomData,
        }
    }
}

impl<I> Dialect for ConverseReader<I> {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "a Bedrock Converse";
    const MARKER: &'static str = "messageStop";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Converse;
    const EVENTSTREAM: bool = true;

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
        false
    }

    fn arguments(&self, _choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        self.fold.arguments(index)
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
        state.tap(super::Upstream::Converse(kind, &v.value));
        if kind == "messageStop" {
            state.done = true;
        }
        if sink.items() {
            sink.event(kind, &v.value, v.doc)?;
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        _state: &mut State,
        _subject: Subject<'_>,
        _sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        Ok(None)
    }
}

impl ConverseItems for super::Quiet {
    fn event(&mut self, _: &str, _: &Event<'_>, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}
