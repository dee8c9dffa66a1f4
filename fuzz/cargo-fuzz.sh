#!/usr/bin/env bash
# Coverage-guided fuzzing of the pure-Rust core (cargo-fuzz, libFuzzer; nightly toolchain):
#   bash fuzz/cargo-fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
# Each target runs for SECONDS (default 20) from a corpus seeded with tests/data's captures
# (fuzz/rust/corpus/, not committed), with libFuzzer's memory limits (RSS 2 GiB, one
# allocation 256 MiB over inputs of at most 64 KiB: an input that makes the core allocate
# more fails). A crash, a failed assertion (split equivalence, round trip) or a limit hit
# fails the run; the input is saved under fuzz/rust/artifacts/. Prints executions and coverage
# per target. Installs cargo-fuzz from crates.io when it is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(framing partial_json encode_roundtrip translate stream request http_response eventstream relay gemini_decode chat_decode)
fi
if ! cargo +nightly --version > /dev/null 2>&1; then
    echo "cargo-fuzz needs the nightly toolchain (rustup toolchain install nightly)"; exit 1
fi
if ! cargo fuzz --version > /dev/null 2>&1; then
    cargo install cargo-fuzz --locked --quiet
fi
cd "$here/rust"
for target in "${targets[@]}"; do
    corpus="corpus/$target"
    mkdir -p "$corpus" artifacts
    if [ -z "$(ls -A "$corpus")" ]; then
        for f in "$here"/../tests/data/*/*.sse "$here"/../python/ssewire/_samples/*.sse "$here"/../python/ssewire/_samples/*.ndjson; do
            cp "$f" "$corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
        done
        if [ "$target" = request ]; then
            # Request bodies (after the one byte the target skips): an agent loop per dialect.
            printf '\x00{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"r"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto","max_tokens":9,"stop":["x"]}' > "$corpus/request-chat"
            printf '\x00{"model":"m","max_tokens":9,"system":"s","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"g"},{"type":"tool_use","id":"a","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r","is_error":true}]}],"thinking":{"type":"enabled","budget_tokens":2000}}' > "$corpus/request-messages"
            printf '\x00{"contents":{"role":"user","parts":[{"text":"hi"},{"functionCall":{"name":"f","args":{}}}]},"system_instruction":{"parts":{"text":"s"}},"tools":{"function_declarations":[{"name":"f"}]},"generationConfig":{"thinkingConfig":{"thinkingLevel":"HIGH"}}}' > "$corpus/request-gemini"
        fi
        if [ "$target" = stream ] && python3 -c "import ssewire" 2> /dev/null; then
            # Bedrock bodies (the first byte picks the reader: 3 Converse, 4 Messages in
            # InvokeModel chunks), written by the installed package's encoder.
            python3 - "$corpus" <<'PY'
import base64, json, sys
import ssewire
enc = ssewire.encode_eventstream_message
out = sys.argv[1]
conv = [("messageStart", {"role": "assistant"}), ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        ("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolUse": {"toolUseId": "t", "name": "f"}}}),
        ("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"a\":1}"}}}),
        ("messageStop", {"stopReason": "tool_use"}), ("metadata", {"usage": {"inputTokens": 1}})]
body = b"".join(enc({":event-type": k, ":message-type": "event"}, json.dumps(p).encode()) for k, p in conv)
open(f"{out}/converse", "wb").write(b"\x03" + body)
docs = [{"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}},
        {"type": "message_stop"}]
body = b"".join(enc({":event-type": "chunk", ":message-type": "event"},
                    json.dumps({"bytes": base64.b64encode(json.dumps(d).encode()).decode()}).encode()) for d in docs)
open(f"{out}/invoke", "wb").write(b"\x04" + body)
PY
        fi
        if [ "$target" = gemini_decode ] || [ "$target" = chat_decode ]; then
            # One chunk a file: the data of each event of the dialect's captures.
            dialect="${target%_decode}"
            n=0
            for f in "$here"/../tests/data/"$dialect"/*.sse "$here"/../python/ssewire/_samples/"$dialect".sse; do
                while IFS= read -r line; do
                    case "$line" in data:*) n=$((n + 1)); printf '%s' "${line#data:}" | sed 's/^ //' > "$corpus/chunk-$n" ;; esac
                done < "$f"
            done
        fi
        if [ "$target" = eventstream ]; then
            # The AWS SDKs' event stream vectors (after the one byte that picks the cut).
            for f in "$here"/../tests/data/eventstream/encoded/*/*; do
                { printf '\x05'; cat "$f"; } > "$corpus/eventstream-$(basename "$(dirname "$f")")-$(basename "$f")"
            done
        fi
        if [ "$target" = http_response ]; then
            # HTTP responses (after the one byte that picks the cut): every framing.
            printf '\x07HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\ndata:\r\n3\r\n a\n\r\n0\r\nT: 1\r\n\r\n' > "$corpus/http-chunked"
            printf '\x09HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\n{}\n\n' > "$corpus/http-length"
            printf '\x03HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: x\n\n' > "$corpus/http-close"
        fi
    fi
    log="$(mktemp)"
    if ! cargo +nightly fuzz run --fuzz-dir "$here/rust" "$target" "$corpus" -- -max_total_time="$seconds" \
        -max_len=65536 -rss_limit_mb=2048 -malloc_limit_mb=256 -timeout=20 \
        -artifact_prefix=artifacts/ -print_final_stats=1 > "$log" 2>&1; then
        tail -40 "$log"
        echo "cargo-fuzz: $target FAILED"
        exit 1
    fi
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
    cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    echo "cargo-fuzz: $target: $runs executions in ${seconds}s, $cov, 0 failures"
    rm -f "$log"
done
