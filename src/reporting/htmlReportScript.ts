/**
 * The script of the --html-report page (htmlReport.ts), as text: it runs in the browser, not in Node,
 * so it is plain JavaScript kept free of backticks and template holes. It reads the report embedded in
 * the page, draws it (SVG built element by element; every value from the data is set as text, never
 * as markup), then checks the page against the data and sets `document.body.dataset.checks`.
 *
 * Figures are shown with data-figure (a path into the report) and data-value (the number drawn), so a
 * test reads the page's figures back and compares them with the JSON report.
 */
export const PAGE_SCRIPT = String.raw`
'use strict';
(function () {
  var SVG = 'http://www.w3.org/2000/svg';
  var COLORS = { planned: '#0969da', consumed: '#8250df', rate: '#cf222e', table: '#bc4c00', key: '#bf8700', errors: '#6e7781', items: '#cf222e', written: '#1a7f37', rejected: '#cf222e' };
  var KEY_COLORS = ['#0969da', '#bc4c00', '#8250df', '#1a7f37', '#bf8700'];
  var failures = [];
  var report;
  try {
    report = JSON.parse(document.getElementById('report-data').textContent);
  } catch (e) {
    finish(['the embedded report is not JSON: ' + e.message]);
    return;
  }
  var timeline = report.timeline;
  var buckets = timeline ? timeline.buckets : [];

  function el(name, attrs, text) {
    var node = document.createElement(name);
    for (var k in attrs || {}) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function svgEl(name, attrs) {
    var node = document.createElementNS(SVG, name);
    for (var k in attrs || {}) node.setAttribute(k, String(attrs[k]));
    return node;
  }
  function round1(v) { return Math.round(v * 10) / 10; }
  function fmt(v) { return typeof v === 'number' && isFinite(v) ? round1(v).toLocaleString('en-US', { maximumFractionDigits: 1 }) : '-'; }
  function seconds(ms) { return ms / 1000; }
  function fmtSeconds(s) {
    if (!isFinite(s)) return '-';
    if (s < 60) return fmt(s) + ' s';
    var m = Math.floor(s / 60);
    if (m < 60) return m + ' min ' + Math.round(s - m * 60) + ' s';
    return Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }
  function path(obj, dotted) {
    return dotted.split('.').reduce(function (o, k) { return o === undefined || o === null ? undefined : o[k]; }, obj);
  }
  function sum(name) { return buckets.reduce(function (s, b) { return s + b[name]; }, 0); }

  /** A row of a figures table: the figure's path in the report, its value drawn as text. */
  function figureRow(table, label, figure, value, unit, note) {
    var tr = el('tr');
    tr.appendChild(el('th', {}, label));
    var td = el('td', { class: 'num', 'data-figure': figure, 'data-value': String(round1(value)) }, fmt(value));
    tr.appendChild(td);
    tr.appendChild(el('td', {}, unit || ''));
    tr.appendChild(el('td', { class: 'note' }, note || ''));
    table.appendChild(tr);
  }

  // --- headline
  var status = report.error ? 'stopped: ' + report.error.message : report.complete ? 'complete' : 'finished with rejected rows';
  document.getElementById('headline').textContent =
    'Load into ' + report.table + ' from ' + report.input + ', ' + status + '. Started ' + report.startedAt + ', finished ' + report.finishedAt + ' (ddb-spread ' + report.ddbSpreadVersion + ').';

  // --- figures
  var figures = document.getElementById('figures');
  var rate = report.rate || {};
  figureRow(figures, 'Rows read', 'rowsRead', report.rowsRead, 'rows');
  figureRow(figures, 'Written', 'written', report.written, 'rows', report.deleted ? report.deleted + ' of them deleted' : '');
  figureRow(figures, 'Superseded', 'superseded', report.superseded, 'rows', 'same primary key later in the input; the later row was written');
  if (report.conditionFailed) figureRow(figures, 'Condition failed', 'conditionFailed', report.conditionFailed, 'rows', 'the table kept its item (--if-not-exists, --if-newer); not written' + (report.conditionFailuresPath ? '; listed in ' + report.conditionFailuresPath : ''));
  figureRow(figures, 'Rejected', 'rejected', report.rejected, 'rows', report.rejectsPath ? 'reject file ' + report.rejectsPath : '');
  figureRow(figures, 'Not written', 'notWritten', report.notWritten, 'rows', 'read, not known to be stored when the load ended');
  figureRow(figures, 'Write units charged', 'consumedWcu', report.consumedWcu, 'WCU', 'by DynamoDB (ConsumedCapacity)');
  figureRow(figures, 'Write units planned', 'plannedWcu', report.plannedWcu, 'WCU', "by ddb-spread's size model");
  figureRow(figures, 'Elapsed', 'elapsedMs', report.elapsedMs, 'ms', fmtSeconds(seconds(report.elapsedMs)));
  figureRow(figures, 'Average rate', 'rate.averageWcu', rate.averageWcu, 'WCU/s');
  figureRow(figures, 'Best second', 'rate.peakWcu', rate.peakWcu, 'WCU/s');
  figureRow(figures, 'Table throttles', 'rate.tableThrottles', rate.tableThrottles, 'calls', 'slowed the whole load');
  figureRow(figures, 'Key throttles', 'rate.keyThrottles', rate.keyThrottles, 'calls', 'slowed one partition key');
  figureRow(figures, 'Throttled items', 'throttledItems', report.throttledItems, 'requests', 'refused for throughput, sent again');
  figureRow(figures, 'Errors', 'rate.errors', rate.errors, 'calls', 'no answer (5xx, resets, timeouts), sent again');
  figureRow(figures, 'Retries', 'retries', report.retries, 'calls');
  figureRow(figures, 'Rate cuts', 'rate.decreases', rate.decreases, 'times', rate.restores ? rate.restores + ' undone (throttles independent of the rate)' : '');

  // --- plan beside what happened: what the load set out to do (its target, its size model) and what it did
  var plan = document.getElementById('plan');
  var head = el('tr');
  ['', 'planned', 'happened', ''].forEach(function (t, i) { head.appendChild(el('th', { class: i === 1 || i === 2 ? 'num' : '' }, t)); });
  plan.appendChild(head);
  function planRow(label, plannedFigure, planned, happenedFigure, happened, note) {
    var tr = el('tr');
    tr.appendChild(el('th', {}, label));
    tr.appendChild(el('td', plannedFigure ? { class: 'num', 'data-figure': plannedFigure, 'data-value': String(round1(planned)) } : { class: 'num' }, fmt(planned)));
    tr.appendChild(el('td', happenedFigure ? { class: 'num', 'data-figure': happenedFigure, 'data-value': String(round1(happened)) } : { class: 'num' }, fmt(happened)));
    tr.appendChild(el('td', { class: 'note' }, note));
    plan.appendChild(tr);
  }
  var units = report.plannedWcu - (timeline ? timeline.before.plannedWcu : 0);
  planRow('Write units', 'plannedWcu', report.plannedWcu, 'consumedWcu', report.consumedWcu,
    report.plannedWcu > 0 ? 'DynamoDB charged ' + (report.consumedWcu / report.plannedWcu).toFixed(2) + 'x the planned units' : '');
  if (typeof rate.targetWcu === 'number') {
    planRow('Rate (WCU/s)', 'rate.targetWcu', rate.targetWcu, 'rate.averageWcu', rate.averageWcu, rate.reason || '');
    planRow('Duration (s)', null, units / rate.targetWcu, null, seconds(report.elapsedMs), 'the units written at the target rate, against the time the load took');
  } else {
    planRow('Rate (WCU/s)', null, NaN, 'rate.averageWcu', rate.averageWcu, (rate.reason || 'no target') + '; no target, so no planned duration');
  }
  // The estimate's predictions (--compare-estimate), beside what the load did.
  var est = report.estimate;
  if (est) {
    var of = 'estimate of ' + est.input + (est.table ? ' into ' + est.table : '');
    planRow('Estimated duration (s)', 'estimate.seconds', est.seconds, null, seconds(report.elapsedMs), of + ': start-up, reading and writing, as the load measures it');
    planRow('Estimated write units', 'estimate.writeUnits', est.writeUnits, 'plannedWcu', report.plannedWcu, 'every valid row once, table and indexes');
    planRow('Estimated rate (WCU/s)', 'estimate.rateWcu', est.rateWcu, 'rate.averageWcu', rate.averageWcu, 'the rate the estimate worked at, against the average reached');
    planRow('Estimated throttled requests', 'estimate.throttledItems', est.throttledItems, 'throttledItems', report.throttledItems, "the planned order's simulation against the table's partitions");
    planRow('Estimated rejected rows', 'estimate.rejected', est.rejected, 'rejected', report.rejected, 'of ' + est.rows.toLocaleString('en-US') + ' rows in the estimate, ' + report.rowsRead.toLocaleString('en-US') + ' read by the load');
  }
  if (report.bottleneck) {
    planRow('Hottest key (s)', 'bottleneck.keySeconds', report.bottleneck.keySeconds, 'bottleneck.loadSeconds', report.bottleneck.loadSeconds,
      'the bottleneck key at --key-wcu ' + rate.keyWcu + ', against the rest of the load: shard it ' + report.bottleneck.recommendedShards + ' ways');
  }

  // --- charts
  function chart(id, series, opts) {
    var holder = document.getElementById(id);
    var width = 900, height = 220, left = 56, right = 12, top = 10, bottom = 28;
    var drawn = series.filter(function (s) { return s.points.length > 0; });
    var endX = buckets.length ? seconds(buckets[buckets.length - 1].startMs + buckets[buckets.length - 1].ms) : 0;
    var maxY = 0;
    drawn.forEach(function (s) { s.points.forEach(function (p) { if (p[1] > maxY) maxY = p[1]; }); });
    if (!(maxY > 0)) maxY = 1;
    maxY *= 1.08;
    var svg = svgEl('svg', { viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'data-chart': id, 'aria-label': opts.label });
    function x(v) { return left + (endX > 0 ? (v / endX) * (width - left - right) : 0); }
    function y(v) { return height - bottom - (v / maxY) * (height - top - bottom); }
    // Axes and ticks: 0, half and the top on y; the start, middle and end of the load on x.
    svg.appendChild(svgEl('line', { x1: left, y1: height - bottom, x2: width - right, y2: height - bottom, stroke: '#8c959f' }));
    svg.appendChild(svgEl('line', { x1: left, y1: top, x2: left, y2: height - bottom, stroke: '#8c959f' }));
    [0, 0.5, 1].forEach(function (f) {
      var v = (maxY / 1.08) * f;
      var t = svgEl('text', { x: left - 6, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#57606a' });
      t.textContent = fmt(v);
      svg.appendChild(t);
      var tx = svgEl('text', { x: x(endX * f), y: height - 8, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle', 'font-size': 11, fill: '#57606a' });
      tx.textContent = fmtSeconds(endX * f);
      svg.appendChild(tx);
    });
    var marks = 0;
    drawn.forEach(function (s) {
      if (s.kind === 'bars') {
        var n = series.filter(function (o) { return o.kind === 'bars'; });
        var slot = n.indexOf(s);
        s.points.forEach(function (p, i) {
          if (!(p[1] > 0)) return;
          var b = buckets[i];
          var x0 = x(seconds(b.startMs)), x1 = x(seconds(b.startMs + b.ms));
          var w = Math.max(1, (x1 - x0) / n.length - 1);
          var r = svgEl('rect', { class: 'mark', x: x0 + slot * (w + 1), y: y(p[1]), width: w, height: Math.max(1, y(0) - y(p[1])), fill: s.color, 'data-series': s.name });
          var title = svgEl('title');
          title.textContent = s.name + ': ' + fmt(p[1]) + ' at ' + fmtSeconds(seconds(b.startMs));
          r.appendChild(title);
          svg.appendChild(r);
          marks++;
        });
      } else {
        var pts = s.points.map(function (p) { return x(p[0]).toFixed(1) + ',' + y(p[1]).toFixed(1); }).join(' ');
        var line = svgEl('polyline', { class: 'mark', points: pts, fill: 'none', stroke: s.color, 'stroke-width': s.width || 2, 'data-series': s.name });
        if (s.dash) line.setAttribute('stroke-dasharray', s.dash);
        svg.appendChild(line);
        marks++;
      }
    });
    holder.appendChild(svg);
    var legend = el('p', { class: 'legend' });
    series.forEach(function (s) {
      var span = el('span');
      var swatch = el('i');
      swatch.style.background = s.color;
      span.appendChild(swatch);
      span.appendChild(document.createTextNode(s.name + (s.points.length === 0 ? ' (none)' : '')));
      legend.appendChild(span);
    });
    holder.appendChild(legend);
    holder.dataset.marks = String(marks);
    return marks;
  }

  /** A bucket's value per second, drawn at both ends of the bucket: a step line that keeps each bucket's width. */
  function steps(value) {
    var out = [];
    buckets.forEach(function (b) {
      var v = value(b);
      if (v === null || v === undefined) return;
      out.push([seconds(b.startMs), v], [seconds(b.startMs + b.ms), v]);
    });
    return out;
  }
  function nothingIfZero(s) { return s.points.some(function (p) { return p[1] > 0; }) ? s : { name: s.name, kind: s.kind, color: s.color, points: [] }; }
  function perSecond(b, units) { return b.ms > 0 ? (units * 1000) / b.ms : 0; }

  var chartIds = ['chart-rate', 'chart-throttles', 'chart-refused', 'chart-rows', 'chart-keys'];
  if (buckets.length === 0) {
    chartIds.forEach(function (id) { document.getElementById(id).appendChild(el('p', { class: 'empty' }, 'No timeline: the load wrote nothing it could record (it stopped before its first write, or was a dry run).')); });
  } else {
    chart('chart-rate', [
      { name: 'planned WCU/s', kind: 'line', color: COLORS.planned, points: steps(function (b) { return perSecond(b, b.plannedWcu); }) },
      { name: 'charged WCU/s', kind: 'line', color: COLORS.consumed, dash: '4 3', points: steps(function (b) { return perSecond(b, b.consumedWcu); }) },
      { name: 'rate in force', kind: 'line', color: COLORS.rate, width: 1.5, points: steps(function (b) { return b.rateWcu; }) },
    ], { label: 'write units per second against the rate in force' });
    chart('chart-throttles', [
      { name: 'table throttles', kind: 'bars', color: COLORS.table, points: buckets.map(function (b) { return [0, b.tableThrottles]; }) },
      { name: 'key throttles', kind: 'bars', color: COLORS.key, points: buckets.map(function (b) { return [0, b.keyThrottles]; }) },
      { name: 'errors', kind: 'bars', color: COLORS.errors, points: buckets.map(function (b) { return [0, b.errors]; }) },
    ].map(nothingIfZero), { label: 'throttled and failed calls per bucket' });
    // Requests are counted apart from calls: a call refused whole refuses up to 25, and would flatten the calls' bars.
    chart('chart-refused', [
      { name: 'write requests refused for throughput', kind: 'bars', color: COLORS.items, points: buckets.map(function (b) { return [0, b.throttledItems]; }) },
    ].map(nothingIfZero), { label: 'write requests refused per bucket' });
    var done = 0, rejected = 0;
    var rowsWritten = [[0, 0]], rowsRejected = [[0, 0]];
    buckets.forEach(function (b) {
      done += b.written; rejected += b.rejected;
      rowsWritten.push([seconds(b.startMs + b.ms), done]);
      rowsRejected.push([seconds(b.startMs + b.ms), rejected]);
    });
    chart('chart-rows', [
      { name: 'rows written', kind: 'line', color: COLORS.written, points: rowsWritten },
      { name: 'rows rejected', kind: 'line', color: COLORS.rejected, points: rejected > 0 ? rowsRejected : [] },
    ], { label: 'rows done' });
    // The keys hottest over the load's buckets, each a line of its WCU/s where it was among a bucket's top keys.
    var totals = {};
    buckets.forEach(function (b) { b.keys.forEach(function (k) { totals[k.key] = (totals[k.key] || 0) + k.units; }); });
    var hottest = Object.keys(totals).sort(function (a, b) { return totals[b] - totals[a]; }).slice(0, 5);
    chart('chart-keys', hottest.map(function (key, i) {
      return { name: key, kind: 'line', color: KEY_COLORS[i], points: steps(function (b) {
        var k = b.keys.filter(function (e) { return e.key === key; })[0];
        return perSecond(b, k ? k.units : 0);
      }) };
    }), { label: "the hottest keys' write units per second" });
  }

  // --- hot keys over the whole load
  var hot = document.getElementById('hot-keys');
  var hotHead = el('tr');
  ['key', 'write units', 'share'].forEach(function (t, i) { hotHead.appendChild(el('th', { class: i ? 'num' : '' }, t)); });
  hot.appendChild(hotHead);
  (report.hotKeys || []).forEach(function (k, i) {
    var tr = el('tr');
    tr.appendChild(el('td', { 'data-figure': 'hotKeys.' + i + '.key' }, k.key));
    tr.appendChild(el('td', { class: 'num', 'data-figure': 'hotKeys.' + i + '.units', 'data-value': String(round1(k.units)) }, fmt(k.units)));
    tr.appendChild(el('td', { class: 'num' }, (k.share * 100).toFixed(1) + '%'));
    hot.appendChild(tr);
  });
  if (!(report.hotKeys || []).length) hot.appendChild(el('tr', {}, 'no key written'));

  // --- rejects by reason
  var rejects = document.getElementById('rejects');
  var reasons = Object.keys(report.rejectedByReason || {}).sort(function (a, b) { return report.rejectedByReason[b] - report.rejectedByReason[a]; });
  var rejHead = el('tr');
  ['reason', 'rows'].forEach(function (t, i) { rejHead.appendChild(el('th', { class: i ? 'num' : '' }, t)); });
  rejects.appendChild(rejHead);
  reasons.forEach(function (code) {
    var tr = el('tr');
    tr.appendChild(el('td', {}, code));
    tr.appendChild(el('td', { class: 'num', 'data-figure': 'rejectedByReason.' + code, 'data-value': String(report.rejectedByReason[code]) }, fmt(report.rejectedByReason[code])));
    rejects.appendChild(tr);
  });
  if (reasons.length === 0) rejects.appendChild(el('tr', {}, 'no row rejected'));

  // --- the page's own checks
  function expectClose(what, got, want, tolerance) {
    if (!(Math.abs(got - want) <= tolerance)) failures.push(what + ': the timeline sums to ' + got + ', the report says ' + want);
  }
  if (timeline) {
    var slack = 0.05 * buckets.length + 0.5;
    expectClose('rows written', timeline.before.written + sum('written'), report.written, 0);
    expectClose('rows rejected', sum('rejected'), report.rejected, 0);
    expectClose('write units planned', timeline.before.plannedWcu + sum('plannedWcu'), report.plannedWcu, slack);
    expectClose('write units charged', timeline.before.consumedWcu + sum('consumedWcu'), report.consumedWcu, slack);
    expectClose('throttled items', sum('throttledItems'), report.throttledItems, 0);
    expectClose('table throttles', sum('tableThrottles'), rate.tableThrottles || 0, 0);
    expectClose('key throttles', sum('keyThrottles'), rate.keyThrottles || 0, 0);
    expectClose('errors', sum('errors'), rate.errors || 0, 0);
    var at = 0;
    buckets.forEach(function (b, i) {
      if (b.startMs !== at) failures.push('bucket ' + i + ' starts at ' + b.startMs + ' ms, after a gap or an overlap (the one before ended at ' + at + ' ms)');
      at = b.startMs + b.ms;
    });
    var written = report.written - timeline.before.written;
    [['chart-rate', report.plannedWcu - timeline.before.plannedWcu > 0], ['chart-rows', written > 0], ['chart-keys', (report.hotKeys || []).length > 0],
      ['chart-throttles', sum('tableThrottles') + sum('keyThrottles') + sum('errors') > 0], ['chart-refused', sum('throttledItems') > 0]].forEach(function (c) {
      var marks = Number(document.getElementById(c[0]).dataset.marks || 0);
      if (c[1] && marks === 0) failures.push(c[0] + ' has nothing drawn though the report has data for it');
    });
  }
  var byReason = Object.keys(report.rejectedByReason || {}).reduce(function (s, k) { return s + report.rejectedByReason[k]; }, 0);
  if (byReason !== report.rejected) failures.push('rejects by reason add up to ' + byReason + ', the report says ' + report.rejected + ' rejected');
  var accounted = report.written + report.superseded + report.rejected + (report.otherSegments || 0) + report.notWritten;
  var toAccount = report.rowsRead + (report.splitWrites || 0) - (report.skippedByTransform || 0) - (report.skippedExpired || 0) - (report.conditionFailed || 0);
  if (accounted !== toAccount) failures.push('written, superseded, rejected, other segments and not written (besides expired and condition-failed rows) add up to ' + accounted + ', not the ' + toAccount + ' writes of the rows read');
  Array.prototype.forEach.call(document.querySelectorAll('[data-value][data-figure]'), function (node) {
    var want = path(report, node.dataset.figure);
    if (typeof want !== 'number' || round1(want) !== Number(node.dataset.value)) failures.push(node.dataset.figure + ' is shown as ' + node.dataset.value + ', the report says ' + want);
  });
  finish(failures);

  function finish(list) {
    var checks = document.getElementById('checks');
    document.body.dataset.checks = list.length === 0 ? 'ok' : list.join('; ');
    checks.className = 'checks ' + (list.length === 0 ? 'ok' : 'failed');
    checks.textContent = list.length === 0 ? 'Checked: the timeline adds up to the totals, every chart with data is drawn, every figure is the report\'s.' : 'Checks failed: ' + list.join('; ');
  }
})();
`;
