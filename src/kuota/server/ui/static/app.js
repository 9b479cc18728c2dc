// kuota's dashboard: plain JS, no build step, no other origin. Every object
// comes from the Kubernetes API with the session cookie (so RBAC applies);
// it stays current through watch streams, and the visibility API's order is
// re-read when a watched Workload changes (never on a timer).
"use strict";

const KUEUE = "/apis/kueue.x-k8s.io/v1beta2";
const VIS = "/apis/visibility.kueue.x-k8s.io/v1beta2";
const BIZRQ = "/apis/kuota.dev/v1alpha1/bizgroupresourcequotas";
const S = {
  who: null, objs: {}, pending: {}, events: [], clock: { now: 0, t0: 0, speed: 1 },
  ns: "", team: "", failed: {},
};

// ---------------------------------------------------------------- helpers
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v; // CSSOM: allowed by the page's CSP
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === null || kid === undefined || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}
class ApiError extends Error {
  constructor(status, path) { super(`${path}: HTTP ${status}`); this.status = status; }
}
async function api(path) {
  const r = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!r.ok) throw new ApiError(r.status, path);
  return r.json();
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));
const key = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;
const list = (kind) => [...(S.objs[kind] || new Map()).values()];
function debounce(fn, ms) {
  let t = null;
  return () => { if (t === null) t = setTimeout(() => { t = null; fn(); }, ms); };
}
function qty(v) {
  if (v === undefined || v === null || v === "") return 0;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(v));
  if (!m) return Number(v) || 0;
  const mult = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2,
    Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5 }[m[2]];
  return Number(m[1]) * (mult === undefined ? 1 : mult);
}
function fmtQty(n, res) {
  if (/memory|storage/.test(res) && n >= 1024 ** 3) return `${+(n / 1024 ** 3).toFixed(1)}Gi`;
  return `${+n.toFixed(2)}`;
}
function serverNow() { return S.clock.now + (Date.now() - S.clock.t0) * S.clock.speed; }
function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  if (s < 172800) return `${(s / 3600).toFixed(1)}h`;
  return `${(s / 86400).toFixed(1)}d`;
}
const fmtTime = (t) => (t ? new Date(t).toISOString().replace("T", " ").replace(/\.\d+Z$|Z$/, "Z") : "");
function duration(s) { // Go durations as kuota.dev/duration ("90s", "1h30m")
  if (!s) return null;
  let ms = 0, ok = false;
  for (const [, n, u] of String(s).matchAll(/([0-9.]+)(ms|h|m|s)/g)) {
    ok = true;
    ms += Number(n) * { ms: 1, s: 1e3, m: 6e4, h: 3.6e6 }[u];
  }
  return ok ? ms : null;
}
const gpuFirst = (a, b) => (/gpu/i.test(b) - /gpu/i.test(a)) || a.localeCompare(b);
const cond = (o, type) => ((o.status || {}).conditions || []).find((c) => c.type === type);
const isTrue = (o, type) => (cond(o, type) || {}).status === "True";

// ---------------------------------------------------------------- live data
const render = debounce(() => draw(), 30);
const refreshPending = debounce(() => loadPending(), 50);
const refreshLists = debounce(() => loadLists(), 200);

function changed(kind) {
  if (kind === "workloads") refreshPending();
  if (kind === "clusterqueues") refreshLists();
  render();
}
function apply(kind, ev) {
  const store = S.objs[kind];
  if (ev.type === "ADDED" || ev.type === "MODIFIED") store.set(key(ev.object), ev.object);
  else if (ev.type === "DELETED") store.delete(key(ev.object));
  else if (ev.type === "ERROR") return false;
  if (ev.type !== "BOOKMARK") changed(kind);
  return true;
}
// List, then watch from the list's resourceVersion; on the stream's end or an
// ERROR (410 Expired) list again. Several paths may feed one kind (one per
// namespace for a user who may not list cluster-wide).
async function watch(kind, path) {
  const store = (S.objs[kind] = S.objs[kind] || new Map());
  const mine = new Set();
  for (;;) {
    try {
      const l = await api(path);
      for (const k of mine) store.delete(k);
      mine.clear();
      for (const o of l.items) { store.set(key(o), o); mine.add(key(o)); }
      changed(kind);
      const url = `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${l.metadata.resourceVersion}`;
      const r = await fetch(url, { credentials: "same-origin" });
      if (!r.ok) throw new ApiError(r.status, path);
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "", going = true;
      while (going) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while (going && (i = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line);
          if (ev.object && ev.object.metadata) mine.add(key(ev.object));
          going = apply(kind, ev);
        }
      }
      if (!going) reader.cancel().catch(() => {});
    } catch (e) {
      if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
        S.failed[kind] = e.status;
        render();
        return;
      }
    }
    await sleep(1000); // reconnect back-off after a dropped stream
  }
}
async function fetchInto(kind, path) {
  try {
    const l = await api(path);
    S.objs[kind] = new Map(l.items.map((o) => [key(o), o]));
  } catch (e) {
    S.failed[kind] = e.status || 0;
  }
}
// Kinds that change with ClusterQueues, read again when one does: a browser
// has six connections per host, kept for the four busiest watches.
async function loadLists() {
  const r = S.who.resources;
  const jobs = [];
  if (r.cohorts) jobs.push(fetchInto("cohorts", `${KUEUE}/cohorts`));
  if (r.resourceflavors) jobs.push(fetchInto("resourceflavors", `${KUEUE}/resourceflavors`));
  if (r.localqueues) jobs.push(fetchInto("localqueues", `${KUEUE}/localqueues`));
  else for (const ns of S.who.namespaces) jobs.push(fetchNsLocalQueues(ns));
  if (r.bizgroupresourcequotas) jobs.push(fetchInto("bizrqs", BIZRQ));
  await Promise.all(jobs);
  refreshPending();
  render();
}
async function fetchNsLocalQueues(ns) {
  try {
    const l = await api(`${KUEUE}/namespaces/${ns}/localqueues`);
    const store = (S.objs.localqueues = S.objs.localqueues || new Map());
    for (const o of l.items) store.set(key(o), o);
  } catch (e) { /* not readable: the queue list stays empty */ }
}
// The visibility API's order and reasons: per ClusterQueue for who may read
// it, else per LocalQueue of the user's namespaces.
async function loadPending() {
  const out = {};
  const jobs = [];
  if (S.who.resources.clusterqueues) {
    for (const cq of list("clusterqueues")) {
      const n = cq.metadata.name;
      jobs.push(api(`${VIS}/clusterqueues/${n}/pendingworkloads`)
        .then((p) => { out[n] = p.items; }).catch(() => {}));
    }
  } else {
    for (const lq of list("localqueues")) {
      const m = lq.metadata;
      const cq = lq.spec.clusterQueue;
      jobs.push(api(`${VIS}/namespaces/${m.namespace}/localqueues/${m.name}/pendingworkloads`)
        .then((p) => { out[cq] = (out[cq] || []).concat(p.items); }).catch(() => {}));
    }
  }
  await Promise.all(jobs);
  for (const items of Object.values(out)) {
    items.sort((a, b) => a.positionInClusterQueue - b.positionInClusterQueue);
  }
  S.pending = out;
  render();
  // A workload the watch showed before its queue's server had it (Kueue's
  // visibility API is another process's view): ask again, a few times.
  const listed = new Set(Object.values(out).flat().map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
  const missing = list("workloads").some((w) => w.spec.active !== false && visibleNs(w.metadata.namespace)
    && !isTrue(w, "QuotaReserved") && !isTrue(w, "Finished") && !listed.has(key(w)));
  S.pendingTries = missing ? (S.pendingTries || 0) + 1 : 0;
  if (missing && S.pendingTries <= 5) setTimeout(refreshPending, 1000);
}

// ---------------------------------------------------------------- model
function cqOfWorkload(w) {
  const adm = (w.status || {}).admission;
  if (adm && adm.clusterQueue) return adm.clusterQueue;
  const lq = (S.objs.localqueues || new Map()).get(`${w.metadata.namespace}/${w.spec.queueName}`);
  return lq ? lq.spec.clusterQueue : "";
}
const visibleNs = (ns) => !S.ns || ns === S.ns;
const visibleTeam = (cq) => !S.team || cq === S.team;
function teams() {
  const names = new Set(list("clusterqueues").map((c) => c.metadata.name));
  for (const lq of list("localqueues")) names.add(lq.spec.clusterQueue);
  return [...names].filter(Boolean).sort();
}
function namespaces() {
  const names = new Set(S.who.namespaces);
  for (const w of list("workloads")) names.add(w.metadata.namespace);
  return [...names].sort();
}
function quotaRows(cq, cohortBorrowed, lendable) {
  const rows = [];
  const usage = {};
  for (const f of (cq.status || {}).flavorsUsage || []) {
    for (const r of f.resources || []) usage[`${f.name}/${r.name}`] = r;
  }
  for (const g of cq.spec.resourceGroups || []) {
    for (const f of g.flavors || []) {
      const res = [...(f.resources || [])].sort((a, b) => gpuFirst(a.name, b.name));
      for (const r of res) {
        const k = `${f.name}/${r.name}`;
        const u = usage[k] || {};
        const nominal = qty(r.nominalQuota);
        const used = qty(u.total);
        const mine = lendable(cq, r, used);
        const pool = cohortBorrowed[cq.spec.cohortName + "|" + k] || { borrowed: 0, lendable: 0 };
        const lent = pool.lendable > 0 ? (pool.borrowed * mine) / pool.lendable : 0;
        rows.push({ flavor: f.name, res: r.name, nominal, used, borrowed: borrowedOf(u, nominal), lent,
          gpu: /gpu/i.test(r.name) });
      }
    }
  }
  rows.sort((a, b) => (b.gpu - a.gpu));
  return rows;
}
// Kueue leaves a zero "borrowed" out of the status; it is the use above nominal.
function borrowedOf(u, nominal) {
  return u.borrowed !== undefined ? qty(u.borrowed) : Math.max(0, qty(u.total) - nominal);
}
// What a ClusterQueue could lend: its unused nominal quota up to its
// lendingLimit. The cohort's borrowing is shared out in that proportion (the
// status says what each queue borrowed, not from whom).
function lendableOf(cq, r, used) {
  const free = Math.max(0, qty(r.nominalQuota) - used);
  return r.lendingLimit !== undefined ? Math.min(free, qty(r.lendingLimit)) : free;
}
function cohortPools() {
  const pools = {};
  for (const cq of list("clusterqueues")) {
    const cohort = cq.spec.cohortName;
    if (!cohort) continue;
    const usage = {};
    for (const f of (cq.status || {}).flavorsUsage || []) {
      for (const r of f.resources || []) usage[`${f.name}/${r.name}`] = r;
    }
    for (const g of cq.spec.resourceGroups || []) {
      for (const f of g.flavors || []) {
        for (const r of f.resources || []) {
          const k = `${cohort}|${f.name}/${r.name}`;
          const u = usage[`${f.name}/${r.name}`] || {};
          const p = (pools[k] = pools[k] || { borrowed: 0, lendable: 0 });
          p.borrowed += borrowedOf(u, qty(r.nominalQuota));
          p.lendable += lendableOf(cq, r, qty(u.total));
        }
      }
    }
  }
  return pools;
}

// ---------------------------------------------------------------- views
function bar(used, total, label) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : used > 0 ? 100 : 0;
  return h("div", { class: "bar", role: "img", "aria-label": label },
    h("span", { class: used > total ? "over" : "", style: `width:${pct}%` }));
}
function cqCard(cq, pools) {
  const rows = quotaRows(cq, pools, lendableOf);
  const fs = ((cq.status || {}).fairSharing || {}).weightedShare;
  const weight = ((cq.spec || {}).fairSharing || {}).weight;
  const active = isTrue(cq, "Active");
  return h("li", { class: "cq", "data-cq": cq.metadata.name },
    h("div", {}, h("strong", {}, cq.metadata.name),
      active ? "" : h("span", { class: "pill reason" }, "inactive"),
      h("span", { class: "muted" }, ` fair share ${fs === undefined ? "–" : fs}`,
        weight !== undefined ? ` (weight ${weight})` : "")),
    h("div", { class: "scroll" }, h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "flavor"), h("th", {}, "resource"),
        h("th", { class: "num" }, "nominal"), h("th", { class: "num" }, "used"),
        h("th", { class: "num" }, "borrowed"), h("th", { class: "num" }, "lent"),
        h("th", { class: "hide-narrow" }, "use"))),
      h("tbody", {}, rows.map((r) => h("tr", {},
        h("td", {}, r.flavor), h("td", {}, r.res),
        h("td", { class: "num" }, fmtQty(r.nominal, r.res)),
        h("td", { class: "num" }, fmtQty(r.used, r.res)),
        h("td", { class: "num" }, fmtQty(r.borrowed, r.res)),
        h("td", { class: "num" }, fmtQty(r.lent, r.res)),
        h("td", { class: "hide-narrow" },
          bar(r.used, r.nominal, `${r.res} in ${r.flavor}: ${fmtQty(r.used, r.res)} used of ${fmtQty(r.nominal, r.res)}`))))))));
}
function cohortTree() {
  const sec = h("section", { id: "cohorts", "aria-labelledby": "h-cohorts" },
    h("h2", { id: "h-cohorts" }, "Cohorts and ClusterQueues"));
  if (!S.who.resources.clusterqueues) {
    sec.append(h("p", { class: "muted" }, "Your account may not read ClusterQueues."));
    return sec;
  }
  const pools = cohortPools();
  const cohorts = new Map(list("cohorts").map((c) => [c.metadata.name, c]));
  const kids = {};
  const cqs = list("clusterqueues").filter((c) => visibleTeam(c.metadata.name));
  for (const cq of cqs) {
    const parent = cq.spec.cohortName || "";
    if (parent && !cohorts.has(parent)) cohorts.set(parent, { metadata: { name: parent }, spec: {} });
    (kids[parent] = kids[parent] || []).push({ cq });
  }
  for (const c of cohorts.values()) {
    (kids[c.spec.parentName || ""] = kids[c.spec.parentName || ""] || []).push({ cohort: c });
  }
  const nodeOf = (n) => {
    if (n.cq) return cqCard(n.cq, pools);
    const name = n.cohort.metadata.name;
    const sub = kids[name] || [];
    const fs = ((n.cohort.status || {}).fairSharing || {}).weightedShare;
    return h("li", {}, h("div", { class: "cohort" }, `cohort ${name}`,
      fs !== undefined ? h("span", { class: "muted" }, ` fair share ${fs}`) : ""),
      h("ul", {}, sub.map(nodeOf)));
  };
  const roots = (kids[""] || []).filter((n) => n.cq || (kids[n.cohort.metadata.name] || []).length);
  roots.sort((a, b) => (a.cq ? 1 : 0) - (b.cq ? 1 : 0));
  sec.append(h("div", { class: "tree" }, h("ul", {}, roots.map(nodeOf))));
  return sec;
}
function expectedEnd(w, start) {
  if (!start) return null;
  const max = w.spec.maximumExecutionTimeSeconds;
  let best = null;
  for (const ps of w.spec.podSets || []) {
    const ann = ((ps.template || {}).metadata || {}).annotations || {};
    const d = duration(ann["kuota.dev/duration"]);
    if (d !== null) best = Math.max(best || 0, d);
  }
  if (best === null && max) best = max * 1000;
  return best === null ? null : new Date(Date.parse(start) + best).toISOString();
}
function wlLink(ns, name, owners) {
  const own = (owners || []).map((o) => `${o.kind} ${o.name}`).join(", ");
  return [h("a", { href: `#/wl/${encodeURIComponent(ns)}/${encodeURIComponent(name)}` }, name),
    own ? h("div", { class: "muted" }, own) : ""];
}
// The owning job's namespace/name (what users submitted), else the workload's.
function jobKey(ns, name, owners) {
  const o = (owners || [])[0];
  return `${ns}/${o ? o.name : name}`;
}
function queuesSection() {
  const sec = h("section", { id: "queues", "aria-labelledby": "h-queues" },
    h("h2", { id: "h-queues" }, "Queues"));
  const now = serverNow();
  const byCq = {};
  for (const w of list("workloads")) {
    if (!visibleNs(w.metadata.namespace)) continue;
    (byCq[cqOfWorkload(w)] = byCq[cqOfWorkload(w)] || []).push(w);
  }
  const names = new Set([...Object.keys(S.pending), ...Object.keys(byCq)]);
  if (S.who.resources.clusterqueues) for (const c of list("clusterqueues")) names.add(c.metadata.name);
  const sorted = [...names].filter((n) => visibleTeam(n)).sort();
  if (!sorted.length) sec.append(h("p", { class: "muted" }, "No queues visible."));
  for (const cq of sorted) {
    const wls = byCq[cq] || [];
    const byKey = new Map(wls.map((w) => [key(w), w]));
    const seen = new Set();
    const pend = [];
    for (const p of S.pending[cq] || []) {
      const k = `${p.metadata.namespace}/${p.metadata.name}`;
      const w = byKey.get(k);
      if (!visibleNs(p.metadata.namespace) || (w && isTrue(w, "QuotaReserved"))) continue;
      seen.add(k);
      pend.push({ pos: p.positionInClusterQueue, ns: p.metadata.namespace, name: p.metadata.name,
        prio: p.priority, created: p.metadata.creationTimestamp, reason: p.reason,
        owners: p.metadata.ownerReferences });
    }
    // Pending workloads the visibility API has not listed yet (just created,
    // or finished or deactivated): after the ordered ones, with their condition.
    for (const w of wls) {
      if (seen.has(key(w)) || isTrue(w, "QuotaReserved") || isTrue(w, "Finished")) continue;
      const c = cond(w, "QuotaReserved");
      pend.push({ pos: null, ns: w.metadata.namespace, name: w.metadata.name,
        prio: w.spec.priority || 0, created: w.metadata.creationTimestamp,
        owners: w.metadata.ownerReferences, reason: c ? c.message : w.spec.active === false ? "deactivated" : "waiting to be queued" });
    }
    const adm = wls.filter((w) => isTrue(w, "QuotaReserved") && !isTrue(w, "Finished"));
    const box = h("div", { class: "queue", "data-queue": cq }, h("h3", {}, cq,
      h("span", { class: "muted" }, ` ${pend.length} pending, ${adm.length} admitted`)));
    if (pend.length) {
      box.append(h("div", { class: "scroll" }, h("table", { class: "pending", "aria-label": `${cq} pending` },
        h("thead", {}, h("tr", {}, h("th", { class: "num" }, "#"), h("th", {}, "workload"),
          h("th", { class: "hide-narrow" }, "namespace"), h("th", { class: "num" }, "priority"),
          h("th", { class: "num" }, "waiting"), h("th", {}, "reason"))),
        h("tbody", {}, pend.map((p) => h("tr", { "data-wl": `${p.ns}/${p.name}`, "data-job": jobKey(p.ns, p.name, p.owners),
          class: "pending-wl" },
          h("td", { class: "num" }, p.pos === null ? "–" : p.pos),
          h("td", {}, wlLink(p.ns, p.name, p.owners)), h("td", { class: "hide-narrow" }, p.ns),
          h("td", { class: "num" }, p.prio),
          h("td", { class: "num" }, p.created ? ago(now - Date.parse(p.created)) : ""),
          h("td", { class: "reason" }, p.reason || "")))))));
    }
    if (adm.length) {
      box.append(h("div", { class: "scroll" }, h("table", { class: "admitted", "aria-label": `${cq} admitted` },
        h("thead", {}, h("tr", {}, h("th", {}, "workload"), h("th", { class: "hide-narrow" }, "namespace"),
          h("th", {}, "flavor"), h("th", {}, "start"), h("th", {}, "expected end"))),
        h("tbody", {}, adm.map((w) => {
          const flavors = new Set();
          for (const a of w.status.admission.podSetAssignments || []) {
            for (const f of Object.values(a.flavors || {})) flavors.add(f);
          }
          const start = (cond(w, "QuotaReserved") || {}).lastTransitionTime;
          const m = w.metadata;
          return h("tr", { "data-wl": key(w), "data-job": jobKey(m.namespace, m.name, m.ownerReferences),
            class: "admitted-wl" },
            h("td", {}, wlLink(m.namespace, m.name, m.ownerReferences)),
            h("td", { class: "hide-narrow" }, w.metadata.namespace),
            h("td", {}, [...flavors].join(", ")), h("td", {}, fmtTime(start)),
            h("td", {}, fmtTime(expectedEnd(w, start)) || "unknown"));
        })))));
    }
    sec.append(box);
  }
  return sec;
}
function bizrqSection() {
  const items = list("bizrqs");
  const sec = h("section", { id: "bizrq", "aria-labelledby": "h-bizrq" },
    h("h2", { id: "h-bizrq" }, "Business groups (bizrq)"));
  const kids = {};
  for (const b of items) (kids[b.spec.parentBizGroup || ""] = kids[b.spec.parentBizGroup || ""] || []).push(b);
  const now = serverNow();
  const nodeOf = (b) => {
    const hard = (b.status || {}).hard || b.spec.hard || {};
    const used = (b.status || {}).used || {};
    const rows = Object.keys(hard).sort(gpuFirst).map((k) => {
      const total = qty(hard[k]);
      const u = qty(used[k]);
      let runOut = "";
      if (k.startsWith("cash/")) { // budget in resource-hours, burnt at the current use
        const rate = qty(used[k.slice(5)]);
        runOut = rate > 0 ? fmtTime(new Date(now + ((total - u) / rate) * 3.6e6)) : "not burning";
      }
      return h("tr", {}, h("td", {}, k), h("td", { class: "num" }, fmtQty(u, k)),
        h("td", { class: "num" }, fmtQty(total, k)),
        h("td", { class: "hide-narrow" }, bar(u, total, `${k}: ${fmtQty(u, k)} of ${fmtQty(total, k)}`)),
        h("td", {}, runOut));
    });
    return h("li", {}, h("strong", {}, b.metadata.name),
      h("div", { class: "scroll" }, h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "key"),
        h("th", { class: "num" }, "used"), h("th", { class: "num" }, "hard"),
        h("th", { class: "hide-narrow" }, "use"), h("th", {}, "budget runs out"))), h("tbody", {}, rows))),
      h("ul", {}, (kids[b.metadata.name] || []).map(nodeOf)));
  };
  sec.append(h("div", { class: "tree" }, h("ul", {}, (kids[""] || []).map(nodeOf))));
  return sec;
}
function nodesSection() {
  const sec = h("section", { id: "nodes", "aria-labelledby": "h-nodes" }, h("h2", { id: "h-nodes" }, "Nodes"));
  if (!S.who.resources.nodes) {
    sec.append(h("p", { class: "muted" }, "Your account may not read Nodes."));
    return sec;
  }
  const alloc = {};
  for (const p of list("pods")) {
    const n = p.spec.nodeName;
    const phase = (p.status || {}).phase;
    if (!n || phase === "Succeeded" || phase === "Failed") continue;
    for (const c of p.spec.containers || []) {
      for (const [r, v] of Object.entries((c.resources || {}).requests || {})) {
        if (/gpu/i.test(r)) alloc[n] = (alloc[n] || 0) + qty(v);
      }
    }
  }
  const byModel = {};
  for (const n of list("nodes")) {
    const labels = n.metadata.labels || {};
    const gpus = Object.entries((n.status || {}).allocatable || {}).filter(([r]) => /gpu/i.test(r));
    const model = labels["nvidia.com/gpu.product"] || (gpus.length ? gpus[0][0] : "no GPU");
    (byModel[model] = byModel[model] || []).push({ n, total: gpus.reduce((s, [, v]) => s + qty(v), 0) });
  }
  for (const model of Object.keys(byModel).sort((a, b) => (a === "no GPU") - (b === "no GPU") || a.localeCompare(b))) {
    const cells = byModel[model].sort((a, b) => a.n.metadata.name.localeCompare(b.n.metadata.name)).map(({ n, total }) => {
      const used = alloc[n.metadata.name] || 0;
      const ratio = total > 0 ? Math.min(1, used / total) : 0;
      const light = 96 - ratio * 66; // lighter = idle, darker = busy
      const taints = (n.spec || {}).taints || [];
      const cordoned = !!(n.spec || {}).unschedulable;
      const flags = [cordoned ? "cordoned" : "", ...taints.map((t) => `taint ${t.key}:${t.effect}`)].filter(Boolean);
      return h("div", {
        class: "node" + (cordoned ? " cordoned" : ""), "data-node": n.metadata.name,
        style: `background:hsl(220,70%,${light}%);color:${light < 60 ? "#fff" : "#111"}`,
        title: flags.join(", "),
      }, h("div", {}, h("strong", {}, n.metadata.name)),
      h("div", {}, total ? `${used}/${total} GPUs` : "no GPUs"),
      flags.length ? h("div", { class: "flags", style: light < 60 ? "color:#fff" : "" }, flags.join(", ")) : "");
    });
    sec.append(h("h3", {}, model), h("div", { class: "heat" }, cells));
  }
  return sec;
}
async function loadEvents(ns, names) {
  const out = [];
  for (const n of names) {
    try {
      const l = await api(`/api/v1/namespaces/${encodeURIComponent(ns)}/events?fieldSelector=involvedObject.name%3D${encodeURIComponent(n)}`);
      out.push(...l.items);
    } catch (e) { /* events not readable */ }
  }
  S.events = out;
  render();
}
let eventsFor = "";
function workloadView(ns, name) {
  const w = (S.objs.workloads || new Map()).get(`${ns}/${name}`);
  const sec = h("section", { id: "workload", "aria-labelledby": "h-wl" },
    h("h2", { id: "h-wl" }, `Workload ${ns}/${name}`), h("p", {}, h("a", { href: "#/" }, "← back to queues")));
  if (!w) { sec.append(h("p", { class: "muted" }, "Not found (or not readable with your account).")); return sec; }
  const owners = (w.metadata.ownerReferences || []).map((o) => o.name);
  const rv = `${ns}/${name}@${w.metadata.resourceVersion}`;
  if (eventsFor !== rv) { eventsFor = rv; loadEvents(ns, [name, ...owners]); }
  const items = [];
  for (const c of (w.status || {}).conditions || []) {
    items.push({ t: c.lastTransitionTime, text: `${c.type}=${c.status} ${c.reason || ""}: ${c.message || ""}` });
  }
  for (const e of S.events) {
    items.push({ t: e.lastTimestamp || e.eventTime || e.firstTimestamp || (e.metadata || {}).creationTimestamp,
      text: `${e.type} ${e.reason} (${(e.involvedObject || {}).kind}): ${e.message}` });
  }
  items.sort((a, b) => String(a.t).localeCompare(String(b.t)));
  sec.append(h("p", {}, `queue ${w.spec.queueName || "–"}, ClusterQueue ${cqOfWorkload(w) || "–"}, priority ${w.spec.priority || 0}`),
    h("h3", {}, "Timeline"),
    h("ol", { class: "timeline" }, items.map((i) => h("li", {}, h("time", {}, fmtTime(i.t)), i.text))));
  const pods = list("pods").filter((p) => p.metadata.namespace === ns &&
    ((p.metadata.ownerReferences || []).some((o) => owners.includes(o.name) || o.name === name) ||
     owners.includes((p.metadata.labels || {})["batch.kubernetes.io/job-name"])));
  sec.append(h("h3", {}, "Pods"), pods.length ? h("div", { class: "scroll" }, h("table", {},
    h("thead", {}, h("tr", {}, h("th", {}, "pod"), h("th", {}, "phase"), h("th", {}, "node"))),
    h("tbody", {}, pods.map((p) => h("tr", {}, h("td", {}, p.metadata.name),
      h("td", {}, (p.status || {}).phase || ""), h("td", {}, p.spec.nodeName || "–")))))) :
    h("p", { class: "muted" }, "No pods (or not readable with your account)."));
  return sec;
}
function fillSelect(id, values, current) {
  const sel = document.getElementById(id);
  const want = ["", ...values].join("\n");
  if (sel.dataset.values === want) return;
  sel.dataset.values = want;
  sel.replaceChildren(h("option", { value: "" }, "all"), ...values.map((v) => h("option", { value: v }, v)));
  sel.value = current;
}
function draw() {
  if (!S.who) return;
  fillSelect("f-ns", namespaces(), S.ns);
  fillSelect("f-team", teams(), S.team);
  const main = document.getElementById("main");
  const route = location.hash.replace(/^#/, "").split("/").filter(Boolean).map(decodeURIComponent);
  let kids;
  main.className = "";
  if (route[0] === "wl" && route.length === 3) kids = [workloadView(route[1], route[2])];
  else if (route[0] === "nodes") kids = [nodesSection()];
  else if (route[0] === "predict") kids = [whatIfView()]; // whatif.js: kept, not rebuilt
  else {
    main.className = "overview";
    kids = [h("div", {}, cohortTree(), S.who.resources.bizgroupresourcequotas ? bizrqSection() : ""),
      h("div", {}, queuesSection(), nodesSection())];
  }
  if (main.children.length !== kids.length || kids.some((k, i) => main.children[i] !== k)) main.replaceChildren(...kids);
  const denied = Object.keys(S.failed);
  document.getElementById("status").textContent =
    `Live · ${list("workloads").length} workloads · updated ${new Date().toLocaleTimeString()}` +
    (denied.length ? ` · not readable: ${denied.join(", ")}` : "");
}

// ---------------------------------------------------------------- start
async function start() {
  const t0 = Date.now();
  const who = await api("/ui/api/whoami");
  S.clock = { now: Date.parse(who.now), t0, speed: who.speed };
  if (!who.signedIn) {
    document.getElementById("status").textContent = "";
    document.getElementById("main").replaceChildren(h("section", {}, h("h2", {}, "Sign in"),
      h("p", {}, "Open the login URL kuota serve printed, or ", h("a", { href: "/ui/login?next=/ui/" }, "sign in with a token"), ".")));
    return;
  }
  S.who = who;
  document.getElementById("who").textContent = `signed in as ${who.user}`;
  document.getElementById("f-ns").addEventListener("change", (e) => { S.ns = e.target.value; render(); });
  document.getElementById("f-team").addEventListener("change", (e) => { S.team = e.target.value; render(); });
  window.addEventListener("hashchange", () => { render(); document.getElementById("main").focus(); });
  const r = who.resources;
  // Four long-lived streams at most (a browser's six connections per host).
  if (who.clusterWide) watch("workloads", `${KUEUE}/workloads`);
  else for (const ns of who.namespaces) watch("workloads", `${KUEUE}/namespaces/${ns}/workloads`);
  if (r.clusterqueues) watch("clusterqueues", `${KUEUE}/clusterqueues`);
  if (r.nodes) watch("nodes", "/api/v1/nodes");
  if (r.pods) watch("pods", "/api/v1/pods");
  S.objs.workloads = S.objs.workloads || new Map();
  await loadLists();
  setInterval(render, 5000); // only re-renders "waiting" times; fetches nothing
}
start().catch((e) => { document.getElementById("status").textContent = `Error: ${e.message}`; });
