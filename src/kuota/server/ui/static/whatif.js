// "What if I submit this?": paste a job manifest, get kuota predict's answer
// from the server (POST .../namespaces/NS/predictions with the session: RBAC
// asks that the user may create that job there). Loaded after app.js, whose
// helpers (h, S, fmtTime, ago) it uses. The view is built once and kept, so
// the live re-renders of the page never wipe what was typed.
"use strict";

const WHATIF = { view: null };

function whatIfNamespaces() {
  return S.who.clusterWide ? namespaces() : S.who.namespaces;
}

function whatIfAnswer(p) {
  const rows = [];
  const row = (k, v) => rows.push(h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, v)));
  row("admitted now", p.admitted_now ? "yes" : "no");
  if (p.admitted_now) row("flavor", p.flavor || "–");
  else {
    row("reason", h("span", { class: "reason" }, p.reason || "–"));
    row(`position in ClusterQueue ${p.cluster_queue || "–"}`, p.position_in_cluster_queue ?? "–");
    row(`position in LocalQueue ${p.local_queue || "–"}`, p.position_in_local_queue ?? "–");
  }
  let start = "never: it does not fit before nothing more can happen";
  if (p.estimated_start) {
    const wait = Date.parse(p.estimated_start) - Date.parse(p.now);
    start = `${fmtTime(p.estimated_start)}` + (wait > 0 ? ` (in ${ago(wait)})` : " (now)");
  }
  row("estimated start", h("span", { "data-field": "estimated_start" }, start));
  const basis = Object.entries(p.basis || {}).map(([k, n]) => `${n} by ${k}`).join(", ");
  row("running and waiting workloads end", basis || "nothing runs or waits");
  return h("div", {},
    h("h3", {}, `Workload ${p.workload}`),
    h("table", { class: "answer" }, h("tbody", {}, rows)),
    h("details", {}, h("summary", {}, "JSON"), h("pre", {}, JSON.stringify(p, null, 2))));
}

async function whatIfSubmit(form, out) {
  const ns = form.elements.ns.value;
  const text = form.elements.manifest.value;
  out.replaceChildren(h("p", { class: "muted" }, "Predicting…"));
  let r, body;
  try {
    r = await fetch(`/apis/kuota.dev/v1alpha1/namespaces/${encodeURIComponent(ns)}/predictions`, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/yaml", Accept: "application/json" }, body: text,
    });
    body = await r.json();
  } catch (e) {
    out.replaceChildren(h("p", { role: "alert", class: "error" }, `The server did not answer: ${e.message}`));
    return;
  }
  if (!r.ok) {
    out.replaceChildren(h("p", { role: "alert", class: "error" }, `${r.status}: ${body.message || r.statusText}`));
    return;
  }
  out.replaceChildren(whatIfAnswer(body));
}

function whatIfView() {
  if (WHATIF.view) {
    const sel = WHATIF.view.querySelector("select");
    const want = whatIfNamespaces();
    if (sel.dataset.values !== want.join("\n")) {
      const cur = sel.value;
      sel.dataset.values = want.join("\n");
      sel.replaceChildren(...want.map((v) => h("option", { value: v }, v)));
      if (want.includes(cur)) sel.value = cur;
    }
    return WHATIF.view;
  }
  const nss = whatIfNamespaces();
  const out = h("div", { id: "whatif-answer", role: "status", "aria-live": "polite" });
  const form = h("form", { class: "whatif", id: "whatif-form" },
    h("label", { for: "whatif-ns" }, "Namespace"),
    h("select", { id: "whatif-ns", name: "ns", "data-values": nss.join("\n") },
      nss.map((v) => h("option", { value: v }, v))),
    h("label", { for: "whatif-manifest" }, "Job manifest (YAML or JSON)"),
    h("textarea", { id: "whatif-manifest", name: "manifest", rows: 16, spellcheck: "false", required: true,
      placeholder: "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: my-job\n  labels: {kueue.x-k8s.io/queue-name: team-a}\nspec: …" }),
    h("button", { type: "submit" }, "Predict"));
  if (S.ns && nss.includes(S.ns)) form.elements.ns.value = S.ns;
  form.addEventListener("submit", (e) => { e.preventDefault(); whatIfSubmit(form, out); });
  WHATIF.view = h("section", { id: "whatif", "aria-labelledby": "h-whatif" },
    h("h2", { id: "h-whatif" }, "What if I submit this?"),
    h("p", { class: "muted" }, "Nothing is submitted: kuota tries the job in a copy of the cluster's present and runs " +
      "that copy forward (running workloads end at their declared duration, maximum execution time, " +
      "or the median of finished ones like them)."),
    form, out);
  return WHATIF.view;
}
