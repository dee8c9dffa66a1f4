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
    let f = Failure::own("m".into(), "incomplete_stream", "x\"y");
    let info = f.info();
    assert_eq!(info.type_, Some("\"incomplete_stream\""));
    assert_eq!(
        serde_json::from_str::<String>(info.code.unwrap()).unwrap(),
        "x\"y"
    );
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
            assert!(spelled_as_template(&f, bytes), "{bytes:?}");
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
            assert!(!spelled_as_template(&f, bytes), "{bytes:?}");
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
    /// block and the message's end takes the fast path under `consume()` (only
    /// `message_start` and `message_delta` are decoded); a copy spelled with spaces, decoded
    /// frame by frame, folds to the same message, ends the same way and counts the same
    /// output frames.
    #[test]
    fn every_frame_of_a_plain_turn_but_two_is_read_without_a_decode() {
        let body = [
            frame("message_start", r#"{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}"#),
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#),
            frame("ping", r#"{"type": "ping"}"#),
            frame("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#),
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
        assert_eq!(fast.state.fast, 9);
        let spaced = body.replace("\"type\":", "\"type\": ");
        let mut slow = Stream::<MessagesReader<()>>::new(1 << 16);
        slow.run(spaced.as_bytes(), &mut Quiet).unwrap();
        slow.finish(&mut Quiet).unwrap();
        // Only the second text delta: it fits the template the first one made.
        assert_eq!(slow.state.fast, 1);
        assert_eq!(
            fast.reader.result().to_json(),
            slow.reader.result().to_json()
        );
        assert!(fast.state.done && fast.state.error.is_none());
        assert_eq!((fast.state.outputs, slow.state.outputs), (3, 3));
        let text = fast.reader.result().to_json();
        assert!(text.contains(r#""text":"Hi there""#), "{text}");
        assert!(text.contains(r#""thinking":"hm""#), "{text}");
    }

    /// A block start with text, or an event whose type is not the shape's, fits a shape's
    /// bytes but not its text: it is decoded.
    #[test]
    fn a_start_with_text_is_decoded() {
        let body = [
            frame("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"So"}}"#),
            frame("content_block_stop", r#"{"type":"content_block_other","index":0}"#),
        ]
        .concat();
        let mut s = Stream::<MessagesReader<()>>::new(1 << 16);
        s.run(body.as_bytes(), &mut Quiet).unwrap();
        assert_eq!(s.state.fast, 0);
        assert!(s.reader.result().to_json().contains(r#""text":"So""#));
    }

    #[test]
    fn every_shape_known_ahead_is_made() {
        assert_eq!(messages::ahead_count(), 9);
    }
}
