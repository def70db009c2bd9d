// strata's web console (docs/console.md): plain modern JavaScript, no
// toolchain, no CDN. Every figure comes from the admin API
// (/_strata/console/api/admin/<action>, JSON); S3 calls (bucket listing,
// upload, download, lifecycle) go to strata's S3 endpoint through presigned
// URLs the admin API makes with the signed-in identity's own key. All text is
// set with textContent: object keys and bucket names are never parsed as HTML.
"use strict";

const API = "/_strata/console/api/";
let csrf = "";
let who = "";
let timer = null;

// ---- small helpers -----------------------------------------------------------
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
function bytes(n) {
  n = Number(n || 0);
  const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (Math.abs(n) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(1)) + " " + u[i];
}
function status(msg) {
  const st = document.getElementById("status");
  st.textContent = msg;
  clearTimeout(status.t);
  status.t = setTimeout(() => { st.textContent = ""; }, 6000);
}
function field(id, label, input) {
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id, text: label }), input);
}
function table(headers, rows, attrs) {
  return h("table", attrs || {},
    h("thead", {}, h("tr", {}, headers.map(x => h("th", { scope: "col", class: x.num ? "num" : null, text: x.label || x })))),
    h("tbody", {}, rows));
}
function page(title, ...children) {
  const p = document.getElementById("page");
  p.replaceChildren(h("h1", { text: title }), ...children.flat().filter(c => c !== null && c !== undefined));
  document.title = title + " — strata console";
}

async function api(method, action, params, body) {
  const q = new URLSearchParams(params || {}).toString();
  const headers = {};
  if (method !== "GET") headers["X-Strata-CSRF"] = csrf;
  const r = await fetch(API + "admin/" + encodeURIComponent(action) + (q ? "?" + q : ""),
                        { method, headers, body, credentials: "same-origin" });
  if (r.status === 401) { showLogin(); throw new Error("signed out"); }
  const doc = await r.json().catch(() => ({ error: "HTTP " + r.status }));
  if (!r.ok) throw new Error(doc.error || ("HTTP " + r.status));
  return doc;
}

// An S3 request through a presigned URL made for this identity.
async function s3(method, bucket, key, query, body, extra, presignOptions) {
  const params = Object.assign({ method, bucket, host: location.host }, presignOptions || {});
  if (key) params.key = key;
  if (query) params.query = query;
  const signed = await api("POST", "presign", params, typeof body === "string" ? body : undefined);
  const r = await fetch(signed.url, { method, body, headers: Object.assign({}, signed.headers, extra || {}) });
  const text = method === "HEAD" ? "" : await r.text();
  if (!r.ok) {
    const m = /<Code>([^<]*)<\/Code>[\s\S]*?<Message>([^<]*)<\/Message>/.exec(text);
    throw new Error(m ? m[1] + ": " + m[2] : "HTTP " + r.status);
  }
  return { response: r, xml: text ? new DOMParser().parseFromString(text, "application/xml") : null };
}
function xmlAll(doc, tag) { return Array.from(doc.getElementsByTagName(tag)); }
function xmlText(node, tag) { const e = node.getElementsByTagName(tag)[0]; return e ? e.textContent : ""; }
function q3(params) {
  return Object.entries(params).map(([k, v]) => encodeURIComponent(k) + (v === null ? "" : "=" + encodeURIComponent(v))).join("&");
}

// ---- charts (SVG) ---------------------------------------------------------------
function barChart(values, opts) {
  const w = opts.width || 360, hgt = opts.height || 80, max = Math.max(1, ...values);
  const bw = w / Math.max(1, values.length);
  const svg = s("svg", { class: "chart", width: w, height: hgt, role: "img", "aria-label": opts.label, viewBox: `0 0 ${w} ${hgt}` });
  svg.append(s("title", {}, opts.label));
  values.forEach((v, i) => {
    const bh = (v / max) * (hgt - 4);
    svg.append(s("rect", { x: i * bw + 1, y: hgt - bh, width: Math.max(1, bw - 2), height: bh, fill: "#0b5cad" },
                 s("title", {}, (opts.names ? opts.names[i] + ": " : "") + v)));
  });
  return svg;
}
function lineChart(values, label) {
  const w = 360, hgt = 80, max = Math.max(1, ...values);
  const pts = values.map((v, i) => `${(i / Math.max(1, values.length - 1)) * w},${hgt - 2 - (v / max) * (hgt - 6)}`).join(" ");
  return s("svg", { class: "chart", width: w, height: hgt, role: "img", "aria-label": label, viewBox: `0 0 ${w} ${hgt}` },
           s("title", {}, label), s("polyline", { points: pts, fill: "none", stroke: "#0b5cad", "stroke-width": 2 }));
}
function fill(used, total) {
  const pct = total > 0 ? Math.min(100, (100 * used) / total) : 0;
  return h("div", { class: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": pct.toFixed(0), "aria-label": "fill level" },
           (() => { const bar = h("span"); bar.style.width = pct.toFixed(1) + "%"; return bar; })());
}

// Latency quantile `q` from cumulative histogram counts (as Prometheus'
// histogram_quantile: linear within the bucket the rank falls in); null
// without observations, Infinity past the last bound.
function quantile(bounds, cum, q) {
  const n = cum.length ? cum[cum.length - 1] : 0;
  if (n <= 0) return null;
  const rank = q * n;
  for (let i = 0; i < cum.length; i++) {
    if (cum[i] >= rank) {
      if (i >= bounds.length) return Infinity;
      const lo = i === 0 ? 0 : bounds[i - 1], below = i === 0 ? 0 : cum[i - 1];
      const inBucket = cum[i] - below;
      return inBucket > 0 ? lo + (bounds[i] - lo) * ((rank - below) / inBucket) : bounds[i];
    }
  }
  return Infinity;
}
function ms(seconds) {
  if (seconds === null) return "–";
  if (!isFinite(seconds)) return "> 10 s";
  return seconds < 1 ? (seconds * 1000).toFixed(1) + " ms" : seconds.toFixed(2) + " s";
}
// Requests over the last polls: rate, p50/p99 latency and KV hit rate per interval.
const requestSamples = [];
function requestIntervals() {
  const out = [];
  for (let i = 1; i < requestSamples.length; i++) {
    const a = requestSamples[i - 1], b = requestSamples[i];
    const secs = Math.max(1e-3, (b.time_ns - a.time_ns) / 1e9);
    const sum = doc => {  // every operation's histogram together
      const ops = doc.s3 ? doc.s3.operations : [];
      const cum = new Array((doc.s3 ? doc.s3.latency_bounds_seconds.length : 0) + 1).fill(0);
      let requests = 0, errors = 0;
      for (const o of ops) {
        o.latency_counts.forEach((c, j) => { cum[j] += c; });
        requests += o.requests;
        errors += o.server_errors;
      }
      return { cum, requests, errors };
    };
    const sa = sum(a), sb = sum(b);
    const delta = sb.cum.map((c, j) => c - (sa.cum[j] || 0));
    const bounds = b.s3 ? b.s3.latency_bounds_seconds : [];
    const hits = b.kv.hits - a.kv.hits, misses = b.kv.misses - a.kv.misses;
    out.push({ rate: (sb.requests - sa.requests) / secs, errors: sb.errors - sa.errors,
               p50: quantile(bounds, delta, 0.5), p99: quantile(bounds, delta, 0.99),
               hitRate: hits + misses > 0 ? (100 * hits) / (hits + misses) : null, kvReads: hits + misses });
  }
  return out;
}

// ---- pages ----------------------------------------------------------------------------
const throughput = [];
async function overview() {
  const [tiers, drives, heal, energy, adv, req] = await Promise.all([
    api("GET", "tiers"), api("GET", "drives"), api("GET", "heal-status"), api("GET", "energy"),
    api("GET", "advisor-list").catch(() => null), api("GET", "requests").catch(() => null)]);
  if (req) {
    requestSamples.push(req);
    if (requestSamples.length > 61) requestSamples.shift();
  }
  const iv = requestIntervals();
  const last = iv.length ? iv[iv.length - 1] : null;
  const kvNs = req ? req.kv.namespaces : [];
  const objects = tiers.pools.reduce((a, p) => a + p.objects, 0);
  const stored = tiers.pools.reduce((a, p) => a + p.bytes, 0);
  throughput.push({ t: Date.now(), bytes: energy.node.bytes });
  if (throughput.length > 60) throughput.shift();
  const rates = [];
  for (let i = 1; i < throughput.length; i++) {
    rates.push(Math.max(0, (throughput[i].bytes - throughput[i - 1].bytes) / ((throughput[i].t - throughput[i - 1].t) / 1000)));
  }
  const measured = energy.node.measured_joules !== undefined;
  page("Overview",
    h("div", { class: "cards" },
      h("section", { class: "card", "aria-labelledby": "c-cap" }, h("h2", { id: "c-cap", text: "Capacity per tier" }),
        barChart(tiers.pools.map(p => p.bytes), { label: "bytes stored per pool", names: tiers.pools.map(p => p.name + " (" + p.media + ")") }),
        h("ul", {}, tiers.pools.map(p => h("li", {}, `${p.name} (${p.media}): ${bytes(p.bytes)} in ${p.objects} objects; ${bytes(p.free_bytes)} free`)))),
      h("section", { class: "card" }, h("h2", { text: "Objects" }), h("div", { class: "big", id: "total-objects", text: String(objects) }),
        h("div", { class: "muted", text: bytes(stored) + " stored" })),
      h("section", { class: "card" }, h("h2", { text: "Throughput (bytes/s, live)" }),
        lineChart(rates.length ? rates : [0], "bytes per second over the last two minutes"),
        h("div", { class: "muted", text: rates.length ? bytes(rates[rates.length - 1]) + "/s now" : "measuring…" })),
      h("section", { class: "card", id: "card-requests" }, h("h2", { text: "S3 requests (per second, live)" }),
        lineChart(iv.length ? iv.map(x => x.rate) : [0], "S3 requests per second over the last two minutes"),
        h("div", { class: "muted", text: last ? `${last.rate.toFixed(1)} requests/s now; ${last.errors} server errors in the last interval` : (req && req.s3 ? "measuring…" : "request metrics are off") })),
      h("section", { class: "card", id: "card-latency" }, h("h2", { text: "S3 latency (p50 / p99, live)" }),
        lineChart(iv.length ? iv.map(x => (x.p99 !== null && isFinite(x.p99) ? x.p99 * 1000 : 0)) : [0], "p99 request latency in milliseconds over the last two minutes"),
        lineChart(iv.length ? iv.map(x => (x.p50 !== null && isFinite(x.p50) ? x.p50 * 1000 : 0)) : [0], "p50 request latency in milliseconds over the last two minutes"),
        h("div", { class: "muted", id: "latency-now", text: last ? `p50 ${ms(last.p50)}, p99 ${ms(last.p99)} (upper chart p99, lower p50; estimated from histogram buckets)` : "measuring…" })),
      h("section", { class: "card", id: "card-kv" }, h("h2", { text: "KV-cache hit rate" }),
        lineChart(iv.length ? iv.map(x => x.hitRate ?? 0) : [0], "KV-cache hit rate in percent over the last two minutes"),
        h("div", { class: "muted", text: last && last.hitRate !== null ? `${last.hitRate.toFixed(1)} % of ${last.kvReads} block reads in the last interval` : "no KV reads in the last interval" }),
        kvNs.length
          ? table(["namespace", { label: "hit rate", num: true }, { label: "blocks", num: true }, { label: "stored", num: true }, "last access"],
              kvNs.map(n => h("tr", {}, h("td", { text: n.bucket }),
                h("td", { class: "num", text: n.hits + n.misses ? ((100 * n.hits) / (n.hits + n.misses)).toFixed(1) + " %" : "–" }),
                h("td", { class: "num", text: n.blocks }), h("td", { class: "num", text: bytes(n.bytes) }), h("td", { text: n.last_access || "never" }))),
              { id: "kv-table" })
          : h("p", { text: "no KV-cache namespaces" })),
      h("section", { class: "card" }, h("h2", { text: "Drives" }),
        drives.erasure_coded
          ? h("ul", {}, drives.drives.map(d => h("li", { class: d.state === "ok" ? "ok" : "bad" }, `${d.position}: ${d.path} — ${d.state}`)))
          : h("p", { text: drives.layout || "single directory" })),
      h("section", { class: "card" }, h("h2", { text: "Heal" }),
        h("p", { text: heal.has_healer ? `${heal.queued} queued, ${heal.shards_rebuilt} shards rebuilt, ${heal.unrecoverable} unrecoverable, ${heal.scrub_passes} scrub passes` : heal.healer })),
      h("section", { class: "card" }, h("h2", { text: "Tier moves and lifecycle" }),
        adv ? h("p", { text: `advisor ${adv.executor.enabled ? "enabled" : "stopped"}; ${adv.executor.moved_objects} objects (${bytes(adv.executor.moved_bytes)}) moved since start; today ${bytes(adv.executor.bytes_today)} of ${bytes(adv.executor.budget_bytes)}` })
            : h("p", { text: "advisor off" }),
        h("p", { text: `${tiers.in_flight.restores} restores, ${tiers.in_flight.uncommitted_writes} writes in flight` }),
        tiers.lifecycle ? h("p", { id: "lifecycle-progress", text: `lifecycle: ${tiers.lifecycle.passes} passes, ${tiers.lifecycle.versions_scanned} versions scanned; ${tiers.lifecycle.transitioned} transitioned, ${tiers.lifecycle.expired} expired, ${tiers.lifecycle.delete_markers} delete markers, ${tiers.lifecycle.aborted_uploads} uploads aborted, ${tiers.lifecycle.locked} kept by Object Lock, ${tiers.lifecycle.failed} failed (retried)` }) : null),
      h("section", { class: "card" }, h("h2", { text: "Energy" }),
        h("div", { class: "big", text: (measured ? energy.node.measured_joules : energy.node.modelled_joules).toFixed(1) + " J" }),
        h("div", { class: "muted", text: measured ? "measured (RAPL), modelled " + energy.node.modelled_joules.toFixed(1) + " J" : "modelled (no RAPL counters readable)" }),
        table(["workload", "name", { label: "J", num: true }], (energy.workloads || []).slice(0, 8).map(w =>
          h("tr", {}, h("td", { text: w.kind }), h("td", { text: w.name }), h("td", { class: "num", text: (w.measured_joules ?? w.modelled_joules).toFixed(2) + (w.measured_joules !== undefined ? " measured" : " modelled") })))))));
}

async function buckets() {
  const doc = await api("GET", "buckets");
  const rows = doc.buckets.map(b => h("tr", { "data-bucket": b.name },
    h("td", {}, h("a", { href: "#browse/" + encodeURIComponent(b.name) + "/", text: b.name })),
    h("td", { text: b.versioning || "off" }), h("td", { text: b.object_lock ? "on" : "off" }),
    h("td", { class: "num", text: String(b.lifecycle_rules) }), h("td", { text: b.policy ? "yes" : "no" }),
    h("td", { text: b.encryption || "none" }),
    h("td", { class: "num", text: b.objects ?? "" }), h("td", { class: "num", text: b.bytes !== undefined ? bytes(b.bytes) : "" })));
  const name = h("input", { required: true, pattern: "[a-z0-9][a-z0-9.\\-]{1,61}[a-z0-9]", autocomplete: "off" });
  const lcBucket = h("select", {}, doc.buckets.map(b => h("option", { value: b.name, text: b.name })));
  const lcPrefix = h("input", { autocomplete: "off" });
  const lcDays = h("input", { type: "number", min: 1, value: 30, required: true });
  const lcClass = h("select", {}, ["STANDARD_IA", "ONEZONE_IA", "GLACIER_IR", "GLACIER", "DEEP_ARCHIVE"].map(c => h("option", { value: c, text: c })));
  page("Buckets",
    table(["bucket", "versioning", "Object Lock", { label: "lifecycle rules", num: true }, "policy", "encryption", { label: "objects", num: true }, { label: "bytes", num: true }], rows, { id: "bucket-table" }),
    h("h2", { text: "Create a bucket" }),
    h("form", { id: "bucket-form", onsubmit: async e => {
      e.preventDefault();
      try { await s3("PUT", name.value, "", ""); status("bucket " + name.value + " created"); buckets(); } catch (err) { status("create failed: " + err.message); }
    } }, field("bucket-name", "Name", name), h("button", { id: "bucket-create", type: "submit", text: "Create bucket" })),
    h("h2", { text: "Lifecycle rule (transition)" }),
    h("form", { id: "lc-form", onsubmit: async e => {
      e.preventDefault();
      const esc = x => x.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
      const id = "console-" + Date.now();
      const xml = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><ID>${id}</ID><Filter><Prefix>${esc(lcPrefix.value)}</Prefix></Filter><Status>Enabled</Status><Transition><Days>${Number(lcDays.value)}</Days><StorageClass>${lcClass.value}</StorageClass></Transition></Rule></LifecycleConfiguration>`;
      try { await s3("PUT", lcBucket.value, "", "lifecycle", xml); status("lifecycle rule set on " + lcBucket.value); buckets(); } catch (err) { status("lifecycle failed: " + err.message); }
    } }, field("lc-bucket", "Bucket", lcBucket), field("lc-prefix", "Key prefix", lcPrefix), field("lc-days", "After days", lcDays),
       field("lc-class", "Storage class", lcClass), h("button", { id: "lc-submit", type: "submit", text: "Set rule" })),
    h("p", { class: "muted", text: "Setting a rule replaces the bucket's lifecycle configuration (as PutBucketLifecycleConfiguration does)." }));
}

async function browse(bucket, prefix) {
  const listed = await s3("GET", bucket, "", q3({ "list-type": "2", delimiter: "/", prefix }));
  const crumbs = [h("a", { href: "#browse/" + encodeURIComponent(bucket) + "/", text: bucket })];
  let acc = "";
  for (const part of prefix.split("/").filter(Boolean)) {
    acc += part + "/";
    crumbs.push(" / ", h("a", { href: "#browse/" + encodeURIComponent(bucket) + "/" + encodeURIComponent(acc), text: part }));
  }
  const rows = [];
  for (const p of xmlAll(listed.xml, "CommonPrefixes")) {
    const pre = xmlText(p, "Prefix");
    rows.push(h("tr", {}, h("td", {}, h("a", { href: "#browse/" + encodeURIComponent(bucket) + "/" + encodeURIComponent(pre), text: pre.slice(prefix.length) })),
                h("td", { text: "folder" }), h("td"), h("td"), h("td")));
  }
  const detail = h("div", { id: "object-detail" });
  for (const c of xmlAll(listed.xml, "Contents")) {
    const key = xmlText(c, "Key");
    rows.push(h("tr", { "data-key": key },
      h("td", { text: key.slice(prefix.length) }), h("td", { class: "num", text: bytes(xmlText(c, "Size")) }),
      h("td", { text: xmlText(c, "StorageClass") || "STANDARD" }), h("td", { text: xmlText(c, "LastModified") }),
      h("td", {},
        h("button", { type: "button", class: "secondary", "aria-label": "details of " + key, onclick: () => details(bucket, key, detail), text: "Details" }), " ",
        h("button", { type: "button", class: "secondary", "aria-label": "download link for " + key, onclick: async () => {
          const signed = await api("POST", "presign", { method: "GET", bucket, key, host: location.host, expires: 3600 });
          detail.replaceChildren(h("p", {}, "Presigned download link (1 hour): ", h("a", { id: "download-link", href: signed.url, text: key })));
        }, text: "Link" }))));
  }
  const file = h("input", { type: "file" });
  page("Bucket " + bucket,
    h("p", { class: "crumbs" }, crumbs),
    table(["name", { label: "size", num: true }, "class", "modified", ""], rows, { id: "object-table" }),
    h("h2", { text: "Upload into this folder" }),
    h("form", { id: "upload-form", onsubmit: async e => {
      e.preventDefault();
      const f = file.files[0];
      if (!f) return;
      try { await s3("PUT", bucket, prefix + f.name, "", f); status("uploaded " + prefix + f.name); browse(bucket, prefix); } catch (err) { status("upload failed: " + err.message); }
    } }, field("upload-file", "File", file), h("button", { id: "upload-submit", type: "submit", text: "Upload" })),
    detail);
}

async function details(bucket, key, into) {
  const head = await s3("HEAD", bucket, key, "");
  const r = head.response;
  const rows = ["content-type", "content-length", "etag", "last-modified", "x-amz-storage-class", "x-amz-version-id",
                "x-amz-object-lock-mode", "x-amz-object-lock-retain-until-date", "x-amz-object-lock-legal-hold",
                "x-amz-server-side-encryption"]
    .filter(n => r.headers.get(n) !== null).map(n => h("tr", {}, h("th", { scope: "row", text: n }), h("td", { text: r.headers.get(n) })));
  const versions = await s3("GET", bucket, "", q3({ versions: null, prefix: key }));
  const vrows = [...xmlAll(versions.xml, "Version"), ...xmlAll(versions.xml, "DeleteMarker")]
    .filter(v => xmlText(v, "Key") === key)
    .map(v => h("tr", {}, h("td", { text: xmlText(v, "VersionId") }), h("td", { text: v.tagName === "DeleteMarker" ? "delete marker" : bytes(xmlText(v, "Size")) }),
                h("td", { text: xmlText(v, "IsLatest") }), h("td", { text: xmlText(v, "LastModified") })));
  const locked = await s3("GET", bucket, "", "object-lock").then(() => true, () => false);
  into.replaceChildren(h("h2", { text: key }), table(["header", "value"], rows, { id: "object-headers" }),
                       locked ? lockForms(bucket, key, r.headers.get("x-amz-version-id"), into) : null,
                       h("h2", { text: "Versions" }),
                       table(["version id", "size", "latest", "modified"], vrows));
}

// Object Lock of one version (the bucket has Object Lock): retention and legal hold, through
// PutObjectRetention / PutObjectLegalHold signed with the signed-in identity's key, so S3 applies
// its rules (COMPLIANCE only lengthens; GOVERNANCE shortens only with the bypass, which needs
// s3:BypassGovernanceRetention).
function lockForms(bucket, key, versionId, into) {
  const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';
  const sub = name => q3(versionId && versionId !== "null" ? { [name]: null, versionId } : { [name]: null });
  const mode = h("select", {}, ["GOVERNANCE", "COMPLIANCE"].map(m => h("option", { value: m, text: m })));
  const until = h("input", { required: true, autocomplete: "off", placeholder: "2030-01-01T00:00:00Z",
                             pattern: "\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z" });
  const bypass = h("input", { type: "checkbox" });
  const hold = h("select", {}, ["ON", "OFF"].map(m => h("option", { value: m, text: m })));
  return h("div", { id: "lock-forms" },
    h("h2", { text: "Retention" }),
    h("form", { id: "retention-form", onsubmit: async e => {
      e.preventDefault();
      const xml = `<Retention ${NS}><Mode>${mode.value}</Mode><RetainUntilDate>${until.value}</RetainUntilDate></Retention>`;
      try {
        await s3("PUT", bucket, key, sub("retention"), xml, null, bypass.checked ? { bypass_governance: "true" } : null);
        status("retention of " + key + " set to " + mode.value + " until " + until.value);
        await details(bucket, key, into);
      } catch (err) { status("retention refused: " + err.message); }
    } }, field("retention-mode", "Mode", mode), field("retention-until", "Retain until (UTC, ISO 8601)", until),
       h("div", { class: "field" }, h("label", { for: "retention-bypass", text: "Bypass governance" }), Object.assign(bypass, { id: "retention-bypass" })),
       h("button", { id: "retention-submit", type: "submit", text: "Set retention" })),
    h("h2", { text: "Legal hold" }),
    h("form", { id: "legal-hold-form", onsubmit: async e => {
      e.preventDefault();
      try {
        await s3("PUT", bucket, key, sub("legal-hold"), `<LegalHold ${NS}><Status>${hold.value}</Status></LegalHold>`);
        status("legal hold of " + key + " " + hold.value);
        await details(bucket, key, into);
      } catch (err) { status("legal hold refused: " + err.message); }
    } }, field("legal-hold-status", "Legal hold", hold), h("button", { id: "legal-hold-submit", type: "submit", text: "Set legal hold" })));
}

async function tiers() {
  const [t, adv] = await Promise.all([api("GET", "tiers"), api("GET", "advisor-list").catch(() => null)]);
  page("Tiers",
    table(["pool", "media", "layout", "drives", { label: "objects", num: true }, { label: "stored", num: true }, "fill"],
      t.pools.map(p => h("tr", {}, h("td", { text: p.name + (p.primary ? " (primary)" : "") }), h("td", { text: p.media }), h("td", { text: p.layout }),
        h("td", { text: (p.drives || []).join(", ") }), h("td", { class: "num", text: p.objects }), h("td", { class: "num", text: bytes(p.bytes) }),
        h("td", {}, fill(p.capacity_bytes - p.free_bytes, p.capacity_bytes), h("span", { class: "muted", text: `${bytes(p.capacity_bytes - p.free_bytes)} of ${bytes(p.capacity_bytes)}` }))))),
    h("h2", { text: "Storage classes" }),
    table(["class", "pool"], Object.entries(t.storage_classes).map(([c, p]) => h("tr", {}, h("td", { text: c }), h("td", { text: p })))),
    h("h2", { text: "Moves in flight" }),
    h("p", { text: `${t.in_flight.restores} restores; advisor: ${adv ? (adv.executor.running ? "moving for " + adv.executor.running : adv.executor.waiting || "idle") : "off"}` }));
}

async function advisor() {
  const [doc, stats] = await Promise.all([api("GET", "advisor-list"), api("GET", "advisor-stats", { limit: 20 })]);
  const recs = doc.recommendations.map(r => h("article", { class: "rec", "data-id": r.id, "aria-labelledby": "rec-" + r.id },
    h("p", { class: "summary", id: "rec-" + r.id }, h("span", { class: "tag state-" + r.state, text: r.state }), " ", r.summary),
    h("p", { class: "muted", text: `evidence over ${r.window_days} days: ${r.reads_in_window} reads on ${r.active_days} days, idle ${r.idle_days.toFixed(1)} days; ${r.objects} objects, ${bytes(r.bytes)}` }),
    barChart(r.daily_reads, { label: "reads per day, oldest first", width: 300, height: 50 }),
    r.kind === "expire"
      ? h("p", { class: "muted", text: `KV reads since start-up: ${r.kv_hits} hits, ${r.kv_misses} misses, ${r.kv_lookups} lookups; last access ${r.last_read_ns ? new Date(r.last_read_ns / 1e6).toISOString() : "never"}${r.kv_ttl_s ? "; owner's TTL " + r.kv_ttl_s + " s" : ""}` })
      : null,
    h("p", { text: r.kind === "expire"
      ? `effect (modelled): frees ${bytes(r.bytes_to_move)} in ${r.objects_to_move} blocks; power ${r.watts_before.toFixed(4)} → 0 W; cost ${r.cost_month_before.toFixed(2)} → 0 ${doc.model.currency}/month`
      : `effect (modelled): moves ${r.objects_to_move} objects (${bytes(r.bytes_to_move)}) ${r.from_media} → ${r.to_media}; power ${r.watts_before.toFixed(4)} → ${r.watts_after.toFixed(4)} W; cost ${r.cost_month_before.toFixed(2)} → ${r.cost_month_after.toFixed(2)} ${doc.model.currency}/month` }),
    h("p", { text: "action: " + r.action }),
    r.lifecycle_rule ? h("pre", { text: r.lifecycle_rule }) : null,
    r.moved_objects || r.waiting ? h("p", { text: r.kind === "expire"
      ? `removed ${r.moved_objects} blocks (${bytes(r.moved_bytes)})${r.locked ? "; " + r.locked + " pinned blocks stayed" : ""}`
      : `progress: ${r.moved_objects} moved (${bytes(r.moved_bytes)})${r.waiting ? "; waiting: " + r.waiting : ""}` }) : null,
    r.reason && (r.state === "expired" || r.state === "failed") ? h("p", { class: "muted", text: "reason: " + r.reason }) : null,
    r.state === "pending" || r.state === "failed" ? h("div", {},
      h("button", { type: "button", class: "approve", "data-id": r.id, "aria-label": "approve " + r.summary, onclick: () => decide("advisor-approve", r.id), text: "Approve" }), " ",
      h("button", { type: "button", class: "secondary reject", "data-id": r.id, "aria-label": "reject " + r.summary, onclick: () => decide("advisor-reject", r.id), text: "Reject" })) : null));
  const policy = h("textarea", { spellcheck: "false" });
  policy.value = JSON.stringify(doc.policy, null, 2);
  const m = doc.model;
  page("Advisor",
    h("p", {}, `executor ${doc.executor.enabled ? "enabled" : "STOPPED"}; today ${bytes(doc.executor.bytes_today)} of ${bytes(doc.executor.budget_bytes)} moved${doc.executor.waiting ? "; " + doc.executor.waiting : ""} `,
      h("button", { id: "advisor-run", type: "button", onclick: async () => { const r = await api("POST", "advisor-run"); status(`analysed ${r.objects} objects: ${r.recommended} recommendations`); advisor(); }, text: "Analyse now" }), " ",
      h("button", { id: "advisor-toggle", type: "button", class: "secondary", onclick: async () => { await api("POST", doc.executor.enabled ? "advisor-stop" : "advisor-resume"); advisor(); }, text: doc.executor.enabled ? "Stop execution" : "Resume execution" })),
    h("h2", { text: "Recommendations" }),
    recs.length ? recs : h("p", { id: "no-recs", text: "No recommendations yet." }),
    h("h2", { text: "Access heat per prefix" }),
    table(["bucket", "prefix", { label: "reads (decayed)", num: true }, "heat", "last read"],
      stats.prefixes.map(p => h("tr", {}, h("td", { text: p.bucket }), h("td", { text: p.prefix || "(top)" }), h("td", { class: "num", text: p.reads.toFixed(0) }),
        h("td", {}, fill(p.reads, stats.prefixes[0].reads)), h("td", { text: p.last_read })))),
    h("h2", { text: "Execution policy" }),
    h("form", { id: "policy-form", onsubmit: async e => {
      e.preventDefault();
      try { await api("PUT", "advisor-policy", null, policy.value); status("policy saved"); advisor(); } catch (err) { status("policy refused: " + err.message); }
    } }, h("div", { class: "field wide" }, h("label", { for: "policy-json", text: "Policy (JSON)" }), Object.assign(policy, { id: "policy-json" })),
       h("button", { id: "policy-save", type: "submit", text: "Save policy" })),
    h("h2", { text: "Model" }),
    table(["media", { label: "W per TiB", num: true }, { label: m.currency + " per TiB-month", num: true }],
      Object.entries(m.media).map(([k, v]) => h("tr", {}, h("td", { text: k }), h("td", { class: "num", text: v.watts_per_tib }), h("td", { class: "num", text: v.cost_per_tib_month })))),
    h("p", { class: "muted", text: "Power and cost are modelled from these coefficients, not measured." }));
}
async function decide(action, id) {
  try { const r = await api("POST", action, { id }); status(r.done); } catch (err) { status(err.message); }
  advisor();
}

async function audit(filters) {
  filters = filters || {};
  const fields = ["from", "to", "identity", "bucket", "operation", "kind"];
  const inputs = Object.fromEntries(fields.map(f => [f, h("input", { value: filters[f] || "", autocomplete: "off" })]));
  const q = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
  q.limit = "200";
  const doc = await api("GET", "audit-query", q);
  const verify = h("p", { id: "audit-verify-result" });
  page("Audit trail",
    h("form", { id: "audit-form", onsubmit: e => {
      e.preventDefault();
      audit(Object.fromEntries(fields.map(f => [f, inputs[f].value.trim()]))).catch(err => status(err.message));
    } }, fields.map(f => field("audit-" + f, f, inputs[f])), h("button", { id: "audit-submit", type: "submit", text: "Query" })),
    h("p", {}, h("button", { id: "audit-verify", type: "button", class: "secondary", onclick: async () => {
      const v = await api("GET", "audit-verify");
      verify.className = v.ok ? "ok" : "bad";
      verify.textContent = v.ok ? `chain verified: ${v.records} records, ${v.checkpoints} checkpoints` : `DAMAGED (${v.problem}) at seq ${v.problem_seq}: ${v.detail}`;
    }, text: "Verify the chain" }), verify),
    table(["seq", "time", "kind", "identity", "operation", "result", "bucket/key", "request id"],
      doc.records.map(r => h("tr", {}, h("td", { text: r.seq }), h("td", { text: r.time }), h("td", { text: r.kind }), h("td", { text: r.identity || "(anonymous)" }),
        h("td", { text: r.operation }), h("td", { text: r.result }), h("td", { text: r.bucket + (r.key ? "/" + r.key : "") }), h("td", { text: r.request_id })))
      , { id: "audit-results" }));
}

async function users(created) {
  const [u, g] = await Promise.all([api("GET", "users"), api("GET", "groups")]);
  const list = u.users || [];
  const act = async (action, params, done) => {
    try { await api("POST", action, params); status(done); await users(); } catch (err) { status(action + " failed: " + err.message); }
  };
  const userName = h("input", { required: true, autocomplete: "off", pattern: "[A-Za-z0-9+=,.@_\\-]{1,64}" });
  const keyUser = h("select", {}, list.map(x => h("option", { value: x.name, text: x.name })));
  const rows = [];
  for (const x of list) {
    const keys = x.access_keys || [];
    rows.push(h("tr", { "data-user": x.name },
      h("td", { text: x.name }), h("td", { text: x.active === false ? "disabled" : "active" }),
      h("td", {}, keys.length ? h("ul", { class: "keys" }, keys.map(k => h("li", { "data-key": k.access_key },
        h("code", { text: k.access_key }), k.active === false ? " (disabled) " : " ",
        h("button", { type: "button", class: "secondary", "aria-label": (k.active === false ? "enable key " : "disable key ") + k.access_key,
          onclick: () => act(k.active === false ? "key-enable" : "key-disable", { id: k.access_key }, "key " + k.access_key + (k.active === false ? " enabled" : " disabled")),
          text: k.active === false ? "Enable" : "Disable" }), " ",
        h("button", { type: "button", class: "danger", "aria-label": "delete key " + k.access_key,
          onclick: () => { if (confirm("Delete access key " + k.access_key + "? Clients using it stop working.")) act("key-delete", { id: k.access_key }, "key " + k.access_key + " deleted"); },
          text: "Delete" })))) : "none"),
      h("td", { text: (x.groups || []).join(", ") }), h("td", { text: (x.policies || []).join(", ") }),
      h("td", {}, h("button", { type: "button", class: "secondary", "aria-label": (x.active === false ? "enable user " : "disable user ") + x.name,
        onclick: () => act(x.active === false ? "user-enable" : "user-disable", { name: x.name }, "user " + x.name + (x.active === false ? " enabled" : " disabled")),
        text: x.active === false ? "Enable" : "Disable" }))));
  }
  // A new key's secret is shown once, here, and never again (the server keeps it encrypted).
  const secretBox = created ? h("section", { id: "new-key", class: "card", role: "alert", tabindex: -1, "aria-labelledby": "new-key-title" },
    h("h2", { id: "new-key-title", text: "New access key for " + created.user }),
    h("p", {}, "Access key: ", h("code", { id: "new-access-key", text: created.access_key })),
    h("p", {}, "Secret key: ", h("code", { id: "new-secret-key", text: created.secret_key })),
    h("p", { class: "muted", text: "Copy the secret now: it is shown this once and cannot be read back." })) : null;
  page("Users and keys",
    secretBox,
    table(["user", "status", "access keys", "groups", "policies", ""], rows, { id: "user-table" }),
    h("h2", { text: "Create a user" }),
    h("form", { id: "user-form", onsubmit: async e => {
      e.preventDefault();
      try { await api("POST", "user-create", { name: userName.value }); status("user " + userName.value + " created"); await users(); } catch (err) { status("create failed: " + err.message); }
    } }, field("user-name", "User name", userName), h("button", { id: "user-create", type: "submit", text: "Create user" })),
    h("h2", { text: "Create an access key" }),
    list.length ? h("form", { id: "key-form", onsubmit: async e => {
      e.preventDefault();
      try { const k = await api("POST", "key-create", { user: keyUser.value }); await users(k); } catch (err) { status("key failed: " + err.message); }
    } }, field("key-user", "For user", keyUser), h("button", { id: "key-create", type: "submit", text: "Create key" })) : h("p", { text: "Create a user first." }),
    h("h2", { text: "Groups" }),
    table(["group", "members", "policies"], (g.groups || []).map(x => h("tr", {}, h("td", { text: x.name }),
      h("td", { text: (x.members || []).join(", ") }), h("td", { text: (x.policies || []).join(", ") })))),
    h("p", { class: "muted", text: "Policies are attached with `strata admin policy attach`; a user's rights are what its policies and its groups' allow." }));
  if (created) document.getElementById("new-key").focus();
}

// ---- routing, sign-in ----------------------------------------------------------------
async function route() {
  clearInterval(timer);
  const hash = location.hash.slice(1) || "overview";
  const [name, ...rest] = hash.split("/");
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.getAttribute("href") === "#" + (name === "browse" ? "buckets" : name)) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  try {
    if (name === "overview") { await overview(); timer = setInterval(() => overview().catch(() => {}), 2000); }
    else if (name === "buckets") await buckets();
    else if (name === "browse") await browse(decodeURIComponent(rest[0]), decodeURIComponent(rest.slice(1).join("/")));
    else if (name === "tiers") await tiers();
    else if (name === "advisor") await advisor();
    else if (name === "audit") await audit();
    else if (name === "users") await users();
    else page("Not found", h("p", { text: "No such page." }));
    document.getElementById("page").dataset.loaded = name;
  } catch (err) {
    if (err.message !== "signed out") page("Error", h("p", { class: "error", role: "alert", text: err.message }));
  }
}

function showLogin() {
  clearInterval(timer);
  document.getElementById("login").hidden = false;
  document.getElementById("nav").hidden = true;
  document.getElementById("logout").hidden = true;
  document.getElementById("who").textContent = "";
  document.getElementById("page").replaceChildren();
  document.getElementById("login-access-key").focus();
}
function signedIn(doc) {
  csrf = doc.csrf;
  who = doc.access_key;
  document.getElementById("login").hidden = true;
  document.getElementById("nav").hidden = false;
  document.getElementById("logout").hidden = false;
  document.getElementById("who").textContent = "signed in as " + who;
  route();
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("login-form").addEventListener("submit", async e => {
    e.preventDefault();
    const err = document.getElementById("login-error");
    err.textContent = "";
    const r = await fetch(API + "login", { method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
      body: JSON.stringify({ access_key: document.getElementById("login-access-key").value, secret_key: document.getElementById("login-secret-key").value }) });
    const doc = await r.json().catch(() => ({}));
    if (!r.ok) { err.textContent = doc.error || "sign-in failed"; return; }
    document.getElementById("login-secret-key").value = "";
    signedIn(doc);
  });
  document.getElementById("logout").addEventListener("click", async () => {
    await fetch(API + "logout", { method: "POST", headers: { "X-Strata-CSRF": csrf }, credentials: "same-origin" });
    csrf = "";
    showLogin();
  });
  window.addEventListener("hashchange", () => { if (csrf) route(); });
  const r = await fetch(API + "session", { credentials: "same-origin" });
  if (r.ok) signedIn(await r.json()); else showLogin();
});
