"""CORS in a real browser (issue 12): headless Debian chromium loads a page
from another origin (a local web server on its own port) whose script
uploads with a presigned PUT — a non-simple request, so the browser sends
its own preflight first — reads the exposed ETag, downloads with a presigned
GET, and is refused by the browser where the bucket's CORS rules do not
allow the page's origin. The rules decide, not the test: the same page
against a bucket without them gets nothing through.

Run: STRATA_BIN=build/strata /usr/bin/python3 -m unittest tests/integration/test_browser_cors.py -v
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import ServerTestCase, free_port, unique_name  # noqa: E402

PAGE = """<!doctype html><html><body><pre id="out">pending</pre><script>
async function attempt(name, url, init, out) {
  try {
    const r = await fetch(url, init);
    out[name + "_status"] = r.status;
    out[name + "_etag"] = r.headers.get("ETag");
    out[name + "_body"] = await r.text();
  } catch (e) {
    out[name + "_error"] = String(e);
  }
}
async function run() {
  const out = {};
  await attempt("put", PUT_URL, {method: "PUT", body: "from the browser",
                                 headers: {"Content-Type": "application/octet-stream"}}, out);
  await attempt("get", GET_URL, {}, out);
  await attempt("other_put", OTHER_PUT_URL, {method: "PUT", body: "should not arrive",
                                             headers: {"Content-Type": "application/octet-stream"}}, out);
  await attempt("other_get", OTHER_GET_URL, {}, out);
  document.getElementById("out").textContent = JSON.stringify(out);
}
run();
</script></body></html>"""

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--virtual-time-budget=15000", "--dump-dom"]


class Origin:
    """A web server for the page (set later: it names URLs made for this
    origin's rules): its own origin, another port."""

    def __init__(self):
        self.page = b""
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - http.server's name
                body = origin.page
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.port}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class BrowserCorsTest(ServerTestCase):
    def chromium(self, url):
        exe = shutil.which("chromium")
        self.assertIsNotNone(exe, "Debian's chromium is not installed (scripts/install-deps.sh --test)")
        profile = tempfile.mkdtemp(prefix="strata-chromium-")
        self.addCleanup(shutil.rmtree, profile, True)
        out = subprocess.run([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", url],
                             capture_output=True, text=True, timeout=120)
        m = re.search(r'<pre id="out">(.*?)</pre>', out.stdout, re.S)
        self.assertIsNotNone(m, out.stdout[-2000:] + out.stderr[-2000:])
        text = m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<") \
            .replace("&gt;", ">")
        self.assertNotEqual(text, "pending", "the page's script did not finish: " + out.stderr[-2000:])
        return json.loads(text)

    def presign(self, method, bucket, key):
        # SigV4 (SigV2 would sign the Content-Type the browser adds).
        if not hasattr(self, "_v4"):
            self._v4 = self.server.boto3_client(signature_version="s3v4")
            self.addCleanup(self._v4.close)
        return self._v4.generate_presigned_url(method, Params={"Bucket": bucket, "Key": key},
                                               ExpiresIn=600)

    def test_presigned_upload_and_download_from_another_origin(self):
        allowed, other = unique_name("web"), unique_name("noweb")
        self.s3.create_bucket(Bucket=allowed)
        self.s3.create_bucket(Bucket=other)
        self.s3.put_object(Bucket=other, Key="o", Body=b"not for that page")
        origin = Origin()
        self.addCleanup(origin.close)
        self.s3.put_bucket_cors(Bucket=allowed, CORSConfiguration={"CORSRules": [{
            "AllowedOrigins": [origin.url], "AllowedMethods": ["GET", "PUT"],
            "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 60}]})
        # The other bucket allows a different origin only.
        self.s3.put_bucket_cors(Bucket=other, CORSConfiguration={"CORSRules": [{
            "AllowedOrigins": ["https://elsewhere.example.com"], "AllowedMethods": ["GET", "PUT"],
            "AllowedHeaders": ["*"]}]})
        urls = {"OTHER_PUT_URL": self.presign("put_object", other, "sneaked"),
                "OTHER_GET_URL": self.presign("get_object", other, "o"),
                "PUT_URL": self.presign("put_object", allowed, "from-browser"),
                "GET_URL": self.presign("get_object", allowed, "from-browser")}
        page = PAGE
        for name, url in urls.items():  # OTHER_* first: they contain the shorter names
            page = page.replace(name, json.dumps(url))
        origin.page = page.encode()

        result = self.chromium(origin.url + "/page.html")
        # Allowed: the upload went through (after the browser's preflight), its
        # ETag was exposed to the script, and the download read it back.
        self.assertEqual(result.get("put_status"), 200, result)
        stored = self.s3.head_object(Bucket=allowed, Key="from-browser")
        self.assertEqual(result.get("put_etag"), stored["ETag"], result)
        self.assertEqual(result.get("get_status"), 200, result)
        self.assertEqual(result.get("get_body"), "from the browser", result)
        self.assertEqual(self.s3.get_object(Bucket=allowed, Key="from-browser")["Body"].read(),
                         b"from the browser")
        # Not allowed: the browser refused both (a TypeError for the script),
        # and the refused preflight kept the PUT from being sent at all.
        self.assertIn("other_put_error", result, result)
        self.assertIn("other_get_error", result, result)
        self.assertNotIn("other_get_body", result, result)
        self.assertS3Error(self.s3.head_object, "404", 404, Bucket=other, Key="sneaked")


if __name__ == "__main__":
    unittest.main()
