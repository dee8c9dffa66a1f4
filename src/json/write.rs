//! Writing JSON text by hand, fast: strings escaped eight bytes at a time, numbers without a
//! formatter. Below both the folds (`crate::fold::gemini` writes its arguments text) and the
//! translation writers, so that neither imports the other for it. Nothing is carried across
//! calls.

/// Which bytes a JSON string must escape: the control characters, `"` and `\`.
#[allow(clippy::indexing_slicing)] // evaluated at compile time: a bad index fails the build
const ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Whether one of the 8 bytes of `word` needs an escape in a JSON string (a control
/// character, `"` or `\\`). Exact: the classic bit tricks for "some byte is zero" and "some
/// byte is below n" (n <= 128) never miss a byte and never flag a clean word.
fn word_needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGH != 0;
    below_space
        || has_zero(word ^ (ONES * u64::from(b'"')))
        || has_zero(word ^ (ONES * u64::from(b'\\')))
}

/// Appends `s` as a JSON string (one pass; runs that need no escape are copied whole, and
/// are found eight bytes at a time).
pub fn push_str(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    push_escaped(out, s);
    out.push('"');
}

/// `s` as a JSON string.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_str(&mut out, s);
    out
}

/// Appends `s` escaped as the inside of a JSON string (no quotes): a string written in pieces.
#[allow(clippy::indexing_slicing)] // a `u8` indexes 256 entries; a nibble indexes 16
pub fn push_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(chunk) = bytes.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            if !word_needs_escape(u64::from_le_bytes(word)) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        for (j, &b) in bytes.get(i..end).unwrap_or_default().iter().enumerate() {
            if !ESCAPE[usize::from(b)] {
                continue;
            }
            let at = i + j;
            out.push_str(s.get(start..at).unwrap_or_default());
            match b {
                b'"' => out.push_str("\\\""),
                b'\\' => out.push_str("\\\\"),
                b'\n' => out.push_str("\\n"),
                b'\r' => out.push_str("\\r"),
                b'\t' => out.push_str("\\t"),
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.push_str("\\u00");
                    out.push(char::from(HEX[usize::from(b >> 4)]));
                    out.push(char::from(HEX[usize::from(b & 15)]));
                }
            }
            start = at + 1;
        }
        i = end;
    }
    out.push_str(s.get(start..).unwrap_or_default());
}

/// A number the writers print (no allocation, no formatter).
pub trait Num: Copy {
    /// Whether the number is negative, and its magnitude.
    fn digits(self) -> (bool, u64);
}

macro_rules! num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[allow(unused_comparisons, clippy::cast_lossless)]
            fn digits(self) -> (bool, u64) {
                (self < 0, (self as i128).unsigned_abs() as u64)
            }
        }
    )*};
}
num!(u32, u64, usize, i64);

/// Appends a number. Printed by `itoa` (already in the tree through serde_json): the
/// digit loop this replaced ended in a UTF-8 check of its own digits, which with the copy
/// was ~2% of translating Messages to Responses (the `sequence_number` of every event).
pub fn push_num(out: &mut String, n: impl Num) {
    let (negative, n) = n.digits();
    if negative {
        out.push('-');
    }
    if n < 10 {
        out.push(char::from(b'0' + n as u8)); // an index, most often
        return;
    }
    out.push_str(itoa::Buffer::new().format(n));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_as_json() {
        for s in ["plain", "q\"b\\s", "nl\nr\rt\t", "\u{1}\u{1f}", "é ✓ 𝄞", ""] {
            let mut out = String::new();
            push_str(&mut out, s);
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s);
        }
    }

    proptest::proptest! {
        /// The eight-bytes-at-a-time scan escapes exactly what serde_json's writer escapes, at
        /// every position of a word (the strings mix clean runs with every byte that needs one).
        #[test]
        fn strings_escape_like_serde_json(
            s in proptest::string::string_regex("[a-z\"\\\\\u{0}-\u{1f}\u{7f}é✓𝄞 ]{0,40}").unwrap()
        ) {
            let mut out = String::new();
            push_str(&mut out, &s);
            proptest::prop_assert_eq!(serde_json::from_str::<String>(&out).unwrap(), s.clone());
            let escapes = |t: &str| t.bytes().filter(|&b| b < 0x20 || b == b'"' || b == b'\\').count();
            // Nothing else is escaped: one backslash sequence per byte that needs one.
            proptest::prop_assert!(out.len() >= s.len() + 2 + escapes(&s));
            proptest::prop_assert_eq!(escapes(&s) == 0, out.len() == s.len() + 2);
        }
    }

    #[test]
    fn numbers_print_as_display_does() {
        for n in [0i64, 7, -7, 10, 1234567890, i64::MIN, i64::MAX] {
            let mut out = String::new();
            push_num(&mut out, n);
            assert_eq!(out, n.to_string());
        }
        let mut out = String::new();
        push_num(&mut out, u64::MAX);
        push_num(&mut out, 0usize);
        assert_eq!(out, format!("{}0", u64::MAX));
    }
}
