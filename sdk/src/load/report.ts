import type { LoadResult } from './run.ts';
import type { Second } from './recorder.ts';

/**
 * The run as a page a person reads: throughput and latency percentiles over
 * time as SVG line plots (no script, so it renders anywhere, headless
 * Chromium included), and the percentile table per operation.
 */
interface Series {
  name: string;
  color: string;
  values: number[];
}

const HEADERS = ['operation', 'count', 'ok', '429', 'errors', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms'];
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function plot(title: string, unit: string, seconds: Second[], series: Series[]): string {
  const width = 860;
  const height = 240;
  const left = 56;
  const bottom = 28;
  const top = 12;
  const max = Math.max(1, ...series.flatMap((s) => s.values)) * 1.1;
  const span = Math.max(1, seconds.length - 1);
  const x = (i: number) => left + ((width - left - 12) * i) / span;
  const y = (v: number) => top + (height - top - bottom) * (1 - v / max);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => max * f);
  const grid = ticks
    .map(
      (v) =>
        `<line x1="${left}" x2="${width - 12}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e3e3"/>` +
        `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 100 ? Math.round(v) : v.toFixed(1)}</text>`,
    )
    .join('');
  const xTicks = seconds
    .filter((_, i) => i % Math.max(1, Math.ceil(seconds.length / 10)) === 0)
    .map((s) => `<text x="${x(seconds.indexOf(s))}" y="${height - 8}" text-anchor="middle">${s.t}s</text>`)
    .join('');
  // The first series is drawn wide and pale underneath, so a line that coincides with it (ok = completed,
  // p99 = max) stays visible.
  const points = (values: number[]) => values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const lines = series
    .map(
      (s, n) =>
        `<polyline fill="none" stroke="${s.color}" stroke-width="${n === 0 ? 6 : 2}" stroke-opacity="${n === 0 ? 0.35 : 1}" ` +
        `points="${points(s.values)}"/>`,
    )
    .join('');
  const legend = series.map((s) => `<span><i style="background:${s.color}"></i>${escapeHtml(s.name)}</span>`).join('');
  return (
    `<figure><figcaption>${escapeHtml(title)} <small>(${escapeHtml(unit)})</small></figcaption>` +
    `<div class="legend">${legend}</div>` +
    `<svg viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">${grid}${xTicks}${lines}</svg></figure>`
  );
}

export function renderReport(result: LoadResult): string {
  const t = result.timeline;
  const rows = Object.entries(result.operations)
    .map(
      ([op, s]) =>
        `<tr>${[op, s.count, s.ok, s.rateLimited, s.errors, s.p50, s.p90, s.p99, s.p999, s.max].map((cell) => `<td>${cell}</td>`).join('')}</tr>`,
    )
    .join('');
  const r = result.responseTime;
  const p = result.plan;
  return `<!doctype html><html><head><meta charset="utf-8"><title>agora load: ${escapeHtml(p.target)}</title><style>
body{font:14px system-ui,sans-serif;margin:24px;color:#222;max-width:900px}h1{font-size:20px;margin:0 0 4px}p{margin:4px 0}
figure{margin:18px 0}figcaption{font-weight:600}svg text{font-size:11px;fill:#555}.legend span{margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #e3e3e3;text-align:right}
td:first-child,th:first-child{text-align:left}
.figures b{font-size:16px}</style></head><body>
<h1>agora load: ${escapeHtml(p.target)}</h1>
<p>${escapeHtml(result.startedAt)}; ${p.rate}/s for ${p.durationSeconds} s (open model), ${p.agents} agents, ${p.projects} projects,
hot share ${p.hot}, ${p.streams} stream subscribers; mix ${escapeHtml(
    Object.entries(p.mix)
      .filter(([, w]) => w > 0)
      .map(([op, w]) => `${op}=${w}`)
      .join(', '),
  )}</p>
<p class="figures">${result.totals.arrivals} arrivals: <b>${result.totals.ok}</b> ok, <b>${result.totals.rateLimited}</b> rate limited,
<b>${result.totals.errors}</b> errors, <b>${result.totals.dropped}</b> dropped, ${result.totals.paced} paced (every agent tried was
waiting out its rate limit); response time p50 <b>${r.p50} ms</b>, p99 <b>${r.p99} ms</b>, max ${r.max} ms (from each request's
scheduled start); stream events received: ${result.streams.eventsReceived}</p>
${plot('Throughput per second', 'requests', t, [
  { name: 'completed', color: '#1f77b4', values: t.map((s) => s.completed) },
  { name: 'ok', color: '#2ca02c', values: t.map((s) => s.ok) },
  { name: 'rate limited', color: '#ff7f0e', values: t.map((s) => s.rateLimited) },
  { name: 'errors + dropped', color: '#d62728', values: t.map((s) => s.errors + s.dropped) },
])}
${plot('Response time per second, corrected for coordinated omission', 'ms', t, [
  { name: 'max', color: '#d62728', values: t.map((s) => s.max) },
  { name: 'p50', color: '#2ca02c', values: t.map((s) => s.p50) },
  { name: 'p99', color: '#ff7f0e', values: t.map((s) => s.p99) },
])}
<table><thead><tr>${HEADERS.map((header) => `<th>${header}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>
</body></html>
`;
}
