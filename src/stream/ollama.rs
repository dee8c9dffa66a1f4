//! The Ollama reader: each NDJSON line (the registry row's framing, `crate::framing::ndjson`)
//! read (`crate::dialect::ollama`), folded (`crate::fold::ollama`; `done: true` ends the
//! stream), tapped, and handed to the sink as one item. An `{"error": ...}` line is the
//! stream's error (the stream machine reports it: it is no line of the dialect's own). No
//! template: a line is read by the decoder. Carried across lines: the fold.

use super::{Dialect, Reader, Sink, State, Subject, Value};
use crate::dialect::ollama::{self, Line};
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::ollama::OllamaFold;

/// What an Ollama stream taps: one line.
pub type View<'a> = Line<'a>;

/// What a sink makes of an Ollama stream's lines.
pub trait OllamaItems: Sink {
    /// The item of one line (`doc`, its JSON).
    fn line(&mut self, line: &Line<'_>, doc: &str) -> Result<(), Self::Error>;
}

/// The per-stream state of the Ollama reader.
pub struct OllamaReader<I> {
    /// The fold of the stream's lines so far.
    pub fold: OllamaFold,
    _items: std::marker::PhantomData<I>,
}

impl<I> Default for OllamaReader<I> {
    fn default() -> Self {
        OllamaReader {
            fold: OllamaFold::default(),
            _items: std::marker::PhantomData,
        }
    }
}

impl<I> Dialect for OllamaReader<I> {
    type Doc<'f> = Line<'f>;

    const NAME: &'static str = "an Ollama";
    const MARKER: &'static str = "a line with \"done\": true";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Ollama;

    fn belongs(doc: &Line<'_>, _event: &[u8]) -> Belongs {
        doc.belongs()
    }

    fn is_output(doc: &Line<'_>, _event: &[u8]) -> bool {
        let message = doc.message.as_ref();
        let said = |t: Option<&std::borrow::Cow<'_, str>>| t.is_some_and(|t| !t.is_empty());
        said(doc.response.as_ref())
            || said(doc.thinking.as_ref())
            || message.is_some_and(|m| {
                said(m.content.as_ref()) || said(m.thinking.as_ref()) || m.tool_calls.is_some()
            })
    }

    fn decode(doc: &str) -> Result<Line<'_>, serde_json::Error> {
        ollama::decode(doc)
    }

    fn has_template(&self) -> bool {
        false
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

impl<S: OllamaItems> Reader<S> for OllamaReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Line<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        if let Some(error) = v.value.error {
            let info = ErrorInfo::of_document(v.doc, Some(error));
            state.report_in(sink, &info, v.frame)?;
            if v.value.belongs() != Belongs::Own {
                return Ok(());
            }
        }
        self.fold.add(&v.value);
        state.tap(super::Upstream::Ollama(&v.value));
        if self.fold.done() {
            state.done = true;
        }
        if sink.items() {
            sink.line(&v.value, v.doc)?;
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        _: &mut State,
        _: Subject<'_>,
        _: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        Ok(None)
    }
}

impl OllamaItems for super::Quiet {
    fn line(&mut self, _: &Line<'_>, _: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}
