//! An HTTP/1.1 response read from raw socket bytes, cut anywhere: the status line and headers
//! (parsed by `httparse`), then the body de-framed as the headers say — chunked (sizes,
//! extensions and trailers), `Content-Length`, or delimited by the connection's close — so that
//! only the body's bytes reach the event-stream reader. Interim `1xx` responses are skipped;
//! `204` and `304` have no body.
//!
//! Carried across feeds: the head collected so far (at most [`MAX_HEAD`] bytes), then the
//! body's framing state (the remaining length of a chunk or of the body, a chunk-size or
//! trailer line being read, at most [`MAX_LINE`] bytes). Cost: O(bytes); each body byte is
//! copied once into the caller's buffer. Hostile input never panics and never grows memory
//! beyond those bounds: a head or a line past its bound, a bad chunk size, a size that
//! overflows, are [`HttpError`]s, and the reader stops.

/// The largest response head accepted (status line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// The longest chunk-size or trailer line accepted.
pub const MAX_LINE: usize = 4096;
/// The most headers accepted in one head.
pub const MAX_HEADERS: usize = 128;

/// Why the bytes are not an HTTP/1.1 response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError(pub String);

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading a chunk-size line.
    Size,
    /// Inside a chunk: bytes left.
    Data(u64),
    /// After a chunk's data: its CRLF (how much of it is seen).
    DataEnd(u8),
    /// After the last chunk: trailer lines until an empty one.
    Trailer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Chunked(Chunk),
    Length(u64),
    Close,
    Done,
    Failed,
}

/// The reader of one response.
#[derive(Debug)]
pub struct ResponseReader {
    state: State,
    head: Vec<u8>,
    line: Vec<u8>,
    status: Option<u16>,
    reason: String,
    headers: Vec<(String, Vec<u8>)>,
    error: Option<HttpError>,
}

impl Default for ResponseReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseReader {
    pub fn new() -> Self {
        ResponseReader {
            state: State::Head,
            head: Vec::new(),
            line: Vec::new(),
            status: None,
            reason: String::new(),
            headers: Vec::new(),
            error: None,
        }
    }

    /// The status code, once the head is read.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The headers, in order, names as sent.
    pub fn headers(&self) -> &[(String, Vec<u8>)] {
        &self.headers
    }

    pub fn head_complete(&self) -> bool {
        self.status.is_some()
    }

    /// Whether the whole body has arrived (always false for a body delimited by the close).
    pub fn body_complete(&self) -> bool {
        self.state == State::Done
    }

    pub fn error(&self) -> Option<&HttpError> {
        self.error.as_ref()
    }

    fn fail(&mut self, message: String) -> HttpError {
        let err = HttpError(message);
        self.error = Some(err.clone());
        self.state = State::Failed;
        err
    }

    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// Reads `input`, appending the body's bytes to `body`.
    pub fn feed(&mut self, input: &[u8], body: &mut Vec<u8>) -> Result<(), HttpError> {
        let mut rest = input;
        loop {
            match self.state {
                State::Failed => {
                    return Err(self
                        .error
                        .clone()
                        .unwrap_or_else(|| HttpError("the response failed".into())))
                }
                State::Done => return Ok(()),
                State::Head => {
                    if rest.is_empty() {
                        return Ok(());
                    }
                    rest = self.read_head(rest)?;
                }
                State::Close => {
                    body.extend_from_slice(rest);
                    return Ok(());
                }
                State::Length(left) => {
                    let n = (left.min(rest.len() as u64)) as usize;
                    let (take, after) = rest.split_at(n);
                    body.extend_from_slice(take);
                    let left = left - n as u64;
                    self.state = if left == 0 {
                        State::Done
                    } else {
                        State::Length(left)
                    };
                    if left > 0 || after.is_empty() {
                        return Ok(());
                    }
                    return Ok(()); // bytes after the body are not ours
                }
                State::Chunked(chunk) => {
                    if rest.is_empty() {
                        return Ok(());
                    }
                    rest = self.read_chunked(chunk, rest, body)?;
                }
            }
        }
    }

    /// The end of the connection: fine for a body delimited by it (or a complete one), an
    /// error while the head or a framed body is unfinished.
    pub fn finish(&mut self) -> Result<(), HttpError> {
        match self.state {
            State::Close => {
                self.state = State::Done;
                Ok(())
            }
            State::Done => Ok(()),
            State::Failed => Err(self
                .error
                .clone()
                .unwrap_or_else(|| HttpError("the response failed".into()))),
            State::Head => {
                Err(self.fail("the connection closed before the response head ended".into()))
            }
            State::Length(left) => Err(self.fail(format!(
                "the connection closed {left} bytes before the end of the Content-Length body"
            ))),
            State::Chunked(_) => {
                Err(self.fail("the connection closed before the end of the chunked body".into()))
            }
        }
    }

    /// Collects the head; once it ends, parses it and returns the bytes after it.
    fn read_head<'a>(&mut self, input: &'a [u8]) -> Result<&'a [u8], HttpError> {
        let old = self.head.len();
        // Where the head ends: CRLF CRLF (or LF LF), possibly spanning the previous feed.
        let scan_from = old.saturating_sub(3);
        let take = input.len().min(MAX_HEAD + 1 - old.min(MAX_HEAD + 1));
        self.head
            .extend_from_slice(input.get(..take).unwrap_or_default());
        let end =
            find_head_end(self.head.get(scan_from..).unwrap_or_default()).map(|e| e + scan_from);
        let Some(end) = end else {
            if self.head.len() > MAX_HEAD {
                return Err(self.fail(format!("the response head is longer than {MAX_HEAD} bytes")));
            }
            return Ok(&[]);
        };
        let head = std::mem::take(&mut self.head);
        let consumed = end - old; // bytes of `input` that belong to the head
        let after = input.get(consumed..).unwrap_or_default();
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(head.get(..end).unwrap_or_default()) {
            Ok(httparse::Status::Complete(_)) => {}
            Ok(httparse::Status::Partial) => {
                return Err(self.fail("the response head did not parse".into()))
            }
            Err(e) => return Err(self.fail(format!("not an HTTP/1.1 response head: {e}"))),
        }
        let code = response.code.unwrap_or(0);
        if (100..200).contains(&code) && code != 101 {
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            return Ok(after);
        }
        self.status = Some(code);
        self.reason = response.reason.unwrap_or_default().to_owned();
        self.headers = response
            .headers
            .iter()
            .map(|h| (h.name.to_owned(), h.value.to_vec()))
            .collect();
        self.state = self.body_framing(code)?;
        Ok(after)
    }

    fn body_framing(&mut self, code: u16) -> Result<State, HttpError> {
        if code == 204 || code == 304 {
            return Ok(State::Done);
        }
        if let Some(te) = self.header("transfer-encoding") {
            let te = String::from_utf8_lossy(te).to_ascii_lowercase();
            if te.split(',').next_back().map(str::trim) == Some("chunked") {
                return Ok(State::Chunked(Chunk::Size));
            }
            return Ok(State::Close);
        }
        if let Some(len) = self.header("content-length") {
            let text = String::from_utf8_lossy(len);
            return match text.trim().parse::<u64>() {
                Ok(0) => Ok(State::Done),
                Ok(n) => Ok(State::Length(n)),
                Err(_) => Err(self.fail(format!(
                    "a Content-Length that is not a number: {:?}",
                    text.chars().take(40).collect::<String>()
                ))),
            };
        }
        Ok(State::Close)
    }

    /// Reads chunked framing from `input`; returns what is left of it (empty, or bytes after
    /// the body).
    fn read_chunked<'a>(
        &mut self,
        chunk: Chunk,
        input: &'a [u8],
        body: &mut Vec<u8>,
    ) -> Result<&'a [u8], HttpError> {
        match chunk {
            Chunk::Data(left) => {
                let n = (left.min(input.len() as u64)) as usize;
                let (take, after) = input.split_at(n);
                body.extend_from_slice(take);
                let left = left - n as u64;
                self.state = State::Chunked(if left == 0 {
                    Chunk::DataEnd(0)
                } else {
                    Chunk::Data(left)
                });
                Ok(after)
            }
            Chunk::DataEnd(seen) => {
                let Some((&b, after)) = input.split_first() else {
                    return Ok(input);
                };
                match (seen, b) {
                    (0, b'\r') => self.state = State::Chunked(Chunk::DataEnd(1)),
                    (0 | 1, b'\n') => self.state = State::Chunked(Chunk::Size),
                    _ => return Err(self.fail("a chunk's data does not end with CRLF".into())),
                }
                Ok(after)
            }
            Chunk::Size | Chunk::Trailer => {
                let Some(nl) = memchr::memchr(b'\n', input) else {
                    self.line.extend_from_slice(input);
                    if self.line.len() > MAX_LINE {
                        return Err(self.fail(format!(
                            "a chunk-size or trailer line is longer than {MAX_LINE} bytes"
                        )));
                    }
                    return Ok(&[]);
                };
                let (part, after) = input.split_at(nl);
                self.line.extend_from_slice(part);
                if self.line.len() > MAX_LINE {
                    return Err(self.fail(format!(
                        "a chunk-size or trailer line is longer than {MAX_LINE} bytes"
                    )));
                }
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                let after = after.get(1..).unwrap_or_default();
                if chunk == Chunk::Trailer {
                    if line.is_empty() {
                        self.state = State::Done;
                    }
                    return Ok(after);
                }
                let size_text = line.split(|b| *b == b';').next().unwrap_or_default();
                let size_text = String::from_utf8_lossy(size_text);
                let size = u64::from_str_radix(size_text.trim(), 16).map_err(|_| {
                    self.fail(format!(
                        "a chunk size that is not a hex number: {:?}",
                        size_text.chars().take(40).collect::<String>()
                    ))
                })?;
                self.state = State::Chunked(if size == 0 {
                    Chunk::Trailer
                } else {
                    Chunk::Data(size)
                });
                Ok(after)
            }
        }
    }
}

/// The length of the head in `bytes` (up to and including its blank line), if it ended.
fn find_head_end(bytes: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(nl) = memchr::memchr(b'\n', bytes.get(i..)?) {
        let at = i + nl;
        let next = bytes.get(at + 1..)?;
        if next.first() == Some(&b'\n') {
            return Some(at + 2);
        }
        if next.starts_with(b"\r\n") {
            return Some(at + 3);
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pieces: &[&[u8]]) -> (Result<(), HttpError>, Vec<u8>, ResponseReader) {
        let mut r = ResponseReader::new();
        let mut body = Vec::new();
        for p in pieces {
            if let Err(e) = r.feed(p, &mut body) {
                return (Err(e), body, r);
            }
        }
        let end = r.finish();
        (end, body, r)
    }

    fn every_split(response: &[u8]) -> Vec<(Result<(), HttpError>, Vec<u8>)> {
        let mut all = vec![];
        for cut in 0..=response.len() {
            let (a, b) = response.split_at(cut);
            let (res, body, _) = read(&[a, b]);
            all.push((res, body));
        }
        let bytes: Vec<&[u8]> = response.chunks(1).collect();
        let (res, body, _) = read(&bytes);
        all.push((res, body));
        all
    }

    const CHUNKED: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
        7;ext=1\r\ndata: a\r\n\
        10\r\n\n\ndata: [DONE]\n\n\r\n\
        0\r\nX-Trailer: t\r\n\r\n";

    #[test]
    fn chunked_at_every_split() {
        for (res, body) in every_split(CHUNKED) {
            assert_eq!(res, Ok(()));
            assert_eq!(body, b"data: a\n\ndata: [DONE]\n\n");
        }
        let (_, _, r) = read(&[CHUNKED]);
        assert_eq!(r.status(), Some(200));
        assert_eq!(r.reason(), "OK");
        assert!(r.body_complete());
        assert_eq!(
            r.headers()[0],
            ("Content-Type".to_owned(), b"text/event-stream".to_vec())
        );
    }

    #[test]
    fn content_length_and_close_delimited() {
        let resp = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\n{\"e\"}extra";
        for (res, body) in every_split(resp) {
            assert_eq!(res, Ok(()));
            assert_eq!(body, b"{\"e\"}");
        }
        let resp = b"HTTP/1.0 200 OK\r\n\r\ndata: x\n\n";
        for (res, body) in every_split(resp) {
            assert_eq!((res, body), (Ok(()), b"data: x\n\n".to_vec()));
        }
    }

    #[test]
    fn interim_responses_are_skipped() {
        let resp = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        for (res, body) in every_split(resp) {
            assert_eq!((res, body), (Ok(()), b"ok".to_vec()));
        }
    }

    #[test]
    fn bad_input_is_an_error_not_memory() {
        let (res, _, _) = read(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"]);
        assert!(res.unwrap_err().0.contains("hex"));
        let (res, _, _) =
            read(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n"]);
        assert!(res.is_err());
        let (res, _, _) = read(&[
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            &[b'1'; 10_000],
        ]);
        assert!(res.unwrap_err().0.contains("longer"));
        let mut r = ResponseReader::new();
        let mut body = Vec::new();
        let big = vec![b'x'; 1 << 20];
        assert!(r.feed(b"HTTP/1.1 200 OK\r\nX: ", &mut body).is_ok());
        assert!(r.feed(&big, &mut body).is_err());
        assert!(r.head.len() <= MAX_HEAD + 1);
        let (res, _, _) = read(&[b"<html>not http</html>\r\n\r\n"]);
        assert!(res.is_err());
        let (res, _, _) = read(&[b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"]);
        assert!(res.unwrap_err().0.contains("7 bytes before"));
        let (res, _, _) = read(&[b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc"]);
        assert!(res.is_err());
    }
}
