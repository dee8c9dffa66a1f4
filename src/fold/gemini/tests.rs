//! Tests of `gemini`.

use super::*;
use crate::dialect::gemini::decode;

fn fold(chunks: &[&str]) -> GeminiFold {
    let mut f = GeminiFold::new();
    for c in chunks {
        f.add(&decode(c).unwrap());
    }
    f
}

fn value(f: &GeminiFold) -> serde_json::Value {
    serde_json::from_str(&f.result().to_json()).unwrap()
}

#[test]
fn paths() {
    use Seg::*;
    assert_eq!(
        parse_path("$.a.b[0]['c d'][\"e\"]"),
        Some(vec![
            Key("a".into()),
            Key("b".into()),
            Index(0),
            Key("c d".into()),
            Key("e".into())
        ])
    );
    assert_eq!(parse_path("$"), Some(vec![]));
    for bad in ["a", "$.", "$[", "$[x]", "$.*", "$..a", "$['a"] {
        assert_eq!(parse_path(bad), None, "{bad}");
    }
}

fn write(pieces: &[(&str, &str, bool)]) -> String {
    let mut w = ArgsText::default();
    let mut out = String::new();
    for (path, value, more) in pieces {
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(value).unwrap();
        let v = match serde_json::from_str::<crate::json::read::Str>(value) {
            Ok(s) => ArgValue::Str(s),
            Err(_) => ArgValue::Raw(&raw),
        };
        w.add(path, &v, *more, &mut out).unwrap();
    }
    w.close(&mut out);
    out
}

#[test]
fn streamed_arguments_are_written_front_to_back() {
    let out = write(&[
        ("$.location", "\"Bos\"", true),
        ("$.location", "\"ton \\\"MA\\\"\"", false),
        ("$.days", "3", false),
        ("$.options.metric", "true", false),
        ("$.cities[0]", "\"a\"", true),
        ("$.cities[0]", "\"b\"", false),
        ("$.cities[1]", "\"c\"", false),
        ("$.filters[0].name", "\"n\"", false),
        ("$.filters[0].v", "null", false),
        ("$.last", "\"open\"", true),
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"location": "Boston \"MA\"", "days": 3,
            "options": {"metric": true}, "cities": ["ab", "c"],
            "filters": [{"name": "n", "v": null}], "last": "open"})
    );
    assert_eq!(write(&[]), "{}");
}

#[test]
fn pieces_that_do_not_fit_are_refused_without_writing() {
    let mut w = ArgsText::default();
    let mut out = String::new();
    let s = ArgValue::Raw(serde_json::from_str("1").unwrap());
    w.add("$.a[0]", &s, false, &mut out).unwrap();
    let before = out.clone();
    assert!(w.add("$.a.b", &s, false, &mut out).is_err());
    assert!(w.add("$[0]", &s, false, &mut out).is_err());
    assert!(w.add("$", &s, false, &mut out).is_err());
    assert!(w.add("$.*", &s, false, &mut out).is_err());
    let deep = format!("${}", ".a".repeat(200));
    assert!(w.add(&deep, &s, false, &mut out).is_err());
    assert_eq!(out, before);
    w.close(&mut out);
    assert_eq!(out, r#"{"a":[1]}"#);
}

#[test]
fn parts_merge_as_the_response_holds_them() {
    let f = fold(&[
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me ","thought":true}]},"index":0}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"think.","thought":true}]},"index":0}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hello"}]},"index":0}],"usageMetadata":{"promptTokenCount":1}}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"text":" world"},{"text":"","thoughtSignature":"sig"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":2},"modelVersion":"g"}"#,
    ]);
    assert!(f.finished());
    assert_eq!(
        value(&f),
        serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Let me think.", "thought": true},
            {"text": "Hello world", "thoughtSignature": "sig"}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 2}, "modelVersion": "g"})
    );
}

#[test]
fn streamed_call_without_its_closing_piece() {
    let f = fold(&[
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}"#,
        r#"{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.q","stringValue":"a","willContinue":true}],"willContinue":true}}]}}]}"#,
    ]);
    assert_eq!(f.arguments(0, 0).unwrap().text(), r#"{"q":"a"#);
    assert_eq!(
        value(&f)["candidates"][0]["content"]["parts"][0],
        serde_json::json!({"functionCall": {"name": "f", "args": {"q": "a"}}})
    );
    assert!(!f.finished());
}
