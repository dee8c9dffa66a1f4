//! The views of a chunk the chat fold reads (the decoder writes them): one choice of one chunk, flattened and borrowing its
//! strings (`ChunkView`), and its owned copy for a template hit (`ChunkOwned`).

use std::borrow::Cow;

/// One fragment of a tool call, as a view.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolView<'a> {
    /// The call's `index`, else its position in the delta's `tool_calls`.
    pub index: i64,
    /// The call's `id`, in its first fragment.
    pub id: Option<&'a str>,
    /// The call's `type` (`function`).
    pub type_: Option<&'a str>,
    /// The `function.name`, in the call's first fragment.
    pub name: Option<&'a str>,
    /// A fragment of `function.arguments` (a string, or the raw JSON text of any other value).
    pub arguments: Option<&'a str>,
}

/// `delta.content`: a text fragment, or the raw JSON of a list of typed parts.
#[derive(Debug, Clone, Copy)]
pub enum ContentView<'a> {
    /// A text fragment.
    Text(&'a str),
    /// A list of typed parts (or any other value that is not a string), as raw JSON text.
    Parts(&'a str),
    /// The text of a list of one thinking part of one text part, as Mistral's reasoning
    /// models send each thinking delta (`[{"type":"thinking","thinking":[{"type":"text",
    /// "text":...}]}]`, [`crate::dialect::chat::thinking_parts`]): a frame template's fit.
    Thinking(&'a str),
}

/// One choice of one chunk, flattened (an item's worth of data). JSON-valued fields hold raw
/// JSON text.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChunkView<'a> {
    /// The chunk's `id` (the completion's, the same in every chunk).
    pub id: Option<&'a str>,
    /// The chunk's `created` time, in Unix seconds.
    pub created: Option<i64>,
    /// The `model` that wrote the chunk.
    pub model: Option<&'a str>,
    /// The chunk's `system_fingerprint`.
    pub system_fingerprint: Option<&'a str>,
    /// The `service_tier` the request ran in.
    pub service_tier: Option<&'a str>,
    /// The chunk's `usage`, as raw JSON text.
    pub usage: Option<&'a str>,
    /// The chunk's unknown top-level keys, as one JSON object.
    pub extra: Option<&'a str>,
    /// The choice index; `None` for a chunk with `choices: []`.
    pub index: Option<i64>,
    /// The `role` of the message, in its first chunk.
    pub role: Option<&'a str>,
    /// The `content` fragment.
    pub content: Option<ContentView<'a>>,
    /// A fragment of the `refusal` text.
    pub refusal: Option<&'a str>,
    /// A fragment of the `reasoning` text.
    pub reasoning: Option<&'a str>,
    /// A fragment of the `reasoning_content` text.
    pub reasoning_content: Option<&'a str>,
    /// The fragments of the delta's `tool_calls`.
    pub tool_calls: &'a [ToolView<'a>],
    /// The choice's `finish_reason`.
    pub finish_reason: Option<&'a str>,
    /// The delta's `reasoning_details` value, as raw JSON text.
    pub reasoning_details: Option<&'a str>,
    /// The choice's `logprobs`, as raw JSON text.
    pub logprobs: Option<&'a str>,
    /// The choice's unknown keys, as one JSON object.
    pub choice_extra: Option<&'a str>,
    /// The delta's unknown keys, as one JSON object.
    pub delta_extra: Option<&'a str>,
    /// Non-zero when the vendor objects were written by a frame template's recipe (the
    /// template's number in its stream): objects of one recipe differ only in string contents
    /// and number tokens, so the fold need not compare their skeletons. 0: not known.
    pub skeleton: u64,
}

/// Whether a choice's delta carries output (`timing`'s count): a piece of text, reasoning or
/// refusal, content parts, or a tool call's fragment. `texts`: its `reasoning`,
/// `reasoning_content` and `refusal`.
pub fn carries_output(
    content: Option<ContentView<'_>>,
    texts: [Option<&str>; 3],
    calls: bool,
) -> bool {
    let said = |s: Option<&str>| s.is_some_and(|s| !s.is_empty());
    match content {
        Some(ContentView::Text(t)) if !t.is_empty() => true,
        Some(ContentView::Parts(_) | ContentView::Thinking(_)) => true,
        _ => texts.into_iter().any(said) || calls,
    }
}

impl ChunkView<'_> {
    /// Whether this choice's data is output ([`carries_output`]).
    pub fn is_output(&self) -> bool {
        carries_output(
            self.content,
            [self.reasoning, self.reasoning_content, self.refusal],
            !self.tool_calls.is_empty(),
        )
    }

    /// Whether an item without a choice index still carries per-choice data (a choice object
    /// that lacked its `index` key).
    pub(crate) fn carries_choice(&self) -> bool {
        self.finish_reason.is_some()
            || self.content.is_some()
            || self.role.is_some()
            || self.refusal.is_some()
            || self.reasoning.is_some()
            || self.reasoning_content.is_some()
            || !self.tool_calls.is_empty()
            || self.reasoning_details.is_some()
            || self.logprobs.is_some()
            || self.choice_extra.is_some()
            || self.delta_extra.is_some()
    }
}

/// A text field of a chunk that a frame template can leave open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// The `content` text.
    Content,
    /// The `reasoning` text.
    Reasoning,
    /// The `reasoning_content` text.
    ReasoningContent,
    /// The `refusal` text.
    Refusal,
    /// The arguments of the chunk's one tool-call fragment.
    Arguments,
    /// The text of the content's one thinking part's one text part ([`ContentView::Thinking`]).
    Thinking,
}

/// An owned copy of a [`ChunkView`], kept by a frame template: a frame that matches the
/// template folds as this view with new text in its hole.
#[derive(Debug, Default, Clone)]
pub struct ChunkOwned {
    pub(crate) id: Option<Box<str>>,
    pub(crate) created: Option<i64>,
    pub(crate) model: Option<Box<str>>,
    pub(crate) system_fingerprint: Option<Box<str>>,
    pub(crate) service_tier: Option<Box<str>>,
    pub(crate) usage: Option<Box<str>>,
    pub(crate) extra: Option<Box<str>>,
    pub(crate) index: Option<i64>,
    pub(crate) role: Option<Box<str>>,
    pub(crate) content: Option<Box<str>>,
    pub(crate) refusal: Option<Box<str>>,
    pub(crate) reasoning: Option<Box<str>>,
    pub(crate) reasoning_content: Option<Box<str>>,
    pub(crate) tools: Vec<(i64, [Option<Box<str>>; 4])>,
    pub(crate) finish_reason: Option<Box<str>>,
    pub(crate) reasoning_details: Option<Box<str>>,
    pub(crate) logprobs: Option<Box<str>>,
    pub(crate) choice_extra: Option<Box<str>>,
    pub(crate) delta_extra: Option<Box<str>>,
    /// The number of the template whose recipes write the vendor objects of its fits.
    pub(crate) skeleton: u64,
}

pub(crate) fn own(s: Option<&str>) -> Option<Box<str>> {
    s.map(Box::from)
}

impl ChunkOwned {
    /// A copy of `v`; `None` when its content is a list of parts (no template then) other
    /// than one thinking text (whose text is the hole: not kept).
    pub fn new(v: &ChunkView<'_>) -> Option<Self> {
        let content = match v.content {
            Some(ContentView::Parts(parts)) => {
                crate::dialect::chat::thinking_literal(parts)?;
                None
            }
            Some(ContentView::Text(t)) => Some(t.into()),
            Some(ContentView::Thinking(_)) | None => None,
        };
        Some(ChunkOwned {
            id: own(v.id),
            created: v.created,
            model: own(v.model),
            system_fingerprint: own(v.system_fingerprint),
            service_tier: own(v.service_tier),
            usage: own(v.usage),
            extra: own(v.extra),
            index: v.index,
            role: own(v.role),
            content,
            refusal: own(v.refusal),
            reasoning: own(v.reasoning),
            reasoning_content: own(v.reasoning_content),
            tools: v
                .tool_calls
                .iter()
                .map(|t| {
                    (
                        t.index,
                        [own(t.id), own(t.type_), own(t.name), own(t.arguments)],
                    )
                })
                .collect(),
            finish_reason: own(v.finish_reason),
            reasoning_details: own(v.reasoning_details),
            logprobs: own(v.logprobs),
            choice_extra: own(v.choice_extra),
            delta_extra: own(v.delta_extra),
            skeleton: 0,
        })
    }

    /// This chunk's view with `text` in place of its `hole` field (and, with `extras`, those
    /// texts in place of its `extra`, `choice_extra` and `delta_extra`), handed to `f`.
    pub fn view_with(
        &self,
        hole: Hole,
        text: &str,
        extras: Option<&[Option<Cow<'_, str>>; 4]>,
        f: impl FnOnce(&ChunkView<'_>),
    ) {
        fn pick_extra<'s>(
            extras: Option<&'s [Option<Cow<'_, str>>; 4]>,
            n: usize,
            own: &'s Option<Box<str>>,
        ) -> Option<&'s str> {
            match extras {
                Some(built) => built.get(n).and_then(|e| e.as_deref()),
                None => own.as_deref(),
            }
        }
        type Owned = (i64, [Option<Box<str>>; 4]);
        fn call<'s>(n: usize, owned: &'s Owned, hole: Hole, text: &'s str) -> ToolView<'s> {
            let (index, [id, type_, name, arguments]) = owned;
            ToolView {
                index: *index,
                id: id.as_deref(),
                type_: type_.as_deref(),
                name: name.as_deref(),
                arguments: if n == 0 && hole == Hole::Arguments {
                    Some(text)
                } else {
                    arguments.as_deref()
                },
            }
        }
        let tool = |n: usize, owned| call(n, owned, hole, text);
        // A template frame has at most one call fragment: no vector for it (this runs for
        // every frame that fits the template).
        let one: [ToolView<'_>; 1];
        let many: Vec<ToolView<'_>>;
        let tools: &[ToolView<'_>] = match self.tools.as_slice() {
            [] => &[],
            [only] => {
                one = [tool(0, only)];
                &one
            }
            all => {
                many = all.iter().enumerate().map(|(n, t)| tool(n, t)).collect();
                &many
            }
        };
        fn pick<'s>(
            hole: Hole,
            field: Hole,
            text: &'s str,
            value: &'s Option<Box<str>>,
        ) -> Option<&'s str> {
            if hole == field {
                Some(text)
            } else {
                value.as_deref()
            }
        }
        f(&ChunkView {
            id: self.id.as_deref(),
            created: self.created,
            model: self.model.as_deref(),
            system_fingerprint: self.system_fingerprint.as_deref(),
            service_tier: self.service_tier.as_deref(),
            usage: self.usage.as_deref(),
            extra: pick_extra(extras, 0, &self.extra),
            index: self.index,
            role: self.role.as_deref(),
            content: match hole {
                Hole::Thinking => Some(ContentView::Thinking(text)),
                _ => pick(hole, Hole::Content, text, &self.content).map(ContentView::Text),
            },
            refusal: pick(hole, Hole::Refusal, text, &self.refusal),
            reasoning: pick(hole, Hole::Reasoning, text, &self.reasoning),
            reasoning_content: pick(hole, Hole::ReasoningContent, text, &self.reasoning_content),
            tool_calls: tools,
            finish_reason: self.finish_reason.as_deref(),
            reasoning_details: pick_extra(extras, 3, &self.reasoning_details),
            logprobs: self.logprobs.as_deref(),
            choice_extra: pick_extra(extras, 1, &self.choice_extra),
            delta_extra: pick_extra(extras, 2, &self.delta_extra),
            skeleton: if extras.is_some() { self.skeleton } else { 0 },
        });
    }

    /// The role of the delta.
    pub fn role(&self) -> Option<&str> {
        self.role.as_deref()
    }

    /// Whether the chunk, its choice or its delta has keys the decoder does not know.
    pub fn has_vendor_keys(&self) -> bool {
        self.extra.is_some() || self.choice_extra.is_some() || self.delta_extra.is_some()
    }

    /// The one tool-call fragment's index, id, type and name, when there is one fragment
    /// and it has all four.
    pub fn named_call(&self) -> Option<(i64, &str, &str, &str)> {
        match self.tools.as_slice() {
            [(index, [Some(id), Some(type_), Some(name), _])] => Some((*index, id, type_, name)),
            _ => None,
        }
    }

    /// This chunk without its delta's role and refusal: the text chunks that follow a
    /// stream's first one (which names the role) hold only their text.
    pub fn without_role(&self) -> ChunkOwned {
        ChunkOwned {
            role: None,
            refusal: None,
            ..self.clone()
        }
    }

    /// This chunk with its tool-call fragments' ids, types and names taken out: the
    /// fragments that follow a call's first one hold only its index and arguments.
    pub fn without_call_names(&self) -> ChunkOwned {
        let mut owned = self.clone();
        for (_, [id, type_, name, _]) in &mut owned.tools {
            (*id, *type_, *name) = (None, None, None);
        }
        owned
    }

    /// Numbers the template this copy belongs to (see [`ChunkView::skeleton`]).
    pub fn with_skeleton(self, skeleton: u64) -> Self {
        ChunkOwned { skeleton, ..self }
    }
}
