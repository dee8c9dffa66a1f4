//! Google Gemini requests (`models/{model}:streamGenerateContent`): `contents` of `user` /
//! `model` turns with `parts` (`text`, `inlineData`, `fileData`, `functionCall`,
//! `functionResponse`, thought parts with their `thoughtSignature`), `systemInstruction`,
//! `tools[].functionDeclarations`, `toolConfig.functionCallingConfig`, `generationConfig`
//! (`maxOutputTokens`, `temperature`, `topP`, `stopSequences`, a response schema,
//! `thinkingConfig`). Google's JSON reader takes the proto field names too
//! (`system_instruction`, `function_declarations`, ...) and a lone object where a list is
//! expected; both are read. The model is in the URL path, not the body. Calls have no id in
//! most Gemini bodies: they get `call_<turn>_<n>`, and a `functionResponse` answers the earliest
//! unanswered call of its name.

use serde_json::{json, Map, Value};

use super::{
    arguments_object, error, object, object_schema, Media, Notes, Output, Part, Reasoning, Request,
    RequestError, Role, Thinking, Tool, ToolChoice,
};
use crate::dialect::Dialect;

/// The value of a field under its JSON name or its proto name.
fn field<'a>(map: &'a Map<String, Value>, camel: &str) -> Option<&'a Value> {
    map.get(camel)
        .or_else(|| map.get(&snake(camel)))
        .filter(|v| !v.is_null())
}

/// `camelCase` as `snake_case`.
fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A list field (a lone object is a list of one).
fn items<'a>(
    map: &'a Map<String, Value>,
    camel: &str,
    path: &str,
) -> Result<Vec<&'a Value>, RequestError> {
    match field(map, camel) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.iter().collect()),
        Some(one @ Value::Object(_)) => Ok(vec![one]),
        Some(other) => error(
            format!("{path}.{camel}"),
            format!("expected a list, not {}", super::kind(other)),
        ),
    }
}

fn text_field(
    map: &Map<String, Value>,
    camel: &str,
    path: &str,
) -> Result<Option<String>, RequestError> {
    match field(map, camel) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => error(
            format!("{path}.{camel}"),
            format!("expected a string, not {}", super::kind(other)),
        ),
    }
}

/// Reads a Gemini request.
pub fn read(body: &Value) -> Result<Request, RequestError> {
    let map = object(body, "$")?;
    let mut r = Request {
        model: text_field(map, "model", "$")?.map(|m| m.trim_start_matches("models/").to_owned()),
        ..Request::default()
    };
    match field(map, "systemInstruction") {
        None => {}
        Some(Value::String(s)) => r.system.push(s.clone()),
        Some(Value::Object(s)) => {
            let texts: Vec<String> = items(s, "parts", "$.systemInstruction")?
                .into_iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            r.system.push(texts.concat());
        }
        Some(other) => {
            return error(
                "$.systemInstruction",
                format!("expected an object, not {}", super::kind(other)),
            )
        }
    }
    // Calls by name, in order: a functionResponse without an id answers the earliest one.
    let mut open: std::collections::HashMap<String, std::collections::VecDeque<String>> =
        std::collections::HashMap::new();
    let mut answered: std::collections::HashSet<String> = std::collections::HashSet::new();
    for (i, content) in items(map, "contents", "$")?.into_iter().enumerate() {
        let path = format!("$.contents[{i}]");
        let c = object(content, &path)?;
        let role = match text_field(c, "role", &path)?.as_deref() {
            None | Some("user") | Some("function") | Some("tool") => Role::User,
            Some("model") | Some("assistant") => Role::Assistant,
            Some(other) => {
                return error(
                    format!("{path}.role"),
                    format!("expected \"user\" or \"model\", not {other:?}"),
                )
            }
        };
        for (j, part) in items(c, "parts", &path)?.into_iter().enumerate() {
            let ppath = format!("{path}.parts[{j}]");
            let p = object(part, &ppath)?;
            let signature = text_field(p, "thoughtSignature", &ppath)?;
            if let Some(call) = field(p, "functionCall") {
                let fc = object(call, &format!("{ppath}.functionCall"))?;
                let name = text_field(fc, "name", &ppath)?.unwrap_or_default();
                let id = text_field(fc, "id", &ppath)?.unwrap_or_else(|| format!("call_{i}_{j}"));
                open.entry(name.clone()).or_default().push_back(id.clone());
                let args = field(fc, "args").cloned().unwrap_or_else(|| json!({}));
                if let Some(sig) = signature {
                    r.push(
                        Role::Assistant,
                        Part::Reasoning(Reasoning {
                            from: Some(Dialect::Gemini),
                            signature: Some(sig),
                            ..Reasoning::default()
                        }),
                    );
                }
                r.push(
                    Role::Assistant,
                    Part::Call {
                        id,
                        name,
                        arguments: args.to_string(),
                    },
                );
            } else if let Some(response) = field(p, "functionResponse") {
                let fr = object(response, &format!("{ppath}.functionResponse"))?;
                let name = text_field(fr, "name", &ppath)?.unwrap_or_default();
                let pending = open.entry(name.clone()).or_default();
                let id = match text_field(fr, "id", &ppath)? {
                    Some(id) => {
                        answered.insert(id.clone());
                        id
                    }
                    // The earliest call of the name not answered by id yet.
                    None => match std::iter::from_fn(|| pending.pop_front())
                        .find(|open_id| !answered.contains(open_id))
                    {
                        Some(id) => id,
                        // A result whose call is not in the history crosses under its name.
                        None => name.clone(),
                    },
                };
                let value = field(fr, "response").cloned().unwrap_or(Value::Null);
                // `{"result": text}` or `{"output": text}` is the text; any other object its JSON.
                let (text, error) = match &value {
                    Value::Object(o) if o.len() == 1 => match o.iter().next() {
                        Some((k, Value::String(s))) if k == "result" || k == "output" => {
                            (s.clone(), false)
                        }
                        Some((k, v)) if k == "error" => (
                            v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                            true,
                        ),
                        _ => (value.to_string(), false),
                    },
                    Value::String(s) => (s.clone(), false),
                    _ => (value.to_string(), false),
                };
                // A multimodal response's own parts: its images and files.
                let mut content = vec![Part::Text(text)];
                if let Some(Value::Array(media)) = field(fr, "parts") {
                    for (k, m) in media.iter().enumerate() {
                        let mpath = format!("{ppath}.functionResponse.parts[{k}]");
                        let m = object(m, &mpath)?;
                        let (data, file) = (field(m, "inlineData"), field(m, "fileData"));
                        let Some(source) = data.or(file) else {
                            continue;
                        };
                        let o = object(source, &mpath)?;
                        content.push(media_part(Media {
                            data: data
                                .map(|_| text_field(o, "data", &mpath))
                                .transpose()?
                                .flatten(),
                            url: file
                                .map(|_| text_field(o, "fileUri", &mpath))
                                .transpose()?
                                .flatten(),
                            media_type: text_field(o, "mimeType", &mpath)?,
                            ..Media::default()
                        }));
                    }
                }
                r.push(
                    Role::User,
                    Part::Result {
                        id,
                        name: Some(name),
                        content,
                        error,
                    },
                );
            } else if let Some(inline) = field(p, "inlineData") {
                let d = object(inline, &format!("{ppath}.inlineData"))?;
                let media = Media {
                    data: text_field(d, "data", &ppath)?,
                    media_type: text_field(d, "mimeType", &ppath)?,
                    ..Media::default()
                };
                r.push(role, media_part(media));
            } else if let Some(file) = field(p, "fileData") {
                let f = object(file, &format!("{ppath}.fileData"))?;
                let media = Media {
                    url: text_field(f, "fileUri", &ppath)?,
                    media_type: text_field(f, "mimeType", &ppath)?,
                    ..Media::default()
                };
                r.push(role, media_part(media));
            } else if let Some(text) = text_field(p, "text", &ppath)? {
                if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    r.push(
                        Role::Assistant,
                        Part::Reasoning(Reasoning {
                            from: Some(Dialect::Gemini),
                            text,
                            signature,
                            ..Reasoning::default()
                        }),
                    );
                } else {
                    if let Some(sig) = signature {
                        r.push(
                            role,
                            Part::Reasoning(Reasoning {
                                from: Some(Dialect::Gemini),
                                signature: Some(sig),
                                ..Reasoning::default()
                            }),
                        );
                    }
                    r.push(role, Part::Text(text));
                }
            } else {
                let kind = p.keys().next().cloned().unwrap_or_default();
                r.unmapped.push(format!("{kind} parts"));
            }
        }
    }
    for (i, tool) in items(map, "tools", "$")?.into_iter().enumerate() {
        let path = format!("$.tools[{i}]");
        let t = object(tool, &path)?;
        let declarations = items(t, "functionDeclarations", &path)?;
        if declarations.is_empty() {
            let kind = t.keys().next().cloned().unwrap_or_default();
            r.unmapped.push(format!("built-in tools ({kind})"));
        }
        for (j, d) in declarations.into_iter().enumerate() {
            let dpath = format!("{path}.functionDeclarations[{j}]");
            let d = object(d, &dpath)?;
            let Some(name) = text_field(d, "name", &dpath)? else {
                return error(
                    format!("{dpath}.name"),
                    "a function declaration needs a name",
                );
            };
            let parameters = field(d, "parametersJsonSchema")
                .or_else(|| field(d, "parameters"))
                .map(lower_types)
                .unwrap_or(Value::Null);
            r.tools.push(Tool {
                name,
                description: text_field(d, "description", &dpath)?,
                parameters,
                strict: None,
            });
        }
    }
    if let Some(config) = field(map, "toolConfig").and_then(Value::as_object) {
        if let Some(f) = field(config, "functionCallingConfig").and_then(Value::as_object) {
            let names: Vec<String> = items(f, "allowedFunctionNames", "$.toolConfig")
                .unwrap_or_default()
                .into_iter()
                .filter_map(|n| n.as_str().map(str::to_owned))
                .collect();
            r.tool_choice = match text_field(f, "mode", "$.toolConfig")?.as_deref() {
                Some("NONE") => Some(ToolChoice::None),
                Some("ANY") => match names.as_slice() {
                    [one] => Some(ToolChoice::Named(one.clone())),
                    _ => Some(ToolChoice::Required),
                },
                // VALIDATED: the model answers in text or calls a function (with schema
                // adherence, which no other dialect names): a choice, as AUTO.
                Some("AUTO") | Some("VALIDATED") => Some(ToolChoice::Auto),
                _ => None,
            };
        }
    }
    if let Some(g) = field(map, "generationConfig").and_then(Value::as_object) {
        let path = "$.generationConfig";
        r.max_tokens = field(g, "maxOutputTokens").and_then(Value::as_u64);
        r.temperature = field(g, "temperature").filter(|v| v.is_number()).cloned();
        r.top_p = field(g, "topP").filter(|v| v.is_number()).cloned();
        r.stop = super::stops(field(g, "stopSequences"), &format!("{path}.stopSequences"))?;
        let schema = field(g, "responseJsonSchema")
            .or_else(|| field(g, "responseSchema"))
            .map(lower_types);
        let json_mode =
            text_field(g, "responseMimeType", path)?.as_deref() == Some("application/json");
        if schema.is_some() || json_mode {
            r.output = Some(Output {
                name: None,
                schema,
                strict: None,
            });
        }
        if let Some(t) = field(g, "thinkingConfig").and_then(Value::as_object) {
            r.thinking = match (
                field(t, "thinkingBudget").and_then(Value::as_i64),
                text_field(t, "thinkingLevel", path)?,
            ) {
                (Some(0), _) => Some(Thinking::Off),
                (Some(n), _) if n > 0 => Some(Thinking::Budget(n as u64)),
                (_, Some(level)) => Some(Thinking::Effort(level.to_ascii_lowercase())),
                _ => None,
            };
        }
        if field(g, "candidateCount")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 1)
        {
            r.unmapped
                .push("candidateCount (more than one candidate)".into());
        }
    }
    for key in ["safetySettings", "cachedContent"] {
        if field(map, key).is_some() {
            r.unmapped.push(key.into());
        }
    }
    Ok(r)
}

/// An inline or file part as an image or a document, by its media type.
fn media_part(media: Media) -> Part {
    match media.media_type.as_deref() {
        Some(kind) if kind.starts_with("image/") => Part::Image(media),
        _ => Part::Document(media),
    }
}

/// A schema in Google's OpenAPI spelling (`"type": "OBJECT"`) in JSON Schema's (`"object"`).
fn lower_types(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("type", Value::String(t)) => Value::String(t.to_ascii_lowercase()),
                        _ => lower_types(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(lower_types).collect()),
        other => other.clone(),
    }
}
/// Where this dialect's requests spell a shared setting (`super::shape::SETTINGS`), as a
/// dotted path into the body; `None` where it has no such setting.
pub fn setting(setting: super::Setting) -> Option<&'static str> {
    Some(match setting {
        super::Setting::TopK => "generationConfig.topK",
        super::Setting::Seed => "generationConfig.seed",
        super::Setting::PresencePenalty => "generationConfig.presencePenalty",
        super::Setting::FrequencyPenalty => "generationConfig.frequencyPenalty",
        _ => return None,
    })
}

/// How the dialect's requests hold what the shared model holds (`super::Rules`).
pub const RULES: super::Rules = super::Rules {
    system_turns: Some("system messages inside the conversation (Gemini has none there: joined to systemInstruction)"),
    results_by_name: true, reasoning_on_call: true,
};

/// The streaming endpoint a request of this dialect goes to, naming `model`.
pub fn path(model: &str) -> String {
    let path = super::stream_path(Dialect::Gemini, &super::model_segment(model), "v1beta");
    format!("{path}?alt=sse")
}

/// Writes `r` as a Gemini request (the model goes in the path).
pub fn write(r: &Request, notes: &mut Notes) -> Value {
    let mut contents = Vec::new();
    for turn in &r.turns {
        let mut parts = Vec::new();
        let mut signature: Option<&str> = None;
        for part in &turn.parts {
            match part {
                Part::Text(t) if t.is_empty() => {}
                Part::Text(t) => {
                    let mut p = json!({"text": t});
                    if let Some(sig) = signature.take() {
                        super::set(&mut p, "thoughtSignature", json!(sig));
                    }
                    parts.push(p);
                }
                Part::Image(m) | Part::Document(m) => match m.inline() {
                    Some((data, kind)) => {
                        parts.push(json!({"inlineData": {"mimeType": kind, "data": data}}))
                    }
                    None => match &m.url {
                        Some(url) => {
                            let kind = m.media_type.clone().unwrap_or_else(|| guess_type(url));
                            parts.push(json!({"fileData": {"mimeType": kind, "fileUri": url}}));
                        }
                        None if m.file_id.is_some() => notes.add(
                            "uploaded file ids (a file belongs to the provider it was uploaded to)",
                        ),
                        None => notes.add("media without data or URL"),
                    },
                },
                Part::Call {
                    id,
                    name,
                    arguments,
                } => {
                    let call =
                        json!({"id": id, "name": name, "args": arguments_object(arguments, notes)});
                    let mut p = json!({"functionCall": call});
                    if let Some(sig) = signature.take() {
                        super::set(&mut p, "thoughtSignature", json!(sig));
                    }
                    parts.push(p);
                }
                Part::Result {
                    id,
                    name,
                    content,
                    error,
                } => {
                    // Images and files go in the response's own `parts` (Gemini's multimodal
                    // function responses); the text in `response`.
                    let texts: Vec<Part> = content
                        .iter()
                        .filter(|p| !matches!(p, Part::Image(_) | Part::Document(_)))
                        .cloned()
                        .collect();
                    let text = super::text_of(&texts, notes, "Gemini");
                    let key = if *error { "error" } else { "result" };
                    let mut response = json!({
                        "id": id,
                        "name": name.clone().unwrap_or_default(),
                        "response": {key: text},
                    });
                    let media: Vec<Value> = content
                        .iter()
                        .filter_map(|p| match p {
                            Part::Image(m) | Part::Document(m) => match (m.inline(), &m.url) {
                                (Some((data, kind)), _) => {
                                    Some(json!({"inlineData": {"mimeType": kind, "data": data}}))
                                }
                                (None, Some(url)) => {
                                    let kind =
                                        m.media_type.clone().unwrap_or_else(|| guess_type(url));
                                    Some(json!({"fileData": {"mimeType": kind, "fileUri": url}}))
                                }
                                (None, None) => {
                                    notes.add("media without data or URL in tool results");
                                    None
                                }
                            },
                            _ => None,
                        })
                        .collect();
                    if !media.is_empty() {
                        super::set(&mut response, "parts", Value::Array(media));
                    }
                    parts.push(json!({"functionResponse": response}));
                }
                Part::Reasoning(Reasoning {
                    from: Some(Dialect::Gemini),
                    text,
                    signature: sig,
                    ..
                }) => {
                    if text.is_empty() {
                        signature = sig.as_deref();
                    } else {
                        let mut p = json!({"text": text, "thought": true});
                        if let Some(sig) = sig {
                            super::set(&mut p, "thoughtSignature", json!(sig));
                        }
                        parts.push(p);
                    }
                }
                Part::Reasoning(_) => super::reasoning_note(notes, "Gemini"),
                Part::Unknown(kind) => super::unknown_note(notes, kind),
            }
        }
        if parts.is_empty() {
            continue;
        }
        let role = if turn.role == Role::User {
            "user"
        } else {
            "model"
        };
        contents.push(json!({"role": role, "parts": parts}));
    }
    let mut body = Map::new();
    let only_system = contents.is_empty() && !r.system.is_empty();
    if only_system {
        // Gemini refuses a request without contents: a conversation that is only a system
        // prompt is sent as the user's text.
        notes.add(
            "a request with no user or model turn (its system prompt was sent as the user's text)",
        );
        contents.push(json!({"role": "user", "parts": [{"text": r.system.join("\n\n")}]}));
    }
    body.insert("contents".into(), Value::Array(contents));
    if !r.system.is_empty() && !only_system {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": r.system.join("\n\n")}]}),
        );
    }
    if !r.tools.is_empty() {
        let declarations: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                let mut d = Map::new();
                d.insert("name".into(), json!(t.name));
                if let Some(desc) = &t.description {
                    d.insert("description".into(), json!(desc));
                }
                d.insert("parametersJsonSchema".into(), object_schema(&t.parameters));
                Value::Object(d)
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    if let Some(choice) = &r.tool_choice {
        let config = match choice {
            ToolChoice::Auto => json!({"mode": "AUTO"}),
            ToolChoice::None => json!({"mode": "NONE"}),
            ToolChoice::Required => json!({"mode": "ANY"}),
            ToolChoice::Named(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": config}),
        );
    }
    if r.parallel_tool_calls == Some(false) {
        notes.add("parallel_tool_calls: false (Gemini has no such setting)");
    }
    let mut g = Map::new();
    if let Some(n) = r.max_tokens {
        g.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(t) = &r.temperature {
        g.insert("temperature".into(), t.clone());
    }
    if let Some(p) = &r.top_p {
        g.insert("topP".into(), p.clone());
    }
    if !r.stop.is_empty() {
        g.insert("stopSequences".into(), json!(r.stop));
    }
    if let Some(output) = &r.output {
        g.insert("responseMimeType".into(), json!("application/json"));
        if let Some(schema) = &output.schema {
            g.insert("responseJsonSchema".into(), schema.clone());
        }
    }
    match &r.thinking {
        Some(Thinking::Off) => {
            g.insert("thinkingConfig".into(), json!({"thinkingBudget": 0}));
        }
        Some(t) => {
            if let Some(budget) = t.budget() {
                g.insert("thinkingConfig".into(), json!({"thinkingBudget": budget}));
            }
        }
        None => {}
    }
    if !g.is_empty() {
        body.insert("generationConfig".into(), Value::Object(g));
    }
    Value::Object(body)
}

/// A media type for a file URL, by its extension.
fn guess_type(url: &str) -> String {
    let lower = url.to_ascii_lowercase();
    let path = lower.split(['?', '#']).next().unwrap_or_default();
    let kind = match path.rsplit('.').next().unwrap_or_default() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        _ => "application/octet-stream",
    };
    kind.to_owned()
}
