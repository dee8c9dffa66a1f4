use super::*;

/// The headers of the AWS SDKs' shared positive vector `all_headers` (every value type), in its
/// order, with its payload.
fn all_headers() -> (Vec<(&'static str, Value<'static>)>, &'static [u8]) {
    static UUID: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
    (
        vec![
            ("event-type", Value::Int(40972)),
            ("content-type", Value::String("application/json")),
            ("bool false", Value::Bool(false)),
            ("bool true", Value::Bool(true)),
            ("byte", Value::Byte(-49)), // 0xcf
            ("byte buf", Value::Bytes(b"I'm a little teapot!")),
            ("timestamp", Value::Timestamp(8675309)),
            ("int16", Value::Short(42)),
            ("int64", Value::Long(42424242)),
            ("uuid", Value::Uuid(&UUID)),
        ],
        b"{'foo':'bar'}",
    )
}

fn decode_all(
    bytes: &[u8],
    cuts: &[usize],
    limit: usize,
) -> (Vec<Message<'static>>, Option<Fault>) {
    // Owned copies: each message borrows the feed it came in.
    let mut d = Decoder::new(limit);
    let mut got = Vec::new();
    let mut fault = None;
    let mut last = 0;
    let mut push = |r: Result<Message<'_>, Fault>| match r {
        Ok(m) => got.push(leak(m)),
        Err(f) => fault = Some(f),
    };
    for &cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        d.feed(&bytes[last..cut], &mut push);
        last = cut;
    }
    if let Some(f) = d.finish() {
        fault = Some(f);
    }
    (got, fault)
}

fn leak(m: Message<'_>) -> Message<'static> {
    let headers = m
        .headers
        .iter()
        .map(|(n, v)| {
            let n: &'static str = Box::leak(n.to_string().into_boxed_str());
            let v = match *v {
                Value::Bytes(b) => Value::Bytes(Box::leak(b.to_vec().into_boxed_slice())),
                Value::String(s) => Value::String(Box::leak(s.to_string().into_boxed_str())),
                Value::Uuid(u) => Value::Uuid(Box::leak(Box::new(*u))),
                Value::Bool(b) => Value::Bool(b),
                Value::Byte(b) => Value::Byte(b),
                Value::Short(b) => Value::Short(b),
                Value::Int(b) => Value::Int(b),
                Value::Long(b) => Value::Long(b),
                Value::Timestamp(b) => Value::Timestamp(b),
            };
            (n, v)
        })
        .collect();
    Message {
        headers,
        payload: Box::leak(m.payload.to_vec().into_boxed_slice()),
    }
}

macro_rules! vector {
    ($kind:literal, $name:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/eventstream/encoded/",
            $kind,
            "/",
            $name
        ))
        .as_slice()
    };
}

/// The AWS SDKs' shared vectors (`tests/data/eventstream`): each positive one is one message
/// that decodes whole and at every cut, and encodes back to the same bytes; each negative one
/// is refused with the kind its decoded file names.
#[test]
fn the_official_vectors() {
    let positive = [
        vector!("positive", "all_headers"),
        vector!("positive", "empty_message"),
        vector!("positive", "int32_header"),
        vector!("positive", "payload_no_headers"),
        vector!("positive", "payload_one_str_header"),
    ];
    for bytes in positive {
        let (whole, fault) = decode_all(bytes, &[], 1 << 20);
        assert_eq!((whole.len(), &fault), (1, &None));
        for cut in 0..bytes.len() {
            assert_eq!(decode_all(bytes, &[cut], 1 << 20), (whole.clone(), None));
        }
        let mut again = Vec::new();
        encode(&whole[0].headers, whole[0].payload, &mut again);
        assert_eq!(again, bytes);
    }
    let (all, _) = decode_all(vector!("positive", "all_headers"), &[], 1 << 20);
    let (headers, payload) = all_headers();
    assert_eq!(all, vec![Message { headers, payload }]);
    for (bytes, kind) in [
        (
            vector!("negative", "corrupted_header_len"),
            "prelude_crc_mismatch",
        ),
        (
            vector!("negative", "corrupted_headers"),
            "message_crc_mismatch",
        ),
        (
            vector!("negative", "corrupted_length"),
            "prelude_crc_mismatch",
        ),
        (
            vector!("negative", "corrupted_payload"),
            "message_crc_mismatch",
        ),
    ] {
        for cut in 0..bytes.len() {
            let (got, fault) = decode_all(bytes, &[cut], 1 << 20);
            assert!(got.is_empty());
            assert_eq!(fault.map(|f| f.kind()), Some(kind), "cut {cut}");
        }
    }
}

#[test]
fn any_split_gives_the_same_messages() {
    let (headers, payload) = all_headers();
    let mut bytes = Vec::new();
    encode(&headers, payload, &mut bytes);
    encode(
        &[(":event-type", Value::String("chunk"))],
        b"{}",
        &mut bytes,
    );
    encode(&[], b"", &mut bytes); // the smallest message: 16 bytes
    let (whole, fault) = decode_all(&bytes, &[], 1 << 20);
    assert_eq!((whole.len(), fault), (3, None));
    for cut in 0..=bytes.len() {
        assert_eq!(
            decode_all(&bytes, &[cut], 1 << 20),
            (whole.clone(), None),
            "cut {cut}"
        );
    }
    let every: Vec<usize> = (1..bytes.len()).collect();
    assert_eq!(decode_all(&bytes, &every, 1 << 20), (whole, None));
}

#[test]
fn a_bad_crc_or_length_stops_the_framing_after_the_good_messages() {
    let mut good = Vec::new();
    encode(&[(":event-type", Value::String("a"))], b"one", &mut good);
    let n = good.len();
    let mut next = Vec::new();
    encode(&[(":event-type", Value::String("b"))], b"two", &mut next);
    let last = next.len() - 1;
    // The byte flipped: the total length, the prelude CRC itself, the message CRC, a header.
    let cases = [
        (3, "prelude_crc_mismatch"),
        (9, "prelude_crc_mismatch"),
        (last, "message_crc_mismatch"),
        (14, "message_crc_mismatch"),
    ];
    for (at, kind) in cases {
        let mut bad = next.clone();
        bad[at] ^= 0x20;
        let bytes = [good.clone(), bad, good.clone()].concat();
        for cut in [0, n + 5, n + 13, bytes.len() - 2] {
            let (got, fault) = decode_all(&bytes, &[cut], 1 << 20);
            assert_eq!(
                got.len(),
                1,
                "{kind} at {cut}: the good message before it is kept"
            );
            assert_eq!(fault.map(|f| f.kind()), Some(kind), "cut {cut}");
        }
    }
}

/// A message whose prelude (with a valid CRC) declares `total` and `headers`.
fn prelude(total: u32, headers: u32) -> Vec<u8> {
    let mut b = [total.to_be_bytes(), headers.to_be_bytes()].concat();
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn impossible_lengths_are_refused_before_anything_is_buffered() {
    for (total, headers, kind) in [
        (15, 0, "invalid_length"),
        (0, 0, "invalid_length"),
        (20, 5, "invalid_length"),
        (u32::MAX, 0, "event_too_large"),
        (1 << 21, 200_000, "headers_too_long"),
    ] {
        let mut d = Decoder::new(1 << 20);
        let mut fault = None;
        d.feed(&prelude(total, headers), |r| fault = r.err());
        assert_eq!(fault.map(|f| f.kind()), Some(kind), "{total} {headers}");
        assert_eq!(d.pending(), 0);
        assert!(d.failed());
        d.feed(&[0; 100], |_| panic!("nothing is read after a fault"));
    }
    // Under the limit, a message is held only up to its own length.
    let mut d = Decoder::new(1 << 20);
    d.feed(&prelude(1000, 0), |_| panic!("not whole yet"));
    d.feed(&[0; 500], |_| panic!("not whole yet"));
    assert_eq!(d.pending(), 512);
    assert_eq!(d.finish().map(|f| f.kind()), Some("incomplete_stream"));
}

#[test]
fn bad_headers_are_a_fault() {
    for (headers, why) in [
        (&[3, b'a', b'b'][..], "cut name"),
        (&[1, b'a', 10][..], "type 10"),
        (&[1, b'a', 7, 0, 2, 0xff, 0xfe][..], "string not UTF-8"),
        (&[1, 0xff, 0][..], "name not UTF-8"),
        (&[1, b'a', 4, 0, 0][..], "int cut short"),
        (&[1, b'a', 9, 1, 2][..], "uuid cut short"),
        // The same name twice (botocore refuses it: which value counts is not said).
        (&[1, b'a', 0, 1, b'a', 1][..], "a name twice"),
        (
            &[1, b'a', 0, 1, b'b', 0, 1, b'a', 2, 5][..],
            "a name twice, apart",
        ),
    ] {
        let total = (OVERHEAD + headers.len()) as u32;
        let mut m = prelude(total, headers.len() as u32);
        m.extend_from_slice(headers);
        let crc = crc32fast::hash(&m);
        m.extend_from_slice(&crc.to_be_bytes());
        let (got, fault) = decode_all(&m, &[], 1 << 20);
        assert!(got.is_empty(), "{why}");
        assert_eq!(fault.map(|f| f.kind()), Some("invalid_header"), "{why}");
    }
}

/// Many headers, one name given twice far apart: a fault, found without a scan per name.
#[test]
fn a_name_twice_among_many_headers_is_a_fault() {
    let mut headers = Vec::new();
    for i in 0..20_000u32 {
        let name = format!("h{i}");
        headers.push(name.len() as u8);
        headers.extend_from_slice(name.as_bytes());
        headers.push(0);
    }
    let names = |h: &[u8]| read_headers(h).map(|v| v.len());
    assert_eq!(names(&headers).ok(), Some(20_000));
    headers.extend_from_slice(&[2, b'h', b'7', 1]);
    let fault = read_headers(&headers).unwrap_err();
    assert_eq!(fault.kind(), "invalid_header");
    assert!(
        fault.to_string().contains("\"h7\" appears twice"),
        "{fault}"
    );
}
