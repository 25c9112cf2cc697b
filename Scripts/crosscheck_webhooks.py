#!/usr/bin/env python3
"""Cross-checks StoreGate's webhook signatures against independent verifiers from PyPI — the
Standard Webhooks reference library (`pip install standardwebhooks`) and Stripe's SDK
(`pip install stripe`, `stripe.WebhookSignature.verify_header`) — on real deliveries of a live
`storegate serve`, during a secret rotation, and checks that a receiver's 410 Gone disables
its endpoint until it is enabled again.

  python3 Scripts/crosscheck_webhooks.py --storegate BIN --storegate-dev DEVBIN

It writes the tour's demo data (`storegate-dev demo`), starts a Python HTTP receiver on a free
127.0.0.1 port and `storegate serve` (SQLite, a free port) with three endpoints pointing at it:

  * `rotating`: two secrets, both signing (a rotation) — the old one in the Standard Webhooks
    form (whsec_ + base64 of 24 random bytes), the new one made by `storegate webhook secret`;
  * `plain`: one plain secret (not whsec_): Standard Webhooks receivers are given
    `storegate webhook secret --receiver-form` of it (whsec_ + base64 of its bytes), Stripe's
    SDK the text itself;
  * `gone`: its receiver answers 410 Gone at first.

Then it records the tour's receipt for alice, a signed transaction for bob, a consumption and
the REFUND notification, and checks:

  * every delivery to `rotating` and `plain` verifies with `standardwebhooks.Webhook(secret)
    .verify(body, headers)` and with `stripe.WebhookSignature.verify_header(body,
    StoreGate-Signature, secret, tolerance=300)` — for `rotating` with each secret alone;
    `webhook-id` is the event id; a changed body, another secret and a changed `webhook-id`
    are refused by both libraries (so the checks are not vacuous); every event of the stream
    (`GET /v1/events`) arrives at both endpoints;
  * `storegate webhook verify` (both schemes) accepts one saved delivery;
  * `gone`: after the first 410 `GET /v1/webhooks/endpoints` shows it disabled, nothing more
    is sent for 3 s while new events are recorded, `GET /v1/webhooks/deliveries` keeps its
    deliveries pending; `storegate webhook enable gone` enables it, and then every event
    arrives, verified by both libraries, each account's in sequence order, the one answered
    410 first.

Exit status: 0 when every check passes, 1 on the first failing check, 2 when a library or a
binary is missing.
"""
import argparse
import base64
import http.client
import http.server
import json
import os
import secrets as random_secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import standardwebhooks
    import stripe
except ImportError as error:  # pragma: no cover
    print(f"crosscheck_webhooks: {error}; run: python3 -m pip install standardwebhooks stripe", file=sys.stderr)
    sys.exit(2)

API_KEY = "crosscheck-key-0123456789abcdef"
BUNDLE_ID = "com.example.storegate"
COINS = "com.example.storegate.coins"
WAIT = 20  # seconds for anything to arrive
QUIET = 3  # seconds a disabled endpoint must stay quiet


class CheckFailed(Exception):
    pass


class Run:
    def __init__(self):
        self.checks = 0

    def check(self, condition, message, detail=None):
        if not condition:
            raise CheckFailed(message + (f"\n    seen: {str(detail)[:1500]}" if detail is not None else ""))
        self.checks += 1
        print(f"  ok {self.checks:3d} {message}")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------------------------
# The receiver


class Receiver:
    """Remembers every request per path (raw body, headers, the status answered)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.received = {}  # path -> [(body bytes, {lowercase header: value}, status)]
        self.status = {}  # path -> status to answer (default 200)
        handler = self._handler()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def _handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                path = self.path
                with receiver.lock:
                    status = receiver.status.get(path, 200)
                    receiver.received.setdefault(path, []).append((body, headers, status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        return Handler

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def set_status(self, path, status):
        with self.lock:
            self.status[path] = status

    def requests(self, path):
        with self.lock:
            return list(self.received.get(path, []))

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------------------------
# The service


class API:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            headers = {"Authorization": f"Bearer {API_KEY}"}
            if body is not None:
                headers["Content-Type"] = "application/json"
            connection.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            return response.status, text
        finally:
            connection.close()

    def json(self, method, path, body=None):
        status, text = self.request(method, path, body)
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text


def start_server(storegate, workdir, demo, port, webhooks_file):
    env = {name: value for name, value in os.environ.items() if not name.startswith("STOREGATE_")}
    env.update({
        "STOREGATE_HOST": "127.0.0.1",
        "STOREGATE_PORT": str(port),
        "STOREGATE_DATABASE": "sqlite:" + os.path.join(workdir, "ledger.sqlite"),
        "STOREGATE_API_KEYS": f"crosscheck:{API_KEY}",
        "STOREGATE_BUNDLE_IDS": BUNDLE_ID,
        "STOREGATE_TRUST_DIR": os.path.join(demo, "trust"),
        "STOREGATE_ENVIRONMENTS": "production,sandbox,test",
        "STOREGATE_PRODUCTS_FILE": os.path.join(demo, "products.json"),
        "STOREGATE_WEBHOOKS_FILE": webhooks_file,
        "STOREGATE_LOG_LEVEL": "warning",
    })
    log = open(os.path.join(workdir, "server.log"), "wb")
    process = subprocess.Popen([storegate, "serve"], env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    api = API(port)
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CheckFailed(f"storegate serve exited with status {process.returncode} before it was ready")
        try:
            status, _ = api.request("GET", "/readyz")
            if status == 200:
                return process
        except OSError:
            pass
        time.sleep(0.2)
    raise CheckFailed(f"storegate serve did not answer GET /readyz with 200 within {WAIT} s")


def stop_server(process):
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=WAIT)


def server_log_tail(workdir, lines=40):
    try:
        with open(os.path.join(workdir, "server.log"), "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")
    except OSError:
        return ""


def wait_for(condition, seconds=WAIT):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


# --------------------------------------------------------------------------------------------
# Verification by the two libraries


def standard_verifies(body, headers, secret):
    try:
        webhook = standardwebhooks.Webhook(secret)
    except ValueError:  # binascii.Error: a secret the library cannot even read
        return False
    try:
        webhook.verify(body, headers)
        return True
    except standardwebhooks.webhooks.WebhookVerificationError:
        return False


def stripe_verifies(body, headers, secret):
    try:
        return stripe.WebhookSignature.verify_header(body, headers.get("storegate-signature"), secret, tolerance=300) is True
    except stripe.SignatureVerificationError:
        return False


def check_deliveries(run, name, requests, standard_secrets, stripe_secrets, events_by_id):
    """Every request verifies with each secret alone, by both libraries; ids and bodies are the events'."""
    for body, headers, _ in requests:
        event = json.loads(body)
        if headers.get("webhook-id") != event.get("id") or event.get("id") not in events_by_id:
            raise CheckFailed(f"{name}: webhook-id {headers.get('webhook-id')} is not the event id {event.get('id')} of the stream")
        for secret in standard_secrets:
            if not standard_verifies(body, headers, secret):
                raise CheckFailed(f"{name}: standardwebhooks refused event {event['id']} ({event['type']}); headers {sorted(headers)}")
        for secret in stripe_secrets:
            if not stripe_verifies(body, headers, secret):
                raise CheckFailed(f"{name}: stripe.WebhookSignature.verify_header refused event {event['id']} ({event['type']}); "
                                  f"StoreGate-Signature has {headers.get('storegate-signature', '').count('v1=')} v1")
    run.check(True, f"{name}: {len(requests)} deliveries verify with standardwebhooks and stripe, each of {len(standard_secrets)} secret(s) alone")


def check_refusals(run, name, request, standard_secret, stripe_secret):
    body, headers, _ = request
    stranger = "whsec_" + base64.b64encode(random_secrets.token_bytes(32)).decode()
    changed = body.replace(b'"account":"', b'"account":"x', 1)
    run.check(changed != body, f"{name}: the body can be changed for the negative checks")
    moved = dict(headers)
    moved["webhook-id"] = headers["webhook-id"][:-1] + ("0" if headers["webhook-id"][-1] != "0" else "1")
    run.check(not standard_verifies(changed, headers, standard_secret) and not stripe_verifies(changed, headers, stripe_secret),
              f"{name}: both libraries refuse a changed body")
    run.check(not standard_verifies(body, headers, stranger) and not stripe_verifies(body, headers, stranger),
              f"{name}: both libraries refuse another secret")
    run.check(not standard_verifies(body, moved, standard_secret), f"{name}: standardwebhooks refuses a changed webhook-id")


def stream(api):
    status, page = api.json("GET", "/v1/events?after=0&limit=1000")
    if status != 200:
        raise CheckFailed(f"GET /v1/events answered {status}: {page}")
    return page["events"]


def endpoint_states(api):
    status, page = api.json("GET", "/v1/webhooks/endpoints")
    if status != 200:
        raise CheckFailed(f"GET /v1/webhooks/endpoints answered {status}: {page}")
    return {entry["name"]: entry for entry in page["endpoints"]}


# --------------------------------------------------------------------------------------------
# The test


def run_test(args, run, workdir, state):
    demo = os.path.join(workdir, "demo")
    result = subprocess.run([args.storegate_dev, "demo", "--out", demo], capture_output=True, timeout=60)
    run.check(result.returncode == 0, "storegate-dev demo wrote the tour's data", result.stderr.decode(errors="replace"))
    with open(os.path.join(demo, "receipt.json")) as f:
        receipt_body = f.read()
    with open(os.path.join(demo, "transaction.json")) as f:
        transaction = json.load(f)
    transaction["account"] = "bob"
    with open(os.path.join(demo, "consume.json")) as f:
        consume_body = f.read()
    with open(os.path.join(demo, "notification-refund.json")) as f:
        notification_body = f.read()

    # The secrets: the old one whsec_ + base64 of 24 random bytes, the new one from the CLI,
    # and a plain one whose Standard Webhooks form the CLI prints.
    old = "whsec_" + base64.b64encode(random_secrets.token_bytes(24)).decode()
    result = subprocess.run([args.storegate, "webhook", "secret"], capture_output=True, timeout=30, text=True)
    new = result.stdout.strip()
    run.check(result.returncode == 0 and new.startswith("whsec_") and len(base64.b64decode(new[6:])) == 32,
              "storegate webhook secret prints whsec_ + base64 of 32 bytes", result.stdout + result.stderr)
    plain = "plain-" + random_secrets.token_hex(16)
    env = dict(os.environ, STOREGATE_WEBHOOK_SECRET=plain)
    result = subprocess.run([args.storegate, "webhook", "secret", "--receiver-form"], capture_output=True, timeout=30, text=True, env=env)
    plain_standard = result.stdout.strip()
    run.check(result.returncode == 0 and plain_standard == "whsec_" + base64.b64encode(plain.encode()).decode(),
              "storegate webhook secret --receiver-form prints whsec_ + base64 of a plain secret", result.stdout + result.stderr)
    gone_secret = "whsec_" + base64.b64encode(random_secrets.token_bytes(32)).decode()

    receiver = Receiver()
    state["receiver"] = receiver
    receiver.set_status("/gone", 410)
    webhooks_file = os.path.join(workdir, "webhooks.json")
    with open(webhooks_file, "w") as f:
        json.dump({"endpoints": [
            {"name": "rotating", "url": receiver.url("/rotating"), "secrets": [old, new]},
            {"name": "plain", "url": receiver.url("/plain"), "secret": plain},
            {"name": "gone", "url": receiver.url("/gone"), "secrets": [gone_secret]},
        ]}, f)

    port = free_port()
    state["server"] = start_server(args.storegate, workdir, demo, port, webhooks_file)
    api = API(port)
    print(f"  storegate serve on http://127.0.0.1:{port}, receiver on {receiver.url('/')}")
    states = endpoint_states(api)
    run.check(sorted(states) == ["gone", "plain", "rotating"] and all(s["state"] == "enabled" for s in states.values()),
              "GET /v1/webhooks/endpoints lists the three endpoints, enabled", states)
    run.check(states["rotating"]["secrets"] == ["standard", "standard"] and states["plain"]["secrets"] == ["plain"],
              "the endpoints show their secrets' forms, never the secrets", states)
    time.sleep(1.5)  # new endpoints start at the end of the stream: let the deliverers take their place

    status, text = api.request("POST", "/v1/receipts/verify", receipt_body)
    run.check(status == 200, "POST /v1/receipts/verify recorded the tour's receipt for alice", f"{status} {text[:300]}")
    status, text = api.request("POST", "/v1/transactions/verify", json.dumps(transaction))
    run.check(status == 200, "POST /v1/transactions/verify recorded a signed transaction for bob", f"{status} {text[:300]}")

    # The gone endpoint: its first delivery is answered 410, and it is disabled.
    run.check(wait_for(lambda: endpoint_states(api)["gone"]["state"] == "disabled"),
              "after a 410, GET /v1/webhooks/endpoints shows 'gone' disabled", endpoint_states(api))
    gone = endpoint_states(api)["gone"]
    run.check(gone.get("disabledStatus") == 410 and "disabledAt" in gone and "disabledEventId" in gone,
              "the disabled endpoint says when, why and which event", gone)
    first_gone = receiver.requests("/gone")
    run.check(all(status == 410 for _, _, status in first_gone) and 1 <= len(first_gone) <= 2,
              "'gone' received one delivery per account, answered 410", [(json.loads(b)["account"], s) for b, _, s in first_gone])

    status, text = api.request("POST", f"/v1/accounts/alice/consumables/{COINS}/consume", consume_body)
    run.check(status == 200, "POST …/consume recorded a consumption for alice", f"{status} {text[:300]}")
    status, text = api.request("POST", "/v1/notifications/apple", notification_body)
    run.check(status == 200 and "REFUND" in text, "POST /v1/notifications/apple stored the REFUND", f"{status} {text[:300]}")
    events = stream(api)
    events_by_id = {event["id"]: event for event in events}
    run.check(len(events) >= 5 and {e["account"] for e in events} == {"alice", "bob"}, f"the stream holds {len(events)} events of alice and bob",
              [(e["sequence"], e["type"], e["account"]) for e in events])

    # rotating and plain: every event arrives, and verifies with both libraries.
    for path in ("/rotating", "/plain"):
        run.check(wait_for(lambda: {json.loads(b)["id"] for b, _, s in receiver.requests(path) if s == 200} >= set(events_by_id)),
                  f"every event of the stream reached {path}", len(receiver.requests(path)))
    rotating = receiver.requests("/rotating")
    # Read the stream again: the entitlement tracker appends entitlement.changed a moment after
    # each change, and those reached the endpoints too (every delivered event is in the stream).
    events_by_id = {event["id"]: event for event in stream(api)}
    check_deliveries(run, "rotating (old secret)", rotating, [old], [old], events_by_id)
    check_deliveries(run, "rotating (new secret)", rotating, [new], [new], events_by_id)
    run.check(all(len(h["webhook-signature"].split(" ")) == 2 and h["storegate-signature"].count(",v1=") == 2 for _, h, _ in rotating),
              "each rotating delivery carries two signatures in each scheme")
    plain_requests = receiver.requests("/plain")
    check_deliveries(run, "plain", plain_requests, [plain_standard], [plain], events_by_id)
    check_refusals(run, "rotating", rotating[0], new, new)
    check_refusals(run, "plain", plain_requests[0], plain_standard, plain)
    run.check(not standard_verifies(plain_requests[0][0], plain_requests[0][1], "whsec_" + plain),
              "standardwebhooks given whsec_ + the plain text (not its base64) refuses it, as docs/webhooks-signatures.md warns")

    # The CLI verifies a saved delivery in both schemes.
    body, headers, _ = rotating[-1]
    body_file = os.path.join(workdir, "delivery.json")
    with open(body_file, "wb") as f:
        f.write(body)
    env = dict(os.environ, STOREGATE_WEBHOOK_SECRET=old)
    result = subprocess.run([args.storegate, "webhook", "verify", "--signature", headers["storegate-signature"], "--body", body_file],
                            capture_output=True, text=True, timeout=30, env=env)
    run.check(result.returncode == 0 and result.stdout.startswith("valid"), "storegate webhook verify accepts StoreGate-Signature", result.stdout + result.stderr)
    result = subprocess.run([args.storegate, "webhook", "verify", "--signature", headers["webhook-signature"], "--webhook-id", headers["webhook-id"],
                             "--webhook-timestamp", headers["webhook-timestamp"], "--body", body_file],
                            capture_output=True, text=True, timeout=30, env=env)
    run.check(result.returncode == 0 and result.stdout.startswith("valid"), "storegate webhook verify accepts the Standard Webhooks headers", result.stdout + result.stderr)
    with open(body_file, "wb") as f:
        f.write(body + b" ")
    result = subprocess.run([args.storegate, "webhook", "verify", "--signature", headers["webhook-signature"], "--webhook-id", headers["webhook-id"],
                             "--webhook-timestamp", headers["webhook-timestamp"], "--body", body_file],
                            capture_output=True, text=True, timeout=30, env=env)
    run.check(result.returncode == 1, "storegate webhook verify refuses a changed body (exit 1)", result.stdout + result.stderr)

    # gone: quiet while disabled, its deliveries pending.
    time.sleep(QUIET)
    run.check(len(receiver.requests("/gone")) == len(first_gone), f"nothing more reached 'gone' in {QUIET} s while disabled",
              len(receiver.requests("/gone")))
    status, page = api.json("GET", "/v1/webhooks/deliveries?endpoint=gone&limit=1000")
    events = stream(api)  # with the entitlement.changed events the tracker appended since
    run.check(status == 200 and len(page["deliveries"]) == len(events) and all(d["status"] == "pending" for d in page["deliveries"]),
              "GET /v1/webhooks/deliveries keeps every delivery to 'gone' pending", page)
    run.check(sum(1 for d in page["deliveries"] if d.get("lastStatus") == 410) == len(first_gone), "the deliveries answered 410 say so", page)

    receiver.set_status("/gone", 200)
    env = dict(os.environ, STOREGATE_API_KEY=API_KEY)
    result = subprocess.run([args.storegate, "webhook", "enable", "gone", "--url", f"http://127.0.0.1:{port}"],
                            capture_output=True, text=True, timeout=30, env=env)
    run.check(result.returncode == 0 and json.loads(result.stdout).get("wasDisabled") is True,
              "storegate webhook enable gone: enabled, it was disabled", result.stdout + result.stderr)
    run.check(endpoint_states(api)["gone"]["state"] == "enabled", "GET /v1/webhooks/endpoints shows 'gone' enabled again")
    run.check(wait_for(lambda: {json.loads(b)["id"] for b, _, s in receiver.requests("/gone") if s == 200} >= set(events_by_id)),
              "after enabling, every event reached 'gone'", len(receiver.requests("/gone")))
    resumed = [request for request in receiver.requests("/gone")[len(first_gone):]]
    events_by_id = {event["id"]: event for event in stream(api)}
    check_deliveries(run, "gone (after enabling)", resumed, [gone_secret], [gone_secret], events_by_id)
    for account in ("alice", "bob"):
        firsts = []
        for body, _, _ in resumed:
            event = json.loads(body)
            if event["account"] == account and event["sequence"] not in firsts:
                firsts.append(event["sequence"])
        run.check(firsts == sorted(firsts), f"'gone' received {account}'s events in sequence order after enabling", firsts)
        held = [json.loads(b)["sequence"] for b, _, _ in first_gone if json.loads(b)["account"] == account]
        run.check(not held or firsts[0] == held[0], f"{account}'s delivery answered 410 went first", (held, firsts))
    status, page = api.json("GET", "/v1/webhooks/deliveries?endpoint=gone&status=delivered&limit=1000")
    run.check(status == 200 and len(page["deliveries"]) == len(events), "every delivery to 'gone' is delivered", page)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--storegate", required=True, help="the storegate binary")
    parser.add_argument("--storegate-dev", required=True, help="the storegate-dev binary")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (server log, ledger)")
    args = parser.parse_args()
    args.storegate = os.path.abspath(args.storegate)
    args.storegate_dev = os.path.abspath(args.storegate_dev)
    for binary in (args.storegate, args.storegate_dev):
        if not os.access(binary, os.X_OK):
            print(f"crosscheck_webhooks: {binary} is not an executable; build it (swift build --product storegate / storegate-dev)", file=sys.stderr)
            return 2
    print(f"webhook cross-check: standardwebhooks {getattr(standardwebhooks, '__version__', '?')}, stripe {stripe.VERSION}")
    run = Run()
    workdir = tempfile.mkdtemp(prefix="storegate-webhooks-")
    state = {}
    try:
        run_test(args, run, workdir, state)
    except CheckFailed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        tail = server_log_tail(workdir)
        if tail:
            print("server log (tail):\n" + tail, file=sys.stderr)
        return 1
    finally:
        stop_server(state.get("server"))
        if state.get("receiver"):
            state["receiver"].stop()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"webhook cross-check: all {run.checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
