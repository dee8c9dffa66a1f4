//! Anthropic Messages requests (`POST /v1/messages`): `system` as a string or text blocks,
//! `messages` of `user` / `assistant` turns whose content is a string or blocks (`text`,
//! `image`, `document`, `tool_use`, `tool_result` with `is_error`, `thinking` with its
//! signature, `redacted_thinking`), `tools` with `input_schema`, `tool_choice` (`auto`, `any`,
//! `tool`, `none`, `disable_parallel_tool_use`), `max_tokens` (required), `stop_sequences`,
//! `thinking` (a budget, adaptive, disabled), `output_config` (effort, a JSON schema format).
//! The request type of the anthropic SDK (2.14) has no `temperature` or `top_p`: a source's are
//! noted, not written.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, count, error, list, number, object, object_schema, reasoning_note, set,
    stops, string, text_of, Media, Notes, Output, Part, Reasoning, Request, RequestError, Role,
    Thinking, Tool, ToolChoice, DEFAULT_MAX_TOKENS,
};
use crate::dialect::Dialect;

/// The `anthropic_version` of a Messages request in Bedrock's InvokeModel form.
pub const BEDROCK_VERSION: &str = "bedrock-2023-05-31";

const READ: [&str; 14] = [
    "model",
    // Bedrock's InvokeModel form names its version in the body.
    "anthropic_version",
    "messages",
    "system",
    "tools",
    "tool_choice",
    "max_tokens",
    "temperature",
    "top_p",
    "stop_sequences",
    "thinking",
    "output_config",
    "stream",
    "service_tier",
];

/// Reads a Messages request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "model", "$")?,
        ..Request::default()
    };
    match map.get("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => r.system.push(s.clone()),
        Some(Value::Array(blocks)) => {
            for (i, b) in blocks.iter().enumerate() {
                let path = format!("$.system[{i}]");
                let b = object(b, &path)?;
                r.system.push(string(b, "text", &path)?.unwrap_or_default());
            }
        }
        Some(other) => {
            return error(
                "$.system",
                format!("expected a string or a list, not {}", super::kind(other)),
            )
        }
    }
    for (i, message) in list(map, "messages", "$", false)?.into_iter().enumerate() {
        let path = format!("$.messages[{i}]");
        let m = object(message, &path)?;
        let role = match string(m, "role", &path)?.as_deref() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            // The newest API takes system messages inside the conversation.
            Some("system") => Role::System,
            other => {
                return error(
                    format!("{path}.role"),
                    format!("expected \"user\", \"assistant\" or \"system\", not {other:?}"),
                )
            }
        };
        let blocks = match m.get("content") {
            Some(Value::String(s)) => {
                r.push(role, Part::Text(s.clone()));
                continue;
            }
            Some(Value::Array(blocks)) => blocks,
            other => {
                return error(
                    format!("{path}.content"),
                    format!(
                        "expected a string or a list, not {}",
                        other.map_or("nothing", super::kind)
                    ),
                )
            }
        };
        for (j, block) in blocks.iter().enumerate() {
            let bpath = format!("{path}.content[{j}]");
            if let Some(part) = block_part(&mut r, block, &bpath)? {
                r.push(role, part);
            }
        }
    }
    for (i, tool) in list(map, "tools", "$", false)?.into_iter().enumerate() {
        let path = format!("$.tools[{i}]");
        let t = object(tool, &path)?;
        match t.get("type").and_then(Value::as_str) {
            None | Some("custom") => {}
            Some(other) => {
                r.unmapped.push(format!("server tools ({other})"));
                continue;
            }
        }
        let Some(name) = string(t, "name", &path)? else {
            return error(format!("{path}.name"), "a tool needs a name");
        };
        r.tools.push(Tool {
            name,
            description: string(t, "description", &path)?,
            parameters: t.get("input_schema").cloned().unwrap_or(Value::Null),
            strict: t.get("strict").and_then(Value::as_bool),
        });
    }
    if let Some(choice) = map.get("tool_choice").filter(|c| !c.is_null()) {
        let c = object(choice, "$.tool_choice")?;
        r.tool_choice = Some(match c.get("type").and_then(Value::as_str) {
            Some("any") => ToolChoice::Required,
            Some("none") => ToolChoice::None,
            Some("tool") => match string(c, "name", "$.tool_choice")? {
                Some(name) => ToolChoice::Named(name),
                None => {
                    return error(
                        "$.tool_choice.name",
                        "a tool choice of type tool needs a name",
                    )
                }
            },
            _ => ToolChoice::Auto,
        });
        if c.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
            r.parallel_tool_calls = Some(false);
        }
    }
    r.max_tokens = count(map, "max_tokens", "$")?;
    r.temperature = number(map, "temperature", "$")?;
    r.top_p = number(map, "top_p", "$")?;
    r.stop = stops(map.get("stop_sequences"), "$.stop_sequences")?;
    if let Some(t) = map.get("thinking").and_then(Value::as_object) {
        r.thinking = match t.get("type").and_then(Value::as_str) {
            Some("enabled") => count(t, "budget_tokens", "$.thinking")?.map(Thinking::Budget),
            Some("disabled") => Some(Thinking::Off),
            Some("adaptive") | Some("between_tools") => Some(Thinking::Effort("medium".into())),
            _ => None,
        };
    }
    if let Some(o) = map.get("output_config").and_then(Value::as_object) {
        if let Some(effort) = string(o, "effort", "$.output_config")? {
            r.thinking = Some(Thinking::Effort(effort));
        }
        if let Some(f) = o.get("format").and_then(Value::as_object) {
            r.output = Some(Output {
                name: None,
                schema: f.get("schema").cloned(),
                strict: None,
            });
        }
    }
    for key in map.keys() {
        if !READ.contains(&key.as_str()) && !super::is_setting(Dialect::Messages, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// The part a content block is (`None`: a block with nothing to carry).
fn block_part(r: &mut Request, block: &Value, path: &str) -> Result<Option<Part>, RequestError> {
    let b = object(block, path)?;
    Ok(Some(match b.get("type").and_then(Value::as_str) {
        Some("text") => Part::Text(string(b, "text", path)?.unwrap_or_default()),
        Some("image") => Part::Image(source(b, path)?),
        Some("document") => {
            let mut media = source(b, path)?;
            media.name = string(b, "title", path)?;
            match (
                media.media_type.as_deref(),
                b.get("source").and_then(|s| s.get("type")),
            ) {
                (Some("text/plain"), Some(Value::String(t))) if t == "text" => {
                    Part::Text(media.data.unwrap_or_default())
                }
                _ => Part::Document(media),
            }
        }
        Some("tool_use") => {
            let Some(id) = string(b, "id", path)? else {
                return error(format!("{path}.id"), "a tool_use block needs an id");
            };
            let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
            Part::Call {
                id,
                name: string(b, "name", path)?.unwrap_or_default(),
                arguments: input.to_string(),
            }
        }
        Some("tool_result") => {
            let Some(id) = string(b, "tool_use_id", path)? else {
                return error(
                    format!("{path}.tool_use_id"),
                    "a tool_result needs tool_use_id",
                );
            };
            // A result whose call is not in the history (a server tool's) crosses too.
            let name = r.call_name(&id);
            let content = match b.get("content") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::String(s)) => vec![Part::Text(s.clone())],
                Some(Value::Array(items)) => {
                    let mut parts = Vec::new();
                    for (k, item) in items.iter().enumerate() {
                        if let Some(p) = block_part(r, item, &format!("{path}.content[{k}]"))? {
                            parts.push(p);
                        }
                    }
                    parts
                }
                Some(other) => {
                    return error(
                        format!("{path}.content"),
                        format!("expected a string or a list, not {}", super::kind(other)),
                    )
                }
            };
            Part::Result {
                id,
                name,
                content,
                error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
            }
        }
        Some("thinking") => Part::Reasoning(Reasoning {
            from: Some(Dialect::Messages),
            text: string(b, "thinking", path)?.unwrap_or_default(),
            signature: string(b, "signature", path)?,
            ..Reasoning::default()
        }),
        Some("redacted_thinking") => Part::Reasoning(Reasoning {
            from: Some(Dialect::Messages),
            encrypted: string(b, "data", path)?,
            ..Reasoning::default()
        }),
        Some(other) => {
            r.unmapped.push(format!("{other} blocks"));
            return Ok(None);
        }
        None => return error(format!("{path}.type"), "a content block needs a type"),
    }))
}

/// The media of an `image` or `document` block's `source`.
fn source(b: &Map<String, Value>, path: &str) -> Result<Media, RequestError> {
    let spath = format!("{path}.source");
    let s = object(b.get("source").unwrap_or(&Value::Null), &spath)?;
    Ok(match s.get("type").and_then(Value::as_str) {
        Some("url") => Media {
            url: string(s, "url", &spath)?,
            ..Media::default()
        },
        Some("file") => Media {
            file_id: string(s, "file_id", &spath)?,
            ..Media::default()
        },
        _ => Media {
            data: string(s, "data", &spath)?,
            media_type: string(s, "media_type", &spath)?,
            ..Media::default()
        },
    })
}
/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::TopK => "top_k",
        super::Setting::User => "metadata.user_id",
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
    Dialect::Messages.spec().stream_path.into()
}

/// Writes `r` as a Messages request, streaming.
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
    for turn in &r.turns {
        let mut blocks = Vec::new();
        for part in &turn.parts {
            if let Some(b) = block(part, notes) {
                blocks.push(b);
            }
        }
        if blocks.is_empty() {
            continue;
        }
        // Turns alternate: a turn of the same role as the one before joins it.
        match messages.last_mut() {
            Some((role, earlier)) if *role == turn.role => earlier.extend(blocks),
            _ => messages.push((turn.role, blocks)),
        }
    }
    // A history that starts with the assistant is sent as it is: the API takes it, and a
    // made-up user turn would change the conversation the model sees.
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, blocks)| {
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::System => "system",
            };
            json!({"role": role, "content": blocks})
        })
        .collect();
    let mut body = Map::new();
    if let Some(model) = &r.model {
        body.insert("model".into(), json!(model));
    }
    let max_tokens = r.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    body.insert("max_tokens".into(), json!(max_tokens));
    if !r.system.is_empty() {
        body.insert("system".into(), json!(r.system.join("\n\n")));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !r.tools.is_empty() {
        let tools: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                let mut tool = Map::new();
                tool.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    tool.insert("description".into(), json!(d));
                }
                tool.insert("input_schema".into(), object_schema(&t.parameters));
                if let Some(strict) = t.strict {
                    tool.insert("strict".into(), json!(strict));
                }
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let no_parallel = r.parallel_tool_calls == Some(false) && !r.tools.is_empty();
    let choice = match &r.tool_choice {
        Some(ToolChoice::Auto) => Some(json!({"type": "auto"})),
        Some(ToolChoice::None) => Some(json!({"type": "none"})),
        Some(ToolChoice::Required) => Some(json!({"type": "any"})),
        Some(ToolChoice::Named(name)) => Some(json!({"type": "tool", "name": name})),
        None if no_parallel => Some(json!({"type": "auto"})),
        None => None,
    };
    if let Some(mut choice) = choice {
        if no_parallel && choice.get("type") != Some(&json!("none")) {
            set(&mut choice, "disable_parallel_tool_use", json!(true));
        }
        body.insert("tool_choice".into(), choice);
    }
    if r.temperature.is_some() || r.top_p.is_some() {
        notes.add("temperature / top_p (the Messages request type has neither)");
    }
    if !r.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(r.stop));
    }
    let mut output_config = Map::new();
    match &r.thinking {
        Some(Thinking::Off) => {
            body.insert("thinking".into(), json!({"type": "disabled"}));
        }
        Some(t) => match t.budget() {
            // Messages wants 1,024 <= budget < max_tokens.
            Some(budget) if max_tokens > 1024 => {
                let budget = budget.clamp(1024, max_tokens - 1);
                body.insert(
                    "thinking".into(),
                    json!({"type": "enabled", "budget_tokens": budget}),
                );
            }
            Some(_) => {
                notes.add("the reasoning setting (max_tokens too small for a thinking budget)")
            }
            None => {
                if let Some(effort) = t.effort(&["low", "medium", "high", "xhigh", "max"]) {
                    output_config.insert("effort".into(), json!(effort));
                }
            }
        },
        None => {}
    }
    if let Some(output) = &r.output {
        match &output.schema {
            Some(schema) => {
                output_config.insert(
                    "format".into(),
                    json!({"type": "json_schema", "schema": schema}),
                );
            }
            None => notes.add("JSON mode without a schema (Messages takes a JSON schema)"),
        }
    }
    if !output_config.is_empty() {
        body.insert("output_config".into(), Value::Object(output_config));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// `body`, a Messages request as [`write`] makes it, in Bedrock's InvokeModel form: no `model`
/// (the path names it) and no `stream` (the endpoint does), `anthropic_version` first. The
/// model it named, if any.
pub fn invoke_form(body: &mut Value) -> Option<String> {
    let Value::Object(map) = body else {
        return None;
    };
    let model = match map.remove("model") {
        Some(Value::String(m)) => Some(m),
        _ => None,
    };
    map.remove("stream");
    let mut out = Map::new();
    out.insert("anthropic_version".into(), json!(BEDROCK_VERSION));
    out.extend(std::mem::take(map));
    *map = out;
    model
}

/// The content block of a part (`None`: nothing Messages can carry, noted).
fn block(part: &Part, notes: &mut Notes) -> Option<Value> {
    Some(match part {
        Part::Text(t) if t.is_empty() => return None,
        Part::Text(t) => json!({"type": "text", "text": t}),
        Part::Image(m) => json!({"type": "image", "source": media_source(m)?}),
        Part::Document(m) => {
            if m.audio_format().is_some()
                || m.media_type
                    .as_deref()
                    .is_some_and(|k| k.starts_with("audio/"))
            {
                notes.add("audio (Messages takes none)");
                return None;
            }
            if m.media_type
                .as_deref()
                .is_some_and(|k| k.starts_with("video/"))
            {
                notes.add("video (Messages takes none)");
                return None;
            }
            if m.inline()
                .is_some_and(|(_, kind)| kind != "application/pdf")
            {
                notes.add("documents other than PDF given as data (Messages takes PDFs and text)");
                return None;
            }
            let mut b = json!({"type": "document", "source": media_source(m)?});
            if let Some(name) = &m.name {
                set(&mut b, "title", json!(name));
            }
            b
        }
        Part::Call {
            id,
            name,
            arguments,
        } => json!({
            "type": "tool_use", "id": id, "name": name, "input": arguments_object(arguments, notes),
        }),
        Part::Result {
            id, content, error, ..
        } => {
            let mut inner = Vec::new();
            for p in content {
                match p {
                    Part::Text(_) | Part::Image(_) | Part::Document(_) => {
                        if let Some(b) = block(p, notes) {
                            inner.push(b);
                        }
                    }
                    _ => {}
                }
            }
            let mut b = json!({"type": "tool_result", "tool_use_id": id});
            let inner = match inner.as_slice() {
                [] => json!(text_of(content, notes, "Messages")),
                _ => Value::Array(inner),
            };
            set(&mut b, "content", inner);
            if *error {
                set(&mut b, "is_error", json!(true));
            }
            b
        }
        Part::Reasoning(Reasoning {
            from: Some(Dialect::Messages),
            text,
            signature,
            encrypted,
            ..
        }) => match (signature, encrypted) {
            (Some(sig), _) => json!({"type": "thinking", "thinking": text, "signature": sig}),
            (None, Some(data)) => json!({"type": "redacted_thinking", "data": data}),
            (None, None) => {
                notes.add("thinking without its signature (Messages refuses it)");
                return None;
            }
        },
        Part::Reasoning(_) => {
            reasoning_note(notes, "Messages");
            return None;
        }
        Part::Unknown(kind) => {
            super::unknown_note(notes, kind);
            return None;
        }
    })
}

/// A Messages `source` for media.
fn media_source(m: &Media) -> Option<Value> {
    if let Some(id) = &m.file_id {
        return Some(json!({"type": "file", "file_id": id}));
    }
    if let Some((data, kind)) = m.inline() {
        return Some(json!({"type": "base64", "media_type": kind, "data": data}));
    }
    Some(json!({"type": "url", "url": m.url.clone()?}))
}
