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
  const KEY = /^(site|index|refs|(series|records|refs|relative)\/[0-9a-f]{16})$/;

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
  // As few decimals as the value needs: three significant digits, no trailing zeros.
  function digits(v) {
    const a = Math.abs(v);
    const text = a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
    return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
  }
  function fmtNs(ns) {
    if (ns === null || ns === undefined) return "–";
    if (ns >= 1e9) return digits(ns / 1e9) + " s";
    if (ns >= 1e6) return digits(ns / 1e6) + " ms";
    if (ns >= 1e3) return digits(ns / 1e3) + " µs";
    return digits(ns) + " ns";
  }
  function fmtRatio(r) {
    if (r === null || r === undefined || !isFinite(r)) return "–";
    const pct = (r - 1) * 100;
    const text = pct.toFixed(1);
    if (Number(text) === 0) return "0.0%";
    return (pct > 0 ? "+" : "") + text + "%";
  }
  // A verdict as its cell: the Python verdict decides; the page only shows it.
  function verdictText(kind, ratio) {
    if (kind === "regression" || kind === "improvement") return fmtRatio(ratio);
    if (kind === "degraded") return "degraded";
    if (kind === "same") return "~";
    return "–";
  }
  function verdictClass(kind) {
    return kind === "regression" ? "slower" : kind === "improvement" ? "faster" : kind === "degraded" ? "degraded" : "";
  }
  function clip(text, most) {
    const t = text || "";
    const n = most || 140;
    return t.length > n ? t.slice(0, n - 1) + "…" : t;
  }
  function short(commit) { return commit ? String(commit).slice(0, 10) : "–"; }
  function seriesLabel(s) {
    const parts = [[s.operation, s.pass].filter(Boolean).join(" "), s.provider, s.gpu, s.dtype, s.params];
    return parts.filter(Boolean).join(" · ");
  }
  const CAUSES = ["implementation", "baseline", "environment", "workload", "hardware", "labels", "unexplained"];
  function causeBadge(cause) {
    const c = CAUSES.includes(cause) ? cause : "unexplained";
    return el("span", { class: "cause cause-" + c, text: cause || "unexplained" });
  }
  function causeCell(row) {
    const causes = row.causes && row.causes.length ? row.causes : [row.cause];
    const nodes = [];
    causes.forEach((c, i) => { if (i) nodes.push(" + "); nodes.push(causeBadge(c)); });
    if (row.movedWith && row.movedWith.length) nodes.push(" shared: moved with " + row.movedWith.join(", "));
    if (row.detail) nodes.push(el("div", { class: "why", text: clip(row.detail, 90) }));
    return nodes;
  }
  const COLORS = ["#2f5fb3", "#c77700", "#1e8449", "#7b4fb3", "#c0392b", "#138d90", "#8c6d1f", "#d35400"];
  const CAUSE_COLORS = {
    implementation: "#2f5fb3", baseline: "#138d90", environment: "#c77700", workload: "#8c6d1f",
    hardware: "#d35400", labels: "#7b4fb3", unexplained: "#c0392b",
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
    if (!site.counts.runs) {
      fill(el("h2", { text: "No runs yet" }), el("p", { class: "note", id: "empty-store",
        text: "The store holds no runs: run a benchmark, ingest its records (kernelindex ingest) and build the dashboard again." }));
      return;
    }
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

  const HEALTH_FILTERS = [["operation", "operation"], ["provider", "provider"], ["gpu", "GPU"], ["verdict", "change"]];

  function healthRow(h) {
    const now = h.kind === "relative"
      ? "x" + digits(h.lastRatio) + " of " + h.baseline
      : fmtNs(h.lastMedianNs);
    const who = h.kind === "relative"
      ? [[h.operation, h.pass].filter(Boolean).join(" "), h.provider + " over " + h.baseline, h.gpu, h.dtype, h.params].filter(Boolean).join(" · ")
      : seriesLabel(h);
    const target = h.kind === "relative" ? { view: "trends", workload: h.workload, relative: h.id } : { view: "trends", workload: h.workload, series: h.id };
    return el("tr", { class: h.verdict === "regression" ? "regression" : "improvement", "data-kind": h.kind },
      el("td", {}, sparkline(h.spark, h.stepAt)),
      el("td", { class: "kernel" }, link(who, target), h.baseline === true ? el("span", { class: "tag", text: " baseline" }) : null),
      el("td", { class: "num " + verdictClass(h.verdict), title: h.evidence || null, text: verdictText(h.verdict, h.ratio) }),
      el("td", { class: "num", text: now }, h.degraded ? el("span", { class: "degraded", title: h.degraded, text: " degraded" }) : null),
      el("td", { class: "detail", title: h.detail || null }, causeCell(h)),
      el("td", { text: short(h.commit) }));
  }

  function healthTable(id, rows) {
    return el("table", { id },
      el("thead", {}, el("tr", {}, ["trend", "kernel", "change", "now", "cause", "since commit"]
        .map((t, i) => el("th", { class: i === 2 || i === 3 ? "num" : null, text: t })))),
      el("tbody", {}, rows.map(healthRow)));
  }

  function viewHealth(params, fill) {
    const c = site.counts;
    const cards = el("div", { class: "cards" },
      [["runs", c.runs], ["series", c.series], ["commits", c.commits], ["slower on " + site.mainBranch, c.regressions],
        ["faster on " + site.mainBranch, c.improvements], ["stale", c.stale]]
        .map(([label, n]) => el("div", { class: "card" }, el("b", { text: String(n) }), label)));
    const every = site.health.concat(site.stale);
    const values = {
      operation: [...new Set(every.map((h) => h.operation || ""))].sort(),
      provider: [...new Set(every.map((h) => h.provider || ""))].sort(),
      gpu: [...new Set(every.map((h) => h.gpu || ""))].sort(),
      verdict: ["regression", "improvement"],
    };
    const go = (changes) => { location.hash = hashOf(Object.assign({}, params, changes, { view: "health" })); };
    const controls = HEALTH_FILTERS.map(([name, title]) => el("label", {}, title,
      el("select", { id: "health-" + name, onchange: (e) => go({ [name]: e.target.value }) },
        el("option", { value: "", text: "any" }),
        values[name].map((v) => { const o = el("option", { value: v, text: v || "(none)" }); o.selected = params[name] === v; return o; }))));
    const hide = el("input", { type: "checkbox", id: "health-hide-baselines", onchange: (e) => go({ baselines: e.target.checked ? "hide" : "" }) });
    hide.checked = params.baselines === "hide";
    controls.push(el("label", { class: "check" }, el("span", {}, hide, " hide baselines")));
    const keep = (h) => HEALTH_FILTERS.every(([name]) => !params[name] || (h[name] || "") === params[name]) &&
      !(params.baselines === "hide" && h.kind === "series" && h.baseline);
    const now = site.health.filter(keep), stale = site.stale.filter(keep);
    const body = now.length
      ? healthTable("health", now)
      : el("p", { class: "note", id: "health-empty", text: "Nothing measured now on " + site.mainBranch + " changed beyond the noise." });
    const nodes = [el("h2", { text: "What changed on " + site.mainBranch + " now, worst first" }), cards,
      el("div", { class: "filters" }, controls), body];
    if (stale.length) {
      nodes.push(el("h3", { text: "Stale: not re-measured since their family's latest run" }),
        el("p", { class: "note", text: "Lines whose operation ran again at a later commit without them: their last change is history, not now." }),
        healthTable("health-stale", stale));
    }
    fill(...nodes);
  }

  // ---- Trends ------------------------------------------------------------------------
  function workloadsOf(index) {
    const byWorkload = new Map();
    for (const s of index.series) {
      if (!s.timed) continue; // memory-only or failed-only lines have nothing to draw
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
    const relativeOf = new Map();
    for (const r of index.relative || []) {
      for (const w of r.workloads) {
        if (!relativeOf.has(w)) relativeOf.set(w, []);
        relativeOf.get(w).push(r);
      }
    }
    if (!params.workload || !groups.has(params.workload)) {
      const search = el("input", { type: "search", placeholder: "filter workloads", id: "workload-filter" });
      const onlyChanged = el("input", { type: "checkbox", id: "workload-changed" });
      const list = el("ul", { class: "workloads" });
      const draw = () => {
        const needle = search.value.toLowerCase();
        const items = [];
        for (const [w, members] of groups) {
          const label = workloadLabel(members[0]);
          const changed = members.some((s) => s.changed) || (relativeOf.get(w) || []).some((r) => r.changed);
          if (needle && !label.toLowerCase().includes(needle)) continue;
          if (onlyChanged.checked && !changed) continue;
          items.push(el("li", { class: changed ? "changed" : null },
            changed ? el("span", { class: "mark", title: "a line of this workload changed beyond the noise", text: "● " }) : null,
            link(label, { view: "trends", workload: w }),
            " ", el("span", { class: "note", text: "(" + members.length + " line" + (members.length > 1 ? "s" : "") + ")" })));
          if (items.length >= 500) break;
        }
        list.replaceChildren(...items);
      };
      search.addEventListener("input", draw);
      onlyChanged.addEventListener("change", draw);
      draw();
      fill(el("h2", { text: "Trends: pick a workload" }),
        el("div", { class: "filters" }, search, el("label", { class: "check" }, el("span", {}, onlyChanged, " only workloads with changes (●)"))), list);
      return;
    }
    const members = groups.get(params.workload);
    const related = relativeOf.get(params.workload) || [];
    const [data, rel] = await Promise.all([
      Promise.all(members.map((s) => load("series/" + s.id))),
      Promise.all(related.map((r) => load("relative/" + r.id))),
    ]);
    if (!current()) return;
    const nodes = [el("h2", { text: "Trends: " + workloadLabel(members[0]) })];
    nodes.push(el("p", { class: "note", text: "Median per commit with its p20–p80 band, one line per GPU and provider; markers are change points, coloured by cause." }));
    const chartBox = el("div", { class: "chart", id: "trend-chart" });
    const legend = el("div", { class: "legend", id: "trend-legend" });
    nodes.push(legend, chartBox);
    const rooflineBox = el("div", { class: "chart", id: "roofline-chart" });
    const relativeBox = el("div", { class: "chart", id: "relative-chart" });
    const stepsTable = el("table", { id: "steps" });
    nodes.push(rooflineBox, relativeBox, el("h3", { text: "Change points" }), stepsTable);
    fill(...nodes);
    const marks = drawTrends(data, params.series, chartBox, rooflineBox, legend);
    const relMarks = drawRelative(related, rel, params.relative, relativeBox);
    stepsTable.replaceChildren(...stepsRows(marks.concat(relMarks)));
  }

  function lineLabel(s, all) {
    const protocols = new Set(all.map((x) => x.protocol));
    const parts = [s.provider, s.entryPoint && all.some((x) => x.provider === s.provider && x.entryPoint !== s.entryPoint) ? s.entryPoint : null, s.gpu];
    if (protocols.size > 1) parts.push("protocol " + String(s.protocol).slice(7, 15));
    return parts.filter(Boolean).join(" · ");
  }

  // One x position per commit (replicates of a commit are one point: the median of their
  // medians), or per run without a commit; the label is the commit, once.
  function xPositions(all, pointsOf) {
    const xs = new Map();
    for (const s of all) {
      for (const p of pointsOf(s)) {
        const prev = xs.get(p.key);
        if (!prev || p.order < prev.order) xs.set(p.key, { order: p.order, label: p.label });
      }
    }
    const keys = [...xs.keys()].sort((a, b) => {
      const oa = xs.get(a).order, ob = xs.get(b).order;
      return oa < ob ? -1 : oa > ob ? 1 : a < b ? -1 : a > b ? 1 : 0;
    });
    return { keys, pos: new Map(keys.map((k, i) => [k, i])), labels: keys.map((k) => xs.get(k).label) };
  }

  function median(values) {
    const v = values.slice().sort((a, b) => a - b);
    const m = v.length >> 1;
    return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  }

  function linePoints(s) {
    // Runs of one commit on the line: one point, their medians' median.
    const by = new Map();
    for (let j = 0; j < s.line.length; j++) {
      const r = s.runs[s.line[j]];
      if (r[6] === null || r[6] === undefined) continue;
      const key = r[2] ? "c:" + r[2] : "r:" + r[5] + r[0];
      if (!by.has(key)) by.set(key, { key, order: r[5] + "|" + r[4], label: r[2] ? short(r[2]).slice(0, 7) : r[4].slice(0, 10), runs: [], lineIndex: j });
      by.get(key).runs.push(r);
    }
    return [...by.values()].map((p) => Object.assign(p, {
      median: median(p.runs.map((r) => r[6])),
      p20: p.runs.every((r) => r[7] !== null) ? median(p.runs.map((r) => r[7])) : null,
      p80: p.runs.every((r) => r[8] !== null) ? median(p.runs.map((r) => r[8])) : null,
      degraded: p.runs.map((r) => r[9]).filter(Boolean).join("; ") || null,
    }));
  }

  function xAxis(labels) {
    return {
      // One label per commit; thinned when they would overlap.
      splits: (u) => {
        const [lo, hi] = [Math.ceil(u.scales.x.min), Math.floor(u.scales.x.max)];
        const room = Math.max(1, Math.floor(u.bbox.width / devicePixelRatio / 70));
        const step = Math.max(1, Math.ceil((hi - lo + 1) / room));
        const out = [];
        for (let i = lo; i <= hi; i += step) out.push(i);
        return out;
      },
      values: (u, ticks) => ticks.map((t) => (labels[t] !== undefined ? labels[t] : "")),
      rotate: 0,
    };
  }

  function yAxis(title, format) {
    // The title sits left of the widest tick label, never over it.
    return {
      label: title, labelGap: 6, labelSize: 18, gap: 6,
      values: (u, ticks) => ticks.map(format),
      size: (u, values) => {
        if (!values) return 60;
        u.ctx.font = (12 * devicePixelRatio) + "px sans-serif";
        const widest = Math.max(...values.map((v) => u.ctx.measureText(String(v)).width)) / devicePixelRatio;
        return Math.ceil(widest) + 18;
      },
    };
  }

  function logWanted(values) {
    const v = values.filter((x) => x !== null && x !== undefined && x > 0);
    if (v.length < 2) return false;
    return Math.max(...v) / Math.min(...v) > 10;
  }

  function drawTrends(all, focus, chartBox, rooflineBox, legend) {
    const drawn = all.filter((s) => s.runs.some((r) => r[6] !== null && r[6] !== undefined));
    const points = new Map(drawn.map((s) => [s, linePoints(s)]));
    const x = xPositions(drawn, (s) => points.get(s));
    const xvals = x.keys.map((_, i) => i);
    const shown = drawn.filter((s) => !focus || s.id === focus || drawn.length <= 8).slice(0, 8);
    const columns = [xvals];
    const uSeries = [{ label: "commit" }];
    const bands = [];
    const marks = [];
    const roof = [];
    const every = [];
    legend.replaceChildren();
    shown.forEach((s, n) => {
      const color = COLORS[n % COLORS.length];
      const med = new Array(xvals.length).fill(null);
      const p20 = new Array(xvals.length).fill(null);
      const p80 = new Array(xvals.length).fill(null);
      const pct = new Array(xvals.length).fill(null);
      const atLine = new Map();
      for (const p of points.get(s)) {
        const i = x.pos.get(p.key);
        med[i] = p.median; p20[i] = p.p20; p80[i] = p.p80;
        every.push(p.median);
        for (const r of p.runs) atLine.set(r[0], i);
        if (s.bytesMoved && s.peakBandwidth && p.median) pct[i] = (100 * s.bytesMoved / (p.median * 1e-9)) / s.peakBandwidth;
      }
      const base = columns.length;
      columns.push(med, p20, p80);
      uSeries.push(
        { label: lineLabel(s, drawn), stroke: color, width: 2, spanGaps: true, points: { show: true, size: 4 } },
        { label: "p20", stroke: color, width: 0, spanGaps: true, points: { show: false } },
        { label: "p80", stroke: color, width: 0, spanGaps: true, points: { show: false } });
      bands.push({ series: [base + 2, base + 1], fill: color + "30" });
      for (const st of s.steps) {
        const run = s.runs[s.line[st[0]]];
        const xi = run ? atLine.get(run[0]) : undefined;
        if (xi !== undefined) marks.push({ x: xi, y: med[xi], cause: st[2], ratio: st[1], detail: st[3], verdict: st[4], evidence: st[5], causes: st[6], movedWith: st[7], label: lineLabel(s, drawn), commit: run[2] });
      }
      if (pct.some((v) => v !== null)) roof.push({ label: lineLabel(s, drawn), color, values: pct });
      const degraded = points.get(s).filter((p) => p.degraded);
      legend.append(el("span", {}, el("span", { class: "swatch", style: "background:" + color }), lineLabel(s, drawn),
        degraded.length ? el("span", { class: "degraded", title: degraded.map((p) => p.label + ": " + p.degraded).join("\n"), text: " (" + degraded.length + " degraded)" }) : null));
    });
    if (drawn.length > shown.length) {
      legend.append(el("span", { class: "note", text: "(" + (drawn.length - shown.length) + " more lines: pick one from Health or Runs)" }));
    }
    const log = logWanted(every);
    const width = Math.max(480, chartBox.clientWidth || 900);
    const opts = {
      width, height: 360,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [xAxis(x.labels), yAxis("median latency" + (log ? " (log scale)" : ""), fmtNs)],
      series: uSeries,
      bands,
      legend: { show: false },
      cursor: { drag: { x: true, y: false } },
      hooks: { draw: [(u) => drawMarks(u, marks)] },
    };
    new uPlot(opts, columns, chartBox);
    chartBox.dataset.lines = String(shown.length);
    chartBox.dataset.points = String(xvals.length);
    chartBox.dataset.scale = log ? "log" : "linear";
    if (roof.length) {
      rooflineBox.append(el("h3", { text: "% of the roofline (bytesMoved / median over the GPU's peak bandwidth)" }));
      const box = el("div", {});
      rooflineBox.append(box);
      new uPlot({
        width, height: 220,
        scales: { x: { time: false } },
        axes: [xAxis(x.labels), yAxis("% of peak", (t) => digits(t) + "%")],
        series: [{ label: "commit" }].concat(roof.map((r) => ({ label: r.label, stroke: r.color, width: 2, spanGaps: true }))),
        legend: { show: false },
      }, [xvals].concat(roof.map((r) => r.values)), box);
    }
    return marks;
  }

  function drawRelative(entries, data, focus, box) {
    if (!entries.length) return [];
    const pairs = entries.map((e, i) => ({ e, d: data[i] })).filter((p) => !focus || p.e.id === focus || entries.length <= 8).slice(0, 8);
    // Ordered as the series are: commit time, then observedAt.
    const pointsOf = (p) => p.d.points.map((q) => ({ key: q[0] ? "c:" + q[0] : "r:" + q[6], order: q[1] + "|" + q[9], label: short(q[0]).slice(0, 7) }));
    const x = xPositions(pairs, pointsOf);
    const xvals = x.keys.map((_, i) => i);
    const columns = [xvals];
    const uSeries = [{ label: "commit" }];
    const marks = [];
    const legend = el("div", { class: "legend", id: "relative-legend" });
    const every = [];
    pairs.forEach((p, n) => {
      const color = COLORS[(n + 3) % COLORS.length];
      const ys = new Array(xvals.length).fill(null);
      const gpuAt = [];
      p.d.points.forEach((q, j) => {
        const i = x.pos.get(pointsOf(p)[j].key);
        ys[i] = q[3];
        every.push(q[3]);
        gpuAt[j] = { i, gpu: q[2] };
      });
      columns.push(ys);
      const title = p.e.provider + " over " + p.e.baseline;
      uSeries.push({ label: title, stroke: color, width: 2, spanGaps: true, points: { show: true, size: 5 } });
      for (const st of p.d.steps) {
        const i = gpuAt[st[0]] ? gpuAt[st[0]].i : undefined;
        if (i !== undefined) marks.push({ x: i, y: ys[i], cause: st[2], ratio: st[1], detail: st[3], verdict: st[4], evidence: st[5], causes: st[6], movedWith: st[7], label: title + " (" + p.e.gpus.join(", ") + ")", commit: p.d.points[st[0]][0] });
      }
      legend.append(el("span", {}, el("span", { class: "swatch", style: "background:" + color }), title + " · " + p.e.gpus.join(" → ")));
    });
    box.append(el("h3", { text: "Over the baseline measured in the same sweep (survives a change of GPU)" }), legend);
    const chart = el("div", {});
    box.append(chart);
    const log = logWanted(every);
    new uPlot({
      width: Math.max(480, box.clientWidth || 900), height: 240,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [xAxis(x.labels), yAxis("implementation / baseline" + (log ? " (log)" : ""), (t) => "x" + digits(t))],
      series: uSeries,
      legend: { show: false },
      hooks: { draw: [(u) => drawMarks(u, marks)] },
    }, columns, chart);
    box.dataset.lines = String(pairs.length);
    return marks;
  }

  function stepsRows(marks) {
    if (!marks.length) return [el("caption", { class: "note", text: "No change point on these lines." })];
    const head = el("thead", {}, el("tr", {}, ["line", "commit", "change", "verdict", "cause", "what differs"].map((t) => el("th", { text: t }))));
    const body = el("tbody", {}, marks.map((m) => el("tr", {},
      el("td", { text: m.label }), el("td", { text: short(m.commit) }),
      el("td", { class: "num " + verdictClass(m.verdict), text: fmtRatio(m.ratio) }),
      el("td", { title: m.evidence || null, text: m.verdict || "–" }),
      el("td", {}, causeCell({ cause: m.cause, causes: m.causes, movedWith: m.movedWith })),
      el("td", { class: "detail", title: m.detail || null, text: clip(m.detail) }))));
    return [head, body];
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
    const chosen = keys.has(params.ref) ? params.ref : (refs.commits[0] || refs.branches[0]).key;
    const select = el("select", { id: "ref", onchange: (e) => { location.hash = hashOf({ view: "compare", ref: e.target.value }); } },
      options.map((o) => { const opt = el("option", { value: o.key, text: o.text }); opt.selected = o.key === chosen; return opt; }));
    const ref = await load("refs/" + chosen);
    if (!current()) return;
    const byId = new Map(index.series.map((s) => [s.id, s]));
    const rows = ref.rows.filter((r) => byId.has(r[0]));
    // Regressions first, worst first; then improvements; then the rest.
    const rank = (r) => (r[4] === "regression" ? 0 : r[4] === "improvement" ? 1 : 2);
    rows.sort((a, b) => rank(a) - rank(b) || Math.abs((b[3] || 1) - 1) - Math.abs((a[3] || 1) - 1));
    const table = el("table", { id: "compare" },
      el("thead", {}, el("tr", {}, ["kernel", "base", "base median", ref.kind + " median", "change", "evidence"].map((t, i) => el("th", { class: i > 1 && i < 5 ? "num" : null, text: t })))),
      el("tbody", {}, rows.map((r) => el("tr", { class: r[4] || null },
        el("td", {}, link(seriesLabel(byId.get(r[0])), { view: "trends", workload: byId.get(r[0]).workload, series: r[0] })),
        el("td", { title: r[8] || null, text: r[6] ? short(r[6]) : "no base" }),
        el("td", { class: "num", text: r[1] === null ? "–" : fmtNs(r[1]) }),
        el("td", { class: "num", text: fmtNs(r[2]) }),
        el("td", { class: "num " + verdictClass(r[4]), text: verdictText(r[4], r[3]) }),
        el("td", { class: "detail", text: clip(r[5]) })))));
    fill(el("h2", { text: "Compare a commit or branch with " + ref.base }),
      el("div", { class: "filters" }, el("label", {}, "commit or branch", select)),
      el("p", { class: "note", text: "A commit against " + ref.base + "'s history before it, a branch against " + ref.base + " now (its own runs left out), as kernelindex compare --history judges: a change counts when it passes the noise and may reach " + digits(site.threshold * 100) + "%; ~ otherwise." }),
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
              el("td", { text: s.dtype || "" }), el("td", { text: s.provider || "" }), el("td", { text: r[1], title: r[9] || null }, r[9] ? el("span", { class: "degraded", text: " degraded" }) : null),
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
    // Shown indented; the download is the stored text, byte for byte.
    let shown = text;
    try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch (err) { shown = text; }
    fill(el("h2", { text: params.n }),
      el("p", {}, el("a", { href: blob, download: params.n + ".json", id: "record-download" }, "Download the record (JSON)"),
        " · ", el("a", { href: "#/runs" }, "back to Runs")),
      el("pre", { class: "record", id: "record-text", text: shown }));
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
