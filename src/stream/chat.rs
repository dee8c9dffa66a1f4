//! The chat completions reader: each chunk read (`crate::dialect::chat`), folded choice by
//! choice (`crate::fold::chat`), tapped, and handed to the sink as one item per choice (one
//! for a chunk without choices); an error envelope is reported. A one-choice chunk with one
//! text makes the frame template: the text is its hole, OpenAI's `obfuscation` padding, and
//! every vendor string and integer (`VendorRecipes`) a raw hole. Beside it the reader keeps a
//! second, tried when the first does not fit: the template of the chunk a stream's first one
//! or a call's first fragment foretells (`foreseen`: under `consume()`, the chunk after it is
//! read without a decode). Carried across frames: the fold and the two templates.

use super::Upstream;
use super::{Dialect, Reader, Route, Sink, State, Subject, Template, Value};
use crate::dialect::chat::carries_output;
use crate::dialect::chat::{self, Choice, Chunk, Content, VendorRecipes};
use crate::dialect::template::{RawHole, MAX_RAW};
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::chat::{ChatFold, ChunkOwned, ChunkView, Hole};
use crate::json::read::Str;

/// What a chat stream taps: one choice of a chunk.
pub type View<'a> = crate::fold::chat::ChunkView<'a>;

/// The values of a chunk a template wrote anew: the chunk's, the choice's and the delta's
/// vendor objects (`extra`, `choice_extra`, `delta_extra`) and `reasoning_details`.
pub type Extras<'a> = crate::dialect::chat::Written<'a>;

/// What a sink makes of a chat stream's chunks.
pub trait ChatItems: Sink {
    /// The item of one choice of `chunk` (`choice == None`: the one item of a chunk without
    /// choices), whose fold view is `view`; `first` for the first item of the chunk.
    fn choice(
        &mut self,
        chunk: &Chunk<'_>,
        view: &ChunkView<'_>,
        choice: Option<&Choice<'_>>,
        first: bool,
    ) -> Result<Self::Item, Self::Error>;
    /// A copy of `item` with `text` in its string `hole` and, when given, the vendor objects
    /// written anew.
    fn refill(
        &mut self,
        item: &Self::Item,
        hole: Hole,
        text: &str,
        extras: Option<&Extras<'_>>,
    ) -> Result<(), Self::Error>;
}

/// The per-stream state of the chat reader.
pub struct ChatReader<I> {
    /// The fold of the stream's chunks so far.
    pub fold: ChatFold,
    /// How many templates with vendor recipes were made (each one's number, for the fold).
    recipes: u64,
    /// Where a template fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    /// Boxed, as the spare: the stream object (zeroed when Python makes it) stays small.
    template: Option<Box<ChatTemplate<I>>>,
    /// A second template, tried when the first does not fit (a fit makes it the first): the
    /// chunk foreseen after the first one's ([`foreseen`]), made at the first frame the first
    /// template does not fit (a stream whose chunks all fit the first never makes it).
    spare: Option<Box<ChatTemplate<I>>>,
    /// What `spare` is still to be foreseen as from `template`.
    foresee: Foresee,
}

impl<I> Default for ChatReader<I> {
    fn default() -> Self {
        ChatReader {
            fold: ChatFold::default(),
            recipes: 0,
            buf: Vec::new(),
            template: None,
            spare: None,
            foresee: Foresee::Nothing,
        }
    }
}

/// The template of the last text chunk: its shape and item, and the chunk's data for the fold
/// (a frame that fits folds as this chunk with new text in the hole).
struct ChatTemplate<I> {
    template: Template<I>,
    snapshot: ChunkOwned,
    hole: Hole,
    /// How the vendor objects are written from a fit's raw holes (when it has any).
    vendor: Option<VendorRecipes>,
}

const HOLES: [Hole; 5] = [
    Hole::Content,
    Hole::Reasoning,
    Hole::ReasoningContent,
    Hole::Refusal,
    Hole::Arguments,
];

/// The template of the chunk that follows `t`'s in OpenAI's spelling, when `t`'s chunk opens
/// what the chunks after it do not repeat; only without items (as a shape known ahead):
/// - a stream's first text chunk, whose delta is exactly its role (`"assistant"`), its
///   content and perhaps `"refusal": null`, in OpenAI's or Azure's order: the chunks after
///   it hold only `{"content": ...}`;
/// - a tool call's first fragment, exactly `{"index", "id", "type", "function": {"name",
///   "arguments"}}` (the one fragment of its chunk): the fragments after it hold only
///   `{"index", "function": {"arguments"}}`.
///
/// The bytes around the text are checked whole (every key of the delta or of the call is
/// in them, so no other key and no second copy of one is elsewhere), and the copy of the
/// chunk the fold reads loses what they lose. It is made at the first frame that does not
/// fit `t` and holds the foreseen bytes ([`Foresee::needle`]): a stream that repeats the
/// role after all (xAI names it in every chunk) fits `t` itself and never makes it.
fn foreseen<I>(t: &ChatTemplate<I>, kind: Foresee) -> Option<ChatTemplate<I>> {
    let (template, snapshot) = match kind {
        Foresee::Text => {
            let next: [&[u8]; 2] = [kind.needle(), br#""}"#];
            let role_first: &[u8] = br#""delta":{"role":"assistant","content":""#;
            let template = [
                (role_first, &br#""}"#[..]),
                (role_first, br#"","refusal":null}"#),
                (next[0], br#"","refusal":null,"role":"assistant"}"#),
                (next[0], br#"","role":"assistant"}"#),
            ]
            .into_iter()
            .find_map(|(b, a)| t.template.respelled((&[b], &next[..1]), (&[a], &next[1..])))?;
            (template, t.snapshot.without_role())
        }
        Foresee::Call => {
            let (index, id, type_, name) = t.snapshot.named_call()?;
            let index = index.to_string();
            let (open, index) = (br#""tool_calls":[{"index":"#, index.as_bytes());
            let first: [&[u8]; 9] = [
                open,
                index,
                br#","id":""#,
                id.as_bytes(),
                br#"","type":""#,
                type_.as_bytes(),
                br#"","function":{"name":""#,
                name.as_bytes(),
                br#"","arguments":""#,
            ];
            let next: [&[u8]; 3] = [open, index, kind.needle()];
            let close: [&[u8]; 1] = [br#""}}]"#];
            let template = t.template.respelled((&first, &next), (&close, &close))?;
            (template, t.snapshot.without_call_names())
        }
        Foresee::Nothing => return None,
    };
    Some(ChatTemplate {
        template,
        snapshot,
        hole: t.hole,
        vendor: None,
    })
}

/// What a template's chunk foretells (see [`foreseen`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Foresee {
    Nothing,
    /// Text chunks without the role.
    Text,
    /// A call's fragments without its id, type and name.
    Call,
}

impl Foresee {
    /// What `t`'s chunk foretells. Items are copied from a template's own item: a foreseen
    /// one has none. A chunk with vendor keys foretells nothing: the providers that add them
    /// to a first chunk do not repeat them (Groq's `x_groq`, Azure's filter results), so the
    /// chunk after it would not fit.
    fn of<I>(t: &ChatTemplate<I>) -> Foresee {
        if t.template.item.is_some() || t.vendor.is_some() || t.snapshot.has_vendor_keys() {
            return Foresee::Nothing;
        }
        match t.hole {
            Hole::Content if t.snapshot.role() == Some("assistant") => Foresee::Text,
            Hole::Arguments if t.snapshot.named_call().is_some() => Foresee::Call,
            _ => Foresee::Nothing,
        }
    }

    /// Bytes a frame of the foreseen template holds: the template is made for the first
    /// frame that holds them and does not fit the first (not for the finish chunk of a
    /// stream that repeats the role, as xAI's does: its chunks all fit the first).
    fn needle(self) -> &'static [u8] {
        match self {
            Foresee::Text => br#""delta":{"content":""#,
            Foresee::Call => br#","function":{"arguments":""#,
            Foresee::Nothing => b"",
        }
    }

    /// Whether `data` holds the [`needle`](Self::needle) (each searcher made once: making
    /// one cost more than the search).
    fn may_fit(self, data: &[u8]) -> bool {
        use memchr::memmem::Finder;
        static FINDERS: std::sync::OnceLock<[Finder<'static>; 2]> = std::sync::OnceLock::new();
        let [text, call] = FINDERS
            .get_or_init(|| [Foresee::Text, Foresee::Call].map(|kind| Finder::new(kind.needle())));
        match self {
            Foresee::Text => text.find(data).is_some(),
            Foresee::Call => call.find(data).is_some(),
            Foresee::Nothing => false,
        }
    }
}

/// The one text of a one-choice chunk that a template can leave open, as its place in `data`,
/// the frame's JSON (escaped or not), not one of the strings `except` (the raw holes).
fn hole<'f>(chunk: &Chunk<'f>, data: &'f str, except: &[&str]) -> Option<(Hole, &'f str)> {
    let [choice] = chunk.choices.as_slice() else {
        return None;
    };
    let d = &choice.delta;
    let at = |text: &Option<Str<'f>>| Str::in_frame_except(text, data, except);
    // The first text present and not empty is the hole, else the first present, in HOLES's
    // order (OpenRouter's reasoning chunks carry `"content": ""` beside the reasoning text).
    let args = match d.tool_calls.as_slice() {
        [call] => call.arguments.as_ref(),
        _ => None,
    };
    // Content parts: only Mistral's thinking delta has a hole, its one text (a literal of the
    // frame, as the parts are); the other fields are then fixed.
    if let Some(Content::Parts(parts)) = &d.content {
        return Some((Hole::Thinking, chat::thinking_literal(parts)?));
    }
    let texts = [
        match &d.content {
            Some(Content::Text(t)) => Some(t.as_str()),
            _ => None,
        },
        d.reasoning.as_ref().map(Str::as_str),
        d.reasoning_content.as_ref().map(Str::as_str),
        d.refusal.as_ref().map(Str::as_str),
        args.map(Str::as_str),
    ];
    let i = texts
        .iter()
        .position(|t| t.is_some_and(|t| !t.is_empty()))
        .or_else(|| texts.iter().position(Option::is_some))?;
    let text = match i {
        0 => Content::in_frame(&d.content, data, except),
        1 => at(&d.reasoning),
        2 => at(&d.reasoning_content),
        3 => at(&d.refusal),
        _ => match d.tool_calls.as_slice() {
            [call] => at(&call.arguments),
            _ => None,
        },
    }?;
    Some((*HOLES.get(i)?, text))
}

impl<I> Dialect for ChatReader<I> {
    type Doc<'f> = Chunk<'f>;

    const NAME: &'static str = "a chat completions";
    const MARKER: &'static str = "[DONE]";
    const REGISTRY: crate::dialect::Dialect = crate::dialect::Dialect::Chat;

    fn belongs(doc: &Chunk<'_>, _: &[u8]) -> Belongs {
        doc.belongs()
    }

    fn is_output(doc: &Chunk<'_>, _: &[u8]) -> bool {
        doc.choices.iter().any(|c| {
            let d = &c.delta;
            let texts = [&d.reasoning, &d.reasoning_content, &d.refusal];
            carries_output(
                d.content.as_ref().map(Content::view),
                texts.map(|s| s.as_ref().map(Str::as_str)),
                !d.tool_calls.is_empty(),
            )
        })
    }

    fn route(event: &[u8]) -> Route {
        match event {
            b"message" => Route::Decode,
            b"error" => Route::Error,
            _ => Route::Pass,
        }
    }

    fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
        chat::decode(doc)
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
        self.fold.warnings()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
    }

    fn result_in<B: crate::json::build::Build>(&mut self, b: &mut B) -> Result<B::Value, B::Error> {
        self.fold.result_in(b)
    }
}

impl<I> ChatReader<I> {
    /// Folds one chunk (one view per choice) and, when the sink wants items, hands it one per
    /// choice. Returns the last item, and with `snapshot` the last choice's data for a frame
    /// template.
    fn chunk<S: ChatItems<Item = I>>(
        &mut self,
        state: &mut State,
        chunk: &Chunk<'_>,
        sink: &mut S,
        snapshot: bool,
    ) -> Result<(Option<I>, Option<ChunkOwned>), S::Error> {
        let mut last = None;
        let mut snap = None;
        let mut first = true;
        let mut result = Ok(());
        let items = sink.items();
        let fold = &mut self.fold;
        chat::views(chunk, |view, choice| {
            if result.is_err() {
                return;
            }
            fold.add(view);
            state.tap(Upstream::Chat(view));
            if snapshot {
                snap = ChunkOwned::new(view);
            }
            if items {
                match sink.choice(chunk, view, choice, first) {
                    Ok(item) => last = Some(item),
                    Err(e) => result = Err(e),
                }
                first = false;
            }
        });
        result?;
        Ok((last, snap))
    }
}

impl<S: ChatItems> Reader<S> for ChatReader<S::Item> {
    fn value<'f>(
        &mut self,
        state: &mut State,
        v: Value<'f, '_, Chunk<'f>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        if let Some(error) = v.value.error {
            let info = ErrorInfo::from_error_value(Some(v.doc), error);
            state.report_in(sink, &info, v.frame)?;
            if v.value.choices.is_empty() {
                return Ok(()); // an error envelope, not a chunk
            }
            return self.chunk(state, &v.value, sink, false).map(|_| ());
        }
        let whole_frame = v.whole_frame();
        let (raws, vendor) = if whole_frame {
            VendorRecipes::of(&v.value)
        } else {
            Default::default()
        };
        // The text hole is never one of the vendor strings (a vendor `text` that repeats the
        // content, as Together sends it).
        let raw_strings: Vec<&str> = raws
            .iter()
            .filter_map(|r| match r {
                RawHole::Str(s) => Some(*s),
                RawHole::Num(_) => None,
            })
            .collect();
        let hole = if whole_frame {
            hole(&v.value, v.doc, &raw_strings)
        } else {
            None
        };
        let (item, snapshot) = self.chunk(state, &v.value, sink, hole.is_some())?;
        let (Some((kind, text)), Some(snapshot)) = (hole, snapshot) else {
            return Ok(());
        };
        let padding: Vec<&str> = Str::in_frame(&v.value.obfuscation, v.doc)
            .into_iter()
            .collect();
        let vendor = vendor.has_holes().then_some(vendor);
        let raws = if vendor.is_some() { &raws[..] } else { &[] };
        let snapshot = match vendor {
            Some(_) => {
                self.recipes += 1;
                snapshot.with_skeleton(self.recipes)
            }
            None => snapshot,
        };
        let new = Template::new(v.frame, text, &padding, raws, kind as u8, item).map(|template| {
            ChatTemplate {
                template,
                snapshot,
                hole: kind,
                vendor,
            }
        });
        if let Some(new) = new {
            (self.spare, self.foresee) = (None, Foresee::of(&new));
            self.template = Some(Box::new(new));
        }
        Ok(())
    }

    fn shortcut(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let items = sink.items();
        let mut raws = [""; MAX_RAW];
        let hit = match &self.template {
            Some(t) => t.template.fit(subject, items, &mut raws, &mut self.buf),
            None => None,
        };
        let (Some(t), Some(hit)) = (&self.template, hit) else {
            if self.spare_fits(subject, items) {
                // The spare is the first now, and the frame fits it: taken here, so that one
                // place folds a fit (that code runs for every frame, kept short).
                return self.shortcut(state, subject, sink);
            }
            return Ok(None);
        };
        // Vendor values in holes: their objects are written anew (or reused when unchanged).
        let extras = t.vendor.as_ref().map(|vendor| vendor.write(&raws));
        if let Some(item) = t.template.item.as_ref().filter(|_| items) {
            sink.refill(item, t.hole, &hit.text, extras.as_ref())?;
        }
        let fold = &mut self.fold;
        t.snapshot
            .view_with(t.hole, &hit.text, extras.as_ref(), |view| {
                fold.add(view);
                state.tap(Upstream::Chat(view));
                // Counted as output as its decode would be (not an empty text's).
                state.quiet_hit = !view.is_output();
            });
        Ok(Some(hit.len))
    }
}

impl<I> ChatReader<I> {
    /// Whether the frame fits the spare template (foreseen now if it is still to be, see
    /// [`Foresee::needle`]); if it does, the spare is made the first.
    #[inline(never)]
    fn spare_fits(&mut self, subject: Subject<'_>, items: bool) -> bool {
        let kind = self.foresee;
        if kind != Foresee::Nothing && kind.may_fit(subject.data_line()) {
            self.spare = self
                .template
                .as_deref()
                .and_then(|t| foreseen(t, kind))
                .map(Box::new);
            self.foresee = Foresee::Nothing;
        }
        let fits = self.spare.as_ref().is_some_and(|t| {
            t.template
                .fit(subject, items, &mut [""; MAX_RAW], &mut self.buf)
                .is_some()
        });
        if fits {
            std::mem::swap(&mut self.template, &mut self.spare);
        }
        fits
    }
}

impl ChatItems for super::Quiet {
    fn choice(
        &mut self,
        _: &Chunk<'_>,
        _: &ChunkView<'_>,
        _: Option<&Choice<'_>>,
        _: bool,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    fn refill(
        &mut self,
        _: &(),
        _: Hole,
        _: &str,
        _: Option<&Extras<'_>>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}
