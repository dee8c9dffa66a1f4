//! Tests of `stream`: the framing helpers, and vendor keys on the fast path.

use super::*;

#[test]
fn blank_line_end_finds_lf_and_crlf_runs() {
    assert_eq!(blank_line_end(b"data: a\n\ndata: b\n\n", 0), 9);
    assert_eq!(blank_line_end(b"data: a\r\n\r\n\r\nx", 0), 13);
    assert_eq!(blank_line_end(b"data: a\n", 0), 8);
    assert_eq!(blank_line_end(b"", 5), 0);
}

#[test]
fn own_failures_quote_their_type_and_code() {
    let codes: std::collections::HashSet<_> = crate::dialect::ErrorKind::ALL
        .iter()
        .map(|k| k.code_json())
        .collect();
    assert_eq!(
        codes.len(),
        crate::dialect::ErrorKind::ALL.len(),
        "one code a kind"
    );
    for kind in crate::dialect::ErrorKind::ALL {
        let failure = Failure::own("m".into(), kind);
        let info = failure.info();
        assert_eq!(info.type_, kind.type_json(), "{kind:?}");
        assert_eq!(info.code, kind.code_json(), "{kind:?}");
        // Each is a JSON string of a name.
        for raw in [info.type_, info.code].into_iter().flatten() {
            let name = serde_json::from_str::<String>(raw).unwrap();
            assert!(
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{kind:?}: {raw}"
            );
        }
    }
}

mod vendor {
    use super::responses::ResponsesReader;
    use super::*;

    /// Events with keys the decoder does not know make a template whose raw holes take their
    /// changing values: later frames are read off the wire's bytes without a decode.
    #[test]
    fn events_with_unknown_keys_reach_the_fast_path() {
        let frame = |n: u32, text: &str| {
            format!(
                "event: response.shell_call_command.delta\ndata: {{\"type\":\"response.shell_call_command.delta\",\"output_index\":0,\"command_index\":{},\"vendor\":\"v{n}\",\"delta\":\"{text}\",\"sequence_number\":{n}}}\n\n",
                n / 2
            )
        };
        let mut s = Stream::<ResponsesReader<()>>::new(1 << 16);
        s.run(frame(1, "ls").as_bytes(), &mut Quiet).unwrap();
        assert!(s.reader.has_template());
        for (n, text) in [(2, " -la"), (3, "\\n"), (10, "caf\\u00e9")] {
            let wire = frame(n, text);
            let took = s
                .reader
                .shortcut(&mut s.state, Subject::Raw(wire.as_bytes()), &mut Quiet)
                .unwrap();
            assert_eq!(took, Some(wire.len()), "{wire}");
        }
    }

    #[test]
    fn number_tokens() {
        use crate::dialect::template::num_len;
        for (text, len) in [
            ("0", Some(1)),
            ("-12,", Some(3)),
            ("1.5}", Some(3)),
            ("-0.0e+10 ", Some(8)),
            ("1E3", Some(3)),
            ("01", None),
            ("1.", None),
            ("1e", None),
            ("-", None),
            ("x", None),
        ] {
            assert_eq!(num_len(text.as_bytes()), len, "{text}");
        }
    }
}

mod ahead {
    use super::messages::MessagesReader;
    use super::*;

    /// Under `consume()` the first delta of each kind in each block is read off the wire
    /// without a decode, by the shapes known ahead; a frame of another spelling (a space after
    /// a colon) is decoded, and the fold is the same either way.
    #[test]
    fn messages_first_deltas_take_the_shapes_known_ahead() {
        let frame = |index: u32, kind: &str, key: &str, text: &str| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"{kind}\",\"{key}\":\"{text}\"}}}}\n\n"
            )
        };
        let body = [
            frame(0, "thinking_delta", "thinking", "hm"),
            frame(1, "text_delta", "text", "a\\nb"),
            frame(2, "input_json_delta", "partial_json", "{\\\"k\\\": 1}"),
        ]
        .concat();
        let mut s = Stream::<MessagesReader<()>>::new(1 << 16);
        s.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(s.state.fast, 3);
        let spaced = body.replace("\"index\":", "\"index\": ");
        let mut t = Stream::<MessagesReader<()>>::new(1 << 16);
        t.run(spaced.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(t.state.fast, 0);
        assert_eq!(s.reader.result().to_json(), t.reader.result().to_json());
        assert!(s.reader.result().to_json().contains(r#""text":"a\nb""#));
    }

    /// The same frames as Python's `json.dumps` writes them (`": "` and `", "`, a recorder's
    /// or a Python server's spelling) take the shapes known ahead too, padded or not.
    #[test]
    fn messages_shapes_known_ahead_in_python_spelling() {
        let body = |colon: &str, comma: &str, pad: &str| -> String {
            let frame = |index: u32, kind: &str, key: &str, text: &str| {
                format!(
                    "event: content_block_delta\ndata: {{\"type\"{colon}\"content_block_delta\"{comma}\"index\"{colon}{index}{comma}\"delta\"{colon}{{\"type\"{colon}\"{kind}\"{comma}\"{key}\"{colon}\"{text}\"}}{pad}}}\n\n"
                )
            };
            [
                frame(0, "thinking_delta", "thinking", "hm"),
                frame(1, "text_delta", "text", "a, b: c"),
                frame(2, "input_json_delta", "partial_json", "{\\\"k\\\": 1}"),
                format!("event: message_delta\ndata: {{\"type\"{colon}\"message_delta\"{comma}\"delta\"{colon}{{\"stop_reason\"{colon}\"end_turn\"{comma}\"stop_sequence\"{colon}null}}{comma}\"usage\"{colon}{{\"output_tokens\"{colon}7}}{pad}}}\n\n"),
            ]
            .concat()
        };
        let mut compact = Stream::<MessagesReader<()>>::new(1 << 16);
        compact
            .run(body(":", ",", "").as_bytes(), &mut Quiet)
            .unwrap();
        assert_eq!(compact.state.fast, 4);
        for pad in ["", "    "] {
            let mut s = Stream::<MessagesReader<()>>::new(1 << 16);
            s.run(body(": ", ", ", pad).as_bytes(), &mut Quiet).unwrap();
            assert_eq!(s.state.fast, 4, "{pad:?}");
            assert_eq!(
                s.reader.result().to_json(),
                compact.reader.result().to_json()
            );
        }
        assert!(compact
            .reader
            .result()
            .to_json()
            .contains(r#""output_tokens":7"#));
    }
}

/// Anthropic pads its frames: a run of spaces before each data's closing brace, of another
/// length each time. A padded stream takes the fast path as often as the same stream without
/// the padding, and folds to the same message.
#[test]
fn padded_messages_frames_take_the_fast_path() {
    use super::messages::MessagesReader;
    let mut frames = vec![
        ("message_start", r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":9,"output_tokens":1}}}"#.to_owned()),
        ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned()),
    ];
    for i in 0..40 {
        frames.push(("content_block_delta", format!(r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"word {i} \"q\" "}}}}"#)));
    }
    frames.push((
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.to_owned(),
    ));
    frames.push(("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":41}}"#.to_owned()));
    frames.push(("message_stop", r#"{"type":"message_stop"}"#.to_owned()));
    let body = |pad: bool| -> String {
        frames
            .iter()
            .enumerate()
            .map(|(i, (event, data))| {
                let data = if pad {
                    format!(
                        "{}{}}}",
                        &data[..data.len() - 1],
                        " ".repeat(1 + i * 7 % 23)
                    )
                } else {
                    data.clone()
                };
                format!("event: {event}\ndata: {data}\n\n")
            })
            .collect()
    };
    let mut plain = Stream::<MessagesReader<()>>::new(1 << 16);
    plain.run(body(false).as_bytes(), &mut Quiet).unwrap();
    let mut padded = Stream::<MessagesReader<()>>::new(1 << 16);
    padded.run(body(true).as_bytes(), &mut Quiet).unwrap();
    assert!(plain.state.fast >= 40, "{}", plain.state.fast);
    assert_eq!(padded.state.fast, plain.state.fast);
    assert_eq!(
        padded.reader.result().to_json(),
        plain.reader.result().to_json()
    );
}

mod spelling {
    use super::chat::ChatReader;
    use super::*;

    fn chunk(text: &str) -> String {
        format!(
            r#"{{"id":"c","object":"chat.completion.chunk","choices":[{{"index":0,"delta":{{"content":"{text}"}}}}]}}"#
        )
    }

    /// A frame not in the fast path's raw spelling (no space after the colon, an `id:` line,
    /// CRLF after the event line) is still tried framed, so such a stream takes the fast path
    /// after its first frame; a frame in that spelling is tried once only.
    #[test]
    fn frames_spelled_otherwise_reach_the_fast_path_framed() {
        for (spelling, fast) in [
            ("data: {}\n\n", 9),
            ("data:{}\n\n", 9),
            ("id: 7\ndata: {}\n\n", 9),
            ("data: {}\r\n\r\n", 9),
        ] {
            let body: String = (0..10)
                .map(|i| spelling.replace("{}", &chunk(&format!("w{i}"))))
                .collect();
            let mut s = Stream::<ChatReader<()>>::new(1 << 16);
            s.run(body.as_bytes(), &mut Quiet).unwrap();
            assert_eq!(s.state.fast, fast, "{spelling:?}");
        }
    }

    #[test]
    fn the_raw_spelling_is_event_then_data_then_a_blank_line() {
        let frame = |event: Option<&'static str>, data: &'static str| Frame {
            event: event.map(|e| Cow::Borrowed(e.as_bytes())),
            data: Cow::Borrowed(data),
        };
        let yes = [
            (frame(None, "{}"), &b"data: {}\n\n"[..]),
            (frame(None, "{}"), b"data: {}\r\n\r\n"),
            (frame(Some("e"), "{}"), b"event: e\ndata: {}\n\n"),
        ];
        for (f, bytes) in yes {
            assert!(spelled_as_template(&f, bytes, false), "{bytes:?}");
        }
        let no = [
            (frame(None, "{}"), &b"data:{}\n\n"[..]),
            (frame(None, "{}"), b"data: {}\n\n\n"),
            (frame(None, "{}"), b"id: 1\ndata: {}\n\n"),
            (frame(None, "{}"), b"data: {}\r\n\n"),
            (frame(Some("e"), "{}"), b"event:e\ndata: {}\n\n"),
            (frame(Some("e"), "{}"), b"event: e\r\ndata: {}\n\n"),
            (frame(None, "a\nb"), b"data: a\ndata: b\n\n"),
        ];
        for (f, bytes) in no {
            assert!(!spelled_as_template(&f, bytes, false), "{bytes:?}");
        }
        // A JSON line: its data, then LF or CRLF.
        for (bytes, yes) in [
            (&b"{}\n"[..], true),
            (b"{}\r\n", true),
            (b"{}", false),
            (b"{}\r\r\n", false),
            (b"{} \n", false),
            (b"data: {}\n\n", false),
        ] {
            assert_eq!(
                spelled_as_template(&frame(None, "{}"), bytes, true),
                yes,
                "{bytes:?}"
            );
            assert!(!spelled_as_template(&frame(Some("e"), "{}"), bytes, true));
        }
    }
}

mod ahead_events {
    use super::messages::MessagesReader;
    use super::*;

    fn frame(event: &str, data: &str) -> String {
        format!("event: {event}\ndata: {data}\n\n")
    }

    /// A whole Messages turn: every frame Anthropic writes for a text block, a thinking
    /// block (its signature too) and the message's start and end takes the fast path under
    /// `consume()`; a copy spelled with spaces, decoded frame by frame,
    /// folds to the same message, ends the same way and counts the same output frames.
    #[test]
    fn every_frame_of_a_plain_turn_is_read_without_a_decode() {
        let body = [
            frame("message_start", r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#),
            frame("ping", r#"{"type": "ping"}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB+/sig=="}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
            frame("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#),
            frame("message_stop", r#"{"type":"message_stop"}"#),
        ]
        .concat();
        let mut fast = Stream::<MessagesReader<()>>::new(1 << 16);
        fast.run(body.as_bytes(), &mut Quiet).unwrap();
        fast.finish(&mut Quiet).unwrap();
        assert_eq!(fast.state.fast, 12);
        let spaced = body.replace("\"type\":", "\"type\": ");
        let mut slow = Stream::<MessagesReader<()>>::new(1 << 16);
        slow.run(spaced.as_bytes(), &mut Quiet).unwrap();
        slow.finish(&mut Quiet).unwrap();
        // The second text delta (it fits the template the first one made) and `message_stop`,
        // now `{"type": "message_stop"}`: Python's spelling, a shape known ahead too.
        assert_eq!(slow.state.fast, 2);
        assert_eq!(
            fast.reader.result().to_json(),
            slow.reader.result().to_json()
        );
        assert!(fast.state.done && fast.state.error.is_none());
        assert_eq!((fast.state.outputs, slow.state.outputs), (4, 4));
        let text = fast.reader.result().to_json();
        assert!(text.contains(r#""text":"Hi there""#), "{text}");
        assert!(text.contains(r#""signature":"EqQB+/sig==""#), "{text}");
        assert!(text.contains(r#""thinking":"hm""#), "{text}");
    }

    /// A message's end in Anthropic's spellings (the usage's output count alone, or the
    /// four counts) is read without a decode, its usage the shape's span; one that holds
    /// what the shape does not (a stop sequence, another delta key, a count that is not a
    /// plain integer, another key order) is decoded. The message folds as the decode's does.
    #[test]
    fn a_message_delta_is_read_without_a_decode() {
        let start = frame(
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_read_input_tokens":7,"output_tokens":1}}}"#,
        );
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        for (delta, decoded_not, reason, usage) in [
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}"#,
                1,
                serde_json::json!("end_turn"),
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 12}),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":70,"output_tokens":512}}"#,
                1,
                serde_json::json!("max_tokens"),
                serde_json::json!({"input_tokens": 30, "cache_read_input_tokens": 70, "output_tokens": 512, "cache_creation_input_tokens": 0}),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end\u005fturn","stop_sequence":null},"usage":{"output_tokens":2}}"#,
                1,
                serde_json::json!("end_turn"),
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 2}),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"STOP"},"usage":{"output_tokens":4}}"#,
                0,
                serde_json::json!("stop_sequence"),
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 4}),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1.0}}"#,
                0,
                serde_json::json!("end_turn"),
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 1.0}),
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":4}}"#,
                0,
                serde_json::Value::Null,
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 4}),
            ),
            (
                r#"{"delta":{"stop_reason":"end_turn","stop_sequence":null},"type":"message_delta","usage":{"output_tokens":4}}"#,
                0,
                serde_json::json!("end_turn"),
                serde_json::json!({"input_tokens": 3, "cache_read_input_tokens": 7, "output_tokens": 4}),
            ),
        ] {
            let body = [start.clone(), frame("message_delta", delta)].concat();
            let mut fast = Stream::<MessagesReader<()>>::new(1 << 16);
            fast.run(body.as_bytes(), &mut Quiet).unwrap();
            // `message_start` is read without a decode too.
            assert_eq!(fast.state.fast, 1 + decoded_not, "{delta}");
            let mut slow = Stream::<MessagesReader<()>>::new(1 << 16);
            for f in body.split_inclusive("\n\n") {
                slow.run(f.replace("\"type\":", "\"type\": ").as_bytes(), &mut Quiet)
                    .unwrap();
            }
            assert_eq!(slow.state.fast, 0);
            let result = value(&fast.reader.result().to_json());
            assert_eq!(result, value(&slow.reader.result().to_json()), "{delta}");
            assert_eq!(result["stop_reason"], reason, "{delta}");
            assert_eq!(result["usage"], usage, "{delta}");
        }
    }

    /// A tool call's start (a client tool's and a server tool's; an escape in the name) is
    /// read without a decode, its block the shape's span; the call's input deltas follow on
    /// the fast path, and the turn folds as its decode does.
    #[test]
    fn a_tool_calls_start_is_read_without_a_decode() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"x\"}"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"get_w\u00e9ather","input":{}}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"Paris\"}"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
        ]
        .concat();
        let mut fast = Stream::<MessagesReader<()>>::new(1 << 16);
        fast.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(fast.state.fast, 8);
        let spaced = body.replace("\"type\":", "\"type\": ");
        let mut slow = Stream::<MessagesReader<()>>::new(1 << 16);
        slow.run(spaced.as_bytes(), &mut Quiet).unwrap();
        // The input deltas but the first: they fit the template the first one made.
        assert_eq!(slow.state.fast, 3);
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        let result = fast.reader.result().to_json();
        assert_eq!(value(&result), value(&slow.reader.result().to_json()));
        assert_eq!(fast.state.outputs, slow.state.outputs);
        let content = &value(&result)["content"];
        assert_eq!(content[0]["input"]["query"], "x");
        assert_eq!(content[1]["name"], "get_wéather");
        assert_eq!(content[1]["input"]["city"], "Paris");
    }

    /// A block start with text fits the empty text block's bytes but not its text: it is
    /// read whole by the shape of any block's start; an event whose type is not the shape's
    /// is decoded.
    #[test]
    fn a_start_with_text_is_read_whole() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"So"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_other","index":0}"#),
        ]
        .concat();
        let mut s = Stream::<MessagesReader<()>>::new(1 << 16);
        s.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(s.state.fast, 1);
        assert!(s.reader.result().to_json().contains(r#""text":"So""#));
    }

    /// A server-tool turn as Anthropic writes it: the message's start, each block's start
    /// (a server tool's result, a redacted thinking block, a text block that starts with
    /// citations) and each citation (of any type) are read without a decode, the value whole
    /// as the fold keeps it; the turn folds as its decode does and counts the same output
    /// frames. A value the strict reader is not sure of, or that is not JSON, is left to the
    /// decoder, which reads it (or reports it) as before: the frames around it are kept.
    #[test]
    fn any_block_start_citation_and_message_start_is_read_whole() {
        let turn = |odd: &str| {
            [
                frame("message_start", r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"server_tool_use":{"web_search_requests":0},"output_tokens":1},"container":null}}"#),
                frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","title":"\"q\" \u00e9","url":"https://example.com","encrypted_content":"EqQB+/x=","page_age":null}]}   }"#),
                frame("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
                frame("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"","citations":[]}}"#),
                frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","cited_text":"a \"b\"","url":"https://example.com","title":"t","encrypted_index":"Eo8B"}}}"#),
                frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Cited."}}"#),
                frame("content_block_delta", r#"{"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"document_title":null,"start_char_index":0,"end_char_index":1}}}"#),
                frame("content_block_stop", r#"{"type":"content_block_stop","index":1}"#),
                odd.to_owned(),
                frame("content_block_start", r#"{"type":"content_block_start","index":3,"content_block":{"type":"redacted_thinking","data":"EmwK"}}"#),
                frame("content_block_stop", r#"{"type":"content_block_stop","index":3}"#),
                frame("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}"#),
                frame("message_stop", r#"{"type":"message_stop"}"#),
            ]
            .concat()
        };
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        let start = |block: &str| {
            frame(
                "content_block_start",
                &format!(r#"{{"type":"content_block_start","index":2,"content_block":{block}}}"#),
            )
        };
        // Each odd frame, and whether the fast path takes it (the decoder reads the others).
        let odd = [
            (
                frame(
                    "content_block_stop",
                    r#"{"type":"content_block_stop","index":2}"#,
                ),
                true,
            ),
            (start("null"), true),
            (start(r#"{"type":"x","v":"\ud800"}"#), false),
            (start(r#"{"type":"x","v":01}"#), false),
            (start(r#"{"type":"x"}x"#), false),
            (start(r#"{"type":"x""#), false),
            (start(r#" {"type":"x"}"#), false),
            (
                start(&format!("{}1{}", "[".repeat(70), "]".repeat(70))),
                false,
            ),
            (start("{\"type\":\"x\",\"v\":\"a\tb\"}"), false),
            (
                frame(
                    "content_block_delta",
                    r#"{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{"cited_text":"a"} }}"#,
                ),
                false,
            ),
        ];
        for (odd, fast_odd) in odd {
            let body = turn(&odd);
            let mut fast = Stream::<MessagesReader<()>>::new(1 << 16);
            fast.run(body.as_bytes(), &mut Quiet).unwrap();
            fast.finish(&mut Quiet).unwrap();
            assert_eq!(fast.state.fast, 12 + u64::from(fast_odd), "{odd}");
            let mut slow = Stream::<MessagesReader<()>>::new(1 << 16);
            for f in body.split_inclusive("\n\n") {
                slow.run(
                    f.replacen("\"type\":", "\"type\": ", 1).as_bytes(),
                    &mut Quiet,
                )
                .unwrap();
            }
            slow.finish(&mut Quiet).unwrap();
            // `{"type": "message_stop"}` alone: Python's spelling, a shape known ahead.
            assert_eq!(slow.state.fast, 1, "{odd}");
            assert_eq!(
                value(&fast.reader.result().to_json()),
                value(&slow.reader.result().to_json()),
                "{odd}"
            );
            assert_eq!(fast.state.outputs, slow.state.outputs, "{odd}");
            assert_eq!(
                fast.state.error.is_some(),
                slow.state.error.is_some(),
                "{odd}"
            );
            assert!(fast.state.done, "{odd}");
            let result = value(&fast.reader.result().to_json());
            assert_eq!(result["content"][0]["content"][0]["title"], "\"q\" é");
            assert_eq!(
                result["content"][1]["citations"][1]["type"],
                "char_location"
            );
            assert_eq!(result["content"][1]["text"], "Cited.");
            assert_eq!(result["usage"]["server_tool_use"]["web_search_requests"], 0);
        }
    }

    #[test]
    fn every_shape_known_ahead_is_made() {
        assert_eq!(messages::ahead_count(), 2 * 16); // each in two spellings
    }
}

mod responses_ahead {
    use super::responses::{self, ResponsesReader};
    use super::*;

    fn frame(data: &str) -> String {
        let kind = data.split('"').nth(3).unwrap_or_default();
        format!("event: {kind}\ndata: {data}\n\n")
    }

    /// A Responses turn as OpenAI writes it (the sequence number second): under `consume()`
    /// the first delta of each kind, the announcements of new items and empty parts and the
    /// `.done` events are read without a
    /// decode by the shapes known ahead, the later deltas of its item by the template the
    /// first one became. A copy spelled with spaces is decoded (but for the deltas
    /// its own templates take) and folds to the same response.
    #[test]
    fn a_turn_in_openais_spelling_takes_the_shapes_known_ahead() {
        let body = [
            r#"{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","model":"g","output":[]}}"#,
            r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}"#,
            r#"{"type":"response.reasoning_summary_part.added","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}"#,
            r#"{"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Think","obfuscation":"abc"}"#,
            r#"{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"ing\n","obfuscation":"z"}"#,
            r#"{"type":"response.reasoning_summary_text.done","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"text":"Thinking\n"}"#,
            r#"{"type":"response.reasoning_summary_part.done","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":"Thinking\n"}}"#,
            r#"{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking\n"}]}}"#,
            r#"{"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
            r#"{"type":"response.content_part.added","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}"#,
            r#"{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"pq"}"#,
            r#"{"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"delta":" \"there\"","logprobs":[],"obfuscation":"x"}"#,
            r#"{"type":"response.output_text.done","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"text":"Hi \"there\"","logprobs":[]}"#,
            r#"{"type":"response.content_part.done","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":"Hi \"there\""}}"#,
            r#"{"type":"response.output_item.done","sequence_number":8,"output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Hi \"there\""}],"role":"assistant"}}"#,
            r#"{"type":"response.output_item.added","sequence_number":9,"output_index":2,"item":{"id":"msg_2","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
            r#"{"type":"response.content_part.added","sequence_number":10,"item_id":"msg_2","output_index":2,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}}"#,
            r#"{"type":"response.output_text.delta","sequence_number":11,"item_id":"msg_2","output_index":2,"content_index":0,"delta":"caf\u00e9","logprobs":[],"obfuscation":"x"}"#,
            r#"{"type":"response.output_item.added","sequence_number":12,"output_index":3,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"c","name":"f"}}"#,
            r#"{"type":"response.function_call_arguments.delta","sequence_number":13,"item_id":"fc_1","output_index":3,"delta":"{\"q\":","obfuscation":"x"}"#,
            r#"{"type":"response.function_call_arguments.delta","sequence_number":14,"item_id":"fc_1","output_index":3,"delta":"1}","obfuscation":"xy"}"#,
            r#"{"type":"response.function_call_arguments.done","sequence_number":15,"item_id":"fc_1","output_index":3,"arguments":"{\"q\":1}"}"#,
            r#"{"type":"response.output_item.done","sequence_number":16,"output_index":3,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"q\":1}","call_id":"c","name":"f"}}"#,
        ]
        .map(frame)
        .concat();
        let mut fast = Stream::<ResponsesReader<()>>::new(1 << 16);
        fast.run(body.as_bytes(), &mut Quiet).unwrap();
        fast.finish(&mut Quiet).unwrap();
        // 4 item and 3 part announcements, 7 deltas (the first delta of the second message
        // fits a shape known ahead again: the template the first message's made has its item
        // id fixed), 8 `.done` events.
        assert_eq!(fast.state.fast, 22);
        let spaced = body.replace("\"type\":", "\"type\": ");
        let mut slow = Stream::<ResponsesReader<()>>::new(1 << 16);
        slow.run(spaced.as_bytes(), &mut Quiet).unwrap();
        slow.finish(&mut Quiet).unwrap();
        assert_eq!(slow.state.fast, 3);
        // The same frames as Python's `json.dumps` writes them take the same fast path.
        let python: String = body
            .split_inclusive('\n')
            .map(|line| match line.strip_prefix("data: ") {
                Some(data) => format!("data: {}", crate::stream::spaced(data)),
                None => line.to_owned(),
            })
            .collect();
        assert!(python.contains(r#""sequence_number": 3, "item_id": "rs_1""#));
        let mut wide = Stream::<ResponsesReader<()>>::new(1 << 16);
        wide.run(python.as_bytes(), &mut Quiet).unwrap();
        wide.finish(&mut Quiet).unwrap();
        assert_eq!(wide.state.fast, 22);
        let result = fast.reader.result().to_json();
        // The same JSON (the spaces of the slow copy stay in the values it kept as sent).
        let value = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        assert_eq!(value(&result), value(&slow.reader.result().to_json()));
        assert_eq!((fast.state.outputs, slow.state.outputs), (7, 7));
        assert_eq!(value(&result), value(&wide.reader.result().to_json()));
        assert_eq!(
            fast.state
                .error
                .as_ref()
                .map(|f| f.info().message.into_owned()),
            slow.state
                .error
                .as_ref()
                .map(|f| f.info().message.into_owned())
        );
        for needle in [
            r#""text":"Hi \"there\"""#,
            r#""text":"café""#,
            r#""text":"Thinking\n""#,
            r#""arguments":"{\"q\":1}""#,
        ] {
            assert!(result.contains(needle), "{needle} in {result}");
        }
    }

    /// An item id with an escape, an index the decoder reads as a float or with a sign, a part
    /// with text, an item not as announced, a done text with log probabilities: the frame is
    /// decoded. Escapes in a text, a call id or a name (a lone surrogate too) are read on the
    /// fast path. Either way the frame folds as its decode does.
    #[test]
    fn ids_and_parts_the_decoder_reads_are_decoded() {
        let delta = |id: &str, index: &str| {
            frame(&format!(
                r#"{{"type":"response.output_text.delta","sequence_number":1,"item_id":"{id}","output_index":{index},"content_index":0,"delta":"a"}}"#
            ))
        };
        for (body, fast) in [
            (delta("m\\u0031", "0"), 0),
            (delta("m1", "-0"), 0),
            (delta("m1", "0.0"), 0),
            (delta("m1", "1e0"), 0),
            (delta("m1", "0"), 1),
            (
                frame(
                    r#"{"type":"response.content_part.added","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":"So"}}"#,
                ),
                0,
            ),
            (
                frame(
                    r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"m","type":"message","status":"in_progress","content":[],"role":"user"}}"#,
                ),
                0,
            ),
            (
                frame(
                    r#"{"type":"response.output_text.done","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"text":"a","logprobs":[{"token":"a","logprob":0}]}"#,
                ),
                0,
            ),
            (
                frame(
                    r#"{"type":"response.output_text.done","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"text":"a\ud800","logprobs":[]}"#,
                ),
                1,
            ),
            (
                frame(
                    r#"{"type":"response.output_text.done","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"text":"a\u00e9","logprobs":[]}"#,
                ),
                1,
            ),
            (
                frame(
                    r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"f","type":"function_call","status":"in_progress","arguments":"{}","call_id":"c","name":"n"}}"#,
                ),
                0,
            ),
            (
                frame(
                    r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"f\u0031","type":"function_call","status":"in_progress","arguments":"","call_id":"c","name":"n"}}"#,
                ),
                0,
            ),
            (
                frame(
                    r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"f","type":"function_call","status":"in_progress","arguments":"","call_id":"c\"","name":"n\u00e9"}}"#,
                ),
                1,
            ),
        ] {
            let mut s = Stream::<ResponsesReader<()>>::new(1 << 16);
            s.run(body.as_bytes(), &mut Quiet).unwrap();
            assert_eq!(s.state.fast, fast, "{body}");
            let spaced = body.replace("\"type\":", "\"type\": ");
            let mut t = Stream::<ResponsesReader<()>>::new(1 << 16);
            t.run(spaced.as_bytes(), &mut Quiet).unwrap();
            assert_eq!(
                s.reader.result().to_json(),
                t.reader.result().to_json(),
                "{body}"
            );
        }
    }

    #[test]
    fn every_shape_known_ahead_is_made() {
        assert_eq!(responses::ahead_count(), 2 * 25); // each in two spellings
    }
}

mod foreseen {
    use super::chat::ChatReader;
    use super::*;

    /// An OpenAI chunk around `delta` (the choice's `delta` object's JSON text).
    fn chunk(delta: &str, pad: &str) -> String {
        format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4.1\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null,\"obfuscation\":\"{pad}\"}}\n\n"
        )
    }

    fn call_start(index: u32, id: &str, name: &str) -> String {
        chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":{index},"id":"{id}","type":"function","function":{{"name":"{name}","arguments":""}}}}]}}"#
            ),
            "ab",
        )
    }

    fn call_args(index: u32, args: &str) -> String {
        chunk(
            &format!(
                r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":"{args}"}}}}]}}"#
            ),
            "c",
        )
    }

    /// The stream read by `consume()`, and spelled with a space after `"index":` frame by
    /// frame: how many frames each read without a decode (both fold to the same result).
    fn read(body: &str) -> (u64, u64, String) {
        let mut fast = Stream::<ChatReader<()>>::new(1 << 16);
        fast.run(body.as_bytes(), &mut Quiet).unwrap();
        fast.finish(&mut Quiet).unwrap();
        let spaced = body.replace("\"index\":", "\"index\": ");
        let mut slow = Stream::<ChatReader<()>>::new(1 << 16);
        for frame in spaced.split_inclusive("\n\n") {
            slow.run(frame.as_bytes(), &mut Quiet).unwrap();
        }
        slow.finish(&mut Quiet).unwrap();
        let result = fast.reader.result().to_json();
        assert_eq!(result, slow.reader.result().to_json(), "{body}");
        assert_eq!(fast.state.outputs, slow.state.outputs);
        (fast.state.fast, slow.state.fast, result)
    }

    /// OpenAI's first chunk names the role (and `"refusal": null`), the chunks after it hold
    /// only text; a call's first fragment names it, the fragments after it hold only
    /// arguments. Each first one makes the template of what follows it: of a turn's 12
    /// chunks only the first and each call's first fragment are decoded (the finish chunk
    /// too), and the turn folds as its decode does.
    #[test]
    fn the_chunk_after_a_first_one_is_read_without_a_decode() {
        let body = [
            chunk(r#"{"role":"assistant","content":"","refusal":null}"#, "x"),
            chunk(r#"{"content":"Let me"}"#, "xyz"),
            chunk(r#"{"content":" check."}"#, "x"),
            call_start(0, "call_A1", "get_weather"),
            call_args(0, r#"{\"city\":"#),
            call_args(0, r#" \"Paris\"}"#),
            call_start(1, "call_B2", "get_time"),
            call_args(1, r#"{\"tz\":"#),
            call_args(1, r#" \"CET\"}"#),
            chunk("{}", "q").replace(r#""finish_reason":null"#, r#""finish_reason":"tool_calls""#),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let (fast, slow, result) = read(&body);
        // Decoded: the first chunk, the two calls' first fragments, the finish chunk.
        assert_eq!(fast, 6);
        // With a space after `"index":`, a call's first fragment foresees nothing (the
        // fragments after it are not in the spelling it would foresee): the text chunks fit
        // as before, each call's second fragment is decoded and its third fits that one.
        assert_eq!(slow, 4);
        let value: serde_json::Value = serde_json::from_str(&result).unwrap();
        let message = &value["choices"][0]["message"];
        assert_eq!(message["content"], "Let me check.");
        assert_eq!(message["role"], "assistant");
        assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
        assert_eq!(message["tool_calls"][0]["id"], "call_A1");
        assert_eq!(
            message["tool_calls"][1]["function"]["arguments"],
            r#"{"tz": "CET"}"#
        );
        assert_eq!(message["tool_calls"][1]["function"]["name"], "get_time");
    }

    /// Azure's first chunk (its keys in order) is foreseen too; a stream that names the role
    /// in every chunk (xAI) fits the first chunk's own template, kept beside the foreseen one.
    #[test]
    fn other_first_chunks() {
        let azure = [
            chunk(r#"{"content":"","refusal":null,"role":"assistant"}"#, "x"),
            chunk(r#"{"content":"Hi"}"#, "x"),
            chunk(r#"{"content":" there"}"#, "x"),
        ]
        .concat();
        assert_eq!(read(&azure).0, 2);
        let xai = [
            chunk(r#"{"role":"assistant","content":"Hi"}"#, "x"),
            chunk(r#"{"role":"assistant","content":" there"}"#, "x"),
            chunk(r#"{"role":"assistant","content":"!"}"#, "x"),
        ]
        .concat();
        assert_eq!(read(&xai).0, 2);
    }

    /// A first chunk or fragment whose bytes hold more than the foreseen keys, a name with an
    /// escape, or a chunk with vendor keys foresees nothing (the next chunk is decoded); a
    /// chunk after it that is not in the foreseen spelling is decoded. The fold is the
    /// decode's either way.
    #[test]
    fn only_the_exact_spellings_are_foreseen() {
        for (body, fast) in [
            // A second `role` after the content: the delta is not the one foreseen.
            (
                [
                    chunk(r#"{"role":"assistant","content":"","refusal":null,"role":"user"}"#, "x"),
                    chunk(r#"{"content":"Hi"}"#, "x"),
                ]
                .concat(),
                0,
            ),
            // A call whose fragment has a key more.
            (
                [
                    chunk(r#"{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""},"extra":1}]}"#, "x"),
                    call_args(0, "{}"),
                ]
                .concat(),
                0,
            ),
            // A name with an escape (its bytes are not its value).
            ([call_start(0, "c", r#"g\u00e9t"#), call_args(0, "{}")].concat(), 0),
            // The fragment after is not in OpenAI's spelling (it repeats the id).
            (
                [
                    call_start(0, "c", "f"),
                    chunk(r#"{"tool_calls":[{"index":0,"id":"c","function":{"arguments":"{}"}}]}"#, "x"),
                ]
                .concat(),
                0,
            ),
            // A first chunk with a vendor key (Groq's `x_groq`, which the next does not repeat).
            (
                [
                    chunk(r#"{"role":"assistant","content":""}"#, "x")
                        .replace(r#""usage":null"#, r#""usage":null,"x_groq":{"id":"req_1"}"#),
                    chunk(r#"{"content":"Hi"}"#, "x"),
                ]
                .concat(),
                0,
            ),
            // The same call again: the foreseen fragment, then another first fragment.
            ([call_start(0, "c", "f"), call_args(0, "{"), call_args(0, "}")].concat(), 2),
        ] {
            assert_eq!(read(&body).0, fast, "{body}");
        }
    }
}

mod thinking_parts {
    use super::chat::ChatReader;
    use super::*;

    /// A Mistral chunk of `content` (its JSON text).
    fn chunk(content: &str) -> String {
        format!(
            "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"magistral-medium-2507\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{content}}},\"finish_reason\":null}}]}}\n\n"
        )
    }

    fn thinking(literal: &str) -> String {
        chunk(&format!(
            r#"[{{"type":"thinking","thinking":[{{"type":"text","text":"{literal}"}}]}}]"#
        ))
    }

    /// The stream read in `pieces` (cut at those byte counts, in turn): its result, how many
    /// frames were read without a decode, and how many carried output.
    fn read(body: &str, pieces: &[usize]) -> (String, u64, u64) {
        let mut s = Stream::<ChatReader<()>>::new(1 << 16);
        let mut rest = body.as_bytes();
        for &n in pieces.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (a, b) = rest.split_at(n.clamp(1, rest.len()));
            s.run(a, &mut Quiet).unwrap();
            rest = b;
        }
        s.finish(&mut Quiet).unwrap();
        (s.reader.result().to_json(), s.state.fast, s.state.outputs)
    }

    /// Magistral's thinking deltas (content parts: one thinking part of one text part) after
    /// the first are read by a template whose hole is the text (issue 47), fed whole, by byte
    /// and in pieces; the message is the one the same stream folds to when each chunk is
    /// decoded (its parts spelled with spaces, which no template takes).
    #[test]
    fn thinking_deltas_fill_a_template() {
        let body = [
            chunk(r#""""#),
            thinking("Let"),
            thinking(" me \\\"think\\\"\\n"),
            thinking(""),
            thinking("\\u00e9 done"),
            chunk(r#"[{"type":"thinking","thinking":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]"#),
            thinking("more"),
            chunk(r#""The answer""#),
            chunk(r#"" is 4.""#),
            thinking("after"),
            "data: [DONE]\n\n".to_owned(),
        ]
        .concat();
        let spaced = body.replace(r#"{"type":"thinking","#, r#"{"type": "thinking","#);
        let (whole, fast, outputs) = read(&body, &[body.len()]);
        let (slow, slow_fast, slow_outputs) = read(&spaced, &[spaced.len()]);
        assert_eq!(whole, slow);
        assert_eq!(outputs, slow_outputs);
        // The second, third and fourth thinking deltas, the one after the two-part chunk (the
        // template made again by then: it is the first that fits), and the text deltas.
        assert!(fast >= slow_fast + 3, "{fast} {slow_fast}");
        for pieces in [&[1][..], &[7, 3, 101], &[64]] {
            assert_eq!(
                read(&body, pieces),
                (whole.clone(), fast, outputs),
                "{pieces:?}"
            );
        }
        let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
        assert_eq!(
            v["choices"][0]["message"]["content"],
            serde_json::json!([
                {"type": "thinking", "thinking": [{"type": "text", "text": "Let me \"think\"\né doneabmore"}]},
                {"type": "text", "text": "The answer is 4."},
                {"type": "thinking", "thinking": [{"type": "text", "text": "after"}]},
            ])
        );
    }

    /// A fit of an empty text is not output, as its decode is not (a review's finding): a
    /// stream of empty and non-empty texts counts the output frames a decode of each counts,
    /// and folds as its copy spelled otherwise.
    #[test]
    fn a_fit_counts_as_output_as_its_decode_does() {
        let body = [
            chunk(r#""""#),
            chunk(r#""""#),
            chunk(r#""a""#),
            chunk(r#""""#),
            thinking("t"),
            thinking(""),
            chunk(r#""b""#),
        ]
        .concat();
        let spaced = body.replace(r#""content":"#, r#""content": "#);
        let (result, fast, outputs) = read(&body, &[body.len()]);
        let (slow_result, slow_fast, slow_outputs) = read(&spaced, &[spaced.len()]);
        assert_eq!(result, slow_result);
        assert!(fast >= 3 && slow_fast >= 3, "{fast} {slow_fast}");
        // "a", "t", "" (content parts, empty or not, are output) and "b".
        assert_eq!((outputs, slow_outputs), (4, 4));
    }

    /// What a thinking delta's literal is (exactly one thinking part of one text part, as
    /// Mistral spells it), and the parts a text is written back as.
    #[test]
    fn a_thinking_literal_is_the_one_text_of_the_one_part() {
        use crate::dialect::chat::{thinking_literal, thinking_parts};
        let parts = |literal: &str| {
            format!(r#"[{{"type":"thinking","thinking":[{{"type":"text","text":"{literal}"}}]}}]"#)
        };
        for literal in ["", "a", "a\\\"b", "\\\\", "\\u00e9\\n"] {
            assert_eq!(thinking_literal(&parts(literal)), Some(literal));
        }
        for other in [
            parts("a\"").as_str(),
            parts("a\\").as_str(),
            r#"[{"type":"thinking","thinking":[{"type":"text","text":"a"}]}] "#,
            r#"[{"type": "thinking","thinking":[{"type":"text","text":"a"}]}]"#,
            r#"[{"type":"thinking","thinking":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]"#,
            r#"[{"type":"text","text":"a"}]"#,
        ] {
            assert_eq!(thinking_literal(other), None, "{other}");
        }
        let written = thinking_parts("a \"q\"\n");
        assert_eq!(written, parts("a \\\"q\\\"\\n"));
        assert_eq!(thinking_literal(&written), Some("a \\\"q\\\"\\n"));
    }
}

/// Shapes grouped by event type are the shapes of that type, in their order, whatever the
/// order the types came in; a type no shape has gets none.
#[test]
fn shapes_by_event_are_each_types_own_in_order() {
    let items = vec![("b", 0), ("a", 1), ("b", 2), ("c", 3), ("a", 4), ("b", 5)];
    let by = ByEvent::new(items.clone(), |item| item.0);
    assert_eq!(by.len(), items.len());
    for event in ["a", "b", "c"] {
        let want: Vec<_> = items.iter().filter(|i| i.0 == event).copied().collect();
        assert_eq!(by.of(event.as_bytes()), want.as_slice(), "{event}");
    }
    assert!(by.of(b"d").is_empty() && by.of(b"").is_empty() && by.of(b"ab").is_empty());
    assert!(ByEvent::new(Vec::<(&str, i32)>::new(), |i| i.0)
        .of(b"a")
        .is_empty());
}
