#!/usr/bin/env python3
"""Cross-checks StoreGate's JWS verification and decoding against Apple's own Python library
(app-store-server-library, `pip install app-store-server-library`) on every fixture JWS.

  python3 Scripts/crosscheck_jws.py --storegate .build/debug/storegate [--fixtures ../shared/fixtures]

For each file in <fixtures>/jws:
  * Apple's SignedDataVerifier (enable_online_checks=False) verifies and decodes it, given the
    same root StoreGate trusts: Apple Root CA - G3 for real Apple JWS, the library's own test CA
    (certs/apple-asslib-testCA.der) for its mock JWS, and Environment.XCODE for Xcode JWS (where Apple's library skips
    the signature; StoreGate checks it against the Xcode certificate the JWS carries);
  * `storegate verify --json` verifies it with the same bundle id and environment
    (`Test` / `Xcode` for data anchored by an opt-in anchor), and `storegate inspect` decodes it;
  * the verdicts must agree, and every decoded field must be equal: each field Apple's model
    has against StoreGate's, each field StoreGate decodes beyond Apple's model against the raw
    payload, and every member of the raw payload must be decoded by StoreGate. Notifications
    are compared with their nested signed transaction and renewal info.
Dates: Apple's library truncates fractional milliseconds to integers; values within 1 ms agree.
A notification without signedDate is checked by Apple's library at the current time (where
the real leaf has expired); its clock is pinned to the nested signedDate, which StoreGate uses.

Exit status: 0 when everything agrees, 1 on any disagreement, 2 when the library, the
fixtures or the storegate binary are missing.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types

from crosscheck_common import PACKAGE_ROOT, argument_parser, b64url_json, library_missing, storegate_binary


def raw_payload(jws):
    return b64url_json(jws.split(".")[1])


# The members StoreGate's payload step requires, because the ledger records them.
LEDGER_MEMBERS = {
    "signed_transaction": ("bundleId", "transactionId", "originalTransactionId", "productId", "purchaseDate", "quantity", "signedDate"),
    "signed_renewal_info": ("originalTransactionId", "productId", "signedDate"),
}


def main():
    parser = argument_parser(__doc__)
    parser.add_argument("--fixtures", default=os.environ.get("STOREGATE_FIXTURES", os.path.join(PACKAGE_ROOT, "..", "shared", "fixtures")))
    args = parser.parse_args()

    try:
        from appstoreserverlibrary import signed_data_verifier as sdv
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
    except ImportError as error:
        return library_missing(error)

    storegate = storegate_binary(args.storegate)
    if storegate is None:
        return 2
    jws_dir = os.path.join(args.fixtures, "jws")
    certs_dir = os.path.join(args.fixtures, "certs")
    if not os.path.isdir(jws_dir):
        print(f"crosscheck: fixtures not found at {args.fixtures} (set STOREGATE_FIXTURES)", file=sys.stderr)
        return 2

    def cert(name):
        with open(os.path.join(certs_dir, name), "rb") as handle:
            return handle.read()

    apple_root = cert("AppleRootCA-G3.cer")
    scratch = tempfile.mkdtemp(prefix="storegate-crosscheck-")

    def trust_dir(name, der):
        """A --trust-dir holding one opt-in anchor."""
        path = os.path.join(scratch, name)
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "anchor.der"), "wb") as handle:
            handle.write(der)
        return path

    real_time = time.time
    stricter = None
    notes = []
    problems = []
    rows = []

    def python_verify(kind, jws, config, clock):
        """Apple's verifier: (True, dict) or (False, status)."""
        sdv.time = types.SimpleNamespace(time=(lambda: clock) if clock is not None else real_time)
        try:
            verifier = sdv.SignedDataVerifier(config["roots"], False, config["python_env"], config["bundle"], config["app_apple_id"])
            # Apple's own tests turn OpenSSL's X509_STRICT off for the mock chains, which
            # strict mode refuses (their test certificates lack extensions it requires).
            verifier._chain_verifier.enable_strict_checks = config.get("strict", True)
            method = {
                "signed_transaction": verifier.verify_and_decode_signed_transaction,
                "signed_renewal_info": verifier.verify_and_decode_renewal_info,
                "app_transaction": verifier.verify_and_decode_app_transaction,
                "notification": verifier.verify_and_decode_notification,
            }[kind]
            model = method(jws)
            return True, _get_cattrs_converter(type(model)).unstructure(model)
        except sdv.VerificationException as error:
            return False, error.status.name
        finally:
            sdv.time = time

    def storegate_run(*arguments):
        result = subprocess.run([storegate, *arguments], capture_output=True, text=True)
        return result.returncode, result.stdout, result.stderr

    def equal(a, b):
        if isinstance(a, bool) or isinstance(b, bool):
            return a is b or a == b and type(a) is type(b)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            return abs(a - b) < 1
        if isinstance(a, str) and isinstance(b, str):
            return a == b or a.lower() == b.lower() and len(a) == 36  # UUIDs
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
        return a == b

    def compare(label, apple, ours, raw):
        """Every field of Apple's model, every extra field of ours, every raw member."""
        count = 0
        for key, value in apple.items():
            count += 1
            if key not in ours:
                problems.append(f"{label}: {key} decoded by Apple's library ({value!r}) but not by StoreGate")
            elif isinstance(value, dict):
                count += compare(f"{label}.{key}", value, ours[key], raw.get(key, {}) if isinstance(raw, dict) else {}) - 1
            elif not equal(value, ours[key]):
                problems.append(f"{label}: {key}: Apple {value!r} != StoreGate {ours[key]!r}")
        for key, value in ours.items():
            if key in apple:
                continue
            count += 1
            if key not in raw:
                problems.append(f"{label}: StoreGate decodes {key} ({value!r}), absent from the payload")
            elif not equal(value, raw[key]):
                problems.append(f"{label}: {key}: StoreGate {value!r} != payload {raw[key]!r} (not in Apple's model)")
        for key in raw:
            if key not in ours and raw[key] is not None:
                problems.append(f"{label}: payload member {key} is not decoded by StoreGate")
        return count

    names = sorted(name for name in os.listdir(jws_dir) if name.endswith(".jws"))
    for name in names:
        with open(os.path.join(jws_dir, name)) as handle:
            jws = handle.read().strip()
        raw = raw_payload(jws)
        code, out, err = storegate_run("inspect", os.path.join(jws_dir, name))
        inspected = json.loads(out) if code == 0 else None
        kind = inspected["kind"] if inspected else ("notification" if "notificationType" in raw else "signed_transaction")

        header = b64url_json(jws.split(".")[0])
        chain = [base64.b64decode(item) for item in header.get("x5c", [])]
        if name.startswith("apple-asslib-mock-"):
            # Apple's own test CA (certs/apple-asslib-testCA.der) as the one anchor, as in Apple's
            # library tests. Some mocks list it in x5c[2], others a re-issued copy (same name and
            # key, other validity): to RFC 5280 the same anchor, and both verifiers accept both.
            root = cert("apple-asslib-testCA.der")
            config = dict(roots=[root], python_env=Environment.SANDBOX, storegate_env="test", trust=trust_dir(name, root), bundle="com.example",
                          strict=False)
        elif name.startswith("apple-asslib-xcode-"):
            # Xcode's self-signed certificate, found only inside its JWS. Apple's library does
            # not check Xcode signatures at all; StoreGate checks them against this anchor.
            config = dict(roots=[apple_root], python_env=Environment.XCODE, storegate_env="xcode", trust=trust_dir(name, chain[0]),
                          bundle=raw.get("bundleId", "com.example.naturelab.backyardbirds.example"))
        else:
            subject = raw.get("data", raw)
            environment = subject.get("environment", "Sandbox")
            config = dict(roots=[apple_root], python_env=Environment(environment), storegate_env=environment.lower(), trust=None,
                          bundle=subject.get("bundleId", "com.example.renewal-info-has-no-bundle"))
        subject = raw.get("data") or raw.get("summary") or raw
        production = config["python_env"] == Environment.PRODUCTION
        config["app_apple_id"] = subject.get("appAppleId", 1234567890) if production else None

        # An undated notification: Apple's library would check it at the current time.
        clock = None
        if "signedDate" not in raw and "receiptCreationDate" not in raw and isinstance(raw.get("data"), dict):
            nested = [raw["data"].get(key) for key in ("signedTransactionInfo", "signedRenewalInfo")]
            dates = [raw_payload(item).get("signedDate") for item in nested if item]
            if dates:
                clock = max(dates) / 1000

        apple_ok, apple_result = python_verify(kind, jws, config, clock)
        verify_args = ["verify", os.path.join(jws_dir, name), "--json", "--bundle-id", config["bundle"], "--environment", config["storegate_env"]]
        if config["trust"]:
            verify_args += ["--trust-dir", config["trust"]]
        if production:
            verify_args += ["--app-apple-id", str(config["app_apple_id"])]
        code, out, err = storegate_run(*verify_args)
        try:
            verdict = json.loads(out)
        except json.JSONDecodeError:
            problems.append(f"{name}: storegate verify printed no JSON (exit {code}): {err.strip()[:200]}")
            continue
        ours_ok = verdict["valid"]
        fields = 0
        error = verdict.get("error") or {}
        if apple_ok and not ours_ok and error.get("code") == "missing_field" \
                and error.get("field") in LEDGER_MEMBERS.get(kind, ()) and error.get("field") not in raw:
            # Stricter on purpose: a payload without a member the ledger needs (Apple's minimal
            # mocks carry no quantity or originalTransactionId) names no purchase; StoreGate
            # refuses it in the payload step. The decoded payloads must still agree.
            fields += compare(name, apple_result, verdict["payload"], raw)
            notes.append(f"stricter than Apple on purpose: {name} has no {error['field']}: Apple's library: valid; StoreGate: missing_field")
        elif apple_ok != ours_ok:
            problems.append(f"{name}: Apple's library says {'valid' if apple_ok else apple_result}, StoreGate says "
                            f"{'valid' if ours_ok else verdict['error']['code'] + ': ' + verdict['error']['reason']}")
        elif apple_ok:
            fields += compare(name, apple_result, verdict["payload"], raw)
            if inspected is not None:
                fields += compare(f"{name} (inspect)", apple_result, inspected["payload"], raw)
            if kind == "notification":
                for member, nested_kind in (("signedTransactionInfo", "signed_transaction"), ("signedRenewalInfo", "signed_renewal_info")):
                    signed = raw.get("data", {}).get(member)
                    if not signed:
                        continue
                    nested_ok, nested_apple = python_verify(nested_kind, signed, config, None)
                    ours_nested = (verdict.get("nested") or {}).get(member)
                    if not nested_ok or ours_nested is None:
                        problems.append(f"{name}.{member}: Apple {'valid' if nested_ok else nested_apple}, StoreGate {'valid' if ours_nested else 'missing'}")
                        continue
                    fields += compare(f"{name}.{member}", nested_apple, ours_nested["payload"], raw_payload(signed))
        elif inspected is not None:
            # Both refuse; the unverified decodings must still agree.
            model = {"signed_transaction": "JWSTransactionDecodedPayload", "signed_renewal_info": "JWSRenewalInfoDecodedPayload",
                     "app_transaction": "AppTransaction", "notification": "ResponseBodyV2DecodedPayload"}[kind]
            module = __import__(f"appstoreserverlibrary.models.{model}", fromlist=[model])
            model_type = getattr(module, model)
            converter = _get_cattrs_converter(model_type)
            fields += compare(f"{name} (unverified)", converter.unstructure(converter.structure(raw, model_type)), inspected["payload"], raw)
        outcome = "valid" if ours_ok else verdict["error"]["code"]
        rows.append((name, kind, "valid" if apple_ok else apple_result, outcome, fields, " (Apple's clock pinned to nested signedDate)" if clock else ""))

    # Where StoreGate is stricter on purpose: Apple's library does not check Xcode signatures
    # at all, so an Xcode transaction edited after signing passes it; StoreGate must refuse it.
    xcode_name = "apple-asslib-xcode-signed-transaction.jws"
    xcode_path = os.path.join(jws_dir, xcode_name)
    if os.path.exists(xcode_path):
        with open(xcode_path) as handle:
            original = handle.read().strip()
        parts = original.split(".")
        edited_payload = raw_payload(original)
        edited_payload["productId"] = "pass.premium.lifetime"
        parts[1] = base64.urlsafe_b64encode(json.dumps(edited_payload).encode()).decode().rstrip("=")
        edited = ".".join(parts)
        edited_path = os.path.join(scratch, "xcode-edited.jws")
        with open(edited_path, "w") as handle:
            handle.write(edited)
        chain = [base64.b64decode(item) for item in b64url_json(parts[0])["x5c"]]
        config = dict(roots=[apple_root], python_env=Environment.XCODE, bundle=edited_payload["bundleId"], app_apple_id=None)
        apple_ok, _ = python_verify("signed_transaction", edited, config, None)
        code, out, err = storegate_run("verify", edited_path, "--json", "--bundle-id", edited_payload["bundleId"],
                                       "--environment", "xcode", "--trust-dir", trust_dir("xcode-edited", chain[0]))
        verdict = json.loads(out) if out.strip() else {"valid": None, "error": {"code": err.strip()}}
        ours = "valid" if verdict["valid"] else verdict["error"]["code"]
        stricter = (f"stricter than Apple on purpose: {xcode_name} with its payload edited: "
                    f"Apple's library (Xcode, signature not checked): {'valid' if apple_ok else 'refused'}; StoreGate: {ours}")
        if verdict["valid"] is not False or verdict["error"]["code"] != "signature_invalid":
            problems.append(f"an Xcode transaction edited after signing was not refused with signature_invalid by StoreGate ({ours})")

    shutil.rmtree(scratch, ignore_errors=True)
    width = max(len(row[0]) for row in rows) if rows else 10
    for name, kind, apple, ours, fields, note in rows:
        print(f"{name.ljust(width)}  {kind:<20} Apple: {apple:<24} StoreGate: {ours:<32} {fields:3d} field comparisons{note}")
    if stricter:
        print("\n" + stricter)
    for note in notes:
        print(note)
    if problems:
        print(f"\nDISAGREEMENTS ({len(problems)}):")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"\nStoreGate agrees with Apple's library on all {len(rows)} fixture JWS ({sum(row[4] for row in rows)} field comparisons).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
