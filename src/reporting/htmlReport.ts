import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './htmlReportScript.js';

/**
 * --html-report: the --report JSON as one self-contained page a person opens in a browser. The page
 * embeds the report as data and draws it with its own script (SVG charts: the rate against the rate in
 * force, throttles and errors, rows done, the hottest keys; tables of the figures, rejects by reason and
 * the plan beside what happened), then checks itself: the timeline's sums against the totals, every
 * chart drawn, every figure shown against the data. The verdict is `document.body.dataset.checks`
 * ('ok', or the failures), so a headless browser can assert it, and it is printed on the page.
 *
 * Nothing is fetched: a Content-Security-Policy allows only this page's own script (by its hash) and
 * inline styles, no fonts, images or connections. Key values and paths come from the data and are set
 * as text by the script, never as markup; the data block escapes '<' so no value can end it.
 */
export function htmlReport(report: object): string {
  const data = JSON.stringify(report).replace(/</g, '\\u003c');
  const scriptHash = createHash('sha256').update(PAGE_SCRIPT).digest('base64');
  const policy = `default-src 'none'; script-src 'sha256-${scriptHash}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="ddb-spread --html-report">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ddb-spread load report</title>
<style>${PAGE_STYLE}</style>
</head>
<body data-checks="pending">
<header><h1>ddb-spread load report</h1><p id="headline"></p><p id="checks" class="checks"></p></header>
<noscript><p>This report draws its charts with its own inline script: allow scripts for this file, or read the same figures in the --report JSON.</p></noscript>
<main>
<section><h2>Figures</h2><table id="figures"></table></section>
<section><h2>Plan beside what happened</h2><table id="plan"></table></section>
<section><h2>Write rate</h2><p class="note">Write units per second, each bucket's planned units (ddb-spread's size model) and charged units (DynamoDB's), against the rate in force.</p><div id="chart-rate" class="chart"></div></section>
<section><h2>Throttles and errors</h2><p class="note">Calls per bucket: throttled calls that slowed the whole load, throttled calls of one partition key, and calls without an answer (5xx, resets, timeouts); all sent again.</p><div id="chart-throttles" class="chart"></div>
<p class="note">Write requests per bucket that DynamoDB refused for throughput (UnprocessedItems, or a call refused whole), sent again.</p><div id="chart-refused" class="chart"></div></section>
<section><h2>Rows done</h2><p class="note">Rows written and rejected since the load began writing.</p><div id="chart-rows" class="chart"></div></section>
<section><h2>Hottest keys</h2><p class="note">The partition keys with the most write units over the load, and the write units per second of the hottest ones as they were written.</p><table id="hot-keys"></table><div id="chart-keys" class="chart"></div></section>
<section><h2>Rejects by reason</h2><table id="rejects"></table></section>
</main>
<script type="application/json" id="report-data">${data}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 auto; max-width: 1000px; padding: 1em 2em; color: #1b1f24; background: #fff; }
h1 { font-size: 1.5em; margin: 0.2em 0; } h2 { font-size: 1.15em; margin: 1.4em 0 0.4em; border-bottom: 1px solid #d0d7de; }
table { border-collapse: collapse; } td, th { padding: 2px 12px 2px 0; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { color: #57606a; margin: 0.2em 0 0.6em; }
.checks { font-weight: 600; } .checks.ok { color: #1a7f37; } .checks.failed { color: #cf222e; }
.chart svg { width: 100%; height: auto; display: block; }
.legend span { margin-right: 1.2em; white-space: nowrap; } .legend i { display: inline-block; width: 12px; height: 3px; vertical-align: middle; margin-right: 4px; }
.empty { color: #57606a; font-style: italic; }
`;
