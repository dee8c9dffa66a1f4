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
