#!/usr/bin/env bash
# StoreGate's libFuzzer targets (Fuzz/): build, seed, run, and the CI and long runs.
#
#   Scripts/fuzz.sh build                 build every target (-sanitize=fuzzer,address), Fuzz/.build
#   Scripts/fuzz.sh seeds                 regenerate the committed seeds and test CA (Fuzz/Corpus, Fuzz/TestCA)
#   Scripts/fuzz.sh run TARGET [SECONDS] [libFuzzer flags...]
#                                         fuzz one target (default 60 s) from its seeds and the real fixtures
#   Scripts/fuzz.sh repro TARGET FILE...  run a target on given inputs (a crash artifact, a regression file)
#   Scripts/fuzz.sh merge TARGET DIR      minimize DIR (a grown corpus) into Fuzz/Corpus/TARGET
#   Scripts/fuzz.sh ci                    build, then every target for FUZZ_SECONDS (default 30) s; fails on any finding.
#                                         FUZZ_END (epoch seconds) caps the run: each target gets at most
#                                         its share of the time left, never under 10 s (CI's 90 minutes)
#   Scripts/fuzz.sh long                  every target, one after the other, niced, to at least 10 million
#                                         executions in total (FUZZ_LONG_SCALE scales each target's share)
#   Scripts/fuzz.sh list                  the targets
#
# The normal build is never touched: the targets are a package of their own (Fuzz/Package.swift)
# with their own scratch path. Real fixtures (../shared/fixtures) are read in place, never
# copied; new inputs libFuzzer finds go to a scratch corpus under Fuzz/.build/corpus, never into
# the repository. Findings (crash-*, timeout-*, oom-*, slow-unit-*) land in Fuzz/.build/artifacts
# and are printed as base64.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FUZZ="$ROOT/Fuzz"
SCRATCH="$FUZZ/.build"
FIXTURES="${STOREGATE_FIXTURES_DIR:-$ROOT/../shared/fixtures}"
ARTIFACTS="$SCRATCH/artifacts"

TARGETS=(
    fuzz-pkcs7 fuzz-receipt-payload fuzz-receipt-verify
    fuzz-jws-structure fuzz-jws-verify
    fuzz-request-json fuzz-verifyreceipt-reply fuzz-server-api fuzz-server-api-actions
    fuzz-trust-file fuzz-stored-proof fuzz-rollup-changes
)

# The whole build goes through these flags: coverage instrumentation and ASan on every Swift
# module (StoreGate's and its dependencies'); lld, because SwiftPM points `main` at each
# executable's own entry point with --defsym, which gold refuses next to libFuzzer's `main`.
#
# CI's short run builds the targets alone (not fuzz-seeds) in debug: the same instrumentation,
# half the compile time of a third optimized build of the whole dependency graph beside the
# debug and release test builds, and assertions on; the long run and `run` stay optimized.
# FUZZ_CONFIG=release|debug overrides either.
if [[ "${1:-}" == ci ]]; then FUZZ_CONFIG="${FUZZ_CONFIG:-debug}"; fi
FUZZ_CONFIG="${FUZZ_CONFIG:-release}"
# --gc-sections (SwiftPM's own in release) drops libFuzzer's unused `main` with its reference to
# LLVMFuzzerTestOneInput, which the targets do not define: they call LLVMFuzzerRunDriver.
BUILD_FLAGS=(-c "$FUZZ_CONFIG" --package-path "$FUZZ" --scratch-path "$SCRATCH"
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld -Xlinker --gc-sections)

# Swift's backtracer would catch the trap before libFuzzer and wait for a debugger; leaks are
# not checked because the Swift runtime keeps type metadata for the life of the process.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:handle_abort=1:symbolize=1}"
export STOREGATE_FUZZ_DIR="$FUZZ"
export STOREGATE_FIXTURES_DIR="$FIXTURES"

die() { echo "fuzz.sh: $*" >&2; exit 2; }

is_target() {
    local t
    for t in "${TARGETS[@]}"; do [[ "$t" == "$1" ]] && return 0; done
    return 1
}

bin_dir() { swift build "${BUILD_FLAGS[@]}" --show-bin-path; }

build() {
    local start=$SECONDS
    swift build "${BUILD_FLAGS[@]}"
    echo "== fuzz build ($FUZZ_CONFIG): $((SECONDS - start)) s"
}

# Only the fuzz targets (CI): one build plan, each product in turn.
build_targets() {
    local start=$SECONDS target
    for target in "${TARGETS[@]}"; do
        swift build "${BUILD_FLAGS[@]}" --product "$target"
    done
    echo "== fuzz build of the targets ($FUZZ_CONFIG): $((SECONDS - start)) s"
}

# The dictionary of a target.
dictionary() {
    case "$1" in
        fuzz-pkcs7|fuzz-receipt-payload|fuzz-receipt-verify) echo "$FUZZ/Dictionaries/asn1.dict" ;;
        fuzz-jws-structure|fuzz-jws-verify) echo "$FUZZ/Dictionaries/jws.dict" ;;
        fuzz-trust-file) echo "$FUZZ/Dictionaries/certificate.dict" ;;
        *) echo "$FUZZ/Dictionaries/json.dict" ;;
    esac
}

# The real fixtures a target also starts from, read in place when present.
fixture_dirs() {
    local sub=""
    case "$1" in
        fuzz-pkcs7|fuzz-receipt-verify) sub=receipts ;;
        fuzz-jws-structure|fuzz-jws-verify) sub=jws ;;
        fuzz-verifyreceipt-reply) sub=verifyreceipt ;;
        fuzz-trust-file) sub=certs ;;
    esac
    if [[ -n "$sub" && -d "$FIXTURES/$sub" ]]; then echo "$FIXTURES/$sub"; fi
}

# Flags every run shares: a hang backstop (whole seconds, wall time; the 100 ms budget is the
# targets' own CPU-time check; the long run widens it), one allocation at most 64 MB (the
# targets also check the heap's growth per input), the final statistics. A later -timeout wins.
COMMON_FLAGS=(-timeout=10 -rss_limit_mb=4096 -malloc_limit_mb=64 -print_final_stats=1 -detect_leaks=0)

# Moves the findings of earlier runs aside (to artifacts/earlier/), so a run reports its own.
fresh_artifacts() {
    mkdir -p "$ARTIFACTS/earlier"
    shopt -s nullglob
    local file
    for file in "$ARTIFACTS"/crash-* "$ARTIFACTS"/timeout-* "$ARTIFACTS"/oom-* "$ARTIFACTS"/leak-* "$ARTIFACTS"/slow-unit-*; do
        mv -f "$file" "$ARTIFACTS/earlier/"
    done
    shopt -u nullglob
}

print_findings() {
    local found=0 file
    shopt -s nullglob
    for file in "$ARTIFACTS"/crash-* "$ARTIFACTS"/timeout-* "$ARTIFACTS"/oom-* "$ARTIFACTS"/leak-*; do
        found=1
        echo "== finding: $(basename "$file") ($(wc -c < "$file") bytes), base64:"
        base64 -w0 "$file"
        echo
    done
    shopt -u nullglob
    return $found
}

# run_target TARGET LOG [libFuzzer flags...]: one libFuzzer process; its output goes to LOG.
run_target() {
    local target=$1 log=$2; shift 2
    local bin work
    bin="$(bin_dir)/$target"
    [[ -x "$bin" ]] || die "$target is not built; run: Scripts/fuzz.sh build"
    work="$SCRATCH/corpus/$target"
    mkdir -p "$work" "$ARTIFACTS"
    local corpora=("$work" "$FUZZ/Corpus/$target")
    local fixtures
    fixtures=$(fixture_dirs "$target")
    [[ -n "$fixtures" ]] && corpora+=("$fixtures")
    "$bin" "${COMMON_FLAGS[@]}" -dict="$(dictionary "$target")" -artifact_prefix="$ARTIFACTS/" "$@" "${corpora[@]}" > "$log" 2>&1
}

# stats LOG: "runs exec/s cov ft" from -print_final_stats and the last status line.
stats() {
    local log=$1 runs speed cov ft
    runs=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' | tail -1)
    speed=$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}' | tail -1)
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    echo "${runs:-?} ${speed:-?} ${cov:-?} ${ft:-?}"
}

# campaign MODE: run every target; MODE is ci (FUZZ_SECONDS each) or long (runs per target).
campaign() {
    local mode=$1 failed=0 total=0 target log flags status
    local logs="$SCRATCH/logs/$mode-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$logs"
    fresh_artifacts
    printf '%-26s %12s %10s %7s %7s %8s %s\n' target executions exec/s cov ft seconds result
    for target in "${TARGETS[@]}"; do
        log="$logs/$target.log"
        if [[ $mode == ci ]]; then
            flags=(-max_total_time="${FUZZ_SECONDS:-30}")
        else
            # Niced on a shared machine, an input can wait for the CPU far longer than it
            # runs: the wall-clock backstop is widened, the targets' CPU-time budget is not.
            flags=(-runs="$(long_runs "$target")" -timeout="${FUZZ_LONG_TIMEOUT:-300}")
        fi
        local start=$SECONDS
        run_target "$target" "$log" "${flags[@]}" && status=ok || status=FAILED
        read -r runs speed cov ft < <(stats "$log")
        printf '%-26s %12s %10s %7s %7s %8s %s\n' "$target" "$runs" "$speed" "$cov" "$ft" "$((SECONDS - start))" "$status"
        [[ "$runs" =~ ^[0-9]+$ ]] && total=$((total + runs))
        if [[ $status != ok ]]; then
            failed=1
            grep -E 'ERROR|==StoreGate fuzz invariant failed|Fatal error|SUMMARY|Test unit written' "$log" | head -20 || true
        fi
    done
    echo "== $mode: $total executions in total; logs in $logs"
    print_findings || failed=1
    return $failed
}

# Executions per target in the long run: 12.2 million in all, weighted by speed (the deep
# targets, whole verification and the API client, run 10-20 times slower than the parsers).
# FUZZ_LONG_SCALE multiplies every share.
long_runs() {
    local base
    case "$1" in
        fuzz-pkcs7) base=1500000 ;;
        fuzz-receipt-payload) base=2000000 ;;
        fuzz-receipt-verify) base=1000000 ;;
        fuzz-jws-structure) base=1500000 ;;
        fuzz-jws-verify) base=1000000 ;;
        fuzz-request-json) base=2000000 ;;
        fuzz-verifyreceipt-reply) base=800000 ;;
        fuzz-server-api) base=400000 ;;
        fuzz-server-api-actions) base=400000 ;;
        fuzz-trust-file) base=1000000 ;;
        fuzz-stored-proof) base=1000000 ;;
        fuzz-rollup-changes) base=1000000 ;;
    esac
    awk -v b="$base" -v s="${FUZZ_LONG_SCALE:-1}" 'BEGIN { printf "%d", b * s }'
}

command=${1:-}
shift || true
case "$command" in
    list)
        printf '%s\n' "${TARGETS[@]}"
        ;;
    build)
        build
        ;;
    seeds)
        build
        "$(bin_dir)/fuzz-seeds"
        ;;
    run)
        target=${1:-}
        is_target "$target" || die "usage: fuzz.sh run TARGET [SECONDS] [flags] (targets: ${TARGETS[*]})"
        seconds=${2:-60}
        shift; shift || true
        mkdir -p "$SCRATCH/logs"
        log="$SCRATCH/logs/$target.log"
        status=0
        fresh_artifacts
        run_target "$target" "$log" -max_total_time="$seconds" "$@" || status=$?
        tail -25 "$log"
        print_findings || true
        exit $status
        ;;
    repro)
        target=${1:-}
        is_target "$target" || die "usage: fuzz.sh repro TARGET FILE..."
        shift
        exec "$(bin_dir)/$target" "${COMMON_FLAGS[@]}" "$@"
        ;;
    merge)
        target=${1:-}
        dir=${2:-}
        is_target "$target" && [[ -d "$dir" ]] || die "usage: fuzz.sh merge TARGET DIR"
        "$(bin_dir)/$target" "${COMMON_FLAGS[@]}" -merge=1 "$FUZZ/Corpus/$target" "$dir"
        ;;
    ci)
        build_targets
        if [[ -n "${FUZZ_END:-}" ]]; then
            share=$(( (FUZZ_END - $(date +%s)) / ${#TARGETS[@]} ))
            if (( share < ${FUZZ_SECONDS:-30} )); then
                FUZZ_SECONDS=$(( share < 10 ? 10 : share ))
                echo "== the time left before FUZZ_END gives each target $FUZZ_SECONDS s"
            fi
        fi
        campaign ci
        ;;
    long)
        # Built first (at normal priority: builds take the machine's CPU lock, if any); then
        # one fuzzer process at a time at the lowest priority.
        build
        exec nice -n 19 "$0" long-only
        ;;
    long-only)
        campaign long
        ;;
    long-only-target)
        # One target's share of the long run, niced (to redo one after a fix).
        target=${1:-}
        is_target "$target" || die "usage: fuzz.sh long-only-target TARGET"
        mkdir -p "$SCRATCH/logs"
        log="$SCRATCH/logs/long-$target.log"
        fresh_artifacts
        status=0
        nice -n 19 "$0" run-raw "$target" "$log" -runs="$(long_runs "$target")" -timeout="${FUZZ_LONG_TIMEOUT:-300}" || status=$?
        read -r runs speed cov ft < <(stats "$log")
        echo "$target executions=$runs exec/s=$speed cov=$cov ft=$ft status=$status"
        print_findings || status=1
        exit $status
        ;;
    run-raw)
        run_target "$@"
        ;;
    *)
        sed -n '2,20p' "$0"
        exit 2
        ;;
esac
