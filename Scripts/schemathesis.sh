#!/usr/bin/env bash
# Fuzzes the live service against its own OpenAPI document with schemathesis.
#
#   Scripts/schemathesis.sh [STOREGATE_BINARY]
#
# Starts `storegate serve` (default .build/release/storegate, built when missing; or the binary
# given, or $STOREGATE_BIN) on a free loopback port with a temporary SQLite ledger and a test
# configuration (a test trust directory from `storegate-dev demo`, an API key with every
# permission, a shared secret), runs schemathesis against GET /openapi.yaml, and stops the
# server. Fails on any 5xx and on any reply that does not match the document (status,
# content type, headers, body schema), and when the server did not shut down cleanly.
#
# Tuning: SCHEMATHESIS_MAX_EXAMPLES (default 150 per operation), SCHEMATHESIS_SEED.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${1:-${STOREGATE_BIN:-.build/release/storegate}}"
DEV_BIN="$(dirname "$BIN")/storegate-dev"   # its test data comes from the development tools beside it
if [ ! -x "$BIN" ] || [ ! -x "$DEV_BIN" ]; then
    echo "== building $BIN"
    swift build -c release --product storegate
    swift build -c release --product storegate-dev
fi
if ! command -v schemathesis >/dev/null 2>&1; then
    echo "== installing schemathesis"
    python3 -m pip install --quiet schemathesis
fi

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
KEY="schemathesis-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
"$DEV_BIN" demo --out "$WORK/demo" >/dev/null

STOREGATE_PORT="$PORT" \
STOREGATE_DATABASE="sqlite:$WORK/ledger.sqlite" \
STOREGATE_API_KEYS="schemathesis:$KEY" \
STOREGATE_BUNDLE_IDS="com.example.storegate" \
STOREGATE_TRUST_DIR="$WORK/demo/trust" \
STOREGATE_ENVIRONMENTS="production,sandbox,test" \
STOREGATE_PRODUCTS_FILE="$WORK/demo/products.json" \
STOREGATE_SHARED_SECRET="schemathesis-shared-secret" \
STOREGATE_MAX_BODY_BYTES=1048576 \
STOREGATE_LOG_LEVEL=warning \
    "$BIN" serve >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

for _ in $(seq 1 500); do
    if curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then break; fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log"; echo "storegate serve exited early"; exit 1; fi
    sleep 0.02
done
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null

echo "== schemathesis against http://127.0.0.1:$PORT/openapi.yaml"
# One worker: with two, hypothesis parses lambdas' source from two threads at once, and
# CPython 3.11's ast raises "AST constructor recursion depth mismatch" now and then (a tool
# error, reported as a failed run).
set +e
schemathesis run "http://127.0.0.1:$PORT/openapi.yaml" \
    --url "http://127.0.0.1:$PORT" \
    --header "Authorization: Bearer $KEY" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,missing_required_header,unsupported_method,allow_header_conformance,ignored_auth \
    --max-examples "${SCHEMATHESIS_MAX_EXAMPLES:-150}" \
    ${SCHEMATHESIS_SEED:+--seed "$SCHEMATHESIS_SEED"} \
    --workers 1 \
    --request-timeout 10 \
    --suppress-health-check too_slow,filter_too_much \
    --report-dir "$WORK/report"
STATUS=$?
set -e

kill -TERM "$SERVER_PID"
if ! wait "$SERVER_PID"; then
    echo "storegate serve did not shut down cleanly"
    STATUS=1
fi
SERVER_PID=""
if grep -Eq "Fatal error|Assertion failed|Segmentation" "$WORK/server.log"; then
    cat "$WORK/server.log"
    echo "storegate serve crashed"
    STATUS=1
fi
exit "$STATUS"
