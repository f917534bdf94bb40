// The view page: filters live in the query string (links can be shared); every text from the
// results file is set with textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const FIELDS = document.body.dataset.fields.split(",");
const FILTERS = Array.from(document.querySelectorAll("#filters select")).map((s) => s.name);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

// A model name breaks only after its provider ("anthropic/" over "claude-haiku-4-5-..."):
// never squeezed to one word a line; text only (textContent), as every cell.
function modelCell(name) {
  const td = el("td", null, "model");
  const cut = name.indexOf("/") + 1;
  const parts = cut > 0 ? [name.slice(0, cut), name.slice(cut)] : [name];
  parts.forEach((part, i) => {
    if (i) td.appendChild(document.createElement("wbr")); // the one place it may break
    td.appendChild(el("span", part, "nobreak"));
  });
  return td;
}

function say(text) { $("message").textContent = text || ""; }

async function api(path) {
  const res = await fetch(path);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function params() { return new URLSearchParams(window.location.search); }

function setParams(changes) {
  const q = params();
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "" || v === undefined) q.delete(k); else q.set(k, String(v));
  }
  const url = window.location.pathname + (q.toString() ? "?" + q.toString() : "");
  window.history.replaceState(null, "", url);
  $("share").href = url;
}

function fmt(v) { return v === 1 ? "1" : v === 0 ? "0" : "–"; }

let severalConditions = false;

async function loadFacets() {
  const facets = await api("/api/facets");
  severalConditions = (facets.condition || []).length > 1;
  const q = params();
  for (const name of FILTERS) {
    const select = $("filter-" + name);
    for (const value of facets[name] || []) select.appendChild(el("option", value)).value = value;
    const wanted = q.get(name);
    if (wanted) {
      if (!(facets[name] || []).includes(wanted)) select.appendChild(el("option", wanted)).value = wanted;
      select.value = wanted;
    }
  }
}

async function loadList() {
  const q = params();
  const data = await api("/api/generations?" + q.toString());
  $("count").textContent = `${data.total} generations · page ${data.page} of ${data.pages}`;
  $("prev-page").disabled = data.page <= 1;
  $("next-page").disabled = data.page >= data.pages;
  $("prev-page").dataset.page = String(data.page - 1);
  $("next-page").dataset.page = String(data.page + 1);
  const body = $("rows");
  body.replaceChildren();
  const current = q.get("gen");
  for (const r of data.rows) {
    const tr = el("tr");
    tr.dataset.gen = String(r.gen_id);
    if (String(r.gen_id) === current) tr.classList.add("current");
    tr.append(
      el("td", r.gen_id), modelCell(r.model + (severalConditions ? ` [${r.condition}]` : "")),
      el("td", r.claim_id), el("td", `${r.prompt_id} (${r.framing})`), el("td", r.sample),
      el("td", String(r.outcome).replaceAll("_", " ")), el("td", (r.disagree || []).join(", ")),
      el("td", r.labelled ? "✓" : ""),
    );
    tr.title = r.preview;
    tr.addEventListener("click", () => { setParams({ gen: r.gen_id }); showDetail(r.gen_id); markCurrent(); });
    body.appendChild(tr);
  }
}

function markCurrent() {
  const current = params().get("gen");
  for (const tr of $("rows").children) tr.classList.toggle("current", tr.dataset.gen === current);
}

async function showDetail(gen) {
  const d = await api("/api/generation?id=" + encodeURIComponent(gen));
  $("detail").hidden = false;
  $("d-gen").textContent = String(d.gen_id);
  const meta = $("d-meta");
  meta.replaceChildren();
  const facts = [
    ["model", d.model], ["condition", d.condition], ["claim", `${d.claim_id}: ${d.claim ?? ""}`],
    ["level", d.level], ["template", d.prompt_id], ["framing", d.framing],
    ["fallacy requested", d.fallacy_requested], ["sample", d.sample], ["outcome", d.outcome],
    ["finish reason", d.finish_reason], ["error", d.error],
    ["tokens in / out", `${d.input_tokens} / ${d.output_tokens}`],
  ];
  for (const [k, v] of facts) {
    if (v === null || v === undefined || v === "") continue;
    const tr = el("tr"); tr.append(el("td", k), el("td", v)); meta.appendChild(tr);
  }
  $("d-prompt").textContent = d.prompt || "";
  $("d-response").textContent = d.response ?? "";
  const table = $("d-fields");
  table.replaceChildren();
  const head = el("tr");
  head.append(el("th", "field"));
  for (const j of d.judges) head.append(el("th", j.judge));
  head.append(el("th", `consensus (${d.consensus_rule})`));
  for (const h of d.human) head.append(el("th", `human: ${h.annotator}${h.unsure ? " (unsure)" : ""}`));
  table.appendChild(head);
  for (const f of FIELDS) {
    const tr = el("tr");
    if ((d.disagree || []).includes(f)) tr.className = "differ";
    tr.append(el("td", f));
    for (const j of d.judges) tr.append(el("td", j.parse_error ? "parse error" : j.error ? "error" : fmt(j.fields[f])));
    tr.append(el("td", d.consensus ? fmt(d.consensus[f]) : "–"));
    for (const h of d.human) tr.append(el("td", fmt(h.values[f])));
    table.appendChild(tr);
  }
  const reasons = $("d-reasoning");
  reasons.replaceChildren();
  for (const j of d.judges) {
    const p = el("p");
    p.append(el("strong", j.judge + ": "), document.createTextNode(j.reasoning || j.error || "(none)"));
    reasons.appendChild(p);
  }
  const notes = $("d-notes");
  notes.replaceChildren();
  for (const h of d.human.filter((x) => x.note)) {
    const p = el("p");
    p.append(el("strong", h.annotator + ": "), document.createTextNode(h.note));
    notes.appendChild(p);
  }
  if (!notes.children.length) notes.appendChild(el("p", "none", "preview"));
}

function refresh() { return loadList().catch((e) => say(e.message)); }

for (const name of FILTERS) {
  $("filter-" + name).addEventListener("change", (ev) => {
    setParams({ [name]: ev.target.value, page: null });
    refresh();
  });
}
$("clear").addEventListener("click", () => {
  const reset = Object.fromEntries(FILTERS.map((n) => [n, null]));
  setParams({ ...reset, page: null });
  for (const n of FILTERS) $("filter-" + n).value = "";
  refresh();
});
for (const id of ["prev-page", "next-page"]) {
  $(id).addEventListener("click", () => { setParams({ page: $(id).dataset.page }); refresh(); });
}

(async () => {
  try {
    await loadFacets();
    setParams({});
    await loadList();
    const gen = params().get("gen");
    if (gen) await showDetail(gen);
  } catch (e) {
    say(e.message);
  }
})();
