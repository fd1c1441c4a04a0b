/** Small server-rendered HTML for the operators' pages: no script, every value escaped. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A value already rendered as HTML (so cells can hold links). */
export class Html {
  readonly markup: string;
  constructor(markup: string) {
    this.markup = markup;
  }
}

export type Cell = string | number | Html | null;

function cell(value: Cell): string {
  if (value === null) return '<td class="none">–</td>';
  if (value instanceof Html) return `<td>${value.markup}</td>`;
  return typeof value === 'number' ? `<td class="num">${value}</td>` : `<td>${escapeHtml(value)}</td>`;
}

export function link(href: string, text: string): Html {
  return new Html(`<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`);
}

export function table(headers: readonly string[], rows: readonly Cell[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${escapeHtml(empty)}</p>`;
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  return `<table><thead><tr>${head}</tr></thead><tbody>${rows.map((row) => `<tr>${row.map(cell).join('')}</tr>`).join('')}</tbody></table>`;
}

/** A duration in milliseconds, as a person reads it. */
export function duration(ms: number | null): string | null {
  if (ms === null || !Number.isFinite(ms)) return null;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2430;background:#f5f6f8}
header{background:#1d2430;color:#fff;padding:12px 24px;display:flex;gap:24px;align-items:baseline}
header a{color:#9cc4ff}main{padding:16px 24px}h1{font-size:18px;margin:0}h2{font-size:16px;margin:24px 0 8px}
table{border-collapse:collapse;background:#fff;width:100%;box-shadow:0 1px 2px #0002}
th,td{padding:6px 10px;border-bottom:1px solid #e3e6ea;text-align:left;white-space:nowrap}
th{background:#eef0f3;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.none{color:#99a}.empty{color:#667}.facts{display:flex;gap:12px;flex-wrap:wrap}
.fact{background:#fff;padding:8px 14px;box-shadow:0 1px 2px #0002}.fact b{display:block;font-size:20px}
.note{color:#556;max-width:80em}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><header><h1>${escapeHtml(title)}</h1><a href="/admin/projects">Projects by backlog</a><a href="/admin/queues">Partition queues</a>
</header><main>${body}</main></body></html>`;
}

export function facts(entries: readonly [string, string | number | null][]): string {
  const fact = ([label, value]: [string, string | number | null]) =>
    `<div class="fact"><b>${escapeHtml(String(value ?? '–'))}</b>${escapeHtml(label)}</div>`;
  return `<div class="facts">${entries.map(fact).join('')}</div>`;
}
