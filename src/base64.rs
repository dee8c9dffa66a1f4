//! Base64 (RFC 4648), both alphabets: the standard one with padding (what JSON APIs carry
//! bytes as) and the URL-safe one without (what goes where only `[A-Za-z0-9_-]` may: the
//! reasoning carried in a tool call's id, `crate::translate::carry`).

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn encode_with(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    let symbol = |v: u32| char::from(alphabet.get((v & 63) as usize).copied().unwrap_or(b'A'));
    for chunk in data.chunks(3) {
        let b = |i: usize| u32::from(chunk.get(i).copied().unwrap_or(0));
        let n = (b(0) << 16) | (b(1) << 8) | b(2);
        out.push(symbol(n >> 18));
        out.push(symbol(n >> 12));
        if chunk.len() > 1 {
            out.push(symbol(n >> 6));
        } else if pad {
            out.push('=');
        }
        if chunk.len() > 2 {
            out.push(symbol(n));
        } else if pad {
            out.push('=');
        }
    }
    out
}

/// `data` in the standard alphabet, padded.
pub fn encode(data: &[u8]) -> String {
    encode_with(data, STANDARD, true)
}

/// `data` in the URL-safe alphabet, unpadded.
pub fn encode_url(data: &[u8]) -> String {
    encode_with(data, URL_SAFE, false)
}

/// The bytes of `text`, in either alphabet, padded or not; `None` for anything else (a
/// character of neither alphabet, a length no encoding has, padding inside the text).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let body = text
        .strip_suffix("==")
        .or_else(|| text.strip_suffix('='))
        .unwrap_or(text);
    if body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for b in body.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc4648_vectors_both_ways() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(encode(plain.as_bytes()), coded);
            assert_eq!(decode(coded).unwrap(), plain.as_bytes());
            let url = encode_url(plain.as_bytes());
            assert_eq!(url, coded.trim_end_matches('='));
            assert_eq!(decode(&url).unwrap(), plain.as_bytes());
        }
    }

    #[test]
    fn url_safe_alphabet_and_refusals() {
        let bytes = [0xfb, 0xff, 0xbf];
        assert_eq!(encode(&bytes), "+/+/");
        assert_eq!(encode_url(&bytes), "-_-_");
        assert_eq!(decode("-_-_").unwrap(), bytes);
        for bad in ["a", "ab!c", "Zg=a", "Z===", "é"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_length_round_trips() {
        let data: Vec<u8> = (0..=255u8).collect();
        for n in 0..data.len() {
            assert_eq!(decode(&encode_url(&data[..n])).unwrap(), &data[..n]);
            assert_eq!(decode(&encode(&data[..n])).unwrap(), &data[..n]);
        }
    }
}
