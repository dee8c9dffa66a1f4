//! Tests of `responses`.

use super::*;

fn ev(kind: &str) -> EventView<'_> {
    EventView {
        kind,
        ..EventView::default()
    }
}

fn output(f: &ResponsesFold) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    v["output"].clone()
}

#[test]
fn text_and_function_call() {
    let mut f = ResponsesFold::new();
    f.add(&EventView {
        response: Some(r#"{"id":"r","status":"in_progress","output":[]}"#),
        ..ev("response.created")
    });
    f.add(&EventView {
        output_index: Some(0),
        item: Some(r#"{"id":"m","type":"message","role":"assistant","content":[]}"#),
        ..ev("response.output_item.added")
    });
    for d in ["Hel", "lo"] {
        f.add(&EventView {
            output_index: Some(0),
            content_index: Some(0),
            delta: Some(d),
            ..ev("response.output_text.delta")
        });
    }
    f.add(&EventView {
        output_index: Some(1),
        item: Some(r#"{"id":"fc","type":"function_call","arguments":""}"#),
        ..ev("response.output_item.added")
    });
    f.add(&EventView {
        item_id: Some("fc"),
        delta: Some("{}"),
        ..ev("response.function_call_arguments.delta")
    });
    f.add(&EventView {
        output_index: Some(0),
        content_index: Some(0),
        text: Some("Hello!"),
        ..ev("response.output_text.done")
    });
    let out = output(&f);
    assert_eq!(out[0]["content"][0]["text"], "Hello!");
    assert_eq!(out[0]["content"][0]["annotations"], serde_json::json!([]));
    assert_eq!(out[1]["arguments"], "{}");
    assert_eq!(f.mismatches().len(), 1);
    assert!(f.mismatches()[0].contains("'Hello'") && f.mismatches()[0].contains("'Hello!'"));
    let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    assert_eq!(v["object"], "response");
    assert_eq!(v["usage"], serde_json::Value::Null);
}

#[test]
fn terminal_response_wins() {
    let mut f = ResponsesFold::new();
    f.add(&EventView {
        output_index: Some(0),
        content_index: Some(0),
        delta: Some("x"),
        ..ev("response.output_text.delta")
    });
    f.add(&EventView {
        response: Some(r#"{"id":"r","status":"completed","output":[{"id":null,"type":"message","content":[{"type":"output_text","text":"y"}]}]}"#),
        ..ev("response.completed")
    });
    assert_eq!(output(&f)[0]["content"][0]["text"], "y");
    assert_eq!(f.warnings().len(), 1);
    assert_eq!(f.mismatches().len(), 1, "{:?}", f.mismatches());
}

#[test]
fn repr_matches_python() {
    assert_eq!(repr_str("it's"), "\"it's\"");
    assert_eq!(repr_str("a\nb'\""), "'a\\nb\\'\"'");
    assert_eq!(short(Some(&Out::Str("x".repeat(100)))).len(), 60);
    assert_eq!(
        repr(Some(&Out::json(r#"{"a":[1,null,true]}"#))),
        "{'a': [1, None, True]}"
    );
}

/// A terminal response with its `output` is the result as sent, with the keys every result has
/// added at its end in their order; without `output` (or with a null one) it gets the
/// assembled output, as a map. The stream's fold (no comparison) gives the same result.
#[test]
fn terminal_response_is_the_result_with_the_missing_keys_added() {
    for mut f in [ResponsesFold::new(), ResponsesFold::unchecked()] {
        f.add(&EventView {
            output_index: Some(0),
            content_index: Some(0),
            delta: Some("x"),
            ..ev("response.output_text.delta")
        });
        f.add(&EventView {
            response: Some(
                r#" {"id":"r","model":"m","output":[{"type":"message"}],"extra":{"a":[1]}} "#,
            ),
            ..ev("response.completed")
        });
        assert!(matches!(f.result(), Out::Json(_)));
        assert_eq!(
            f.result().to_json(),
            r#"{"id":"r","model":"m","output":[{"type":"message"}],"extra":{"a":[1]},"object":"response","created_at":null,"status":null,"usage":null,"error":null,"incomplete_details":null}"#
        );
        assert_eq!(
            f.result().key("object").map(|o| o.to_json()),
            Some(r#""response""#.into())
        );
    }
    // A duplicate key: the last wins, as a map keeps it (here a null output).
    for response in [
        "{}",
        r#"{"output":null,"id":"r"}"#,
        r#"{"output":[{"type":"message"}],"output":null}"#,
    ] {
        let mut f = ResponsesFold::unchecked();
        f.add(&EventView {
            output_index: Some(0),
            content_index: Some(0),
            delta: Some("x"),
            ..ev("response.output_text.delta")
        });
        f.add(&EventView {
            response: Some(response),
            ..ev("response.completed")
        });
        let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
        assert_eq!(v["output"][0]["content"][0]["text"], "x", "{response}");
        assert_eq!(v["object"], "response");
        assert!(v.as_object().unwrap().contains_key("incomplete_details"));
    }
}

/// A stream's fold reads a done item's entries only when it needs them: a message item is
/// kept as sent, while a function call's arguments (however its key is spelled) still reach
/// the arguments reader, and the result is the same either way.
#[test]
fn a_done_item_is_read_only_for_its_arguments() {
    for (fold, item) in [
        (
            ResponsesFold::unchecked(),
            r#"{"id":"fc","type":"function_call","arguments":"{\"a\":1}"}"#,
        ),
        (
            ResponsesFold::unchecked(),
            r#"{"id":"fc","type":"function_call","argum\u0065nts":"{\"a\":1}"}"#,
        ),
        (
            ResponsesFold::new(),
            r#"{"id":"fc","type":"function_call","arguments":"{\"a\":1}"}"#,
        ),
    ] {
        let mut f = fold;
        for (kind, item) in [
            (
                "response.output_item.added",
                r#"{"id":"fc","type":"function_call","arguments":""}"#,
            ),
            ("response.output_item.done", item),
        ] {
            f.add(&EventView {
                output_index: Some(0),
                item: Some(item),
                ..ev(kind)
            });
        }
        assert_eq!(
            f.arguments(0).map(crate::json::partial::SoFar::text),
            Some("{\"a\":1}"),
            "{item}"
        );
        assert_eq!(output(&f)[0]["type"], "function_call");
    }
    let mut f = ResponsesFold::unchecked();
    let message = r#"{"id":"m","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}"#;
    for kind in ["response.output_item.added", "response.output_item.done"] {
        f.add(&EventView {
            output_index: Some(0),
            item: Some(message),
            ..ev(kind)
        });
    }
    assert_eq!(output(&f)[0]["content"][0]["text"], "Hi");
    assert!(f.arguments(0).is_none());
}
