import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAgent, unique } from './support/client.ts';
import { answersHealthz, isAlive, startServiceProcess, type ServiceProcess } from './support/serviceProcess.ts';
import { until } from './support/until.ts';

let service: ServiceProcess;
beforeAll(async () => {
  service = await startServiceProcess('src/bin/supervise.ts', [], { LOG_LEVEL: 'info' });
});
afterAll(async () => {
  await service.stop();
});

interface LogLine {
  msg?: string;
  pid?: number;
  role?: string;
  rolePid?: number;
  code?: number | null;
  signal?: string | null;
  restarts?: number;
  delayMs?: number;
}

function lines(): LogLine[] {
  return service.output.flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

function runningPid(role: string): number | undefined {
  return lines()
    .filter((line) => line.msg === 'role started' && line.role === role)
    .at(-1)?.rolePid;
}

async function killAndAwaitRestart(role: string): Promise<LogLine> {
  const pid = runningPid(role);
  expect(pid).toEqual(expect.any(Number));
  process.kill(pid as number, 'SIGKILL');
  await until(() => runningPid(role) !== pid, 15_000, `the ${role} role to be started again`);
  const restart = lines().find((line) => line.msg === 'role exited; restarting' && line.rolePid === pid);
  expect(restart).toMatchObject({ role, signal: 'SIGKILL', delayMs: expect.any(Number), restarts: expect.any(Number) });
  return restart as LogLine;
}

describe('npm start under the supervisor', () => {
  it('restarts a killed API process, logs the restart once, and answers again', async () => {
    await killAndAwaitRestart('api');
    await until(() => answersHealthz(service.client), 30_000, 'the restarted API to answer');
    expect(lines().filter((line) => line.msg === 'role exited; restarting' && line.role === 'api')).toHaveLength(1);
  });

  it('restarts a killed worker process, and a write sent afterwards is applied and answered', async () => {
    await killAndAwaitRestart('worker');
    const agent = await registerAgent(service.client);
    const slug = unique('sup-');
    const created = await service.client.post(
      '/api/forum/projects',
      { action: 'create', slug, name: 'After a worker crash' },
      { token: agent.token },
    );
    expect(created.status).toBe(200);
    expect(created.body.project.slug).toBe(slug);
  });

  it('drains every role on SIGTERM, each role exits 0, and the supervisor exits 0 without restarting any', async () => {
    const roles = ['api', 'worker'].map((role) => ({ role, rolePid: runningPid(role) as number }));
    // A role drains once it has started (it installs its SIGTERM handler then); one restarted above may still be starting.
    const started = (rolePid: number) => lines().some((line) => line.msg === 'started' && line.pid === rolePid);
    await until(() => roles.every(({ rolePid }) => started(rolePid)), 30_000, 'every role to have started');
    const restartsBefore = lines().filter((line) => line.msg === 'role exited; restarting').length;
    expect(await service.stop()).toBe(0);
    expect(roles.map(({ rolePid }) => rolePid).filter(isAlive)).toEqual([]);
    for (const { role, rolePid } of roles) {
      // The role's own line (its logger's pid), then the supervisor's line with the role's exit status.
      expect(lines().filter((line) => line.msg === 'draining' && line.pid === rolePid)).toEqual([
        expect.objectContaining({ signal: 'SIGTERM' }),
      ]);
      expect(lines().filter((line) => line.msg === 'role exited' && line.rolePid === rolePid)).toEqual([
        expect.objectContaining({ role, code: 0, signal: null }),
      ]);
    }
    expect(lines().filter((line) => line.msg === 'role exited; restarting')).toHaveLength(restartsBefore);
    expect(lines().find((line) => line.msg === 'every role has exited')).toMatchObject({ code: 0 });
  }, 60_000);
});
