//! Amazon Bedrock Converse requests (`POST /model/{modelId}/converse-stream`; the model is in
//! the path, never in the body): `system` as text blocks, `messages` of `user` / `assistant`
//! turns whose content is a list of one-key blocks (`text`, `image` and `document` with their
//! `format` and base64 `source.bytes`, `toolUse`, `toolResult` with `status` and content of
//! `text` / `json` / `image` / `document`, `reasoningContent` with `reasoningText` (text and
//! signature) or `redactedContent`), `inferenceConfig` (`maxTokens`, `temperature`, `topP`,
//! `stopSequences`), `toolConfig` (`tools` of `toolSpec` with `inputSchema.json`, `toolChoice`
//! `auto` / `any` / `tool`), and the model's own fields in `additionalModelRequestFields` (for
//! Claude, `thinking` with its budget). `cachePoint` blocks carry nothing across.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, count, error, list, number, object, object_schema, reasoning_note, stops,
    string, text_of, Media, Notes, Part, Reasoning, Request, RequestError, Role, Thinking, Tool,
    ToolChoice, DEFAULT_MAX_TOKENS,
};
use crate::dialect::Dialect;

const READ: [&str; 6] = [
    "messages",
    "system",
    "inferenceConfig",
    "toolConfig",
    "additionalModelRequestFields",
    // The model is the path's; a body that names it too is not wrong.
    "modelId",
];

/// Reads a Converse request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: string(map, "modelId", "$")?,
        ..Request::default()
    };
    for (i, block) in list(map, "system", "$", false)?.into_iter().enumerate() {
        let path = format!("$.system[{i}]");
        let b = object(block, &path)?;
        match string(b, "text", &path)? {
            Some(text) => r.system.push(text),
            None if b.contains_key("cachePoint") => {}
            None => r
                .unmapped
                .push(format!("system blocks other than text ({path})")),
        }
    }
    for (i, message) in list(map, "messages", "$", false)?.into_iter().enumerate() {
        let path = format!("$.messages[{i}]");
        let m = object(message, &path)?;
        let role = match string(m, "role", &path)?.as_deref() {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            other => {
                return error(
                    format!("{path}.role"),
                    format!("expected \"user\" or \"assistant\", not {other:?}"),
                )
            }
        };
        for (j, block) in list(m, "content", &path, false)?.into_iter().enumerate() {
            if let Some(part) = block_part(&mut r, block, &format!("{path}.content[{j}]"))? {
                r.push(role, part);
            }
        }
    }
    if let Some(config) = map.get("inferenceConfig").filter(|c| !c.is_null()) {
        let c = object(config, "$.inferenceConfig")?;
        r.max_tokens = count(c, "maxTokens", "$.inferenceConfig")?;
        r.temperature = number(c, "temperature", "$.inferenceConfig")?;
        r.top_p = number(c, "topP", "$.inferenceConfig")?;
        r.stop = stops(c.get("stopSequences"), "$.inferenceConfig.stopSequences")?;
    }
    if let Some(config) = map.get("toolConfig").filter(|c| !c.is_null()) {
        let c = object(config, "$.toolConfig")?;
        for (i, tool) in list(c, "tools", "$.toolConfig", false)?
            .into_iter()
            .enumerate()
        {
            let path = format!("$.toolConfig.tools[{i}]");
            let t = object(tool, &path)?;
            let Some(spec) = t.get("toolSpec") else {
                if !t.contains_key("cachePoint") {
                    r.unmapped.push("tools other than toolSpec".into());
                }
                continue;
            };
            let spath = format!("{path}.toolSpec");
            let s = object(spec, &spath)?;
            let Some(name) = string(s, "name", &spath)? else {
                return error(format!("{spath}.name"), "a tool needs a name");
            };
            let schema = s.get("inputSchema").and_then(|i| i.get("json"));
            r.tools.push(Tool {
                name,
                description: string(s, "description", &spath)?,
                parameters: schema.cloned().unwrap_or(Value::Null),
                strict: None,
            });
        }
        if let Some(choice) = c.get("toolChoice").filter(|c| !c.is_null()) {
            let c = object(choice, "$.toolConfig.toolChoice")?;
            r.tool_choice = Some(if c.contains_key("any") {
                ToolChoice::Required
            } else if let Some(tool) = c.get("tool") {
                let path = "$.toolConfig.toolChoice.tool";
                match string(object(tool, path)?, "name", path)? {
                    Some(name) => ToolChoice::Named(name),
                    None => return error(format!("{path}.name"), "a tool choice needs a name"),
                }
            } else {
                ToolChoice::Auto
            });
        }
    }
    if let Some(extra) = map
        .get("additionalModelRequestFields")
        .filter(|e| !e.is_null())
    {
        let e = object(extra, "$.additionalModelRequestFields")?;
        for (key, value) in e {
            match key.as_str() {
                "thinking" => {
                    let t = value.as_object();
                    let kind = t.and_then(|t| t.get("type")).and_then(Value::as_str);
                    r.thinking = match kind {
                        Some("enabled") => t
                            .map(|t| {
                                count(
                                    t,
                                    "budget_tokens",
                                    "$.additionalModelRequestFields.thinking",
                                )
                            })
                            .transpose()?
                            .flatten()
                            .map(Thinking::Budget),
                        Some("disabled") => Some(Thinking::Off),
                        Some("adaptive") => Some(Thinking::Effort("medium".into())),
                        _ => None,
                    };
                }
                other => {
                    let path = format!("additionalModelRequestFields.{other}");
                    // A setting (`top_k`) is read with the others, by `read_settings`.
                    if !super::is_setting_path(Dialect::Converse, &path) {
                        r.unmapped.push(path);
                    }
                }
            }
        }
    }
    for key in map.keys() {
        if !READ.contains(&key.as_str()) && !super::is_setting(Dialect::Converse, key) {
            r.unmapped.push(key.clone());
        }
    }
    Ok(r)
}

/// The part a content block is (`None`: a block with nothing to carry).
fn block_part(r: &mut Request, block: &Value, path: &str) -> Result<Option<Part>, RequestError> {
    let b = object(block, path)?;
    if let Some(text) = string(b, "text", path)? {
        return Ok(Some(Part::Text(text)));
    }
    if let Some(image) = b.get("image") {
        return Ok(Some(Part::Image(media(
            image,
            &format!("{path}.image"),
            "image",
        )?)));
    }
    if let Some(document) = b.get("document") {
        let dpath = format!("{path}.document");
        let mut m = media(document, &dpath, "application")?;
        m.name = string(object(document, &dpath)?, "name", &dpath)?;
        return Ok(Some(Part::Document(m)));
    }
    if let Some(call) = b.get("toolUse") {
        let cpath = format!("{path}.toolUse");
        let c = object(call, &cpath)?;
        let Some(id) = string(c, "toolUseId", &cpath)? else {
            return error(
                format!("{cpath}.toolUseId"),
                "a toolUse block needs a toolUseId",
            );
        };
        let input = c.get("input").cloned().unwrap_or_else(|| json!({}));
        return Ok(Some(Part::Call {
            id,
            name: string(c, "name", &cpath)?.unwrap_or_default(),
            arguments: input.to_string(),
        }));
    }
    if let Some(result) = b.get("toolResult") {
        let rpath = format!("{path}.toolResult");
        let t = object(result, &rpath)?;
        let Some(id) = string(t, "toolUseId", &rpath)? else {
            return error(
                format!("{rpath}.toolUseId"),
                "a toolResult needs a toolUseId",
            );
        };
        let mut content = Vec::new();
        for (k, item) in list(t, "content", &rpath, false)?.into_iter().enumerate() {
            let ipath = format!("{rpath}.content[{k}]");
            let i = object(item, &ipath)?;
            if let Some(json) = i.get("json") {
                content.push(Part::Text(json.to_string()));
            } else if let Some(part) = block_part(r, item, &ipath)? {
                content.push(part);
            }
        }
        return Ok(Some(Part::Result {
            name: r.call_name(&id),
            id,
            content,
            error: string(t, "status", &rpath)?.as_deref() == Some("error"),
        }));
    }
    if let Some(reasoning) = b.get("reasoningContent") {
        let rpath = format!("{path}.reasoningContent");
        let c = object(reasoning, &rpath)?;
        if let Some(text) = c.get("reasoningText") {
            let tpath = format!("{rpath}.reasoningText");
            let t = object(text, &tpath)?;
            return Ok(Some(Part::Reasoning(Reasoning {
                from: Some(Dialect::Converse),
                text: string(t, "text", &tpath)?.unwrap_or_default(),
                signature: string(t, "signature", &tpath)?,
                ..Reasoning::default()
            })));
        }
        return Ok(Some(Part::Reasoning(Reasoning {
            from: Some(Dialect::Converse),
            encrypted: string(c, "redactedContent", &rpath)?,
            ..Reasoning::default()
        })));
    }
    if b.contains_key("cachePoint") {
        return Ok(None);
    }
    match b.keys().next() {
        Some(kind) => {
            r.unmapped.push(format!("{kind} blocks"));
            Ok(None)
        }
        None => error(path, "a content block needs one of text, image, document, toolUse, toolResult, reasoningContent"),
    }
}

/// The media of an `image` or `document` block: its base64 `source.bytes` and its `format`
/// (`png`, `pdf`, ...) as a media type under `family`.
fn media(block: &Value, path: &str, family: &str) -> Result<Media, RequestError> {
    let b = object(block, path)?;
    let format = string(b, "format", path)?;
    let spath = format!("{path}.source");
    let source = object(b.get("source").unwrap_or(&Value::Null), &spath)?;
    let media_type = format.map(|f| match (family, f.as_str()) {
        ("image", "jpg") => "image/jpeg".to_owned(),
        ("application", "txt") => "text/plain".to_owned(),
        ("application", "md") => "text/markdown".to_owned(),
        ("application", "html") => "text/html".to_owned(),
        ("application", "csv") => "text/csv".to_owned(),
        _ => format!("{family}/{f}"),
    });
    Ok(Media {
        data: string(source, "bytes", &spath)?,
        media_type,
        url: source
            .get("s3Location")
            .and_then(|s| s.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..Media::default()
    })
}
/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::TopK => "additionalModelRequestFields.top_k",
        super::Setting::Metadata => "requestMetadata",
        _ => return None,
    })
}

/// How the dialect's requests hold what the shared model holds (`super::Rules`).
pub const RULES: super::Rules = super::Rules {
    system_turns: Some(
        "system messages inside the conversation (Converse has none there: joined to system)",
    ),
    results_by_name: false,
    reasoning_on_call: false,
};

/// The streaming endpoint a request of this dialect goes to, naming `model`.
pub fn path(model: &str) -> String {
    super::stream_path(Dialect::Converse, &super::path_segment(model), "")
}

/// Writes `r` as a Converse request (the model goes in the path).
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut messages: Vec<(Role, Vec<Value>)> = Vec::new();
    for turn in &r.turns {
        let blocks: Vec<Value> = turn.parts.iter().filter_map(|p| block(p, notes)).collect();
        if blocks.is_empty() {
            continue;
        }
        // Converse wants turns that alternate: a turn of the same role joins the one before.
        match messages.last_mut() {
            Some((role, earlier)) if *role == turn.role => earlier.extend(blocks),
            _ => messages.push((turn.role, blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| {
            let role = if role == Role::Assistant {
                "assistant"
            } else {
                "user"
            };
            json!({"role": role, "content": content})
        })
        .collect();
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages));
    if !r.system.is_empty() {
        let system: Vec<Value> = r.system.iter().map(|t| json!({"text": t})).collect();
        body.insert("system".into(), Value::Array(system));
    }
    let max_tokens = r.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut config = Map::new();
    config.insert("maxTokens".into(), json!(max_tokens));
    if let Some(t) = &r.temperature {
        config.insert("temperature".into(), t.clone());
    }
    if let Some(p) = &r.top_p {
        config.insert("topP".into(), p.clone());
    }
    if !r.stop.is_empty() {
        config.insert("stopSequences".into(), json!(r.stop));
    }
    body.insert("inferenceConfig".into(), Value::Object(config));
    if !r.tools.is_empty() {
        let tools: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                let mut spec = Map::new();
                spec.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    spec.insert("description".into(), json!(d));
                }
                spec.insert(
                    "inputSchema".into(),
                    json!({"json": object_schema(&t.parameters)}),
                );
                json!({"toolSpec": spec})
            })
            .collect();
        let mut tool_config = Map::new();
        tool_config.insert("tools".into(), Value::Array(tools));
        match &r.tool_choice {
            Some(ToolChoice::Auto) => {
                tool_config.insert("toolChoice".into(), json!({"auto": {}}));
            }
            Some(ToolChoice::Required) => {
                tool_config.insert("toolChoice".into(), json!({"any": {}}));
            }
            Some(ToolChoice::Named(name)) => {
                tool_config.insert("toolChoice".into(), json!({"tool": {"name": name}}));
            }
            // The tools stay: Converse refuses toolUse blocks in the history without them.
            Some(ToolChoice::None) => notes.add("tool_choice none (Converse has no such choice)"),
            None => {}
        }
        if r.parallel_tool_calls == Some(false) {
            notes.add("parallel_tool_calls false (Converse has no such setting)");
        }
        body.insert("toolConfig".into(), Value::Object(tool_config));
    }
    match &r.thinking {
        Some(Thinking::Off) | None => {}
        Some(t) => match t.budget() {
            // Claude on Bedrock: 1,024 <= budget < maxTokens, as on Anthropic's API.
            Some(budget) if max_tokens > 1024 => {
                let budget = budget.clamp(1024, max_tokens - 1);
                body.insert(
                    "additionalModelRequestFields".into(),
                    json!({"thinking": {"type": "enabled", "budget_tokens": budget}}),
                );
            }
            _ => notes.add("the reasoning setting (maxTokens too small for a thinking budget)"),
        },
    }
    if r.output.is_some() {
        notes.add("structured output (Converse takes no response schema)");
    }
    Value::Object(body)
}

/// The content block of a part (`None`: nothing Converse can carry, noted).
fn block(part: &Part, notes: &mut Notes) -> Option<Value> {
    Some(match part {
        Part::Text(t) if t.is_empty() => return None,
        Part::Text(t) => json!({"text": t}),
        Part::Image(m) => match m.inline() {
            Some((data, kind)) => {
                let format = kind.strip_prefix("image/").unwrap_or("png");
                let format = if format == "jpg" { "jpeg" } else { format };
                json!({"image": {"format": format, "source": {"bytes": data}}})
            }
            None => {
                notes.add("images by URL or file id (Converse takes their bytes)");
                return None;
            }
        },
        Part::Document(m) => match m.inline() {
            Some((data, kind)) => {
                let format = match kind.as_str() {
                    "application/pdf" => "pdf",
                    "text/plain" => "txt",
                    "text/markdown" => "md",
                    "text/html" => "html",
                    "text/csv" => "csv",
                    _ => {
                        notes.add("documents other than PDF, text, markdown, HTML or CSV");
                        return None;
                    }
                };
                let name = m.name.clone().unwrap_or_else(|| "document".into());
                json!({"document": {"format": format, "name": name, "source": {"bytes": data}}})
            }
            None => {
                notes.add("documents by URL or file id (Converse takes their bytes)");
                return None;
            }
        },
        Part::Call {
            id,
            name,
            arguments,
        } => json!({"toolUse": {
            "toolUseId": id, "name": name, "input": arguments_object(arguments, notes),
        }}),
        Part::Result {
            id, content, error, ..
        } => {
            let mut inner: Vec<Value> = content
                .iter()
                .filter(|p| matches!(p, Part::Image(_) | Part::Document(_)))
                .filter_map(|p| block(p, notes))
                .collect();
            let text = text_of(
                &content
                    .iter()
                    .filter(|p| matches!(p, Part::Text(_)))
                    .cloned()
                    .collect::<Vec<_>>(),
                notes,
                "Converse",
            );
            if !text.is_empty() || inner.is_empty() {
                inner.insert(0, json!({"text": text}));
            }
            let mut result = json!({"toolUseId": id, "content": inner});
            if *error {
                super::set(&mut result, "status", json!("error"));
            }
            json!({"toolResult": result})
        }
        Part::Reasoning(Reasoning {
            from: Some(Dialect::Converse),
            text,
            signature,
            encrypted,
            ..
        }) => match (signature, encrypted) {
            (_, Some(data)) if text.is_empty() => {
                json!({"reasoningContent": {"redactedContent": data}})
            }
            (Some(sig), _) => {
                json!({"reasoningContent": {"reasoningText": {"text": text, "signature": sig}}})
            }
            _ => {
                notes.add("reasoning without its signature (Converse refuses it)");
                return None;
            }
        },
        Part::Reasoning(_) => {
            reasoning_note(notes, "Converse");
            return None;
        }
        Part::Unknown(kind) => {
            super::unknown_note(notes, kind);
            return None;
        }
    })
}
