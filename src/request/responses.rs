//! OpenAI Responses requests (`POST /v1/responses`): `instructions`, `input` as a string or
//! items (messages of `user` / `assistant` / `system` / `developer` with `input_text`,
//! `input_image`, `input_file`, `output_text` parts; `function_call`, `function_call_output`,
//! `reasoning` items), `tools` of type `function`, `tool_choice`, `max_output_tokens`,
//! `text.format` (a JSON schema), `reasoning.effort`. Responses has no stop sequences; a
//! source's are noted.

use serde_json::{json, Map, Value};

use super::{
    count, error, list, number, object, object_schema, reasoning_note, string, text_of, Media,
    Notes, Output, Part, Reasoning, Request, RequestError, Role, Thinking, Tool, ToolChoice,
};
use crate::dialect::Dialect;

const READ: [&str; 12] = [
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
    "top_p",
    "text",
    "reasoning",
    "stream",
];

/// Reads a Responses request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "model", "$")?,
        ..Request::default()
    };
    if let Some(instructions) = string(map, "instructions", "$")? {
        r.system.push(instructions);
    }
    match map.get("input") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => r.push(Role::User, Part::Text(s.clone())),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                item_into(&mut r, item, &format!("$.input[{i}]"))?;
            }
        }
        Some(other) => {
            return error(
                "$.input",
                format!("expected a string or a list, not {}", super::kind(other)),
            )
        }
    }
    for (i, tool) in list(map, "tools", "$", false)?.into_iter().enumerate() {
        let path = format!("$.tools[{i}]");
        let t = object(tool, &path)?;
        match t.get("type").and_then(Value::as_str) {
            Some("function") => {}
            other => {
                r.unmapped
                    .push(format!("built-in tools ({})", other.unwrap_or("untyped")));
                continue;
            }
        }
        let Some(name) = string(t, "name", &path)? else {
            return error(format!("{path}.name"), "a function tool needs a name");
        };
        r.tools.push(Tool {
            name,
            description: string(t, "description", &path)?,
            parameters: t.get("parameters").cloned().unwrap_or(Value::Null),
            strict: t.get("strict").and_then(Value::as_bool),
        });
    }
    r.tool_choice = match map.get("tool_choice") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => ToolChoice::Auto,
        }),
        Some(Value::Object(c)) => match c.get("name").and_then(Value::as_str) {
            Some(name) => Some(ToolChoice::Named(name.to_owned())),
            None => {
                r.unmapped.push("a tool_choice of a built-in tool".into());
                None
            }
        },
        Some(other) => {
            return error(
                "$.tool_choice",
                format!("expected a string or an object, not {}", super::kind(other)),
            )
        }
    };
    r.parallel_tool_calls = map.get("parallel_tool_calls").and_then(Value::as_bool);
    r.max_tokens = count(map, "max_output_tokens", "$")?;
    r.temperature = number(map, "temperature", "$")?;
    r.top_p = number(map, "top_p", "$")?;
    if let Some(format) = map
        .get("text")
        .and_then(|t| t.get("format"))
        .and_then(Value::as_object)
    {
        match format.get("type").and_then(Value::as_str) {
            Some("json_schema") => {
                r.output = Some(Output {
                    name: format
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    schema: format.get("schema").cloned(),
                    strict: format.get("strict").and_then(Value::as_bool),
                })
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
    if let Some(effort) = map
        .get("reasoning")
        .and_then(|x| x.get("effort"))
        .and_then(Value::as_str)
    {
        r.thinking = Some(match effort {
            "none" => Thinking::Off,
            e => Thinking::Effort(e.to_owned()),
        });
    }
    for key in map.keys() {
        if !READ.contains(&key.as_str()) && !super::is_setting(Dialect::Responses, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// Reads one input item into `r`.
fn item_into(r: &mut Request, item: &Value, path: &str) -> Result<(), RequestError> {
    let it = object(item, path)?;
    match it.get("type").and_then(Value::as_str) {
        None | Some("message") => {
            let role = string(it, "role", path)?.unwrap_or_default();
            let parts = content(it.get("content"), &format!("{path}.content"))?;
            match role.as_str() {
                "system" | "developer" => {
                    let mut notes = Notes::default();
                    let text = text_of(&parts, &mut notes, "a system prompt");
                    if r.turns.is_empty() {
                        r.system.push(text);
                    } else {
                        r.push(Role::System, Part::Text(text)); // it keeps its place
                    }
                }
                "user" => parts.into_iter().for_each(|p| r.push(Role::User, p)),
                "assistant" => parts.into_iter().for_each(|p| r.push(Role::Assistant, p)),
                other => {
                    return error(
                        format!("{path}.role"),
                        format!("unknown role {other:?} (user, assistant, system, developer)"),
                    )
                }
            }
        }
        Some("function_call") => {
            let Some(id) = string(it, "call_id", path)? else {
                return error(format!("{path}.call_id"), "a function_call needs call_id");
            };
            r.push(
                Role::Assistant,
                Part::Call {
                    id,
                    name: string(it, "name", path)?.unwrap_or_default(),
                    arguments: string(it, "arguments", path)?.unwrap_or_default(),
                },
            );
        }
        Some("function_call_output") => {
            let Some(id) = string(it, "call_id", path)? else {
                return error(
                    format!("{path}.call_id"),
                    "a function_call_output needs call_id",
                );
            };
            // A result whose call is not in the history (a trimmed history) crosses too.
            let name = r.call_name(&id);
            let content = match it.get("output") {
                Some(Value::String(s)) => vec![Part::Text(s.clone())],
                other => content(other, &format!("{path}.output"))?,
            };
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
        Some("reasoning") => {
            let summary: Vec<String> = list(it, "summary", path, false)?
                .into_iter()
                .filter_map(|s| s.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            r.push(
                Role::Assistant,
                Part::Reasoning(Reasoning {
                    from: Some(Dialect::Responses),
                    text: summary.join("\n\n"),
                    id: string(it, "id", path)?,
                    encrypted: string(it, "encrypted_content", path)?,
                    ..Reasoning::default()
                }),
            );
        }
        Some(other) => r.unmapped.push(format!("{other} input items")),
    }
    Ok(())
}

/// A message's content: a string, or a list of parts (`input_image`, `input_file` besides
/// text).
fn content(value: Option<&Value>, path: &str) -> Result<Vec<Part>, RequestError> {
    super::content_parts(value, path, |kind, p, ipath| {
        Ok(Some(match kind {
            "input_image" => Part::Image(Media {
                url: string(p, "image_url", ipath)?,
                ..Media::default()
            }),
            "input_audio" => Part::Document(Media::from_input_audio(p.get("input_audio"))),
            "input_file" => {
                let data = string(p, "file_data", ipath)?;
                let url = string(p, "file_url", ipath)?;
                let name = string(p, "filename", ipath)?;
                let media = Media {
                    url: data.clone().filter(|d| d.starts_with("data:")).or(url),
                    name,
                    file_id: string(p, "file_id", ipath)?,
                    ..Media::default()
                };
                Part::Document(match (&media.url, data) {
                    (None, Some(data)) => Media {
                        data: Some(data),
                        media_type: Some("application/pdf".into()),
                        ..media
                    },
                    _ => media,
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
    Dialect::Responses.spec().stream_path.into()
}

/// Writes `r` as a Responses request, streaming.
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut input = Vec::new();
    for turn in &r.turns {
        if turn.role == Role::System {
            let text = super::system_text(&turn.parts);
            input.push(json!({"type": "message", "role": "system", "content": text}));
            continue;
        }
        let mut content = Vec::new();
        // An assistant message is written in its input form: its text as a string (the
        // output form needs the item's id and status).
        let flush = |content: &mut Vec<Value>, input: &mut Vec<Value>| {
            if content.is_empty() {
                return;
            }
            let parts = std::mem::take(content);
            let item = match turn.role {
                Role::User | Role::System => {
                    json!({"type": "message", "role": "user", "content": parts})
                }
                Role::Assistant => {
                    let text: String = parts
                        .iter()
                        .filter_map(|p| p.get("text").and_then(Value::as_str))
                        .collect();
                    json!({"type": "message", "role": "assistant", "content": text})
                }
            };
            input.push(item);
        };
        for part in &turn.parts {
            match part {
                Part::Text(t) if t.is_empty() => {}
                Part::Text(t) => content.push(match turn.role {
                    Role::User | Role::System => json!({"type": "input_text", "text": t}),
                    Role::Assistant => json!({"type": "output_text", "text": t, "annotations": []}),
                }),
                Part::Image(m) => match m.as_url() {
                    Some(url) if turn.role == Role::User => content
                        .push(json!({"type": "input_image", "image_url": url, "detail": "auto"})),
                    _ => notes.add("images in assistant turns (Responses takes text there)"),
                },
                Part::Document(m) => match file_part(m) {
                    Some(p) if turn.role == Role::User => content.push(p),
                    _ if m
                        .media_type
                        .as_deref()
                        .is_some_and(|k| k.starts_with("audio/")) =>
                    {
                        notes.add("audio (the Responses request takes none in a message)")
                    }
                    _ if m
                        .media_type
                        .as_deref()
                        .is_some_and(|k| k.starts_with("video/")) =>
                    {
                        notes.add("video (the Responses request takes none)")
                    }
                    _ => notes.add("documents in assistant turns or without data"),
                },
                Part::Call {
                    id,
                    name,
                    arguments,
                } => {
                    flush(&mut content, &mut input);
                    input.push(json!({
                        "type": "function_call", "call_id": id, "name": name, "arguments": arguments,
                    }));
                }
                Part::Result {
                    id,
                    content: c,
                    error,
                    ..
                } => {
                    flush(&mut content, &mut input);
                    // Images or files among the result: the output as a list of content items
                    // (the Responses request takes `input_text`, `input_image`, `input_file`).
                    if !*error
                        && c.iter()
                            .any(|p| matches!(p, Part::Image(_) | Part::Document(_)))
                    {
                        let items = result_items(c, notes);
                        input.push(
                            json!({"type": "function_call_output", "call_id": id, "output": items}),
                        );
                        continue;
                    }
                    let mut output = text_of(c, notes, "Responses");
                    if *error {
                        notes.add(
                            "tool errors (Responses has no error flag: sent as the output's text)",
                        );
                        if output.is_empty() {
                            output = "error".into();
                        }
                    }
                    input.push(
                        json!({"type": "function_call_output", "call_id": id, "output": output}),
                    );
                }
                Part::Reasoning(Reasoning {
                    from: Some(Dialect::Responses),
                    text,
                    id,
                    encrypted,
                    ..
                }) if id.is_some() || encrypted.is_some() => {
                    flush(&mut content, &mut input);
                    let mut item = Map::new();
                    item.insert("type".into(), json!("reasoning"));
                    if let Some(id) = id {
                        item.insert("id".into(), json!(id));
                    }
                    let summary: Vec<Value> = if text.is_empty() {
                        Vec::new()
                    } else {
                        vec![json!({"type": "summary_text", "text": text})]
                    };
                    item.insert("summary".into(), Value::Array(summary));
                    if let Some(e) = encrypted {
                        item.insert("encrypted_content".into(), json!(e));
                    }
                    input.push(Value::Object(item));
                }
                Part::Reasoning(_) => reasoning_note(notes, "Responses"),
                Part::Unknown(kind) => super::unknown_note(notes, kind),
            }
        }
        flush(&mut content, &mut input);
    }
    let mut body = Map::new();
    if let Some(model) = &r.model {
        body.insert("model".into(), json!(model));
    }
    if !r.system.is_empty() {
        body.insert("instructions".into(), json!(r.system.join("\n\n")));
    }
    body.insert("input".into(), Value::Array(input));
    if !r.tools.is_empty() {
        let tools: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                let mut tool = Map::new();
                tool.insert("type".into(), json!("function"));
                tool.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    tool.insert("description".into(), json!(d));
                }
                tool.insert("parameters".into(), object_schema(&t.parameters));
                tool.insert("strict".into(), json!(t.strict.unwrap_or(false)));
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &r.tool_choice {
        body.insert(
            "tool_choice".into(),
            match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Named(name) => json!({"type": "function", "name": name}),
            },
        );
    }
    if let Some(p) = r.parallel_tool_calls.filter(|_| !r.tools.is_empty()) {
        body.insert("parallel_tool_calls".into(), json!(p));
    }
    if let Some(n) = r.max_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    if let Some(t) = &r.temperature {
        body.insert("temperature".into(), t.clone());
    }
    if let Some(p) = &r.top_p {
        body.insert("top_p".into(), p.clone());
    }
    if !r.stop.is_empty() {
        notes.add("stop sequences (Responses has none)");
    }
    if let Some(output) = &r.output {
        let format = match &output.schema {
            Some(schema) => {
                let mut f = Map::new();
                f.insert("type".into(), json!("json_schema"));
                f.insert(
                    "name".into(),
                    json!(output.name.as_deref().unwrap_or("response")),
                );
                f.insert("schema".into(), schema.clone());
                if let Some(strict) = output.strict {
                    f.insert("strict".into(), json!(strict));
                }
                Value::Object(f)
            }
            None => json!({"type": "json_object"}),
        };
        body.insert("text".into(), json!({"format": format}));
    }
    match &r.thinking {
        Some(Thinking::Off) => {
            body.insert("reasoning".into(), json!({"effort": "none"}));
        }
        Some(t) => {
            if let Some(effort) = t.effort(&["minimal", "low", "medium", "high", "xhigh"]) {
                body.insert("reasoning".into(), json!({"effort": effort}));
            }
        }
        None => {}
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

/// An `input_file` part for a document.
/// A tool result's parts as a `function_call_output` list: text, images and files.
fn result_items(parts: &[Part], notes: &mut Notes) -> Value {
    let mut items = Vec::new();
    for part in parts {
        match part {
            Part::Text(t) if t.is_empty() => {}
            Part::Text(t) => items.push(json!({"type": "input_text", "text": t})),
            Part::Image(m) => match m.as_url() {
                Some(url) => {
                    items.push(json!({"type": "input_image", "image_url": url, "detail": "auto"}))
                }
                None => notes.add("images in tool results without data or URL"),
            },
            Part::Document(m) => match file_part(m) {
                Some(p) => items.push(p),
                None => notes.add("audio, video or documents without data in tool results (Responses takes none there)"),
            },
            Part::Unknown(kind) => super::unknown_note(notes, kind),
            _ => {}
        }
    }
    Value::Array(items)
}

fn file_part(m: &Media) -> Option<Value> {
    if m.media_type
        .as_deref()
        .is_some_and(|k| k.starts_with("audio/") || k.starts_with("video/"))
    {
        return None; // the Responses request's message content takes no audio or video
    }
    let mut p = Map::new();
    p.insert("type".into(), json!("input_file"));
    if let Some(id) = &m.file_id {
        p.insert("file_id".into(), json!(id));
        return Some(Value::Object(p));
    }
    match (m.inline(), &m.url) {
        (Some((data, kind)), _) => {
            p.insert(
                "file_data".into(),
                json!(format!("data:{kind};base64,{data}")),
            );
        }
        (None, Some(url)) => {
            p.insert("file_url".into(), json!(url));
        }
        (None, None) => return None,
    }
    p.insert(
        "filename".into(),
        json!(m.name.as_deref().unwrap_or("document")),
    );
    Some(Value::Object(p))
}
