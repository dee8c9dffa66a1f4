//! The Anthropic Messages reader: each event read (`crate::dialect::messages`), folded
//! (`crate::fold::messages`), tapped, and handed to the sink as one item (pings and other
//! events the fold skips are dropped); the common text / JSON / thinking deltas make the
//! frame template. Carried across frames: the fold and the template.

use super::Upstream;
use super::{fit, ByEvent, Dialect, Frame, Reader, Sink, State, Subject, Template, Value};
use crate::dialect::messages::{self, Event, Read};
use crate::dialect::template::{RawHole, Shape, MAX_RAW};
use crate::dialect::Belongs;
use crate::fold::messages::{EventView, MessagesFold};
use crate::json::read::Str;

/// What a Messages stream taps: an event (not a ping or an error).
pub type View<'a> = crate::fold::messages::EventView<'a>;

/// The string of a common delta that a frame template leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// A `text_delta`'s `text`.
    Text = 0,
    /// An `input_json_delta`'s `partial_json`.
    PartialJson = 1,
    /// A `thinking_delta`'s `thinking`.
    Thinking = 2,
}

impl Hole {
    /// The hole numbered `n` (a template's `hole`); any number past 1 is `Thinking`.
    pub fn of(n: u8) -> Hole {
        match n {
            0 => Hole::Text,
            1 => Hole::PartialJson,
            _ => Hole::Thinking,
        }
    }
}

/// What a sink makes of a Messages stream's events.
pub trait MessagesItems: Sink {
    /// The item of one event: `kind` is its type, `raw` the whole event's JSON when the view
    /// keeps it (every event but the common deltas).
    fn event(
        &mut self,
        ev: &Event<'_>,
        kind: &[u8],
        raw: Option<&str>,
    ) -> Result<Self::Item, Self::Error>;
    /// A copy of `item` with `text` in its string `hole` (and `raw` as its raw JSON, for an
    /// event that keeps it).
    fn refill(
        &mut self,
        item: &Self::Item,
        hole: Hole,
        text: &str,
        raw: Option<&str>,
    ) -> Result<(), Self::Error>;
}

/// The per-stream state of the Messages reader.
pub struct MessagesReader<I> {
    /// The fold of the stream's events so far.
    pub fold: MessagesFold,
    /// Where a template fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    template: Option<MessagesTemplate<I>>,
}

impl<I> Default for MessagesReader<I> {
    fn default() -> Self {
        MessagesReader {
            fold: MessagesFold::default(),
            buf: Vec::new(),
            template: None,
        }
    }
}

/// The template of the last common delta, and what the fold needs of it: a frame that fits
/// folds as that delta with new text in the hole.
struct MessagesTemplate<I> {
    template: Template<I>,
    index: Option<i64>,
    delta_type: Box<str>,
    /// The event has keys the decoder does not know: its raw JSON is kept (a fit's data).
    keeps_raw: bool,
}

/// The one text of a common delta that a template can leave open, as its place in `data`, the
/// frame's JSON (escaped or not), not one of the strings `except` (the raw holes).
fn hole<'f>(ev: &Event<'f>, data: &'f str, except: &[&str]) -> Option<(Hole, &'f str)> {
    if !ev.is_typed_delta() {
        return None;
    }
    let d = &ev.delta;
    let (kind, text) = [
        (Hole::Text, &d.text),
        (Hole::PartialJson, &d.partial_json),
        (Hole::Thinking, &d.thinking),
    ]
    .into_iter()
    .find(|(_, text)| text.is_some())?;
    Some((kind, Str::in_frame_except(text, data, except)?))
}

/// A common delta's view with `text` in hole `hole`.
fn delta_view<'a>(
    index: Option<i64>,
    delta_type: &'a str,
    hole: Hole,
    text: &'a str,
    raw: Option<&'a str>,
) -> EventView<'a> {
    EventView {
        raw,
        kind: "content_block_delta",
        index,
        delta_type: Some(delta_type),
        text: (hole == Hole::Text).then_some(text),
        partial_json: (hole == Hole::PartialJson).then_some(text),
        thinking: (hole == Hole::Thinking).then_some(text),
        ..EventView::default()
    }
}

/// What a frame of a shape known ahead is.
#[derive(Debug, Clone, Copy)]
enum Known {
    /// A common delta: its type, and the string its hole holds.
    Delta(&'static str, Hole),
    /// A thinking block's `signature_delta` (one per block: it makes no template).
    Signature,
    /// The `content_block_start` of an empty block: the block, as sent.
    Start(&'static str),
    /// The `content_block_start` of a tool call (its id and name raw holes): the block is the
    /// shape's span.
    StartCall,
    /// `message_delta` with a stop reason (the hole), no stop sequence and no other delta
    /// key: its `usage` object (whose counts are number holes) is the shape's span.
    MessageDelta,
    /// The `content_block_start` of any other block (a server tool's result, a redacted
    /// thinking block, ...): the block is the value hole's, kept as sent.
    StartAny,
    /// A `citations_delta`: its citation (of any type) is the value hole's.
    Citation,
    /// `message_start`: its message is the value hole's, kept as sent.
    MessageStart,
    /// `content_block_stop`, `message_stop`, `ping` (the hole holds the event's type).
    Stop,
    MessageStop,
    Ping,
}

/// A frame shape known before a stream's first byte: what its frames are, the event type it
/// has, and the text its hole must hold for anything but a delta (another text is left to
/// the decoder).
struct Ahead {
    event: &'static str,
    known: Known,
    shape: Shape,
    text: Option<&'static str>,
}

/// The frames Anthropic writes for every block and every message, known before a stream's
/// first byte: under `consume()` (no item to copy) the first delta of each kind in each
/// block, a thinking block's signature, the start of a text or thinking block, each block's
/// stop, `message_stop` and the pings take the fast path too. A shape's block index is a number hole; its text hole is the
/// delta's string, an empty block's text, or the event's own type. A frame spelled another
/// way (another key order, spaces) is decoded as before.
fn ahead() -> &'static ByEvent<Ahead> {
    static AHEAD: std::sync::OnceLock<ByEvent<Ahead>> = std::sync::OnceLock::new();
    AHEAD.get_or_init(|| {
        // Each shape: its event type, its data, the needle whose last quoted string is the
        // hole (it stands once in the data), what its frames are, and the text the hole must
        // hold (none for a delta).
        let deltas = [
            ("text_delta", "text", Hole::Text),
            ("thinking_delta", "thinking", Hole::Thinking),
            ("input_json_delta", "partial_json", Hole::PartialJson),
        ]
        .map(|(delta_type, key, hole)| {
            (
                "content_block_delta",
                format!(
                    r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"{delta_type}","{key}":"x"}}}}"#
                ),
                r#""x""#.to_owned(),
                Known::Delta(delta_type, hole),
                None,
            )
        });
        let signature = (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"x"}}"#.to_owned(),
            r#""x""#.to_owned(),
            Known::Signature,
            None,
        );
        let start = |block: &'static str, needle: &str| {
            (
                "content_block_start",
                format!(r#"{{"type":"content_block_start","index":0,"content_block":{block}}}"#),
                needle.to_owned(),
                Known::Start(block),
                Some(""),
            )
        };
        // The event's type is its hole: the needle is the type, quoted.
        let typed = |event: &'static str, data: &str, known: Known| {
            (event, data.to_owned(), format!("\"{event}\""), known, Some(event))
        };
        let others = [
            start(r#"{"type":"text","text":""}"#, r#""text":"""#),
            start(
                r#"{"type":"thinking","thinking":"","signature":""}"#,
                r#""thinking":"""#,
            ),
            // A tool call's start: its type is the hole, its id and name raw holes.
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"i","name":"n","input":{}}}"#.to_owned(),
                r#""tool_use""#.to_owned(),
                Known::StartCall,
                Some("tool_use"),
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"i","name":"n","input":{}}}"#.to_owned(),
                r#""server_tool_use""#.to_owned(),
                Known::StartCall,
                Some("server_tool_use"),
            ),
            // Any other block's start, any citation, any message's start: the value (whose
            // keys vary with its type) a value hole, after the shapes above.
            typed(
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{}}"#,
                Known::StartAny,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}"#.to_owned(),
                r#""citations_delta""#.to_owned(),
                Known::Citation,
                Some("citations_delta"),
            ),
            typed(
                "message_start",
                r#"{"type":"message_start","message":{}}"#,
                Known::MessageStart,
            ),
            // The message's end: its stop reason the hole, its usage counts number holes
            // (Anthropic's documented one, and the four counts its API now sends).
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"x","stop_sequence":null},"usage":{"output_tokens":0}}"#.to_owned(),
                r#""stop_reason":"x""#.to_owned(),
                Known::MessageDelta,
                None,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"x","stop_sequence":null},"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}"#.to_owned(),
                r#""stop_reason":"x""#.to_owned(),
                Known::MessageDelta,
                None,
            ),
            typed("content_block_stop", r#"{"type":"content_block_stop","index":0}"#, Known::Stop),
            typed("message_stop", r#"{"type":"message_stop"}"#, Known::MessageStop),
            typed("ping", r#"{"type":"ping"}"#, Known::Ping),
        ];
        // Each shape in Anthropic's compact spelling, then in the one Python's `json.dumps`
        // writes (`": "` and `", "`: recorders and Python servers), tried after it.
        let shapes: Vec<Ahead> = deltas
            .into_iter()
            .chain([signature])
            .chain(others)
            .flat_map(|(event, data, needle, known, text)| {
                let spaced = (event, super::spaced(&data), super::spaced(&needle), known, text);
                [((event, data, needle, known, text), false), (spaced, true)]
            })
            .filter_map(|((event, data, needle, known, text), wide)| {
                let key = |k: &str| if wide { super::spaced(k) } else { k.to_owned() };
                let at = data.find(&needle)?;
                let end = at + needle.len() - 1;
                let start = at + needle.get(..needle.len() - 1)?.rfind('"')? + 1;
                let hole = data.get(start..end)?;
                // A call's id and name: the string after each key.
                let raws: Vec<RawHole<'_>> = match known {
                    Known::StartCall => [r#""id":""#, r#""name":""#]
                        .iter()
                        .map(|k| {
                            let k = key(k);
                            let at = data.find(&k)? + k.len();
                            data.get(at..at + 1).map(RawHole::Str)
                        })
                        .collect::<Option<_>>()?,
                    _ => Vec::new(),
                };
                let shape = Shape::with_raws(Some(event.as_bytes()), &data, hole, &[], &raws)?;
                let shape = if data.contains("\"index\"") {
                    shape.with_number("index", 0)?
                } else {
                    shape
                };
                // A call's block: the object after `"content_block":`, to the closing brace;
                // a message delta's usage: the object after `"usage":`, its counts holes.
                let span = |shape: Shape, k: &str| {
                    let k = key(k);
                    let at = data.find(&k)? + k.len();
                    shape.with_span(&data, data.get(at..data.len() - 1)?)
                };
                let shape = match known {
                    Known::StartCall => span(shape, r#""content_block":"#)?,
                    // The value: the `{}` that ends the data, before its closing braces.
                    Known::StartAny | Known::Citation | Known::MessageStart => {
                        let at = data.rfind("{}")?;
                        shape.with_value(&data, data.get(at..at + 2)?)?
                    }
                    Known::MessageDelta => {
                        let counts: Vec<(&str, i64)> = USAGE_COUNTS
                            .iter()
                            .filter(|k| data.contains(&key(&format!("\"{k}\":0"))))
                            .map(|k| (*k, 0))
                            .collect();
                        span(shape.with_numbers(&counts)?, r#""usage":"#)?
                    }
                    _ => shape,
                };
                Some(Ahead {
                    event,
                    known,
                    shape,
                    text,
                })
            })
            .collect();
        ByEvent::new(shapes, |a| a.event)
    })
}

/// The counts of a message delta's usage that a shape known ahead leaves open.
const USAGE_COUNTS: [&str; 4] = [
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
];

/// How many shapes are known ahead (each of [`ahead`]'s made).
#[cfg(test)]
pub fn ahead_count() -> usize {
    ahead().len()
}

impl<I> Dialect for MessagesReader<I> {
    type Doc<'f> = Event<'f>;

    const NAME: &'static str = "an Anthropic Messages";
    const MARKER: &'static str = "message_stop";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Messages;

    fn belongs(doc: &Event<'_>, event: &[u8]) -> Belongs {
        doc.belongs(event)
    }

    fn is_output(doc: &Event<'_>, event: &[u8]) -> bool {
        doc.kind_of(event) == "content_block_delta"
    }

    fn decode(doc: &str) -> Result<Event<'_>, serde_json::Error> {
        messages::decode(doc)
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

    fn result_in<B: crate::json::build::Build>(&mut self, b: &mut B) -> Result<B::Value, B::Error> {
        self.fold.result_in(b)
    }

    fn result_usage(&mut self) -> Option<crate::fold::Out> {
        Some(self.fold.result_usage()).filter(|u| !u.is_null())
    }
}

impl<S: MessagesItems> Reader<S> for MessagesReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Event<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let frame: &Frame<'_> = v.frame;
        let whole_frame = v.whole_frame();
        let ev: Event<'f> = v.value;
        let kind_text = ev.kind_of(frame.event_type());
        let view = match ev.read(&kind_text, v.doc) {
            Read::Skip => return Ok(()),
            Read::Error(info) => return state.report_in(sink, &info, frame),
            Read::Fold(view) => view,
        };
        let kind = kind_text.as_bytes();
        if kind == b"message_stop" {
            state.done = true;
        }
        self.fold.add(&view);
        state.tap(Upstream::Messages(&view));
        let item = if sink.items() {
            Some(sink.event(&ev, kind, view.raw)?)
        } else {
            None
        };
        if !whole_frame {
            return Ok(());
        }
        // Vendor strings and numbers are raw holes (their values may change frame to frame).
        let raws = RawHole::all_of([&ev.extra, &ev.delta.extra]);
        let raw_strings: Vec<&str> = raws.iter().map(RawHole::text).collect();
        let hole = hole(&ev, v.doc, &raw_strings);
        if let (Some((hole, text)), Some(delta_type)) = (hole, ev.delta.type_.as_ref()) {
            let keeps_raw = view.raw.is_some();
            let template = Template::new(frame, text, &[], &raws, hole as u8, item);
            // The block index a number hole when it can be placed: the text of the next
            // block (after a citation or a tool call) fits the same template.
            let template = match ev.index {
                Some(index) => template.map(|t| t.or_number("index", index)),
                None => template,
            };
            let new = template.map(|template| MessagesTemplate {
                template,
                index: ev.index,
                delta_type: delta_type.as_str().into(),
                keeps_raw,
            });
            if new.is_some() {
                self.template = new;
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
        let index = hit.number.or(t.index);
        if sink.items() && index != t.index {
            // The template's item holds its own index: another block's frame is decoded.
            return Ok(None);
        }
        let hole = Hole::of(t.template.hole);
        if let Some(item) = t.template.item.as_ref().filter(|_| sink.items()) {
            sink.refill(item, hole, &hit.text, raw)?;
        }
        let view = delta_view(index, &t.delta_type, hole, &hit.text, raw);
        self.fold.add(&view);
        state.tap(Upstream::Messages(&view));
        Ok(Some(hit.len))
    }
}

impl<I> MessagesReader<I> {
    /// The fast path of the shapes known ahead ([`ahead`]), when the caller wants no items
    /// (there is no item to copy): the frame is folded as the event it decodes to.
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
            let Some(hit) = fit(&known.shape, subject, &mut [""; MAX_RAW], &mut self.buf) else {
                continue;
            };
            if known.text.is_some_and(|text| hit.text != text) {
                continue;
            }
            state.saw(Belongs::Own, "");
            let view = match known.known {
                Known::Delta(delta_type, hole) => {
                    let view = delta_view(hit.number, delta_type, hole, &hit.text, None);
                    // The shape is the stream's template from now on: the next frames of this
                    // kind fit at the first try.
                    self.template = Some(MessagesTemplate {
                        template: Template {
                            shape: std::borrow::Cow::Borrowed(&known.shape),
                            hole: hole as u8,
                            item: None,
                        },
                        index: view.index,
                        delta_type: delta_type.into(),
                        keeps_raw: false,
                    });
                    Some(view)
                }
                Known::Signature => Some(EventView {
                    kind: "content_block_delta",
                    index: hit.number,
                    delta_type: Some("signature_delta"),
                    signature: Some(&hit.text),
                    ..EventView::default()
                }),
                Known::Start(block) => Some(EventView {
                    kind: "content_block_start",
                    index: hit.number,
                    content_block: Some(block),
                    ..EventView::default()
                }),
                Known::StartCall => match hit.span {
                    Some(block) => Some(EventView {
                        kind: "content_block_start",
                        index: hit.number,
                        content_block: Some(block),
                        ..EventView::default()
                    }),
                    None => return Ok(None),
                },
                Known::StartAny | Known::Citation | Known::MessageStart => {
                    let Some(value) = hit.span else {
                        return Ok(None);
                    };
                    // A `null` value is no value, as the decoder reads it.
                    let value = Some(value).filter(|v| *v != "null");
                    Some(match known.known {
                        Known::StartAny => EventView {
                            kind: "content_block_start",
                            index: hit.number,
                            content_block: value,
                            ..EventView::default()
                        },
                        Known::Citation => EventView {
                            kind: "content_block_delta",
                            index: hit.number,
                            delta_type: Some("citations_delta"),
                            citation: value,
                            ..EventView::default()
                        },
                        _ => EventView {
                            kind: "message_start",
                            message: value,
                            ..EventView::default()
                        },
                    })
                }
                Known::MessageDelta => match hit.span {
                    Some(usage) => Some(EventView {
                        kind: "message_delta",
                        stop_reason: Some(&hit.text),
                        usage: Some(usage),
                        ..EventView::default()
                    }),
                    None => return Ok(None),
                },
                Known::Stop => Some(EventView {
                    kind: "content_block_stop",
                    index: hit.number,
                    ..EventView::default()
                }),
                Known::MessageStop => {
                    state.done = true;
                    Some(EventView {
                        kind: "message_stop",
                        ..EventView::default()
                    })
                }
                // Pings carry nothing (the decoder skips them too).
                Known::Ping => None,
            };
            if !matches!(
                known.known,
                Known::Delta(..) | Known::Signature | Known::Citation
            ) {
                state.quiet_hit = true;
            }
            if let Some(view) = view {
                self.fold.add(&view);
                state.tap(Upstream::Messages(&view));
            }
            return Ok(Some(hit.len));
        }
        Ok(None)
    }
}

impl MessagesItems for super::Quiet {
    fn event(&mut self, _: &Event<'_>, _: &[u8], _: Option<&str>) -> Result<(), Self::Error> {
        Ok(())
    }
    fn refill(&mut self, _: &(), _: Hole, _: &str, _: Option<&str>) -> Result<(), Self::Error> {
        Ok(())
    }
}
