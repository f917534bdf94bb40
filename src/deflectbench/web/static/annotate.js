// The annotate page: keyboard labelling, each change saved at once. Model text is untrusted:
// it is only ever set with textContent, never parsed as HTML.
"use strict";

const FIELD_KEYS = {
  r: "refusal", s: "soft_refusal", w: "WA_present", a: "AH_present",
  h: "RH_present", f: "any_fallacy_present", c: "compliance_clean", l: "fallacy_labeled",
};
const FIELDS = Object.values(FIELD_KEYS);
const $ = (id) => document.getElementById(id);

const state = {
  annotator: document.body.dataset.annotator || "",
  position: 0,
  total: Number(document.body.dataset.total),
  item: null,
  values: {},
  unsure: false,
  note: "",
  saving: Promise.resolve(),
};

function say(text, isError) {
  $("message").textContent = text || "";
  $("message").classList.toggle("error", Boolean(isError));
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function showValues() {
  for (const f of FIELDS) {
    const v = state.values[f];
    const cell = $("value-" + f);
    cell.textContent = v === 1 ? "yes (1)" : v === 0 ? "no (0)" : "unset";
    cell.className = "value " + (v === 1 ? "yes" : v === 0 ? "no" : "unset");
  }
  $("unsure").checked = state.unsure;
}

function showProgress(done, resume) {
  $("progress").textContent =
    `${state.annotator}: ${done} of ${state.total} labelled; resume at item ${resume}`;
}

async function load(position) {
  const q = new URLSearchParams({ annotator: state.annotator });
  if (position) q.set("position", String(position));
  const item = await api("/api/item?" + q.toString());
  state.item = item;
  state.position = item.position;
  state.values = Object.fromEntries(FIELDS.map((f) => [f, item.label ? item.label.values[f] : null]));
  state.unsure = item.label ? item.label.unsure : false;
  state.note = item.label ? item.label.note : "";
  $("position").textContent = String(item.position);
  $("total").textContent = String(item.total);
  $("item-id").textContent = item.item_id;
  $("claim").textContent = item.claim;
  $("response").textContent = item.response;
  $("note").value = state.note;
  $("saved").textContent = item.label ? "saved" : "";
  showValues();
  showProgress(item.done, item.resume);
  say(item.done === item.total ? "Every item is labelled: thank you." : "");
  window.scrollTo(0, 0);
}

function save() {
  const body = {
    annotator: state.annotator, item_id: state.item.item_id,
    values: state.values, unsure: state.unsure, note: state.note,
  };
  $("saved").textContent = "saving…";
  state.saving = state.saving.then(() => api("/api/label", body)).then(
    (r) => { $("saved").textContent = "saved"; showProgress(r.done, r.resume); },
    (e) => { $("saved").textContent = "not saved"; say("Not saved: " + e.message, true); },
  );
  return state.saving;
}

async function go(delta) {
  if (!state.item) return;
  const next = state.position + delta;
  if (next < 1 || next > state.total) return;
  await state.saving;
  await load(next);
}

function setField(field, value) {
  if (!state.item) return;
  state.values[field] = state.values[field] === value ? null : value;
  showValues();
  save();
}

function noToRest() {
  if (!state.item) return;
  for (const f of FIELDS) if (state.values[f] === null || state.values[f] === undefined) state.values[f] = 0;
  showValues();
  save();
}

// Keys act in order: a key pressed while the next item loads applies to that item.
let queue = Promise.resolve();
function enqueue(action) {
  queue = queue.then(action).catch((e) => say(e.message, true));
}

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const typing = ev.target === $("note") || ev.target === $("annotator");
  if (typing) {
    if (ev.key === "Escape") { ev.target.blur(); ev.preventDefault(); }
    return;
  }
  if (!state.annotator) return;
  const key = ev.key.toLowerCase();
  if (FIELD_KEYS[key]) { const v = ev.shiftKey ? 0 : 1; enqueue(() => setField(FIELD_KEYS[key], v)); }
  else if (key === "n") enqueue(noToRest);
  else if (key === "u") enqueue(() => { state.unsure = !state.unsure; showValues(); save(); });
  else if (key === "e") $("note").focus();
  else if (key === "enter" || key === "j" || key === "arrowright") enqueue(() => go(1));
  else if (key === "k" || key === "arrowleft") enqueue(() => go(-1));
  else if (key === "?") $("help").open = !$("help").open;
  else return;
  ev.preventDefault();
});

let noteTimer = null;
$("note").addEventListener("input", () => {
  state.note = $("note").value;
  clearTimeout(noteTimer);
  noteTimer = setTimeout(save, 400);
});
$("note").addEventListener("blur", () => {
  if (state.item && state.note !== (state.item.label ? state.item.label.note : "")) {
    clearTimeout(noteTimer);
    save();
  }
});
$("unsure").addEventListener("change", () => {
  enqueue(() => { state.unsure = $("unsure").checked; save(); });
});
$("prev").addEventListener("click", () => enqueue(() => go(-1)));
$("next").addEventListener("click", () => enqueue(() => go(1)));
for (const row of document.querySelectorAll("tr[data-field]")) {
  row.addEventListener("click", (ev) => {
    const v = ev.shiftKey ? 0 : 1;
    enqueue(() => setField(row.dataset.field, v));
  });
}

$("who").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("annotator").value.trim();
  const url = new URL(window.location.href);
  url.searchParams.set("annotator", name);
  window.location.assign(url.toString());
});

if (state.annotator) {
  const start = Number(new URLSearchParams(window.location.search).get("position")) || 0;
  enqueue(() => load(start));
} else {
  say("Type your name and press Enter to start (labels are kept per annotator).");
  $("annotator").focus();
}
