"""The web console (issue 18, docs/console.md) in a real browser: Debian's chromium driven by
python3-selenium through chromium-driver, at 1280x800, against a real server with a hot and a
warm pool. Signs in (a wrong secret first), creates a bucket, uploads a file through a presigned
URL, sees it listed, downloads it through a presigned link, sets a lifecycle rule, approves an
advisor recommendation and finds the resulting moves in the audit page; a screenshot of every
page is saved (STRATA_ARTIFACTS, default a temporary directory). Without a browser: the session
cookie's attributes, CSRF (no token, a wrong one, another Origin), session fixation (an id the
client brings is never adopted), sign-out, the sign-in throttle, and denied sign-ins in the audit
trail; over TLS the cookie is Secure. A second browser walk creates a user and an access key
(its secret shown once), disables the key, sets retention (with and without the governance
bypass) and a legal hold on an object, watches the request-rate and latency charts move, and runs
axe-core (pinned in tests/console, installed by scripts/install-deps.sh --test) on every page:
no WCAG 2.1 A/AA violation is allowed."""
import http.client
import json
import os
import shutil
import ssl
import tempfile
import time
import unittest
import urllib.request

import harness
from harness import Server, unique_name

AXE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "console", "node_modules",
                   "axe-core", "axe.min.js")

DAY_S = 2
CONFIG = harness.TWO_POOLS


def artifacts_dir():
    d = os.environ.get("STRATA_ARTIFACTS") or os.path.join(tempfile.gettempdir(), "strata-console-artifacts")
    os.makedirs(d, exist_ok=True)
    return d


class Http:
    """Console calls without a browser: (status, headers, JSON)."""

    def __init__(self, server, tls_context=None, port=None):
        self.host, self.port = "127.0.0.1", port or server.port
        self.tls = tls_context

    def call(self, method, path, body=None, headers=None):
        if self.tls:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.tls, timeout=30)
        else:
            c = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            c.request(method, "/_strata/console/api/" + path, body=body, headers=headers or {})
            r = c.getresponse()
            data = r.read()
            try:
                doc = json.loads(data) if data else {}
            except ValueError:
                doc = {"raw": data}
            return r.status, r.headers, doc
        finally:
            c.close()

    def login(self, secret=harness.SECRET_KEY, cookie=None):
        headers = {"Content-Type": "application/json"}
        if cookie:
            headers["Cookie"] = "strata_console=" + cookie
        return self.call("POST", "login", json.dumps({"access_key": harness.ACCESS_KEY,
                                                      "secret_key": secret}), headers)


def session_id(headers):
    value = headers.get("Set-Cookie", "")
    assert value.startswith("strata_console="), value
    return value.split(";")[0].split("=", 1)[1]


class ConsoleSecurityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(extra_args=["--kv-listen", "off"]).start()
        cls.http = Http(cls.server)

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.server.cleanup()

    def test_cookie_attributes_and_headers(self):
        st, headers, doc = self.http.login()
        self.assertEqual(st, 200, doc)
        cookie = headers["Set-Cookie"]
        for attr in ("HttpOnly", "SameSite=Strict", "Path=/_strata/console"):
            self.assertIn(attr, cookie)
        self.assertNotIn("Secure", cookie)  # plain HTTP here; see the TLS test
        self.assertEqual(len(session_id(headers)), 64)
        self.assertNotIn(harness.SECRET_KEY, json.dumps(doc))
        self.assertEqual(headers["Cache-Control"], "no-store")
        self.assertIn("frame-ancestors 'none'", headers["Content-Security-Policy"])
        self.assertEqual(headers["X-Frame-Options"], "DENY")

    def test_csrf_is_required_on_every_change(self):
        st, headers, doc = self.http.login()
        sid, token = session_id(headers), doc["csrf"]
        base = {"Cookie": "strata_console=" + sid}
        # Reads need only the session.
        st, _, doc = self.http.call("GET", "admin/tiers", headers=base)
        self.assertEqual(st, 200, doc)
        for extra in ({}, {"X-Strata-CSRF": "0" * 64}, {"X-Strata-CSRF": token[:-1]}):
            st, _, doc = self.http.call("POST", "admin/advisor-stop", headers={**base, **extra})
            self.assertEqual(st, 403, (extra, doc))
            self.assertIn("CSRF", doc["error"])
        st, _, doc = self.http.call("POST", "admin/advisor-stop",
                                    headers={**base, "X-Strata-CSRF": token, "Origin": "http://evil.example"})
        self.assertEqual(st, 403, doc)
        self.assertIn("cross-origin", doc["error"])
        st, _, pol = self.http.call("GET", "admin/advisor-policy", headers=base)
        self.assertTrue(pol["enabled"], "a refused call changed nothing")
        st, _, doc = self.http.call("POST", "admin/advisor-stop", headers={
            **base, "X-Strata-CSRF": token, "Origin": f"http://127.0.0.1:{self.server.port}"})
        self.assertEqual(st, 200, doc)
        st, _, doc = self.http.call("POST", "admin/advisor-resume", headers={**base, "X-Strata-CSRF": token})
        self.assertEqual(st, 200, doc)
        # Without a session: 401, whatever the token.
        st, _, doc = self.http.call("POST", "admin/advisor-stop", headers={"X-Strata-CSRF": token})
        self.assertEqual(st, 401, doc)

    def test_session_fixation_is_refused(self):
        planted = "ab" * 32
        st, headers, doc = self.http.login(cookie=planted)
        self.assertEqual(st, 200, doc)
        sid = session_id(headers)
        self.assertNotEqual(sid, planted)
        st, _, doc = self.http.call("GET", "session", headers={"Cookie": "strata_console=" + planted})
        self.assertEqual(st, 401, doc)
        st, _, doc = self.http.call("GET", "session", headers={"Cookie": "strata_console=" + sid})
        self.assertEqual(st, 200, doc)
        # Signing in again with a live session replaces it: the old id stops working.
        st, headers2, _ = self.http.login(cookie=sid)
        sid2 = session_id(headers2)
        self.assertNotEqual(sid2, sid)
        self.assertEqual(self.http.call("GET", "session", headers={"Cookie": "strata_console=" + sid})[0], 401)
        # Sign-out ends it.
        st, _, _ = self.http.call("GET", "session", headers={"Cookie": "strata_console=" + sid2})
        token = self.http.call("GET", "session", headers={"Cookie": "strata_console=" + sid2})[2]["csrf"]
        st, h, doc = self.http.call("POST", "logout", headers={"Cookie": "strata_console=" + sid2,
                                                               "X-Strata-CSRF": token})
        self.assertEqual(st, 200, doc)
        self.assertIn("Max-Age=0", h["Set-Cookie"])
        self.assertEqual(self.http.call("GET", "admin/tiers", headers={"Cookie": "strata_console=" + sid2})[0], 401)

    def test_wrong_secret_is_refused_audited_and_throttled(self):
        # Its own server: the throttle counts per address.
        server = Server(extra_args=["--kv-listen", "off"]).start()
        try:
            h = Http(server)
            st, headers, doc = h.login(secret="not-the-secret")
            self.assertEqual(st, 403, doc)
            self.assertNotIn("Set-Cookie", headers)
            for _ in range(4):
                self.assertEqual(h.login(secret="nope")[0], 403)
            st, headers, doc = h.login()  # even the right secret waits now
            self.assertEqual(st, 429, doc)
            self.assertIn("Retry-After", headers)
            st, records = harness.admin(server, "GET", "audit-query", kind="denied", operation="ConsoleSignIn")
            self.assertEqual(st, 200, records)
            self.assertEqual(len(records["records"]), 5, records)
            self.assertEqual(records["records"][0]["identity"], harness.ACCESS_KEY)
            self.assertEqual(records["records"][0]["result"], "SignatureDoesNotMatch")
        finally:
            server.stop()
            server.cleanup()

    def test_a_user_without_console_rights_cannot_sign_in(self):
        user = unique_name("u").replace("-", "")[:30]
        key = harness.make_user(self.server, user)
        h = Http(self.server)
        st, headers, doc = h.call("POST", "login", json.dumps({"access_key": key["ak"],
                                                               "secret_key": key["sk"]}),
                                  {"Content-Type": "application/json"})
        self.assertEqual(st, 403, doc)
        self.assertIn("strata:Console", doc["error"])

    def test_a_console_user_reads_and_changes_only_what_its_policy_allows(self):
        user = unique_name("c").replace("-", "")[:30]
        policy = json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Resource": "*",
            "Action": ["strata:Console", "strata:tiers", "strata:advisor-list", "strata:advisor-stop"]}]})
        key = harness.make_user(self.server, user, policy)
        st, headers, doc = self.http.call("POST", "login", json.dumps({"access_key": key["ak"],
                                                                       "secret_key": key["sk"]}),
                                          {"Content-Type": "application/json"})
        self.assertEqual(st, 200, doc)
        self.assertEqual(doc["identity"], user)
        base = {"Cookie": "strata_console=" + session_id(headers)}
        csrf = {**base, "X-Strata-CSRF": doc["csrf"]}
        for action in ("tiers", "advisor-list"):
            st, _, doc = self.http.call("GET", "admin/" + action, headers=base)
            self.assertEqual(st, 200, (action, doc))
        # Reads it was not given are refused like changes: who the users are,
        # the keys, the audit trail, the key service, the buckets' settings.
        for action in ("users", "groups", "policies", "audit-query", "audit-verify", "kms-keys",
                       "buckets", "drives", "advisor-policy"):
            st, _, doc = self.http.call("GET", "admin/" + action, headers=base)
            self.assertEqual(st, 403, (action, doc))
            self.assertEqual(doc["error"], "not allowed: strata:" + action)
        st, _, doc = self.http.call("POST", "admin/advisor-stop", headers=csrf)
        self.assertEqual(st, 200, doc)
        st, _, doc = self.http.call("POST", "admin/advisor-resume", headers=csrf)
        self.assertEqual(st, 403, doc)
        st, _, doc = self.http.call("POST", "admin/key-create", headers=csrf)
        self.assertEqual(st, 403, doc)
        st, doc = harness.admin(self.server, "POST", "advisor-resume")
        self.assertEqual(st, 200, doc)

    def test_secure_cookie_over_tls(self):
        from test_tls import make_cert  # the same openssl-made certificate as the TLS tests
        d = tempfile.mkdtemp(prefix="strata-console-tls-")
        try:
            cert, key = make_cert(d)
            port = harness.free_port()
            server = Server(extra_args=["--kv-listen", "off", "--listen-tls", f"127.0.0.1:{port}",
                                        "--tls-cert", cert, "--tls-key", key]).start()
            try:
                ctx = ssl.create_default_context(cafile=cert)
                ctx.check_hostname = False
                st, headers, doc = Http(server, ctx, port).login()
                self.assertEqual(st, 200, doc)
                self.assertIn("Secure", headers["Set-Cookie"])
            finally:
                server.stop()
                server.cleanup()
        finally:
            shutil.rmtree(d, ignore_errors=True)


class ConsoleBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            from selenium import webdriver  # noqa: F401
        except ImportError:
            raise AssertionError("python3-selenium is not installed (scripts/install-deps.sh --test)")
        cls.config = harness.write_config(CONFIG, prefix="strata-console-")
        cls.server = Server(extra_args=[
            "--config", cls.config, "--kv-listen", "off", "--lifecycle-day-seconds", str(DAY_S),
            "--lifecycle-interval-s", "3600", "--advisor-interval-s", "3600",
            "--advisor-cold-days", "1", "--advisor-min-bytes", "1"]).start()
        cls.s3 = cls.server.boto3_client()
        cls.shots = artifacts_dir()
        cls.profile = tempfile.mkdtemp(prefix="strata-chromium-")
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service as ChromeService
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", "--disable-extensions", "--window-size=1280,800",
                     "--user-data-dir=" + cls.profile):
            opts.add_argument(flag)
        driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
        cls.browser = webdriver.Chrome(service=ChromeService(driver_path), options=opts)
        cls.browser.set_window_size(1280, 800)

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        shutil.rmtree(cls.profile, ignore_errors=True)
        cls.server.stop()
        cls.server.cleanup()
        os.unlink(cls.config)

    # -- helpers
    def wait(self, what, predicate, timeout=20):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                v = predicate()
                if v:
                    return v
            except Exception as e:  # noqa: BLE001 - the page is still changing
                last = e
            time.sleep(0.1)
        self.browser.save_screenshot(os.path.join(self.shots, "console-failed.png"))
        self.fail(f"timed out waiting for {what} ({last}); page: {self.browser.find_element('id', 'page').text[:2000]}")

    def el(self, css):
        return self.browser.find_element("css selector", css)

    def els(self, css):
        return self.browser.find_elements("css selector", css)

    def go(self, nav, loaded):
        self.el("#nav-" + nav).click()
        self.wait(loaded + " page", lambda: self.el("#page").get_attribute("data-loaded") == loaded
                  and self.browser.execute_script("return location.hash").startswith("#" + nav))

    def shot(self, name):
        path = os.path.join(self.shots, f"console-{name}.png")
        self.assertTrue(self.browser.save_screenshot(path), path)
        self.assertGreater(os.path.getsize(path), 1000)

    def test_console_end_to_end(self):
        b = self.browser
        # A prefix that has gone cold, for the advisor page.
        seed = unique_name("seed")
        self.s3.create_bucket(Bucket=seed)
        self.s3.put_object(Bucket=seed, Key="ckpt/old/a", Body=os.urandom(300 << 10))
        cold_since = time.time()

        b.get(self.server.endpoint + "/_strata/console/")
        self.wait("the sign-in form", lambda: self.el("#login").is_displayed())
        self.assertEqual(b.switch_to.active_element.get_attribute("id"), "login-access-key")
        self.el("#login-access-key").send_keys(harness.ACCESS_KEY)
        self.el("#login-secret-key").send_keys("wrong-secret")
        self.el("#login-submit").click()
        self.wait("the refusal", lambda: "refused" in self.el("#login-error").text)
        self.shot("signin-refused")
        self.el("#login-secret-key").clear()
        self.el("#login-secret-key").send_keys(harness.SECRET_KEY)
        self.el("#login-submit").click()
        self.wait("the overview", lambda: self.el("#page").get_attribute("data-loaded") == "overview")
        self.assertIn(harness.ACCESS_KEY, self.el("#who").text)
        self.assertEqual(b.get_cookie("strata_console")["httpOnly"], True)
        self.assertIsNone(b.execute_script("return document.cookie.match(/strata_console/)"))
        self.wait("capacity chart", lambda: self.els("svg.chart"))
        self.shot("overview")

        # Create a bucket.
        self.go("buckets", "buckets")
        name = unique_name("web")
        self.el("#bucket-name").send_keys(name)
        self.el("#bucket-create").click()
        self.wait("the new bucket's row", lambda: self.els(f'tr[data-bucket="{name}"]'))
        self.s3.head_bucket(Bucket=name)
        self.shot("buckets")

        # Upload through a presigned URL, see it listed.
        self.el(f'tr[data-bucket="{name}"] a').click()
        self.wait("the bucket browser", lambda: self.el("#page").get_attribute("data-loaded") == "browse")
        body = os.urandom(70000)
        upload_dir = tempfile.mkdtemp(prefix="strata-upload-")
        path = os.path.join(upload_dir, "report.bin")
        with open(path, "wb") as f:
            f.write(body)
        try:
            self.el("#upload-file").send_keys(path)
            self.el("#upload-submit").click()
            self.wait("the uploaded object's row", lambda: self.els('tr[data-key="report.bin"]'))
        finally:
            shutil.rmtree(upload_dir, ignore_errors=True)
        self.assertEqual(self.s3.get_object(Bucket=name, Key="report.bin")["Body"].read(), body)
        self.el('tr[data-key="report.bin"] button[aria-label^="details"]').click()
        self.wait("the object's details", lambda: "x-amz-version-id" in self.el("#object-detail").text
                  or "etag" in self.el("#object-detail").text)
        self.el('tr[data-key="report.bin"] button[aria-label^="download"]').click()
        link = self.wait("the presigned link", lambda: self.el("#download-link").get_attribute("href"))
        self.assertIn("X-Amz-Signature=", link)
        with urllib.request.urlopen(link, timeout=30) as r:  # no cookie, no credentials: the URL is the right
            self.assertEqual(r.read(), body)
        self.shot("browser")

        # A lifecycle rule.
        self.go("buckets", "buckets")
        from selenium.webdriver.support.ui import Select
        Select(self.el("#lc-bucket")).select_by_value(name)
        self.el("#lc-prefix").send_keys("logs/")
        self.el("#lc-days").clear()
        self.el("#lc-days").send_keys("30")
        Select(self.el("#lc-class")).select_by_value("STANDARD_IA")
        self.el("#lc-submit").click()
        self.wait("the rule count", lambda: self.el(f'tr[data-bucket="{name}"] td:nth-child(4)').text == "1")
        rules = self.s3.get_bucket_lifecycle_configuration(Bucket=name)["Rules"]
        self.assertEqual(rules[0]["Filter"]["Prefix"], "logs/")
        self.assertEqual(rules[0]["Transitions"][0], {"Days": 30, "StorageClass": "STANDARD_IA"})

        # The advisor: analyse, approve, see it done.
        time.sleep(max(0, cold_since + DAY_S + 0.5 - time.time()))
        self.go("advisor", "advisor")
        self.el("#advisor-run").click()
        article = self.wait("the seed bucket's recommendation", lambda: [
            a for a in self.els("article.rec") if seed in a.text])[0]
        rec_id = article.get_attribute("data-id")
        self.assertIn("→ warm", article.text)
        self.shot("advisor")
        self.el(f'button.approve[data-id="{rec_id}"]').click()

        def done():
            st, doc = harness.admin(self.server, "GET", "advisor-show", id=rec_id)
            return doc.get("state") == "done"
        self.wait("the approved move", done, timeout=30)
        self.assertEqual(self.s3.head_object(Bucket=seed, Key="ckpt/old/a").get("StorageClass"), "STANDARD_IA")
        self.go("tiers", "tiers")
        self.shot("tiers")

        # The audit trail shows the move and the approval.
        self.go("audit", "audit")
        self.el("#audit-operation").send_keys("AdvisorTransition")
        self.el("#audit-submit").click()
        self.wait("the move in the audit page", lambda: any(
            seed + "/ckpt/old/a" in r.text and "advisor:" + rec_id in r.text
            for r in self.els("#audit-results tbody tr")))
        self.shot("audit")
        self.el("#audit-verify").click()
        self.wait("the chain verification", lambda: "chain verified" in self.el("#audit-verify-result").text)
        st, doc = harness.admin(self.server, "GET", "audit-query", operation="ConsoleAdmin")
        self.assertTrue(any(r["key"] == "advisor-approve" and r["identity"] == harness.ACCESS_KEY
                            for r in doc["records"]), doc)

        self.go("users", "users")
        self.shot("users")
        # Keyboard: the navigation is reachable and usable without a mouse.
        from selenium.webdriver.common.keys import Keys
        self.el("#nav-overview").send_keys(Keys.ENTER)
        self.wait("overview by keyboard", lambda: self.el("#page").get_attribute("data-loaded") == "overview")
        # Sign out: the session is gone server-side too.
        self.el("#logout").click()
        self.wait("the sign-in form again", lambda: self.el("#login").is_displayed())

    def sign_in(self):
        b = self.browser
        b.get(self.server.endpoint + "/_strata/console/")
        self.wait("the sign-in form", lambda: self.el("#login").is_displayed())
        self.el("#login-access-key").send_keys(harness.ACCESS_KEY)
        self.el("#login-secret-key").send_keys(harness.SECRET_KEY)
        self.el("#login-submit").click()
        self.wait("the overview", lambda: self.el("#page").get_attribute("data-loaded") == "overview")

    def axe(self, name):
        """axe-core's WCAG 2.1 A and AA rules on the page as it is now: no violation."""
        with open(AXE, encoding="utf-8") as f:
            source = f.read()
        if not self.browser.execute_script("return typeof axe !== 'undefined'"):
            self.browser.execute_script(source)
        result = self.browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}})
               .then(r => done({violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                 nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + ": " + n.failureSummary)})),
                               passes: r.passes.length}))
               .catch(e => done({error: String(e)}));""")
        self.assertNotIn("error", result, result)
        self.assertGreater(result["passes"], 5, name)  # the rules ran
        self.assertEqual(result["violations"], [], f"{name}: " + json.dumps(result["violations"], indent=1))

    def test_users_object_lock_requests_and_accessibility(self):
        self.assertTrue(os.path.exists(AXE), "axe-core is not installed (scripts/install-deps.sh --test)")
        b = self.browser
        b.set_script_timeout(60)
        b.get(self.server.endpoint + "/_strata/console/")
        b.delete_all_cookies()  # whatever the other walk left: start signed out
        b.get(self.server.endpoint + "/_strata/console/")
        self.wait("the sign-in form", lambda: self.el("#login").is_displayed())
        self.axe("sign-in")
        self.sign_in()

        # Requests and latency: traffic between two polls of the overview moves the charts.
        locked = unique_name("lock")
        self.s3.create_bucket(Bucket=locked, ObjectLockEnabledForBucket=True)
        self.s3.put_object(Bucket=locked, Key="evidence.bin", Body=b"x" * 1000)
        for _ in range(3):
            for i in range(20):
                self.s3.head_object(Bucket=locked, Key="evidence.bin")
            time.sleep(1)
        self.wait("the request rate", lambda: "requests/s now" in self.el("#card-requests").text, timeout=30)
        self.wait("the latency quantiles", lambda: "p50 " in self.el("#latency-now").text
                  and "p99 " in self.el("#latency-now").text, timeout=30)
        self.assertEqual(len(self.els("#card-latency svg.chart")), 2)
        self.assertIn("no KV-cache namespaces", self.el("#card-kv").text)  # --kv-listen off
        self.assertRegex(self.el("#lifecycle-progress").text, r"lifecycle: \d+ passes, \d+ versions scanned")
        self.shot("overview-requests")
        self.axe("overview")

        # Users and keys: create both; the secret is shown once; the key works; disable it.
        self.go("users", "users")
        self.axe("users")
        user = unique_name("webuser")
        self.el("#user-name").send_keys(user)
        self.el("#user-create").click()
        self.wait("the new user's row", lambda: self.els(f'tr[data-user="{user}"]'))
        from selenium.webdriver.support.ui import Select
        Select(self.el("#key-user")).select_by_value(user)
        self.el("#key-create").click()
        secret = self.wait("the new key's secret", lambda: self.el("#new-secret-key").text)
        access = self.el("#new-access-key").text
        self.assertEqual(b.switch_to.active_element.get_attribute("id"), "new-key")
        self.shot("users-new-key")
        self.axe("users with a new key")
        st, info = harness.admin(self.server, "GET", "user", name=user)
        self.assertEqual([k["access_key"] for k in info["access_keys"]], [access])
        # The pair signs requests (the user has no policy: authenticated, then denied).
        from botocore.exceptions import ClientError
        with self.assertRaises(ClientError) as denied:
            self.server.boto3_client(access_key=access, secret_key=secret).list_objects_v2(Bucket=locked)
        self.assertEqual(denied.exception.response["Error"]["Code"], "AccessDenied")
        self.el(f'li[data-key="{access}"] button[aria-label^="disable key"]').click()
        self.wait("the disabled key", lambda: "(disabled)" in self.el(f'li[data-key="{access}"]').text)
        st, info = harness.admin(self.server, "GET", "user", name=user)
        self.assertFalse(info["access_keys"][0]["active"])
        self.go("overview", "overview")  # the secret is gone with the page
        self.go("users", "users")
        self.assertEqual(self.els("#new-secret-key"), [])
        self.assertNotIn(secret, b.page_source)

        # Retention and legal hold of one version.
        b.get(self.server.endpoint + f"/_strata/console/#browse/{locked}/")
        self.wait("the locked bucket", lambda: self.els('tr[data-key="evidence.bin"]'))
        self.el('tr[data-key="evidence.bin"] button[aria-label^="details"]').click()
        self.wait("the lock forms", lambda: self.els("#retention-form"))
        self.axe("object details with Object Lock")
        until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3 * 86400))
        self.el("#retention-until").send_keys(until)
        self.el("#retention-submit").click()
        self.wait("the retention header", lambda: until[:10] in self.el("#object-headers").text)
        r = self.s3.get_object_retention(Bucket=locked, Key="evidence.bin")["Retention"]
        self.assertEqual(r["Mode"], "GOVERNANCE")
        self.assertEqual(r["RetainUntilDate"].strftime("%Y-%m-%dT%H:%M:%SZ"), until)
        # Shorter without the bypass: S3 refuses; with it: allowed (root may bypass).
        shorter = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 86400))
        self.el("#retention-until").clear()
        self.el("#retention-until").send_keys(shorter)
        self.el("#retention-submit").click()
        self.wait("the refusal", lambda: "retention refused: AccessDenied" in self.el("#status").text)
        self.el("#retention-until").clear()
        self.el("#retention-until").send_keys(shorter)
        self.el("#retention-bypass").click()
        self.el("#retention-submit").click()
        self.wait("the shorter retention", lambda: shorter[:10] in self.el("#object-headers").text)
        r = self.s3.get_object_retention(Bucket=locked, Key="evidence.bin")["Retention"]
        self.assertEqual(r["RetainUntilDate"].strftime("%Y-%m-%dT%H:%M:%SZ"), shorter)
        Select(self.el("#legal-hold-status")).select_by_value("ON")
        self.el("#legal-hold-submit").click()
        self.wait("the legal hold header", lambda: "x-amz-object-lock-legal-hold\nON" in self.el("#object-headers").text
                  or "x-amz-object-lock-legal-hold ON" in self.el("#object-headers").text)
        self.assertEqual(self.s3.get_object_legal_hold(Bucket=locked, Key="evidence.bin")["LegalHold"]["Status"], "ON")
        self.shot("object-lock")
        Select(self.el("#legal-hold-status")).select_by_value("OFF")
        self.el("#legal-hold-submit").click()
        self.wait("the legal hold off", lambda: self.s3.get_object_legal_hold(
            Bucket=locked, Key="evidence.bin")["LegalHold"]["Status"] == "OFF")

        # Every other page passes the audit too.
        for nav in ("buckets", "tiers", "advisor", "audit"):
            self.go(nav, nav)
            self.axe(nav)
        self.el("#logout").click()
        self.wait("the sign-in form again", lambda: self.el("#login").is_displayed())


if __name__ == "__main__":
    unittest.main()
