//! Tests of `translate`.

use super::*;

#[test]
fn int_map_as_a_set_and_with_replacement() {
    let mut set = crate::fold::IntMap::<()>::default();
    assert!(set.add(3) && !set.add(3) && set.contains(3) && !set.contains(4));
    for k in 0..100 {
        set.add(k);
    }
    assert!(set.contains(99) && !set.add(50));
    let mut m = crate::fold::IntMap::default();
    m.insert(1, "a");
    m.insert(1, "b");
    assert_eq!(m.get(1), Some(&"b"));
    m.clear();
    assert!(m.is_empty() && !m.contains(1));
}

#[test]
fn stop_reasons_map_both_ways() {
    assert_eq!(Stop::from_chat("length").to_messages(), "max_tokens");
    assert_eq!(
        Stop::from_messages("tool_use", None).to_chat(),
        "tool_calls"
    );
    assert_eq!(
        Stop::from_messages("refusal", None).to_chat(),
        "content_filter"
    );
    assert_eq!(Stop::from_chat("weird").to_messages(), "weird");
}

#[test]
fn usage_counts_cached_tokens_once_either_way() {
    let u = Usage {
        input: Some(10),
        cache_read: Some(7),
        cache_write: Some(5),
        ..Usage::default()
    };
    assert_eq!((u.total_input(), u.uncached_input()), (10, 0));
    let mut a = Usage {
        uncached: Some(12),
        cache_write: Some(2048),
        ..Usage::default()
    };
    a.merge(&Usage {
        cache_read: Some(1800),
        output: Some(37),
        ..Usage::default()
    });
    assert_eq!((a.total_input(), a.uncached_input()), (3860, 12));
}

/// Every capture of `tests/data`, translated into every target whole and in 7-byte reads: the
/// output follows the target's protocol (`write::check`, asserted on every output in debug
/// builds, as these tests run) and does not depend on the reads.
#[test]
fn every_capture_keeps_every_targets_protocol() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let targets = [
        Dialect::Chat,
        Dialect::Messages,
        Dialect::Responses,
        Dialect::Gemini,
        Dialect::Converse,
    ];
    let mut checked = 0;
    for dialect in ["chat", "messages", "responses", "gemini"] {
        let Ok(dir) = std::fs::read_dir(data.join(dialect)) else {
            continue; // a tree without the captures (an sdist)
        };
        let mut paths: Vec<_> = dir.filter_map(Result::ok).map(|e| e.path()).collect();
        paths.retain(|p| p.extension().is_some_and(|e| e == "sse"));
        paths.sort();
        for path in paths {
            let body = std::fs::read(&path).unwrap_or_default();
            for target in targets {
                let source = crate::dialect::Dialect::parse(dialect);
                let mut whole = Standalone::new(source, target, 1 << 20);
                let mut a = whole.feed(&body).0;
                a.extend(whole.finish());
                let mut split = Standalone::new(source, target, 1 << 20);
                let mut b = Vec::new();
                for piece in body.chunks(7) {
                    b.extend(split.feed(piece).0);
                }
                b.extend(split.finish());
                assert_eq!(a, b, "{} into {target:?}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked == 0 || checked >= 400, "{checked}");
}
