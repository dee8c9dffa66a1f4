//! Tests of the frame templates.

use super::*;

const FRAME: &str = r#"{"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}"#;

fn shape() -> Shape {
    let at = FRAME.find("Hi").unwrap();
    Shape::new(None, FRAME, &FRAME[at..at + 2], &[]).unwrap()
}

fn frame(text: &str) -> String {
    FRAME.replace("\"Hi\"", &format!("\"{text}\""))
}

#[test]
fn fills_plain_and_escaped_strings() {
    let s = shape();
    assert_eq!(
        s.fill(None, &frame(" there")).map(|f| f.0).as_deref(),
        Some(" there")
    );
    assert_eq!(s.fill(None, &frame("")).map(|f| f.0).as_deref(), Some(""));
    assert_eq!(
        s.fill(None, &frame(r#"a\"b\n\u00e9"#))
            .map(|f| f.0)
            .as_deref(),
        Some("a\"b\n\u{e9}")
    );
    assert_eq!(
        s.fill(None, &frame("h\u{e9}\u{1F600}"))
            .map(|f| f.0)
            .as_deref(),
        Some("h\u{e9}\u{1F600}")
    );
}

#[test]
fn refuses_anything_that_changes_the_structure() {
    let s = shape();
    // an unescaped quote: the "literal" would end early and the rest is other JSON
    assert_eq!(s.fill(None, &frame(r#"a","refusal":"b"#)), None);
    // a literal ending in a backslash escapes the suffix's quote
    assert_eq!(s.fill(None, &frame("a\\")), None);
    // a raw control character is not allowed inside a JSON string
    assert_eq!(s.fill(None, &frame("a\nb")), None);
    // a bad escape
    assert_eq!(s.fill(None, &frame(r"\x")), None);
    // other bytes around the hole, another event type, a shorter frame
    assert_eq!(s.fill(None, &FRAME.replace("\"c\"", "\"d\"")), None);
    assert_eq!(s.fill(Some(b"other"), &frame("x")), None);
    assert_eq!(s.fill(None, "{}"), None);
    assert_eq!(
        s.fill(
            None,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"}}]}"#
        ),
        None
    );
}

const SEQ: &str = r#"{"type":"d","delta":"Hi","sequence_number":7}"#;
const SEQ_FIRST: &str = r#"{"type":"d","sequence_number":7,"delta":"Hi"}"#;

fn seq_shape(frame: &str) -> Shape {
    let at = frame.find("Hi").unwrap();
    Shape::new(None, frame, &frame[at..at + 2], &[])
        .unwrap()
        .with_number("sequence_number", 7)
        .unwrap()
}

#[test]
fn fills_a_number_hole_after_or_before_the_text() {
    for frame in [SEQ, SEQ_FIRST] {
        let s = seq_shape(frame);
        let next = frame.replace("Hi", "there").replace(":7", ":12345");
        let (text, n) = s.fill(None, &next).unwrap();
        assert_eq!((text.as_ref(), n), ("there", Some(12345)));
        let zero = frame.replace(":7", ":0");
        let (text, n) = s.fill(None, &zero).unwrap();
        assert_eq!((text.as_ref(), n), ("Hi", Some(0)));
        // not a JSON number token, or no number at all
        assert_eq!(s.fill(None, &frame.replace(":7", ":07")), None);
        assert_eq!(s.fill(None, &frame.replace(":7", ":-7")), None);
        assert_eq!(s.fill(None, &frame.replace(":7", ":7.5")), None);
        assert_eq!(s.fill(None, &frame.replace(":7", ":")), None);
        assert_eq!(s.fill(None, &frame.replace(":7", ": 7")), None);
        // structure in the text hole still refused
        assert_eq!(s.fill(None, &frame.replace("Hi", r#"a","x":"b"#)), None);
    }
}

#[test]
fn a_number_hole_needs_one_unambiguous_key() {
    let at = SEQ.find("Hi").unwrap();
    let shape = Shape::new(None, SEQ, &SEQ[at..at + 2], &[]).unwrap();
    assert!(
        shape.clone().with_number("sequence_number", 8).is_none(),
        "other value"
    );
    assert!(shape.clone().with_number("missing", 7).is_none());
    let twice = r#"{"a":{"sequence_number":7},"delta":"Hi","sequence_number":7}"#;
    let at = twice.find("Hi").unwrap();
    let shape = Shape::new(None, twice, &twice[at..at + 2], &[]).unwrap();
    assert!(
        shape.with_number("sequence_number", 7).is_none(),
        "ambiguous"
    );
}

#[test]
fn needs_a_string_borrowed_from_inside_the_frame() {
    assert!(
        Shape::new(None, FRAME, "Hi", &[]).is_none(),
        "not a slice of the frame"
    );
    let at = FRAME.find("Hi").unwrap();
    let part = &FRAME[at..at + 1];
    assert!(
        Shape::new(None, FRAME, part, &[]).is_none(),
        "not the whole string"
    );
}

#[test]
fn padding_holes_take_any_valid_string_and_are_not_returned() {
    let frame = r#"{"delta":"Hi","obfuscation":"p4D","sequence_number":3}"#;
    let (t, p) = (frame.find("Hi").unwrap(), frame.find("p4D").unwrap());
    let s = Shape::new(None, frame, &frame[t..t + 2], &[&frame[p..p + 3]])
        .unwrap()
        .with_number("sequence_number", 3)
        .unwrap();
    let next = r#"{"delta":"yo \"x\"","obfuscation":"Zz9_-","sequence_number":4}"#;
    let (text, n) = s.fill(None, next).unwrap();
    assert_eq!((text.as_ref(), n), ("yo \"x\"", Some(4)));
    // an escaped padding is still a valid string; a bad escape or structure inside is not
    let escaped = r#"{"delta":"a","obfuscation":"\u0041\n","sequence_number":5}"#;
    assert!(s.fill(None, escaped).is_some());
    let bad = r#"{"delta":"a","obfuscation":"\x","sequence_number":5}"#;
    assert_eq!(s.fill(None, bad), None);
    let injected = r#"{"delta":"a","obfuscation":"b","x":"c","sequence_number":5}"#;
    assert_eq!(s.fill(None, injected), None);
}

#[test]
fn whole_frames_are_read_from_the_wire_in_the_template_spelling_only() {
    let at = FRAME.find("Hi").unwrap();
    let shape = Shape::new(Some(b"delta"), FRAME, &FRAME[at..at + 2], &[]).unwrap();
    let wire = |text: &str| format!("event: delta\ndata: {}\n\n", frame(text)).into_bytes();
    let next = b"event: delta\ndata: {}\n\n";
    let mut bytes = wire("Yo");
    bytes.extend_from_slice(next);
    let (len, text, number) = shape.fill_raw(&bytes).unwrap();
    assert_eq!((len, text.as_ref(), number), (wire("Yo").len(), "Yo", None));
    assert_eq!(shape.fill_raw(&wire("a\\nb")).unwrap().1, "a\nb");
    // Every other spelling is the framer's to read.
    let plain = String::from_utf8(wire("Yo")).unwrap();
    for other in [
        plain.replace('\n', "\r\n"),
        plain.replace('\n', "\r"),
        plain.replace("data: ", "data:"),
        plain.replace("event: ", "event:"),
        format!("id: 1\n{plain}"),
        format!(": ping\n{plain}"),
        plain.replace("event: delta", "event: other"),
        plain.replace("data: ", "data: \n"),
        plain[..plain.len() - 1].to_owned(), // not closed by a blank line yet
        wire("\\ud800").iter().map(|&b| char::from(b)).collect(), // a lone surrogate
        // The text hole's string does not end on its line: the walk stops at the line
        // break, whatever follows (the framer reads two lines there).
        plain.replacen("\"Yo\"", "\"Y\no\"", 1),
        plain.replacen("\"Yo\"", "\"Y\\\no\"", 1),
        plain.replacen("\"Yo\"", "\"Y\r\"", 1),
        format!("{}\n\n{}", plain.replacen("\"Yo\"", "\"Yo", 1), plain),
    ] {
        assert!(shape.fill_raw(other.as_bytes()).is_none(), "{other:?}");
    }
    let mut invalid = wire("a");
    let a = invalid.iter().rposition(|&b| b == b'a').unwrap();
    invalid[a] = 0xFF;
    assert!(shape.fill_raw(&invalid).is_none());
    // A shape without an event type wants no event line.
    let unnamed = Shape::new(None, FRAME, &FRAME[at..at + 2], &[]).unwrap();
    assert!(unnamed.fill_raw(&wire("Yo")).is_none());
    let data_only = format!("data: {}\n\n", frame("Yo"));
    assert_eq!(
        unnamed.fill_raw(data_only.as_bytes()).unwrap().0,
        data_only.len()
    );
}

#[test]
fn a_line_shape_reads_a_json_line_up_to_its_end() {
    let at = FRAME.find("Hi").unwrap();
    let line = Shape::new(None, FRAME, &FRAME[at..at + 2], &[])
        .unwrap()
        .as_line()
        .unwrap();
    // Its line, then the next: LF or CRLF ends it, as the line framer cuts it.
    for end in ["\n", "\r\n"] {
        let bytes = format!("{}{end}{}\n", frame("Yo"), frame("Hi"));
        let (len, text, _) = line.fill_raw(bytes.as_bytes()).unwrap();
        assert_eq!((len, text.as_ref()), (frame("Yo").len() + end.len(), "Yo"));
    }
    // Framed, it reads the line's data as any shape does.
    assert_eq!(line.fill(None, &frame("Yo")).unwrap().0, "Yo");
    // No line end yet, another line end, an SSE frame, a second CR: the framer's to read.
    let plain = frame("Yo");
    for other in [
        plain.clone(),
        format!("{plain}\r"),
        format!("{plain}\r\r\n"),
        format!("{plain} \n"),
        format!("data: {plain}\n\n"),
        plain.replacen("\"Yo\"", "\"Y\ro\"", 1) + "\n",
    ] {
        assert!(line.fill_raw(other.as_bytes()).is_none(), "{other:?}");
    }
    // An SSE shape does not read a line, nor a line shape a frame; a named shape is no line.
    assert!(shape().fill_raw(format!("{plain}\n").as_bytes()).is_none());
    let named = Shape::new(Some(b"delta"), FRAME, &FRAME[at..at + 2], &[]).unwrap();
    assert!(named.as_line().is_none());
}

#[test]
fn a_template_is_made_from_an_escaped_frame() {
    // The frame's text held escapes, so its decode copied it; its place is found again.
    let first = frame(r#"line\none \"q\" caf\u00e9"#);
    let text = crate::json::read::locate_escaped(&first, "line\none \"q\" caf\u{e9}").unwrap();
    let s = Shape::new(None, &first, text, &[]).unwrap();
    assert_eq!(s, shape());
    assert_eq!(
        s.fill(None, &frame(r#"\ud83d\ude00\n"#))
            .map(|f| f.0)
            .as_deref(),
        Some("\u{1F600}\n")
    );
    assert_eq!(
        s.fill(None, &frame("plain")).map(|f| f.0).as_deref(),
        Some("plain")
    );
}

#[test]
fn a_string_hole_ends_at_its_line() {
    assert_eq!(scan_string(b"ab\" rest"), Some((2, Cow::Borrowed("ab"))));
    assert_eq!(
        scan_string(b"a\\\"b\""),
        Some((4, Cow::Owned("a\"b".to_owned())))
    );
    // A raw control character is not a JSON string.
    assert_eq!(scan_string(b"a\x01\""), None);
    // A quote further on does not count past a line break, escaped or not.
    for s in [&b"a\nb\""[..], b"a\rb\"", b"a\\\nb\"", b"a\\\r\""] {
        assert_eq!(scan_string(s), None, "{s:?}");
    }
}

/// Several number holes placed at once make the shape one at a time makes; a key named
/// twice, a value that is not the one given, or a key that stands twice places none.
#[test]
fn number_holes_placed_at_once() {
    let frame = r#"{"a": 1,"delta":"Hi","b":22,"c": 333}"#;
    let at = frame.find("Hi").unwrap();
    let shape = Shape::new(None, frame, &frame[at..at + 2], &[]).unwrap();
    let one_by_one = shape
        .clone()
        .with_number("c", 333)
        .and_then(|s| s.with_number("a", 1))
        .and_then(|s| s.with_number("b", 22))
        .unwrap();
    let at_once = shape
        .clone()
        .with_numbers(&[("a", 1), ("b", 22), ("c", 333)])
        .unwrap();
    assert_eq!(at_once, one_by_one);
    let next = r#"{"a": 7,"delta":"Yo","b":8,"c": 9}"#;
    let f = at_once
        .fill_all(None, next, &mut [""; MAX_RAW], None)
        .unwrap();
    assert_eq!((f.text.as_ref(), f.number), ("Yo", Some(7)));
    for numbers in [
        &[("a", 1), ("a", 1)][..],
        &[("a", 1), ("b", 23)],
        &[("a", 1), ("x", 1)],
        &[("b", -22)],
    ] {
        assert!(shape.clone().with_numbers(numbers).is_none(), "{numbers:?}");
    }
}

#[test]
fn number_holes_after_spaces_and_a_span_across_them() {
    let frame = r#"{"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"candidatesTokenCount": 1,"totalTokenCount": 10},"modelVersion": "g"}"#;
    let at = frame.find("Hi").unwrap();
    let usage_at = frame.find("{\"promptTokenCount").unwrap();
    let usage_end = frame.find(",\"modelVersion").unwrap();
    let shape = Shape::new(None, frame, &frame[at..at + 2], &[])
        .unwrap()
        .with_number("candidatesTokenCount", 1)
        .unwrap()
        .with_number("totalTokenCount", 10)
        .unwrap()
        .with_span(frame, &frame[usage_at..usage_end])
        .unwrap();
    let next = frame
        .replace("\"Hi\"", "\"there\"")
        .replace(
            "\"candidatesTokenCount\": 1",
            "\"candidatesTokenCount\": 123",
        )
        .replace("\"totalTokenCount\": 10", "\"totalTokenCount\": 132");
    let f = shape
        .fill_all(None, &next, &mut [""; MAX_RAW], None)
        .unwrap();
    assert_eq!(f.text, "there");
    assert_eq!(f.number, Some(123));
    assert_eq!(
        f.span,
        Some(r#"{"promptTokenCount": 9,"candidatesTokenCount": 123,"totalTokenCount": 132}"#)
    );
    // Without the space, or another constant, it is not this shape.
    assert!(shape
        .fill_all(
            None,
            &next.replace(": 123", ":123"),
            &mut [""; MAX_RAW],
            None
        )
        .is_none());
    assert!(shape
        .fill_all(
            None,
            &next.replace("\"promptTokenCount\": 9", "\"promptTokenCount\": 8"),
            &mut [""; MAX_RAW],
            None,
        )
        .is_none());
    // CRLF frames are read from the wire too, the same as LF ones.
    for end in ["\r\n\r\n", "\n\n"] {
        let wire = format!("data: {next}{end}data: x");
        let (len, f) = shape
            .fill_raw_all(wire.as_bytes(), &mut [""; MAX_RAW], None)
            .unwrap();
        assert_eq!(len, wire.len() - "data: x".len());
        assert_eq!(f.text, "there");
    }
    for end in ["\r\n\n", "\r\r", "\r\n\r", "\n"] {
        let wire = format!("data: {next}{end}");
        assert!(
            shape
                .fill_raw_all(wire.as_bytes(), &mut [""; MAX_RAW], None)
                .is_none(),
            "{end:?}"
        );
    }
    // A span must be a slice of the frame, within fixed parts.
    let plain = Shape::new(None, frame, &frame[at..at + 2], &[]).unwrap();
    assert!(plain.clone().with_span(frame, "x").is_none());
    assert!(plain.clone().with_span(frame, &frame[at..at + 3]).is_none()); // starts in a hole
    assert!(plain.with_span(frame, &frame[at - 1..at + 3]).is_some()); // holds one: fine
}

/// Anthropic's padding: a run of spaces (or tabs) before the data's closing brace, of
/// another length on each frame. One shape fills them all, learned from a padded frame or
/// not; the run is taken only there, and nowhere else.
#[test]
fn a_run_of_spaces_before_the_closing_brace_is_any_length() {
    let pad = |text: &str, run: &str| frame(text).strip_suffix('}').unwrap().to_owned() + run + "}";
    for learned in [FRAME.to_owned(), pad("Hi", "          ")] {
        let at = learned.find("Hi").unwrap();
        let shape = Shape::new(None, &learned, &learned[at..at + 2], &[]).unwrap();
        for run in ["", " ", "   \t  ", &" ".repeat(300)] {
            let data = pad(" there", run);
            let f = shape
                .fill_all(None, &data, &mut [""; MAX_RAW], None)
                .unwrap();
            assert_eq!(f.text, " there");
            assert_eq!(f.data, data.as_bytes());
            let wire = format!("data: {data}\n\ndata: x");
            let (len, f) = shape
                .fill_raw_all(wire.as_bytes(), &mut [""; MAX_RAW], None)
                .unwrap();
            assert_eq!((len, &*f.text), (wire.len() - "data: x".len(), " there"));
        }
        // Not elsewhere, not another byte, not after the brace, not a line break.
        for data in [
            frame("x").replacen("}", " }", 1),
            frame("x").replacen("\"delta\"", "\"delta\" ", 1),
            pad("x", " x "),
            pad("x", " \n "),
            frame("x") + " ",
            pad("x", " ").strip_suffix('}').unwrap().to_owned(),
        ] {
            assert!(shape.fill(None, &data).is_none(), "{data}");
        }
    }
}

/// A span that ends at the padding reads the same on any run; one that would take in the
/// closing brace is no span of a padded shape.
#[test]
fn a_span_of_a_padded_shape_ends_before_the_padding() {
    let data = r#"{"type":"message_delta","usage":{"output_tokens":5}}"#;
    let usage = &data[data.find("{\"output").unwrap()..data.len() - 1];
    let at = data.find("message_delta").unwrap();
    let shape = Shape::new(None, data, &data[at..at + 13], &[]).unwrap();
    let spanned = shape.clone().with_span(data, usage).unwrap();
    let padded = data.replace("}}", "}        }");
    let f = spanned
        .fill_all(None, &padded, &mut [""; MAX_RAW], None)
        .unwrap();
    assert_eq!(f.span, Some(r#"{"output_tokens":5}"#));
    assert!(shape.with_span(data, data).is_none());
}

/// A value hole takes any JSON value the strict cursor reads (an object of any keys, an
/// array, a string, `null`, white space inside) as the fill's span, with the padding before
/// the closing brace; it refuses a value that is not JSON, has a lone surrogate escape, starts
/// with white space or runs into the fixed part after it, and it is only made in the last
/// part.
#[test]
fn a_value_hole_takes_any_json_value() {
    let data = r#"{"type":"content_block_start","index":0,"content_block":{}}"#;
    let ty = data.find("content_block_start").unwrap();
    let at = data.rfind("{}").unwrap();
    let shape = Shape::new(Some(b"content_block_start"), data, &data[ty..ty + 19], &[])
        .and_then(|s| s.with_number("index", 0))
        .and_then(|s| s.with_value(data, &data[at..at + 2]))
        .unwrap();
    let of = |value: &str, end: &str| {
        format!(r#"{{"type":"content_block_start","index":7,"content_block":{value}{end}"#)
    };
    for value in [
        r#"{"type":"web_search_tool_result","content":[{"a":"\"b\" \u00e9"}]}"#,
        r#"{ "type" : "x" , "n" : -1.5e3 }"#,
        "[1,true,null]",
        r#""s""#,
        "null",
    ] {
        for end in ["}", "   }", "\t}"] {
            let frame = of(value, end);
            let filled = shape
                .fill_all(
                    Some(b"content_block_start"),
                    &frame,
                    &mut [""; MAX_RAW],
                    None,
                )
                .unwrap_or_else(|| panic!("{frame}"));
            assert_eq!(filled.span, Some(value), "{frame}");
            assert_eq!(filled.number, Some(7));
            assert_eq!(filled.text, "content_block_start");
            let wire = format!("event: content_block_start\ndata: {frame}\n\nevent: x\n");
            let (len, raw) = shape
                .fill_raw_all(wire.as_bytes(), &mut [""; MAX_RAW], None)
                .unwrap();
            assert_eq!(
                (len, raw.span),
                (wire.len() - "event: x\n".len(), Some(value))
            );
        }
    }
    for value in [
        r#"{"a":"\ud800"}"#,
        r#"{"a":01}"#,
        r#"{"a":1}x"#,
        r#"{"a":1"#,
        r#" {"a":1}"#,
        "{\"a\":\"\u{1}\"}",
        "",
        "nul",
    ] {
        let frame = of(value, "}");
        let filled = shape.fill_all(
            Some(b"content_block_start"),
            &frame,
            &mut [""; MAX_RAW],
            None,
        );
        assert!(filled.is_none(), "{frame}");
    }
    // A value split over two lines is left to the framer and the decoder.
    let wire = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\n\"a\":1}}\n\n";
    assert!(shape
        .fill_raw_all(wire.as_bytes(), &mut [""; MAX_RAW], None)
        .is_none());
    // Only in the last part, and never over its brace.
    let plain = Shape::new(Some(b"content_block_start"), data, &data[ty..ty + 19], &[]).unwrap();
    assert!(plain.clone().with_value(data, &data[1..7]).is_none());
    assert!(plain.with_value(data, &data[at..]).is_none());
}
