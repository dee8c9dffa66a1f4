//! Cohere's v2 chat requests (`POST /v2/chat`): `messages` of `system` / `user` / `assistant`
//! / `tool` roles (`content` a string or a list of `text`, `image_url`, `thinking` and
//! `document` parts; the assistant's `tool_plan` and `tool_calls` whose `arguments` is JSON
//! text; a tool result's `tool_call_id`), `tools` (OpenAI's function shape), `tool_choice`
//! (`REQUIRED` / `NONE`), `max_tokens`, `temperature`, `p`, `stop_sequences`, `thinking`
//! (`{"type": "enabled", "token_budget"}` or `disabled`), `response_format` (`json_object`
//! with an optional `json_schema`), and the shared settings (`setting`: `k`, `seed`, the
//! penalties). The tool plan is the text an assistant turn writes before its calls: it reads
//! as the turn's text, and a turn with calls writes its text as the plan.

use serde_json::{json, Map, Value};

use super::{
    content_parts, count, error, list, number, object, string, text_of, Media, Notes, Output, Part,
    Reasoning, Request, RequestError, Role, Thinking, ToolChoice,
};
use crate::dialect::Dialect;

/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::TopK => "k",
        super::Setting::Seed => "seed",
        super::Setting::PresencePenalty => "presence_penalty",
        super::Setting::FrequencyPenalty => "frequency_penalty",
        _ => return None,
    })
}

/// How the dialect's requests hold what the shared model holds (`super::Rules`).
pub const RULES: super::Rules = super::Rules {
    system_turns: None,
    results_by_name: false,
    reasoning_on_call: false,
};

/// The endpoint (the model is in the body).
pub fn path(_model: &str) -> String {
    super::stream_path(Dialect::Cohere, "", "")
}

/// A user or tool content part other than text: an image by URL (a `data:` URL included), a
/// document (its `data` object, as text), a thinking part (an assistant's).
fn media(kind: &str, p: &Map<String, Value>, path: &str) -> Result<Option<Part>, RequestError> {
    Ok(match kind {
        "image_url" => {
            let image = p.get("image_url");
            let url = match image {
                Some(Value::String(url)) => Some(url.clone()),
                Some(Value::Object(o)) => string(o, "url", path)?,
                _ => None,
            };
            let Some(url) = url else {
                return error(format!("{path}.image_url.url"), "an image needs a URL");
            };
            Some(Part::Image(Media {
                url: Some(url),
                ..Media::default()
            }))
        }
        "document" => {
            let data = p.get("document").and_then(|d| d.get("data"));
            Some(Part::Text(match data {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            }))
        }
        "thinking" => Some(Part::Reasoning(Reasoning {
            from: Some(Dialect::Cohere),
            text: string(p, "thinking", path)?.unwrap_or_default(),
            ..Reasoning::default()
        })),
        _ => None,
    })
}

/// Reads a Cohere v2 chat request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "model", "$")?,
        ..Request::default()
    };
    // The names of the calls read so far, by id (results name only the call).
    let mut names: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (i, message) in list(map, "messages", "$", false)?.into_iter().enumerate() {
        let path = format!("$.messages[{i}]");
        let m = object(message, &path)?;
        let cpath = format!("{path}.content");
        let parts = content_parts(m.get("content"), &cpath, media)?;
        match string(m, "role", &path)?.as_deref() {
            Some("system") => {
                let text = text_of(&parts, &mut Notes::default(), "the system prompt");
                if r.turns.is_empty() {
                    r.system.push(text);
                } else {
                    r.push(Role::System, Part::Text(text));
                }
            }
            Some("user") | None => {
                for part in parts {
                    r.push(Role::User, part);
                }
            }
            Some("assistant") => {
                // Thinking first, then the plan (the text before the calls), then the text.
                let (thinking, rest): (Vec<Part>, Vec<Part>) = parts
                    .into_iter()
                    .partition(|p| matches!(p, Part::Reasoning(_)));
                for part in thinking {
                    r.push(Role::Assistant, part);
                }
                if let Some(plan) = string(m, "tool_plan", &path)?.filter(|p| !p.is_empty()) {
                    r.push(Role::Assistant, Part::Text(plan));
                }
                for part in rest {
                    if !matches!(&part, Part::Text(t) if t.is_empty()) {
                        r.push(Role::Assistant, part);
                    }
                }
                for (j, call) in list(m, "tool_calls", &path, false)?.into_iter().enumerate() {
                    let cpath = format!("{path}.tool_calls[{j}]");
                    let c = object(call, &cpath)?;
                    let f = object(c.get("function").unwrap_or(&Value::Null), &cpath)?;
                    let name = string(f, "name", &cpath)?.unwrap_or_default();
                    let id = string(c, "id", &cpath)?.unwrap_or_else(|| format!("call_{i}_{j}"));
                    let arguments = super::arguments_text(f.get("arguments"));
                    names.insert(id.clone(), name.clone());
                    r.push(
                        Role::Assistant,
                        Part::Call {
                            id,
                            name,
                            arguments,
                        },
                    );
                }
            }
            Some("tool") => {
                let Some(id) = string(m, "tool_call_id", &path)? else {
                    return error(
                        format!("{path}.tool_call_id"),
                        "a tool result names its call",
                    );
                };
                let result = Part::Result {
                    name: names.get(&id).cloned(),
                    id,
                    content: parts,
                    error: false,
                };
                r.push(Role::User, result);
            }
            Some(other) => {
                return error(
                    format!("{path}.role"),
                    format!(
                        "expected \"system\", \"user\", \"assistant\" or \"tool\", not {other:?}"
                    ),
                )
            }
        }
    }
    super::read_function_tools(map, &mut r)?;
    if map.get("strict_tools") == Some(&Value::Bool(true)) {
        for t in &mut r.tools {
            t.strict = Some(true);
        }
    }
    r.tool_choice = match string(map, "tool_choice", "$")?.as_deref() {
        None => (!r.tools.is_empty()).then_some(ToolChoice::Auto),
        Some(c) if c.eq_ignore_ascii_case("required") => Some(ToolChoice::Required),
        Some(c) if c.eq_ignore_ascii_case("none") => Some(ToolChoice::None),
        Some(other) => {
            return error(
                "$.tool_choice",
                format!("expected \"REQUIRED\" or \"NONE\", not {other:?}"),
            )
        }
    };
    r.max_tokens = count(map, "max_tokens", "$")?;
    r.temperature = number(map, "temperature", "$")?;
    r.top_p = number(map, "p", "$")?;
    r.stop = super::stops(map.get("stop_sequences"), "$.stop_sequences")?;
    if let Some(format) = map.get("response_format").filter(|f| !f.is_null()) {
        let f = object(format, "$.response_format")?;
        match string(f, "type", "$.response_format")?.as_deref() {
            None | Some("text") => {}
            Some("json_object") => {
                r.output = Some(Output {
                    name: None,
                    schema: f.get("json_schema").filter(|s| !s.is_null()).cloned(),
                    strict: None,
                })
            }
            Some(other) => {
                return error(
                    "$.response_format.type",
                    format!("expected \"text\" or \"json_object\", not {other:?}"),
                )
            }
        }
    }
    if let Some(thinking) = map.get("thinking").filter(|t| !t.is_null()) {
        let t = object(thinking, "$.thinking")?;
        r.thinking = match string(t, "type", "$.thinking")?.as_deref() {
            Some("disabled") => Some(Thinking::Off),
            _ => match count(t, "token_budget", "$.thinking")? {
                Some(n) => Some(Thinking::Budget(n)),
                None => Some(Thinking::Effort("medium".into())),
            },
        };
    }
    for key in map.keys() {
        let known = matches!(
            key.as_str(),
            "model"
                | "messages"
                | "tools"
                | "strict_tools"
                | "tool_choice"
                | "max_tokens"
                | "temperature"
                | "p"
                | "stop_sequences"
                | "response_format"
                | "thinking"
                | "stream"
        );
        if !known && !super::is_setting(Dialect::Cohere, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// A turn's content parts in order (adjacent texts joined): a plain string when it is one
/// text, else Cohere's content list.
fn content(parts: Vec<Value>) -> Value {
    match parts.as_slice() {
        [] => Value::String(String::new()),
        [one] if one.get("type") == Some(&json!("text")) => {
            one.get("text").cloned().unwrap_or_default()
        }
        _ => Value::Array(parts),
    }
}

/// Appends text to a turn's parts: to the text part before it (`merge`: nothing came between
/// them), else as a new one.
fn push_text(parts: &mut Vec<Value>, text: &str, merge: bool) {
    if let (true, Some(Value::Object(last))) = (merge, parts.last_mut()) {
        if last.get("type") == Some(&json!("text")) {
            if let Some(Value::String(t)) = last.get_mut("text") {
                t.push_str(text);
                return;
            }
        }
    }
    parts.push(json!({"type": "text", "text": text}));
}

/// Writes a Cohere v2 chat request (streaming).
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut messages = Vec::new();
    let system: Vec<&str> = r.system.iter().map(String::as_str).collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for turn in &r.turns {
        // Text and images in order; thinking apart (it comes first); the calls and results.
        let mut parts: Vec<Value> = Vec::new();
        let mut thinking = String::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        let mut merge = true;
        for part in &turn.parts {
            let text = matches!(part, Part::Text(_));
            match part {
                Part::Text(t) => push_text(&mut parts, t, merge),
                Part::Image(media) => match media.as_url() {
                    Some(url) => {
                        parts.push(json!({"type": "image_url", "image_url": {"url": url}}))
                    }
                    None => notes.add("images by file id (Cohere takes a URL or data)"),
                },
                Part::Document(_) => {
                    notes.add("documents (Cohere's messages take text and images)")
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
                Part::Result {
                    id, content, error, ..
                } => {
                    if *error {
                        notes.add("a tool result's error flag (Cohere's results have none)");
                    }
                    results.push(json!({
                        "role": "tool",
                        "tool_call_id": id,
                        "content": text_of(content, notes, "Cohere"),
                    }))
                }
                Part::Reasoning(reasoning) => thinking.push_str(&reasoning.text),
                Part::Unknown(kind) => super::unknown_note(notes, kind),
            }
            merge = text || matches!(part, Part::Reasoning(_));
        }
        messages.extend(results);
        let role = match turn.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        };
        if parts.is_empty() && calls.is_empty() && thinking.is_empty() {
            continue;
        }
        let mut m = Map::new();
        m.insert("role".into(), json!(role));
        if !calls.is_empty() {
            // A turn that calls tools: its text is the plan it wrote before them.
            let mut plan = Vec::new();
            for p in std::mem::take(&mut parts) {
                match p.get("text").and_then(Value::as_str) {
                    Some(t) => plan.push(t.to_owned()),
                    None => notes.add(
                        "images in an assistant turn that calls tools (Cohere's plan is text)",
                    ),
                }
            }
            if !plan.is_empty() {
                m.insert("tool_plan".into(), Value::String(plan.join("\n\n")));
            }
        }
        if !thinking.is_empty() {
            parts.insert(0, json!({"type": "thinking", "thinking": thinking}));
        }
        if !parts.is_empty() {
            m.insert("content".into(), content(parts));
        }
        if !calls.is_empty() {
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        messages.push(Value::Object(m));
    }
    let model = r.model.as_deref().unwrap_or("unknown-model");
    let mut body = json!({"model": model, "messages": messages, "stream": true});
    if !r.tools.is_empty() {
        let tools = super::write_function_tools(&r.tools, false);
        super::set(&mut body, "tools", tools);
        if r.tools.iter().any(|t| t.strict == Some(true)) {
            super::set(&mut body, "strict_tools", json!(true));
        }
    }
    match &r.tool_choice {
        None | Some(ToolChoice::Auto) => {}
        Some(ToolChoice::Required) => super::set(&mut body, "tool_choice", json!("REQUIRED")),
        Some(ToolChoice::None) => super::set(&mut body, "tool_choice", json!("NONE")),
        Some(ToolChoice::Named(name)) => {
            notes.add(format!(
                "a named tool choice ({name:?}; Cohere can require a call, not name its tool)"
            ));
            super::set(&mut body, "tool_choice", json!("REQUIRED"));
        }
    }
    if r.parallel_tool_calls.is_some() {
        notes.add("parallel_tool_calls (Cohere has no such setting)");
    }
    if let Some(output) = &r.output {
        let mut format = json!({"type": "json_object"});
        if let Some(schema) = &output.schema {
            super::set(&mut format, "json_schema", schema.clone());
        }
        super::set(&mut body, "response_format", format);
    }
    match &r.thinking {
        None => {}
        Some(Thinking::Off) => super::set(&mut body, "thinking", json!({"type": "disabled"})),
        Some(t) => {
            let mut thinking = json!({"type": "enabled"});
            if let Some(budget) = t.budget() {
                super::set(&mut thinking, "token_budget", json!(budget));
            }
            super::set(&mut body, "thinking", thinking);
        }
    }
    if let Some(n) = r.max_tokens {
        super::set(&mut body, "max_tokens", json!(n));
    }
    if let Some(t) = &r.temperature {
        super::set(&mut body, "temperature", t.clone());
    }
    if let Some(p) = &r.top_p {
        super::set(&mut body, "p", p.clone());
    }
    if !r.stop.is_empty() {
        super::set(&mut body, "stop_sequences", json!(r.stop));
    }
    body
}
