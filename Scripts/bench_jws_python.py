#!/usr/bin/env python3
"""Times Apple's app-store-server-library SignedDataVerifier (offline) on the JWS that
`storegate bench jws` times, so both figures come from the same run on the same machine.

  python3 Scripts/bench_jws_python.py --fixtures ../shared/fixtures [--iterations 300] [--json]

Measured, each as the median of --iterations calls:
  transaction   verify_and_decode_signed_transaction on
                jws/gopay-sandbox-2022-11-signed-transaction-info-a.jws
  notification  verify_and_decode_notification on jws/gopay-sandbox-2022-03-notification-did-renew.jws,
                then verify_and_decode_signed_transaction and verify_and_decode_renewal_info on the
                signed data it nests (StoreGate verifies those too)

Offline, the library validates the chain on every call (it caches only with online checks).
The notification has no signedDate of its own, so the library would check its chain at the
current time, where the leaf has expired; the library's clock is pinned to the nested
signedDate instead, the time StoreGate checks it at.

Exit status 0 with the figures; 2 when the library or the fixtures are missing.
"""
import argparse
import base64
import json
import os
import statistics
import sys
import time
import types

TRANSACTION = "jws/gopay-sandbox-2022-11-signed-transaction-info-a.jws"
TRANSACTION_BUNDLE = "Com.VoiceRecording.Telephone"
NOTIFICATION = "jws/gopay-sandbox-2022-03-notification-did-renew.jws"
NOTIFICATION_BUNDLE = "com.audaos.audarecorder"
ROOT = "certs/AppleRootCA-G3.cer"


def payload_of(jws):
    part = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", default=os.environ.get("STOREGATE_FIXTURES", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "fixtures")))
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--json", action="store_true", help="print one JSON object (for storegate bench)")
    args = parser.parse_args()

    try:
        from importlib.metadata import version
        from appstoreserverlibrary import signed_data_verifier as sdv
        from appstoreserverlibrary.models.Environment import Environment
    except ImportError as error:
        print(f"app-store-server-library is not installed ({error}); pip install app-store-server-library", file=sys.stderr)
        return 2

    def read(relative, mode="r"):
        with open(os.path.join(args.fixtures, relative), mode) as handle:
            return handle.read()

    try:
        root = read(ROOT, "rb")
        transaction = read(TRANSACTION).strip()
        notification = read(NOTIFICATION).strip()
    except OSError as error:
        print(f"fixtures missing: {error}", file=sys.stderr)
        return 2

    outer = payload_of(notification)
    nested_transaction = outer["data"]["signedTransactionInfo"]
    nested_renewal = outer["data"]["signedRenewalInfo"]
    pinned = max(payload_of(nested_transaction)["signedDate"], payload_of(nested_renewal)["signedDate"]) / 1000
    # The library reads time.time() for undated payloads: pin it to the nested signedDate.
    sdv.time = types.SimpleNamespace(time=lambda: pinned)

    def verifier(bundle):
        return sdv.SignedDataVerifier([root], False, Environment.SANDBOX, bundle)

    transaction_verifier = verifier(TRANSACTION_BUNDLE)
    notification_verifier = verifier(NOTIFICATION_BUNDLE)

    def verify_transaction():
        transaction_verifier.verify_and_decode_signed_transaction(transaction)

    def verify_notification():
        notification_verifier.verify_and_decode_notification(notification)
        notification_verifier.verify_and_decode_signed_transaction(nested_transaction)
        notification_verifier.verify_and_decode_renewal_info(nested_renewal)

    def median_us(body, iterations):
        body()  # warm-up; also proves it verifies
        samples = []
        for _ in range(iterations):
            start = time.perf_counter_ns()
            body()
            samples.append((time.perf_counter_ns() - start) / 1000)
        return statistics.median(samples)

    figures = {
        "version": version("app-store-server-library"),
        "transaction": median_us(verify_transaction, args.iterations),
        "notification": median_us(verify_notification, max(1, args.iterations // 2)),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"app-store-server-library {figures['version']}, SignedDataVerifier offline")
        print(f"  signed transaction: {figures['transaction']:.1f} µs median ({1e6 / figures['transaction']:.0f}/s)")
        print(f"  notification + nested: {figures['notification']:.1f} µs median ({1e6 / figures['notification']:.0f}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
