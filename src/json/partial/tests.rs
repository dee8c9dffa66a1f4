//! Tests of `partial`.

use super::*;

fn partial(text: &str) -> Option<String> {
    let mut p = PartialJson::new();
    let _ = p.feed_str(text);
    p.value_json()
}

#[test]
fn value_json_follows_the_rules() {
    assert_eq!(partial(""), None);
    assert_eq!(partial("  "), None);
    assert_eq!(partial("12"), None);
    assert_eq!(partial("[1, 2"), Some("[1]".into()));
    assert_eq!(partial("[1, 2,"), Some("[1, 2]".into()));
    assert_eq!(partial("{\"a\": tr"), Some("{}".into()));
    assert_eq!(partial("{\"a\": true"), Some("{\"a\": true}".into()));
    assert_eq!(
        partial("{\"a\": [\"x\\u12"),
        Some("{\"a\": [\"x\"]}".into())
    );
    assert_eq!(partial("{\"ab"), Some("{}".into()));
    assert_eq!(partial("{\"ab\":"), Some("{}".into()));
    assert_eq!(partial(" \"a\\ud83d"), Some("\"a\"".into()));
    assert_eq!(partial("[\"\\ud83dx"), Some("[\"\\ufffdx\"]".into()));
}

#[test]
fn every_split_of_bytes_gives_the_same_events() {
    let doc = "{\"k\": [1, -0.5e+3, \"h\u{e9}\u{1F600}\\u00e9\\ud83d\\ude00\", true, null, {}], \"z\": 123456789012345678901234}";
    let mut whole = PartialJson::with_events();
    whole.feed_str(doc).unwrap();
    whole.finish().unwrap();
    let expected: Vec<Event> = whole.drain_events().collect();
    for cut in 0..=doc.len() {
        let (a, b) = doc.as_bytes().split_at(cut);
        let mut p = PartialJson::with_events();
        p.feed_bytes(a).unwrap();
        p.feed_bytes(b).unwrap();
        p.finish().unwrap();
        assert_eq!(
            p.drain_events().collect::<Vec<_>>(),
            expected,
            "cut at {cut}"
        );
        assert_eq!(p.value_json().as_deref(), Some(doc));
    }
}

#[test]
fn errors_carry_the_json_loads_position() {
    for (text, msg, pos) in [
        ("[1,]", EXPECTING_VALUE, 3),
        ("1.x", EXTRA_DATA, 1),
        ("[1e+]", EXPECTING_COMMA, 2),
        ("\"a\\x\"", BAD_ESCAPE, 2),
        ("\"a\\u12x4\"", BAD_UNICODE, 3),
        ("\"é\u{1}\"", CONTROL, 2),
        ("{\"a\":1 \"b\"}", EXPECTING_COMMA, 7),
        ("1 2", EXTRA_DATA, 2),
        ("trux", EXPECTING_VALUE, 0),
        ("[01]", EXPECTING_COMMA, 2),
        ("-01", EXTRA_DATA, 2),
    ] {
        let mut p = PartialJson::new();
        let err = p.feed_str(text).and_then(|()| p.finish()).unwrap_err();
        assert_eq!((err.msg, err.pos), (msg, pos), "{text:?}");
    }
    let mut p = PartialJson::new();
    assert_eq!(p.feed_bytes(b"[\"\xff\"]").unwrap_err().pos, 2);
    // The text is kept after an error (the raw arguments of a tool call stay whole).
    let mut p = PartialJson::new();
    assert!(p.feed_str("{\"a\": 1,, ").is_err());
    assert!(p.feed_str("\"b\": 2}").is_err());
    assert_eq!(p.text(), "{\"a\": 1,, \"b\": 2}");
    assert_eq!(p.value_json().as_deref(), Some("{\"a\": 1}"));
}

mod properties {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn events(pieces: &[&[u8]]) -> (Vec<Event>, Option<String>) {
        let mut p = PartialJson::with_events();
        for piece in pieces {
            p.feed_bytes(piece).unwrap();
            // The partial value is always JSON text.
            if let Some(v) = p.value_json() {
                serde_json::from_str::<Value>(&v).unwrap();
            }
        }
        p.finish().unwrap();
        (p.drain_events().collect(), p.value_json())
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_events_and_the_document(
            value in json(),
            pretty in any::<bool>(),
            cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..8),
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let input = text.as_bytes();
            let mut points: Vec<usize> =
                cuts.iter().map(|c| c.index(input.len() + 1)).collect();
            points.sort_unstable();
            let mut pieces = Vec::new();
            let mut prev = 0;
            for p in points {
                pieces.push(&input[prev..p]);
                prev = p;
            }
            pieces.push(&input[prev..]);
            let whole = events(&[input]);
            prop_assert_eq!(&events(&pieces), &whole);
            let end: Value = serde_json::from_str(&whole.1.unwrap()).unwrap();
            prop_assert_eq!(end, value);
        }
    }
}

#[test]
fn nesting_is_read_to_the_limit_and_no_deeper() {
    let mut p = PartialJson::with_events();
    p.feed_str(&"[".repeat(MAX_DEPTH)).unwrap();
    p.feed_str(&"]".repeat(MAX_DEPTH)).unwrap();
    assert!(p.complete());
    assert_eq!(p.drain_events().len(), 2 * MAX_DEPTH);
    // One level more is an error, at the bracket that opens it; the value keeps the
    // levels before it, and the millions of brackets after it are never held.
    let mut p = PartialJson::with_events();
    let err = p.feed_str(&"[".repeat(1_000_000)).unwrap_err();
    assert_eq!((err.msg, err.pos), (TOO_DEEP, MAX_DEPTH));
    assert_eq!(p.drain_events().len(), MAX_DEPTH);
    assert_eq!(p.value_json().map(|v| v.len()), Some(2 * MAX_DEPTH));
}

/// A `Joined` reads nothing until asked (a fold's tool arguments that nobody reads while they
/// stream cost their joining only), then reads exactly as a reader fed each fragment would,
/// and a later read is fed only what came since (issue 47).
#[test]
fn joined_reads_when_asked_as_an_eager_reader_would() {
    let fragments = [
        "{\"city\": \"Par",
        "is\", \"days\": [1, ",
        "2",
        "], \"x\": tru",
        "e}",
    ];
    for cut in 0..=fragments.len() {
        let mut joined = Joined::new();
        let mut eager = PartialJson::new();
        for f in &fragments[..cut] {
            joined.push(f);
            let _ = eager.feed_str(f);
        }
        assert_eq!(joined.reader.text(), "", "nothing read before a read");
        assert_eq!(SoFar::text(&joined), eager.text());
        let read = joined.read();
        assert_eq!(read.text(), eager.text());
        assert_eq!(read.value_json(), eager.value_json());
        assert_eq!(read.complete(), eager.complete());
        // The rest, read at the end: the same as fed one by one.
        for f in &fragments[cut..] {
            joined.push(f);
            let _ = eager.feed_str(f);
        }
        let read = joined.read();
        assert_eq!(read.value_json(), eager.value_json());
        assert!(read.complete() && read.error().is_none());
    }
    // Text that is not JSON: the same error, sticky, and the text kept whole.
    let mut joined = Joined::new();
    let mut eager = PartialJson::new();
    for f in ["[1,", "}", " more"] {
        joined.push(f);
        let _ = eager.feed_str(f);
    }
    let id = SoFar::id(&joined);
    let read = joined.read();
    assert_eq!(read.error(), eager.error());
    assert!(read.error().is_some());
    assert_eq!(read.text(), "[1,} more");
    assert_eq!(SoFar::id(&joined), id);
    assert_ne!(SoFar::id(&Joined::new()), id);
}
