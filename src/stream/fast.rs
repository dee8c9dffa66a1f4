//! The fast path's learnt template: the last frame of a common shape (`Template`), with its
//! hole's value read straight from the bytes of the next (`Hit`, `Subject`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// What a template is tried on: a framed frame, or the wire's bytes where a frame starts
/// (the framer between events).
#[derive(Clone, Copy)]
pub enum Subject<'d> {
    /// A frame the framer made.
    Frame(&'d Frame<'d>),
    /// The wire's bytes from a frame's start on (to the end of the read).
    Raw(&'d [u8]),
}

impl<'d> Subject<'d> {
    /// The frame's event type, as far as a shape's head can tell it: the framed frame's, or
    /// the `event: ` line the wire's bytes start with (empty when they start otherwise).
    pub fn event(&self) -> &'d [u8] {
        match *self {
            Subject::Frame(frame) => frame.event.as_deref().unwrap_or_default(),
            Subject::Raw(bytes) => bytes
                .strip_prefix(b"event: ")
                .and_then(|rest| rest.split(|&b| b == b'\n').next())
                .unwrap_or_default(),
        }
    }

    /// The frame's data as far as a quick look can tell it (to decide whether a template is
    /// worth making for it): a framed frame's data, or the wire's bytes to the end of the
    /// first line after an `event: ` line (never past a frame's first data line, so a look
    /// costs at most the frame's length).
    pub fn data_line(&self) -> &'d [u8] {
        match *self {
            Subject::Frame(frame) => frame.data.as_bytes(),
            Subject::Raw(bytes) => {
                let line = |b: &'d [u8]| b.get(..memchr::memchr(b'\n', b).unwrap_or(b.len()));
                let first = line(bytes).unwrap_or_default();
                match first.starts_with(b"event:") {
                    true => bytes
                        .get(first.len() + 1..)
                        .and_then(line)
                        .unwrap_or_default(),
                    false => first,
                }
            }
        }
    }
}

/// A frame that fits a template: the values of its holes, and its length in the wire's bytes
/// (0 for a framed frame).
pub struct Hit<'d> {
    /// The text hole's value (escapes decoded).
    pub text: Cow<'d, str>,
    /// The integer hole's value, when the template has one.
    pub number: Option<i64>,
    /// The frame's length in the wire's bytes (0 for a framed frame).
    pub len: usize,
    /// The frame's data.
    pub data: &'d [u8],
    /// The shape's span (see `Shape::with_span`).
    pub span: Option<&'d str>,
}

impl<'d> Hit<'d> {
    /// The frame's data as text, for a template whose events keep their raw JSON (`keep`):
    /// `Some(None)` when they do not, `None` when the data is not UTF-8 (a padding's bytes are
    /// not checked by the fit; the frame is then decoded in full).
    pub fn raw(&self, keep: bool) -> Option<Option<&'d str>> {
        match keep {
            true => crate::text::utf8(self.data).map(Some),
            false => Some(None),
        }
    }
}

/// The frame-template fast path (see `crate::dialect::template`): the shape of the last text
/// frame, and the item it became (the sink's), to be copied with the new string on a hit.
pub struct Template<I> {
    /// Its own (learnt from a frame), or a shape known ahead (shared, never copied).
    pub(super) shape: std::borrow::Cow<'static, Shape>,
    /// Which string of the item the hole is (the dialect's own numbering).
    pub hole: u8,
    /// The item the template frame became (`None` when it was read without items).
    pub item: Option<I>,
}

impl<I> Template<I> {
    /// A template for `frame`, whose item holds `text` borrowed from the frame's data;
    /// `padding` are other strings of the frame (borrowed too) that no item holds; `raws` are
    /// raw holes (vendor values; see `Shape::with_raws`).
    pub fn new(
        frame: &Frame<'_>,
        text: &str,
        padding: &[&str],
        raws: &[RawHole<'_>],
        hole: u8,
        item: Option<I>,
    ) -> Option<Self> {
        let shape = Shape::with_raws(frame.event.as_deref(), &frame.data, text, padding, raws)?;
        Some(Template {
            shape: std::borrow::Cow::Owned(shape),
            hole,
            item,
        })
    }

    /// Adds an integer hole (see `Shape::with_number`); `None` if it cannot be placed.
    pub fn with_number(self, key: &str, value: i64) -> Option<Self> {
        let shape = self.shape.into_owned().with_number(key, value)?;
        Some(Template {
            shape: std::borrow::Cow::Owned(shape),
            ..self
        })
    }

    /// A template without an item for the frames spelled as `shape`'s around the text hole
    /// (see `Shape::respelled`): under `consume()` only, as a shape known ahead is.
    pub fn respelled(&self, before: Pieces<'_>, after: Pieces<'_>) -> Option<Self> {
        Some(Template {
            shape: std::borrow::Cow::Owned(self.shape.respelled(before, after)?),
            hole: self.hole,
            item: None,
        })
    }

    /// Adds an integer hole when it can be placed; else the template as it was.
    pub fn or_number(self, key: &str, value: i64) -> Self {
        Template {
            shape: std::borrow::Cow::Owned(self.shape.into_owned().or_number(key, value)),
            ..self
        }
    }

    /// The values of `subject`'s holes when it fits this template. `None` when it does not
    /// fit, or when items are wanted but the template was made without one (no item to copy):
    /// the frame is then framed and decoded in full.
    /// The raw holes' values go to `raws`, by slot; a text with escapes is decoded into `buf`
    /// (the reader's, its room kept from frame to frame).
    #[inline(always)]
    pub fn fit<'d>(
        &self,
        subject: Subject<'d>,
        items: bool,
        raws: &mut [&'d str; MAX_RAW],
        buf: &'d mut Vec<u8>,
    ) -> Option<Hit<'d>> {
        if items && self.item.is_none() {
            return None;
        }
        fit(&self.shape, subject, raws, buf)
    }
}

/// The values of `subject`'s holes when it has `shape` (see [`Template::fit`]).
#[inline(always)]
pub fn fit<'d>(
    shape: &Shape,
    subject: Subject<'d>,
    raws: &mut [&'d str; MAX_RAW],
    buf: &'d mut Vec<u8>,
) -> Option<Hit<'d>> {
    let (len, f) = match subject {
        Subject::Frame(frame) => (
            0,
            shape.fill_all(frame.event.as_deref(), &frame.data, raws, Some(buf))?,
        ),
        Subject::Raw(bytes) => shape.fill_raw_all(bytes, raws, Some(buf))?,
    };
    Some(Hit {
        text: f.text,
        number: f.number,
        len,
        data: f.data,
        span: f.span,
    })
}

/// Shapes known ahead, grouped by the event type of their frames: a frame is matched with
/// the shapes of its own type, found by comparing its type with each type once (not with
/// every shape's: 30 compares a frame, 15% of a short Messages stream). Built once, read by
/// every stream.
pub struct ByEvent<T> {
    items: Vec<T>,
    /// Each event type, in the order the types first came, and where its items are.
    events: Vec<(&'static str, std::ops::Range<usize>)>,
}

impl<T> ByEvent<T> {
    /// `items` grouped by `event_of`, each type's items in their given order (the order they
    /// are tried in).
    pub fn new(mut items: Vec<T>, event_of: impl Fn(&T) -> &'static str) -> Self {
        let mut types: Vec<&'static str> = Vec::new();
        for item in &items {
            if !types.contains(&event_of(item)) {
                types.push(event_of(item));
            }
        }
        let rank = |item: &T| types.iter().position(|t| *t == event_of(item));
        // Stable: a type's items keep their order.
        items.sort_by_key(rank);
        let mut events = Vec::with_capacity(types.len());
        let mut start = 0;
        for t in &types {
            let len = items.get(start..).unwrap_or_default().iter();
            let end = start + len.take_while(|item| event_of(item) == *t).count();
            events.push((*t, start..end));
            start = end;
        }
        ByEvent { items, events }
    }

    /// The items of frames of type `event`, in order (none for a type no shape has).
    pub fn of(&self, event: &[u8]) -> &[T] {
        self.events
            .iter()
            .find(|(t, _)| t.as_bytes() == event)
            .and_then(|(_, at)| self.items.get(at.clone()))
            .unwrap_or_default()
    }

    /// How many items there are.
    #[cfg(test)]
    #[allow(clippy::len_without_is_empty)] // a count for tests, of a table never empty
    pub fn len(&self) -> usize {
        self.items.len()
    }
}
