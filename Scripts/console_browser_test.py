#!/usr/bin/env python3
"""End-to-end test of StoreGate's web console (`/console`) in a real browser: headless Chromium
driven by Selenium 4, against a live `storegate serve` holding the README tour's data.

  python3 Scripts/console_browser_test.py --storegate BIN --storegate-dev DEVBIN [--screenshots DIR]

It creates a temporary directory, writes the demo data (`storegate-dev demo`), starts the
service on a free 127.0.0.1 port with the tour's key (every permission) and a second key with
only `entitlements.read`, records the tour's receipt for alice and the REFUND notification, and
then checks, as a user would see it:

  * signing in: an unauthenticated page redirects to sign-in; a key without `console` is
    refused (an alert, no session cookie); the tour key lands on the overview with 4 charts;
  * the money and subscriber charts (issue 29): the GET form's controls, every chart drawn with
    its title, description and axes, and a bar and a table cell opening exactly the
    transactions behind them (each linking its account and its transaction page);
  * the session cookie: HttpOnly, SameSite=Strict, Path=/console, not Secure over plain HTTP,
    Secure behind a TLS terminator (`X-Forwarded-Proto: https`);
  * the README story: header search by keyboard, the account's entitlements (pro refunded,
    coins entitled with 5 available), its timeline (newest: the refund), a transaction's page;
  * the inspector: the demo receipt VALID (every step PASS), a forged copy INVALID, the demo JWS
    VALID, garbage INVALID;
  * every page's security headers (CSP, nosniff, no-store), CSRF refusals, no page showing an
    API key or the whole receipt, keyboard and accessibility basics, no horizontal scrolling at
    phone size, signing out (the old session cookie no longer works);
  * and saves screenshots (PNG) of the main pages.

Exit status: 0 when every check passes, 1 on the first failing check (its message says what
was expected and what was seen), 2 when Selenium, Chromium or a binary is missing.
"""
import argparse
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:  # pragma: no cover
    print("console browser test: selenium 4 is not installed (python3 -m pip install selenium)", file=sys.stderr)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)

TOUR_KEY_NAME = "tour"
TOUR_KEY = "tour-key-0123456789abcdef"
READER_KEY_NAME = "reader"
READER_KEY = "reader-key-0123456789abcdef"
BUNDLE_ID = "com.example.storegate"
PRO = "com.example.storegate.pro"
COINS = "com.example.storegate.coins"
SESSION_COOKIE = "storegate_console"
SIGNIN_COOKIE = "storegate_console_signin"

WAIT = 10  # seconds: every browser wait, page load and HTTP request
SERVER_START = 15  # seconds for `storegate serve` to answer /readyz


class CheckFailed(Exception):
    pass


class Run:
    """Counts checks; remembers every page's text for the secrets check."""

    def __init__(self):
        self.checks = 0
        self.pages = []  # (label, text)

    def check(self, condition, message, detail=None):
        if not condition:
            text = message
            if detail:
                text += "\n    seen: " + str(detail)[:1500]
            raise CheckFailed(text)
        self.checks += 1
        print(f"  ok {self.checks:3d} {message}")

    def remember(self, label, text):
        self.pages.append((label, text))


# --------------------------------------------------------------------------------------------
# The service


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HTTP:
    def __init__(self, port):
        self.port = port

    def request(self, method, path, body=None, headers=None):
        """(status, headers message, body text)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        try:
            data = body.encode() if isinstance(body, str) else body
            connection.request(method, path, body=data, headers=headers or {})
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
            return response.status, response.msg, text
        finally:
            connection.close()


def start_server(storegate, workdir, demo, port):
    keys_file = os.path.join(workdir, "api-keys")
    with open(keys_file, "w") as f:
        # A key that may read entitlements but not sign in to the console.
        f.write(f"{READER_KEY_NAME} {READER_KEY} entitlements.read\n")
    env = dict(os.environ)
    for name in list(env):
        if name.startswith("STOREGATE_"):
            del env[name]
    env.update({
        "STOREGATE_HOST": "127.0.0.1",
        "STOREGATE_PORT": str(port),
        "STOREGATE_DATABASE": "sqlite:" + os.path.join(workdir, "ledger.sqlite"),
        "STOREGATE_API_KEYS": f"{TOUR_KEY_NAME}:{TOUR_KEY}",
        "STOREGATE_API_KEYS_FILE": keys_file,
        "STOREGATE_BUNDLE_IDS": BUNDLE_ID,
        "STOREGATE_TRUST_DIR": os.path.join(demo, "trust"),
        "STOREGATE_ENVIRONMENTS": "production,sandbox,test",
        "STOREGATE_PRODUCTS_FILE": os.path.join(demo, "products.json"),
        # Webhook endpoints created in the console may point at a receiver on 127.0.0.1, which the
        # webhook address policy refuses by default.
        "STOREGATE_WEBHOOK_ALLOW_PRIVATE": "1",
        "STOREGATE_LOG_LEVEL": "warning",
    })
    log = open(os.path.join(workdir, "server.log"), "wb")
    process = subprocess.Popen([storegate, "serve"], env=env, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    deadline = time.monotonic() + SERVER_START
    client = HTTP(port)
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CheckFailed(f"storegate serve exited with status {process.returncode} before it was ready")
        try:
            status, _, _ = client.request("GET", "/readyz")
            if status == 200:
                return process
        except OSError:
            pass
        time.sleep(0.2)
    raise CheckFailed(f"storegate serve did not answer GET /readyz with 200 within {SERVER_START} s")


def stop_server(process):
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=WAIT)


def server_log_tail(workdir, lines=30):
    try:
        with open(os.path.join(workdir, "server.log"), "rb") as f:
            return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------
# The browser


def start_browser():
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                     "--disable-dev-shm-usage", "--lang=en-US", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    for binary in ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"):
        if os.path.exists(binary):
            options.binary_location = binary
            break
    driver_path = "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else shutil.which("chromedriver")
    service = Service(executable_path=driver_path) if driver_path else Service()
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    return driver


def wait_for(driver, condition, what):
    try:
        # A page being replaced answers "aborted by navigation" and the like: poll on.
        return WebDriverWait(driver, WAIT, poll_frequency=0.2, ignored_exceptions=(WebDriverException,)).until(condition)
    except TimeoutException:
        raise CheckFailed(f"{what} (waited {WAIT} s) at {driver.current_url}; page heading: {heading(driver)!r}")


def heading(driver):
    try:
        return driver.find_element(By.TAG_NAME, "h1").text
    except WebDriverException:
        return None


def screenshot(driver, directory, name, shots):
    """A full-page PNG (Chromium's DevTools capture beyond the viewport), else the viewport."""
    path = os.path.join(directory, name + ".png")
    try:
        metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        viewport = metrics.get("cssLayoutViewport") or metrics["layoutViewport"]
        # Capturing beyond the viewport lays the page out without a scroll bar: as wide as the
        # window, not the viewport's client width.
        width = max(int(size["width"]), int(driver.execute_script("return window.innerWidth;")), 1)
        height = min(max(int(size["height"]), int(viewport["clientHeight"])), 8000)
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        })
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
    except WebDriverException:
        driver.save_screenshot(path)
    shots.append(path)
    print(f"  screenshot {path}")
    return path


# --------------------------------------------------------------------------------------------
# Shared page checks


def session_cookie(driver):
    for cookie in driver.get_cookies():
        if cookie["name"] == SESSION_COOKIE:
            return cookie
    return None


def check_page_basics(run, driver, label):
    """lang on <html>; every visible form control labelled."""
    run.remember(label, driver.page_source)
    lang = driver.find_element(By.TAG_NAME, "html").get_attribute("lang")
    run.check(bool(lang and lang.strip()), f"{label}: <html> has lang ({lang!r})")
    unlabelled = driver.execute_script("""
        var missing = [];
        document.querySelectorAll('input, textarea, select').forEach(function (el) {
          if (el.type === 'hidden') { return; }
          var ok = (el.getAttribute('aria-label') || '').trim() !== '' || el.getAttribute('aria-labelledby');
          if (!ok && el.id) {
            var label = document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
            ok = !!(label && label.textContent.trim());
          }
          if (!ok && el.closest('label')) { ok = el.closest('label').textContent.trim() !== ''; }
          if (!ok) { missing.push(el.outerHTML); }
        });
        return missing;
    """)
    run.check(not unlabelled, f"{label}: every input has a label", unlabelled)


def check_headers(run, label, status, headers, expected_status=200):
    run.check(status == expected_status, f"{label}: HTTP {expected_status}", status)
    csp = headers.get("Content-Security-Policy") or ""
    for directive in ("default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"):
        run.check(directive in csp, f"{label}: Content-Security-Policy has {directive}", csp or "(no CSP header)")
    run.check((headers.get("X-Content-Type-Options") or "").lower() == "nosniff", f"{label}: X-Content-Type-Options nosniff",
              headers.get("X-Content-Type-Options"))
    run.check("no-store" in (headers.get("Cache-Control") or "").lower(), f"{label}: Cache-Control no-store", headers.get("Cache-Control"))


def set_cookie_for(headers, name):
    for value in headers.get_all("Set-Cookie") or []:
        if value.split("=", 1)[0].strip() == name:
            return value
    return None


def cookie_attributes(set_cookie):
    parts = [p.strip() for p in set_cookie.split(";")]
    attributes = {}
    for part in parts[1:]:
        key, _, value = part.partition("=")
        attributes[key.strip().lower()] = value.strip()
    return parts[0].split("=", 1)[1], attributes


def hidden_value(html, name):
    match = re.search(r'<input type="hidden" name="' + re.escape(name) + r'" value="([^"]*)"', html)
    return match.group(1) if match else None


def inspect_in_browser(run, driver, base, proof, label):
    """Pastes `proof` into the inspector and submits it; returns (verdict, [step statuses])."""
    driver.get(base + "/console/inspect")
    area = wait_for(driver, EC.presence_of_element_located((By.ID, "proof")), "the inspector's text area (#proof)")
    # The text goes in as a paste would: set at once, then an input event (send_keys would type
    # thousands of characters one by one).
    driver.execute_script(
        "arguments[0].focus(); arguments[0].value = arguments[1];"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));", area, proof)
    driver.find_element(By.XPATH, "//form[@action='/console/inspect']//button[@type='submit']").click()
    badge = wait_for(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "h2 .badge")), f"{label}: the verdict (h2 .badge)")
    verdict = badge.text.strip()
    steps = [e.text.strip() for e in driver.find_elements(By.CSS_SELECTOR, "table.steps")[0].find_elements(By.CSS_SELECTOR, "tbody td:first-child .badge")] \
        if driver.find_elements(By.CSS_SELECTOR, "table.steps") else []
    check_page_basics(run, driver, label)
    return verdict, steps


# --------------------------------------------------------------------------------------------
# The money and subscriber charts (issue 29 item 6)


def check_money_charts(run, driver, base, api, demo, args, shots):
    """bob buys the demo's monthly subscription (USD 4.99, a signed transaction in the Test
    environment); the Overview charts it beside the tour's refund; a bar and a table cell open
    the transactions behind them, each linking its account and transaction."""
    with open(os.path.join(demo, "transaction.json")) as f:
        body = json.load(f)
    body["account"] = "bob"
    status, _, text = api.request("POST", "/v1/transactions/verify", json.dumps(body),
                                  {"Authorization": f"Bearer {TOUR_KEY}", "Content-Type": "application/json"})
    run.check(status == 200 and '"valid"' in text, "charts: POST /v1/transactions/verify recorded bob's monthly subscription", f"{status} {text[:300]}")

    # The controls are a plain GET form: choose the Test environment and the last 30 days.
    Select(driver.find_element(By.NAME, "range")).select_by_value("30d")
    Select(driver.find_element(By.NAME, "environment")).select_by_value("Test")
    driver.find_element(By.XPATH, "//form[contains(@class,'controls')]//button[@type='submit']").click()
    wait_for(driver, lambda d: "environment=Test" in d.current_url and d.find_elements(By.CSS_SELECTOR, "svg.metric-chart"),
             "the overview for the Test environment after submitting the form")
    query = urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query)
    run.check(query.get("range") == ["30d"] and query.get("environment") == ["Test"], "charts: the form's GET carries range=30d and environment=Test",
              driver.current_url)
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.metric-chart")
    run.check(len(charts) >= 8, "charts: at least 8 money and subscriber charts (svg.metric-chart)", len(charts))
    sizes = [(c.rect["width"], c.rect["height"]) for c in charts]
    run.check(all(c.is_displayed() for c in charts) and all(w > 200 and h > 80 for w, h in sizes),
              "charts: every chart is visible with a readable size", sizes)
    titles = [e.text.strip() for e in driver.find_elements(By.CSS_SELECTOR, ".metric-card h2")]
    for expected in ("Active subscriptions", "MRR · USD", "New trials", "Trial conversions", "Churned subscriptions", "Refunds", "Gross revenue · USD"):
        run.check(any(t.startswith(expected) for t in titles), f"charts: a chart titled {expected!r}", titles)
    figure = lambda chart_id: driver.find_element(By.CSS_SELECTOR, f"#{chart_id} .figure").text.strip()
    run.check(figure("chart-active_subscriptions").startswith("1 at the end of"), "charts: one active subscription (bob's)", figure("chart-active_subscriptions"))
    run.check(figure("chart-mrr-USD").startswith("USD 4.99 at the end of"), "charts: MRR USD 4.99", figure("chart-mrr-USD"))
    # The REFUND notification's signed transaction stated the pro purchase's price (USD 4.99): it
    # counts as revenue too; the receipt's coins have no known price and do not.
    run.check(figure("chart-gross_revenue-USD") == "USD 9.98 in the range", "charts: gross revenue USD 9.98 (pro and the monthly)",
              figure("chart-gross_revenue-USD"))
    run.check(figure("chart-refunds") == "1 in the range", "charts: the tour's refund counted", figure("chart-refunds"))
    svg = driver.find_element(By.CSS_SELECTOR, "#chart-gross_revenue-USD svg")
    run.check(svg.find_element(By.TAG_NAME, "title").get_attribute("textContent").startswith("Gross revenue"),
              "charts: the SVG has a <title>")
    run.check(len(svg.find_elements(By.CSS_SELECTOR, "desc")) == 1 and len(svg.find_elements(By.CSS_SELECTOR, ".axis-title")) == 2,
              "charts: the SVG has a <desc> and both axis titles")
    bars = svg.find_elements(By.CSS_SELECTOR, "a rect")
    # One bar, or two when the demo's purchases straddle midnight UTC (pro an hour before the monthly).
    run.check(len(bars) in (1, 2), "charts: gross revenue in USD has a bar per day with sales", len(bars))
    check_page_basics(run, driver, "overview (charts)")
    screenshot(driver, args.screenshots, "overview-charts", shots)

    # A bar (the last: today's) opens the transactions behind it: the priced sales of that day.
    bars[-1].click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Gross revenue"), "the drill-down page after clicking the bar")
    links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "table.drilldown tbody a")]
    paths = [urllib.parse.urlparse(h).path for h in links]
    expected = (["/console/transactions/Test/1000000000000002", "/console/accounts/alice"] if len(bars) == 1 else []) \
        + ["/console/transactions/Test/2000000000000001", "/console/accounts/bob"]
    run.check(paths == expected, "drill-down (gross revenue): exactly the day's priced sales, each linking its transaction and account", paths)
    run.check("1000000000000001" not in driver.page_source, "drill-down (gross revenue): the receipt's unpriced coins are not listed")
    check_page_basics(run, driver, "drill-down")
    screenshot(driver, args.screenshots, "drilldown", shots)
    driver.find_element(By.CSS_SELECTOR, "table.drilldown tbody a[href='/console/transactions/Test/2000000000000001']").click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Transaction"), "the transaction page from the drill-down")
    run.check("2000000000000001" in heading(driver), "drill-down: the transaction link opens its page", heading(driver))

    # The table of values (keyboard and screen-reader path): the refunds cell opens alice's refund.
    driver.get(base + "/console?range=30d&environment=Test")
    wait_for(driver, EC.presence_of_element_located((By.ID, "chart-refunds")), "the overview's refunds chart")
    driver.find_element(By.CSS_SELECTOR, "#chart-refunds details summary").click()
    cells = [a for a in driver.find_elements(By.CSS_SELECTOR, "#chart-refunds details td a") if a.text.strip() == "1"]
    run.check(len(cells) == 1, "charts: one day in the refunds table holds the refund", len(cells))
    cells[0].click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Refunds"), "the refunds drill-down")
    paths = [urllib.parse.urlparse(a.get_attribute("href")).path for a in driver.find_elements(By.CSS_SELECTOR, "table.drilldown tbody a")]
    run.check(paths == ["/console/transactions/Test/1000000000000002", "/console/accounts/alice"],
              "drill-down (refunds): exactly alice's refunded pro purchase", paths)

    # A bad parameter: the console's error page, not a 500.
    driver.get(base + "/console?interval=year")
    alert = wait_for(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]")), "the error page for interval=year")
    run.check("'interval' is one of day, week, month" in alert.text, "charts: interval=year is refused on the console's error page", alert.text)
    driver.get(base + "/console")
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Overview"), "the overview again")


# --------------------------------------------------------------------------------------------
# The test


def run_test(args, run, workdir, shots, state):
    demo = os.path.join(workdir, "demo")
    result = subprocess.run([args.storegate_dev, "demo", "--out", demo], capture_output=True, timeout=60)
    run.check(result.returncode == 0, "storegate-dev demo wrote the tour's data", result.stderr.decode(errors="replace"))
    with open(os.path.join(demo, "receipt.json")) as f:
        receipt_body = f.read()
    receipt_b64 = json.loads(receipt_body)["receipt"]
    with open(os.path.join(demo, "notification-refund.json")) as f:
        notification_body = f.read()
    with open(os.path.join(demo, "transaction.json")) as f:
        signed_transaction = json.load(f)["signedTransaction"]

    port = free_port()
    state["server"] = start_server(args.storegate, workdir, demo, port)
    base = f"http://127.0.0.1:{port}"
    api = HTTP(port)
    print(f"  storegate serve on {base}")

    # The README tour: the receipt for alice, then the REFUND notification.
    status, _, text = api.request("POST", "/v1/receipts/verify", receipt_body,
                                  {"Authorization": f"Bearer {TOUR_KEY}", "Content-Type": "application/json"})
    run.check(status == 200 and '"valid"' in text, "tour: POST /v1/receipts/verify recorded the receipt for alice", f"{status} {text[:300]}")
    status, _, text = api.request("POST", "/v1/notifications/apple", notification_body, {"Content-Type": "application/json"})
    run.check(status == 200 and "REFUND" in text, "tour: POST /v1/notifications/apple stored the REFUND", f"{status} {text[:300]}")

    # ---- Unauthenticated requests (raw HTTP)
    status, headers, _ = api.request("GET", "/console")
    location = headers.get("Location") or ""
    run.check(status == 303 and location.startswith("/console/signin?next="), "GET /console without a session: 303 to the sign-in page",
              f"{status} Location: {location}")
    status, _, _ = api.request("POST", "/console/inspect", "proof=x", {"Content-Type": "application/x-www-form-urlencoded"})
    run.check(status == 403, "POST /console/inspect without a session: 403", status)
    status, headers, text = api.request("GET", "/console/signin")
    check_headers(run, "GET /console/signin", status, headers)
    run.remember("GET /console/signin (http)", text)

    # ---- The browser
    driver = state["driver"] = start_browser()
    driver.get(base + "/console")
    wait_for(driver, EC.presence_of_element_located((By.ID, "key")), "the sign-in form's key field (#key)")
    parsed = urllib.parse.urlparse(driver.current_url)
    run.check(parsed.path == "/console/signin" and urllib.parse.parse_qs(parsed.query).get("next") == ["/console"],
              "browser: /console redirects to /console/signin?next=/console", driver.current_url)
    check_page_basics(run, driver, "sign-in page")
    run.check(driver.find_element(By.ID, "key").get_attribute("type") == "password", "sign-in: the key field is a password input")
    screenshot(driver, args.screenshots, "signin", shots)

    # A key without the console permission.
    driver.find_element(By.ID, "key").send_keys(READER_KEY)
    driver.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    alert = wait_for(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "[role=alert]")), "an alert after signing in with the reader key")
    # The browser posts the console's own form: it must pass the CSRF/origin check. (Chromium
    # sends `Origin: null` for a form post from a page served with `Referrer-Policy: no-referrer`.)
    run.check("expired or was not sent from this page" not in alert.text,
              "sign-in: the browser's own form post passes the console's CSRF/origin check", alert.text)
    run.check("That is not an API key with the console permission." in alert.text,
              "sign-in with a key without `console`: the alert says so", alert.text)
    run.check(session_cookie(driver) is None, "sign-in with a key without `console`: no session cookie", driver.get_cookies())
    run.check(READER_KEY not in driver.page_source, "refused sign-in page does not echo the key")
    check_page_basics(run, driver, "refused sign-in page")

    # The tour key.
    key_field = driver.find_element(By.ID, "key")
    key_field.clear()
    key_field.send_keys(TOUR_KEY)
    driver.find_element(By.XPATH, "//button[normalize-space()='Sign in']").click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Overview"), "the overview after signing in (h1 Overview)")
    run.check(urllib.parse.urlparse(driver.current_url).path == "/console", "sign-in lands on /console", driver.current_url)
    charts = driver.find_elements(By.CSS_SELECTOR, "svg[role=img]")
    run.check(len(charts) == 4, "overview: 4 charts (svg role=img)", len(charts))
    titles = [e.text.strip() for e in driver.find_elements(By.CSS_SELECTOR, ".chart-card h2")]
    run.check(titles == ["New purchases", "Renewals", "Refunds and revocations", "Active subscriptions"], "overview: the four cards' titles", titles)
    sizes = driver.execute_script("return Array.from(document.querySelectorAll('svg[role=img]')).map(function (s) {"
                                  " var r = s.getBoundingClientRect(); return [r.width, r.height]; });")
    run.check(all(w > 50 and h > 50 for w, h in sizes), "overview: every chart is drawn with a visible size", sizes)
    check_page_basics(run, driver, "overview")
    screenshot(driver, args.screenshots, "overview", shots)

    # ---- Issue 29: the money and subscriber charts, and the transactions behind a point.
    check_money_charts(run, driver, base, api, demo, args, shots)

    # The session cookie as the browser holds it.
    cookie = session_cookie(driver)
    run.check(cookie is not None, "the browser holds the session cookie", driver.get_cookies())
    run.check(cookie.get("httpOnly") is True, "session cookie: httpOnly", cookie)
    run.check(cookie.get("sameSite") == "Strict", "session cookie: sameSite Strict", cookie)
    run.check(cookie.get("path") == "/console", "session cookie: path /console", cookie)
    run.check(not cookie.get("secure"), "session cookie: not secure over plain http", cookie)
    run.check(cookie.get("expiry") is not None, "session cookie: has an expiry (Max-Age)", cookie)
    session = cookie["value"]
    run.check(TOUR_KEY not in session, "session cookie does not carry the key")
    cookie_header = {"Cookie": f"{SESSION_COOKIE}={session}"}

    # Behind a TLS terminator: Secure (raw HTTP, a separate sign-in).
    forwarded = {"X-Forwarded-Proto": "https"}
    status, headers, text = api.request("GET", "/console/signin", headers=forwarded)
    signin_set = set_cookie_for(headers, SIGNIN_COOKIE)
    run.check(status == 200 and signin_set is not None, "https sign-in form: sets the sign-in cookie", f"{status} {headers.get_all('Set-Cookie')}")
    signin_token, signin_attributes = cookie_attributes(signin_set)
    form_token = hidden_value(text, "csrf")
    run.check(form_token == signin_token, "sign-in form: the csrf field matches its cookie", (form_token, signin_token))
    body = urllib.parse.urlencode({"csrf": form_token, "next": "/console", "key": TOUR_KEY})
    status, headers, _ = api.request("POST", "/console/signin", body, {
        **forwarded, "Content-Type": "application/x-www-form-urlencoded", "Cookie": f"{SIGNIN_COOKIE}={signin_token}"})
    secure_set = set_cookie_for(headers, SESSION_COOKIE)
    run.check(status == 303 and secure_set is not None, "https sign-in (X-Forwarded-Proto: https): 303 with a session cookie",
              f"{status} {headers.get_all('Set-Cookie')}")
    _, attributes = cookie_attributes(secure_set)
    run.check("secure" in attributes, "https sign-in: the session cookie is Secure", secure_set)
    run.check("httponly" in attributes and attributes.get("samesite", "").lower() == "strict" and attributes.get("path") == "/console"
              and "max-age" in attributes, "https sign-in: HttpOnly, SameSite=Strict, Path=/console, Max-Age", secure_set)

    # ---- The README story: search by keyboard, the account, a transaction.
    search = driver.find_element(By.ID, "q")
    search.click()
    search.send_keys("alice" + Keys.ENTER)
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Search"), "the search page (h1 Search) after Enter in #q")
    parsed = urllib.parse.urlparse(driver.current_url)
    run.check(parsed.path == "/console/search" and urllib.parse.parse_qs(parsed.query).get("q") == ["alice"],
              "header search by keyboard: GET /console/search?q=alice", driver.current_url)
    account_links = driver.find_elements(By.CSS_SELECTOR, "a[href='/console/accounts/alice']")
    run.check(bool(account_links), "search: an Account card links /console/accounts/alice", heading(driver))
    run.check(driver.find_element(By.ID, "q").get_attribute("value") == "alice", "search: the header field keeps the query")
    check_page_basics(run, driver, "search")
    screenshot(driver, args.screenshots, "search", shots)
    search_url = driver.current_url

    account_links[0].click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Account"), "the account page (h1 Account alice)")
    run.check(" ".join(heading(driver).split()) == "Account alice", "account: h1 Account alice", heading(driver))
    account_url = driver.current_url
    items = {}
    for item in driver.find_elements(By.CSS_SELECTOR, "li.owned-item"):
        items[item.find_element(By.CSS_SELECTOR, ".product").text.strip()] = item
    run.check(PRO in items and COINS in items, "account: entitlements list pro and coins", list(items))
    pro_badge = items[PRO].find_element(By.CSS_SELECTOR, ".badge").text.strip()
    run.check(pro_badge == "refunded or revoked", f"account: {PRO} is 'refunded or revoked'", pro_badge)
    coins_badge = items[COINS].find_element(By.CSS_SELECTOR, ".badge").text.strip()
    run.check(coins_badge == "entitled", f"account: {COINS} is 'entitled'", coins_badge)
    balance = None
    for section in driver.find_elements(By.CSS_SELECTOR, "section.card"):
        if section.find_elements(By.XPATH, "./h2[normalize-space()='Consumable balances']"):
            for row in section.find_elements(By.CSS_SELECTOR, "tbody tr"):
                cells = [c.text.strip() for c in row.find_elements(By.TAG_NAME, "td")]
                if cells and cells[0] == COINS:
                    balance = cells
    run.check(balance is not None and balance[1] == "5", "account: Consumable balances shows coins available 5", balance)
    all_events = [e.find_element(By.CSS_SELECTOR, ".event-head strong").text.strip() for e in driver.find_elements(By.CSS_SELECTOR, "ol.timeline li.event")]
    run.check(not any("." in e and " " not in e for e in all_events), "account: every event has a title in words (no raw type)", all_events)
    # entitlement.changed follows each change a moment later (the tracker): the change's own
    # event is the newest of the others.
    events = [e for e in all_events if not e.startswith("Entitlement ")]
    run.check(bool(events) and events[0] == "Refunded or revoked", "account: the timeline's newest event is 'Refunded or revoked'", all_events)
    run.check("Purchase recorded" in events[1:], "account: a 'Purchase recorded' event follows", events)
    check_page_basics(run, driver, "account")
    screenshot(driver, args.screenshots, "account", shots)

    # ---- Entitlements first; a grant by hand from the console, then its revocation.
    def entitlement_rows():
        rows = {}
        for section in driver.find_elements(By.CSS_SELECTOR, "section.card"):
            if section.find_elements(By.XPATH, "./h2[normalize-space()='Entitlements']"):
                for row in section.find_elements(By.CSS_SELECTOR, "tbody tr"):
                    cells = [c.text.strip() for c in row.find_elements(By.TAG_NAME, "td")]
                    if cells:
                        rows[cells[0]] = cells
        return rows
    h2s = [h.text.strip() for h in driver.find_elements(By.TAG_NAME, "h2")]
    run.check(h2s[:2] == ["Entitlements", "Grants"], "account: Entitlements and Grants come first", h2s)
    rows = entitlement_rows()
    run.check(rows.get("pro", [None, None])[1] == "inactive", "account: entitlement pro is inactive (its purchase was refunded)", rows)
    run.check(rows.get("coins", [None, None])[1] == "active" and "balance 50" in rows.get("coins", [""] * 5)[4],
              "account: entitlement coins is active with balance 50 (5 coins worth 10)", rows)
    form = driver.find_element(By.CSS_SELECTOR, "form.grant-form")
    Select(form.find_element(By.NAME, "entitlement")).select_by_visible_text("pro")
    Select(form.find_element(By.NAME, "duration")).select_by_value("P7D")
    form.find_element(By.NAME, "reason").send_keys("browser test: goodwill after a refund")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, lambda d: entitlement_rows().get("pro", [None, None])[1] == "active", "entitlement pro active after the grant")
    rows = entitlement_rows()
    run.check(rows["pro"][3].startswith("grant "), "grant: pro is active because of the grant", rows["pro"])
    grants_text = driver.find_element(By.ID, "grants").find_element(By.XPATH, "..").text
    run.check("goodwill after a refund" in grants_text and TOUR_KEY_NAME in grants_text, "grant: the Grants table shows the reason and the acting key", grants_text)
    events = [e.find_element(By.CSS_SELECTOR, ".event-head strong").text.strip() for e in driver.find_elements(By.CSS_SELECTOR, "ol.timeline li.event")]
    events = [e for e in events if not e.startswith("Entitlement ")]
    run.check(bool(events) and events[0] == "Granted by hand", "grant: the timeline's newest event is 'Granted by hand'", events[:3])
    check_page_basics(run, driver, "account (granted)")
    screenshot(driver, args.screenshots, "account-granted", shots)
    revoke = driver.find_element(By.CSS_SELECTOR, "form.inline[action*='/grants/']")
    revoke.find_element(By.NAME, "reason").send_keys("browser test: done")
    revoke.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for(driver, lambda d: entitlement_rows().get("pro", [None, None])[1] == "inactive", "entitlement pro inactive after the revocation")
    grants_text = driver.find_element(By.ID, "grants").find_element(By.XPATH, "..").text
    run.check("revoked" in grants_text and "browser test: done" in grants_text, "revoke: the grant shows revoked, with why", grants_text)
    events = [e.find_element(By.CSS_SELECTOR, ".event-head strong").text.strip() for e in driver.find_elements(By.CSS_SELECTOR, "ol.timeline li.event")]
    events = [e for e in events if not e.startswith("Entitlement ")]
    run.check(bool(events) and events[0] == "Grant revoked", "revoke: the timeline's newest event is 'Grant revoked'", events[:3])
    # The grant form refuses a post without the session's CSRF token.
    status, _, _ = api.request("POST", "/console/accounts/alice/grants", "entitlement=pro&duration=P7D&reason=x",
                               {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"{SESSION_COOKIE}={(session_cookie(driver) or {}).get('value', '')}"})
    run.check(status == 403, "grant form without the CSRF token: 403", status)
    screenshot(driver, args.screenshots, "account-revoked", shots)
    driver.get(account_url)
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Account"), "the account page again")
    items = {}
    for item in driver.find_elements(By.CSS_SELECTOR, "li.owned-item"):
        items[item.find_element(By.CSS_SELECTOR, ".product").text.strip()] = item

    # A transaction: open pro's "Why" details (keyboard: focus its summary, Enter), follow the link.
    summary = items[PRO].find_element(By.CSS_SELECTOR, "details > summary")
    driver.execute_script("arguments[0].focus();", summary)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    details = items[PRO].find_element(By.TAG_NAME, "details")
    wait_for(driver, lambda d: details.get_attribute("open") is not None, "pro's details to open with Enter on its summary")
    run.check(True, "account: Enter on a summary opens its details")
    link = details.find_element(By.CSS_SELECTOR, "a[href^='/console/transactions/']")
    transaction_path = link.get_attribute("href").replace(base, "")
    run.check(re.fullmatch(r"/console/transactions/Test/\d+", transaction_path) is not None,
              "account: pro's transaction links /console/transactions/Test/ID", transaction_path)
    transaction_id = transaction_path.rsplit("/", 1)[1]
    link.click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Transaction"), "the transaction page (h1 Transaction …)")
    run.check(transaction_id in heading(driver), f"transaction: h1 names {transaction_id}", heading(driver))
    page_text = driver.find_element(By.TAG_NAME, "main").text
    run.check(PRO in page_text and "alice" in page_text, "transaction: the recorded fields name the product and the account")
    run.check(any(h.text.strip() == "Proof" for h in driver.find_elements(By.TAG_NAME, "h2")), "transaction: a Proof section")
    check_page_basics(run, driver, "transaction")
    screenshot(driver, args.screenshots, "transaction", shots)
    transaction_url = driver.current_url

    # Searching for the transaction id lists it in the Transactions table.
    search = driver.find_element(By.ID, "q")
    search.clear()
    search.send_keys(transaction_id + Keys.ENTER)
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Search"), f"the search page for {transaction_id}")
    run.check(any(h.text.strip() == "Transactions" for h in driver.find_elements(By.TAG_NAME, "h2")),
              f"search {transaction_id}: a Transactions table", heading(driver))
    run.check(bool(driver.find_elements(By.CSS_SELECTOR, f"table a[href='{transaction_path}']")),
              f"search {transaction_id}: the table links {transaction_path}")
    check_page_basics(run, driver, "search (transaction id)")

    # ---- Inspector
    verdict, steps = inspect_in_browser(run, driver, base, receipt_b64, "inspector (demo receipt)")
    run.check(verdict == "VALID", "inspector: the demo receipt is VALID", verdict)
    run.check(bool(steps) and all(s == "PASS" for s in steps), "inspector: every step of the demo receipt PASSes", steps)
    run.check(bool(driver.find_elements(By.CSS_SELECTOR, "ol.chain li")), "inspector: the receipt's certificate chain is shown")
    decoded = driver.find_elements(By.CSS_SELECTOR, "pre.json")
    run.check(bool(decoded) and BUNDLE_ID in decoded[0].text, "inspector: the decoded receipt (pre.json) names the bundle id")
    run.check(driver.find_element(By.ID, "proof").get_attribute("value") == "", "inspector: the result page does not echo the proof")
    screenshot(driver, args.screenshots, "inspect-valid", shots)

    der = bytearray(base64.b64decode(receipt_b64))
    der[len(der) // 2] ^= 0x01
    forged = base64.b64encode(bytes(der)).decode()
    verdict, steps = inspect_in_browser(run, driver, base, forged, "inspector (forged receipt)")
    run.check(verdict == "INVALID", "inspector: the forged receipt (one byte flipped) is INVALID", verdict)
    run.check("FAIL" in steps, "inspector: the forged receipt has a FAIL step", steps)
    screenshot(driver, args.screenshots, "inspect-forged", shots)

    verdict, steps = inspect_in_browser(run, driver, base, signed_transaction, "inspector (demo JWS)")
    run.check(verdict == "VALID", "inspector: the demo signed transaction (JWS) is VALID", verdict)
    run.check(bool(steps) and "FAIL" not in steps, "inspector: no step of the JWS FAILs", steps)

    verdict, steps = inspect_in_browser(run, driver, base, "not a proof", "inspector (garbage)")
    run.check(verdict == "INVALID", "inspector: 'not a proof' is INVALID", verdict)

    # ---- System
    driver.find_element(By.XPATH, "//header//nav//a[normalize-space()='System']").click()
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "System"), "the system page (h1 System) from the header nav")
    h2s = [h.text.strip() for h in driver.find_elements(By.TAG_NAME, "h2")]
    # The webhook card lists the endpoints with their deliveries and, for a webhooks.manage key, adds one.
    run.check(all(t in h2s for t in ("Readiness", "Configuration warnings", "Trust anchors", "Webhook endpoints", "App Store sync")),
              "system: readiness, warnings, trust anchors, webhook endpoints, App Store sync", h2s)
    # Readiness is a probe of the moment (the database must answer a read and a write within
    # 0.9 s): on a loaded 2-core CI box, seconds after the start, the debug build's writer can
    # be busy past it, as CI of 2026-11-28 saw once. Seen again after a second, up to five
    # times; every reading is printed when it took more than one.
    badges = []
    for attempt in range(5):
        if attempt > 0:
            time.sleep(1)
            driver.refresh()
            wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "System"), "the system page again")
        badges.append(driver.find_element(By.CSS_SELECTOR, "section.card .badge").text.strip())
        if badges[-1] == "ready":
            break
    if len(badges) > 1:
        print(f"  note: the system page's readiness read {badges} before saying ready")
    run.check(badges[-1] == "ready", "system: readiness says ready", badges)
    body_text = driver.find_element(By.TAG_NAME, "main").text
    run.check("Consumption requests are not answered (STOREGATE_CONSUMPTION is off): 0 sent, 0 pending, 0 expired, 0 failed." in body_text,
              "system: the consumption requests line says they are off and none are kept", body_text[-400:])
    run.check(driver.find_element(By.CSS_SELECTOR, "a[aria-current=page]").text.strip() == "System", "system: the nav marks System current")
    check_page_basics(run, driver, "system")
    screenshot(driver, args.screenshots, "system", shots)

    # ---- Keyboard: the first Tab on a fresh page reaches "Skip to content", which moves focus to main.
    for label, url in (("overview", base + "/console"), ("account", account_url)):
        driver.get(url)
        wait_for(driver, EC.presence_of_element_located((By.ID, "main")), f"{label} page loaded")
        ActionChains(driver).send_keys(Keys.TAB).perform()
        active = driver.switch_to.active_element
        run.check(active.tag_name == "a" and active.text.strip() == "Skip to content",
                  f"keyboard ({label}): the first Tab focuses 'Skip to content'", f"<{active.tag_name}> {active.text!r}")
        run.check(active.is_displayed() and active.rect["x"] >= 0, f"keyboard ({label}): the focused skip link is on screen", active.rect)
        ActionChains(driver).send_keys(Keys.ENTER).perform()
        wait_for(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "main", f"{label}: focus on main after the skip link")
        run.check(True, f"keyboard ({label}): Enter on the skip link moves focus to main")

    # ---- Headers of every page visited (raw HTTP with the browser's session cookie).
    pages = [
        ("GET /console", "/console"),
        ("GET search", urllib.parse.urlparse(search_url).path + "?" + urllib.parse.urlparse(search_url).query),
        ("GET account", urllib.parse.urlparse(account_url).path),
        ("GET transaction", urllib.parse.urlparse(transaction_url).path),
        ("GET /console/inspect", "/console/inspect"),
        ("GET /console/system", "/console/system"),
    ]
    for label, path in pages:
        status, headers, text = api.request("GET", path, headers=cookie_header)
        check_headers(run, label, status, headers)
        run.remember(label + " (http)", text)
    status, headers, text = api.request("GET", "/console/transactions/Test/1000000000000002", headers=cookie_header)
    check_headers(run, "GET /console/transactions/Test/1000000000000002", status, headers)
    run.check("<h1>Transaction" in text, "GET /console/transactions/Test/1000000000000002: the transaction page", text[:200])
    run.remember("transaction 1000000000000002 (http)", text)
    status, headers, text = api.request("GET", "/console/accounts/nobody-at-all", headers=cookie_header)
    check_headers(run, "GET an unknown account", status, headers)

    # ---- CSRF
    status, _, text = api.request("GET", "/console/inspect", headers=cookie_header)
    csrf = hidden_value(text, "csrf")
    run.check(bool(csrf), "the inspector page carries the session's csrf token")
    form = {"Content-Type": "application/x-www-form-urlencoded", **cookie_header}
    status, headers, text = api.request("POST", "/console/inspect", urllib.parse.urlencode({"proof": receipt_b64, "csrf": csrf}),
                                        {**form, "Origin": base})
    check_headers(run, "POST /console/inspect (same origin, csrf)", status, headers)
    run.check("VALID" in text, "POST /console/inspect with the csrf token: the verdict")
    run.remember("POST /console/inspect (http)", text)
    status, headers, text = api.request("POST", "/console/inspect", urllib.parse.urlencode({"proof": receipt_b64}), form)
    check_headers(run, "POST /console/inspect without csrf", status, headers, expected_status=403)
    run.remember("POST /console/inspect without csrf (http)", text)
    status, _, _ = api.request("POST", "/console/inspect", urllib.parse.urlencode({"proof": receipt_b64, "csrf": csrf + "x"}), form)
    run.check(status == 403, "POST /console/inspect with a wrong csrf: 403", status)
    status, _, _ = api.request("POST", "/console/inspect", urllib.parse.urlencode({"proof": receipt_b64, "csrf": csrf}),
                               {**form, "Origin": "http://evil.example"})
    run.check(status == 403, "POST /console/inspect with the csrf but Origin http://evil.example: 403", status)
    status, _, _ = api.request("POST", "/console/inspect", urllib.parse.urlencode({"proof": receipt_b64, "csrf": csrf}),
                               {**form, "Sec-Fetch-Site": "cross-site"})
    run.check(status == 403, "POST /console/inspect with the csrf but Sec-Fetch-Site cross-site: 403", status)
    status, _, signin_html = api.request("GET", "/console/signin")
    token = hidden_value(signin_html, "csrf")
    status, headers, text = api.request("POST", "/console/signin", urllib.parse.urlencode({"csrf": token, "next": "/console", "key": TOUR_KEY}),
                                        {"Content-Type": "application/x-www-form-urlencoded"})
    run.check(status == 403, "POST /console/signin without the sign-in cookie: 403", status)
    run.check(set_cookie_for(headers, SESSION_COOKIE) is None, "POST /console/signin without the sign-in cookie: no session cookie")
    run.remember("refused sign-in (http)", text)
    status, _, _ = api.request("POST", "/console/signout", urllib.parse.urlencode({}), form)
    run.check(status == 403, "POST /console/signout without csrf: 403", status)

    # ---- Phone size: no horizontal page scroll.
    driver.set_window_size(390, 844)

    def fits_phone(label, shot=None):
        width = driver.execute_script("var d = document.documentElement; return [d.scrollWidth, window.innerWidth, d.clientWidth];")
        if shot:
            screenshot(driver, args.screenshots, shot, shots)
        # What sticks out, innermost first (for the failure message).
        wide = driver.execute_script("""
            var limit = document.documentElement.clientWidth + 1, found = [];
            document.querySelectorAll('main *, header *').forEach(function (el) {
              var r = el.getBoundingClientRect();
              if (r.right > limit && !Array.from(el.children).some(function (c) { return c.getBoundingClientRect().right > limit; })) {
                found.push(Math.round(r.right) + 'px: ' + el.outerHTML.slice(0, 160));
              }
            });
            return found.slice(0, 4);
        """)
        run.check(width[0] <= width[1] + 1, f"phone 390x844 ({label}): no horizontal page scroll (scrollWidth <= innerWidth + 1)",
                  f"scrollWidth {width[0]}, innerWidth {width[1]}; sticking out: {wide}")
        # innerWidth counts a classic vertical scroll bar; the page must fit beside it too.
        run.check(width[0] <= width[2] + 1, f"phone 390x844 ({label}): nothing wider than the viewport beside the scroll bar",
                  f"scrollWidth {width[0]}, clientWidth {width[2]}; sticking out: {wide}")

    for label, url, shot in (("account", account_url, "account-phone"), ("overview", base + "/console", None),
                             ("search", search_url, None), ("transaction", transaction_url, None),
                             ("system", base + "/console/system", None)):
        driver.get(url)
        wait_for(driver, EC.presence_of_element_located((By.ID, "main")), f"{label} page at phone size")
        fits_phone(label, shot)
    verdict, _ = inspect_in_browser(run, driver, base, receipt_b64, "inspector at phone size")
    run.check(verdict == "VALID", "phone: the inspector's verdict for the demo receipt", verdict)
    fits_phone("inspector result", "inspect-valid-phone")
    driver.set_window_size(1280, 900)

    # ---- Secrets: no page shows an API key or the whole receipt.
    for label, text in run.pages:
        for secret, what in ((TOUR_KEY, "the tour API key"), (READER_KEY, "the reader API key"), (receipt_b64, "the whole receipt base64")):
            if secret in text:
                raise CheckFailed(f"{label}: the page contains {what}")
    run.check(True, f"no page of {len(run.pages)} seen contains an API key or the whole receipt base64")

    # ---- Sign out.
    driver.get(base + "/console")
    wait_for(driver, EC.text_to_be_present_in_element((By.TAG_NAME, "h1"), "Overview"), "the overview before signing out")
    button = driver.find_element(By.XPATH, "//form[@action='/console/signout']//button")
    run.check(button.text.strip().startswith("Sign out"), "the header's sign-out button reads 'Sign out'", button.text)
    button.click()
    wait_for(driver, EC.presence_of_element_located((By.ID, "key")), "the sign-in page after signing out")
    run.check(urllib.parse.urlparse(driver.current_url).path == "/console/signin", "sign out: back on /console/signin", driver.current_url)
    run.check(session_cookie(driver) is None or not session_cookie(driver).get("value"), "sign out: the browser's session cookie is cleared",
              driver.get_cookies())
    status, headers, _ = api.request("GET", "/console", headers=cookie_header)
    run.check(status == 303 and (headers.get("Location") or "").startswith("/console/signin"),
              "sign out: the old session cookie no longer opens /console (303 to sign-in)", f"{status} {headers.get('Location')}")
    driver.get(base + "/console/system")
    wait_for(driver, EC.presence_of_element_located((By.ID, "key")), "the sign-in page for /console/system after signing out")
    run.check(True, "sign out: the browser is sent to sign-in again")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--storegate", required=True, help="the storegate binary")
    parser.add_argument("--storegate-dev", required=True, help="the storegate-dev binary")
    parser.add_argument("--screenshots", default=os.path.join(PACKAGE_ROOT, ".build", "console-screenshots"),
                        help="where the PNG screenshots go (default: .build/console-screenshots)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (server log, ledger)")
    args = parser.parse_args()
    for binary in (args.storegate, args.storegate_dev):
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            print(f"console browser test: {binary} is not an executable", file=sys.stderr)
            return 2
    args.storegate = os.path.abspath(args.storegate)
    args.storegate_dev = os.path.abspath(args.storegate_dev)
    args.screenshots = os.path.abspath(args.screenshots)
    os.makedirs(args.screenshots, exist_ok=True)

    run = Run()
    shots = []
    state = {"server": None, "driver": None}
    workdir = tempfile.mkdtemp(prefix="storegate-console-")
    started = time.monotonic()
    failure = None
    try:
        run_test(args, run, workdir, shots, state)
    except CheckFailed as error:
        failure = str(error)
    except (WebDriverException, OSError, subprocess.SubprocessError, KeyError, ValueError, IndexError, AttributeError, TypeError) as error:
        traceback.print_exc(limit=-3)
        failure = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    finally:
        if failure and state["driver"] is not None:
            try:
                path = os.path.join(args.screenshots, "failure.png")
                state["driver"].save_screenshot(path)
                print(f"  screenshot of the failure: {path} ({state['driver'].current_url})")
            except WebDriverException:
                pass
        if state["driver"] is not None:
            try:
                state["driver"].quit()
            except WebDriverException:
                pass
        stop_server(state["server"])
        if failure:
            tail = server_log_tail(workdir)
            if tail:
                print("--- server log (last lines)\n" + tail)
        if args.keep or failure:
            print(f"  temporary directory kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if failure:
        print(f"FAIL after {run.checks} passing checks: {failure}")
        return 1
    print(f"console browser test passed: {run.checks} checks, screenshots in {args.screenshots} ({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
