// respload's report page: reads the JSON in #respload-data and draws it with uPlot.
// Plain script, no build step: it is inlined into every page `respload report --html` writes.
// When done, <body data-rendered="ok">; on a failure, data-rendered="error" and the message
// in data-error (what the browser test reads).
(function () {
  'use strict';
  // The bundled uPlot, defined by the script before this one.
  const uPlot = /** @type {any} */ (window)['uPlot'];
  const body = document.body;
  const fail = (msg) => {
    body.dataset.rendered = 'error';
    body.dataset.error = String(msg);
    const p = document.getElementById('page');
    if (p) p.insertAdjacentHTML('afterbegin', '<p class="bad">The page could not be drawn: ' + esc(String(msg)) + '</p>');
  };
  window.addEventListener('error', (e) => fail(e.message));

  const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const colour = (i) => COLOURS[i % COLOURS.length];

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  }
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v; else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c == null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }
  function num(x, digits) {
    if (x == null) return '–';
    if (typeof x !== 'number') return String(x);
    if (Number.isInteger(x)) return x.toLocaleString('en-US');
    return x.toFixed(digits == null ? 3 : digits);
  }
  function table(headers, rows, cls) {
    const t = el('table', { class: cls || '' });
    t.append(el('thead', null, el('tr', null, ...headers.map((h) => el('th', null, h)))));
    const tb = el('tbody');
    for (const r of rows) {
      const tr = el('tr');
      for (const c of r) tr.append(c instanceof Node ? el('td', null, c) : el('td', null, c == null ? '–' : c));
      tb.append(tr);
    }
    t.append(tb);
    return t;
  }
  function section(title, id) {
    const s = el('section', { id });
    s.append(el('h2', null, title));
    return s;
  }
  function width(container) {
    return Math.max(480, Math.min(1200, (container.clientWidth || 960) - 8));
  }

  // Paint on a chart's canvas with text set as these marks need it (uPlot leaves its own
  // alignment behind): `paint(ctx, top, height)` inside save/restore.
  function onCanvas(u, paint) {
    const ctx = u.ctx;
    ctx.save();
    ctx.textAlign = 'left';
    ctx.textBaseline = 'alphabetic';
    ctx.font = `${11 * devicePixelRatio}px sans-serif`;
    paint(ctx, u.bbox.top, u.bbox.height);
    ctx.restore();
  }

  // Shaded phases and event lines, drawn under the series of a timeline chart.
  function marks(phases, events) {
    const shade = (u) => onCanvas(u, (ctx, top, height) => {
      phases.forEach((p, i) => {
        const x0 = u.valToPos(p.start, 'x', true);
        const x1 = u.valToPos(p.end, 'x', true);
        ctx.fillStyle = i % 2 ? 'rgba(0,0,0,0.03)' : 'rgba(31,119,180,0.07)';
        ctx.fillRect(x0, top, x1 - x0, height);
        ctx.fillStyle = '#555';
        ctx.fillText(p.name, x0 + 4, top + 12 * devicePixelRatio);
      });
    });
    const lines = (u) => onCanvas(u, (ctx, top, height) => {
      ctx.strokeStyle = '#d62728';
      ctx.fillStyle = '#d62728';
      ctx.setLineDash([4, 3]);
      for (const e of events) {
        const x = u.valToPos(e.t, 'x', true);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + height);
        ctx.stroke();
        ctx.fillText(e.label, x + 3, top + 26 * devicePixelRatio);
      }
    });
    return { hooks: { drawClear: [shade], draw: [lines] } };
  }

  // One chart: `tables` ([x, ...series] each) joined on x, drawn by uPlot with `opts` in a box
  // named `name`, and what it was given written on the box (readBack).
  function plot(container, name, tables, opts) {
    if (!tables.length) return null;
    const data = tables.length === 1 ? tables[0] : uPlot.join(tables);
    const box = el('div', { class: 'chart', 'data-chart': name });
    container.append(box);
    new uPlot(Object.assign({ width: width(container), cursor: { drag: { x: true, y: false } } }, opts), data, box);
    readBack(box, data);
    return box;
  }

  // A chart of series over the runs' time axes, joined (each run's own `t`).
  function timeChart(container, title, runs, pick, opts) {
    const tables = [];
    const series = [{ label: 's' }];
    runs.forEach((run, ri) => {
      const picked = pick(run).filter((s) => s.values.some((v) => v != null));
      if (!picked.length) return;
      // A log scale has no 0 (an empty second's latency): left out of the line.
      const values = (s) => (opts.log ? s.values.map((v) => (v > 0 ? v : null)) : s.values);
      tables.push([run.timeline.t, ...picked.map(values)]);
      picked.forEach((s, si) => {
        series.push({
          label: runs.length > 1 ? `${run.name}: ${s.label}` : s.label,
          stroke: runs.length > 1 ? colour(ri) : colour(si),
          dash: s.dash || (runs.length > 1 && si > 0 ? [6, 3] : undefined),
          width: 1.5,
          spanGaps: true,
          scale: s.scale || 'y',
          value: (_u, v) => (v == null ? '–' : num(v, 2)),
        });
      });
    });
    const axes = [{ label: 'seconds' }, { label: opts.y, size: 70 }];
    const scales = { x: { time: false }, y: opts.log ? { distr: 3 } : {} };
    if (opts.y2) {
      axes.push({ side: 1, scale: 'y2', label: opts.y2, grid: { show: false }, size: 60 });
      scales.y2 = {};
    }
    const plugins = runs.length === 1 ? [marks(runs[0].phases, runs[0].events)] : [];
    return plot(container, title, tables, { title, height: 260, series, axes, scales, plugins });
  }

  // What a chart was given, on its element: the points of its first series and their sum
  // (the browser test compares them with the report's figures).
  function readBack(box, data) {
    const first = data[1] || [];
    box.dataset.points = String(first.filter((v) => v != null).length);
    box.dataset.sum = String(first.reduce((a, v) => a + (v == null ? 0 : v), 0));
  }

  // The run's server samples, on their own time axis.
  function serverChart(container, runs) {
    const tables = [];
    const series = [{ label: 's' }];
    runs.forEach((run, ri) => {
      if (!run.server.t.length) return;
      tables.push([run.server.t, run.server.cpu, run.server.memory_mib]);
      series.push({ label: runs.length > 1 ? `${run.name}: CPU %` : 'server CPU %', stroke: colour(2 * ri), width: 1.5, spanGaps: true });
      series.push({ label: runs.length > 1 ? `${run.name}: memory MiB` : 'used memory MiB', stroke: colour(2 * ri + 1), width: 1.5, scale: 'mib', spanGaps: true });
    });
    const plugins = runs.length === 1 ? [marks(runs[0].phases, runs[0].events)] : [];
    return plot(container, 'Server', tables, {
      title: 'Server',
      height: 220,
      series,
      scales: { x: { time: false }, mib: {} },
      axes: [{ label: 'seconds' }, { label: 'CPU %', size: 60 }, { side: 1, scale: 'mib', label: 'MiB', grid: { show: false }, size: 60 }],
      plugins,
    });
  }

  // Percentiles on HdrHistogram's axis: x = -log10(1 - p), labelled 50%, 90%, 99%, ...
  function spectrumChart(container, runs, which) {
    const tables = [];
    const series = [{ label: 'percentile' }];
    let k = 0;
    runs.forEach((run) => {
      for (const s of run.spectra) {
        if (!which(run, s)) continue;
        tables.push([s.nines, s.ms]);
        const name = (runs.length > 1 ? run.name + ': ' : '') + (run.phases.length > 1 ? s.phase + ' ' : '') + s.command;
        series.push({ label: name, stroke: colour(k++), width: 1.5, spanGaps: true, value: (_u, v) => (v == null ? '–' : num(v, 3) + ' ms') });
      }
    });
    const nines = (_u, splits) => splits.map((x) => {
      const p = 100 * (1 - Math.pow(10, -x));
      return p >= 99 ? p.toFixed(Math.max(0, Math.round(x) - 2)) + '%' : Math.round(p) + '%';
    });
    // Rows must be in order of x for uPlot: join sorts them.
    return plot(container, 'Latency by percentile', tables, {
      title: 'Latency by percentile (drag to zoom, double-click to reset)',
      height: 320,
      series,
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [
        { label: 'percentile', values: nines, splits: (_u, _ai, min, max) => { const out = []; for (let i = Math.ceil(min); i <= max; i++) out.push(i); return out.length > 1 ? out : [min, max]; } },
        { label: 'ms', size: 70 },
      ],
    });
  }

  function verdict(page, runs) {
    const s = section('Verdict', 'verdict');
    for (const run of runs) {
      const v = run.validity || { trusted: true, checks: [] };
      const ok = run.passed && v.trusted && !run.interrupted && !run.error;
      const box = el('div', { class: 'verdict ' + (ok ? 'good' : 'bad') });
      const head = [];
      if (runs.length > 1) head.push(run.name + ': ');
      head.push(run.passed ? 'passed' : 'failed');
      head.push(v.trusted ? ', measurements trusted' : ', measurements NOT trusted');
      if (run.interrupted) head.push(', interrupted');
      box.append(el('strong', null, head.join('')));
      if (run.error) box.append(el('p', null, 'Error: ' + run.error));
      if (run.stopped_by) box.append(el('p', null, 'Stopped by: ' + run.stopped_by));
      const failed = (v.checks || []).filter((c) => !c.passed);
      if (failed.length) {
        box.append(el('p', null, 'Why not trusted:'));
        box.append(table(['phase', 'check', 'value', 'limit', 'detail'], failed.map((c) => [c.phase, c.check, num(c.value), num(c.limit), c.detail])));
      }
      if (run.thresholds && run.thresholds.length) {
        box.append(el('p', null, 'Thresholds:'));
        box.append(table(['threshold', 'figure', 'limit', 'verdict'], run.thresholds.map((t) => [t.name || t.metric || '', num(t.value), num(t.limit), t.passed ? 'held' : 'FAILED'])));
      }
      const kinds = Object.entries(run.totals.errors_by_kind || {});
      box.append(el('p', null, `${num(run.totals.ops)} requests, ${num(run.totals.ops_per_sec, 1)} ops/s, ${num(run.totals.errors)} errors` + (kinds.length ? ': ' + kinds.map(([k, n]) => `${k} ${num(n)}`).join(', ') : '')));
      s.append(box);
    }
    page.append(s);
  }

  function comparison(page, c) {
    if (!c) return;
    const s = section('Comparison', 'comparison');
    s.append(el('p', null, `Baseline: ${c.labels[0]}. A change is marked worse beyond the noise rule of respload compare.` + (c.passed ? '' : ' Failures: ' + c.failures.join('; '))));
    const headers = ['phase', 'command', 'metric', ...c.labels];
    const rows = c.rows.map((r) => [r.phase, r.command, r.metric, ...r.values.map((v, i) => {
      if (i === 0) return num(v);
      const ch = r.changes[i];
      const text = num(v) + (ch == null ? '' : ` (${ch >= 0 ? '+' : ''}${(100 * ch).toFixed(1)}%)`);
      return r.worse[i] ? el('span', { class: 'worse' }, text + ' worse') : text;
    })]);
    s.append(table(headers, rows, 'compare'));
    page.append(s);
  }

  function commands(page, runs) {
    const s = section('Commands', 'commands');
    const headers = ['command', 'ops', 'ops/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'errors', 'hits', 'misses'];
    for (const run of runs) {
      if (runs.length > 1) s.append(el('h3', null, run.name));
      const rows = [...run.commands, run.totals].map((c) => [c.label, num(c.ops), num(c.ops_per_sec, 1), num(c.p50), num(c.p99), num(c.p99_9), num(c.max), num(c.errors), num(c.hits), num(c.misses)]);
      s.append(table(headers, rows));
    }
    page.append(s);
  }

  // A merged report's hosts side by side: one line per host, on its own seconds.
  function hostChart(container, run, key, title, log) {
    const hosts = run.hosts.filter((h) => h.timeline && h.timeline.t.length);
    if (hosts.length < 2) return null;
    const clean = (vs) => (log ? vs.map((v) => (v > 0 ? v : null)) : vs);
    const tables = hosts.map((h) => [h.timeline.t, clean(h.timeline[key])]);
    const series = [{ label: 's' }, ...hosts.map((h, i) => ({ label: h.name, stroke: colour(i), width: 1.5, spanGaps: true }))];
    return plot(container, title, tables, {
      title,
      height: 220,
      series,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: [{ label: 'seconds' }, { label: log ? 'ms' : 'ops/s', size: 70 }],
    });
  }

  function hosts(page, runs) {
    const any = runs.some((r) => r.hosts.length);
    if (!any) return;
    const s = section('Hosts', 'hosts');
    for (const run of runs) {
      hostChart(s, run, 'ops_per_sec', 'Throughput by host (ops/s)', false);
      hostChart(s, run, 'p99', 'p99 by host (ms, log scale)', true);
    }
    for (const run of runs) {
      if (!run.hosts.length) continue;
      if (runs.length > 1) s.append(el('h3', null, run.name));
      s.append(table(['host', 'shard', 'ops', 'errors', 'start skew ms', 'client CPU s per million', 'interrupted', 'error'],
        run.hosts.map((h) => [h.name, h.shard, num(h.ops), num(h.errors), num(h.start_skew_ms), num(h.cpu_s_per_million), h.interrupted ? 'yes' : 'no', h.error])));
    }
    page.append(s);
  }

  function workload(page, runs) {
    const s = section('Workload', 'workload');
    for (const run of runs) {
      const d = el('details', runs.length === 1 ? { open: '' } : null);
      d.append(el('summary', null, (runs.length > 1 ? run.name + ': ' : '') + `respload ${run.version}, ${run.server_facts.address || 'server'} (${run.server_facts.version || '?'} ${run.server_facts.mode || ''}), client ${run.client.threads} threads, ${run.client.connections} connections (${run.client.io || 'epoll'}), ${num(run.client.cpu_s_per_million)} CPU s per million requests`));
      d.append(el('pre', null, JSON.stringify(run.workload, null, 2)));
      s.append(d);
    }
    page.append(s);
  }

  function timelineCharts(tl, runs) {
    const col = (run, key, label, extra) => Object.assign({ values: run.timeline[key], label }, extra || {});
    timeChart(tl, 'Throughput (ops/s)', runs, (r) => [col(r, 'ops_per_sec', 'ops/s'), col(r, 'target_rate', 'target rate', { dash: [6, 3] })], { y: 'ops/s' });
    timeChart(tl, 'Latency (ms, log scale)', runs, (r) => [
      col(r, 'p50', 'p50'), col(r, 'p99', 'p99'), col(r, 'max', 'max'),
      col(r, 'service_p99', 'service p99', { dash: [2, 2] }), col(r, 'send_lag_p99', 'send lag p99', { dash: [6, 3] }),
    ], { y: 'ms', log: true });
    timeChart(tl, 'Errors and connections', runs, (r) => [col(r, 'errors', 'errors'), col(r, 'connections', 'connections', { scale: 'y2' })], { y: 'errors', y2: 'connections' });
  }

  function draw(data) {
    const runs = data.runs.map((r, i) => Object.assign(r, { name: r.label || (data.runs.length > 1 ? (i === 0 ? 'baseline' : 'run ' + i) : '') }));
    const page = document.getElementById('page');
    page.textContent = '';
    verdict(page, runs);
    comparison(page, data.comparison);

    const tl = section('Timeline', 'timeline');
    page.append(tl);
    timelineCharts(tl, runs);
    serverChart(tl, runs);

    const sp = section('Latency percentiles', 'spectrum');
    page.append(sp);
    if (runs.length === 1) {
      spectrumChart(sp, runs, () => true);
    } else {
      spectrumChart(sp, runs, (_run, s) => s.command === 'all');
    }
    commands(page, runs);
    hosts(page, runs);
    workload(page, runs);
    body.dataset.charts = String(document.querySelectorAll('.uplot').length);
    // uPlot paints on its next tick: look at the canvases after that.
    setTimeout(() => {
      body.dataset.blankCharts = String(blankCharts());
      if (body.dataset.rendered !== 'error') body.dataset.rendered = 'ok';
    }, 100);
  }

  // Charts whose canvas holds fewer than 3 colours: drawn blank (what a browser test reads).
  function blankCharts() {
    let blank = 0;
    for (const c of document.querySelectorAll('.uplot canvas')) {
      const ctx = c.getContext('2d');
      if (!ctx || !c.width || !c.height) { blank += 1; continue; }
      const px = ctx.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < px.length && seen.size < 3; i += 4 * 97) seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2] | (px[i + 3] << 24));
      if (seen.size < 3) blank += 1;
    }
    return blank;
  }

  // The dashboard's page: rows streamed from `events` each second, the charts redrawn with
  // each, then the final report drawn in full.
  function live(data) {
    const run = Object.assign(data.runs[0], { name: '' });
    const keys = ['t', 'ops_per_sec', 'target_rate', 'p50', 'p99', 'max', 'service_p99', 'send_lag_p99', 'errors', 'connections', 'server_cpu'];
    run.timeline = Object.fromEntries(keys.map((k) => [k, []]));
    run.phases = [];
    run.events = [];
    const page = document.getElementById('page');
    page.textContent = '';
    const status = el('div', { class: 'verdict' }, el('strong', null, 'Running'), el('p', null, 'Waiting for the first second of figures…'));
    page.append(status);
    const tl = section('Timeline', 'timeline');
    page.append(tl);
    workload(page, [run]);
    let rows = 0;
    const es = new EventSource('events');
    es.onmessage = (e) => {
      const row = JSON.parse(e.data);
      for (const k of keys) run.timeline[k].push(row[k]);
      const last = run.phases[run.phases.length - 1];
      if (last && last.name === row.phase) last.end = row.t;
      else run.phases.push({ name: row.phase, start: Math.max(0, row.t - 1), end: row.t });
      rows += 1;
      status.lastChild.textContent = `${row.phase}: ${rows} s, ${num(row.ops_per_sec, 1)} ops/s, p99 ${num(row.p99)} ms, ${num(row.errors)} errors in the last second`;
      tl.replaceChildren(tl.firstChild);
      timelineCharts(tl, [run]);
      body.dataset.liveRows = String(rows);
      body.dataset.charts = String(document.querySelectorAll('.uplot').length);
    };
    es.addEventListener('report', (e) => {
      es.close();
      body.dataset.final = 'done';
      draw(JSON.parse(e.data));
    });
    es.onerror = () => {
      if (body.dataset.final) return;
      es.close();
      status.lastChild.textContent = 'The run\'s dashboard closed before its report came: the figures above are the last received.';
    };
    body.dataset.rendered = 'ok';
  }

  try {
    const data = JSON.parse(document.getElementById('respload-data').textContent);
    if (data.live) live(data);
    else draw(data);
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
