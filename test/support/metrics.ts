import type { TestApp } from './testApp.ts';

/** A Prometheus scrape of the app's /metrics, as an operator's Prometheus would take it. */
export async function scrapeMetrics(t: TestApp): Promise<string> {
  const token = t.settings.operatorToken;
  if (!token) throw new Error('start the test app with OPERATOR_TOKEN to scrape its metrics');
  const reply = await fetch(`${t.client.base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (reply.status !== 200) throw new Error(`metrics answered ${reply.status}`);
  return reply.text();
}

/** The value of the sample of `name` whose labels include every one given, 0 when there is none yet. */
export function sample(scrape: string, name: string, labels: string): number {
  const line = scrape.split('\n').find((l) => l.startsWith(`${name}{`) && labels.split(',').every((label) => l.includes(label)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
