//! Lossy UTF-8 for event fields. The framer splits only at ASCII CR/LF, so a multi-byte
//! character is never cut by a feed boundary once a line is complete: a whole line (or a whole
//! joined data buffer) is decoded at once, and invalid sequences become U+FFFD exactly as the
//! WHATWG decoder does (one U+FFFD per maximal invalid subpart). Nothing is carried across
//! feeds here. Cost: one pass over the bytes; valid input is borrowed, not copied.

use std::borrow::Cow;

/// `bytes` as text, if they are UTF-8. Texts of 128 bytes and more go to a SIMD validator
/// (std's was 6% of a Responses consume profile, and 8% of a Gemini one checking each chunk's
/// usage); shorter ones stay with std's, whose setup costs less.
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.len() < 128 {
        std::str::from_utf8(bytes).ok()
    } else {
        simdutf8::basic::from_utf8(bytes).ok()
    }
}

/// Decodes `bytes` as UTF-8, replacing invalid sequences with U+FFFD. Borrows valid input.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    // Validate first: the lossy iterator is ~3x slower than a validator on valid input (it was
    // 9% of a chat-stream profile), so it only runs once invalid bytes are known.
    match utf8(bytes) {
        Some(s) => Cow::Borrowed(s),
        None => String::from_utf8_lossy(bytes),
    }
}

/// Like [`lossy`], for a `Cow` that may already own its bytes (no second copy then).
pub fn lossy_cow(bytes: Cow<'_, [u8]>) -> Cow<'_, str> {
    match bytes {
        Cow::Borrowed(b) => lossy(b),
        Cow::Owned(v) => match String::from_utf8(v) {
            Ok(s) => Cow::Owned(s),
            Err(e) => Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned()),
        },
    }
}

/// Replaces the JSON escapes of lone UTF-16 surrogates (`\ud800` without its pair) with
/// `\ufffd`. Python's `json` accepts them, but a Rust string cannot hold one, so without this
/// a frame carrying one would not decode at all. Valid pairs are kept. Borrows (no copy) when
/// there is nothing to replace, which one `memmem` scan tells.
pub fn fix_lone_surrogates(json: Cow<'_, str>) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let mut lone = Vec::new();
    let mut skip_to = 0;
    // `memchr` for the backslash: a `memmem` searcher costs more to build than most frames
    // cost to scan (it showed as 2.7% of a Messages-stream profile).
    for pos in memchr::memchr_iter(b'\\', bytes) {
        if pos < skip_to || bytes.get(pos + 1) != Some(&b'u') || !is_escape(bytes, pos) {
            continue;
        }
        match hex4(bytes, pos + 2) {
            Some(0xD800..=0xDBFF) => {
                let low = pos + 6;
                let paired = bytes.get(low..low + 2) == Some(b"\\u")
                    && matches!(hex4(bytes, low + 2), Some(0xDC00..=0xDFFF));
                if paired {
                    skip_to = low + 6;
                } else {
                    lone.push(pos);
                }
            }
            Some(0xDC00..=0xDFFF) => lone.push(pos),
            _ => {}
        }
    }
    if lone.is_empty() {
        return json;
    }
    let mut out = String::with_capacity(json.len());
    let mut last = 0;
    for pos in lone {
        out.push_str(json.get(last..pos).unwrap_or_default());
        out.push_str("\\ufffd");
        last = pos + 6;
    }
    out.push_str(json.get(last..).unwrap_or_default());
    Cow::Owned(out)
}

/// Whether the backslash at `pos` starts an escape (an odd run of backslashes ends there).
fn is_escape(bytes: &[u8], pos: usize) -> bool {
    let run = bytes
        .get(..=pos)
        .unwrap_or_default()
        .iter()
        .rev()
        .take_while(|&&b| b == b'\\')
        .count();
    run % 2 == 1
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_escapes() {
        let fix = |s: &str| fix_lone_surrogates(Cow::Borrowed(s)).into_owned();
        assert_eq!(fix(r#""a\ud800b""#), r#""a\ufffdb""#);
        assert_eq!(fix(r#""\udc00""#), r#""\ufffd""#);
        assert_eq!(fix(r#""\ud83d\ude00""#), r#""\ud83d\ude00""#);
        assert_eq!(fix(r#""\\ud800""#), r#""\\ud800""#); // an escaped backslash, then text
        assert_eq!(fix(r#""\ud800\ud800\udc00""#), r#""\ufffd\ud800\udc00""#);
        assert!(matches!(
            fix_lone_surrogates(Cow::Borrowed("plain")),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn replaces_maximal_subparts() {
        assert_eq!(lossy(b"a\xF0\x9F\x98b"), "a\u{FFFD}b");
        assert_eq!(lossy(b"\xFF\xFE"), "\u{FFFD}\u{FFFD}");
        assert!(matches!(lossy(b"ok"), Cow::Borrowed("ok")));
        assert_eq!(lossy_cow(Cow::Owned(b"x\xC3".to_vec())), "x\u{FFFD}");
    }

    #[test]
    fn long_frames_take_the_simd_validator_with_the_same_result() {
        // Around the 128-byte switch, valid and invalid, the invalid byte at every offset.
        for len in [127, 128, 129, 300] {
            let valid: Vec<u8> = "é✓𝄞a".bytes().cycle().take(len).collect();
            let text = String::from_utf8_lossy(&valid).into_owned();
            assert_eq!(lossy(&valid), text);
            assert_eq!(
                matches!(lossy(&valid), Cow::Borrowed(_)),
                !text.contains('\u{FFFD}')
            );
            for at in 0..len {
                let mut bad = vec![b'a'; len];
                bad[at] = 0xFF;
                assert_eq!(
                    lossy(&bad),
                    String::from_utf8_lossy(&bad),
                    "0xFF at {at} of {len}"
                );
            }
        }
    }
}
