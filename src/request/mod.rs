//! Translating a request between dialects (API.md section 10): a client's request body in one
//! dialect read into one neutral model ([`Request`]: the system prompt, the turns with their
//! text, images, documents, tool calls and tool results, reasoning carried back, tool
//! definitions, `tool_choice`, the settings), and written in another, streaming. What the
//! target cannot take is named in the notes, once per kind; nothing is dropped silently.
//!
//! One module per dialect ([`chat`], [`messages`], [`responses`], [`gemini`]), each with its
//! reader and its writer; the rules shared by all (which settings map to which, the reasoning
//! table) live here. Requests are small and read once: they are decoded into
//! `serde_json::Value`, not borrowed structs. Nothing is carried across calls.

use serde_json::{Map, Value};

use crate::dialect::Dialect;

crate::dialect::registry::dialects!(crate::dialect::registry::modules, pub);
mod shape;

pub use shape::{
    check_model, is_setting, is_setting_path, model_segment, path_segment, stream_path,
    system_text, Setting, MAX_MODEL, SETTINGS,
};
use shape::{
    orphan_results, read_settings, restore_carried, system_turns_into_prompt, write_settings,
};

/// A body that is not a request of its dialect: what is wrong, and where (a JSON path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// What is wrong with the body.
    pub message: String,
    /// Where in the body, as a JSON path (`$.messages[0].content`).
    pub path: String,
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at {})", self.message, self.path)
    }
}

impl std::error::Error for RequestError {}

/// Shorthand for a [`RequestError`] at `path`.
pub fn error<T>(path: impl Into<String>, message: impl Into<String>) -> Result<T, RequestError> {
    Err(RequestError {
        message: message.into(),
        path: path.into(),
    })
}

/// Who speaks a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A system (or developer) message in the middle of the conversation: its turns hold
    /// text only (the system prompt before the first turn is [`Request::system`]).
    System,
}

/// Media given by URL (a `data:` URL included) or as base64 data with its type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Media {
    /// The URL, a `data:` URL included.
    pub url: Option<String>,
    /// The base64 data.
    pub data: Option<String>,
    /// The media type (`image/png`, `application/pdf`).
    pub media_type: Option<String>,
    /// A file name, where the source gave one.
    pub name: Option<String>,
    /// A file uploaded to the provider, by its id (valid only there).
    pub file_id: Option<String>,
}

impl Media {
    /// OpenAI's `input_audio` format of audio data (`wav`, `mp3`), by its media type.
    pub fn audio_format(&self) -> Option<&'static str> {
        match self.media_type.as_deref()? {
            "audio/wav" | "audio/x-wav" | "audio/wave" => Some("wav"),
            "audio/mp3" | "audio/mpeg" => Some("mp3"),
            _ => None,
        }
    }

    /// An `input_audio` object's media (OpenAI: `{"data": base64, "format": "wav"}`).
    pub fn from_input_audio(audio: Option<&Value>) -> Media {
        let field = |k: &str| audio.and_then(|a| a.get(k)).and_then(Value::as_str);
        Media {
            data: field("data").map(str::to_owned),
            media_type: Some(format!("audio/{}", field("format").unwrap_or("wav"))),
            ..Media::default()
        }
    }

    /// The base64 data and media type, from `data` or from a `data:` URL.
    pub fn inline(&self) -> Option<(String, String)> {
        if let (Some(data), Some(kind)) = (&self.data, &self.media_type) {
            return Some((data.clone(), kind.clone()));
        }
        let rest = self.url.as_deref()?.strip_prefix("data:")?;
        let (head, data) = rest.split_once(',')?;
        let kind = head.strip_suffix(";base64")?;
        Some((data.to_owned(), kind.to_owned()))
    }

    /// A URL for it: its own, or a `data:` URL of its data.
    pub fn as_url(&self) -> Option<String> {
        match (&self.url, &self.data) {
            (Some(url), _) => Some(url.clone()),
            (None, Some(data)) => Some(format!(
                "data:{};base64,{data}",
                self.media_type
                    .as_deref()
                    .unwrap_or("application/octet-stream")
            )),
            _ => None,
        }
    }
}

/// One piece of a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image.
    Image(Media),
    /// A document (a PDF, a text file) given whole.
    Document(Media),
    /// The assistant calls a tool: `arguments` is JSON text.
    Call {
        /// The call's id, which its result names.
        id: String,
        /// The called tool's name.
        name: String,
        /// The call's arguments, as JSON text.
        arguments: String,
    },
    /// A tool's result, under the call it answers (`name`: the called tool, when known).
    Result {
        /// The id of the call it answers.
        id: String,
        /// The called tool's name, when known.
        name: Option<String>,
        /// The result's content, as parts.
        content: Vec<Part>,
        /// Whether the result reports an error (Anthropic's `is_error`).
        error: bool,
    },
    /// The model's reasoning carried back in the history, in the form of the dialect that
    /// made it (each target reads only its own form).
    Reasoning(Reasoning),
    /// A content part of a type the reader does not know (its type): taken out before any
    /// writer runs, and noted ([`Request::take_unknown`]); never placeholder text.
    Unknown(String),
}

/// Reasoning of an earlier turn, as its dialect keeps it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reasoning {
    /// The dialect whose form this is, when known.
    pub from: Option<Dialect>,
    /// The model's reasoning text (empty when only a signature or encrypted form was kept).
    pub text: String,
    /// Anthropic's signature, Gemini's thought signature.
    pub signature: Option<String>,
    /// Responses' reasoning item id.
    pub id: Option<String>,
    /// Responses' `encrypted_content`, Anthropic's `redacted_thinking` data.
    pub encrypted: Option<String>,
}

/// One turn of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Who speaks the turn.
    pub role: Role,
    /// The turn's parts, in order.
    pub parts: Vec<Part>,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: Option<String>,
    /// The JSON schema of its arguments (an object schema).
    pub parameters: Value,
    /// Whether the arguments must match the schema strictly (OpenAI's `strict`).
    pub strict: Option<bool>,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model chooses whether to call a tool.
    Auto,
    /// The model calls no tool.
    None,
    /// Some tool (chat `required`, Messages `any`, Gemini `ANY`).
    Required,
    /// The model must call the tool of this name.
    Named(String),
}

/// Structured output: the answer must match a JSON schema (or, with no schema, be JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The schema's name (OpenAI's `json_schema.name`).
    pub name: Option<String>,
    /// The JSON schema the answer must match; `None` when any JSON will do.
    pub schema: Option<Value>,
    /// Whether the answer must match the schema strictly (OpenAI's `strict`).
    pub strict: Option<bool>,
}

/// The reasoning setting, as the source spelled it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Thinking {
    /// An effort level (`minimal`, `low`, `medium`, `high`, `xhigh`, `max`; Gemini's levels).
    Effort(String),
    /// A token budget.
    Budget(u64),
    /// No reasoning.
    Off,
}

/// Effort levels and the budgets they stand for, both ways (README, "Translating requests").
pub const EFFORT_BUDGETS: [(&str, u64); 6] = [
    ("minimal", 1024),
    ("low", 2048),
    ("medium", 8192),
    ("high", 16384),
    ("xhigh", 24576),
    ("max", 32768),
];

impl Thinking {
    /// The budget of an effort (its row in [`EFFORT_BUDGETS`]), or the budget itself.
    pub fn budget(&self) -> Option<u64> {
        match self {
            Thinking::Budget(n) => Some(*n),
            Thinking::Effort(e) => EFFORT_BUDGETS
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(e))
                .map(|(_, n)| *n),
            Thinking::Off => None,
        }
    }

    /// The effort of a budget (the smallest level whose budget reaches it), or the effort
    /// itself, in the levels `allowed`.
    pub fn effort(&self, allowed: &[&'static str]) -> Option<&'static str> {
        let wanted = match self {
            Thinking::Off => return None,
            Thinking::Effort(e) => {
                if let Some(same) = allowed.iter().find(|a| a.eq_ignore_ascii_case(e)) {
                    return Some(same);
                }
                self.budget()?
            }
            Thinking::Budget(n) => *n,
        };
        let level = EFFORT_BUDGETS
            .iter()
            .filter(|(name, _)| allowed.contains(name))
            .find(|(_, n)| *n >= wanted)
            .or_else(|| {
                EFFORT_BUDGETS
                    .iter()
                    .rev()
                    .find(|(name, _)| allowed.contains(name))
            })?;
        allowed.iter().find(|a| **a == level.0).copied()
    }
}

/// What the target could not take, once per kind, in order (a set beside the list: a body
/// with many unknown keys costs linear time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes(pub Vec<String>, std::collections::HashSet<String>);

impl Notes {
    /// Adds `note` unless a note of that text was added before.
    pub fn add(&mut self, note: impl Into<String>) {
        let note = note.into();
        if self.1.insert(note.clone()) {
            self.0.push(note);
        }
    }
}

/// A request in the neutral model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    /// The model the body names.
    pub model: Option<String>,
    /// The system prompt's texts, in order.
    pub system: Vec<String>,
    /// The conversation's turns, in order.
    pub turns: Vec<Turn>,
    /// The tools the model may call.
    pub tools: Vec<Tool>,
    /// Whether and which tool the model must call.
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one turn.
    pub parallel_tool_calls: Option<bool>,
    /// The most tokens the answer may have.
    pub max_tokens: Option<u64>,
    /// The sampling temperature, the JSON number as sent.
    pub temperature: Option<Value>,
    /// The nucleus sampling mass (`top_p`), the JSON number as sent.
    pub top_p: Option<Value>,
    /// The stop sequences.
    pub stop: Vec<String>,
    /// The structured output the answer must follow.
    pub output: Option<Output>,
    /// The reasoning setting.
    pub thinking: Option<Thinking>,
    /// The settings of [`SETTINGS`] the source gave, as it gave them.
    pub settings: Vec<(Setting, Value)>,
    /// Source fields no target takes (named in the notes when written).
    pub unmapped: Vec<String>,
    /// The tool each call of the history called, by call id.
    calls: std::collections::HashMap<String, String>,
}

impl Request {
    /// Appends `part` to the last turn when it is `role`'s, else to a new turn.
    pub fn push(&mut self, role: Role, part: Part) {
        if let Part::Call { id, name, .. } = &part {
            self.calls.entry(id.clone()).or_insert_with(|| name.clone());
        }
        match self.turns.last_mut() {
            Some(turn) if turn.role == role => turn.parts.push(part),
            _ => self.turns.push(Turn {
                role,
                parts: vec![part],
            }),
        }
    }

    /// The name of the tool that call `id` called, from the history.
    pub fn call_name(&self, id: &str) -> Option<String> {
        self.calls.get(id).cloned()
    }
}

/// A request translated: the target's body (streaming), its endpoint path, and the notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Translated {
    /// The target's request body, for a streaming call.
    pub body: Value,
    /// The target's endpoint path (`/v1/messages`).
    pub path: String,
    /// What the target could not take, once per kind.
    pub notes: Vec<String>,
}

/// The Messages default when the client gave no `max_tokens` (Messages requires one).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// Translates `body`, a request of `source`, into `target`; `model` names the model when the
/// body does not (a Gemini client names it in the URL path).
pub fn translate(
    body: &Value,
    source: Dialect,
    target: Dialect,
    model: Option<&str>,
) -> Result<Translated, RequestError> {
    translate_with(body, source, target, model, &Stored::new())
}

/// The carriers the short ids of the store form stand for (`translate::carry::Stored`): a
/// short id to the carrier kept for it.
pub type Stored = std::collections::HashMap<String, String>;

/// [`translate`], with the carriers the store form's short ids stand for (the gateway's
/// `carry = "store"`): a call or result id found in `stored` is read as its carrier, and only
/// there (a short id in a message's text stays text).
pub fn translate_with(
    body: &Value,
    source: Dialect,
    target: Dialect,
    model: Option<&str>,
    stored: &Stored,
) -> Result<Translated, RequestError> {
    for d in [source, target] {
        if !d.spec().requests {
            return Err(RequestError {
                message: format!("{} requests are not translated yet", d.name()),
                path: String::new(),
            });
        }
    }
    // Each dialect's reader and writer (`read`, `write`, `path`) in its own module.
    let mut request = read(body, source)?;
    if let Some(model) = model {
        request.model = Some(model.to_owned());
    }
    if let Some(model) = &request.model {
        check_model(model)?;
    }
    request.settings = read_settings(body, source);
    let mut notes = Notes::default();
    for field in &request.unmapped {
        notes.add(format!("{field} (no equivalent in the target's request)"));
    }
    if let Some(note) = rules(target).system_turns {
        system_turns_into_prompt(&mut request, note, &mut notes);
    }
    restore_carried(&mut request, target, &mut notes, stored);
    orphan_results(&mut request, target, &mut notes);
    macro_rules! write_each {
        ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
            match target {
                $(Dialect::$d => {
                    let model = request.model.as_deref().unwrap_or("unknown-model");
                    ($m::write(&request, &mut notes), $m::path(model))
                })*
            }
        };
    }
    let (mut body, path): (Value, String) = crate::dialect::registry::dialects!(write_each);
    write_settings(&request.settings, target, &mut body, &mut notes);
    Ok(Translated {
        body,
        path,
        notes: notes.0,
    })
}

/// Declares [`read`] from the dialect list.
macro_rules! read_each {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// Reads a request of `source` into the shared model (its module's `read`).
        pub fn read(body: &Value, source: Dialect) -> Result<Request, RequestError> {
            match source {
                $(Dialect::$d => $m::read(body),)*
            }
        }
    };
}
crate::dialect::registry::dialects!(read_each);

/// What a dialect's requests cannot hold as the shared model does, said by each request
/// module (`RULES`).
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    /// `None` where a system turn may stand inside the conversation; else the note of a
    /// request that has one (it joins the system prompt).
    pub system_turns: Option<&'static str>,
    /// Whether tool results pair with their calls by name (a result whose call is not in the
    /// history is written as it is, under the tool's name).
    pub results_by_name: bool,
    /// Whether signed reasoning rides on the call part it signs (else it comes before).
    pub reasoning_on_call: bool,
}

/// Declares [`rules`] from the dialect list.
macro_rules! rules_each {
    ($(($d:ident, $m:ident, $reader:ident, $class:ident, $item:ident)),* $(,)?) => {
        /// The request rules of `dialect`.
        pub fn rules(dialect: Dialect) -> Rules {
            match dialect {
                $(Dialect::$d => $m::RULES,)*
            }
        }
    };
}
crate::dialect::registry::dialects!(rules_each);

/// What asks a streamed request of `dialect` for the usage its stream sends only when asked
/// (chat's `stream_options.include_usage`; the other dialects always send it): the top-level
/// key to set and its value, `None` when nothing is to be asked. Asked, the usage in the
/// stream is the gateway's and not the client's.
pub fn ask_for_usage(dialect: Dialect, body: &Value) -> Option<(&'static str, Value)> {
    match dialect {
        Dialect::Chat => chat::ask_for_usage(body),
        _ => None,
    }
}

/// [`translate`], with a Messages target written in Bedrock's InvokeModel form when
/// `invoke` is set (`framing="eventstream"`: the body without `model` and `stream`, with
/// `anthropic_version`; the path `/model/{modelId}/invoke-with-response-stream`). The form is
/// a Messages request's only: for another target, an error.
pub fn translate_framed(
    body: &Value,
    source: Dialect,
    target: Dialect,
    model: Option<&str>,
    invoke: bool,
    stored: &Stored,
) -> Result<Translated, RequestError> {
    if invoke && target.spec().invoke_paths.is_none() {
        return error(
            "$",
            "the InvokeModel form (framing=\"eventstream\") is a Messages request's",
        );
    }
    let mut t = translate_with(body, source, target, model, stored)?;
    if invoke {
        let model = messages::invoke_form(&mut t.body);
        let model = model.as_deref().unwrap_or("unknown-model");
        t.path = format!("/model/{}/invoke-with-response-stream", path_segment(model));
    }
    Ok(t)
}

// -- helpers shared by the readers and writers ----------------------------------------------

/// The object at `path`, or an error naming it.
pub fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, RequestError> {
    match value {
        Value::Object(map) => Ok(map),
        other => error(path, format!("expected an object, not {}", kind(other))),
    }
}

/// The JSON type of `value`, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The list at `key` of `map` (absent or null: empty; a lone object: a list of one, as
/// Google's JSON reader takes it when `lone` is set).
pub fn list<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    path: &str,
    lone: bool,
) -> Result<Vec<&'a Value>, RequestError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().collect()),
        Some(one @ Value::Object(_)) if lone => Ok(vec![one]),
        Some(other) => error(
            format!("{path}.{key}"),
            format!("expected a list, not {}", kind(other)),
        ),
    }
}

/// The string at `key` of `map`, if any (an error if it is another type).
pub fn string(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<String>, RequestError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => error(
            format!("{path}.{key}"),
            format!("expected a string, not {}", kind(other)),
        ),
    }
}

/// The non-negative integer at `key` of `map`, if any.
pub fn count(map: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, RequestError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(n) => Ok(Some(n)),
            None => error(format!("{path}.{key}"), "expected a non-negative integer"),
        },
        Some(other) => error(
            format!("{path}.{key}"),
            format!("expected an integer, not {}", kind(other)),
        ),
    }
}

/// The number at `key` of `map`, if any, as sent.
pub fn number(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<Option<Value>, RequestError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n @ Value::Number(_)) => Ok(Some(n.clone())),
        Some(other) => error(
            format!("{path}.{key}"),
            format!("expected a number, not {}", kind(other)),
        ),
    }
}

/// Stop sequences: a string or a list of strings.
pub fn stops(value: Option<&Value>, path: &str) -> Result<Vec<String>, RequestError> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::String(s) => Ok(s.clone()),
                other => error(
                    format!("{path}[{i}]"),
                    format!("expected a string, not {}", kind(other)),
                ),
            })
            .collect(),
        Some(other) => error(
            path,
            format!("expected a string or a list, not {}", kind(other)),
        ),
    }
}

/// The text of a tool result or of a turn's text parts, joined (what a target that takes only
/// text gets); other parts are named in `notes`.
pub fn text_of(parts: &[Part], notes: &mut Notes, target: &str) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Image(_) => notes.add(format!(
                "images in tool results ({target} takes text there)"
            )),
            Part::Document(_) => notes.add(format!(
                "documents in tool results ({target} takes text there)"
            )),
            Part::Unknown(kind) => unknown_note(notes, kind),
            _ => {}
        }
    }
    out
}

/// Tool call arguments (JSON text) as an object, for the dialects that take one; text that is
/// not a JSON object is kept under `"arguments"`, named in `notes`.
pub fn arguments_object(arguments: &str, notes: &mut Notes) -> Value {
    let trimmed = arguments.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            notes.add("tool call arguments that are not a JSON object (kept under \"arguments\")");
            let mut map = Map::new();
            map.insert("arguments".into(), Value::String(arguments.to_owned()));
            Value::Object(map)
        }
    }
}

/// Reads `tools` in OpenAI's function shape (`[{"type": "function", "function": {"name",
/// "description", "parameters"}}]`), as Ollama and Cohere write them, into `r`.
pub fn read_function_tools(map: &Map<String, Value>, r: &mut Request) -> Result<(), RequestError> {
    for (i, tool) in list(map, "tools", "$", false)?.into_iter().enumerate() {
        let path = format!("$.tools[{i}]");
        let t = object(tool, &path)?;
        let f = object(t.get("function").unwrap_or(&Value::Null), &path)?;
        let Some(name) = string(f, "name", &path)? else {
            return error(format!("{path}.function.name"), "a tool needs a name");
        };
        r.tools.push(Tool {
            name,
            description: string(f, "description", &path)?,
            parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
            strict: None,
        });
    }
    Ok(())
}

/// The tools in OpenAI's function shape (chat, Ollama, Cohere), each function's `strict` too
/// when `with_strict`.
pub fn write_function_tools(tools: &[Tool], with_strict: bool) -> Value {
    let tools = tools.iter().map(|t| {
        let mut f = Map::new();
        f.insert("name".into(), serde_json::json!(t.name));
        if let Some(d) = &t.description {
            f.insert("description".into(), serde_json::json!(d));
        }
        f.insert("parameters".into(), object_schema(&t.parameters));
        if let (true, Some(strict)) = (with_strict, t.strict) {
            f.insert("strict".into(), serde_json::json!(strict));
        }
        serde_json::json!({"type": "function", "function": f})
    });
    Value::Array(tools.collect())
}

/// A call's `arguments` as JSON text: a string as sent, another value as its JSON, none `{}`.
pub fn arguments_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A tool's parameters schema as an object schema (what every dialect requires).
pub fn object_schema(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

/// A message's content (chat and Responses): a string, or a list of typed parts. The text
/// parts every dialect spells alike (`text`, `input_text`, `output_text`, `refusal`) are read
/// here, the others by `media` (`None`: a part of a type nobody maps, kept as a marker text).
pub fn content_parts(
    value: Option<&Value>,
    path: &str,
    media: impl Fn(&str, &Map<String, Value>, &str) -> Result<Option<Part>, RequestError>,
) -> Result<Vec<Part>, RequestError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => return Ok(vec![Part::Text(s.clone())]),
        Some(Value::Array(items)) => items,
        Some(other) => {
            return error(
                path,
                format!("expected a string or a list, not {}", kind(other)),
            )
        }
    };
    let mut parts = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let ipath = format!("{path}[{i}]");
        let p = object(item, &ipath)?;
        let Some(kind) = p.get("type").and_then(Value::as_str) else {
            return error(format!("{ipath}.type"), "a content part needs a type");
        };
        parts.push(match kind {
            "text" | "input_text" | "output_text" => {
                Part::Text(string(p, "text", &ipath)?.unwrap_or_default())
            }
            "refusal" => Part::Text(string(p, "refusal", &ipath)?.unwrap_or_default()),
            other => match media(other, p, &ipath)? {
                Some(part) => part,
                None => Part::Unknown(other.to_owned()),
            },
        });
    }
    Ok(parts)
}

/// Sets `key` of `object` (a JSON object; anything else is left as it is).
pub fn set(object: &mut Value, key: &str, value: Value) {
    if let Value::Object(map) = object {
        map.insert(key.to_owned(), value);
    }
}

/// Names a content part of a type no reader knows ([`Part::Unknown`]): it is sent nowhere.
pub fn unknown_note(notes: &mut Notes, kind: &str) {
    notes.add(format!(
        "content parts of type {kind:?} (not read, so not sent)"
    ));
}

/// Names the reasoning parts of the history that `target` cannot read back.
pub fn reasoning_note(notes: &mut Notes, target: &str) {
    notes.add(format!(
        "reasoning from another dialect in the history ({target} reads back only its own)"
    ));
}

#[cfg(test)]
mod tests;
