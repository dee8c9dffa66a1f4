use super::*;
use serde::de::IgnoredAny;

/// The whole of `doc` read as one value by the cursor.
fn whole(doc: &str) -> Option<&str> {
    let mut c = Cursor::new(doc);
    let v = c.value()?;
    c.at_end().then_some(v)
}

#[test]
fn values_are_read_and_checked() {
    for doc in [
        r#"{"a":[1,-2.5e+3,0,true,false,null,"x\n\u00e9\ud83d\ude00"],"b":{}}"#,
        " [ ] ",
        "-0",
        "1E9",
        r#""\/\b\f\r\t\"\\""#,
        "[[[[{}]]]]",
    ] {
        assert_eq!(whole(doc), Some(doc.trim()), "{doc}");
        assert!(serde_json::from_str::<IgnoredAny>(doc).is_ok(), "{doc}");
    }
    for doc in [
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "[1,]",
        "[,1]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "{1:2}",
        "[1 2]",
        "tru",
        "nul",
        "\"\\x\"",
        "\"\u{1}\"",
        "\"\\ud800\"",
        "{\"a\":1",
        "[",
        "\"abc",
        "NaN",
        "Infinity",
    ] {
        assert_eq!(whole(doc), None, "{doc}");
    }
    // Past the depth it leaves the document to serde_json.
    let deep = format!("{}{}", "[".repeat(DEPTH + 1), "]".repeat(DEPTH + 1));
    assert_eq!(whole(&deep), None);
    let ok = format!("{}{}", "[".repeat(DEPTH), "]".repeat(DEPTH));
    assert!(whole(&ok).is_some());
}

#[test]
fn keys_strings_and_integers() {
    let doc = r#" { "k" : "v\"w" , "n": -12, "big": 9223372036854775808, "f": 1.0, "e\u0041": 1 }"#;
    let mut c = Cursor::new(doc);
    c.open_object().unwrap();
    let mut first = true;
    assert_eq!(c.next_key(&mut first), Some(Some("k")));
    let (value, literal) = c.string().unwrap();
    assert_eq!((&*value, literal), ("v\"w", r#"v\"w"#));
    assert!(matches!(value, Cow::Owned(_)));
    assert_eq!(c.next_key(&mut first), Some(Some("n")));
    assert_eq!(c.integer(), Some(-12));
    assert_eq!(c.next_key(&mut first), Some(Some("big")));
    assert_eq!(c.clone_at().integer(), None); // out of range: serde_json's to say
    c.value().unwrap();
    assert_eq!(c.next_key(&mut first), Some(Some("f")));
    assert_eq!(c.clone_at().integer(), None); // a fraction: serde_json's to read
    c.value().unwrap();
    // A key with an escape is left to serde_json.
    assert_eq!(c.next_key(&mut first), None);
}

impl<'a> Cursor<'a> {
    fn clone_at(&self) -> Cursor<'a> {
        Cursor {
            bytes: self.bytes,
            text: self.text,
            at: self.at,
        }
    }
}

proptest::proptest! {
    /// Whatever the cursor accepts as a value, serde_json accepts, and its text is the
    /// document's (trimmed): random documents of JSON's own bytes.
    #[test]
    fn accepts_only_what_serde_json_accepts(
        doc in proptest::string::string_regex(r#"[\[\]{}:," 0-9.eE+\-tfrulnasx\\/u]{0,24}"#).unwrap()
    ) {
        if let Some(v) = whole(&doc) {
            proptest::prop_assert!(serde_json::from_str::<IgnoredAny>(&doc).is_ok(), "{doc}");
            proptest::prop_assert_eq!(v, doc.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')));
        }
    }

    /// Every document serde_json writes (shallow, keys without escapes) is read whole.
    #[test]
    fn reads_what_serde_json_writes(
        value in proptest::collection::vec(
            (proptest::string::string_regex("[a-z]{0,4}").unwrap(),
             proptest::string::string_regex("[a\n\"\\\\é\u{1}]{0,5}").unwrap(),
             proptest::num::i64::ANY, proptest::num::f64::NORMAL), 0..5)
    ) {
        let doc = serde_json::to_string(&value).unwrap();
        proptest::prop_assert_eq!(whole(&doc), Some(doc.as_str()));
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        proptest::prop_assert_eq!(whole(&pretty), Some(pretty.as_str()));
    }
}

#[test]
fn raw_values_end_where_serde_json_ends_them() {
    let doc = r#"{"a": 12 , "b":[1,{"c":"}"}] ,"c":"x\"y","d":true}"#;
    let mut c = Cursor::new(doc);
    c.open_object().unwrap();
    let mut first = true;
    let mut seen = Vec::new();
    while let Some(key) = c.next_key(&mut first).unwrap() {
        seen.push((key, c.raw_value().unwrap().get()));
    }
    assert!(c.at_end());
    assert_eq!(
        seen,
        [
            ("a", "12"),
            ("b", r#"[1,{"c":"}"}]"#),
            ("c", r#""x\"y""#),
            ("d", "true")
        ]
    );
    for bad in [r#"{"a":[1,]}"#, r#"{"a":01}"#, r#"{"a":"\x"}"#] {
        let mut c = Cursor::new(bad);
        c.open_object().unwrap();
        let mut first = true;
        c.next_key(&mut first).unwrap();
        assert!(c.raw_value().is_none(), "{bad}");
    }
}

use crate::json::tree::entries_by_serde as serde_entries;

/// An object's entries and a string's value, read in one pass (issue 47: the folds read the
/// objects they keep as sent this way when a result is built), are serde_json's reading.
#[test]
fn entries_and_strings_are_serdes() {
    for doc in [
        r#"{"id":"msg_1","type":"message","content":[],"usage":{"input_tokens":5,"cache_creation":{"a":1}},"stop_sequence":null}"#,
        r#" { "a" : 1 , "a" : [ 2 , "x" ] , "b" : "\u00e9\n" } "#,
        "{}",
    ] {
        let fast = entries(doc);
        assert!(fast.is_some(), "{doc}");
        assert_eq!(fast, serde_entries(doc), "{doc}");
    }
    // Not objects, not JSON, or a key with an escape (serde_json's to read).
    for doc in [
        "[]",
        "1",
        "{\"a\":1} x",
        "{\"a\":01}",
        "{\"\\u0061\":1}",
        "{\"a\":\"\\ud800\"}",
    ] {
        assert_eq!(entries(doc), None, "{doc}");
    }
    assert_eq!(
        crate::json::tree::object_entries("{\"\\u0061\":1}"),
        Some(vec![(Cow::Borrowed("a"), "1")])
    );
    for (doc, value) in [
        (r#" "a\"b\u00e9" "#, Some("a\"b\u{e9}")),
        ("\"\"", Some("")),
    ] {
        assert_eq!(string(doc).as_deref(), value, "{doc}");
    }
    for doc in ["1", "\"a\" 1", "\"\\ud800\"", "\"a", "null"] {
        assert_eq!(string(doc), None, "{doc}");
    }
}

/// The text of an object of `members` (a key of `keys`, a value of `values`, a spacing): the
/// proptests' objects, spelled as providers and recorders write them.
pub(crate) fn object_text(
    members: &[(usize, usize, usize)],
    keys: &[&str],
    values: &[&str],
) -> String {
    const SPACES: [&str; 3] = ["", " ", "\n\t"];
    let mut doc = String::from("{");
    for (i, &(k, v, w)) in members.iter().enumerate() {
        if i > 0 {
            doc.push(',');
        }
        let space = SPACES[w % SPACES.len()];
        for piece in [
            space,
            keys[k % keys.len()],
            space,
            ":",
            space,
            values[v % values.len()],
        ] {
            doc.push_str(piece);
        }
    }
    doc.push('}');
    doc
}

/// The data of each event of a dialect's captures (`tests/data/<dialect>/*.sse`) and its
/// shipped sample that is a JSON object: the one-pass readers' tests hold them to serde_json.
pub(crate) fn captured_docs(dialect: &str) -> Vec<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(format!("{root}tests/data/{dialect}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sse"))
            .collect();
    files.push(format!("{root}python/ssewire/_samples/{dialect}.sse").into());
    let mut docs = Vec::new();
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        docs.extend(
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.trim_start().to_owned())
                .filter(|d| d.starts_with('{')),
        );
    }
    docs
}

/// The texts the one-pass readers' proptests put into captured documents: JSON's own
/// punctuation, white space, escapes, literals, a key with an escape, then `own` (a dialect's
/// keys with values of another type).
pub(crate) fn edit_pieces(own: &[&'static str]) -> Vec<&'static str> {
    let common = [
        "",
        "\"",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\\",
        "\\u",
        "0",
        "-",
        ".5",
        "e9",
        "null",
        "true",
        "\n",
        "\"a\\n\": 1, ",
    ];
    common.iter().chain(own).copied().collect()
}

/// `doc` with `edits` made in turn, each (a place, a kind, a text): the byte there cut out
/// (kind 0), the text put in (1), or the byte doubled (2 and up); `None` when the result is
/// not UTF-8. The one-pass readers' proptests' documents near a captured one.
pub(crate) fn edited(doc: &str, edits: &[(usize, usize, &str)]) -> Option<String> {
    let mut doc = doc.as_bytes().to_vec();
    for &(at, kind, text) in edits {
        let at = at % (doc.len() + 1);
        match kind {
            0 => {
                doc.splice(at..(at + 1).min(doc.len()), std::iter::empty());
            }
            1 => {
                doc.splice(at..at, text.bytes());
            }
            _ => {
                let b = doc.get(at).copied();
                doc.splice(at..at, b);
            }
        }
    }
    String::from_utf8(doc).ok()
}

/// Puts a stray piece of JSON syntax into `doc` at `stray` (a place, a piece), when there is
/// one: the proptests' documents one edit away from valid.
/// A JSON array of `values` picked by index (`(value, spacing)`), each spaced as picked.
pub(crate) fn list_text(items: &[(usize, usize)], values: &[&str]) -> String {
    const SPACES: [&str; 3] = ["", " ", "\n\t"];
    let written: Vec<String> = items
        .iter()
        .map(|&(v, w)| {
            format!(
                "{0}{1}{0}",
                SPACES[w % SPACES.len()],
                values[v % values.len()]
            )
        })
        .collect();
    format!("[{}]", written.join(","))
}

pub(crate) fn put_stray(doc: &mut String, stray: Option<(usize, usize)>) {
    const STRAY: [&str; 8] = [",", "]", "}", "\"", ":", "x", "\\", "[{"];
    if let Some((at, piece)) = stray {
        let at = at % (doc.len() + 1);
        if doc.is_char_boundary(at) {
            doc.insert_str(at, STRAY[piece % STRAY.len()]);
        }
    }
}

proptest::proptest! {
    /// Objects made of keys and values like the providers', spaced any way and perhaps with a
    /// stray piece put in: the one-pass reading, when it answers, is serde_json's, and
    /// `object_entries` (one pass, else serde_json) always is.
    #[test]
    fn one_pass_entries_are_serdes(
        members in proptest::collection::vec((0usize..6, 0usize..12, 0usize..3), 0..6),
        stray in proptest::option::of((0usize..300, 0usize..8)),
    ) {
        const KEYS: [&str; 6] =
            ["\"id\"", "\"usage\"", "\"a b\"", "\"\\u0061\"", "\"\"", "\"id\""];
        const VALUES: [&str; 12] = [
            "\"a \\\"q\\\" \\n\"", "0", "-1.5e3", "null", "true", "\"\\ud800\"",
            "\"x\\u00e9\"", "01", "[1,{\"a\":[]}]", "{\"input_tokens\":3}", "{}", "\"\"",
        ];
        let mut doc = object_text(&members, &KEYS, &VALUES);
        put_stray(&mut doc, stray);
        let serde = serde_entries(&doc);
        if let Some(fast) = entries(&doc) {
            proptest::prop_assert_eq!(Some(fast), serde.clone(), "{}", doc);
        }
        proptest::prop_assert_eq!(crate::json::tree::object_entries(&doc), serde, "{}", doc);
    }
}
