//! The encoder: an event encoded then framed is the same event (data lines joined with LF);
//! an event type or id that cannot be written is an error, never altered; no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::encode::encode_event;
use ssewire::framing::sse::Framer;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // Fields separated by 0xFF (never in UTF-8 text): data, event, id.
    let mut parts = rest.split(|b| *b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let event = parts
        .next()
        .map(|e| String::from_utf8_lossy(e).into_owned());
    let id = parts
        .next()
        .map(|i| String::from_utf8_lossy(i).into_owned());
    let retry = (flags & 1 == 1).then(|| u64::from(flags) * 1_000_003);
    let mut out = Vec::new();
    let result = encode_event(
        &mut out,
        text.as_bytes(),
        event.as_deref().map(str::as_bytes),
        id.as_deref().map(str::as_bytes),
        retry,
    );
    let bad_event = event.as_deref().is_some_and(|e| e.contains(['\r', '\n']));
    let bad_id = id
        .as_deref()
        .is_some_and(|i| i.contains(['\r', '\n', '\0']));
    if bad_event || bad_id {
        assert!(result.is_err() && out.is_empty());
        return;
    }
    assert!(result.is_ok());
    let mut f = Framer::new(usize::MAX);
    let mut events = Vec::new();
    f.feed(&out, &mut events);
    assert_eq!(events.len(), 1, "one event");
    let ev = &events[0];
    assert_eq!(
        ev.data.as_ref(),
        text.replace("\r\n", "\n").replace('\r', "\n").as_bytes()
    );
    let want_event: &[u8] = match event.as_deref() {
        None | Some("") => b"message",
        Some(e) => e.as_bytes(),
    };
    assert_eq!(ev.event_type(), want_event);
    assert_eq!(ev.id.as_deref(), id.as_deref().map(str::as_bytes));
    assert_eq!(ev.retry, retry);
    assert!(f.finish(true).is_none());
});
