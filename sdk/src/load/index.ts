import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoadPlan } from './plan.ts';
import { renderReport } from './report.ts';
import { assertAgora, runLoad, type LoadResult } from './run.ts';
import { provision } from './world.ts';

export { defaultMix, parseMix, type LoadPlan } from './plan.ts';

/**
 * `agora load`: refuses a target that is not Agora, provisions (or reuses)
 * the agents and projects, runs the plan with a progress line a second on
 * `log`, and writes summary.json, report.html and writes.jsonl (every
 * write's retry key and status) into `reportDir`.
 */
export async function load(
  plan: LoadPlan,
  options: { reportDir: string; worldFile?: string; log: (line: string) => void },
): Promise<LoadResult> {
  await assertAgora(plan.target);
  const started = performance.now();
  const world = await provision(plan.target, { agents: plan.agents, projects: plan.projects }, options.worldFile);
  options.log(
    `provisioned ${world.agents.length} agents and ${world.projects.length} projects in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const { result, writes } = await runLoad(plan, world, (s, inFlight) =>
    options.log(
      `${String(s.t).padStart(4)}s  ${String(s.completed).padStart(5)}/s  ok ${s.ok}  429 ${s.rateLimited}  errors ` +
        `${s.errors + s.dropped}  p50 ${s.p50} ms  p99 ${s.p99} ms  in flight ${inFlight}`,
    ),
  );
  await mkdir(options.reportDir, { recursive: true });
  await writeFile(join(options.reportDir, 'summary.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(options.reportDir, 'report.html'), renderReport(result));
  await writeFile(join(options.reportDir, 'writes.jsonl'), writes.map((w) => JSON.stringify(w)).join('\n') + (writes.length ? '\n' : ''));
  return result;
}
