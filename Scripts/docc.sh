#!/usr/bin/env bash
# The DocC catalogs of the libraries people import (Sources/<Module>/Docs.docc), built from the
# package's symbol graphs with warnings as errors: a broken ``Symbol`` link, a topic naming a
# type that is gone, or a malformed doc comment fails. CI runs this after the debug tests, so
# the symbol graphs come from the build already there (.ci/run).
#
#   Scripts/docc.sh                    every catalog, archives in .build/docc/<Module>.doccarchive
#   Scripts/docc.sh StoreGateLedger    one catalog
#
# SWIFT names the swift command (default `swift`; on a shared machine, e.g. SWIFT=swiftlock).
set -euo pipefail
cd "$(dirname "$0")/.."

swift_cmd=${SWIFT:-swift}
docc_cmd=${DOCC:-$(command -v docc || echo "$(dirname "$(command -v swift)")/docc")}
modules=("$@")
if [ ${#modules[@]} -eq 0 ]; then
    modules=(StoreGateCore StoreGateReceipt StoreGateSignedData StoreGateLedger)
fi
out=.build/docc

# Public symbols only (what a user of the library sees); members synthesized from protocols'
# default implementations are left out (their documentation is the standard library's).
# SwiftPM also tries the test-discovery modules, which only a test build makes, and exits 1
# when they are missing: that error alone is accepted; the graphs used must be this run's.
mkdir -p "$out"
marker="$out/.dump-started"
touch "$marker"
status=0
dump=$($swift_cmd package dump-symbol-graph --minimum-access-level public --skip-synthesized-members 2>&1) || status=$?
if [ "$status" -ne 0 ]; then
    other=$(echo "$dump" | grep '^error:' | grep -v "Failed to emit symbol graph for 'StoreGatePackage\(Discovered\)\{0,1\}Tests'" || true)
    if [ -n "$other" ]; then
        echo "$dump" >&2; exit "$status"
    fi
fi
graphs=$(echo "$dump" | sed -n 's/^Files written to //p' | tail -1)
if [ -z "$graphs" ] || [ ! -d "$graphs" ]; then
    echo "$dump" >&2; echo "docc.sh: no symbol graphs written" >&2; exit 1
fi

for module in "${modules[@]}"; do
    catalog="Sources/$module/Docs.docc"
    [ -d "$catalog" ] || { echo "docc.sh: $catalog does not exist" >&2; exit 1; }
    # The module's own graph and its extensions of other modules' types, nothing else: DocC
    # builds one module per archive.
    own="$out/symbol-graphs/$module"
    rm -rf "$own" && mkdir -p "$own"
    if [ ! "$graphs/$module.symbols.json" -nt "$marker" ]; then
        echo "docc.sh: no fresh symbol graph for $module in $graphs" >&2; exit 1
    fi
    cp "$graphs/$module.symbols.json" "$own/"
    find "$graphs" -maxdepth 1 -name "$module@*.symbols.json" -exec cp {} "$own/" \;
    echo "== docc: $module"
    "$docc_cmd" convert "$catalog" \
        --additional-symbol-graph-dir "$own" \
        --fallback-display-name "$module" --fallback-bundle-identifier "storegate.$module" \
        --output-path "$out/$module.doccarchive" \
        --warnings-as-errors
done
echo "DocC: ${modules[*]} built without warnings ($out)"
