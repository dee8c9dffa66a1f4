//! Tests of `chat`.

use super::*;
use crate::json::cursor::tests::{list_text, object_text, put_stray};

fn text(index: i64, content: &str) -> ChunkView<'_> {
    ChunkView {
        id: Some("c1"),
        model: Some("m"),
        created: Some(1),
        index: Some(index),
        content: Some(ContentView::Text(content)),
        ..ChunkView::default()
    }
}

fn message(fold: &ChatFold, choice: usize) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&fold.result().to_json()).unwrap();
    v["choices"][choice]["message"].clone()
}

#[test]
fn text_is_joined_and_choices_sorted() {
    let mut f = ChatFold::new();
    f.add(&text(1, "b"));
    f.add(&text(0, "Hel"));
    f.add(&text(0, "lo"));
    let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], "Hello");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(v["choices"][1]["index"], 1);
    assert_eq!(v["usage"], serde_json::Value::Null);
}

#[test]
fn empty_head_values_are_replaced() {
    let mut f = ChatFold::new();
    f.add(&ChunkView {
        id: Some(""),
        model: Some(""),
        created: Some(0),
        ..ChunkView::default()
    });
    f.add(&text(0, "x"));
    let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    assert_eq!(
        (v["id"].as_str(), v["created"].as_i64()),
        (Some("c1"), Some(1))
    );
}

#[test]
fn tool_calls_keep_first_id_and_join_arguments() {
    let calls = [
        ToolView {
            index: 0,
            id: Some("call_1"),
            name: Some("f"),
            arguments: Some("{\"a\""),
            ..ToolView::default()
        },
        ToolView {
            index: 0,
            id: Some("call_1"),
            name: Some("f"),
            arguments: Some(":1}"),
            ..ToolView::default()
        },
    ];
    let mut f = ChatFold::new();
    for call in &calls {
        f.add(&ChunkView {
            index: Some(0),
            tool_calls: std::slice::from_ref(call),
            ..ChunkView::default()
        });
    }
    let m = message(&f, 0);
    assert_eq!(m["tool_calls"][0]["id"], "call_1");
    assert_eq!(m["tool_calls"][0]["type"], "function");
    assert_eq!(m["tool_calls"][0]["function"]["name"], "f");
    assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
    // The arguments were joined, not read (issue 47: nobody asked while they streamed);
    // the warnings read them, once.
    let joined = |f: &ChatFold| f.arguments(0, 0).map(Joined::fed);
    assert_eq!(joined(&f), Some(0));
    assert!(f.warnings().is_empty());
    assert_eq!(joined(&f), Some(7));
    f.add(&ChunkView {
        index: Some(0),
        tool_calls: &[ToolView {
            index: 0,
            arguments: Some(" x"),
            ..ToolView::default()
        }],
        ..ChunkView::default()
    });
    assert_eq!(joined(&f), Some(7));
    let warnings = f.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with("choice 0 tool call 0 (call_1): the arguments are not valid JSON"),
        "{warnings:?}"
    );
}

#[test]
fn mistral_content_parts_merge() {
    let mut f = ChatFold::new();
    let parts = [
        r#"[{"type":"thinking","thinking":[{"type":"text","text":"Let me"}]}]"#,
        r#"[{"type":"thinking","thinking":[{"type":"text","text":" think"}]}]"#,
        r#"[{"type":"text","text":"Hi"}]"#,
    ];
    for p in parts {
        f.add(&ChunkView {
            index: Some(0),
            content: Some(ContentView::Parts(p)),
            ..ChunkView::default()
        });
    }
    f.add(&text(0, " there"));
    assert_eq!(
        message(&f, 0)["content"],
        serde_json::json!([
            {"type": "thinking", "thinking": [{"type": "text", "text": "Let me think"}]},
            {"type": "text", "text": "Hi there"}
        ])
    );
}

#[test]
fn reasoning_details_merge_by_index_and_wrong_types_are_kept() {
    let mut f = ChatFold::new();
    for d in [
        r#"[{"type":"reasoning.text","index":0,"text":"a","signature":null}]"#,
        r#"[{"type":"reasoning.text","index":0,"text":"b","signature":"s"}]"#,
        r#"[{"type":"reasoning.encrypted","data":"x"}]"#,
        "[]",
        "1",
        "true",
    ] {
        f.add(&ChunkView {
            index: Some(0),
            reasoning_details: Some(d),
            ..ChunkView::default()
        });
    }
    assert_eq!(
        message(&f, 0)["reasoning_details"],
        serde_json::json!([
            {"type": "reasoning.text", "index": 0, "text": "ab", "signature": "s"},
            {"type": "reasoning.encrypted", "data": "x"},
            1,
            true
        ])
    );
    let mut f = ChatFold::new();
    for d in ["1", "{}", "true"] {
        f.add(&ChunkView {
            index: Some(0),
            reasoning_details: Some(d),
            ..ChunkView::default()
        });
    }
    assert_eq!(message(&f, 0)["reasoning_details"], serde_json::json!(true));
    f.add(&ChunkView {
        index: Some(0),
        reasoning_details: Some(r#"[{"index":1,"text":"a"}]"#),
        ..ChunkView::default()
    });
    assert_eq!(
        message(&f, 0)["reasoning_details"],
        serde_json::json!([true, {"index": 1, "text": "a"}])
    );
}

/// A run of vendor objects of one skeleton is merged as its last (issue 25); a change of
/// skeleton flushes it. The result is what merging every chunk at once gives.
#[test]
fn runs_of_vendor_objects_fold_as_merged_one_by_one() {
    let choice = [
        r#"{"text":"a","seed":null}"#,
        r#"{"text":"b\"q","seed":null}"#,
        r#"{"text":"c","seed":5}"#,
        r#"{"text":"d","seed":null}"#,
        r#"{"text":"e","seed":null,"n":1.5e3}"#,
        r#"{"text":"f","seed":null,"n":-2}"#,
    ];
    let delta = [
        r#"{"token_id":1,"ok":true}"#,
        r#"{"token_id":2,"ok":true}"#,
        r#"{"token_id":2,"x":"s"}"#,
        r#"{"token_id":3,"x":"t"}"#,
        r#"{"token_id":4,"ok":null}"#,
        r#"{"token_id":5,"ok":false}"#,
    ];
    let mut f = ChatFold::new();
    for (c, d) in choice.iter().zip(delta) {
        f.add(&ChunkView {
            index: Some(0),
            choice_extra: Some(c),
            delta_extra: Some(d),
            ..ChunkView::default()
        });
    }
    let out: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    let c = &out["choices"][0];
    assert_eq!(c["text"], "f");
    assert_eq!(c["seed"], 5);
    assert_eq!(c["n"], -2);
    let m = &c["message"];
    assert_eq!(m["token_id"], 5);
    assert_eq!(m["ok"], false);
    assert_eq!(m["x"], "st");
    assert!(same_skeleton(
        r#"{"a":"x","b":[1,{"c":null}]}"#,
        r#"{"a":"yy\"","b":[-2.5e3,{"c":null}]}"#
    ));
    for (a, b) in [
        (r#"{"a":"x"}"#, r#"{"b":"x"}"#),
        (r#"{"a":"x"}"#, r#"{"a":1}"#),
        (r#"{"a":null}"#, r#"{"a":"x"}"#),
        (r#"{"a":true}"#, r#"{"a":false}"#),
        (r#"{"a":[1]}"#, r#"{"a":[1,2]}"#),
        (r#"{"a":1}"#, r#"{"a":1,"b":2}"#),
    ] {
        assert!(!same_skeleton(a, b), "{a} {b}");
    }
}

#[test]
fn delta_extras_merge() {
    let mut f = ChatFold::new();
    for d in [
        r#"{"function_call":{"name":"f","arguments":"{\"a"}, "annotations":[1], "audio":null}"#,
        r#"{"function_call":{"name":"f","arguments":"\":1}"}, "annotations":[2], "audio":{"id":"a1","transcript":"he"}}"#,
        r#"{"audio":{"id":"a1","transcript":"llo"}}"#,
    ] {
        f.add(&ChunkView {
            index: Some(0),
            delta_extra: Some(d),
            ..ChunkView::default()
        });
    }
    let m = message(&f, 0);
    assert_eq!(
        m["function_call"],
        serde_json::json!({"name": "f", "arguments": "{\"a\":1}"})
    );
    assert_eq!(m["annotations"], serde_json::json!([1, 2]));
    assert_eq!(
        m["audio"],
        serde_json::json!({"id": "a1", "transcript": "hello"})
    );
}

#[test]
fn logprobs_concatenate_and_usage_keeps_last_non_null() {
    let mut f = ChatFold::new();
    f.add(&ChunkView {
        index: Some(0),
        logprobs: Some(r#"{"content":[{"token":"a"}],"refusal":null}"#),
        ..ChunkView::default()
    });
    f.add(&ChunkView {
        index: Some(0),
        logprobs: Some(r#"{"content":[{"token":"b"}]}"#),
        usage: Some(r#"{"total_tokens":3}"#),
        ..ChunkView::default()
    });
    f.add(&ChunkView {
        usage: Some("null"),
        extra: Some(r#"{"router":{"x":1},"obfuscation":"zz","id":"no"}"#),
        ..ChunkView::default()
    });
    let v: serde_json::Value = serde_json::from_str(&f.result().to_json()).unwrap();
    assert_eq!(
        v["choices"][0]["logprobs"],
        serde_json::json!({"content": [{"token": "a"}, {"token": "b"}], "refusal": null})
    );
    assert_eq!(v["usage"]["total_tokens"], 3);
    assert_eq!(v["router"]["x"], 1);
    assert!(v.get("obfuscation").is_none());
    assert_eq!(v["id"], serde_json::Value::Null);
}

#[test]
fn hostile_values_do_not_panic() {
    let mut f = ChatFold::new();
    for junk in [
        "",
        "x",
        "{",
        "[",
        "\"",
        "1e400",
        "[[[[[]]]]]",
        "{\"index\":{}}",
    ] {
        f.add(&ChunkView {
            index: Some(i64::MAX),
            reasoning_details: Some(junk),
            logprobs: Some(junk),
            delta_extra: Some(junk),
            choice_extra: Some(junk),
            extra: Some(junk),
            usage: Some(junk),
            content: Some(ContentView::Parts(junk)),
            ..ChunkView::default()
        });
    }
    f.add(&text(i64::MIN, "x"));
    let _ = f.result().to_json();
}

/// Blocks merge into the block of their index wherever it is (the last one merged is found
/// without hashing; an earlier one through the index table), and `"0"` is not `0`.
#[test]
fn reasoning_details_merge_back_into_earlier_indexes() {
    let mut f = ChatFold::new();
    for (index, text) in [
        ("0", "a"),
        ("1", "b"),
        ("0", "c"),
        ("1", "d"),
        ("\"0\"", "e"),
        ("0", "f"),
    ] {
        let details = format!(r#"[{{"type":"reasoning.text","text":"{text}","index":{index}}}]"#);
        f.add(&ChunkView {
            index: Some(0),
            reasoning_details: Some(&details),
            ..ChunkView::default()
        });
    }
    assert_eq!(
        message(&f, 0)["reasoning_details"],
        serde_json::json!([
            {"type": "reasoning.text", "text": "acf", "index": 0},
            {"type": "reasoning.text", "text": "bd", "index": 1},
            {"type": "reasoning.text", "text": "e", "index": "0"},
        ])
    );
}

/// OpenRouter's `reasoning_details` are read in one pass (issue 47) and the same as serde_json
/// reads them; what the strict reader is not sure of is left to serde_json, and what neither
/// reads as a list of objects is not one.
#[test]
fn reasoning_details_are_read_in_one_pass_as_serde_reads_them() {
    let one_pass = [
        r#"[{"type":"reasoning.text","text":"Of input","format":"anthropic-claude-v1","index":0}]"#,
        r#" [ { "type" : "reasoning.summary", "summary" : "a\nb \"q\" \u00e9", "index" : 1 } ] "#,
        r#"[{"type":"reasoning.encrypted","data":"eyJ4Ijo=","id":null,"index":"0"},{}]"#,
        r#"[{"text":5,"summary":null,"data":{"a":[1,2.5e3,true]},"index":0,"index":1}]"#,
        "[]",
    ];
    for text in one_pass {
        let fast = blocks_in_one_pass(text);
        assert!(fast.is_some(), "{text}");
        assert_eq!(fast, blocks_by_serde(text), "{text}");
        assert_eq!(blocks(text), fast, "{text}");
    }
    // A key with an escape: serde_json's to read (and it reads it).
    let escaped_key = r#"[{"te\u0078t":"a","index":0}]"#;
    assert_eq!(blocks_in_one_pass(escaped_key), None);
    let read = blocks(escaped_key).unwrap();
    assert_eq!(read[0][0], (Cow::Borrowed("text"), Field::Text("a".into())));
    // Not lists of objects, not JSON, or a string the one-pass reader leaves to serde_json (a
    // lone surrogate, which serde_json keeps raw): both readings agree, and the one-pass
    // reading does not answer.
    for text in [
        "null",
        "[1]",
        "[{}] x",
        "[{\"text\":\"\\ud800\"}]",
        "[{\"index\":01}]",
        "{\"index\":0}",
        "[{\"a\":1,}]",
    ] {
        assert_eq!(blocks(text), blocks_by_serde(text), "{text}");
        assert_eq!(blocks_in_one_pass(text), None, "{text}");
    }
}

proptest::proptest! {
    /// Lists of blocks made of a `reasoning_details` value's keys and values, spaced any way
    /// and perhaps with one stray piece put in: the one-pass reading, when it answers, is
    /// serde_json's, and the two agree on what is a list of objects.
    #[test]
    fn one_pass_reasoning_details_are_serdes(
        blocks_made in proptest::collection::vec(
            proptest::collection::vec((0usize..7, 0usize..12, 0usize..3), 0..5),
            0..4,
        ),
        stray in proptest::option::of((0usize..400, 0usize..8)),
    ) {
        const KEYS: [&str; 7] =
            ["\"text\"", "\"index\"", "\"type\"", "\"summary\"", "\"data\"", "\"te\\u0078t\"", "\"\""];
        const VALUES: [&str; 12] = [
            "\"a \\\"q\\\" \\n\"", "0", "-1.5e3", "null", "true", "\"\\ud800\"", "\"x\\u00e9\"",
            "01", "[1,{\"a\":[]}]", "\"reasoning.text\"", "{}", "\"\"",
        ];
        let blocks_text: Vec<String> = blocks_made
            .iter()
            .map(|block| object_text(block, &KEYS, &VALUES))
            .collect();
        let mut text = format!("[{}]", blocks_text.join(","));
        put_stray(&mut text, stray);
        let serde = blocks_by_serde(&text);
        if let Some(fast) = blocks_in_one_pass(&text) {
            proptest::prop_assert_eq!(Some(fast), serde, "{}", text);
        } else {
            proptest::prop_assert_eq!(blocks(&text), serde, "{}", text);
        }
    }
}

/// Folds one chunk of choice 0 for each `reasoning_details` text. With `runs` false, the
/// choice forgets its run before each chunk: every text is read and merged whole.
fn details_fold(texts: &[String], runs: bool) -> ChatFold {
    let mut f = ChatFold::new();
    for text in texts {
        if !runs {
            if let Some(more) = f.choices.get_mut(0).and_then(|c| c.more.as_mut()) {
                more.details_run = None;
            }
        }
        f.add(&ChunkView {
            index: Some(0),
            reasoning_details: Some(text),
            ..ChunkView::default()
        });
    }
    f
}

fn has_run(f: &ChatFold) -> bool {
    f.choices
        .get(0)
        .and_then(|c| c.more.as_ref())
        .is_some_and(|m| m.details_run.is_some())
}

/// OpenRouter's reasoning chunks (one block, one text field, the same other fields) after the
/// first only append their text (issue 47); a text of other ends is read again, and the
/// result is the whole merge's.
#[test]
fn a_run_of_one_reasoning_block_appends_its_text() {
    let block = |text: &str, index: u8| {
        format!(
            r#"[{{"type":"reasoning.text","text":"{text}","format":"anthropic-claude-v1","index":{index}}}]"#
        )
    };
    let texts = [
        block("Of", 0),
        block(" input \\\"q\\\"", 0),
        block("\\u00e9\\\\", 0),
        block("b", 1),
        block("c", 0),
    ];
    let mut f = ChatFold::new();
    let mut runs = Vec::new();
    for text in &texts {
        f.add(&ChunkView {
            index: Some(0),
            reasoning_details: Some(text),
            ..ChunkView::default()
        });
        runs.push(has_run(&f));
    }
    assert_eq!(runs, [true; 5]);
    let expected = serde_json::json!([
        {"type": "reasoning.text", "text": "Of input \"q\"é\\c", "format": "anthropic-claude-v1", "index": 0},
        {"type": "reasoning.text", "text": "b", "format": "anthropic-claude-v1", "index": 1},
    ]);
    assert_eq!(message(&f, 0)["reasoning_details"], expected);
    assert_eq!(
        message(&details_fold(&texts, false), 0)["reasoning_details"],
        expected
    );
    // Blocks a run cannot take: two text fields, a text key twice, two blocks, a text that is
    // not a string.
    for text in [
        r#"[{"text":"a","summary":"b","index":0}]"#,
        r#"[{"text":5,"text":"a","index":0}]"#,
        r#"[{"text":"a","index":0},{"text":"b","index":1}]"#,
        r#"[{"text":5,"index":0}]"#,
    ] {
        assert!(!has_run(&details_fold(&[text.to_owned()], true)), "{text}");
    }
}

proptest::proptest! {
    /// Chunks of `reasoning_details` made of a few skeletons (some a run takes, some not) and
    /// text values (escapes, quotes, a backslash at the end, not strings): folded with runs,
    /// the result is that of merging every text whole.
    #[test]
    fn runs_of_reasoning_blocks_fold_as_whole_merges(
        chunks in proptest::collection::vec((0usize..15, 0usize..11, 0usize..11), 1..14),
    ) {
        const SKELETONS: [&str; 15] = [
            r#"[{"type":"reasoning.text","text":T,"format":"anthropic-claude-v1","index":0}]"#,
            r#"[{"type":"reasoning.text","text":T,"index":1}]"#,
            r#"[{"type":"reasoning.summary","summary":T,"index":0}]"#,
            r#"[{"text":5,"text":T,"index":0}]"#,
            r#"[{"text":T,"text":null,"index":0}]"#,
            r#"[{"text":T,"data":U,"index":0}]"#,
            r#"[{"text":T,"index":0},{"text":U,"index":1}]"#,
            r#"[ { "text" : T , "index" : 0 } ]"#,
            r#"[{"text":T,"index":"0","signature":null}]"#,
            r#"[{"text":T,"index":0,"signature":U}]"#,
            r#"[{"text":T}]"#,
            "[]",
            "1",
            "null",
            r#"[{"te\u0078t":T,"index":0}]"#,
        ];
        const VALUES: [&str; 11] = [
            r#""a""#, r#""""#, r#""\\""#, r#""x\"""#, r#""\u00e9""#, r#""é""#, r#""a\nb""#,
            "5", "null", r#""\"}]""#, r#""s""#,
        ];
        let texts: Vec<String> = chunks
            .iter()
            .map(|&(s, t, u)| SKELETONS[s].replace('T', VALUES[t]).replace('U', VALUES[u]))
            .collect();
        let with_runs = details_fold(&texts, true).result().to_json();
        let whole = details_fold(&texts, false).result().to_json();
        proptest::prop_assert_eq!(with_runs, whole, "{:?}", texts);
    }
}

proptest::proptest! {
    /// Lists of content parts like Mistral's (text and thinking parts, and parts the rule
    /// keeps as sent: other types, a key twice, a text that is not a string, a thinking part
    /// inside a thinking part), spaced any way and perhaps with a stray piece put in: the
    /// one-pass reading, when it answers, is serde_json's reading of the items one by one
    /// (issue 47).
    #[test]
    fn content_parts_read_in_one_pass_as_one_by_one(
        items in proptest::collection::vec((0usize..12, 0usize..3), 0..5),
        stray in proptest::option::of((0usize..300, 0usize..8)),
    ) {
        const ITEMS: [&str; 12] = [
            r#"{"type":"text","text":"a \"q\" \n"}"#,
            r#"{"text":"x\u00e9","type":"text"}"#,
            r#"{"type":"thinking","thinking":[{"type":"text","text":"t"},{"type":"text","text":"u"}]}"#,
            r#"{"type":"thinking","thinking":[{"type":"thinking","thinking":[]},5]}"#,
            r#"{"type":"text","text":5}"#,
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"type":"text","type":"image","text":"a"}"#,
            r#"{"type":"image_url","image_url":{"url":"u"}}"#,
            r#"{"type":"thinking","thinking":"no"}"#,
            r#"{"type":"text","text":"\ud800"}"#,
            "null",
            r#"{}"#,
        ];
        let mut doc = list_text(&items, &ITEMS);
        put_stray(&mut doc, stray);
        let one_by_one = match Json::read(&doc) {
            Some(Json::Array(items)) => {
                Some(items.into_iter().map(|i| Part::read(i.get(), true)).collect::<Vec<_>>())
            }
            _ => None,
        };
        if let Some(fast) = parts_in_one_pass(&doc) {
            proptest::prop_assert_eq!(Some(fast), one_by_one, "{}", doc);
        }
    }
}

/// Mistral's usual parts are read in one pass (the test above would pass with none read so).
#[test]
fn usual_content_parts_are_read_in_one_pass() {
    let doc = r#"[{"type":"thinking","thinking":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"type":"text","text":"c"}]"#;
    assert_eq!(
        parts_in_one_pass(doc),
        Some(vec![
            Part::Thinking(vec![Part::Text("ab".into())]),
            Part::Text("c".into())
        ])
    );
}
