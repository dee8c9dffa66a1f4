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
use crate::dialect::chat::{self, Choice, Chunk, Content, VendorRecipes};
use crate::dialect::json::Str;
use crate::dialect::template::{RawHole, MAX_RAW};
use crate::dialect::{Belongs, ErrorInfo};
use crate::fold::chat::{ChatFold, ChunkOwned, ChunkView, Hole};

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
    pub fold: ChatFold,
    /// How many templates with vendor recipes were made (each one's number, for the fold).
    recipes: u64,
    /// Where a template fit's text with escapes is decoded (its room kept).
    buf: Vec<u8>,
    template: Option<ChatTemplate<I>>,
    /// A second template, tried when the first does not fit (a fit makes it the first): the
    /// chunk foreseen after the first one's ([`foreseen`]).
    spare: Option<ChatTemplate<I>>,
}

impl<I> Default for ChatReader<I> {
    fn default() -> Self {
        ChatReader {
            fold: ChatFold::default(),
            recipes: 0,
            buf: Vec::new(),
            template: None,
            spare: None,
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
/// chunk the fold reads loses what they lose. A stream that repeats them after all (xAI
/// names the role in every chunk) fits `t` itself, kept as the spare.
fn foreseen<I>(t: &ChatTemplate<I>) -> Option<ChatTemplate<I>> {
    // Items are copied from a template's own item: a foreseen one has none. A chunk with
    // vendor keys foresees nothing: the providers that add them to a first chunk do not
    // repeat them (Groq's `x_groq`, Azure's filter results), so the chunk after it would not
    // fit.
    if t.template.item.is_some() || t.vendor.is_some() || t.snapshot.has_vendor_keys() {
        return None;
    }
    let (template, snapshot) = match t.hole {
        Hole::Content if t.snapshot.role() == Some("assistant") => {
            let next: [&[u8]; 2] = [br#""delta":{"content":""#, br#""}"#];
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
        Hole::Arguments => {
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
            let next: [&[u8]; 3] = [open, index, br#","function":{"arguments":""#];
            let close: [&[u8]; 1] = [br#""}}]"#];
            let template = t.template.respelled((&first, &next), (&close, &close))?;
            (template, t.snapshot.without_call_names())
        }
        _ => return None,
    };
    Some(ChatTemplate {
        template,
        snapshot,
        hole: t.hole,
        vendor: None,
    })
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
    let texts = [
        match &d.content {
            Some(Content::Text(t)) => Some(t.as_str()),
            Some(Content::Parts(_)) => Some("[]"),
            None => None,
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
        let said = |s: &Option<Str<'_>>| s.as_ref().is_some_and(|s| !s.as_str().is_empty());
        doc.choices.iter().any(|c| {
            let d = &c.delta;
            matches!(&d.content, Some(Content::Text(t)) if !t.as_str().is_empty())
                || matches!(&d.content, Some(Content::Parts(_)))
                || said(&d.reasoning)
                || said(&d.reasoning_content)
                || said(&d.refusal)
                || !d.tool_calls.is_empty()
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

    fn arguments(&self, choice: i64, index: i64) -> Option<&crate::partial::PartialJson> {
        self.fold.arguments(choice, index)
    }

    fn warnings(&mut self) -> Vec<String> {
        self.fold.warnings()
    }

    fn result(&mut self) -> crate::fold::Out {
        self.fold.result()
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
            self.spare = foreseen(&new);
            self.template = Some(new);
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
        if let Some(t) = &self.template {
            if let Some(hit) = t.template.fit(subject, items, &mut raws, &mut self.buf) {
                took(t, &hit.text, &raws, &mut self.fold, state, sink)?;
                return Ok(Some(hit.len));
            }
        }
        self.spare_fit(state, subject, sink)
    }
}

impl<I> ChatReader<I> {
    /// [`Reader::shortcut`] with the spare template, when the first did not fit: a fit makes
    /// it the first. Apart, so the first template's fit stays as short as it was alone.
    #[inline(never)]
    fn spare_fit<S: ChatItems<Item = I>>(
        &mut self,
        state: &mut State,
        subject: Subject<'_>,
        sink: &mut S,
    ) -> Result<Option<usize>, S::Error> {
        let Some(t) = &self.spare else {
            return Ok(None);
        };
        let mut raws = [""; MAX_RAW];
        let Some(hit) = t
            .template
            .fit(subject, sink.items(), &mut raws, &mut self.buf)
        else {
            return Ok(None);
        };
        took(t, &hit.text, &raws, &mut self.fold, state, sink)?;
        let len = hit.len;
        std::mem::swap(&mut self.template, &mut self.spare);
        Ok(Some(len))
    }
}

/// Folds (and hands the sink, when it wants items) a frame that fits template `t`.
#[inline(always)]
fn took<S: ChatItems>(
    t: &ChatTemplate<S::Item>,
    text: &str,
    raws: &[&str; MAX_RAW],
    fold: &mut ChatFold,
    state: &mut State,
    sink: &mut S,
) -> Result<(), S::Error> {
    // Vendor values in holes: their objects are written anew (or reused when unchanged).
    let extras = t.vendor.as_ref().map(|vendor| vendor.write(raws));
    if let Some(item) = t.template.item.as_ref().filter(|_| sink.items()) {
        sink.refill(item, t.hole, text, extras.as_ref())?;
    }
    t.snapshot.view_with(t.hole, text, extras.as_ref(), |view| {
        fold.add(view);
        state.tap(Upstream::Chat(view));
    });
    Ok(())
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
