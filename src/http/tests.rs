//! Tests of `http`.

use super::*;

/// Feeds `pieces` in order; returns the body, or the first error.
fn read(reader: &mut ResponseReader, pieces: &[&[u8]]) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    for piece in pieces {
        reader.feed(piece, &mut body)?;
    }
    Ok(body)
}

/// The body of `wire` and the reader's state at the end (after `finish`), fed whole.
fn whole(wire: &[u8]) -> (ResponseReader, Result<Vec<u8>, HttpError>) {
    let mut reader = ResponseReader::default();
    let body = read(&mut reader, &[wire]).and_then(|b| reader.finish().map(|()| b));
    (reader, body)
}

/// Feeding `wire` whole, byte by byte and split at every point gives the same outcome.
fn same_however_split(wire: &[u8]) -> Result<Vec<u8>, HttpError> {
    let (reference, expected) = whole(wire);
    let mut bytes = ResponseReader::default();
    let pieces: Vec<&[u8]> = wire.chunks(1).collect();
    let got = read(&mut bytes, &pieces).and_then(|b| bytes.finish().map(|()| b));
    assert_eq!(got, expected, "byte by byte");
    assert_eq!(bytes.head(), reference.head());
    assert_eq!(bytes.trailers(), reference.trailers());
    for cut in 0..=wire.len() {
        let (a, b) = wire.split_at(cut);
        let mut split = ResponseReader::default();
        let got = read(&mut split, &[a, b]).and_then(|body| split.finish().map(|()| body));
        assert_eq!(got, expected, "split at {cut}");
        assert_eq!(split.head(), reference.head(), "split at {cut}");
    }
    expected
}

const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
    Transfer-Encoding: chunked\r\n\r\n\
    7\r\ndata: a\r\n4;name=value;x=\"q\"\r\n\n\nda\r\n07 \t\r\nta: b\n\n\r\n\
    0\r\nX-Usage: 5\r\nX-Other: y\r\n\r\n";

#[test]
fn chunked_with_extensions_and_trailers() {
    let body = same_however_split(CHUNKED).unwrap();
    assert_eq!(body, b"data: a\n\ndata: b\n\n");
    let (reader, _) = whole(CHUNKED);
    let head = reader.head().unwrap();
    assert_eq!(
        (head.version, head.status, head.reason.as_str()),
        (1, 200, "OK")
    );
    assert_eq!(head.framing, Framing::Chunked);
    assert_eq!(
        head.headers[0],
        ("Content-Type".into(), b"text/event-stream".to_vec())
    );
    assert_eq!(
        reader.trailers(),
        &[
            ("X-Usage".to_owned(), b"5".to_vec()),
            ("X-Other".to_owned(), b"y".to_vec())
        ]
    );
    assert!(reader.body_complete());
}

#[test]
fn the_body_ends_at_its_end_and_later_bytes_are_ignored() {
    let mut reader = ResponseReader::default();
    let mut wire = CHUNKED.to_vec();
    wire.extend_from_slice(b"HTTP/1.1 500 X\r\n\r\ngarbage");
    let body = read(&mut reader, &[&wire]).unwrap();
    assert!(reader.body_complete());
    assert_eq!(body, b"data: a\n\ndata: b\n\n");
    assert_eq!(reader.head().unwrap().status, 200);
    // Content-Length: complete before the connection closes.
    let mut reader = ResponseReader::default();
    let body = read(
        &mut reader,
        &[b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcdef"],
    );
    assert_eq!(body.unwrap(), b"abc");
    assert!(reader.body_complete());
}

#[test]
fn content_length_and_close_delimited() {
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\nhello";
    assert_eq!(same_however_split(wire).unwrap(), b"hello");
    let wire = b"HTTP/1.0 200 OK\r\n\r\nhello\r\n\r\nworld";
    assert_eq!(same_however_split(wire).unwrap(), b"hello\r\n\r\nworld");
    let (reader, _) = whole(wire);
    assert_eq!(reader.head().unwrap().framing, Framing::Close);
    assert_eq!(reader.head().unwrap().version, 0);
    // Transfer-Encoding wins over Content-Length.
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n";
    assert_eq!(same_however_split(wire).unwrap(), b"x");
    // No body at all.
    for wire in [
        &b"HTTP/1.1 204 No Content\r\n\r\n"[..],
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    ] {
        let mut reader = ResponseReader::default();
        assert_eq!(read(&mut reader, &[wire]).unwrap(), b"");
        assert!(reader.body_complete());
    }
}

#[test]
fn interim_responses_are_skipped() {
    let wire = b"\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
        HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    assert_eq!(same_however_split(wire).unwrap(), b"ok");
    let (reader, _) = whole(wire);
    assert_eq!(reader.interim(), &[100, 103]);
    assert_eq!(reader.head().unwrap().status, 201);
    assert_eq!(reader.head().unwrap().reason, "Created");
}

#[test]
fn lf_only_line_ends_are_read() {
    let wire = b"HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n";
    assert_eq!(same_however_split(wire).unwrap(), b"abc");
}

fn error_of(wire: &[u8]) -> HttpError {
    let err = same_however_split(wire).unwrap_err();
    let (reader, _) = whole(wire);
    assert_eq!(reader.error(), Some(&err));
    err
}

#[test]
fn bad_chunk_sizes_are_errors() {
    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for bad in [
        &b"x\r\n"[..],
        b"\r\n",
        b"-1\r\n",
        b"+1\r\n",
        b"0x1\r\n",
        b"1 2\r\n",
        b"1\rx",
        b"1;a\x00\r\n",
        b"10000000000000000\r\n",
        b"3\r\nabcd\r\n",
        b"3\r\nabc\rx",
    ] {
        let mut wire = head.clone();
        wire.extend_from_slice(bad);
        wire.extend_from_slice(b"0\r\n\r\n");
        let err = error_of(&wire);
        assert_eq!(err.kind, ErrorKind::Malformed, "{bad:?}: {err}");
    }
    // The largest size reads (and then the body is cut short).
    let mut wire = head.clone();
    wire.extend_from_slice(b"ffffffffffffffff\r\nab");
    let err = error_of(&wire);
    assert_eq!(err.kind, ErrorKind::Incomplete, "{err}");
}

#[test]
fn malformed_heads_and_framing_are_errors() {
    for (wire, kind) in [
        (&b"HTTP/2 200 OK\r\n\r\n"[..], ErrorKind::Malformed),
        (b"data: x\n\n", ErrorKind::Malformed),
        (b"HTTP/1.1 20 OK\r\n\r\n", ErrorKind::Malformed),
        (
            b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
            ErrorKind::Malformed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            ErrorKind::Malformed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            ErrorKind::Malformed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
            ErrorKind::Malformed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            ErrorKind::Malformed,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            ErrorKind::Unsupported,
        ),
        (
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
            ErrorKind::Unsupported,
        ),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n",
            ErrorKind::Malformed,
        ),
    ] {
        let err = error_of(wire);
        assert_eq!(err.kind, kind, "{:?}: {err}", String::from_utf8_lossy(wire));
    }
}

#[test]
fn a_cut_response_is_incomplete() {
    for wire in [
        &b""[..],
        b"\r\n",
        b"HTTP/1.1 200 OK\r\nContent-",
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n",
    ] {
        let err = error_of(wire);
        assert_eq!(err.kind, ErrorKind::Incomplete, "{err}");
    }
}

#[test]
fn failures_are_final() {
    let mut reader = ResponseReader::default();
    let mut body = Vec::new();
    let err = reader.feed(b"nonsense\r\n\r\n", &mut body).unwrap_err();
    assert_eq!(
        reader.feed(b"HTTP/1.1 200 OK\r\n\r\n", &mut body),
        Err(err.clone())
    );
    assert_eq!(reader.finish(), Err(err));
    assert!(body.is_empty());
}

#[test]
fn oversize_heads_and_lines_are_errors_not_memory() {
    let mut reader = ResponseReader::with_max_head(1024);
    let mut body = Vec::new();
    reader.feed(b"HTTP/1.1 200 OK\r\n", &mut body).unwrap();
    let field = b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n";
    let mut err = None;
    for _ in 0..1000 {
        if let Err(e) = reader.feed(field, &mut body) {
            err = Some(e);
            break;
        }
        assert!(reader.buf.len() <= 1024);
    }
    assert_eq!(err.unwrap().kind, ErrorKind::TooLarge);
    assert!(reader.buf.capacity() == 0);
    // Endless blank lines before the head: bounded too, and nothing is kept.
    let mut reader = ResponseReader::with_max_head(1024);
    let err = reader.feed(&[b'\n'; 2000], &mut body).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TooLarge);
    // One endless chunk-size line (leading zeros, or extensions): an error, no buffer.
    for filler in [b'0', b'x'] {
        let mut reader = ResponseReader::default();
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;";
        reader.feed(head, &mut body).unwrap();
        let err = reader
            .feed(&[filler; MAX_CHUNK_LINE + 1], &mut body)
            .unwrap_err();
        assert_eq!(err.kind, ErrorKind::TooLarge);
    }
    // Too many fields.
    let mut wire = b"HTTP/1.1 200 OK\r\n".to_vec();
    for _ in 0..=MAX_FIELDS {
        wire.extend_from_slice(b"A: b\r\n");
    }
    wire.extend_from_slice(b"\r\n");
    assert_eq!(whole(&wire).1.unwrap_err().kind, ErrorKind::TooLarge);
    // Trailers are bounded like heads.
    let mut reader = ResponseReader::with_max_head(100);
    reader
        .feed(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n",
            &mut body,
        )
        .unwrap();
    let err = reader.feed(&[b'a'; 200], &mut body).unwrap_err();
    assert_eq!(err.kind, ErrorKind::TooLarge);
    assert!(body.is_empty());
}

#[test]
fn arbitrary_bytes_never_panic_and_output_stays_within_the_input() {
    // A small deterministic generator over an alphabet that reaches every state.
    let alphabet: &[&[u8]] = &[
        b"HTTP/1.1 200 OK\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"Transfer-Encoding: chunked\r\n",
        b"Content-Length: 3\r\n",
        b"\r\n",
        b"\n",
        b"\r",
        b"0",
        b"f",
        b";",
        b" ",
        b"abc",
        b"\x00",
        b"\xff",
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let mut wire = Vec::new();
        for _ in 0..12 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            wire.extend_from_slice(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let (_, expected) = whole(&wire);
        if let Ok(body) = &expected {
            assert!(body.len() <= wire.len());
        }
        let mut bytes = ResponseReader::default();
        let pieces: Vec<&[u8]> = wire.chunks(1).collect();
        let got = read(&mut bytes, &pieces).and_then(|b| bytes.finish().map(|()| b));
        assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&wire));
    }
}
