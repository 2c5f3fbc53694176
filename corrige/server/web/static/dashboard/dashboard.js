// The latency dashboard: polls GET /v1/obs/summary and redraws. Inline SVG, no library.
// Every number shown carries its raw value in data-value, so tests can compare it with the API.
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const COLOURS = ["#4c6ef5", "#15aabf", "#82c91e", "#fab005", "#f76707", "#ae3ec9", "#868e96", "#e64980", "#20c997"];
  const UNBUDGETED = "#adb5bd";
  // a stage's verdict (the API's): too_few is grey, not judged, whatever its burn
  const VERDICT_FILL = { over: "var(--bad)", warn: "var(--warn)", ok: "var(--ok)", too_few: "var(--few)" };
  const VERDICT_CLASS = { over: "burn-bad", warn: "burn-warn", ok: "burn-ok", too_few: "burn-few" };
  const body = document.body;
  const pollMs = Number(body.dataset.pollMs) || 1500;
  const controls = { profile: document.getElementById("profile"), last: document.getElementById("last") };
  let updates = 0;
  let timer = null;
  let generation = 0; // a change of controls starts a new polling loop; the old one stops

  // ---- formatting (the CLI's rules: precision follows size) ----

  const finite = (v) => typeof v === "number" && Number.isFinite(v);
  function fmtMs(v) {
    if (!finite(v)) return "-";
    const a = Math.abs(v);
    if (a >= 100) return Math.round(v).toLocaleString("en-US");
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    return v.toFixed(3);
  }
  function fmtBurn(v) {
    if (!finite(v)) return "-";
    return (v >= 0.1 ? v.toFixed(2) : v.toPrecision(2)) + "x";
  }
  const fmtShare = (v) => (finite(v) ? (100 * v).toFixed(1) + "%" : "-");
  const fmtBytes = (v) => (finite(v) ? Math.round(v).toLocaleString("en-US") : "-");
  const fewNote = (stage) => (stage.verdict === "too_few" ? ` too few samples (n=${stage.n})` : "");

  function show(testid, text, value) {
    const node = document.querySelector(`[data-testid="${testid}"]`);
    if (!node) return;
    node.textContent = text;
    node.dataset.value = value === undefined || value === null ? "" : String(value);
  }

  // ---- SVG helpers ----

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function titled(node, text) {
    node.appendChild(svg("title", {}, text));
    return node;
  }
  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // ---- charts ----

  function budgetBars(budget) {
    const root = document.getElementById("budget-bars");
    clear(root);
    const stages = budget.stages;
    const colour = (stage, i) => (stage.allocation_ms === null ? UNBUDGETED : COLOURS[i % COLOURS.length]);
    const allocated = stages.reduce((s, x) => s + (x.allocation_ms || 0), 0);
    // absent spans count 0 in a trace, so each stage's contribution to the mean request is share × mean e2e
    const meanE2e = budget.total.mean_ms || 0;
    const contribution = (x) => (finite(x.share) ? x.share * meanE2e : 0);
    const full = Math.max(allocated, meanE2e, 1e-9);
    const x0 = 100;
    const width = 720; // room on the right for the totals
    const rows = [
      { label: "budget", y: 6, value: (x) => x.allocation_ms || 0, total: allocated, kind: "budget" },
      { label: "actual (mean)", y: 52, value: contribution, total: meanE2e, kind: "actual" },
    ];
    for (const row of rows) {
      root.appendChild(svg("text", { x: 0, y: row.y + 22 }, row.label));
      const group = svg("g", { "data-row": row.kind, "data-total": row.total });
      let x = x0;
      stages.forEach((stage, i) => {
        const ms = row.value(stage);
        const w = (width * ms) / full;
        const rect = svg("rect", {
          x: x.toFixed(2), y: row.y, width: Math.max(w, 0).toFixed(2), height: 34,
          fill: colour(stage, i), "data-stage": stage.name, "data-ms": ms,
        });
        group.appendChild(titled(rect, `${stage.name}: ${fmtMs(ms)} ms`));
        x += w;
      });
      root.appendChild(group);
      root.appendChild(svg("text", { x: x + 6, y: row.y + 22 }, `${fmtMs(row.total)} ms`));
    }
    const legend = document.getElementById("budget-legend");
    clear(legend);
    stages.forEach((stage, i) => {
      const item = document.createElement("span");
      const swatch = document.createElement("i");
      swatch.style.background = colour(stage, i);
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(`${stage.name} ${fmtMs(stage.allocation_ms)} / ${fmtMs(contribution(stage))}`));
      legend.appendChild(item);
    });
  }

  function percentileBars(report) {
    const root = document.getElementById("p95-bars");
    clear(root);
    const bars = [
      ["e2e p50", report.e2e.p50_ms, "#74c0fc"],
      ["e2e p95", report.e2e.p95_ms, "#1c7ed6"],
      ["e2e p99", report.e2e.p99_ms, "#1864ab"],
      ["Σ stage p95", report.naive_p95_sum_ms, "#f76707"],
    ];
    const top = Math.max(...bars.map((b) => (finite(b[1]) ? b[1] : 0)), 1e-9);
    const h = 90;
    bars.forEach(([label, value, fill], i) => {
      const v = finite(value) ? value : 0;
      const bh = (h * v) / top;
      const x = 10 + i * 102;
      root.appendChild(titled(svg("rect", { x, y: 8 + h - bh, width: 80, height: bh, fill, "data-label": label, "data-ms": v }), `${label}: ${fmtMs(value)} ms`));
      root.appendChild(svg("text", { x: x + 40, y: 8 + h - bh - 3, "text-anchor": "middle" }, fmtMs(value)));
      root.appendChild(svg("text", { x: x + 40, y: 114, "text-anchor": "middle" }, label));
    });
  }

  function burnBars(budget) {
    const root = document.getElementById("burn-bars");
    clear(root);
    const stages = budget.stages.filter((s) => s.allocation_ms !== null);
    const limit = budget.burn_limit;
    const top = Math.max(2, ...stages.map((s) => (finite(s.burn) ? s.burn * 1.1 : 0)));
    const x0 = 170; // the stage names on the left
    const width = 200;
    const rowH = Math.min(24, 190 / Math.max(stages.length, 1));
    root.setAttribute("viewBox", `0 0 420 ${Math.ceil(rowH * stages.length + 22)}`);
    stages.forEach((stage, i) => {
      const y = 4 + i * rowH;
      const burn = finite(stage.burn) ? stage.burn : 0;
      const fill = VERDICT_FILL[stage.verdict] || "var(--few)";
      root.appendChild(svg("text", { x: x0 - 6, y: y + rowH * 0.65, "text-anchor": "end" }, stage.name));
      const rect = svg("rect", {
        x: x0, y: y + 2, width: ((width * Math.min(burn, top)) / top).toFixed(2), height: rowH - 6, fill,
        "data-stage": stage.name, "data-burn": burn, "data-sustained": String(stage.sustained),
        "data-verdict": String(stage.verdict),
      });
      root.appendChild(titled(rect, `${stage.name}: ${fmtBurn(stage.burn)}${fewNote(stage)}`));
      const label = fmtBurn(stage.burn) + (stage.sustained ? " ■" : "") + fewNote(stage);
      const few = stage.verdict === "too_few";
      // a grey bar carries its longer label inside, from its start: no clipping at the chart's edge
      const labelX = few ? x0 + 4 : x0 + (width * Math.min(burn, top)) / top + 4;
      const cls = stage.sustained ? "flag" : few ? "few" : "";
      root.appendChild(svg("text", { x: labelX, y: y + rowH * 0.65, class: cls }, label));
    });
    const bottom = rowH * stages.length + 4;
    for (const at of [1, limit]) {
      const x = x0 + (width * at) / top;
      root.appendChild(svg("line", { x1: x, x2: x, y1: 0, y2: bottom, class: at === limit ? "limit hot" : "limit" }));
      root.appendChild(svg("text", { x, y: bottom + 14, "text-anchor": "middle" }, `${at}x`));
    }
    show("flagged", budget.flagged.length ? budget.flagged.join(", ") : "none", budget.flagged.join("|"));
    show("min-samples", String(budget.min_samples), budget.min_samples);
  }

  function lineChart(id, t, series, testPrefix) {
    const root = document.getElementById(id);
    clear(root);
    const x0 = 34;
    const w = 380;
    const h = 110;
    const all = series.flatMap((s) => s.values);
    const top = Math.max(1, ...all);
    const n = t.length;
    root.dataset.max = String(Math.max(0, ...all));
    root.appendChild(svg("line", { x1: x0, x2: x0 + w, y1: h + 4, y2: h + 4, class: "axis" }));
    root.appendChild(svg("line", { x1: x0, x2: x0, y1: 4, y2: h + 4, class: "axis" }));
    root.appendChild(svg("text", { x: x0 - 4, y: 12, "text-anchor": "end" }, String(Math.round(top * 10) / 10)));
    root.appendChild(svg("text", { x: x0 - 4, y: h + 4, "text-anchor": "end" }, "0"));
    if (n > 1) {
      const span = t[n - 1] - t[0];
      root.appendChild(svg("text", { x: x0, y: h + 20 }, `-${Math.round(span)} s`));
      root.appendChild(svg("text", { x: x0 + w, y: h + 20, "text-anchor": "end" }, "now"));
    }
    for (const s of series) {
      if (n < 2) break;
      const points = s.values.map((v, i) => `${(x0 + (w * i) / (n - 1)).toFixed(1)},${(4 + h - (h * v) / top).toFixed(1)}`);
      root.appendChild(titled(svg("polyline", { points: points.join(" "), fill: "none", stroke: s.colour, "stroke-width": s.width || 1.5, "data-series": s.name }), s.name));
    }
    const main = series[0].values;
    const recent = main.slice(-8);  // the last two seconds: "now" without flicker between idle buckets
    const now = recent.length ? Math.max(...recent) : 0;
    show(`${testPrefix}-now`, String(Math.round(now * 10) / 10), now);
    show(`${testPrefix}-max`, String(Math.max(0, ...series.flatMap((s) => s.values))), Math.max(0, ...all));
  }

  function steps(data) {
    const s = data.steps;
    if (!s) {
      show("queue-now", "no engine", null);
      show("batch-now", "no engine", null);
      return;
    }
    lineChart("queue-chart", s.t, [
      { name: "waiting (mean)", values: s.waiting_mean, colour: "#1c7ed6", width: 2 },
      { name: "waiting (max)", values: s.waiting_max, colour: "#a5d8ff" },
    ], "queue");
    lineChart("batch-chart", s.t, [
      { name: "batch size (mean)", values: s.batch_mean, colour: "#2f9e44", width: 2 },
      { name: "batch size (max)", values: s.batch_max, colour: "#b2f2bb" },
    ], "batch");
  }

  // ---- tables ----

  function cell(row, text, value, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (value !== undefined) td.dataset.value = value === null ? "" : String(value);
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function budgetTable(budget) {
    const tbody = document.querySelector("#budget-table tbody");
    clear(tbody);
    for (const stage of [...budget.stages, budget.total]) {
      const tr = document.createElement("tr");
      tr.dataset.stage = stage.name;
      if (stage === budget.total) tr.className = "total";
      const burnClass = VERDICT_CLASS[stage.verdict] || "";
      cell(tr, stage.name);
      cell(tr, stage.spans.join(", "));
      cell(tr, fmtMs(stage.allocation_ms), stage.allocation_ms);
      cell(tr, String(stage.n), stage.n);
      cell(tr, fmtMs(stage.mean_ms), stage.mean_ms);
      cell(tr, fmtMs(stage.p50_ms), stage.p50_ms);
      cell(tr, fmtMs(stage.p95_ms), stage.p95_ms);
      cell(tr, fmtBurn(stage.burn) + (stage.sustained ? " ■" : "") + fewNote(stage), stage.burn, burnClass);
      cell(tr, fmtShare(stage.share), stage.share);
      tbody.appendChild(tr);
    }
    const f = budget.formula;
    const term = (name) => f.terms.find((x) => x.name === name).ms;
    show(
      "formula",
      `t_total = t_parse + t_tokenize + t_prefill + K·t_decode_step + t_detok + t_serialize = ` +
        `${fmtMs(term("t_parse"))} + ${fmtMs(term("t_tokenize"))} + ${fmtMs(term("t_prefill"))} + ` +
        `${finite(f.K) ? f.K.toFixed(1) : "-"} × ${fmtMs(f.t_decode_step_ms)} + ${fmtMs(term("t_detok + t_serialize"))} = ` +
        `${fmtMs(f.predicted_ms)} ms (measured mean ${fmtMs(f.measured_ms)} ms, ${fmtMs(f.other_ms)} ms outside the formula)`,
      f.predicted_ms,
    );
    show(
      "dominant",
      f.dominant ? `Dominant term: ${f.dominant}, ${fmtShare(f.dominant_share)} of the formula.` : "No traces yet.",
      f.dominant,
    );
  }

  function bytesTable(report) {
    const tbody = document.querySelector("#bytes-table tbody");
    clear(tbody);
    for (const row of report.bytes) {
      const tr = document.createElement("tr");
      tr.dataset.span = row.name;
      cell(tr, row.name);
      cell(tr, String(row.n), row.n);
      cell(tr, fmtBytes(row.mean_in), row.mean_in);
      cell(tr, fmtBytes(row.mean_out), row.mean_out);
      tbody.appendChild(tr);
    }
  }

  function orphans(data) {
    const node = document.querySelector('[data-testid="orphans"]');
    show("orphans", String(data.orphans.count), data.orphans.count);
    node.classList.toggle("bad", data.orphans.count > 0);
    const list = document.getElementById("orphan-list");
    clear(list);
    for (const o of data.orphans.examples) {
      const li = document.createElement("li");
      li.textContent = `${o.name} · span ${o.span_id} · parent ${o.parent_id || "none"}`;
      list.appendChild(li);
    }
  }

  // ---- the loop ----

  function render(data) {
    const { budget, report } = data;
    show("budget-profile", budget.profile, budget.profile);
    show("profile-why-profile", budget.profile, budget.profile);
    show("profile-model", budget.model || "-", budget.model);
    show("profile-why", budget.why, budget.why);
    show("trace-count", String(report.traces), report.traces);
    show("e2e-p50", fmtMs(report.e2e.p50_ms), report.e2e.p50_ms);
    show("e2e-p95", fmtMs(report.e2e.p95_ms), report.e2e.p95_ms);
    show("e2e-p99", fmtMs(report.e2e.p99_ms), report.e2e.p99_ms);
    show("naive-p95", fmtMs(report.naive_p95_sum_ms), report.naive_p95_sum_ms);
    show("delta-ms", fmtMs(report.delta_ms), report.delta_ms);
    show("delta-pct", finite(report.delta_pct) ? `${report.delta_pct > 0 ? "+" : ""}${report.delta_pct.toFixed(1)}%` : "-", report.delta_pct);
    budgetBars(budget);
    percentileBars(report);
    burnBars(budget);
    steps(data);
    orphans(data);
    budgetTable(budget);
    bytesTable(report);
  }

  function setStatus(text, cls) {
    const node = document.getElementById("status");
    node.textContent = text;
    node.className = `status ${cls}`;
  }

  async function poll(mine) {
    const params = new URLSearchParams({ last: controls.last.value });
    if (controls.profile.value) params.set("profile", controls.profile.value);
    try {
      const response = await fetch(`/v1/obs/summary?${params}`, { cache: "no-store" });
      const data = await response.json();
      if (mine !== generation) return; // the controls changed while this one was in flight
      if (!response.ok) throw new Error((data.error && data.error.message) || response.statusText);
      render(data);
      updates += 1;
      body.dataset.updates = String(updates);
      body.dataset.generatedAt = String(data.generated_at);
      setStatus(`live · ${new Date(data.generated_at * 1000).toLocaleTimeString()}`, "live");
    } catch (err) {
      setStatus(`error: ${err.message}`, "error");
    } finally {
      if (mine === generation) timer = setTimeout(() => poll(mine), pollMs);
    }
  }

  for (const control of Object.values(controls)) {
    control.addEventListener("change", () => {
      clearTimeout(timer);
      const url = new URL(window.location.href);
      url.searchParams.set(control.name, control.value);
      window.history.replaceState(null, "", url);
      generation += 1;
      poll(generation);
    });
  }
  poll(generation);
})();
