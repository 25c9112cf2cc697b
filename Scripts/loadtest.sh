#!/usr/bin/env bash
# Load test of `storegate serve` on loopback with wrk.
#
#   Scripts/loadtest.sh [STOREGATE_BINARY]
#
# 1. Mints distinct app receipts (`storegate-dev mint-receipts`: each its own transaction of a
#    consumable, signed by a fresh test CA whose root goes in a temporary trust directory).
# 2. Starts the release build (default .build/release/storegate, built when missing) on a free
#    port with a fresh SQLite ledger, and times start-up to the first 200 from /readyz.
# 3. Drives POST /v1/receipts/verify with wrk: every request carries a receipt never sent
#    before, for its own account, so each one is verified *and recorded* in SQLite.
# 4. Drives GET /v1/accounts/{account}/entitlements for an account holding a purchase.
# 5. Prints requests/s, p50/p99 latency, the server's peak RSS (VmHWM), and checks that every
#    request succeeded and every verification was recorded as a new transaction.
#
# Tuning (environment): DURATION (seconds per run, default 10), RECEIPTS (default 60000; must
# exceed the requests one run makes), RECEIPT_CONNECTIONS (16), READ_CONNECTIONS (32),
# WRK_THREADS (1), KEEP=1 keeps the working directory. CHECK=0 leaves out the one-entitlement
# check and the catalog's entitlements, so that a build from before them (issue 28) runs the
# same load for an alternated comparison. RATIO_ROUNDS=N (default 0) then alternates N more
# pairs of runs, the one-entitlement check then /healthz, RATIO_SECONDS (5) each, and prints
# each pair's ratio and their median: the figure issue 28 holds (at least 60 %), measured so
# that a busy stretch of the machine moves both sides of a pair alike.
set -euo pipefail
cd "$(dirname "$0")/.."

BIN="${1:-${STOREGATE_BIN:-.build/release/storegate}}"
DEV_BIN="$(dirname "$BIN")/storegate-dev"   # its test data comes from the development tools beside it
DURATION="${DURATION:-10}"
RECEIPTS="${RECEIPTS:-60000}"
RECEIPT_CONNECTIONS="${RECEIPT_CONNECTIONS:-16}"
READ_CONNECTIONS="${READ_CONNECTIONS:-32}"
WRK_THREADS="${WRK_THREADS:-1}"
CHECK="${CHECK:-1}"

if ! command -v wrk >/dev/null 2>&1; then
    echo "== installing wrk"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
if [ ! -x "$BIN" ] || [ ! -x "$DEV_BIN" ]; then
    echo "== building $BIN (release)"
    swift build -c release --product storegate
    swift build -c release --product storegate-dev
fi

WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [ "${KEEP:-0}" = "1" ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

echo "== minting $RECEIPTS distinct receipts"
"$DEV_BIN" mint-receipts --count "$RECEIPTS" --out "$WORK/receipts.txt" --trust-dir-out "$WORK" \
    --bundle-id com.example.storegate --product-id com.example.storegate.coins
if [ "$CHECK" = "1" ]; then
    printf '{"products": {"com.example.storegate.coins": {"type": "Consumable"}}, "entitlements": {"coins": {"currency": {"com.example.storegate.coins": 10}}}}\n' >"$WORK/products.json"
else
    printf '{"products": {"com.example.storegate.coins": {"type": "Consumable"}}}\n' >"$WORK/products.json"
fi

PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
KEY="load-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"

# The requests are built once, in init, so that wrk spends its time sending, not formatting:
# wrk shares the machine's cores with the server.
cat >"$WORK/receipts.lua" <<'LUA'
-- Each request: the next receipt of this thread's share, for a fresh account.
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
function init(args)
  requests = {}
  local headers = { ["Authorization"] = "Bearer " .. args[2], ["Content-Type"] = "application/json" }
  local threads = tonumber(args[3])
  local n = 0
  for line in io.lines(args[1]) do
    if n % threads == id then
      local body = '{"receipt":"' .. line .. '","account":"load-' .. id .. '-' .. (#requests + 1) .. '"}'
      requests[#requests + 1] = wrk.format("POST", "/v1/receipts/verify", headers, body)
    end
    n = n + 1
  end
  index = 0
end
function request()
  index = index + 1
  return requests[((index - 1) % #requests) + 1]
end
function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA

# Static requests: wrk sends them from C, without calling Lua per request.
static_script() {  # static_script NAME PATH
    cat >"$WORK/$1.lua" <<LUA
wrk.method = "GET"
wrk.path = "$2"
wrk.headers["Authorization"] = "Bearer $KEY"
LUA
    cat >>"$WORK/$1.lua" <<'LUA'
function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f non2xx=%d socket_errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000, summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
LUA
}
static_script entitlements /v1/accounts/load-0-1/entitlements
static_script check /v1/accounts/load-0-1/entitlements/coins
static_script healthz /healthz

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== starting $BIN serve on 127.0.0.1:$PORT (SQLite in $WORK)"
START_NS=$(date +%s%N)
STOREGATE_PORT="$PORT" \
STOREGATE_DATABASE="sqlite:$WORK/ledger.sqlite" \
STOREGATE_API_KEYS="load:$KEY" \
STOREGATE_BUNDLE_IDS="com.example.storegate" \
STOREGATE_TRUST_DIR="$WORK/trust" \
STOREGATE_ENVIRONMENTS="production,sandbox,test" \
STOREGATE_PRODUCTS_FILE="$WORK/products.json" \
STOREGATE_LOG_LEVEL=warning \
    "$BIN" serve >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/server.log"; echo "storegate serve exited"; exit 1; fi
    if [ $(( ($(date +%s%N) - START_NS) / 1000000 )) -gt 10000 ]; then echo "not ready after 10 s"; exit 1; fi
done
READY_MS=$(( ($(date +%s%N) - START_NS) / 1000000 ))

echo "== wrk: POST /v1/receipts/verify, ${DURATION}s, $RECEIPT_CONNECTIONS connections, $WRK_THREADS thread(s)"
RECEIPT_RESULT="$(wrk -t"$WRK_THREADS" -c"$RECEIPT_CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/receipts.lua" \
    "http://127.0.0.1:$PORT" -- "$WORK/receipts.txt" "$KEY" "$WRK_THREADS" | grep '^RESULT')"
echo "$RECEIPT_RESULT"

RECORDED="$(curl -sf "http://127.0.0.1:$PORT/metrics" | awk -F' ' '/^storegate_ledger_records_total\{backend="sqlite",outcome="new"\}/ {print $2}')"
VERIFIED="$(curl -sf "http://127.0.0.1:$PORT/metrics" | awk -F' ' '/^storegate_verifications_total\{kind="app_receipt",outcome="valid"\}/ {print $2}')"

echo "== wrk: GET /v1/accounts/{account}/entitlements, ${DURATION}s, $READ_CONNECTIONS connections"
READ_RESULT="$(wrk -t"$WRK_THREADS" -c"$READ_CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/entitlements.lua" \
    "http://127.0.0.1:$PORT" | grep '^RESULT')"
echo "$READ_RESULT"

CHECK_RESULT="RESULT rps=0 non2xx=0 socket_errors=0"
if [ "$CHECK" = "1" ]; then
    echo "== wrk: GET /v1/accounts/{account}/entitlements/coins (the one-entitlement check), ${DURATION}s, $READ_CONNECTIONS connections"
    CHECK_RESULT="$(wrk -t"$WRK_THREADS" -c"$READ_CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/check.lua" \
        "http://127.0.0.1:$PORT" | grep '^RESULT')"
    echo "$CHECK_RESULT"
fi

echo "== wrk: GET /healthz (the service's floor), ${DURATION}s, $READ_CONNECTIONS connections"
HEALTH_RESULT="$(wrk -t"$WRK_THREADS" -c"$READ_CONNECTIONS" -d"${DURATION}s" --latency -s "$WORK/healthz.lua" \
    "http://127.0.0.1:$PORT" | grep '^RESULT')"
echo "$HEALTH_RESULT"

RATIOS=()
if [ "$CHECK" = "1" ] && [ "${RATIO_ROUNDS:-0}" -gt 0 ]; then
    echo "== alternating the check and /healthz, ${RATIO_ROUNDS} pairs of ${RATIO_SECONDS:-5}s runs, $READ_CONNECTIONS connections"
    for round in $(seq 1 "$RATIO_ROUNDS"); do
        C="$(wrk -t"$WRK_THREADS" -c"$READ_CONNECTIONS" -d"${RATIO_SECONDS:-5}s" -s "$WORK/check.lua" "http://127.0.0.1:$PORT" | grep '^RESULT')"
        H="$(wrk -t"$WRK_THREADS" -c"$READ_CONNECTIONS" -d"${RATIO_SECONDS:-5}s" -s "$WORK/healthz.lua" "http://127.0.0.1:$PORT" | grep '^RESULT')"
        if [ "$(echo "$C" | tr ' ' '\n' | awk -F= '$1 == "non2xx" {print $2}')" != "0" ]; then echo "FAIL: a check was not answered 2xx: $C"; exit 1; fi
        R="$(awk -v a="$(echo "$C" | tr ' ' '\n' | awk -F= '$1 == "rps" {print $2}')" -v b="$(echo "$H" | tr ' ' '\n' | awk -F= '$1 == "rps" {print $2}')" 'BEGIN {printf "%.1f", 100 * a / b}')"
        RATIOS+=("$R")
        echo "pair $round: check $(echo "$C" | tr ' ' '\n' | awk -F= '$1 == "rps" {print $2}')/s, /healthz $(echo "$H" | tr ' ' '\n' | awk -F= '$1 == "rps" {print $2}')/s: $R %"
    done
fi

PEAK_RSS_KB="$(awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status")"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || { echo "storegate serve did not shut down cleanly"; exit 1; }
SERVER_PID=""

field() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k {print $2}'; }
echo
echo "== results ($(nproc) cores, loopback, $(basename "$BIN"); load average before the runs: $LOAD_BEFORE)"
printf 'start-up to ready:          %s ms\n' "$READY_MS"
printf 'receipt verifications/s:    %s  (p50 %s ms, p99 %s ms, p99.9 %s ms; %s requests, %s non-2xx)\n' \
    "$(field "$RECEIPT_RESULT" rps)" "$(field "$RECEIPT_RESULT" p50_ms)" "$(field "$RECEIPT_RESULT" p99_ms)" "$(field "$RECEIPT_RESULT" p999_ms)" \
    "$(field "$RECEIPT_RESULT" requests)" "$(field "$RECEIPT_RESULT" non2xx)"
printf 'recorded as new in SQLite:  %s transactions (verified: %s)\n' "${RECORDED:-?}" "${VERIFIED:-?}"
printf 'entitlement reads/s:        %s  (p50 %s ms, p99 %s ms, p99.9 %s ms; %s requests, %s non-2xx)\n' \
    "$(field "$READ_RESULT" rps)" "$(field "$READ_RESULT" p50_ms)" "$(field "$READ_RESULT" p99_ms)" "$(field "$READ_RESULT" p999_ms)" \
    "$(field "$READ_RESULT" requests)" "$(field "$READ_RESULT" non2xx)"
printf 'one-entitlement checks/s:   %s  (p50 %s ms, p99 %s ms; %s non-2xx)\n' \
    "$(field "$CHECK_RESULT" rps)" "$(field "$CHECK_RESULT" p50_ms)" "$(field "$CHECK_RESULT" p99_ms)" "$(field "$CHECK_RESULT" non2xx)"
printf '/healthz/s:                 %s  (p50 %s ms, p99 %s ms)\n' \
    "$(field "$HEALTH_RESULT" rps)" "$(field "$HEALTH_RESULT" p50_ms)" "$(field "$HEALTH_RESULT" p99_ms)"
printf 'check / healthz:            %s %%   whole-account read / healthz: %s %%\n' \
    "$(awk -v a="$(field "$CHECK_RESULT" rps)" -v b="$(field "$HEALTH_RESULT" rps)" 'BEGIN {printf "%.0f", 100 * a / b}')" \
    "$(awk -v a="$(field "$READ_RESULT" rps)" -v b="$(field "$HEALTH_RESULT" rps)" 'BEGIN {printf "%.0f", 100 * a / b}')"
if [ "${#RATIOS[@]}" -gt 0 ]; then
    printf 'check / healthz, alternated: median %s %% of %s pairs (%s)\n' \
        "$(printf '%s\n' "${RATIOS[@]}" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')" \
        "${#RATIOS[@]}" "$(printf '%s ' "${RATIOS[@]}" | sed 's/ $//')"
fi
printf 'peak RSS (VmHWM):           %s MB\n' "$(( PEAK_RSS_KB / 1024 ))"

STATUS=0
if [ "$(field "$RECEIPT_RESULT" non2xx)" != "0" ] || [ "$(field "$READ_RESULT" non2xx)" != "0" ] || [ "$(field "$CHECK_RESULT" non2xx)" != "0" ]; then
    echo "FAIL: some requests were not answered 2xx (RECEIPTS too small for the run?)"; STATUS=1
fi
if [ "$(field "$RECEIPT_RESULT" socket_errors)" != "0" ] || [ "$(field "$READ_RESULT" socket_errors)" != "0" ]; then
    echo "FAIL: socket errors"; STATUS=1
fi
if [ -n "$RECORDED" ] && [ "${RECORDED%.*}" != "$(field "$RECEIPT_RESULT" requests)" ]; then
    echo "note: $RECORDED new transactions for $(field "$RECEIPT_RESULT" requests) completed requests (wrk counts only replies it received)"
fi
exit "$STATUS"
