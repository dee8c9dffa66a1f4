//! Ollama's native chat requests (`POST /api/chat`): `messages` of `system` / `user` /
//! `assistant` / `tool` roles (`content` text, base64 `images`, the assistant's `thinking`
//! and whole `tool_calls` whose `arguments` is an object, a tool result's `tool_name`),
//! `tools` (OpenAI's function shape), `format` (`"json"` or a JSON schema), `think` (a flag,
//! or `low` / `medium` / `high`), and `options` (`num_predict`, `temperature`, `top_p`,
//! `stop`, and the shared settings: `setting`). Tool results name their tool, not
//! a call: one answers the earliest unanswered call of its name.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, error, list, number, object, string, text_of, Media, Notes, Output, Part,
    Reasoning, Request, RequestError, Role, Thinking,
};
use crate::dialect::Dialect;

/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::TopK => "options.top_k",
        super::Setting::Seed => "options.seed",
        super::Setting::PresencePenalty => "options.presence_penalty",
        super::Setting::FrequencyPenalty => "options.frequency_penalty",
        _ => return None,
    })
}

/// How the dialect's requests hold what the shared model holds (`super::Rules`).
pub const RULES: super::Rules = super::Rules {
    system_turns: None,
    results_by_name: true,
    reasoning_on_call: false,
};

/// The endpoint (the model is in the body).
pub fn path(_model: &str) -> String {
    super::stream_path(Dialect::Ollama, "", "")
}

/// The media type of base64 image data, told by its first bytes (Ollama's images carry none).
fn image_type(data: &str) -> &'static str {
    match data.get(..4).unwrap_or_default() {
        "/9j/" => "image/jpeg",
        "R0lG" => "image/gif",
        "UklG" => "image/webp",
        _ => "image/png",
    }
}

/// A user message's (or a generate body's) base64 `images`, as image parts of the user turn.
fn images(m: &Map<String, Value>, path: &str, r: &mut Request) -> Result<(), RequestError> {
    for (j, image) in list(m, "images", path, false)?.into_iter().enumerate() {
        let Some(data) = image.as_str() else {
            return error(format!("{path}.images[{j}]"), "expected base64 text");
        };
        let media = Media {
            data: Some(data.to_owned()),
            media_type: Some(image_type(data).to_owned()),
            ..Media::default()
        };
        r.push(Role::User, Part::Image(media));
    }
    Ok(())
}

/// Reads an Ollama chat request (or a generate request: its `system` and `prompt`).
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "model", "$")?,
        ..Request::default()
    };
    // A generate body (`/api/generate`): a system prompt and one user prompt with its images.
    let generate = map.contains_key("prompt") && !map.contains_key("messages");
    if generate {
        if let Some(system) = string(map, "system", "$")?.filter(|s| !s.is_empty()) {
            r.system.push(system);
        }
        if let Some(prompt) = string(map, "prompt", "$")?.filter(|p| !p.is_empty()) {
            r.push(Role::User, Part::Text(prompt));
        }
        images(map, "$", &mut r)?;
    }
    // The calls of the last assistant turn not answered yet (name, id), in order.
    let mut open: Vec<(String, String)> = Vec::new();
    for (i, message) in list(map, "messages", "$", false)?.into_iter().enumerate() {
        let path = format!("$.messages[{i}]");
        let m = object(message, &path)?;
        let content = string(m, "content", &path)?.unwrap_or_default();
        let role = string(m, "role", &path)?;
        if !matches!(role.as_deref(), Some("user") | None)
            && m.get("images")
                .is_some_and(|i| i.as_array().is_some_and(|a| !a.is_empty()))
        {
            r.unmapped.push(format!("{path}.images"));
        }
        match role.as_deref() {
            Some("system") if r.turns.is_empty() => r.system.push(content),
            Some("system") => r.push(Role::System, Part::Text(content)),
            Some("user") | None => {
                if !content.is_empty() {
                    r.push(Role::User, Part::Text(content));
                }
                images(m, &path, &mut r)?;
            }
            Some("assistant") => {
                open.clear(); // results answer the latest turn's calls
                if let Some(thinking) = string(m, "thinking", &path)?.filter(|t| !t.is_empty()) {
                    let reasoning = Reasoning {
                        from: Some(Dialect::Ollama),
                        text: thinking,
                        ..Reasoning::default()
                    };
                    r.push(Role::Assistant, Part::Reasoning(reasoning));
                }
                if !content.is_empty() {
                    r.push(Role::Assistant, Part::Text(content));
                }
                for (j, call) in list(m, "tool_calls", &path, false)?.into_iter().enumerate() {
                    let cpath = format!("{path}.tool_calls[{j}]");
                    let c = object(call, &cpath)?;
                    let f = object(c.get("function").unwrap_or(&Value::Null), &cpath)?;
                    let name = string(f, "name", &cpath)?.unwrap_or_default();
                    let id = string(c, "id", &cpath)?.unwrap_or_else(|| format!("call_{i}_{j}"));
                    open.push((name.clone(), id.clone()));
                    let arguments = super::arguments_text(f.get("arguments"));
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
                // By its call's id when it names one; else the earliest open call of its tool
                // (of any tool, when it names none, as older clients send results).
                let named = string(m, "tool_name", &path)?.or(string(m, "name", &path)?);
                let by_id = string(m, "tool_call_id", &path)?;
                let at = match (&by_id, &named) {
                    (Some(id), _) => open.iter().position(|(_, i)| i == id),
                    (None, Some(name)) => open.iter().position(|(n, _)| n == name),
                    (None, None) => (!open.is_empty()).then_some(0),
                };
                let call = at.map(|at| open.remove(at));
                let id = by_id
                    .or_else(|| call.as_ref().map(|(_, id)| id.clone()))
                    .or_else(|| named.clone())
                    .unwrap_or_default();
                let name = named.or_else(|| call.map(|(name, _)| name));
                let result = Part::Result {
                    id,
                    name,
                    content: vec![Part::Text(content)],
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
    if !r.tools.is_empty() {
        // Ollama's model chooses whether to call a tool: the only choice it has.
        r.tool_choice = Some(super::ToolChoice::Auto);
    }
    match map.get("format") {
        // Ollama reads "" as no format (ollama-python 0.3 sends it on every request).
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.is_empty() => {}
        Some(Value::String(s)) if s == "json" => {
            r.output = Some(Output {
                name: None,
                schema: None,
                strict: None,
            })
        }
        Some(schema @ Value::Object(_)) => {
            r.output = Some(Output {
                name: None,
                schema: Some(schema.clone()),
                strict: None,
            })
        }
        Some(other) => {
            return error(
                "$.format",
                format!("expected \"json\" or a schema, not {}", super::kind(other)),
            )
        }
    }
    r.thinking = match map.get("think") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(true)) => Some(Thinking::Effort("medium".into())),
        Some(Value::Bool(false)) => Some(Thinking::Off),
        Some(Value::String(level)) => Some(Thinking::Effort(level.clone())),
        Some(other) => {
            return error(
                "$.think",
                format!("expected a boolean or a level, not {}", super::kind(other)),
            )
        }
    };
    if let Some(options) = map.get("options").filter(|o| !o.is_null()) {
        let o = object(options, "$.options")?;
        r.max_tokens = match o.get("num_predict") {
            Some(Value::Number(n)) => n.as_u64(),
            _ => None,
        };
        r.temperature = number(o, "temperature", "$.options")?;
        r.top_p = number(o, "top_p", "$.options")?;
        r.stop = super::stops(o.get("stop"), "$.options.stop")?;
        for key in o.keys() {
            let known = matches!(
                key.as_str(),
                "num_predict" | "temperature" | "top_p" | "stop"
            );
            if !known && !super::is_setting_path(Dialect::Ollama, &format!("options.{key}")) {
                r.unmapped.push(format!("options.{key}"));
            }
        }
    }
    for key in map.keys() {
        let known = matches!(
            key.as_str(),
            "model" | "messages" | "tools" | "format" | "think" | "options" | "stream"
        ) || (generate && matches!(key.as_str(), "prompt" | "system" | "images"));
        if !known && !super::is_setting(Dialect::Ollama, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// Writes an Ollama chat request (streaming).
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut messages = Vec::new();
    let system: Vec<&str> = r.system.iter().map(String::as_str).collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    for turn in &r.turns {
        let mut text = String::new();
        let mut thinking = String::new();
        let mut images = Vec::new();
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for part in &turn.parts {
            match part {
                Part::Text(t) => text.push_str(t),
                Part::Image(media) => match media.inline() {
                    Some((data, _)) => images.push(Value::String(data)),
                    None => notes.add("images by URL (Ollama takes base64 image data)"),
                },
                Part::Document(_) => {
                    notes.add("documents (Ollama's messages take text and images)")
                }
                Part::Call {
                    id,
                    name,
                    arguments,
                } => calls.push(json!({
                    "id": id,
                    "function": {"name": name, "arguments": arguments_object(arguments, notes)},
                })),
                Part::Result {
                    name, content, id, ..
                } => results.push(json!({
                    "role": "tool",
                    "content": text_of(content, notes, "Ollama"),
                    "tool_name": name.clone().unwrap_or_else(|| id.clone()),
                    "tool_call_id": id,
                })),
                Part::Reasoning(reasoning) => thinking.push_str(&reasoning.text),
                Part::Unknown(kind) => super::unknown_note(notes, kind),
            }
        }
        messages.extend(results);
        let role = match turn.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        };
        if text.is_empty() && images.is_empty() && calls.is_empty() && thinking.is_empty() {
            continue;
        }
        let mut m = Map::new();
        m.insert("role".into(), json!(role));
        m.insert("content".into(), Value::String(text));
        if !thinking.is_empty() {
            m.insert("thinking".into(), Value::String(thinking));
        }
        if !images.is_empty() {
            m.insert("images".into(), Value::Array(images));
        }
        if !calls.is_empty() {
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        messages.push(Value::Object(m));
    }
    let mut body = json!({"model": r.model.as_deref().unwrap_or("unknown-model"), "messages": messages, "stream": true});
    if !r.tools.is_empty() {
        let tools = super::write_function_tools(&r.tools, false);
        super::set(&mut body, "tools", tools);
    }
    if !matches!(r.tool_choice, None | Some(super::ToolChoice::Auto)) {
        notes.add("tool_choice (Ollama has none: the model chooses)");
    }
    if let Some(output) = &r.output {
        let format = output.schema.clone().unwrap_or_else(|| json!("json"));
        super::set(&mut body, "format", format);
    }
    match &r.thinking {
        None => {}
        Some(Thinking::Off) => super::set(&mut body, "think", json!(false)),
        Some(t) => match t.effort(&["low", "medium", "high", "max"]) {
            Some(level) => super::set(&mut body, "think", json!(level)),
            None => super::set(&mut body, "think", json!(true)),
        },
    }
    let mut options = Map::new();
    if let Some(n) = r.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if let Some(t) = &r.temperature {
        options.insert("temperature".into(), t.clone());
    }
    if let Some(p) = &r.top_p {
        options.insert("top_p".into(), p.clone());
    }
    if !r.stop.is_empty() {
        options.insert("stop".into(), json!(r.stop));
    }
    if !options.is_empty() {
        super::set(&mut body, "options", Value::Object(options));
    }
    body
}
