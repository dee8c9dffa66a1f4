//! Chat completions requests (`POST /v1/chat/completions`): `messages` with `system` /
//! `developer` / `user` / `assistant` / `tool` roles, content as a string or as parts
//! (`text`, `image_url`, `file`), `tool_calls` on assistant messages, `tools` of type
//! `function`, `tool_choice` (Mistral's `"any"` is `"required"`), `max_tokens` /
//! `max_completion_tokens`, `stop`, `response_format`, `reasoning_effort`, and the
//! reasoning DeepSeek and OpenRouter put on assistant messages (`reasoning_content`,
//! `reasoning`).

use serde_json::{json, Map, Value};

use super::{
    count, error, list, number, object, reasoning_note, stops, string, text_of, Media, Notes,
    Output, Part, Reasoning, Request, RequestError, Role, Thinking, Tool, ToolChoice,
};
use crate::dialect::Dialect;

/// Keys a chat request may have that the neutral model reads.
const READ: [&str; 15] = [
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "stop",
    "response_format",
    "reasoning_effort",
    "stream",
    "stream_options",
    "n",
];

/// Reads a chat completions request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "model", "$")?,
        ..Request::default()
    };
    for (i, message) in list(map, "messages", "$", false)?.into_iter().enumerate() {
        message_into(&mut r, message, &format!("$.messages[{i}]"))?;
    }
    for (i, tool) in list(map, "tools", "$", false)?.into_iter().enumerate() {
        let path = format!("$.tools[{i}]");
        let t = object(tool, &path)?;
        if t.get("type").and_then(Value::as_str).unwrap_or("function") != "function" {
            r.unmapped.push(format!(
                "{path}: a tool of type {}",
                t.get("type").unwrap_or(&Value::Null)
            ));
            continue;
        }
        let f = object(
            t.get("function").unwrap_or(&Value::Null),
            &format!("{path}.function"),
        )?;
        let Some(name) = string(f, "name", &format!("{path}.function"))? else {
            return error(
                format!("{path}.function.name"),
                "a function tool needs a name",
            );
        };
        r.tools.push(Tool {
            name,
            description: string(f, "description", &path)?,
            parameters: f.get("parameters").cloned().unwrap_or(Value::Null),
            strict: f.get("strict").and_then(Value::as_bool),
        });
    }
    r.tool_choice = match map.get("tool_choice") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "none" => ToolChoice::None,
            "required" | "any" => ToolChoice::Required,
            _ => ToolChoice::Auto,
        }),
        Some(Value::Object(c)) => {
            let f = c.get("function").and_then(Value::as_object);
            match f.and_then(|f| f.get("name")).and_then(Value::as_str) {
                Some(name) => Some(ToolChoice::Named(name.to_owned())),
                None => return error("$.tool_choice", "a named tool_choice needs function.name"),
            }
        }
        Some(other) => {
            return error(
                "$.tool_choice",
                format!("expected a string or an object, not {}", super::kind(other)),
            )
        }
    };
    r.parallel_tool_calls = map.get("parallel_tool_calls").and_then(Value::as_bool);
    r.max_tokens = match count(map, "max_completion_tokens", "$")? {
        Some(n) => Some(n),
        None => count(map, "max_tokens", "$")?,
    };
    r.temperature = number(map, "temperature", "$")?;
    r.top_p = number(map, "top_p", "$")?;
    r.stop = stops(map.get("stop"), "$.stop")?;
    if let Some(format) = map.get("response_format").and_then(Value::as_object) {
        match format.get("type").and_then(Value::as_str) {
            Some("json_schema") => {
                let s = format.get("json_schema").and_then(Value::as_object);
                r.output = Some(Output {
                    name: s
                        .and_then(|s| s.get("name"))
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    schema: s.and_then(|s| s.get("schema")).cloned(),
                    strict: s.and_then(|s| s.get("strict")).and_then(Value::as_bool),
                });
            }
            Some("json_object") => {
                r.output = Some(Output {
                    name: None,
                    schema: None,
                    strict: None,
                })
            }
            _ => {}
        }
    }
    r.thinking = string(map, "reasoning_effort", "$")?.map(|e| match e.as_str() {
        "none" => Thinking::Off,
        _ => Thinking::Effort(e),
    });
    if map.get("n").and_then(Value::as_u64).is_some_and(|n| n > 1) {
        r.unmapped.push("n (more than one choice)".into());
    }
    for key in map.keys() {
        if !READ.contains(&key.as_str()) && !super::is_setting(Dialect::Chat, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// Reads one message into `r`.
fn message_into(r: &mut Request, message: &Value, path: &str) -> Result<(), RequestError> {
    let m = object(message, path)?;
    let Some(role) = string(m, "role", path)? else {
        return error(format!("{path}.role"), "a message needs a role");
    };
    match role.as_str() {
        "system" | "developer" => {
            let parts = content(m.get("content"), &format!("{path}.content"))?;
            let mut notes = Notes::default();
            let text = text_of(&parts, &mut notes, "a system prompt");
            if !notes.0.is_empty() {
                r.unmapped
                    .push("images or files in a system message".into());
            }
            if r.turns.is_empty() {
                r.system.push(text);
            } else {
                r.push(Role::System, Part::Text(text)); // it keeps its place
            }
        }
        "user" => {
            for part in content(m.get("content"), &format!("{path}.content"))? {
                r.push(Role::User, part);
            }
        }
        "assistant" => {
            let reasoning = match (
                string(m, "reasoning_content", path)?,
                string(m, "reasoning", path)?,
            ) {
                (Some(t), _) | (None, Some(t)) => Some(t),
                _ => None,
            };
            if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
                r.push(
                    Role::Assistant,
                    Part::Reasoning(Reasoning {
                        from: Some(Dialect::Chat),
                        text,
                        ..Reasoning::default()
                    }),
                );
            }
            let parts = content(m.get("content"), &format!("{path}.content"))?;
            let empty = parts
                .iter()
                .all(|p| matches!(p, Part::Text(t) if t.is_empty()));
            if !empty {
                for part in parts {
                    r.push(Role::Assistant, part);
                }
            }
            if let Some(refusal) = string(m, "refusal", path)? {
                r.push(Role::Assistant, Part::Text(refusal));
            }
            for (i, call) in list(m, "tool_calls", path, false)?.into_iter().enumerate() {
                let cpath = format!("{path}.tool_calls[{i}]");
                let c = object(call, &cpath)?;
                let f = object(
                    c.get("function").unwrap_or(&Value::Null),
                    &format!("{cpath}.function"),
                )?;
                let Some(name) = string(f, "name", &cpath)? else {
                    return error(format!("{cpath}.function.name"), "a tool call needs a name");
                };
                let arguments = match f.get("arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                r.push(
                    Role::Assistant,
                    Part::Call {
                        id: string(c, "id", &cpath)?.unwrap_or_else(|| format!("call_{i}")),
                        name,
                        arguments,
                    },
                );
            }
            if !r.turns.last().is_some_and(|t| t.role == Role::Assistant) {
                // An assistant message with nothing in it still takes its turn.
                r.turns.push(super::Turn {
                    role: Role::Assistant,
                    parts: vec![Part::Text(String::new())],
                });
            }
        }
        "tool" | "function" => {
            let id = match string(m, "tool_call_id", path)? {
                Some(id) => id,
                None if role == "function" => string(m, "name", path)?.unwrap_or_default(),
                None => {
                    return error(
                        format!("{path}.tool_call_id"),
                        "a tool message needs tool_call_id",
                    )
                }
            };
            // A result whose call is not in the history (a trimmed history) crosses too.
            let name = r
                .call_name(&id)
                .or_else(|| (role == "function").then(|| id.clone()));
            let content = content(m.get("content"), &format!("{path}.content"))?;
            r.push(
                Role::User,
                Part::Result {
                    id,
                    name,
                    content,
                    error: false,
                },
            );
        }
        other => {
            return error(
                format!("{path}.role"),
                format!("unknown role {other:?} (system, developer, user, assistant, tool)"),
            )
        }
    }
    Ok(())
}

/// The URL of a media part's value: the string itself, or its object's `url`.
fn url_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => o.get("url").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// A video URL's media type, by its extension (`video/mp4` when it names none known).
fn video_type(url: &str) -> String {
    let lower = url.to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or_default();
    match path.rsplit('.').next().unwrap_or_default() {
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        "mpeg" | "mpg" => "video/mpeg",
        "avi" => "video/x-msvideo",
        "wmv" => "video/x-ms-wmv",
        "3gp" => "video/3gpp",
        "flv" => "video/x-flv",
        _ => "video/mp4",
    }
    .to_owned()
}

/// A message's content: a string, or a list of parts (`image_url`, `file` besides text).
fn content(value: Option<&Value>, path: &str) -> Result<Vec<Part>, RequestError> {
    super::content_parts(value, path, |kind, p, ipath| {
        Ok(Some(match kind {
            "image_url" => {
                let Some(url) = url_of(p.get("image_url")) else {
                    return error(format!("{ipath}.image_url"), "an image part needs a url");
                };
                Part::Image(Media {
                    url: Some(url),
                    ..Media::default()
                })
            }
            // OpenRouter's and vLLM's video part: a URL or a `data:` URL.
            "video_url" => {
                let Some(url) = url_of(p.get("video_url")) else {
                    return error(format!("{ipath}.video_url"), "a video part needs a url");
                };
                let media = Media {
                    url: Some(url),
                    ..Media::default()
                };
                let kind = match media.inline() {
                    Some((_, kind)) => kind,
                    None => video_type(media.url.as_deref().unwrap_or_default()),
                };
                Part::Document(Media {
                    media_type: Some(kind),
                    ..media
                })
            }
            // Mistral's document by URL (`document_name` its title).
            "document_url" => {
                let Some(url) = url_of(p.get("document_url")) else {
                    return error(
                        format!("{ipath}.document_url"),
                        "a document part needs a url",
                    );
                };
                let name = p.get("document_name").and_then(Value::as_str);
                Part::Document(Media {
                    url: Some(url),
                    name: name.map(str::to_owned),
                    ..Media::default()
                })
            }
            "input_audio" => Part::Document(Media::from_input_audio(p.get("input_audio"))),
            // Mistral's reasoning in an assistant's history: text, or a list of text chunks.
            "thinking" => {
                let text = match p.get("thinking") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(chunks)) => chunks
                        .iter()
                        .filter_map(|c| c.get("text").and_then(Value::as_str))
                        .collect(),
                    _ => String::new(),
                };
                Part::Reasoning(Reasoning {
                    from: Some(Dialect::Chat),
                    text,
                    ..Reasoning::default()
                })
            }
            "file" => {
                let f = p.get("file").and_then(Value::as_object);
                let data = f.and_then(|f| f.get("file_data")).and_then(Value::as_str);
                let name = f.and_then(|f| f.get("filename")).and_then(Value::as_str);
                let file_id = f.and_then(|f| f.get("file_id")).and_then(Value::as_str);
                if data.is_none()
                    || data.is_some_and(|d| d.starts_with("http://") || d.starts_with("https://"))
                {
                    // An uploaded file, or a document given by URL (some clients put one here).
                    return Ok(Some(Part::Document(Media {
                        url: data.map(str::to_owned),
                        file_id: file_id.map(str::to_owned),
                        name: name.map(str::to_owned),
                        ..Media::default()
                    })));
                }
                let media = Media {
                    url: data.map(str::to_owned),
                    name: name.map(str::to_owned),
                    ..Media::default()
                };
                // A `data:` URL is the document; a bare base64 string is taken as a PDF.
                Part::Document(match media.inline() {
                    Some(_) => media,
                    None => Media {
                        data: data.map(str::to_owned),
                        media_type: data.map(|_| "application/pdf".to_owned()),
                        name: name.map(str::to_owned),
                        ..Media::default()
                    },
                })
            }
            _ => return Ok(None),
        }))
    })
}
/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::Seed => "seed",
        super::Setting::PresencePenalty => "presence_penalty",
        super::Setting::FrequencyPenalty => "frequency_penalty",
        super::Setting::User => "user",
        super::Setting::Metadata => "metadata",
        super::Setting::Store => "store",
        _ => return None,
    })
}

/// How the dialect's requests hold what the shared model holds (`super::Rules`).
pub const RULES: super::Rules = super::Rules {
    system_turns: None,
    results_by_name: false,
    reasoning_on_call: false,
};

/// The streaming endpoint a request of this dialect goes to (the model is the body's).
pub fn path(_model: &str) -> String {
    Dialect::Chat.spec().stream_path.into()
}

/// Writes `r` as a chat completions request, streaming with usage.
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut messages = Vec::new();
    if !r.system.is_empty() {
        messages.push(json!({"role": "system", "content": r.system.join("\n\n")}));
    }
    for turn in &r.turns {
        match turn.role {
            Role::User => user_messages(&turn.parts, &mut messages, notes),
            Role::Assistant => messages.push(assistant_message(&turn.parts, notes)),
            Role::System => {
                messages.push(json!({"role": "system", "content": super::system_text(&turn.parts)}))
            }
        }
    }
    let mut body = Map::new();
    if let Some(model) = &r.model {
        body.insert("model".into(), json!(model));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !r.tools.is_empty() {
        body.insert("tools".into(), super::write_function_tools(&r.tools, true));
    }
    if let Some(choice) = &r.tool_choice {
        let value = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), value);
    }
    if let Some(p) = r.parallel_tool_calls.filter(|_| !r.tools.is_empty()) {
        body.insert("parallel_tool_calls".into(), json!(p));
    }
    if let Some(n) = r.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if let Some(t) = &r.temperature {
        body.insert("temperature".into(), t.clone());
    }
    if let Some(p) = &r.top_p {
        body.insert("top_p".into(), p.clone());
    }
    if !r.stop.is_empty() {
        if r.stop.len() > 4 {
            notes.add("stop sequences past the fourth (chat takes four)");
        }
        let stop: Vec<&String> = r.stop.iter().take(4).collect();
        body.insert("stop".into(), json!(stop));
    }
    if let Some(output) = &r.output {
        let format = match &output.schema {
            Some(schema) => {
                let mut s = Map::new();
                s.insert(
                    "name".into(),
                    json!(output.name.as_deref().unwrap_or("response")),
                );
                s.insert("schema".into(), schema.clone());
                if let Some(strict) = output.strict {
                    s.insert("strict".into(), json!(strict));
                }
                json!({"type": "json_schema", "json_schema": s})
            }
            None => json!({"type": "json_object"}),
        };
        body.insert("response_format".into(), format);
    }
    match &r.thinking {
        Some(Thinking::Off) => {
            body.insert("reasoning_effort".into(), json!("none"));
        }
        Some(t) => {
            if let Some(effort) = t.effort(&["minimal", "low", "medium", "high", "xhigh"]) {
                body.insert("reasoning_effort".into(), json!(effort));
            }
        }
        None => {}
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

/// What asks a streamed request for its usage (`stream_options.include_usage`) when the
/// client did not: the top-level key to set and its new value (the client's other stream
/// options kept). `None` when no ask is needed: a request that is not streamed (its answer
/// has its usage), one that asked already, or one whose `stream_options` is not an object.
/// Asked, the stream's usage chunk is the gateway's, not the client's (`crate::relay`).
pub fn ask_for_usage(body: &Value) -> Option<(&'static str, Value)> {
    let map = body.as_object()?;
    if map.get("stream") != Some(&Value::Bool(true)) {
        return None;
    }
    let mut options = match map.get("stream_options") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return None,
    };
    if options.get("include_usage") == Some(&Value::Bool(true)) {
        return None;
    }
    options.insert("include_usage".into(), Value::Bool(true));
    Some(("stream_options", Value::Object(options)))
}

/// A user turn: its tool results as `tool` messages (in order, first), the rest as one user
/// message.
fn user_messages(parts: &[Part], messages: &mut Vec<Value>, notes: &mut Notes) {
    let mut content = Vec::new();
    for part in parts {
        match part {
            Part::Result {
                id,
                content: c,
                error,
                ..
            } => {
                let mut text = text_of(c, notes, "chat");
                if *error {
                    notes.add("tool errors (chat has no error flag: sent as the result's text)");
                    if text.is_empty() {
                        text = "error".into();
                    }
                }
                messages.push(json!({"role": "tool", "tool_call_id": id, "content": text}));
            }
            other => {
                if let Some(p) = content_part(other, notes) {
                    content.push(p);
                }
            }
        }
    }
    if content.is_empty() {
        return;
    }
    let content = match content.as_slice() {
        [Value::Object(p)] if p.get("type").and_then(Value::as_str) == Some("text") => {
            p.get("text").cloned().unwrap_or(Value::Null)
        }
        _ => Value::Array(content),
    };
    messages.push(json!({"role": "user", "content": content}));
}

/// A chat content part for a user part.
fn content_part(part: &Part, notes: &mut Notes) -> Option<Value> {
    match part {
        Part::Text(t) => Some(json!({"type": "text", "text": t})),
        Part::Image(m) => Some(json!({"type": "image_url", "image_url": {"url": m.as_url()?}})),
        Part::Document(m) => {
            if let (Some(format), Some((data, _))) = (m.audio_format(), m.inline()) {
                return Some(
                    json!({"type": "input_audio", "input_audio": {"data": data, "format": format}}),
                );
            }
            if let Some(id) = &m.file_id {
                return Some(json!({"type": "file", "file": {"file_id": id}}));
            }
            let Some(url) = m.as_url().filter(|u| u.starts_with("data:")) else {
                notes.add("documents given by URL (chat takes a document's data)");
                return None;
            };
            let mut file = Map::new();
            file.insert("file_data".into(), json!(url));
            file.insert(
                "filename".into(),
                json!(m.name.as_deref().unwrap_or("document")),
            );
            Some(json!({"type": "file", "file": file}))
        }
        Part::Reasoning(_) => None,
        Part::Unknown(kind) => {
            super::unknown_note(notes, kind);
            None
        }
        Part::Call { .. } | Part::Result { .. } => None,
    }
}

/// An assistant turn: its text as the content, its calls as `tool_calls`.
fn assistant_message(parts: &[Part], notes: &mut Notes) -> Value {
    let mut text = String::new();
    let mut texts: Vec<&str> = Vec::new();
    let mut calls = Vec::new();
    for part in parts {
        match part {
            Part::Text(t) => {
                text.push_str(t);
                if !t.is_empty() {
                    texts.push(t);
                }
            }
            Part::Call {
                id,
                name,
                arguments,
            } => calls.push(json!({
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            })),
            Part::Reasoning(_) => reasoning_note(notes, "chat"),
            Part::Unknown(kind) => super::unknown_note(notes, kind),
            Part::Image(_) | Part::Document(_) => {
                notes.add("images or documents in assistant turns (chat takes text there)")
            }
            Part::Result { .. } => {}
        }
    }
    let mut m = Map::new();
    m.insert("role".into(), json!("assistant"));
    m.insert(
        "content".into(),
        if text.is_empty() && !calls.is_empty() {
            Value::Null
        } else if texts.len() > 1 {
            // Texts apart in the source (around a call): kept apart, as text parts.
            Value::Array(
                texts
                    .iter()
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect(),
            )
        } else {
            json!(text)
        },
    );
    if !calls.is_empty() {
        m.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(m)
}
