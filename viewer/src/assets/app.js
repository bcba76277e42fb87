// memlog viewer: a single page over the JSON API under /api/ (docs/API.md).
// Plain JavaScript, no build step. Every text from memory goes into the page
// through textContent (never innerHTML): memory holds whatever agents saw.
"use strict";

const view = document.getElementById("view");
const state = { config: { allow_forget: false }, refresh: null, token: null };

// --- small helpers -------------------------------------------------------

/** h("a", {href: "#/"}, "text", child…) builds an element. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const svgNS = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...children) {
  const el = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  for (const c of children) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

async function api(path, options) {
  const res = await fetch("/api/" + path, options);
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) throw new Error((body && body.error) || `${res.status} ${res.statusText}`);
  return body;
}

const enc = encodeURIComponent;
const shortId = (id) => (id || "").slice(0, 12);
const when = (ts) => (ts || "").slice(0, 16).replace("T", " ");
const firstLine = (text) => ((text || "").split("\n").map((l) => l.trim()).find((l) => l) || "");
const cut = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);

function headline(e) {
  const b = e.body || {};
  if (typeof b.text === "string") return firstLine(b.text);
  const subject = b.target || b.title || b.key || b.reason ||
    (b.input && (b.input.command || b.input.file_path || b.input.path || b.input.pattern || b.input.url || b.input.query)) || "";
  return [b.tool, firstLine(String(subject))].filter(Boolean).join(": ") || `(${e.kind})`;
}

function page(title, ...children) {
  view.replaceChildren(h("h1", {}, title), ...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

function showError(err) {
  view.replaceChildren(h("p", { class: "error", role: "alert" }, err.message || String(err)));
}

function sessionLink(session) {
  return h("a", { href: "#/session/" + enc(session), class: "mono" }, session);
}

function entityLink(id, title) {
  return h("a", { href: "#/entity/" + enc(id) }, title || id);
}

// --- routing -------------------------------------------------------------

const routes = [
  [/^\/?$/, timeline],
  [/^\/session\/(.+)$/, sessionPage],
  [/^\/event\/([0-9a-f]+)$/, eventPage],
  [/^\/search$/, searchPage],
  [/^\/tasks$/, tasksPage],
  [/^\/learned$/, learnedPage],
  [/^\/queue$/, queuePage],
  [/^\/entity\/(.+)$/, entityPage],
  [/^\/review$/, reviewPage],
  [/^\/stats$/, statsPage],
];

function currentRoute() {
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  return { path, params: new URLSearchParams(query || "") };
}

async function route() {
  const { path, params } = currentRoute();
  state.refresh = null;
  const nav = path.split("/")[1] || "timeline";
  for (const a of document.querySelectorAll("[data-nav]")) {
    a.classList.toggle("active", a.dataset.nav === nav);
  }
  for (const [re, render] of routes) {
    const m = path.match(re);
    if (m) {
      view.replaceChildren(h("p", { class: "muted" }, "loading…"));
      try {
        await render(m[1] ? decodeURIComponent(m[1]) : undefined, params);
      } catch (err) {
        showError(err);
      }
      window.scrollTo(0, 0);
      return;
    }
  }
  showError(new Error(`no page at ${path}`));
}

// --- timeline ------------------------------------------------------------

async function timeline() {
  const body = h("tbody");
  const sentinel = h("div", { class: "sentinel", id: "timeline-more" }, "");
  let next = null;
  let loading = false;
  let shown = 0;

  const row = (s) =>
    h("tr", { class: "session-row", "data-session": s.session },
      h("td", { class: "when" }, when(s.started)),
      h("td", {}, s.branch ? h("span", { class: "badge branch" }, s.branch) : h("span", { class: "muted" }, "—")),
      h("td", {},
        h("div", {}, h("a", { href: "#/session/" + enc(s.session), class: "first-prompt" }, s.first_prompt || s.subject || "(no prompt)"),
          s.personal ? [" ", h("span", { class: "badge personal" }, "personal")] : null),
        h("div", { class: "muted mono" }, s.session)),
      h("td", { class: "num" }, `${s.events} ev · ${s.prompts} pr · ${s.tool_calls} tools`),
      h("td", { class: "mono" }, s.commit ? shortId(s.commit) : h("span", { class: "badge live-session" }, "live")));

  async function more() {
    if (loading || next === undefined) return;
    loading = true;
    sentinel.textContent = "loading…";
    try {
      const data = await api("sessions?limit=50" + (next ? "&before=" + enc(next) : ""));
      for (const s of data.sessions) body.append(row(s));
      shown += data.sessions.length;
      next = data.next || undefined;
      sentinel.textContent = next ? "" : shown ? `${shown} sessions` : "";
      if (!shown) body.append(h("tr", {}, h("td", { colspan: 5, class: "empty" }, "No sessions yet: record or import some, then seal them.")));
    } finally {
      loading = false;
    }
    // Keep filling while the sentinel is on screen.
    if (next && sentinel.getBoundingClientRect().top < window.innerHeight + 200) more();
  }

  page("Sessions",
    h("table", { class: "list", id: "timeline" },
      h("thead", {}, h("tr", {}, h("th", {}, "started"), h("th", {}, "branch"), h("th", {}, "first prompt"), h("th", {}, "counts"), h("th", {}, "commit"))),
      body),
    sentinel);
  new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) more();
  }, { rootMargin: "200px" }).observe(sentinel);
  await more();

  // Live: the newest page again, rows replaced in place or added on top.
  state.refresh = async () => {
    const data = await api("sessions?limit=50");
    for (const placeholder of body.querySelectorAll("tr:not(.session-row)")) placeholder.remove();
    const existing = new Map([...body.querySelectorAll("tr.session-row")].map((tr) => [tr.dataset.session, tr]));
    let anchor = body.firstChild;
    for (const s of data.sessions) {
      const fresh = row(s);
      const old = existing.get(s.session);
      if (old) old.replaceWith(fresh);
      else body.insertBefore(fresh, anchor);
      anchor = fresh.nextSibling;
    }
  };
}

// --- a session and its events -------------------------------------------

function eventCard(e, target) {
  const b = e.body || {};
  const head = h("div", { class: "event-head" },
    h("span", { class: "badge" }, e.kind),
    h("span", { class: "muted" }, when(e.ts)),
    h("span", { class: "muted" }, "seq " + e.seq),
    h("a", { class: "id mono", href: "#/event/" + e.id }, shortId(e.id)),
    state.config.allow_forget ? h("button", { class: "danger", onclick: () => forget(e.id) }, "forget") : null);
  let content;
  if (e.kind === "tool_observation") {
    // Folded: the tool and its input on one line, everything else inside.
    const rest = Object.entries(b).filter(([k]) => k !== "tool");
    content = h("details", {},
      h("summary", {}, headline(e)),
      h("dl", { class: "meta" },
        rest.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, h("pre", {}, typeof v === "string" ? v : JSON.stringify(v, null, 2)))]),
        Object.entries(e.meta || {}).flatMap(([k, v]) => [h("dt", {}, "meta." + k), h("dd", { class: "mono" }, typeof v === "string" ? v : JSON.stringify(v))])));
  } else if (typeof b.text === "string") {
    content = h("pre", {}, b.text);
  } else {
    content = h("pre", { class: "muted" }, JSON.stringify(b, null, 2));
  }
  return h("div", { class: `card event kind-${e.kind}` + (target ? " target" : ""), id: "e-" + e.id }, head, content);
}

async function sessionPage(id) {
  const data = await api("sessions/" + enc(id));
  // The counts and span of the whole session (a page holds a part of a
  // long one); until the index has the session, those of this page.
  const sum = data.summary || {
    events: data.events.length,
    prompts: data.events.filter((e) => e.kind === "user_prompt").length,
    tool_calls: data.events.filter((e) => e.kind === "tool_observation").length,
    first_ts: data.events.length ? data.events[0].ts : null,
    last_ts: data.events.length ? data.events[data.events.length - 1].ts : null,
  };
  const seen = new Set();
  const entities = data.entities.filter((x) => !seen.has(x.rel + x.other) && seen.add(x.rel + x.other));
  const events = h("div", { id: "events" }, data.events.map((e) => eventCard(e, false)));
  // Later pages are fetched when asked for: a session of thousands of
  // events is never one answer.
  const more = h("button", { id: "more-events", hidden: !data.next }, "More events");
  let next = data.next;
  more.onclick = async () => {
    const got = await api("sessions/" + enc(id) + "?after=" + enc(next));
    got.events.forEach((e) => events.append(eventCard(e, false)));
    next = got.next;
    more.hidden = !next;
  };
  page("Session " + id,
    h("dl", { class: "meta" },
      h("dt", {}, "events"), h("dd", {}, `${sum.events} (${sum.prompts} prompts, ${sum.tool_calls} tool calls)`),
      h("dt", {}, "span"), h("dd", {}, sum.first_ts ? `${when(sum.first_ts)} – ${when(sum.last_ts)}` : "—"),
      h("dt", {}, "sealed in"), h("dd", { class: "mono" }, data.commit ? h("a", { href: "#/review?revs=" + enc(data.commit) }, data.commit) : "not sealed yet (live)",
        data.personal ? [" ", h("span", { class: "badge personal" }, "personal: kept on this machine, never pushed")] : null),
      h("dt", {}, "graph"), h("dd", {}, entityLink("session:" + id, "session entity"))),
    data.tasks.length ? h("h2", {}, "Tasks touched") : null,
    data.tasks.length ? h("ul", { id: "session-tasks" }, data.tasks.map((t) => h("li", {}, h("span", { class: "badge" }, t.status || "?"), " ", t.title, " ", h("span", { class: "muted mono" }, t.key)))) : null,
    entities.length ? h("h2", {}, "Files and artifacts") : null,
    entities.length ? h("ul", {}, entities.map((x) => h("li", {}, h("span", { class: "muted" }, x.rel + " "), entityLink(x.other, x.other_title)))) : null,
    h("h2", {}, "Events"),
    events,
    more);
  state.refresh = () => sessionPage(id);
}

async function eventPage(id) {
  const data = await api("events/" + enc(id) + "?context=3");
  const e = data.event;
  const all = [...data.context, e].sort((a, b) => (a.ts + String(a.seq).padStart(9, "0")).localeCompare(b.ts + String(b.seq).padStart(9, "0")));
  const m = data.memory;
  page("Event " + shortId(e.id),
    h("p", {}, "In session ", sessionLink(e.session), ` · project ${e.project}`),
    h("p", { id: "memory", class: "muted" }, `memory level L${data.level}` +
      (m ? ` · vitality ${m.vitality.toFixed(2)} · ${m.success} successes, ${m.failure} failures, ${m.recalls} recalls` : "")),
    h("div", { id: "events" }, all.map((x) => eventCard(x, x.id === e.id))));
  state.refresh = () => eventPage(id);
}

async function forget(id) {
  if (!confirm(`Forget event ${shortId(id)}? It is hidden everywhere; the bytes stay in git history until \`memlog purge\`.`)) return;
  const reason = prompt("Why (kept in the forget event)?", "") || undefined;
  try {
    await api("forget", {
      method: "POST",
      headers: { "content-type": "application/json", "x-memlog-token": state.token || "" },
      body: JSON.stringify({ ids: [id], reason }),
    });
    route();
  } catch (err) {
    alert(err.message);
  }
}

// --- search ----------------------------------------------------------------

const KINDS = ["user_prompt", "agent_response", "tool_observation", "note", "fact", "session_summary",
  "task_created", "task_status_changed", "task_blockers_set", "forget", "recall"];

/** One signal of a hit's score: its value in [0, 1] and its weight. */
function partBar(name, value, weight) {
  const bar = h("span", { class: "bar" }, h("span"));
  bar.firstChild.style.width = Math.round(Math.max(0, Math.min(1, value)) * 100) + "%";
  return h("span", { class: "part", title: `${name}: ${value.toFixed(3)} × weight ${weight.toFixed(2)} = ${(value * weight).toFixed(3)}` },
    name, bar, value.toFixed(2), h("span", { class: "muted" }, "×" + weight.toFixed(2)));
}

/** The weights `search` applied: as configured, with the semantic weight
 * shared out among the others while a hit has no semantic signal. */
function weights(semanticPresent) {
  const r = state.config.ranking || { semantic: 0.4, fts: 0.25, recency: 0.2, importance: 0.15 };
  const total = r.fts + r.recency + r.importance + (semanticPresent ? r.semantic : 0);
  const w = (x) => (total > 0 ? x / total : 0);
  return { fts: w(r.fts), semantic: w(r.semantic), recency: w(r.recency), importance: w(r.importance) };
}

async function searchPage(_, params) {
  const field = (name, label, attrs) =>
    h("label", {}, label, h("input", Object.assign({ name, value: params.get(name) || "" }, attrs || {})));
  const kind = h("select", { name: "kind" }, h("option", { value: "" }, "any kind"),
    KINDS.map((k) => h("option", { value: k, selected: params.get("kind") === k }, k)));
  const form = h("form", { class: "filters", id: "search-form" },
    field("q", "words or identifiers", { id: "search-q", type: "search", autofocus: true }),
    h("label", {}, "kind", kind),
    field("session", "session"),
    field("file", "file"),
    field("since", "since", { placeholder: "2026-11-01" }),
    field("until", "until"),
    field("limit", "limit", { size: 3, placeholder: "20" }),
    h("button", { class: "primary", type: "submit" }, "Search"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
    location.hash = "#/search?" + q.toString();
  });
  const results = h("div", { id: "results" });
  page("Search", form, results);
  if (!params.get("q")) {
    results.append(h("p", { class: "muted" }, "Full-text search over every live event, ranked like `memlog search`: relevance, recency and importance, each in [0, 1]."));
    return;
  }
  const started = performance.now();
  const data = await api("search?" + params.toString());
  const took = performance.now() - started;
  results.append(h("p", { class: "muted", id: "search-summary" }, `${data.hits.length} hits for “${data.query}” in ${took.toFixed(0)} ms`));
  if (!data.hits.length) results.append(h("p", { class: "empty" }, "No match. Try fewer words, or an identifier."));
  for (const hit of data.hits) {
    const p = hit.parts;
    const w = weights(p.semantic !== null);
    results.append(h("div", { class: `card hit kind-${hit.kind}` },
      h("div", { class: "event-head" },
        h("span", { class: "score" }, hit.score.toFixed(3)),
        h("span", { class: "badge" }, hit.kind),
        h("span", { class: "muted" }, when(hit.ts)),
        sessionLink(hit.session),
        h("a", { class: "id mono hit-link", href: "#/event/" + hit.id }, shortId(hit.id))),
      h("div", {}, h("a", { href: "#/event/" + hit.id, class: "hit-headline" }, cut(firstLine(hit.text) || `(${hit.kind})`, 160))),
      h("div", { class: "parts", title: "why it ranked: each signal in [0, 1], weighted as .memlog.yaml's ranking says" },
        partBar("text", p.fts, w.fts),
        p.semantic === null ? h("span", { class: "part", title: "no vectors yet: its weight is shared out" }, "semantic —") : partBar("semantic", p.semantic, w.semantic),
        partBar("recency", p.recency, w.recency),
        partBar("importance", p.importance, w.importance))));
  }
}

// --- what memory learned: rules and concepts ---------------------------------

function eventLink(id) {
  return h("a", { class: "mono", href: "#/event/" + id }, shortId(id));
}

async function learnedPage() {
  const data = await api("learned");
  page("Learned",
    h("h2", {}, `Rules (${data.rules.length})`),
    data.rules.length ? null : h("p", { class: "empty" }, "none yet: `memlog reflect` finds candidates, `memlog rules add` promotes one"),
    h("div", { id: "rules" }, data.rules.map((r) => h("div", { class: "card rule" + (r.status === "retired" ? " muted" : "") },
      h("div", { class: "event-head" },
        h("span", { class: "badge" }, r.rule_kind),
        h("span", { class: "badge" }, r.retired ? "retired: " + r.retired : r.status),
        eventLink(r.id),
        h("span", { class: "muted" }, when(r.ts))),
      h("div", {}, r.text),
      h("div", { class: "muted" }, "evidence ", ...r.evidence.map((e) => [eventLink(e), " "]),
        ` · ${r.recalls} recalls, ${r.successes} successes, ${r.failures} failures`,
        r.contradicted_by.length ? ` · contradicted ${r.contradicted_by.length}×` : "",
        r.superseded_by ? " · superseded" : "")))),
    h("h2", {}, `Rule candidates (${data.candidates.length})`),
    data.candidates.length ? null : h("p", { class: "empty" }, "none: reflection runs after sessions end (`memlog reflect`)"),
    h("div", { id: "candidates" }, data.candidates.map((c) => h("div", { class: "card candidate" },
      h("div", { class: "event-head" },
        h("span", { class: "badge" }, c.rule_kind),
        h("span", { class: "muted" }, `${c.sessions} sessions`)),
      h("div", {}, c.text),
      h("div", { class: "mono" }, `memlog rules add --kind ${c.rule_kind} "…" ` + c.evidence.slice(0, 3).map((e) => "--evidence " + shortId(e)).join(" "))))),
    h("h2", {}, `Concepts (${data.concepts.length})`),
    data.concepts.length ? null : h("p", { class: "empty" }, "none yet: the agent files sessions with `memlog concepts add`"),
    h("div", { id: "concepts" }, data.concepts.map((c) => h("div", { class: "card concept" },
      h("div", {}, h("strong", {}, c.name), " ", h("span", { class: "muted" }, c.topics.join(" · "))),
      h("div", {}, "sessions: ", ...c.sessions.map((s) => [sessionLink(s), " "])),
      c.facts.length ? h("div", {}, "facts: ", ...c.facts.map((f) => [eventLink(f), " "])) : null))));
  state.refresh = learnedPage;
}

// --- the review queue (learn.review) ----------------------------------------

async function queuePage() {
  const data = await api("queue");
  const pending = data.items.filter((i) => i.status === "pending");
  page("Review queue",
    h("p", { class: "muted" }, data.review
      ? "Facts and rules agents propose wait here and are not injected until accepted."
      : "Reviewing is off: `learn.review: true` in .memlog.yaml makes agents' facts and rules wait here."),
    h("h2", {}, `Waiting (${pending.length})`),
    pending.length ? null : h("p", { class: "empty" }, "nothing waits for review"),
    h("div", { id: "queue" }, data.items.map((i) => h("div", { class: "card review-item" + (i.status === "pending" ? "" : " muted") },
      h("div", { class: "event-head" },
        h("span", { class: "badge" }, i.kind),
        h("span", { class: "badge" }, i.status),
        eventLink(i.id),
        h("span", { class: "muted" }, when(i.ts)),
        i.client ? h("span", { class: "muted" }, i.client) : null),
      h("div", {}, i.text),
      i.evidence.length ? h("div", { class: "muted" }, "evidence ", ...i.evidence.map((e) => [eventLink(e), " "])) : null,
      i.status === "pending"
        ? h("div", { class: "mono" }, `memlog review accept ${shortId(i.id)}  ·  memlog review reject ${shortId(i.id)}`)
        : (i.decided_by ? h("div", { class: "muted" }, "decided by ", eventLink(i.decided_by)) : null)))));
  state.refresh = queuePage;
}

// --- tasks board -----------------------------------------------------------

function column(status) {
  const st = (status || "").toLowerCase();
  if (["done", "completed", "cancelled", "canceled"].includes(st)) return "done";
  if (st === "blocked") return "blocked";
  if (["in_progress", "in-progress", "active", "doing"].includes(st)) return "in_progress";
  return "pending";
}

async function tasksPage() {
  const data = await api("tasks");
  const columns = { pending: [], in_progress: [], blocked: [], done: [] };
  for (const t of data.tasks) columns[column(t.status)].push(t);
  const titles = { pending: "Pending", in_progress: "In progress", blocked: "Blocked", done: "Done" };
  page("Tasks",
    h("div", { class: "board", id: "board" },
      Object.entries(columns).map(([name, tasks]) =>
        h("section", { class: "column", "data-column": name },
          h("h2", {}, `${titles[name]} (${tasks.length})`),
          tasks.length ? null : h("p", { class: "empty" }, "none"),
          tasks.map((t) => h("div", { class: "card task" },
            h("div", {}, t.title),
            h("div", { class: "muted" }, h("span", { class: "badge" }, t.status), " ", when(t.updated), " · ", sessionLink(t.session)),
            (t.blocked_by || []).length ? h("div", { class: "blockers" }, "blocked by: " + t.blocked_by.join(", ")) : null))))));
  state.refresh = tasksPage;
}

// --- entity ----------------------------------------------------------------

function edgeTable(rows, heading) {
  if (!rows.length) return h("p", { class: "empty" }, `No edges ${heading}.`);
  return h("table", { class: "list" },
    h("thead", {}, h("tr", {}, h("th", {}, "relation"), h("th", {}, "entity"), h("th", {}, "type"), h("th", {}, "evidence"), h("th", {}, "when"))),
    h("tbody", {}, rows.map((r) => h("tr", {},
      h("td", {}, r.rel),
      h("td", {}, entityLink(r.other, r.other_title)),
      h("td", { class: "muted" }, r.other_type || ""),
      h("td", { class: "mono" }, r.evidence ? h("a", { href: "#/event/" + r.evidence }, shortId(r.evidence)) : ""),
      h("td", { class: "when" }, when(r.ts))))));
}

async function entityPage(id) {
  const data = await api("entities/" + enc(id));
  const e = data.entity;
  page(`${e.type}: ${e.title}`,
    h("dl", { class: "meta" },
      h("dt", {}, "id"), h("dd", { class: "mono" }, e.id),
      h("dt", {}, "status"), h("dd", {}, `${e.status} (${e.stage})`),
      h("dt", {}, "first seen"), h("dd", {}, when(e.created_at))),
    h("h2", {}, `Edges out (${data.out.length})`), edgeTable(data.out, "out"),
    h("h2", {}, `Edges in (${data.in.length})`), edgeTable(data.in, "in"));
  state.refresh = () => entityPage(id);
}

// --- review (memlog diff) ------------------------------------------------

async function reviewPage(_, params) {
  const revs = params.get("revs") || "";
  const form = h("form", { class: "filters" },
    h("label", {}, "range (A..B, A.., or one commit; empty: the last seal or sync)", h("input", { name: "revs", value: revs, size: 40, placeholder: "memlog~3..memlog" })),
    h("button", { class: "primary", type: "submit" }, "Review"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const v = new FormData(form).get("revs");
    location.hash = "#/review" + (v ? "?revs=" + enc(v) : "");
  });
  const d = await api("diff" + (revs ? "?revs=" + enc(revs) : ""));
  const range = `${d.from ? shortId(d.from) : "(empty)"}..${shortId(d.to)}`;
  const kinds = Object.entries(d.events_by_kind).map(([k, n]) => `${n} ${k}`).join(", ");
  page("Review " + range, form,
    h("p", {}, `${d.events_added} event(s) added`, d.events_removed ? `, ${d.events_removed} removed` : "", kinds ? ": " + kinds : ""),
    d.sessions_added.length ? h("h2", {}, `Sessions added (${d.sessions_added.length})`) : null,
    d.sessions_added.length ? h("table", { class: "list" }, h("tbody", {}, d.sessions_added.map((a) => h("tr", {},
      h("td", { class: "when" }, when(a.start)), h("td", {}, sessionLink(a.session)), h("td", { class: "num" }, a.events + " ev"), h("td", {}, a.first_prompt || "—"))))) : null,
    d.tasks.length ? h("h2", {}, `Tasks (${d.tasks.length})`) : null,
    d.tasks.map((t) => h("div", { class: "card" },
      h("div", {}, h("span", { class: "badge" }, t.change), " ", t.title, " ", h("span", { class: "muted mono" }, t.key)),
      h("pre", {},
        h("span", { class: "diff-del" }, t.before && Object.keys(t.before).length ? "- " + JSON.stringify(t.before) + "\n" : ""),
        h("span", { class: "diff-add" }, "+ " + JSON.stringify(t.after))))),
    d.entities_added.length ? h("h2", {}, `Entities added (${d.entities_added.length})`) : null,
    d.entities_added.length ? h("ul", {}, d.entities_added.map((e) => h("li", {}, h("span", { class: "muted" }, e.entity_type + " "), entityLink(e.key, e.title)))) : null,
    d.forgets.length ? h("h2", {}, `Forgets (${d.forgets.length})`) : null,
    d.forgets.map((f) => h("div", { class: "card kind-forget" },
      h("div", {}, h("span", { class: "mono" }, shortId(f.id)), ` hides ${f.hides.length} event(s)`, f.reason ? " — " + f.reason : ""),
      h("ul", {}, f.hides.map((x) => h("li", { class: "mono" }, `${shortId(x.id)} ${x.kind} in ${x.session} (${when(x.ts)})`))))),
    d.purges.length ? h("h2", {}, `Purges (${d.purges.length})`) : null,
    d.purges.map((p) => h("div", { class: "card kind-forget" },
      h("div", {}, h("span", { class: "mono" }, shortId(p.name)),
        ` erased ${p.events.length} event(s) of ${p.sessions.length} session(s) from history: ${p.segments_rewritten} segment(s), ${p.commits_rewritten} commit(s) rewritten (${when(p.ts)})`),
      h("div", { class: "mono muted" }, p.events.map(shortId).join(" ")))),
    !d.events_added && !d.events_removed && !d.purges.length ? h("p", { class: "empty" }, "No change.") : null);
  state.refresh = () => reviewPage(_, params);
}

// --- stats -------------------------------------------------------------------

// one colour per kind memlog knows (two kinds sharing a blue read as one)
const PALETTE = ["#2f6feb", "#1a7f37", "#8250df", "#bf8700", "#cf222e", "#0a7ea4", "#9a6700", "#6e7781", "#e16f24", "#bf3989",
  "#54aeff", "#4ac26b", "#c297ff", "#d4a72c", "#ff8182", "#3dc9e6", "#7d4e00", "#24292f", "#fb8f44", "#ff80c8", "#116329", "#0550ae"];

function kindColors(kinds) {
  return Object.fromEntries(kinds.map((k, i) => [k, PALETTE[i % PALETTE.length]]));
}

function legend(colors) {
  return h("div", { class: "legend" }, Object.entries(colors).map(([k, c]) => {
    const sw = h("span", { class: "swatch" });
    sw.style.background = c;
    return h("span", {}, sw, k);
  }));
}

/** Every day from the first to the last of `present` (at most the last 60). */
function dayRange(present) {
  if (!present.length) return [];
  const last = new Date(present[present.length - 1] + "T00:00:00Z");
  let day = new Date(Math.max(new Date(present[0] + "T00:00:00Z"), last - 59 * 86400000));
  const out = [];
  for (; day <= last; day = new Date(day.getTime() + 86400000)) out.push(day.toISOString().slice(0, 10));
  return out;
}

/** Events per day, stacked by kind: an SVG bar per day (the last 60). */
function perDayChart(rows, colors) {
  const days = dayRange([...new Set(rows.map((r) => r.day))].filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d)));
  const byDay = new Map(days.map((d) => [d, []]));
  for (const r of rows) if (byDay.has(r.day)) byDay.get(r.day).push(r);
  const totals = days.map((d) => byDay.get(d).reduce((n, r) => n + r.events, 0));
  const max = Math.max(1, ...totals);
  const W = 1000, H = 160, bw = W / Math.max(days.length, 1);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H + 20}`, width: "100%", role: "img", "aria-label": "events per day" });
  days.forEach((d, i) => {
    let y = H;
    for (const r of byDay.get(d)) {
      const hgt = (r.events / max) * H;
      y -= hgt;
      svg.append(s("rect", { x: i * bw + 1, y, width: Math.max(bw - 2, 1), height: hgt, fill: colors[r.kind] },
        s("title", {}, `${d} ${r.kind}: ${r.events}`)));
    }
  });
  if (days.length) {
    svg.append(s("text", { x: 0, y: H + 15, "font-size": 12, fill: "#6a737d" }, days[0]));
    svg.append(s("text", { x: W, y: H + 15, "font-size": 12, fill: "#6a737d", "text-anchor": "end" }, days[days.length - 1]));
  }
  return svg;
}

/** Horizontal bars, one per kind. */
function byKindChart(byKind, colors) {
  const entries = Object.entries(byKind).sort((a, b) => b[1] - a[1]);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  const W = 1000, row = 22;
  const svg = s("svg", { viewBox: `0 0 ${W} ${entries.length * row}`, width: "100%", role: "img", "aria-label": "events by kind" });
  entries.forEach(([k, n], i) => {
    svg.append(s("text", { x: 0, y: i * row + 15, "font-size": 13, fill: "#1f2328" }, k));
    svg.append(s("rect", { x: 220, y: i * row + 4, width: ((W - 320) * n) / max, height: 14, fill: colors[k] || "#2f6feb" }));
    svg.append(s("text", { x: 225 + ((W - 320) * n) / max, y: i * row + 15, "font-size": 12, fill: "#6a737d" }, n));
  });
  return svg;
}

const size = (bytes) => (bytes < 1048576 ? (bytes / 1024).toFixed(0) + " KiB" : (bytes / 1048576).toFixed(1) + " MiB");

async function statsPage() {
  const [stats, index] = await Promise.all([api("stats"), api("index")]);
  const colors = kindColors(Object.keys(stats.events_by_kind));
  const stat = (label, value) => h("div", { class: "card stat" }, h("div", { class: "n" }, value), h("div", { class: "muted" }, label));
  const f = index.freshness;
  page("Stats",
    h("div", { class: "stats-grid" },
      stat("sessions", stats.sessions),
      stat("live events", stats.events),
      stat("hidden by forget", stats.hidden_events),
      stat("commits", stats.commits),
      stat("segments", stats.segments),
      stat("open journals", stats.journals),
      ...["L1", "L2", "L3", "L4"].map((l) => stat("memories at " + l, (stats.memory_levels || {})[l] ?? 0)),
      stat("full-text index", size(index.sizes.fts_bytes)),
      stat("graph database", size(index.sizes.graph_bytes))),
    h("h2", {}, "Events per day and kind"),
    h("div", { class: "chart" }, perDayChart(index.per_day, colors), legend(colors)),
    h("h2", {}, "Events by kind"),
    h("div", { class: "chart" }, byKindChart(stats.events_by_kind, colors)),
    h("h2", {}, "Index"),
    h("dl", { class: "meta" },
      h("dt", {}, "freshness"), h("dd", {}, f.fresh ? "up to date with the log" : "behind the log (the next read brings it up to date)"),
      h("dt", {}, "memlog tip"), h("dd", { class: "mono" }, f.tip || "—"),
      h("dt", {}, "indexed commit"), h("dd", { class: "mono" }, f.indexed_commit || "—"),
      h("dt", {}, "generation"), h("dd", { class: "mono" }, f.generation || "—"),
      h("dt", {}, "rows"), h("dd", {}, Object.entries(index.rows).map(([k, n]) => `${n} ${k}`).join(", ")),
      h("dt", {}, "span"), h("dd", {}, stats.first_event ? `${when(stats.first_event)} – ${when(stats.last_event)}` : "—")));
  state.refresh = statsPage;
}

// --- live updates --------------------------------------------------------------

function connectLive() {
  const badge = document.getElementById("live");
  const source = new EventSource("/api/live");
  let timer = null;
  source.onopen = () => badge.classList.add("on");
  source.onerror = () => badge.classList.remove("on");
  source.addEventListener("index", () => {
    // Bursts (a seal, then the index run it causes) refresh once.
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (!state.refresh) return;
      badge.classList.add("flash");
      try { await state.refresh(); } catch (err) { /* the next event retries */ }
      setTimeout(() => badge.classList.remove("flash"), 400);
    }, 150);
  });
}

// --- start -------------------------------------------------------------------

async function start() {
  // `memlog serve --allow-forget` prints /#token=…: keep it for this tab only.
  const m = location.hash.match(/token=([0-9a-f]+)/);
  if (m) {
    sessionStorage.setItem("memlog-token", m[1]);
    history.replaceState(null, "", "#/");
  }
  state.token = sessionStorage.getItem("memlog-token");
  try { state.config = await api("config"); } catch (_) { /* read-only */ }
  document.getElementById("quick-search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = document.getElementById("quick-q").value.trim();
    if (q) location.hash = "#/search?q=" + enc(q);
  });
  window.addEventListener("hashchange", route);
  connectLive();
  route();
}

start();
