//! The JSON tree the folds build and the readers of raw JSON one level deep: [`Out`], a
//! result value (built parts, or JSON text kept as sent until it is converted), [`Map`], its
//! insertion-ordered object, and [`Json`], one value read one level deep. Below the dialects
//! (whose decoders read objects' entries with it) and the folds (which build results of it).
//!
//! Carries nothing across calls. Cost: a `Map` looks keys up through a hash index once it has
//! more than a handful of keys, so hostile objects with many keys cannot make merging
//! quadratic; a [`Json`] read is one pass over the value's top level.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::read::Str;

/// A value of a fold's result: JSON-shaped, with raw JSON text kept as is until it is
/// converted (to Python by `py`, or to JSON text by [`Out::to_json`] for tests).
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    /// JSON `null`.
    Null,
    /// A JSON boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// One JSON document as sent (a number, an object...), converted when the result is built.
    Json(Box<str>),
    /// A list of values.
    List(Vec<Out>),
    /// An object.
    Map(Map),
    /// Binary data (Bedrock's redacted reasoning: bytes, as boto3 gives a blob).
    Bytes(Vec<u8>),
    /// An object kept as sent with keys set over it ([`Patched`]).
    Patched(Box<Patched>),
}

/// A JSON object kept as its text, with keys set over it as [`Map::set`] sets them: a key the
/// object has keeps its place and takes the new value, the others follow in order. What a
/// fold builds when it changes a few keys of an object it kept as sent (a Messages block whose
/// deltas came, a usage a later event updates): reading the object into a [`Map`] cost an
/// allocation per key, and converting it a conversion per value; converted as one object and
/// then the keys set, as a `dict` is updated.
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    base: Box<str>,
    over: Map,
}

impl Patched {
    /// `base` set over by `over`. `base` is a JSON object's text (the caller read it as one:
    /// any other text would be read as an object without keys).
    pub fn new(base: &str, over: Map) -> Patched {
        Patched {
            base: base.into(),
            over,
        }
    }

    /// The object as sent.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The keys set over it.
    pub fn over(&self) -> &Map {
        &self.over
    }

    /// The value of `key`: the one set over the object, or the object's own (the last of
    /// duplicate keys).
    pub fn get(&self, key: &str) -> Option<Out> {
        match self.over.get(key) {
            Some(value) => Some(value.clone()),
            None => entry(&object_entries(&self.base)?, key).map(Out::json),
        }
    }

    /// The object as a [`Map`] (its keys read, then the keys set over it).
    pub fn to_map(&self) -> Map {
        let mut map = object_map(&self.base).unwrap_or_default();
        for (key, value) in self.over.iter() {
            map.set(key, value.clone());
        }
        map
    }
}

impl Out {
    /// `Out::Json` of a document's text.
    pub fn json(text: &str) -> Out {
        Out::Json(text.into())
    }

    /// `Out::Str`, or `Out::Null` for `None`.
    pub fn str_or_null(value: Option<&str>) -> Out {
        value.map_or(Out::Null, |s| Out::Str(s.to_owned()))
    }

    /// The value of `key` when this is an object (a map, or the JSON text of an object: the
    /// last of duplicate keys, as a map keeps them); `None` otherwise.
    pub fn key(&self, key: &str) -> Option<Out> {
        match self {
            Out::Map(map) => map.get(key).cloned(),
            Out::Json(text) => entry(&Json::object(text)?, key).map(|v| Out::json(v.get())),
            Out::Patched(p) => p.get(key),
            _ => None,
        }
    }

    /// Whether this is JSON `null` (either `Out::Null` or the JSON text `null`).
    pub fn is_null(&self) -> bool {
        match self {
            Out::Null => true,
            Out::Json(text) => text.trim() == "null",
            _ => false,
        }
    }

    /// The value as compact JSON text (raw JSON leaves are copied as sent). For tests and
    /// for the command line; Python callers get objects built directly.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Out::Null => out.push_str("null"),
            Out::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Out::Int(i) => out.push_str(&i.to_string()),
            Out::Str(s) => push_json_string(out, s),
            Out::Json(text) => out.push_str(text.trim()),
            // JSON has no bytes: base64, as AWS's JSON protocols write a blob.
            Out::Bytes(b) => push_json_string(out, &crate::base64::encode(b)),
            Out::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Out::Patched(p) => Out::Map(p.to_map()).write_json(out),
            Out::Map(map) => {
                out.push('{');
                for (i, (key, value)) in map.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_json_string(out, key);
                    out.push(':');
                    value.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

use super::write::push_str as push_json_string;

/// Above this many keys a [`Map`] keeps a hash index of its keys (a hostile object of many
/// keys stays linear). Below, a lookup compares keys one by one, which for the ~26 keys of a
/// Responses `response` object costs less than hashing them: building that map with the index
/// (from 16 keys on) was half of folding `response.created` (~2.5 us of SipHash, key copies
/// and rehashing).
const INDEX_FROM: usize = 32;

/// Keys in insertion order, a later `set` of the same key replacing the value in place (as a
/// Python dict does), found through a hashed index once there are more than [`INDEX_FROM`]
/// (hostile input can send tens of thousands of keys in one object: a scan per key would be
/// quadratic). The one keyed map of the folds: [`Map`] (a JSON object under construction) and
/// the chat fold's merge of vendor keys.
#[derive(Debug, Clone)]
pub struct Keyed<V> {
    entries: Vec<(Key, V)>,
    /// Boxed: most maps have no index, and an `Out` is as large as its largest variant.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<String, usize>>>,
}

/// A JSON object under construction.
pub type Map = Keyed<Out>;

/// The key of an entry of a [`Keyed`] map: one of the keys the providers' objects share
/// ([`KNOWN_KEYS`]) without an allocation of its own (a result is a few dozen small maps:
/// copying each key was a quarter of building a Messages result), any other key owned.
/// A known key is its text and its place in [`KNOWN_KEYS`] (a caller building Python objects
/// keeps one string per known key: [`Keyed::iter_known`]; the text is held too, as a fold's
/// lookups compare it on every event).
#[derive(Debug, Clone)]
enum Key {
    Known(&'static str, u16),
    Owned(Box<str>),
}

impl Key {
    /// The key `key`, known as `known` (its [`known_key`]).
    fn of(key: &str, known: Option<(&'static str, u16)>) -> Key {
        match known {
            Some((text, i)) => Key::Known(text, i),
            None => Key::Owned(key.into()),
        }
    }

    #[cfg(test)]
    fn new(key: &str) -> Key {
        Key::of(key, known_key(key))
    }

    fn as_str(&self) -> &str {
        match self {
            Key::Known(text, _) => text,
            Key::Owned(key) => key,
        }
    }
}

/// How many keys a [`Map`] knows ([`Keyed::iter_known`] gives each its place below this).
pub const KNOWN_COUNT: usize = KNOWN_KEYS.len();

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

/// The keys of the dialects' results and usage objects that [`Key`] holds without a copy.
const KNOWN_KEYS: &[&str] = &[
    // shared
    "id",
    "type",
    "role",
    "model",
    "content",
    "text",
    "usage",
    "index",
    "name",
    "input",
    "arguments",
    "status",
    "object",
    "created",
    "created_at",
    "message",
    "error",
    "metadata",
    "annotations",
    "logprobs",
    "refusal",
    "signature",
    "thinking",
    "citations",
    "data",
    "service_tier",
    "system_fingerprint",
    "call_id",
    "output",
    "summary",
    "encrypted_content",
    "tool_use_id",
    "is_error",
    "container",
    "stop_reason",
    "stop_sequence",
    "stop_details",
    // chat
    "choices",
    "delta",
    "finish_reason",
    "tool_calls",
    "function",
    "reasoning",
    "reasoning_content",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "prompt_tokens_details",
    "completion_tokens_details",
    "cached_tokens",
    "reasoning_tokens",
    "audio_tokens",
    "accepted_prediction_tokens",
    "rejected_prediction_tokens",
    "audio",
    "provider",
    "native_finish_reason",
    "x_groq",
    "obfuscation",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
    "num_sources_used",
    "citations_tokens",
    "queue_time",
    "prompt_time",
    "completion_time",
    "total_time",
    "cost",
    "is_byok",
    "cost_details",
    // messages
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cache_creation",
    "ephemeral_5m_input_tokens",
    "ephemeral_1h_input_tokens",
    "server_tool_use",
    "web_search_requests",
    "web_fetch_requests",
    "inference_geo",
    "redacted_thinking",
    "tool_use",
    "web_search_tool_result",
    "cited_text",
    "url",
    "title",
    "encrypted_index",
    "page_age",
    "document_index",
    "start_char_index",
    "end_char_index",
    // responses
    "instructions",
    "max_output_tokens",
    "max_tool_calls",
    "parallel_tool_calls",
    "previous_response_id",
    "prompt_cache_key",
    "prompt_cache_retention",
    "safety_identifier",
    "store",
    "temperature",
    "top_p",
    "top_logprobs",
    "truncation",
    "user",
    "tools",
    "tool_choice",
    "background",
    "incomplete_details",
    "conversation",
    "billing",
    "payer",
    "input_tokens_details",
    "output_tokens_details",
    "output_text",
    "verbosity",
    "format",
    "effort",
    "generate_summary",
    "prompt",
    "user_agent",
    "reasoning_text",
    "summary_text",
    "function_call",
    "completed_at",
    "outputs",
    "code",
    "container_id",
    "action",
    "results",
    "queries",
    // gemini
    "candidates",
    "parts",
    "finishReason",
    "usageMetadata",
    "modelVersion",
    "responseId",
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
    "promptTokensDetails",
    "candidatesTokensDetails",
    "cacheTokensDetails",
    "modality",
    "tokenCount",
    "thought",
    "thoughtSignature",
    "functionCall",
    "args",
    "safetyRatings",
    "citationMetadata",
    "groundingMetadata",
    "avgLogprobs",
    "createTime",
    "promptFeedback",
    // converse
    "stopReason",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
    "metrics",
    "latencyMs",
    "toolUse",
    "toolUseId",
    "reasoningContent",
    "reasoningText",
    "redactedContent",
    "additionalModelResponseFields",
    "trace",
    "performanceConfig",
];

/// `key` as one of [`KNOWN_KEYS`] and its place there (the first, for a key listed twice), if
/// it is one: compared only with the known keys of its length.
fn known_key(key: &str) -> Option<(&'static str, u16)> {
    static BY_LEN: std::sync::OnceLock<Vec<Vec<(&'static str, u16)>>> = std::sync::OnceLock::new();
    let by_len = BY_LEN.get_or_init(|| {
        let mut by_len: Vec<Vec<(&'static str, u16)>> = Vec::new();
        for (i, key) in KNOWN_KEYS.iter().enumerate() {
            if by_len.len() <= key.len() {
                by_len.resize_with(key.len() + 1, Vec::new);
            }
            let (Some(same), Ok(i)) = (by_len.get_mut(key.len()), u16::try_from(i)) else {
                continue;
            };
            if !same.iter().any(|(k, _)| k == key) {
                same.push((key, i));
            }
        }
        by_len
    });
    // The last byte first (keys of a length share their first bytes more often: `input_`,
    // `output_`, `cache_`), then the bytes.
    let last = key.as_bytes().last();
    by_len
        .get(key.len())?
        .iter()
        .find(|(k, _)| k.as_bytes().last() == last && *k == key)
        .copied()
}

impl<V> Default for Keyed<V> {
    fn default() -> Self {
        Keyed {
            entries: Vec::new(),
            index: None,
        }
    }
}

impl<V: PartialEq> PartialEq for Keyed<V> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<V> Keyed<V> {
    /// An empty map.
    pub fn new() -> Self {
        Keyed::default()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the map has no key.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Where `key` is among the entries, in insertion order.
    pub fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    /// The value of `key`, if the map has it.
    pub fn get(&self, key: &str) -> Option<&V> {
        let i = self.position(key)?;
        self.entries.get(i).map(|(_, v)| v)
    }

    /// The value of `key`, to change in place, if the map has it.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let i = self.position(key)?;
        self.entries.get_mut(i).map(|(_, v)| v)
    }

    /// Whether the map has `key`.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// An empty map with room for `keys` keys (a result's map, whose keys are known).
    pub fn with_capacity(keys: usize) -> Self {
        Keyed {
            entries: Vec::with_capacity(keys),
            index: None,
        }
    }

    /// Appends `key`, which the caller knows the map does not have: [`set`](Self::set)
    /// without the search for it. Only for a result's fixed keys, each set once and before any
    /// key the input names (the search was most of building a small result map); a debug
    /// build checks that the key is new.
    pub fn set_new(&mut self, key: &'static str, value: V) {
        if self.index.is_some() || self.entries.len() >= INDEX_FROM {
            return self.set(key, value);
        }
        debug_assert!(!self.contains_key(key), "{key:?} set twice as new");
        self.entries.push((Key::of(key, known_key(key)), value));
    }

    /// Sets `key` to `value`: in place when the key exists, else appended.
    pub fn set(&mut self, key: &str, value: V) {
        // Found by its text (a fold's per-event set replaces a value: no known-key lookup).
        if let Some(slot) = self.get_mut(key) {
            *slot = value;
            return;
        }
        let at = self.entries.len();
        self.entries.push((Key::of(key, known_key(key)), value));
        if let Some(index) = &mut self.index {
            index.insert(key.to_owned(), at);
        } else if self.entries.len() > INDEX_FROM {
            self.index = Some(Box::new(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.as_str().to_owned(), i))
                    .collect(),
            ));
        }
    }

    /// The value of `key`, inserting `default()` first when the key is missing.
    #[allow(clippy::indexing_slicing)] // `i` is a found position or the entry just pushed
    pub fn entry(&mut self, key: &str, default: impl FnOnce() -> V) -> &mut V {
        let i = match self.position(key) {
            Some(i) => i,
            None => {
                self.set(key, default());
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    /// Removes `key`, keeping the order of the others.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.position(key)?;
        let (_, value) = self.entries.remove(i);
        if self.index.is_some() {
            self.index = Some(Box::new(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.as_str().to_owned(), i))
                    .collect(),
            ));
        }
        Some(value)
    }

    /// The keys and their values, in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys and their values in insertion order, each key with its place among the keys
    /// a map knows (below [`KNOWN_COUNT`]) when it is one.
    pub fn iter_known(&self) -> impl Iterator<Item = (Option<usize>, &str, &V)> {
        self.entries.iter().map(|(k, v)| match k {
            Key::Known(text, i) => (Some(usize::from(*i)), *text, v),
            Key::Owned(key) => (None, &**key, v),
        })
    }

    /// The keys and their values, to change in place, in insertion order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut V)> {
        self.entries.iter_mut().map(|(k, v)| (k.as_str(), v))
    }
}

impl FromIterator<(String, Out)> for Map {
    fn from_iter<T: IntoIterator<Item = (String, Out)>>(iter: T) -> Self {
        let mut map = Map::new();
        for (k, v) in iter {
            map.set(&k, v);
        }
        map
    }
}

/// The value of `key` among a JSON object's entries ([`Json::object`]): the last of duplicate
/// keys, as a [`Map`] keeps them.
pub fn entry<'a, V: Copy>(entries: &[(Cow<'a, str>, V)], key: &str) -> Option<V> {
    entries
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| *v)
}

/// A JSON object's entries as a `Map` of raw values; `None` when `text` is not an object.
pub fn object_map(text: &str) -> Option<Map> {
    let mut map = Map::new();
    for (key, value) in object_entries(text)? {
        map.set(&key, Out::json(value));
    }
    Some(map)
}

/// The entries of `text` when it is a JSON object, in order (duplicate keys kept), each value
/// as its text: read in one pass by the strict cursor (`super::cursor::entries`), or by
/// serde_json where the cursor is not sure (a key with an escape, nesting past its depth,
/// anything malformed). The folds read the objects they keep as sent this way when a result
/// is built (serde_json's one-level reading was a fifth of a short Messages stream).
pub fn object_entries(text: &str) -> Option<Vec<(Cow<'_, str>, &str)>> {
    super::cursor::entries(text).or_else(|| entries_by_serde(text))
}

/// serde_json's reading of [`object_entries`] ([`Json::object`], values as their text).
pub(crate) fn entries_by_serde(text: &str) -> Option<Vec<(Cow<'_, str>, &str)>> {
    Some(
        Json::object(text)?
            .into_iter()
            .map(|(k, v)| (k, v.get()))
            .collect(),
    )
}

/// The string a value holds, if it is one (an `Out::Str`, or the JSON text of a string).
pub fn string_of(value: Option<&Out>) -> Option<String> {
    match value? {
        Out::Str(s) => Some(s.clone()),
        Out::Json(t) => json_string(t).map(Cow::into_owned),
        _ => None,
    }
}

/// The string the JSON text `text` is, if it is one: read by the strict cursor, or by
/// serde_json where the cursor is not sure.
pub fn json_string(text: &str) -> Option<Cow<'_, str>> {
    match super::cursor::string(text) {
        Some(s) => Some(s),
        None => match Json::read(text)? {
            Json::Str(s) => Some(s),
            _ => None,
        },
    }
}

/// The items of a value that is a list (an `Out::List`, or the JSON text of an array).
pub fn list_of(value: Option<&Out>) -> Option<Vec<Out>> {
    match value? {
        Out::List(items) => Some(items.clone()),
        Out::Json(t) => match Json::read(t)? {
            Json::Array(items) => Some(items.iter().map(|i| Out::json(i.get())).collect()),
            _ => None,
        },
        _ => None,
    }
}

/// What one JSON value is, read one level deep (nested values stay raw JSON text).
#[derive(Debug)]
pub enum Json<'a> {
    /// JSON `null`.
    Null,
    /// A string, its escapes decoded.
    Str(Cow<'a, str>),
    /// An array's items, as raw JSON.
    Array(Vec<&'a RawValue>),
    /// An object's entries in order (duplicate keys kept), their values as raw JSON.
    Object(Vec<(Cow<'a, str>, &'a RawValue)>),
    /// A number or a boolean, as sent.
    Scalar(&'a str),
}

impl<'a> Json<'a> {
    /// Reads `text` one level deep; `None` if it is not one JSON value (never for text that
    /// came out of a decoded document).
    pub fn read(text: &'a str) -> Option<Json<'a>> {
        let trimmed = text.trim();
        Some(match trimmed.as_bytes().first()? {
            b'n' => Json::Null,
            b'"' => Json::Str(serde_json::from_str::<Str<'a>>(trimmed).ok()?.0),
            b'[' => Json::Array(serde_json::from_str::<Vec<&'a RawValue>>(trimmed).ok()?),
            b'{' => Json::Object(serde_json::from_str::<Entries<'a>>(trimmed).ok()?.0),
            _ => Json::Scalar(trimmed),
        })
    }

    /// The entries of each object of `text` when it is a JSON array of objects only (one
    /// pass: no second read of each element).
    pub fn objects(text: &'a str) -> Option<Vec<Vec<Entry<'a>>>> {
        let all: Vec<Entries<'a>> = serde_json::from_str(text.trim()).ok()?;
        Some(all.into_iter().map(|entries| entries.0).collect())
    }

    /// The entries of `text` when it is a JSON object.
    pub fn object(text: &'a str) -> Option<Vec<(Cow<'a, str>, &'a RawValue)>> {
        match Json::read(text)? {
            Json::Object(entries) => Some(entries),
            _ => None,
        }
    }
}

/// The members of the JSON object `text` that `shown` does not claim, as one JSON object (in
/// order, duplicate keys kept); `None` when none is left or `text` is not an object. What an
/// item's typed fields leave out of its raw JSON (`ssewire --events` prints it as `"other"`).
pub fn members_except(text: &str, shown: impl Fn(&str, &RawValue) -> bool) -> Option<String> {
    let entries = Json::object(text)?;
    let mut out = String::with_capacity(text.len());
    for (key, value) in &entries {
        if shown(key, value) {
            continue;
        }
        out.push(if out.is_empty() { '{' } else { ',' });
        crate::json::write::push_str(&mut out, key);
        out.push(':');
        out.push_str(value.get());
    }
    if out.is_empty() {
        return None;
    }
    out.push('}');
    Some(out)
}

/// One entry of a JSON object read one level deep: its key, and its value as sent.
pub type Entry<'a> = (Cow<'a, str>, &'a RawValue);

/// A JSON value read one level deep when it is an object (its entries), else only checked:
/// for a decoder that wants an object's entries without a second pass over it.
pub enum ObjectOr<'a> {
    /// An object's entries in order, their values as raw JSON.
    Object(Vec<Entry<'a>>),
    /// Any other JSON value (checked, not kept).
    Other,
}

impl<'de> serde::Deserialize<'de> for ObjectOr<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ObjectOr<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Ok(ObjectOr::Object(Entries::visit(map)?.0))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(ObjectOr::Other)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(ObjectOr::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// The text of the JSON object of `doc` whose entries (values as slices of `doc`) are
/// `entries`: from its `{` to its `}`, found from the first value back over its key and from
/// the last value on (`{}` for an object without entries). `None` if the values are not slices
/// of `doc` or the text around them is not an object's (never for entries a decode of `doc`
/// read).
pub fn object_text<'a>(doc: &'a str, entries: &[Entry<'a>]) -> Option<&'a str> {
    const SPACE: [u8; 4] = [b' ', b'\t', b'\n', b'\r'];
    let (Some((_, first)), Some((_, last))) = (entries.first(), entries.last()) else {
        return Some("{}");
    };
    let bytes = doc.as_bytes();
    let offset =
        |value: &RawValue| (value.get().as_ptr() as usize).checked_sub(doc.as_ptr() as usize);
    // Back from the first value: spaces, `:`, spaces, the key (to the quote no odd run of
    // backslashes escapes), spaces, `{`.
    let mut at = offset(first)?;
    let back = |at: &mut usize| {
        while *at > 0 && SPACE.contains(bytes.get(*at - 1)?) {
            *at -= 1;
        }
        Some(())
    };
    back(&mut at)?;
    at = at.checked_sub(1).filter(|&i| bytes.get(i) == Some(&b':'))?;
    back(&mut at)?;
    at = at.checked_sub(1).filter(|&i| bytes.get(i) == Some(&b'"'))?;
    loop {
        at = at.checked_sub(1)?;
        if bytes.get(at) == Some(&b'"') {
            let escapes = bytes
                .get(..at)?
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if escapes % 2 == 0 {
                break;
            }
        }
    }
    back(&mut at)?;
    let start = at.checked_sub(1).filter(|&i| bytes.get(i) == Some(&b'{'))?;
    // On from the last value: spaces, `}`.
    let mut end = offset(last)? + last.get().len();
    while bytes.get(end).is_some_and(|b| SPACE.contains(b)) {
        end += 1;
    }
    (bytes.get(end) == Some(&b'}')).then_some(())?;
    doc.get(start..end + 1)
}

/// A JSON object's entries in arrival order, values left raw.
struct Entries<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Entries<'de> {
    fn visit<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut out = Vec::new();
        while let Some(key) = map.next_key::<Str<'de>>()? {
            out.push((key.0, map.next_value::<&'de RawValue>()?));
        }
        Ok(Entries(out))
    }
}

impl<'de> serde::Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                Entries::visit(map)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
                Err(de::Error::custom("not an object"))
            }
        }
        d.deserialize_map(V)
    }
}

/// Checks that `text` is one JSON document that converts to Python, by the crate's one JSON
/// validator (`crate::json::partial`): the same nesting limit as the converter (128 levels), and,
/// as the converter reads them, numbers outside the float range are valid (serde_json refuses
/// `1e400`; `json.loads` reads it as `inf`). Linear in the text.
pub fn check_json(text: &str) -> Result<(), crate::json::partial::Error> {
    let mut p = crate::json::partial::PartialJson::new();
    p.feed_str(text)?;
    p.finish()
}

impl Map {
    /// Merges the keys of the JSON object `text`: a later non-null value replaces the earlier
    /// one; a `null` only fills a key not seen before. Text that is not an object is ignored.
    /// Like [`Map::merge_non_null`], except that an object value merges into an object the
    /// map already holds under that key, key by key and with the same rules (a vendor
    /// extension object sent in parts: Groq's `x_groq` has `seed` in the first chunk and
    /// `usage` in the last). Recurses once per JSON level, within the decoder's depth limit.
    pub fn merge_objects(&mut self, text: &str) {
        for (key, value) in Json::object(text).unwrap_or_default() {
            let value = value.get();
            if value.trim() == "null" {
                if !self.contains_key(&key) {
                    self.set(&key, Out::Null);
                }
                continue;
            }
            let earlier = match self.get_mut(&key) {
                Some(Out::Map(m)) => Some(std::mem::take(m)),
                Some(Out::Json(t)) => object_map(t),
                _ => None,
            };
            match earlier {
                Some(mut merged) if Json::object(value).is_some() => {
                    merged.merge_objects(value);
                    self.set(&key, Out::Map(merged));
                }
                _ => self.set(&key, Out::json(value)),
            }
        }
    }

    /// Merges the keys of the JSON object `text`: a non-null value replaces the earlier one; a
    /// `null` only fills a key not seen before. Text that is not an object is ignored.
    pub fn merge_non_null(&mut self, text: &str) {
        for (key, value) in object_entries(text).unwrap_or_default() {
            let null = value.trim() == "null";
            if !null || !self.contains_key(&key) {
                self.set(&key, Out::json(value));
            }
        }
    }
}

#[cfg(test)]
mod tests;
