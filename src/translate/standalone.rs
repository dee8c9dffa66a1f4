//! A whole translation in pure Rust ([`Standalone`]): an upstream body read by the source
//! dialect's own stream, building no items, with a `crate::translate::Translation` on its tap.
//! Carried across feeds: the stream (or, for an `auto` source, the input held until the
//! dialect is told) and the translation.

use super::{Dialect, Sniffer, Translation};
use crate::dialect::registry::dialects;
use crate::stream::{Quiet, Stream, Tap};

/// Declares [`Source`], a dialect stream of each source building no items
/// (`crate::stream::Quiet`), [`each_source!`] and `Source::new`, from the dialect list.
macro_rules! sources {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// A dialect stream of each source, building no items (`crate::stream::Quiet`).
        enum Source {
            $($d(Box<Stream<crate::stream::$m::$reader<()>>>),)*
        }

        /// Runs `$body` with `$s` bound to the stream of whichever dialect `$source` reads.
        macro_rules! each_source {
            ($source:expr, $s:ident => $body:expr) => {
                match $source {
                    $(Source::$d($s) => $body,)*
                }
            };
        }

        impl Source {
            fn new(dialect: Dialect, max_event_size: usize) -> Self {
                match dialect {
                    $(Dialect::$d => Source::$d(Box::new(Stream::new(max_event_size))),)*
                }
            }
        }
    };
}
dialects!(sources);

impl Source {
    fn tap(&mut self) -> &mut Option<Box<dyn Tap>> {
        each_source!(self, s => &mut s.state.tap)
    }

    /// The translation on the stream's tap.
    fn translation(&mut self) -> Option<&mut Translation> {
        let tap = self.tap().as_mut()?;
        tap.as_any_mut().downcast_mut::<Translation>()
    }

    fn run(&mut self, input: &[u8]) -> Option<crate::framing::sse::TooLarge> {
        let result = each_source!(self, s => s.run(input, &mut Quiet));
        result.unwrap_or_else(|never| match never {})
    }

    fn finish(&mut self) {
        let result = each_source!(self, s => s.finish(&mut Quiet));
        result.unwrap_or_else(|never| match never {})
    }
}

/// A whole translation in pure Rust: the upstream body read by the source dialect's own
/// stream (`crate::stream::Stream`, the one the Python stream classes drive), building no
/// items, with the translation on its tap. The Python `Translator` drives its source stream
/// the same way; this serves the Rust tests, the benches and the fuzz targets.
pub struct Standalone {
    /// The translation, while no source stream holds it on its tap.
    t: Option<Box<Translation>>,
    source: Option<Source>,
    /// With `source: "auto"`, the input read before the dialect was told.
    undecided: Option<Sniffer>,
    max_event_size: usize,
}

impl Standalone {
    /// A translation from `source` (`None`: told by the body's first events) into `target`.
    pub fn new(source: Option<Dialect>, target: Dialect, max_event_size: usize) -> Self {
        let t = Box::new(Translation::new(source, target));
        match source {
            Some(dialect) => {
                let mut stream = Source::new(dialect, max_event_size);
                *stream.tap() = Some(t as Box<dyn Tap>);
                Standalone {
                    t: None,
                    source: Some(stream),
                    undecided: None,
                    max_event_size,
                }
            }
            None => Standalone {
                t: Some(t),
                source: None,
                undecided: Some(Sniffer::new(max_event_size)),
                max_event_size,
            },
        }
    }

    /// The translation, wherever it is held.
    pub fn translation(&mut self) -> &mut Translation {
        if let Some(source) = &mut self.source {
            if source.translation().is_some() {
                if let Some(t) = source.translation() {
                    return t;
                }
            }
        }
        self.t
            .get_or_insert_with(|| Box::new(Translation::new(None, Dialect::Chat)))
    }

    /// Upstream bytes in, the target's complete events out (empty when nothing is owed yet).
    pub fn feed(&mut self, input: &[u8]) -> (Vec<u8>, Option<crate::framing::sse::TooLarge>) {
        if self.translation().refuse_after_end() {
            return (Vec::new(), None);
        }
        let mut too_large = None;
        match &mut self.undecided {
            Some(sniffer) => {
                if let Some(dialect) = sniffer.feed(input) {
                    too_large = self.decide(dialect);
                }
            }
            None => {
                if let Some(source) = &mut self.source {
                    too_large = source.run(input);
                }
            }
        }
        (self.translation().take(), too_large)
    }

    /// The source is told: its stream is made, takes the translation on its tap, and reads
    /// what was held.
    fn decide(&mut self, dialect: Dialect) -> Option<crate::framing::sse::TooLarge> {
        let held = self.undecided.take().map(Sniffer::held).unwrap_or_default();
        let mut source = Source::new(dialect, self.max_event_size);
        let mut t = self.t.take()?;
        t.set_source(dialect);
        *source.tap() = Some(t as Box<dyn Tap>);
        let too_large = source.run(&held);
        self.source = Some(source);
        too_large
    }

    /// End of the upstream: a last event never closed by its blank line is read; nothing is
    /// made up (an upstream cut before its terminal marker leaves the target cut too).
    pub fn finish(&mut self) -> Vec<u8> {
        if self.translation().ended() {
            return Vec::new();
        }
        if let Some(dialect) = self.undecided.as_ref().map(Sniffer::at_end) {
            self.decide(dialect);
        }
        if let Some(source) = &mut self.source {
            source.finish();
        }
        let t = self.translation();
        t.end_input();
        t.take()
    }
}
