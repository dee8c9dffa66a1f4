//! The agent loop through every pair: a request of each dialect with a system prompt, a user
//! turn with an image, an assistant turn with two parallel tool calls, their results (one an
//! error), tools, `tool_choice` and settings, translated into every other dialect and read
//! back: the conversation the model sees is the same.

use serde_json::{json, Value};

use super::*;

fn chat_loop() -> Value {
    json!({
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "Weather in Paris and Rome?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Rome\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "18C"},
            {"role": "tool", "tool_call_id": "call_b", "content": "21C"},
            {"role": "assistant", "content": "Paris 18C, Rome 21C."},
            {"role": "user", "content": "Thanks"}
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "description": "Weather now",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
        "tool_choice": "auto",
        "max_tokens": 300,
        "stop": ["END"],
        "stream": true
    })
}

/// What the model sees: the system prompt, each turn's role and its parts' gist, the tools.
type Seen = (Vec<String>, Vec<(Role, Vec<String>)>, Vec<String>);

fn seen(r: &Request) -> Seen {
    let turns = r
        .turns
        .iter()
        .map(|t| {
            let parts = t
                .parts
                .iter()
                .filter_map(|p| match p {
                    Part::Text(t) if t.is_empty() => None,
                    Part::Text(t) => Some(format!("text {t}")),
                    Part::Image(m) => Some(format!("image {:?}", m.inline())),
                    Part::Document(_) => Some("document".into()),
                    Part::Unknown(kind) => Some(format!("unknown {kind}")),
                    Part::Call {
                        id,
                        name,
                        arguments,
                    } => {
                        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
                        Some(format!("call {id} {name} {args}"))
                    }
                    Part::Result {
                        id, name, content, ..
                    } => {
                        let text = text_of(content, &mut Notes::default(), "t");
                        Some(format!("result {id} {name:?} {text}"))
                    }
                    Part::Reasoning(_) => None,
                })
                .collect();
            (t.role, parts)
        })
        .collect();
    let tools = r.tools.iter().map(|t| t.name.clone()).collect();
    (r.system.clone(), turns, tools)
}

fn read(body: &Value, d: Dialect) -> Request {
    super::read(body, d).unwrap_or_else(|e| panic!("{d:?}: {e}\n{body:#}"))
}

#[test]
fn the_agent_loop_crosses_every_pair() {
    let base = read(&chat_loop(), Dialect::Chat);
    for source in Dialect::ALL {
        // The loop written in `source` first, then into every other dialect.
        let body = translate(&chat_loop(), Dialect::Chat, source, Some("m"))
            .unwrap()
            .body;
        let from = read(&body, source);
        assert_eq!(seen(&from), seen(&base), "chat -> {source:?}\n{body:#}");
        for target in Dialect::ALL {
            if target == source {
                continue;
            }
            let t = translate(&body, source, target, Some("m")).unwrap();
            let back = read(&t.body, target);
            assert_eq!(
                seen(&back),
                seen(&base),
                "{source:?} -> {target:?}\n{:#}",
                t.body
            );
            assert_eq!(
                back.tool_choice,
                Some(ToolChoice::Auto),
                "{source:?} -> {target:?}"
            );
            assert_eq!(back.max_tokens, Some(300));
            if target != Dialect::Responses && source != Dialect::Responses {
                assert_eq!(
                    back.stop,
                    vec!["END".to_owned()],
                    "{source:?} -> {target:?}"
                );
            }
        }
    }
}

#[test]
fn streaming_and_paths_are_the_targets() {
    let t = translate(&chat_loop(), Dialect::Chat, Dialect::Messages, None).unwrap();
    assert_eq!(t.path, "/v1/messages");
    assert_eq!(t.body["stream"], json!(true));
    let t = translate(
        &chat_loop(),
        Dialect::Chat,
        Dialect::Gemini,
        Some("gemini-2.5-flash"),
    )
    .unwrap();
    assert_eq!(
        t.path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert!(t.body.get("model").is_none());
    let t = translate(&chat_loop(), Dialect::Messages, Dialect::Chat, None);
    assert!(t.is_err(), "a chat body is not a Messages request");
    let m = translate(&chat_loop(), Dialect::Chat, Dialect::Messages, None)
        .unwrap()
        .body;
    let c = translate(&m, Dialect::Messages, Dialect::Chat, None).unwrap();
    assert_eq!(c.body["stream_options"], json!({"include_usage": true}));
    // Messages has no temperature in the SDK's request type: a note, not a key.
    let mut with_t = chat_loop();
    with_t["temperature"] = json!(0.2);
    let t = translate(&with_t, Dialect::Chat, Dialect::Messages, None).unwrap();
    assert!(t.body.get("temperature").is_none());
    assert!(
        t.notes.iter().any(|n| n.contains("temperature")),
        "{:?}",
        t.notes
    );
}

#[test]
fn a_tool_result_for_no_call_crosses_with_a_note_and_bad_bodies_say_where() {
    // A result whose call is not in the history (a server tool's, a trimmed history): the
    // provider accepted it, so it crosses; where the target pairs results with calls, as
    // the user's text naming the call.
    let body = json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "nope", "content": "x"}
    ]});
    let m = translate(&body, Dialect::Chat, Dialect::Messages, None).unwrap();
    assert_eq!(
        m.body["messages"][0]["content"][1],
        json!({"type": "text", "text": "[the result of tool call nope]\nx"})
    );
    assert!(m
        .notes
        .iter()
        .any(|n| n.contains("call is not in the history")));
    let g = translate(&body, Dialect::Chat, Dialect::Gemini, None).unwrap();
    assert_eq!(
        g.body["contents"][0]["parts"][1]["functionResponse"]["name"],
        "nope"
    );
    let e = messages::read(&json!({"messages": [{"role": "user", "content": 5}]})).unwrap_err();
    assert_eq!(e.path, "$.messages[0].content");
    assert!(chat::read(&json!([1])).is_err());
}

#[test]
fn errors_and_reasoning_cross_where_the_target_reads_them() {
    let body = json!({
        "model": "claude", "max_tokens": 2000,
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "tool_use", "id": "toolu_1", "name": "run", "input": {"cmd": "ls"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "denied", "is_error": true}
            ]}
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1500}
    });
    // Back into Messages: the thinking block with its signature, the error flag.
    let r = read(&body, Dialect::Messages);
    let mut notes = Notes::default();
    let again = messages::write(&r, &mut notes);
    assert_eq!(
        again["messages"][1]["content"][0]["signature"],
        json!("sig")
    );
    assert_eq!(again["messages"][2]["content"][0]["is_error"], json!(true));
    assert_eq!(
        again["thinking"],
        json!({"type": "enabled", "budget_tokens": 1500})
    );
    // Into chat: the reasoning is noted, the error is the result's text, the budget an effort.
    let c = translate(&body, Dialect::Messages, Dialect::Chat, None).unwrap();
    assert!(
        c.notes.iter().any(|n| n.contains("reasoning")),
        "{:?}",
        c.notes
    );
    assert!(c.notes.iter().any(|n| n.contains("error")), "{:?}", c.notes);
    assert_eq!(c.body["messages"][2]["content"], json!("denied"));
    assert_eq!(c.body["reasoning_effort"], json!("low"));
    // Into Gemini: the error is the response's error.
    let g = translate(&body, Dialect::Messages, Dialect::Gemini, None).unwrap();
    let response = &g.body["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["response"], json!({"error": "denied"}));
    assert_eq!(response["name"], json!("run"));
    assert_eq!(
        g.body["generationConfig"]["thinkingConfig"],
        json!({"thinkingBudget": 1500})
    );
}

#[test]
fn google_spellings_read() {
    let body = json!({
        "system_instruction": {"parts": {"text": "sys"}},
        "contents": {"role": "user", "parts": [{"text": "hi"}]},
        "tools": {"function_declarations": [{"name": "f", "parameters": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}}]},
        "tool_config": {"function_calling_config": {"mode": "ANY", "allowed_function_names": ["f"]}},
        "generation_config": {"max_output_tokens": 50, "thinking_config": {"thinking_level": "HIGH"}}
    });
    let r = read(&body, Dialect::Gemini);
    assert_eq!(r.system, vec!["sys".to_owned()]);
    assert_eq!(
        r.tools[0].parameters["properties"]["a"]["type"],
        json!("string")
    );
    assert_eq!(r.tool_choice, Some(ToolChoice::Named("f".into())));
    assert_eq!(r.max_tokens, Some(50));
    assert_eq!(r.thinking, Some(Thinking::Effort("high".into())));
    // A functionResponse answers the earliest open call of its name.
    let loop_ = json!({"contents": [
        {"role": "user", "parts": [{"text": "x"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {"n": 2}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"result": "one"}}},
                                    {"functionResponse": {"name": "f", "response": {"result": "two"}}}]}
    ]});
    let c = translate(&loop_, Dialect::Gemini, Dialect::Chat, Some("g"))
        .unwrap()
        .body;
    let calls = &c["messages"][1]["tool_calls"];
    assert_eq!(c["messages"][2]["tool_call_id"], calls[0]["id"]);
    assert_eq!(c["messages"][3]["tool_call_id"], calls[1]["id"]);
    assert_eq!(c["messages"][3]["content"], json!("two"));
    assert_eq!(c["model"], json!("g"));
}

#[test]
fn effort_and_budget_map_by_the_table() {
    assert_eq!(Thinking::Effort("medium".into()).budget(), Some(8192));
    assert_eq!(
        Thinking::Budget(3000).effort(&["low", "medium", "high"]),
        Some("medium")
    );
    assert_eq!(
        Thinking::Budget(1_000_000).effort(&["low", "high"]),
        Some("high")
    );
    assert_eq!(
        Thinking::Effort("max".into()).effort(&["low", "high"]),
        Some("high")
    );
    assert_eq!(
        Thinking::Effort("HIGH".into()).effort(&["high"]),
        Some("high")
    );
    assert_eq!(Thinking::Off.effort(&["low"]), None);
}

#[test]
fn a_model_name_is_one_path_segment_or_refused() {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    for (model, segment) in [
        ("gemini-2.5-pro", "gemini-2.5-pro"),
        ("models/gemini-3", "gemini-3"),
        ("../../admin/x", "..%2F..%2Fadmin%2Fx"),
        ("m?key=X#f", "m%3Fkey%3DX%23f"),
        ("m:generateContent", "m%3AgenerateContent"),
        ("modèle 1%", "mod%C3%A8le%201%25"),
        ("..", "%2E%2E"),
    ] {
        let t = translate(&body, Dialect::Chat, Dialect::Gemini, Some(model)).unwrap();
        assert_eq!(
            t.path,
            format!("/v1beta/models/{segment}:streamGenerateContent?alt=sse")
        );
    }
    for bad in [
        "",
        "m\r\nX-Injected: yes",
        "m\u{0}",
        &"m".repeat(MAX_MODEL + 1),
    ] {
        for target in [Dialect::Gemini, Dialect::Messages] {
            let e = translate(&body, Dialect::Chat, target, Some(bad)).unwrap_err();
            assert_eq!(e.path, "$.model", "{bad:?}");
        }
    }
}

fn carried_turn(id: &str) -> Value {
    json!({"model": "m", "messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "weather", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": id, "content": "18C"}
    ]})
}

#[test]
fn carried_reasoning_is_restored_for_its_own_upstream_only() {
    use crate::translate::carry::{encode, Carried};
    let thinking = Carried {
        text: "Think.".into(),
        signature: Some("c2ln".into()),
        ..Carried::default()
    };
    let id = encode("toolu_1", Dialect::Messages, &[thinking]);
    let m = translate(&carried_turn(&id), Dialect::Chat, Dialect::Messages, None).unwrap();
    let content = &m.body["messages"][1]["content"];
    assert_eq!(
        content[0],
        json!({"type": "thinking", "thinking": "Think.", "signature": "c2ln"})
    );
    assert_eq!(content[1]["type"], "text");
    assert_eq!(content[2]["id"], "toolu_1");
    assert_eq!(
        m.body["messages"][2]["content"][0]["tool_use_id"],
        "toolu_1"
    );
    // For a Gemini upstream the id is the original and the thinking a note.
    let g = translate(&carried_turn(&id), Dialect::Chat, Dialect::Gemini, None).unwrap();
    let parts = &g.body["contents"][1]["parts"];
    assert!(parts
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p.get("thoughtSignature").is_none()));
    assert_eq!(parts[1]["functionCall"]["id"], "toolu_1");
    assert!(g
        .notes
        .iter()
        .any(|n| n.contains("carried for a messages upstream")));
    // A Gemini signature goes on the call's own part.
    let sig = Carried {
        signature: Some("Z3NpZw==".into()),
        ..Carried::default()
    };
    let gid = encode("fc_1", Dialect::Gemini, &[sig]);
    let g = translate(&carried_turn(&gid), Dialect::Chat, Dialect::Gemini, None).unwrap();
    let parts = &g.body["contents"][1]["parts"];
    assert_eq!(parts[1]["thoughtSignature"], "Z3NpZw==");
    assert_eq!(parts[1]["functionCall"]["id"], "fc_1");
    assert!(parts[0].get("thoughtSignature").is_none());
    // An id that looks like a carrier but does not decode stays, with a note.
    let r = translate(
        &carried_turn("sswc1_m_!!"),
        Dialect::Chat,
        Dialect::Responses,
        None,
    )
    .unwrap();
    assert!(r.notes.iter().any(|n| n.contains("do not decode")));
}

#[test]
fn settings_cross_where_the_target_has_them() {
    let body = json!({"model": "m", "seed": 3, "user": "u", "store": true,
        "messages": [{"role": "user", "content": "hi"}]});
    let g = translate(&body, Dialect::Chat, Dialect::Gemini, None).unwrap();
    assert_eq!(g.body["generationConfig"]["seed"], 3);
    assert!(g.notes.iter().any(|n| n.starts_with("user ")));
    assert!(g.notes.iter().any(|n| n.starts_with("store ")));
    let m = translate(&body, Dialect::Chat, Dialect::Messages, None).unwrap();
    assert_eq!(m.body["metadata"]["user_id"], "u");
    assert!(m.notes.iter().any(|n| n.starts_with("seed ")));
    let back = translate(&m.body, Dialect::Messages, Dialect::Chat, None).unwrap();
    assert_eq!(back.body["user"], "u");
}

/// Gemini's JSON may spell `topK` `40.0`; Anthropic's API takes only an integer there. A whole
/// number crosses as an integer; one with a fraction is not sent, noted, never rounded.
#[test]
fn top_k_and_seed_cross_as_integers() {
    let gemini = |top_k: Value| {
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
               "generationConfig": {"topK": top_k, "seed": 7.0}})
    };
    let m = translate(
        &gemini(json!(40.0)),
        Dialect::Gemini,
        Dialect::Messages,
        Some("m"),
    )
    .unwrap();
    assert!(m.body["top_k"].is_i64(), "{}", m.body);
    assert_eq!(m.body["top_k"], 40);
    let c = translate(
        &gemini(json!(40)),
        Dialect::Gemini,
        Dialect::Chat,
        Some("m"),
    )
    .unwrap();
    assert!(c.body["seed"].is_i64() && c.body["seed"] == 7, "{}", c.body);
    let m = translate(
        &gemini(json!(40.5)),
        Dialect::Gemini,
        Dialect::Messages,
        Some("m"),
    )
    .unwrap();
    assert!(m.body.get("top_k").is_none(), "{}", m.body);
    assert!(
        m.notes.iter().any(|n| n.starts_with("top_k 40.5 ")),
        "{:?}",
        m.notes
    );
}

/// Chat `video_url` and `document_url` parts (OpenRouter, vLLM, Mistral) reach each target
/// that can carry them; where one cannot, a note. An unknown part type is a note too, never
/// placeholder text the model would read as the user's words.
#[test]
fn video_and_document_url_parts_cross_or_are_noted() {
    let body = |part: Value| {
        json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "look"}, part]}]})
    };
    let video =
        body(json!({"type": "video_url", "video_url": {"url": "https://x.test/clip.webm"}}));
    let g = translate(&video, Dialect::Chat, Dialect::Gemini, None).unwrap();
    let parts = &g.body["contents"][0]["parts"];
    assert_eq!(
        parts[1]["fileData"],
        json!({"mimeType": "video/webm", "fileUri": "https://x.test/clip.webm"})
    );
    let inline = body(json!({"type": "video_url", "video_url": "data:video/mp4;base64,AAAA"}));
    let g = translate(&inline, Dialect::Chat, Dialect::Gemini, None).unwrap();
    assert_eq!(
        g.body["contents"][0]["parts"][1]["inlineData"],
        json!({"mimeType": "video/mp4", "data": "AAAA"})
    );
    for (target, says) in [
        (Dialect::Messages, "video (Messages"),
        (Dialect::Responses, "video (the Responses"),
    ] {
        let r = translate(&video, Dialect::Chat, target, Some("m")).unwrap();
        assert!(
            r.notes.iter().any(|n| n.starts_with(says)),
            "{target:?} {:?}",
            r.notes
        );
        assert!(
            !r.body.to_string().contains("video_url content"),
            "{}",
            r.body
        );
    }
    let doc = body(
        json!({"type": "document_url", "document_url": "https://x.test/a.pdf", "document_name": "a"}),
    );
    let m = translate(&doc, Dialect::Chat, Dialect::Messages, None).unwrap();
    let block = &m.body["messages"][0]["content"][1];
    assert_eq!(block["type"], "document");
    assert_eq!(
        block["source"],
        json!({"type": "url", "url": "https://x.test/a.pdf"})
    );
    let r = translate(&doc, Dialect::Chat, Dialect::Responses, None).unwrap();
    let file = &r.body["input"][0]["content"][1];
    assert_eq!(
        (file["type"].as_str(), file["file_url"].as_str()),
        (Some("input_file"), Some("https://x.test/a.pdf"))
    );
    let g = translate(&doc, Dialect::Chat, Dialect::Gemini, None).unwrap();
    assert_eq!(
        g.body["contents"][0]["parts"][1]["fileData"]["mimeType"],
        "application/pdf"
    );
    let odd = body(json!({"type": "hologram", "hologram": {}}));
    for target in [
        Dialect::Messages,
        Dialect::Responses,
        Dialect::Gemini,
        Dialect::Converse,
    ] {
        let r = translate(&odd, Dialect::Chat, target, Some("m")).unwrap();
        assert!(
            !r.body.to_string().contains("hologram"),
            "{target:?} {}",
            r.body
        );
        assert!(
            r.notes.iter().any(|n| n.contains("\"hologram\"")),
            "{target:?} {:?}",
            r.notes
        );
    }
}

/// A tool that returns an image (a screenshot tool): the image reaches each target whose tool
/// result holds media (Messages `tool_result` content, Responses `function_call_output` lists,
/// Gemini `functionResponse.parts`), and back; chat's tool message takes text only (noted).
#[test]
fn images_in_tool_results_reach_the_targets_that_hold_them() {
    let body = json!({"model": "m", "max_tokens": 9, "messages": [
        {"role": "user", "content": "shot?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": [
            {"type": "text", "text": "here"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}]}]});
    let r = translate(&body, Dialect::Messages, Dialect::Responses, None).unwrap();
    let out = r.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap()["output"]
        .clone();
    assert_eq!(out[0], json!({"type": "input_text", "text": "here"}));
    assert_eq!(out[1]["type"], "input_image");
    assert_eq!(out[1]["image_url"], "data:image/png;base64,iVBORw0KGgo=");
    assert!(
        r.notes.iter().all(|n| !n.contains("images")),
        "{:?}",
        r.notes
    );
    let g = translate(&body, Dialect::Messages, Dialect::Gemini, None).unwrap();
    let fr = &g.body["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(fr["response"], json!({"result": "here"}));
    assert_eq!(
        fr["parts"],
        json!([{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}])
    );
    // Back from each: the image is in Messages' tool_result again.
    for (from, b) in [(Dialect::Responses, &r.body), (Dialect::Gemini, &g.body)] {
        let m = translate(b, from, Dialect::Messages, Some("m")).unwrap();
        assert!(
            m.body.to_string().contains("iVBORw0KGgo="),
            "{from:?} {}",
            m.body
        );
    }
    let c = translate(&body, Dialect::Messages, Dialect::Chat, None).unwrap();
    assert!(
        c.notes
            .iter()
            .any(|n| n.starts_with("images in tool results")),
        "{:?}",
        c.notes
    );
}

#[test]
fn a_streamed_chat_request_is_asked_for_its_usage_once() {
    use crate::request::ask_for_usage;
    let body = json!({"model": "m", "messages": [], "stream": true});
    let (key, value) = ask_for_usage(Dialect::Chat, &body).unwrap();
    assert_eq!(
        (key, &value),
        ("stream_options", &json!({"include_usage": true}))
    );
    // Asked already: nothing to add.
    let asked = json!({"stream": true, "stream_options": value});
    assert_eq!(ask_for_usage(Dialect::Chat, &asked), None);
    // The client's other options are kept; a null is no options.
    let other = json!({"stream": true, "stream_options": {"include_obfuscation": false}});
    assert_eq!(
        ask_for_usage(Dialect::Chat, &other).unwrap().1,
        json!({"include_obfuscation": false, "include_usage": true})
    );
    let null = json!({"stream": true, "stream_options": null});
    assert!(ask_for_usage(Dialect::Chat, &null).is_some());
    let no = json!({"stream": true, "stream_options": {"include_usage": "yes"}});
    assert!(ask_for_usage(Dialect::Chat, &no).is_some());
    // Not streamed, a stream_options that is no object, another dialect: nothing asked.
    for (dialect, body) in [
        (Dialect::Chat, json!({"stream": false})),
        (Dialect::Chat, json!({"stream": true, "stream_options": 3})),
        (Dialect::Messages, json!({"stream": true})),
        (Dialect::Chat, json!([1])),
    ] {
        assert_eq!(ask_for_usage(dialect, &body), None, "{body}");
    }
}
