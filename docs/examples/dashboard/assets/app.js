/* kernelindex dashboard: Health, Trends, Compare, Runs and one record.
 *
 * Data files are scripts that call KI.register(key, payload): Chromium refuses fetch()
 * of file:// URLs, and a <script> tag works from file:// and any static host alike.
 * Record text (names, labels, parameters) may be hostile: it only ever reaches the page
 * as text nodes (textContent), attribute values or canvas text, never as markup.
 */
(function () {
  "use strict";

  // ---- data loading -------------------------------------------------------------
  const loaded = new Map();
  const waiting = new Map();
  const KEY = /^(site|index|refs|(series|records|refs)\/[0-9a-f]{16})$/;

  window.KI = {
    register(key, payload) {
      loaded.set(key, payload);
      const w = waiting.get(key);
      if (w) w.resolve(payload);
    },
  };

  function load(key) {
    if (loaded.has(key)) return Promise.resolve(loaded.get(key));
    if (waiting.has(key)) return waiting.get(key).promise;
    if (!KEY.test(key)) return Promise.reject(new Error("no such data: " + key));
    const w = {};
    w.promise = new Promise((resolve, reject) => { w.resolve = resolve; w.reject = reject; });
    waiting.set(key, w);
    const tag = document.createElement("script");
    tag.src = "data/" + key + ".js";
    tag.onload = () => {
      tag.remove();
      if (!loaded.has(key)) w.reject(new Error("data/" + key + ".js registered nothing"));
    };
    tag.onerror = () => {
      tag.remove();
      waiting.delete(key);
      w.reject(new Error("could not load data/" + key + ".js"));
    };
    document.head.appendChild(tag);
    return w.promise;
  }

  // ---- DOM helpers: text only -----------------------------------------------------
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function link(text, params) {
    return el("a", { href: hashOf(params) }, text);
  }

  function hashOf(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (k !== "view" && v) q.set(k, v);
    const s = q.toString();
    return "#/" + params.view + (s ? "?" + s : "");
  }

  // ---- formatting --------------------------------------------------------------------
  function fmtNs(ns) {
    if (ns === null || ns === undefined) return "–";
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (ns >= 1e3) return (ns / 1e3).toFixed(2) + " µs";
    return ns + " ns";
  }
  function fmtRatio(r) {
    if (r === null || r === undefined || !isFinite(r)) return "–";
    const pct = (r - 1) * 100;
    const text = pct.toFixed(1);
    if (Number(text) === 0) return "0.0%";
    return (pct > 0 ? "+" : "") + text + "%";
  }
  function clip(text) {
    const t = text || "";
    return t.length > 140 ? t.slice(0, 139) + "…" : t;
  }
  function short(commit) { return commit ? String(commit).slice(0, 10) : "–"; }
  function seriesLabel(s) {
    const parts = [[s.operation, s.pass].filter(Boolean).join(" "), s.provider, s.gpu, s.dtype, s.params];
    return parts.filter(Boolean).join(" · ");
  }
  function causeBadge(cause) {
    const known = ["implementation", "environment", "labels", "unexplained"];
    const c = known.includes(cause) ? cause : "unexplained";
    return el("span", { class: "cause cause-" + c, text: cause || "unexplained" });
  }
  const COLORS = ["#2f5fb3", "#c77700", "#1e8449", "#7b4fb3", "#c0392b", "#138d90", "#8c6d1f", "#d35400"];
  const CAUSE_COLORS = {
    implementation: "#2f5fb3", environment: "#c77700", labels: "#7b4fb3", unexplained: "#c0392b",
  };

  // ---- routing -----------------------------------------------------------------------
  let site = null;
  const VIEWS = { health: viewHealth, trends: viewTrends, compare: viewCompare, runs: viewRuns, record: viewRecord };

  function route() {
    const hash = location.hash.replace(/^#\/?/, "");
    const [name, query] = hash.split("?");
    const view = VIEWS[name] ? name : "health";
    const params = Object.fromEntries(new URLSearchParams(query || ""));
    for (const a of document.querySelectorAll("header nav a")) {
      a.classList.toggle("active", a.dataset.view === view);
    }
    const main = document.getElementById("view");
    const token = {};
    route.current = token;
    main.replaceChildren(el("p", { class: "note", text: "Loading…" }));
    const fill = (...nodes) => { if (route.current === token) main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined)); };
    Promise.resolve()
      .then(() => VIEWS[view](params, fill, () => route.current === token))
      .catch((err) => fill(el("p", { class: "error", text: String(err && err.message || err) })));
  }

  // ---- Health ------------------------------------------------------------------------
  function sparkline(values, stepAt) {
    const w = 140, h = 30;
    const canvas = el("canvas", { width: w, height: h, class: "spark" });
    const ys = values.filter((v) => v !== null && v !== undefined);
    if (ys.length < 1) return canvas;
    const lo = Math.min(...ys), hi = Math.max(...ys);
    const ctx = canvas.getContext("2d");
    const x = (i) => 2 + (values.length > 1 ? (i * (w - 4)) / (values.length - 1) : (w - 4) / 2);
    const y = (v) => (hi === lo ? h / 2 : h - 3 - ((v - lo) * (h - 6)) / (hi - lo));
    ctx.strokeStyle = "#2f5fb3"; ctx.lineWidth = 1.5; ctx.beginPath();
    let started = false;
    values.forEach((v, i) => {
      if (v === null || v === undefined) return;
      if (started) ctx.lineTo(x(i), y(v)); else { ctx.moveTo(x(i), y(v)); started = true; }
    });
    ctx.stroke();
    if (stepAt >= 0 && stepAt < values.length && values[stepAt] !== null) {
      ctx.fillStyle = "#c0392b"; ctx.beginPath(); ctx.arc(x(stepAt), y(values[stepAt]), 3, 0, 7); ctx.fill();
    }
    return canvas;
  }

  function viewHealth(params, fill) {
    const c = site.counts;
    const cards = el("div", { class: "cards" },
      [["runs", c.runs], ["series", c.series], ["commits", c.commits], ["slower on " + site.mainBranch, c.regressions]]
        .map(([label, n]) => el("div", { class: "card" }, el("b", { text: String(n) }), label)));
    const rows = site.health.map((h) => el("tr", { class: "regression" },
      el("td", {}, sparkline(h.spark, h.stepAt)),
      el("td", { class: "kernel" }, link(seriesLabel(h), { view: "trends", workload: h.workload, series: h.id })),
      el("td", { class: "num slower", text: fmtRatio(h.ratio) }),
      el("td", { class: "num", text: fmtNs(h.lastMedianNs) }),
      el("td", { class: "detail", title: h.detail || null }, causeBadge(h.cause), " ", clip(h.detail)),
      el("td", { text: short(h.commit) })));
    const body = rows.length
      ? el("table", { id: "health" },
          el("thead", {}, el("tr", {}, ["trend", "kernel", "slower by", "median now", "cause", "since commit"]
            .map((t, i) => el("th", { class: i === 2 || i === 3 ? "num" : null, text: t })))),
          el("tbody", {}, rows))
      : el("p", { class: "note", id: "health-empty", text: "No line on " + site.mainBranch + " is slower than before its last change point." });
    const more = c.regressions > site.health.length
      ? el("p", { class: "note", text: "Showing the worst " + site.health.length + " of " + c.regressions + "." }) : null;
    fill(el("h2", { text: "What regressed on " + site.mainBranch + " now, worst first" }), cards, body, more);
  }

  // ---- Trends ------------------------------------------------------------------------
  function workloadsOf(index) {
    const byWorkload = new Map();
    for (const s of index.series) {
      if (!byWorkload.has(s.workload)) byWorkload.set(s.workload, []);
      byWorkload.get(s.workload).push(s);
    }
    return byWorkload;
  }

  function workloadLabel(s) {
    return [[s.operation, s.pass].filter(Boolean).join(" "), s.dtype, s.params].filter(Boolean).join(" · ") || s.workload;
  }

  async function viewTrends(params, fill, current) {
    const index = await load("index");
    const groups = workloadsOf(index);
    if (!params.workload || !groups.has(params.workload)) {
      const search = el("input", { type: "search", placeholder: "filter workloads", id: "workload-filter" });
      const list = el("ul", { class: "workloads" });
      const draw = () => {
        const needle = search.value.toLowerCase();
        const items = [];
        for (const [w, members] of groups) {
          const label = workloadLabel(members[0]);
          if (needle && !label.toLowerCase().includes(needle)) continue;
          items.push(el("li", {}, link(label, { view: "trends", workload: w }),
            " ", el("span", { class: "note", text: "(" + members.length + " line" + (members.length > 1 ? "s" : "") + ")" })));
          if (items.length >= 500) break;
        }
        list.replaceChildren(...items);
      };
      search.addEventListener("input", draw);
      draw();
      fill(el("h2", { text: "Trends: pick a workload" }), el("div", { class: "filters" }, search), list);
      return;
    }
    const members = groups.get(params.workload);
    const data = await Promise.all(members.map((s) => load("series/" + s.id)));
    if (!current()) return;
    const nodes = [el("h2", { text: "Trends: " + workloadLabel(members[0]) })];
    nodes.push(el("p", { class: "note", text: "Median per commit with its p20–p80 band, one line per GPU and provider; markers are change points, coloured by cause." }));
    const chartBox = el("div", { class: "chart", id: "trend-chart" });
    const legend = el("div", { class: "legend" });
    nodes.push(legend, chartBox);
    const rooflineBox = el("div", { class: "chart", id: "roofline-chart" });
    const stepsTable = el("table", { id: "steps" });
    nodes.push(rooflineBox, el("h3", { text: "Change points" }), stepsTable);
    fill(...nodes);
    drawTrends(data, params.series, chartBox, rooflineBox, legend, stepsTable);
  }

  function lineLabel(s, all) {
    const protocols = new Set(all.map((x) => x.protocol));
    const parts = [s.provider, s.entryPoint && all.some((x) => x.provider === s.provider && x.entryPoint !== s.entryPoint) ? s.entryPoint : null, s.gpu];
    if (protocols.size > 1) parts.push("protocol " + String(s.protocol).slice(7, 15));
    return parts.filter(Boolean).join(" · ");
  }

  function drawTrends(all, focus, chartBox, rooflineBox, legend, stepsTable) {
    // One x position per commit (its k-th run in each line shares the k-th position, so
    // GPUs line up and a commit measured twice keeps both points), or per run without one.
    const xs = new Map();
    const xkeyOf = new Map();
    for (const s of all) {
      const seen = new Map();
      const keys = [];
      for (const i of s.line) {
        const r = s.runs[i];
        const k = seen.get(r[2]) || 0;
        seen.set(r[2], k + 1);
        const key = r[2] ? "c:" + r[2] + "#" + k : "r:" + r[5] + r[0];
        keys.push(key);
        // Ordered as the series are: order key (commit time), then observedAt.
        const order = r[5] + "|" + r[4];
        const prev = xs.get(key);
        if (!prev || order < prev.order) xs.set(key, { order, commit: r[2], when: r[5] });
      }
      xkeyOf.set(s, keys);
    }
    const xkeys = [...xs.keys()].sort((a, b) => {
      const oa = xs.get(a).order, ob = xs.get(b).order;
      return oa < ob ? -1 : oa > ob ? 1 : a < b ? -1 : a > b ? 1 : 0;
    });
    const xpos = new Map(xkeys.map((k, i) => [k, i]));
    const labels = xkeys.map((k) => (xs.get(k).commit ? short(xs.get(k).commit).slice(0, 7) : xs.get(k).when.slice(0, 10)));
    const xvals = xkeys.map((_, i) => i);
    const shown = all.filter((s) => !focus || s.id === focus || all.length <= 8).slice(0, 8);
    const columns = [xvals];
    const uSeries = [{ label: "commit" }];
    const bands = [];
    const marks = [];
    const roof = [];
    legend.replaceChildren();
    shown.forEach((s, n) => {
      const color = COLORS[n % COLORS.length];
      const med = new Array(xvals.length).fill(null);
      const p20 = new Array(xvals.length).fill(null);
      const p80 = new Array(xvals.length).fill(null);
      const pct = new Array(xvals.length).fill(null);
      const at = [];
      const keys = xkeyOf.get(s);
      for (let j = 0; j < s.line.length; j++) {
        const r = s.runs[s.line[j]];
        const x = xpos.get(keys[j]);
        at.push(x);
        med[x] = r[6];
        p20[x] = r[7];
        p80[x] = r[8];
        if (s.bytesMoved && s.peakBandwidth && r[6]) pct[x] = (100 * s.bytesMoved / (r[6] * 1e-9)) / s.peakBandwidth;
      }
      const base = columns.length;
      columns.push(med, p20, p80);
      uSeries.push(
        { label: lineLabel(s, all), stroke: color, width: 2, spanGaps: true, points: { show: true, size: 4 } },
        { label: "p20", stroke: color, width: 0, spanGaps: true, points: { show: false } },
        { label: "p80", stroke: color, width: 0, spanGaps: true, points: { show: false } });
      bands.push({ series: [base + 2, base + 1], fill: color + "30" });
      for (const st of s.steps) {
        const x = at[st[0]];
        if (x !== undefined) marks.push({ x, y: med[x], cause: st[2], ratio: st[1], detail: st[3], label: lineLabel(s, all), commit: s.runs[s.line[st[0]]][2] });
      }
      if (pct.some((v) => v !== null)) roof.push({ label: lineLabel(s, all), color, values: pct });
      legend.append(el("span", {}, el("span", { class: "swatch", style: "background:" + color }), lineLabel(s, all)));
    });
    if (all.length > shown.length) {
      legend.append(el("span", { class: "note", text: "(" + (all.length - shown.length) + " more lines: pick one from Health or Runs)" }));
    }
    const width = Math.max(480, chartBox.clientWidth || 900);
    const xAxis = { values: (u, ticks) => ticks.map((t) => (Number.isInteger(t) && labels[t] !== undefined ? labels[t] : "")), rotate: 0 };
    const opts = {
      width, height: 360,
      scales: { x: { time: false } },
      axes: [xAxis, { label: "median latency", values: (u, ticks) => ticks.map(fmtNs), size: 80 }],
      series: uSeries,
      bands,
      legend: { show: false },
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [(u) => drawMarks(u, marks)] },
    };
    new uPlot(opts, columns, chartBox);
    chartBox.dataset.lines = String(shown.length);
    chartBox.dataset.points = String(xvals.length);
    if (roof.length) {
      rooflineBox.append(el("h3", { text: "% of the roofline (bytesMoved / median over the GPU's peak bandwidth)" }));
      const box = el("div", {});
      rooflineBox.append(box);
      new uPlot({
        width, height: 220,
        scales: { x: { time: false } },
        axes: [xAxis, { label: "% of peak", values: (u, ticks) => ticks.map((t) => t.toFixed(0) + "%"), size: 80 }],
        series: [{ label: "commit" }].concat(roof.map((r) => ({ label: r.label, stroke: r.color, width: 2, spanGaps: true }))),
        legend: { show: false },
      }, [xvals].concat(roof.map((r) => r.values)), box);
    }
    const head = el("thead", {}, el("tr", {}, ["line", "commit", "change", "cause", "what differs"].map((t) => el("th", { text: t }))));
    const body = el("tbody", {}, marks.map((m) => el("tr", {},
      el("td", { text: m.label }), el("td", { text: short(m.commit) }),
      el("td", { class: "num " + (m.ratio > 1 ? "slower" : "faster"), text: fmtRatio(m.ratio) }),
      el("td", {}, causeBadge(m.cause)), el("td", { class: "detail", title: m.detail || null, text: clip(m.detail) }))));
    stepsTable.replaceChildren(head, body);
    if (!marks.length) stepsTable.replaceChildren(el("caption", { class: "note", text: "No change point on these lines." }));
  }

  function drawMarks(u, marks) {
    const ctx = u.ctx;
    ctx.save();
    const labelled = new Map();
    for (const m of marks) {
      if (m.y === null || m.y === undefined) continue;
      const x = u.valToPos(m.x, "x", true);
      const y = u.valToPos(m.y, "y", true);
      const color = CAUSE_COLORS[m.cause] || CAUSE_COLORS.unexplained;
      ctx.strokeStyle = color;
      ctx.setLineDash([4, 4]);
      ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, u.bbox.top); ctx.lineTo(x, u.bbox.top + u.bbox.height); ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = color;
      ctx.beginPath(); ctx.arc(x, y, 6 * devicePixelRatio, 0, 7); ctx.fill();
      ctx.font = (11 * devicePixelRatio) + "px sans-serif";
      // Several steps at one commit: their labels stack instead of overlapping.
      const k = labelled.get(m.x) || 0;
      labelled.set(m.x, k + 1);
      const text = String(m.cause) + " " + fmtRatio(m.ratio);
      const right = x + 8 * devicePixelRatio + ctx.measureText(text).width > u.bbox.left + u.bbox.width;
      ctx.textAlign = right ? "right" : "left";
      ctx.fillText(text, x + (right ? -8 : 8) * devicePixelRatio, u.bbox.top + (14 + 14 * k) * devicePixelRatio);
    }
    ctx.restore();
  }

  // ---- Compare -----------------------------------------------------------------------
  async function viewCompare(params, fill, current) {
    const [refs, index] = await Promise.all([load("refs"), load("index")]);
    const options = [];
    for (const b of refs.branches) options.push({ key: b.key, text: "branch " + b.name });
    for (const c of refs.commits) options.push({ key: c.key, text: "commit " + short(c.name) + (c.branch ? " (" + c.branch + ")" : "") + " " + c.time.slice(0, 10) });
    if (!options.length) {
      fill(el("h2", { text: "Compare" }), el("p", { class: "note", text: "No run carries a commit or branch (kernelindex.dev/commit, kernelindex.dev/branch): nothing to compare." }));
      return;
    }
    const keys = new Set(options.map((o) => o.key));
    const a = keys.has(params.a) ? params.a : (refs.commits[1] || refs.commits[0] || refs.branches[0]).key;
    const b = keys.has(params.b) ? params.b : (refs.commits[0] || refs.branches[0]).key;
    const select = (id, value) => el("select", { id, onchange: (e) => { location.hash = hashOf({ view: "compare", a: id === "ref-a" ? e.target.value : a, b: id === "ref-b" ? e.target.value : b }); } },
      options.map((o) => { const opt = el("option", { value: o.key, text: o.text }); opt.selected = o.key === value; return opt; }));
    const [left, right] = await Promise.all([load("refs/" + a), load("refs/" + b)]);
    if (!current()) return;
    const byId = new Map(index.series.map((s) => [s.id, s]));
    const rows = [];
    for (const sid of new Set([...Object.keys(left.runs), ...Object.keys(right.runs)])) {
      const s = byId.get(sid);
      if (!s) continue;
      const l = left.runs[sid], r = right.runs[sid];
      // A run without a latency median (memory only, failed) has nothing to compare.
      if (!(l && l[0]) && !(r && r[0])) continue;
      const ratio = l && r && l[0] && r[0] ? r[0] / l[0] : null;
      rows.push({ s, l, r, ratio });
    }
    // Slowest first; series run on one side only at the end.
    rows.sort((x, y) => (x.ratio === null) - (y.ratio === null) || (y.ratio || 0) - (x.ratio || 0));
    const table = el("table", { id: "compare" },
      el("thead", {}, el("tr", {}, ["kernel", "A median", "B median", "B vs A"].map((t, i) => el("th", { class: i ? "num" : null, text: t })))),
      el("tbody", {}, rows.map(({ s, l, r, ratio }) => el("tr", {},
        el("td", {}, link(seriesLabel(s), { view: "trends", workload: s.workload, series: s.id })),
        el("td", { class: "num", text: l ? fmtNs(l[0]) : "not run" }),
        el("td", { class: "num", text: r ? fmtNs(r[0]) : "not run" }),
        el("td", { class: "num " + (ratio === null ? "" : ratio > 1 ? "slower" : ratio < 1 ? "faster" : ""), text: fmtRatio(ratio) })))));
    fill(el("h2", { text: "Compare two commits or branches" }),
      el("div", { class: "filters" }, el("label", {}, "A", select("ref-a", a)), el("label", {}, "B", select("ref-b", b))),
      el("p", { class: "note", text: "Each side is its latest run of every series; B vs A is B's median over A's (above 0%: B is slower)." }),
      table);
  }

  // ---- Runs --------------------------------------------------------------------------
  const FACETS = [["operation", "operation"], ["gpu", "GPU"], ["dtype", "dtype"], ["provider", "provider"], ["status", "status"]];
  const PAGE = 200;

  async function viewRuns(params, fill, current) {
    const index = await load("index");
    const facets = site.facets;
    const controls = FACETS.map(([name, title]) => {
      const values = Object.keys(facets[name] || {}).sort();
      const sel = el("select", { id: "filter-" + name, onchange: () => { location.hash = hashOf(Object.assign(collect(), { view: "runs" })); } },
        el("option", { value: "", text: "any" }),
        values.map((v) => { const o = el("option", { value: v, text: (v || "(none)") + " (" + facets[name][v] + ")" }); o.selected = params[name] === v; return o; }));
      return el("label", {}, title, sel);
    });
    const text = el("input", { type: "search", id: "filter-name", value: params.name || "", placeholder: "name contains" });
    text.addEventListener("change", () => { location.hash = hashOf(Object.assign(collect(), { view: "runs" })); });
    function collect() {
      const out = {};
      for (const [name] of FACETS) out[name] = document.getElementById("filter-" + name).value;
      out.name = text.value;
      return out;
    }
    const want = (name) => (params[name] === undefined ? null : params[name]);
    const matching = index.series.filter((s) =>
      ["operation", "gpu", "dtype", "provider"].every((f) => want(f) === null || (s[f] || "") === want(f)) &&
      (want("status") === null || (s.status[want("status")] || 0) > 0));
    const count = el("p", { class: "note", id: "runs-count" });
    const tbody = el("tbody", {});
    const table = el("table", { id: "runs" },
      el("thead", {}, el("tr", {}, ["run", "operation", "GPU", "dtype", "provider", "status", "commit", "branch", "median", "observed"]
        .map((t) => el("th", { class: t === "median" ? "num" : null, text: t })))),
      tbody);
    const more = el("button", { id: "runs-more", text: "Show more" });
    fill(el("h2", { text: "Runs" }), el("div", { class: "filters" }, controls, el("label", {}, "name", text)), count, table, more);
    let next = 0, shownRows = 0;
    const needle = (params.name || "").toLowerCase();
    async function page() {
      more.disabled = true;
      let added = 0;
      while (next < matching.length && added < PAGE) {
        const batch = matching.slice(next, next + 16);
        next += batch.length;
        const files = await Promise.all(batch.map((s) => load("series/" + s.id)));
        if (!current()) return;
        for (const s of files) {
          for (const r of s.runs.slice().reverse()) {
            if (want("status") !== null && r[1] !== want("status")) continue;
            if (needle && !r[0].toLowerCase().includes(needle)) continue;
            tbody.append(el("tr", {},
              el("td", {}, link(r[0], { view: "record", s: s.id, n: r[0] })),
              el("td", { text: [s.operation, s.pass].filter(Boolean).join(" ") }), el("td", { text: s.gpu || "" }),
              el("td", { text: s.dtype || "" }), el("td", { text: s.provider || "" }), el("td", { text: r[1] }),
              el("td", { text: short(r[2]) }), el("td", { text: r[3] || "" }), el("td", { class: "num", text: fmtNs(r[6]) }),
              el("td", { class: "when", text: r[4].replace("T", " ").replace(/\.\d+Z$/, "Z") })));
            added++;
            shownRows++;
          }
        }
      }
      count.textContent = shownRows + " runs shown, from " + Math.min(next, matching.length) + " of " + matching.length + " matching series (" + site.counts.runs + " runs in all)";
      more.disabled = next >= matching.length;
      more.hidden = next >= matching.length;
    }
    more.addEventListener("click", () => page());
    await page();
  }

  // Record texts come deflated and base64-encoded (a tenth of the bytes to write and host).
  async function inflate(packed) {
    const bytes = Uint8Array.from(atob(packed.deflate), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return JSON.parse(await new Response(stream).text());
  }

  // ---- one record --------------------------------------------------------------------
  async function viewRecord(params, fill, current) {
    // Only a series the index lists has a records file (no request for a made-up one).
    const index = await load("index");
    if (!index.series.some((s) => s.id === params.s)) throw new Error("no such record");
    const texts = await inflate(await load("records/" + params.s));
    if (!current()) return;
    if (!Object.prototype.hasOwnProperty.call(texts, params.n)) throw new Error("no record named " + JSON.stringify(params.n || ""));
    const text = texts[params.n];
    const blob = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    fill(el("h2", { text: params.n }),
      el("p", {}, el("a", { href: blob, download: params.n + ".json", id: "record-download" }, "Download the record (JSON)"),
        " · ", el("a", { href: "#/runs" }, "back to Runs")),
      el("pre", { class: "record", id: "record-text", text }));
  }

  // ---- start -------------------------------------------------------------------------
  load("site").then((payload) => {
    site = payload;
    document.title = site.title;
    document.getElementById("title").textContent = site.title;
    document.getElementById("meta").textContent =
      site.counts.runs + " runs" +
      (site.counts.leftOut ? " (" + site.counts.leftOut + " without a positive median: not tested for steps)" : "") +
      " · built " + site.generatedAt + " · kernelindex-sdk " + site.sdkVersion;
    window.addEventListener("hashchange", route);
    route();
  }, (err) => {
    document.getElementById("view").replaceChildren(el("p", { class: "error", text: String(err.message || err) }));
  });
})();
