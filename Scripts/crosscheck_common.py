"""What StoreGate's cross-checks against Apple's app-store-server-library share: the command
line (`--storegate`, `--verbose`), finding the storegate binary, the library's install hint
and base64url JSON. Imported by crosscheck_jws.py and crosscheck_offers.py (run from any
directory: Python puts the script's own folder first on the path).
"""
import argparse
import base64
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)


def b64url_json(part):
    """The JSON of one base64url part of a JWS (padding restored)."""
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def argument_parser(doc):
    """A parser with the cross-checks' common options; a script adds its own before parsing."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--storegate", help="the storegate binary (default: .build/release/storegate, else .build/debug/storegate)")
    parser.add_argument("--verbose", action="store_true")
    return parser


def library_missing(error):
    """Says how to install Apple's library; the exit status for a missing tool (2)."""
    print(f"crosscheck: app-store-server-library is not installed ({error}); run: pip install app-store-server-library", file=sys.stderr)
    return 2


def storegate_binary(path):
    """`path`, else the package's release build, else its debug build; None when none of them
    is executable (after saying so on stderr)."""
    storegate = path
    if storegate is None:
        for candidate in ("release", "debug"):
            built = os.path.join(PACKAGE_ROOT, ".build", candidate, "storegate")
            if os.access(built, os.X_OK):
                storegate = built
                break
    if storegate is None or not os.access(storegate, os.X_OK):
        print("crosscheck: no storegate binary; build it (swift build --product storegate) or pass --storegate", file=sys.stderr)
        return None
    return storegate
