//! Tests of `fold`.

use super::*;

/// Known keys are held without a copy, others owned: a map of both behaves as one.
#[test]
fn known_and_other_keys_are_one_map() {
    for key in KNOWN_KEYS {
        let (text, place) = known_key(key).unwrap();
        assert_eq!(
            (text, KNOWN_KEYS.get(usize::from(place))),
            (*key, Some(key))
        );
    }
    for key in [
        "",
        "i",
        "idx",
        "Type",
        "input_tokens_",
        "x".repeat(300).as_str(),
    ] {
        assert_eq!(known_key(key), None, "{key}");
    }
    assert!(matches!(Key::new("usage"), Key::Known("usage", _)));
    assert!(matches!(Key::new("vendor_key"), Key::Owned(_)));
    let mut m = Map::new();
    m.set("vendor_key", Out::Int(1));
    m.set("id", Out::Int(2));
    m.set(&"k".repeat(100), Out::Int(3));
    m.set("vendor_key", Out::Int(4));
    assert_eq!(m.get("id"), Some(&Out::Int(2)));
    assert_eq!(m.remove("vendor_key"), Some(Out::Int(4)));
    let keys: Vec<&str> = m.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["id", "k".repeat(100).as_str()]);
    // Known keys and others set again and read, below and above the index.
    for n in [3, INDEX_FROM + 5] {
        let mut m = Map::new();
        for i in 0..n {
            m.set(&format!("vendor_{i}"), Out::Int(0));
        }
        for (i, key) in ["usage", "id", "usage", "vendor_1", "type", "id"]
            .iter()
            .enumerate()
        {
            m.set(key, Out::Int(i as i64));
        }
        assert_eq!(m.len(), n + 3);
        assert_eq!(m.get("usage"), Some(&Out::Int(2)));
        assert_eq!(m.get("id"), Some(&Out::Int(5)));
        assert_eq!(m.get("vendor_1"), Some(&Out::Int(3)));
        assert_eq!(m.get("vendor_2"), Some(&Out::Int(0)));
        assert_eq!(m.get("Usage"), None);
        // Each key with its place among the known keys, when it is one.
        for (place, key, _) in m.iter_known() {
            assert_eq!(
                place.and_then(|i| KNOWN_KEYS.get(i)).copied(),
                known_key(key).map(|k| k.0)
            );
            assert_eq!(
                place.is_some(),
                key == "usage" || key == "id" || key == "type"
            );
        }
    }
}

#[test]
fn map_keeps_order_and_replaces_in_place() {
    let mut m = Map::new();
    m.set("b", Out::Int(1));
    m.set("a", Out::Str("x\"".into()));
    m.set("b", Out::json("[1, 2]"));
    assert_eq!(Out::Map(m.clone()).to_json(), r#"{"b":[1, 2],"a":"x\""}"#);
    assert_eq!(m.remove("b"), Some(Out::json("[1, 2]")));
    assert_eq!(Out::Map(m).to_json(), r#"{"a":"x\""}"#);
}

#[test]
fn map_with_many_keys_uses_its_index() {
    let mut m = Map::new();
    for i in 0..1000 {
        m.set(&format!("k{i}"), Out::Int(i));
    }
    m.set("k500", Out::Null);
    assert_eq!(m.len(), 1000);
    assert_eq!(m.get("k500"), Some(&Out::Null));
    assert_eq!(m.get("k999"), Some(&Out::Int(999)));
    m.remove("k0");
    assert_eq!(m.get("k1"), Some(&Out::Int(1)));
    *m.entry("new", || Out::List(vec![])) = Out::Bool(true);
    assert_eq!(m.get("new"), Some(&Out::Bool(true)));
}

#[test]
fn nulls() {
    assert!(Out::Null.is_null() && Out::json(" null ").is_null());
    assert!(!Out::json("0").is_null());
}

#[test]
fn members_except_keeps_what_is_not_shown_in_order() {
    let text = r#"{"type":"x","a\"b":[1, 2],"index":0,"z":{"q":null},"a\"b":3}"#;
    let rest = members_except(text, |k, _| k == "type" || k == "index");
    assert_eq!(
        rest.as_deref(),
        Some(r#"{"a\"b":[1, 2],"z":{"q":null},"a\"b":3}"#)
    );
    assert_eq!(members_except(r#"{"type":1}"#, |k, _| k == "type"), None);
    assert_eq!(members_except("[1]", |_, _| false), None);
    assert_eq!(members_except("{", |_, _| false), None);
    let by_value = members_except(r#"{"a":1,"b":2}"#, |_, v| v.get() == "1");
    assert_eq!(by_value.as_deref(), Some(r#"{"b":2}"#));
}
