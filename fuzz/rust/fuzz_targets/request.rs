//! Request translation: any JSON body (the input's bytes after its first, if they are JSON),
//! read as each dialect and written as each other; no panic, the output bounded by a constant
//! times the input, memory bounded (libFuzzer's -malloc_limit_mb); the same bytes as a tool call
//! id carrying reasoning (`translate::carry`), decoded without a panic, and as an upstream's
//! error body (`translate::error`), always an error status. Bedrock's forms too: Converse
//! requests both ways, and a Messages target in the InvokeModel form.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ssewire::request::translate_framed;
use ssewire::translate::Dialect;

fuzz_target!(|data: &[u8]| {
    let Some((_, body)) = data.split_first() else {
        return;
    };
    // A tool call id a client sends back: any bytes as a carrier's payload, and as an id.
    let carrier = format!("sswc1_m_{}", ssewire::base64::encode_url(body));
    let _ = ssewire::translate::carry::decode(&carrier);
    let _ = ssewire::translate::carry::decode(&String::from_utf8_lossy(body));
    // An upstream's error body: any bytes, as each client dialect's error object.
    for source in Dialect::ALL {
        for target in Dialect::ALL {
            let e = ssewire::translate::error::translate_error(429, body, source, target);
            assert!((400..=599).contains(&e.status), "not an error status");
        }
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return;
    };
    for source in Dialect::ALL {
        for target in Dialect::ALL {
            for invoke in [false, target == Dialect::Messages] {
                if let Ok(t) = translate_framed(
                    &value,
                    source,
                    target,
                    Some("m"),
                    invoke,
                    &Default::default(),
                ) {
                    let out = t.body.to_string();
                    assert!(
                        out.len() <= 16 * body.len() + 4096,
                        "the request outgrew its input"
                    );
                }
            }
        }
    }
});
