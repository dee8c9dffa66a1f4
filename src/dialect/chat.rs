//! OpenAI-compatible `chat.completion.chunk` frames, decoded straight into borrowed structs.
//!
//! The decoder follows what OpenAI-compatible gateways send, not only OpenAI: every optional
//! field may be `null` or missing, `reasoning` and `reasoning_content` are kept apart (as they
//! arrived), tool-call `arguments` may be a JSON object instead of a string, and keys this
//! decoder does not know (vendor extras such as a routing-metadata object) are kept as raw JSON
//! at each level (chunk, choice, delta) so nothing is lost. Nothing is carried across frames.
//! Cost: one pass over each frame's JSON; strings without escapes are borrowed, not copied.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::template::{self, RawHole, MAX_RAW};

use crate::json::read::{map_struct, raw_opt, str_or_raw, str_or_skip, Extra, Int, Str};

mod view;
pub use view::*;

/// One `chat.completion.chunk` (or an error document in its place).
#[derive(Debug, Default)]
pub struct Chunk<'a> {
    /// The chunk's `id` (the completion's, the same in every chunk).
    pub id: Option<Str<'a>>,
    /// The chunk's `object` (`chat.completion.chunk`).
    pub object: Option<Str<'a>>,
    /// The chunk's `created` time, in Unix seconds.
    pub created: Option<i64>,
    /// The `model` that wrote the chunk.
    pub model: Option<Str<'a>>,
    /// The chunk's `system_fingerprint`.
    pub system_fingerprint: Option<Str<'a>>,
    /// The `service_tier` the request ran in.
    pub service_tier: Option<Str<'a>>,
    /// The chunk's `choices` (empty for a usage-only chunk).
    pub choices: Vec<Choice<'a>>,
    /// The chunk's `usage`, as raw JSON.
    pub usage: Option<&'a RawValue>,
    /// The `error` value when the document reports a mid-stream error.
    pub error: Option<&'a RawValue>,
    /// Unknown top-level keys (vendor extras).
    pub extra: Extra<'a>,
    /// The value of OpenAI's `obfuscation` padding key, if sent (not part of any item).
    pub obfuscation: Option<Str<'a>>,
}

impl Chunk<'_> {
    /// Whether this is the chunk of usage alone that ends a stream whose request asked for
    /// usage (`stream_options.include_usage`): no choices, a usage, no error.
    pub fn usage_only(&self) -> bool {
        self.choices.is_empty()
            && self.error.is_none()
            && self.usage.is_some_and(|u| u.get().trim() != "null")
    }

    /// Whether this is a chat completion chunk (`object` is `chat.completion.chunk`, or it has
    /// choices, or it is a usage-only chunk with an `id`), an error, or something else.
    pub fn belongs(&self) -> super::Belongs {
        let object = self.object.as_ref().map(Str::as_str);
        if object.is_some_and(|o| o.starts_with("chat.completion"))
            || !self.choices.is_empty()
            || (self.usage.is_some() && self.id.is_some())
        {
            super::Belongs::Own
        } else if self.error.is_some() {
            super::Belongs::Neutral
        } else {
            super::Belongs::Foreign
        }
    }
}

/// One entry of `choices`.
#[derive(Debug, Default)]
pub struct Choice<'a> {
    /// The choice's `index`.
    pub index: Option<i64>,
    /// The choice's `delta` (or `message`); empty when it has none.
    pub delta: Delta<'a>,
    /// The choice's `finish_reason`.
    pub finish_reason: Option<Str<'a>>,
    /// The choice's `logprobs`, as raw JSON.
    pub logprobs: Option<&'a RawValue>,
    /// Unknown keys of the choice (vendor extras).
    pub extra: Extra<'a>,
}

/// `choices[].delta` (some servers call it `message` in streamed chunks; both are read).
#[derive(Debug, Default)]
pub struct Delta<'a> {
    /// The `role` of the message, in its first chunk.
    pub role: Option<Str<'a>>,
    /// The `content` fragment.
    pub content: Option<Content<'a>>,
    /// A fragment of the `refusal` text.
    pub refusal: Option<Str<'a>>,
    /// A fragment of the `reasoning` text.
    pub reasoning: Option<Str<'a>>,
    /// A fragment of the `reasoning_content` text.
    pub reasoning_content: Option<Str<'a>>,
    /// The `reasoning_details` value, as raw JSON.
    pub reasoning_details: Option<&'a RawValue>,
    /// The fragments of `tool_calls`.
    pub tool_calls: Vec<ToolCall<'a>>,
    /// Unknown keys of the delta (vendor extras).
    pub extra: Extra<'a>,
}

/// `delta.content`: a text fragment, or (Mistral's reasoning models) a list of typed parts,
/// kept as raw JSON. A value that is neither a string nor `null` is kept raw as well.
#[derive(Debug)]
pub enum Content<'a> {
    /// A text fragment.
    Text(Str<'a>),
    /// A list of typed parts, or any other value that is not a string, as raw JSON.
    Parts(&'a str),
}

impl<'a> Content<'a> {
    /// The content as the fold reads it.
    pub fn view(&self) -> ContentView<'_> {
        match self {
            Content::Text(s) => ContentView::Text(s.as_str()),
            Content::Parts(raw) => ContentView::Parts(raw),
        }
    }

    /// Where the text lies in `data`, the frame it was decoded from, when it is a text
    /// fragment (for the frame template; see [`Str::in_frame`]).
    pub fn in_frame(
        value: &Option<Content<'a>>,
        data: &'a str,
        except: &[&str],
    ) -> Option<&'a str> {
        match value {
            Some(Content::Text(text)) => Str::in_frame_except(&Some(text.clone()), data, except),
            _ => None,
        }
    }
}

/// A list of one thinking part of one text part as Mistral's reasoning models write it, up to
/// the text's opening quote and from its closing quote ([`thinking_literal`]).
const THINKING: (&str, &str) = (
    r#"[{"type":"thinking","thinking":[{"type":"text","text":""#,
    r#""}]}]"#,
);

/// The text's literal (between its quotes, escapes kept) when the content parts `parts` are
/// exactly one thinking part of one text part, spelled as Mistral writes them: the hole of a
/// frame template ([`crate::fold::chat::Hole::Thinking`]).
pub fn thinking_literal(parts: &str) -> Option<&str> {
    let rest = parts.strip_prefix(THINKING.0)?;
    let (len, _) = crate::json::read::scan_string(rest.as_bytes())?;
    (rest.get(len..)? == THINKING.1).then(|| rest.get(..len))?
}

/// The content parts a thinking text is ([`ContentView::Thinking`]), as JSON text.
pub fn thinking_parts(text: &str) -> String {
    let mut out = String::with_capacity(THINKING.0.len() + text.len() + THINKING.1.len() + 8);
    out.push_str(&THINKING.0[..THINKING.0.len() - 1]);
    crate::json::write::push_str(&mut out, text);
    out.push_str(&THINKING.1[1..]);
    out
}

fn content<'a, A: serde::de::MapAccess<'a>>(map: &mut A) -> Result<Option<Content<'a>>, A::Error> {
    let value: &'a RawValue = map.next_value()?;
    let text = value.get();
    if text == "null" {
        return Ok(None);
    }
    if text.starts_with('"') {
        return serde_json::from_str::<Str<'a>>(text)
            .map(|s| Some(Content::Text(s)))
            .map_err(serde::de::Error::custom);
    }
    Ok(Some(Content::Parts(text)))
}

/// How a chunk's vendor keys (`extra`, `choice_extra`, `delta_extra` of its one choice) are
/// written again when a frame fits the chunk's template with other vendor values: each
/// object's JSON text (as [`Extra::to_json`] writes it) cut into fixed pieces and raw holes.
/// A frame template leaves the vendor strings and integers open (Together's `text` and
/// `token_id`, ...), and the strings and numbers of `reasoning_details` (OpenRouter repeats each
/// reasoning delta in it), so a stream whose values change on every chunk stays on the fast
/// path; at most [`MAX_RAW`] of them, the rest fixed.
#[derive(Debug, Default)]
pub struct VendorRecipes {
    /// The chunk's, the choice's and the delta's vendor objects, and `reasoning_details`.
    recipes: [Option<Vec<Piece>>; 4],
    /// The objects' texts in the template's own frame, and its raw holes' values: a fit
    /// whose values are the same (a vendor key that does not change) reuses the text.
    texts: [Option<Box<str>>; 4],
    values: Vec<Box<str>>,
}

/// The values [`VendorRecipes::write`] writes: the chunk's, the choice's and the delta's
/// vendor objects, and the delta's `reasoning_details`.
pub type Written<'a> = [Option<Cow<'a, str>>; 4];

#[derive(Debug)]
enum Piece {
    Fixed(Box<str>),
    /// Raw hole `n`: a string's contents (written between quotes) or an integer token.
    Hole(u8),
}

impl VendorRecipes {
    /// The raw holes of `chunk` (one choice) and the recipes that write its vendor objects
    /// from them. Every vendor string and integer value is a hole, up to [`MAX_RAW`].
    pub fn of<'a>(chunk: &Chunk<'a>) -> (Vec<RawHole<'a>>, Self) {
        let mut raws = Vec::new();
        let mut recipes = VendorRecipes::default();
        let Some(choice) = chunk.choices.first() else {
            return (raws, recipes);
        };
        let objects = [&chunk.extra, &choice.extra, &choice.delta.extra];
        let [chunk_slot, choice_slot, delta_slot, details_slot] = &mut recipes.recipes;
        let [chunk_text, choice_text, delta_text, details_text] = &mut recipes.texts;
        let slots = [
            (chunk_slot, chunk_text),
            (choice_slot, choice_text),
            (delta_slot, delta_text),
        ];
        for ((slot, text), extra) in slots.into_iter().zip(objects) {
            if extra.is_empty() {
                continue;
            }
            *text = extra.to_json().map(Box::from);
            let mut pieces = Vec::new();
            let mut fixed = String::from("{");
            for (i, (key, value)) in extra.0.iter().enumerate() {
                if i > 0 {
                    fixed.push(',');
                }
                crate::json::write::push_str(&mut fixed, key.as_str());
                fixed.push(':');
                let text = value.get();
                let hole = match u8::try_from(raws.len()) {
                    Ok(n) if raws.len() < MAX_RAW => Some(n),
                    _ => None,
                };
                let raw = RawHole::of(value);
                match (hole, raw) {
                    (Some(n), Some(raw)) => {
                        let quoted = matches!(raw, RawHole::Str(_));
                        if quoted {
                            fixed.push('"');
                        }
                        pieces.push(Piece::Fixed(std::mem::take(&mut fixed).into()));
                        pieces.push(Piece::Hole(n));
                        if quoted {
                            fixed.push('"');
                        }
                        recipes.values.push(raw.text().into());
                        raws.push(raw);
                    }
                    _ => fixed.push_str(text),
                }
            }
            fixed.push('}');
            pieces.push(Piece::Fixed(fixed.into()));
            *slot = Some(pieces);
        }
        if let Some(details) = choice.delta.reasoning_details {
            *details_text = Some(details.get().into());
            *details_slot = Some(value_recipe(details.get(), &mut raws, &mut recipes.values));
        }
        (raws, recipes)
    }

    /// Whether there is a raw hole at all (else the vendor objects are fixed and need no
    /// writing).
    pub fn has_holes(&self) -> bool {
        self.recipes
            .iter()
            .flatten()
            .any(|pieces| pieces.iter().any(|p| matches!(p, Piece::Hole(_))))
    }

    /// The values' texts (see [`Written`]) with `raws` (a fill's raw holes) in their holes; a
    /// value whose holes hold the template's own values is its text, borrowed.
    pub fn write(&self, raws: &[&str; MAX_RAW]) -> Written<'_> {
        let same = |n: &u8| {
            let n = usize::from(*n);
            match (self.values.get(n), raws.get(n)) {
                // Lengths first: most values that change change their length, and an empty
                // one needs no call to memcmp (measured: comparing two empty strings through
                // it cost ~60 ns per frame here).
                (Some(v), Some(r)) => v.len() == r.len() && (r.is_empty() || **v == **r),
                _ => false,
            }
        };
        let mut out: Written<'_> = [None, None, None, None];
        for ((slot, pieces), text) in out.iter_mut().zip(&self.recipes).zip(&self.texts) {
            let Some(pieces) = pieces else {
                continue;
            };
            let unchanged = pieces.iter().all(|p| match p {
                Piece::Fixed(_) => true,
                Piece::Hole(n) => same(n),
            });
            *slot = match (unchanged, text) {
                (true, Some(text)) => Some(Cow::Borrowed(&**text)),
                _ => {
                    let len = pieces.iter().map(|piece| match piece {
                        Piece::Fixed(text) => text.len(),
                        Piece::Hole(n) => raws.get(usize::from(*n)).map_or(0, |r| r.len()),
                    });
                    let mut written = String::with_capacity(len.sum());
                    for piece in pieces {
                        match piece {
                            Piece::Fixed(text) => written.push_str(text),
                            Piece::Hole(n) => written
                                .push_str(raws.get(usize::from(*n)).copied().unwrap_or_default()),
                        }
                    }
                    Some(Cow::Owned(written))
                }
            };
        }
        out
    }
}

/// The recipe of a raw JSON value (a slice of the frame): every string value (not a key) and
/// number in it is a raw hole while there is room ([`MAX_RAW`] in all), the rest fixed.
fn value_recipe<'a>(
    text: &'a str,
    raws: &mut Vec<RawHole<'a>>,
    values: &mut Vec<Box<str>>,
) -> Vec<Piece> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let (mut from, mut i) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        let room = raws.len() < MAX_RAW;
        let hole = match b {
            b'"' => {
                let Some(len) =
                    crate::json::read::skip_string(bytes.get(i + 1..).unwrap_or_default())
                else {
                    break; // not JSON: the rest stays fixed
                };
                let end = i + 1 + len;
                let after = bytes.get(end + 1..).unwrap_or_default();
                let key = after.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b':');
                let hole = (!key && room)
                    .then(|| text.get(i + 1..end).map(|s| (i + 1, end, RawHole::Str(s))))
                    .flatten();
                if hole.is_none() {
                    i = end + 1;
                    continue;
                }
                hole
            }
            b'-' | b'0'..=b'9' => {
                let len = template::num_len(bytes.get(i..).unwrap_or_default()).unwrap_or(1);
                let hole = room
                    .then(|| text.get(i..i + len).map(|s| (i, i + len, RawHole::Num(s))))
                    .flatten();
                if hole.is_none() {
                    i += len;
                    continue;
                }
                hole
            }
            _ => None,
        };
        match (hole, u8::try_from(raws.len())) {
            (Some((start, end, raw)), Ok(n)) => {
                pieces.push(Piece::Fixed(
                    text.get(from..start).unwrap_or_default().into(),
                ));
                pieces.push(Piece::Hole(n));
                values.push(raw.text().into());
                // A string's closing quote is the next fixed piece's first byte.
                i = end + usize::from(matches!(raw, RawHole::Str(_)));
                raws.push(raw);
                from = end;
            }
            _ => i += 1,
        }
    }
    pieces.push(Piece::Fixed(text.get(from..).unwrap_or_default().into()));
    pieces
}

/// One fragment of `delta.tool_calls[]`, with `function` flattened into it.
#[derive(Debug, Default)]
pub struct ToolCall<'a> {
    /// The call's `index` among the choice's tool calls.
    pub index: Option<i64>,
    /// The call's `id`, in its first fragment.
    pub id: Option<Str<'a>>,
    /// The call's `type` (`function`).
    pub type_: Option<Str<'a>>,
    /// The `function.name`, in the call's first fragment.
    pub name: Option<Str<'a>>,
    /// A fragment of `function.arguments` (a string, or the raw JSON text of any other value).
    pub arguments: Option<Str<'a>>,
}

/// `tool_calls[].function`.
#[derive(Debug, Default)]
struct Function<'a> {
    name: Option<Str<'a>>,
    arguments: Option<Str<'a>>,
}

/// The fold's views of a chunk (not an error envelope without choices: the caller reports the
/// error): one per choice, each with the chunk-level fields, or one without a choice index
/// for a chunk with `choices: []` (a usage-only chunk). `f` gets each view and its choice.
pub fn views<'c>(chunk: &'c Chunk<'c>, mut f: impl FnMut(&ChunkView<'_>, Option<&'c Choice<'c>>)) {
    let extra = chunk.extra.to_json();
    let head = ChunkView {
        id: chunk.id.as_ref().map(Str::as_str),
        created: chunk.created,
        model: chunk.model.as_ref().map(Str::as_str),
        system_fingerprint: chunk.system_fingerprint.as_ref().map(Str::as_str),
        service_tier: chunk.service_tier.as_ref().map(Str::as_str),
        usage: chunk.usage.map(RawValue::get),
        extra: extra.as_deref(),
        ..ChunkView::default()
    };
    if chunk.choices.is_empty() {
        f(&head, None);
        return;
    }
    let mut tools: Vec<ToolView<'_>> = Vec::new();
    for (position, choice) in chunk.choices.iter().enumerate() {
        let d = &choice.delta;
        tools.clear();
        tools.extend(d.tool_calls.iter().enumerate().map(|(p, c)| ToolView {
            index: c.index.unwrap_or(p as i64),
            id: c.id.as_ref().map(Str::as_str),
            type_: c.type_.as_ref().map(Str::as_str),
            name: c.name.as_ref().map(Str::as_str),
            arguments: c.arguments.as_ref().map(Str::as_str),
        }));
        let choice_extra = choice.extra.to_json();
        let delta_extra = d.extra.to_json();
        let view = ChunkView {
            index: Some(choice.index.unwrap_or(position as i64)),
            role: d.role.as_ref().map(Str::as_str),
            content: d.content.as_ref().map(Content::view),
            refusal: d.refusal.as_ref().map(Str::as_str),
            reasoning: d.reasoning.as_ref().map(Str::as_str),
            reasoning_content: d.reasoning_content.as_ref().map(Str::as_str),
            tool_calls: &tools,
            finish_reason: choice.finish_reason.as_ref().map(Str::as_str),
            reasoning_details: d.reasoning_details.map(RawValue::get),
            logprobs: choice.logprobs.map(RawValue::get),
            choice_extra: choice_extra.as_deref(),
            delta_extra: delta_extra.as_deref(),
            ..head
        };
        f(&view, Some(choice));
    }
}

/// Decodes one chunk: in one pass by hand ([`read`]), or, for what that pass leaves (a key
/// with an escape, a float index, a value of another type, ...: see `crate::json::cursor`)
/// and for every malformed chunk, by serde_json, which then decides. Either reads a chunk the
/// same.
pub fn decode(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
    match read::chunk(doc) {
        Some(chunk) => Ok(chunk),
        None => decode_serde(doc),
    }
}

/// Decodes one chunk with serde_json alone (the reading [`decode`]'s own pass must agree with).
pub fn decode_serde(doc: &str) -> Result<Chunk<'_>, serde_json::Error> {
    serde_json::from_str(doc)
}

/// A chunk read in one pass over its JSON (`crate::json::cursor`), as the `map_struct!`
/// readers below read it, key for key: the last of a repeated key wins, unknown keys of a
/// chunk, a choice and a delta are kept raw (checked for depth), a tool call's and a
/// function's are skipped, `null` is absence. A value kept as a `RawValue` (a usage, logprobs,
/// content parts) is read by serde_json where it lies, a vendor key's is kept as the text read; the first frames of a
/// stream, which no template fits yet, have few. `None` hands the chunk to serde_json.
mod read {
    use std::borrow::Cow;

    use super::{Choice, Chunk, Content, Delta, ToolCall};
    use crate::json::cursor::field::{keep, opt_int, opt_str, raw_opt};
    use crate::json::cursor::Cursor;
    use crate::json::read::Str;

    pub(super) fn chunk(doc: &str) -> Option<Chunk<'_>> {
        let mut c = Cursor::new(doc);
        let mut chunk = Chunk::default();
        c.members(|c, key| {
            match key {
                "id" => chunk.id = opt_str(c)?,
                "object" => chunk.object = opt_str(c)?,
                "created" => chunk.created = opt_int(c)?,
                "model" => chunk.model = opt_str(c)?,
                "system_fingerprint" => chunk.system_fingerprint = opt_str(c)?,
                "service_tier" => chunk.service_tier = opt_str(c)?,
                "choices" => chunk.choices = c.items(choice)?,
                "usage" => chunk.usage = raw_opt(c)?,
                "error" => chunk.error = raw_opt(c)?,
                // `json::read::str_or_skip`: a string, or any other value skipped.
                "obfuscation" => {
                    chunk.obfuscation = if c.peek()? == b'"' {
                        Some(Str(c.string()?.0))
                    } else {
                        c.value()?;
                        None
                    };
                }
                _ => keep(&mut chunk.extra, key, c)?,
            }
            Some(())
        })?;
        c.at_end().then_some(chunk)
    }

    fn choice<'a>(c: &mut Cursor<'a>) -> Option<Choice<'a>> {
        let mut choice = Choice::default();
        c.members(|c, key| {
            match key {
                "index" => choice.index = opt_int(c)?,
                "delta" | "message" => {
                    choice.delta = if c.null()? {
                        Delta::default()
                    } else {
                        delta(c)?
                    };
                }
                "finish_reason" => choice.finish_reason = opt_str(c)?,
                "logprobs" => choice.logprobs = raw_opt(c)?,
                _ => keep(&mut choice.extra, key, c)?,
            }
            Some(())
        })?;
        Some(choice)
    }

    fn delta<'a>(c: &mut Cursor<'a>) -> Option<Delta<'a>> {
        let mut delta = Delta::default();
        c.members(|c, key| {
            match key {
                "role" => delta.role = opt_str(c)?,
                // `super::content`: `null` is none, a string its text, any other value parts
                // (skipped and checked by the cursor, as the chunk's other values are).
                "content" => {
                    delta.content = match c.peek()? {
                        b'n' => {
                            c.null()?;
                            None
                        }
                        b'"' => Some(Content::Text(Str(c.string()?.0))),
                        _ => Some(Content::Parts(c.value()?)),
                    };
                }
                "refusal" => delta.refusal = opt_str(c)?,
                "reasoning" => delta.reasoning = opt_str(c)?,
                "reasoning_content" => delta.reasoning_content = opt_str(c)?,
                "reasoning_details" => delta.reasoning_details = raw_opt(c)?,
                "tool_calls" => delta.tool_calls = c.items(tool_call)?,
                _ => keep(&mut delta.extra, key, c)?,
            }
            Some(())
        })?;
        Some(delta)
    }

    fn tool_call<'a>(c: &mut Cursor<'a>) -> Option<ToolCall<'a>> {
        let mut call = ToolCall::default();
        c.members(|c, key| {
            match key {
                "index" => call.index = opt_int(c)?,
                "id" => call.id = opt_str(c)?,
                "type" => call.type_ = opt_str(c)?,
                "function" => {
                    if !c.null()? {
                        let (mut name, mut arguments) = (None, None);
                        c.members(|c, key| {
                            match key {
                                "name" => name = opt_str(c)?,
                                // `json::read::str_or_raw`: a string, or any other value's
                                // text (checked for depth), `null` none.
                                "arguments" => {
                                    arguments = match c.peek()? {
                                        b'"' => Some(Str(c.string()?.0)),
                                        _ => raw_opt(c)?.map(|v| Str(Cow::Borrowed(v.get()))),
                                    };
                                }
                                _ => {
                                    c.value()?;
                                }
                            }
                            Some(())
                        })?;
                        call.name = name;
                        call.arguments = arguments;
                    }
                }
                _ => {
                    c.value()?;
                }
            }
            Some(())
        })?;
        Some(call)
    }
}

/// Whether `doc` (a frame's data, `event` its SSE event name) is this dialect's own: the
/// dialect's sniff rule in the registry (`super::registry`).
pub fn owns(_event: &[u8], doc: &str) -> bool {
    decode(doc).is_ok_and(|c| c.belongs() == super::Belongs::Own)
}

map_struct!(
    Chunk,
    "a chat.completion.chunk object",
    |chunk, key, map| {
        match key.as_str() {
            "id" => chunk.id = map.next_value()?,
            "object" => chunk.object = map.next_value()?,
            "created" => chunk.created = map.next_value::<Option<Int>>()?.map(|i| i.0),
            "model" => chunk.model = map.next_value()?,
            "system_fingerprint" => chunk.system_fingerprint = map.next_value()?,
            "service_tier" => chunk.service_tier = map.next_value()?,
            "choices" => {
                chunk.choices = map.next_value::<Option<Vec<Choice>>>()?.unwrap_or_default()
            }
            "usage" => chunk.usage = raw_opt(&mut map)?,
            "error" => chunk.error = raw_opt(&mut map)?,
            // OpenAI's per-chunk random padding (on by default since 2025; it hides token lengths
            // from traffic analysis): meaningless, and kept as an extra it would make every chunk
            // look like it carries vendor data. Its place is recorded for the frame template.
            "obfuscation" => chunk.obfuscation = str_or_skip(&mut map)?,
            _ => chunk.extra.keep(key, &mut map)?,
        }
    }
);

map_struct!(Choice, "a choice object", |choice, key, map| {
    match key.as_str() {
        "index" => choice.index = map.next_value::<Option<Int>>()?.map(|i| i.0),
        "delta" | "message" => {
            choice.delta = map.next_value::<Option<Delta>>()?.unwrap_or_default()
        }
        "finish_reason" => choice.finish_reason = map.next_value()?,
        "logprobs" => choice.logprobs = raw_opt(&mut map)?,
        _ => choice.extra.keep(key, &mut map)?,
    }
});

map_struct!(Delta, "a delta object", |delta, key, map| {
    match key.as_str() {
        "role" => delta.role = map.next_value()?,
        "content" => delta.content = content(&mut map)?,
        "refusal" => delta.refusal = map.next_value()?,
        "reasoning" => delta.reasoning = map.next_value()?,
        "reasoning_content" => delta.reasoning_content = map.next_value()?,
        "reasoning_details" => delta.reasoning_details = raw_opt(&mut map)?,
        "tool_calls" => {
            delta.tool_calls = map
                .next_value::<Option<Vec<ToolCall>>>()?
                .unwrap_or_default()
        }
        _ => delta.extra.keep(key, &mut map)?,
    }
});

map_struct!(ToolCall, "a tool call object", |call, key, map| {
    match key.as_str() {
        "index" => call.index = map.next_value::<Option<Int>>()?.map(|i| i.0),
        "id" => call.id = map.next_value()?,
        "type" => call.type_ = map.next_value()?,
        "function" => {
            if let Some(f) = map.next_value::<Option<Function>>()? {
                call.name = f.name;
                call.arguments = f.arguments;
            }
        }
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

map_struct!(Function, "a function object", |function, key, map| {
    match key.as_str() {
        "name" => function.name = map.next_value()?,
        "arguments" => function.arguments = str_or_raw(&mut map)?,
        _ => {
            map.next_value::<IgnoredAny>()?;
        }
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk as the tests compare two readings of it: every field (`Debug`), and whether
    /// each string was borrowed from the document (a template finds a borrowed text's place).
    fn shown(c: &Chunk<'_>) -> String {
        let b = |s: &Option<Str<'_>>| match s {
            Some(Str(Cow::Borrowed(_))) => "b",
            Some(Str(Cow::Owned(_))) => "o",
            None => "-",
        };
        let mut out = format!("{c:?}\n");
        for s in [
            &c.id,
            &c.object,
            &c.model,
            &c.system_fingerprint,
            &c.service_tier,
            &c.obfuscation,
        ] {
            out.push_str(b(s));
        }
        for choice in &c.choices {
            let d = &choice.delta;
            let text = match &d.content {
                Some(Content::Text(t)) => Some(t.clone()),
                _ => None,
            };
            for s in [
                &choice.finish_reason,
                &d.role,
                &text,
                &d.refusal,
                &d.reasoning,
                &d.reasoning_content,
            ] {
                out.push_str(b(s));
            }
            for call in &d.tool_calls {
                for s in [&call.id, &call.type_, &call.name, &call.arguments] {
                    out.push_str(b(s));
                }
            }
        }
        out
    }

    /// The chunks of the chat captures, the shipped sample and the wire-format fixtures.
    fn captured() -> Vec<String> {
        let docs = crate::json::cursor::tests::captured_docs("chat");
        assert!(docs.len() > 100, "{}", docs.len());
        docs
    }

    /// The captured chunks: what the one pass reads, serde_json reads the same; nearly every
    /// chunk serde_json reads, the one pass reads too.
    #[test]
    fn one_pass_reads_as_serde_json_reads() {
        let (mut fast, mut read) = (0, 0);
        for doc in captured() {
            let slow = decode_serde(&doc);
            read += usize::from(slow.is_ok());
            if let Some(c) = read::chunk(&doc) {
                fast += 1;
                assert_eq!(shown(&c), shown(slow.as_ref().unwrap()), "{doc}");
            }
        }
        assert!(fast * 10 >= read * 9, "{fast} of {read}");
    }

    /// Each rule of the readers, on chunks written for it: `null` as absence, the last of a
    /// repeated key, vendor keys kept raw, content parts, arguments that are not a string, a
    /// function object again, padding that is not a string.
    #[test]
    fn one_pass_rules_are_serde_jsons() {
        let docs = [
            r#"{"id":null,"object":null,"created":null,"model":null,"system_fingerprint":null,"service_tier":null,"choices":null,"usage":null,"error":null,"obfuscation":null}"#,
            r#"{"id":"a","id":"b\n","created":5,"created":-7,"choices":[{"index":0,"delta":null,"finish_reason":null,"logprobs":null}]}"#,
            r#"{"choices":[{"index":1,"message":{"role":"assistant","content":"x"},"delta":{"content":"y\u00e9"},"x_vendor":{"a":[1,{}]},"seed":null}],"provider":"p","usage":{"prompt_tokens":1}}"#,
            r#"{"choices":[{"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"t"}]}],"reasoning":"r","reasoning_content":"c","refusal":"no","reasoning_details":[{"type":"reasoning.text","text":"r"}],"token_id":7}}]}"#,
            r#"{"choices":[{"delta":{"content":null,"content":5,"reasoning_details":null}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\""}},{"index":1,"function":{"arguments":{"a":1},"x":[]},"extra":true}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f"},"function":{"arguments":"1"},"function":null}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":null}},{"delta":{"tool_calls":[{"function":{"arguments":null}}]}}]}"#,
            r#"{"obfuscation":{"x":1},"error":{"message":"m"},"choices":[]}"#,
            r#"{"obfuscation":"a\"b"}"#,
            "{ \"id\" : \"a\" , \"choices\" : [ { \"delta\" : { \"content\" : \"\\n\" } } ] }\r\n ",
            r#"{}"#,
        ];
        for doc in docs {
            let fast = read::chunk(doc).unwrap_or_else(|| panic!("left to serde_json: {doc}"));
            assert_eq!(shown(&fast), shown(&decode_serde(doc).unwrap()), "{doc}");
        }
        // Left to serde_json, which reads or refuses them.
        for doc in [
            r#"{"created":1.5e9}"#,
            r#"{"created":"1"}"#,
            r#"{"created":9223372036854775808}"#,
            r#"{"choices":[{"index":1.0}]}"#,
            r#"{"id":1}"#,
            r#"{"choices":[null]}"#,
            r#"{"choices":[{"delta":[]}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":5}}]}}]}"#,
            r#"{"a\n":1}"#,
            r#"{"choices":[{"delta":{"c\u006fntent":"x"}}]}"#,
            r#"[]"#,
            r#"{} x"#,
        ] {
            assert!(read::chunk(doc).is_none(), "{doc}");
        }
        // A vendor value deeper than the limit: refused, as serde_json refuses it.
        let deep = format!(r#"{{"x":{}1{}}}"#, "[".repeat(200), "]".repeat(200));
        assert!(read::chunk(&deep).is_none());
        assert!(decode(&deep).is_err());
    }

    proptest::proptest! {
        /// A captured chunk with bytes cut out, doubled or put in (JSON's own punctuation,
        /// white space, escapes, keys of other types): what the one pass accepts, serde_json
        /// accepts and reads the same; what serde_json refuses, the one pass leaves to it.
        #[test]
        fn one_pass_never_accepts_what_serde_json_refuses(
            pick in 0usize..1000,
            edits in proptest::collection::vec(
                (0usize..4096, 0usize..3, proptest::sample::select(
                    crate::json::cursor::tests::edit_pieces(&[
                        "\"index\": 1.0, ", "\"content\": 5, ", "\"delta\": null, ",
                        "\"function\": null, ", "\"arguments\": {}, ", "\"x\": [[]], ",
                        "\"obfuscation\": 1, ",
                    ]),
                )), 1..4),
        ) {
            let docs = captured();
            let Some(doc) = crate::json::cursor::tests::edited(&docs[pick % docs.len()], &edits) else {
                return Ok(());
            };
            let slow = decode_serde(&doc);
            if let Some(fast) = read::chunk(&doc) {
                proptest::prop_assert!(slow.is_ok(), "serde_json refuses {doc}");
                proptest::prop_assert_eq!(shown(&fast), shown(slow.as_ref().unwrap()));
            }
        }
    }

    fn together(text: &str, token: i64, seed: &str) -> String {
        format!(
            r#"{{"id":"","object":"chat.completion.chunk","created":1,"model":"m","provider":"t","choices":[{{"index":0,"text":"{text}","logprobs":null,"finish_reason":null,"seed":{seed},"delta":{{"token_id":{token},"role":"assistant","content":"{text}","tool_calls":null}}}}],"usage":null}}"#
        )
    }

    /// A template leaves every vendor string and integer open, and writes the vendor objects
    /// of a fitting frame exactly as a full decode of it has them.
    #[test]
    fn vendor_values_are_holes_written_back_as_decoded() {
        use crate::dialect::template::Shape;
        let first = together("Hi", 7, "null");
        let chunk = decode(&first).unwrap();
        let (raws, recipes) = VendorRecipes::of(&chunk);
        assert_eq!(raws.len(), 3); // "provider", "text", "token_id"; "seed": null stays fixed
        assert!(recipes.has_holes());
        let content = match &chunk.choices[0].delta.content {
            Some(Content::Text(t)) => Str::borrowed(&Some(t.clone())).unwrap(),
            _ => panic!("no content"),
        };
        let shape = Shape::with_raws(None, &first, content, &[], &raws).unwrap();
        // The template's own values: the texts are the template frame's, borrowed.
        let mut own = [""; MAX_RAW];
        shape.fill_all(None, &first, &mut own, None).unwrap();
        let written = recipes.write(&own);
        assert!(written
            .iter()
            .flatten()
            .all(|t| matches!(t, Cow::Borrowed(_))));
        for (text, token) in [
            (r"a\nb", 8),
            ("", 9),
            (r"\u00e9\\", -10),
            ("x", 123456789012),
        ] {
            let next = together(text, token, "null");
            let mut filled = [""; MAX_RAW];
            shape.fill_all(None, &next, &mut filled, None).unwrap();
            let full = decode(&next).unwrap();
            let expected = [
                full.extra.to_json(),
                full.choices[0].extra.to_json(),
                full.choices[0].delta.extra.to_json(),
                None,
            ];
            let written = recipes.write(&filled).map(|t| t.map(Cow::into_owned));
            assert_eq!(written, expected, "{next}");
        }
        // Another fixed vendor value (the seed) or a value of another type: no fit.
        assert!(shape
            .fill_all(None, &together("a", 1, "5"), &mut [""; MAX_RAW], None)
            .is_none());
        let other = |token: &str| together("a", 1, "null").replace("\"token_id\":1", token);
        assert!(shape
            .fill_all(None, &other("\"token_id\":\"1\""), &mut [""; MAX_RAW], None)
            .is_none());
        assert!(shape
            .fill_all(None, &other("\"token_id\":01"), &mut [""; MAX_RAW], None)
            .is_none());
        // A number hole takes any JSON number token, written back as sent.
        let float = other("\"token_id\":-1.5e3");
        let mut scratch = [""; MAX_RAW];
        shape.fill_all(None, &float, &mut scratch, None).unwrap();
        let delta = recipes.write(&scratch)[2].as_deref().map(str::to_owned);
        assert_eq!(delta.as_deref(), Some("{\"token_id\":-1.5e3}"));
    }

    /// OpenRouter repeats each reasoning delta in `reasoning_details`: its strings and numbers
    /// are holes too, written back as sent, and the text hole is the reasoning (the one text
    /// that is not empty), not `"content": ""`.
    #[test]
    fn reasoning_details_values_are_holes() {
        let frame = |text: &str, index: i64| {
            format!(
                r#"{{"id":"gen-1","choices":[{{"index":0,"delta":{{"content":"","reasoning":"{text}","reasoning_details":[{{"type":"reasoning.text","text":"{text}","format":"anthropic-claude-v1","index":{index}}}]}},"finish_reason":null}}]}}"#
            )
        };
        let first = frame("Checking", 0);
        let chunk = decode(&first).unwrap();
        let (raws, recipes) = VendorRecipes::of(&chunk);
        assert!(recipes.has_holes());
        assert_eq!(raws.len(), 4, "{raws:?}"); // type, text, format, index
        let reasoning = match &chunk.choices[0].delta.reasoning {
            Some(t) => Str::borrowed(&Some(t.clone())).unwrap(),
            None => panic!("no reasoning"),
        };
        let except: Vec<&str> = raws.iter().map(RawHole::text).collect();
        assert_eq!(
            Str::in_frame_except(&chunk.choices[0].delta.reasoning, &first, &except),
            Some(reasoning)
        );
        let shape = crate::dialect::template::Shape::with_raws(None, &first, reasoning, &[], &raws)
            .unwrap();
        for (text, index) in [(" the facts", 0), (r#"a\nb \"q\""#, 1), ("", 12)] {
            let next = frame(text, index);
            let mut filled = [""; MAX_RAW];
            let fit = shape.fill_all(None, &next, &mut filled, None).unwrap();
            let full = decode(&next).unwrap();
            assert_eq!(
                Some(fit.text.as_ref()),
                full.choices[0].delta.reasoning.as_ref().map(Str::as_str)
            );
            let written = recipes.write(&filled)[3].as_deref().map(str::to_owned);
            assert_eq!(
                written.as_deref(),
                full.choices[0].delta.reasoning_details.map(RawValue::get)
            );
        }
    }

    #[test]
    fn decodes_a_content_chunk() {
        let c = decode(
            r#"{"id":"c1","object":"chat.completion.chunk","created":1700000000,"model":"m",
                "service_tier":null,"system_fingerprint":null,
                "choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}"#,
        )
        .unwrap();
        assert_eq!(c.id.unwrap().as_str(), "c1");
        assert_eq!(c.created, Some(1_700_000_000));
        assert!(c.service_tier.is_none());
        let ch = &c.choices[0];
        assert_eq!(ch.index, Some(0));
        assert!(matches!(&ch.delta.content, Some(Content::Text(t)) if t.as_str() == "Hi"));
        assert!(ch.logprobs.is_none());
        assert!(c.extra.is_empty());
    }

    #[test]
    fn keeps_vendor_extras_at_every_level() {
        let c = decode(
            r#"{"id":"x","choices":[{"index":0,"delta":{"annotations":[1]},"native_finish_reason":"STOP"}],
                "sansa":{"routed":true}}"#,
        )
        .unwrap();
        assert_eq!(c.extra.to_json().unwrap(), r#"{"sansa":{"routed":true}}"#);
        assert_eq!(
            c.choices[0].extra.to_json().unwrap(),
            r#"{"native_finish_reason":"STOP"}"#
        );
        assert_eq!(
            c.choices[0].delta.extra.to_json().unwrap(),
            r#"{"annotations":[1]}"#
        );
    }

    #[test]
    fn content_may_be_a_list_of_parts() {
        let c =
            decode(r#"{"choices":[{"delta":{"content":[{"type":"text","text":"a"}]}}]}"#).unwrap();
        assert!(
            matches!(&c.choices[0].delta.content, Some(Content::Parts(p)) if p.starts_with('['))
        );
    }

    #[test]
    fn obfuscation_padding_is_not_an_extra() {
        let c = decode(r#"{"id":"x","choices":[],"obfuscation":"a1B2"}"#).unwrap();
        assert!(c.extra.is_empty());
        assert_eq!(c.obfuscation.unwrap().as_str(), "a1B2");
    }

    #[test]
    fn tool_calls_are_flattened_and_arguments_may_be_objects() {
        let c = decode(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[
                {"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\""}},
                {"index":1,"function":{"arguments":{"b":2}}}]}}]}"#,
        )
        .unwrap();
        let calls = &c.choices[0].delta.tool_calls;
        assert_eq!(calls[0].name.as_ref().unwrap().as_str(), "f");
        assert_eq!(calls[0].arguments.as_ref().unwrap().as_str(), "{\"a\"");
        assert_eq!(calls[1].arguments.as_ref().unwrap().as_str(), r#"{"b":2}"#);
        assert!(calls[1].id.is_none());
    }

    #[test]
    fn error_documents_and_nulls() {
        let c =
            decode(r#"{"error":{"message":"x"},"choices":[{"finish_reason":"error"}]}"#).unwrap();
        assert!(c.error.is_some());
        assert_eq!(
            c.choices[0].finish_reason.as_ref().unwrap().as_str(),
            "error"
        );
        let c = decode(r#"{"choices":null,"usage":null,"error":null}"#).unwrap();
        assert!(c.choices.is_empty() && c.usage.is_none() && c.error.is_none());
    }

    #[test]
    fn not_an_object_is_an_error_with_a_position() {
        let e = decode("[1,2]").unwrap_err().to_string();
        assert!(
            e.contains("chat.completion.chunk") && e.contains("column"),
            "{e}"
        );
    }
}
