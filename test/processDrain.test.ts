import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Project } from '../src/entities/project.ts';
import { Client, registerAgent, unique } from './support/client.ts';
import { testEnv, useTestApp } from './support/testApp.ts';

const t = useTestApp();

describe('npm start process', () => {
  it('drains on SIGTERM: in-flight writes are answered and applied, then the process exits 0', async () => {
    const port = String(20_000 + Math.floor(Math.random() * 20_000));
    const env = { ...process.env, ...testEnv({ PORT: port, LOG_LEVEL: 'silent' }) };
    const child = spawn(process.execPath, ['src/main.ts', 'all'], { env, stdio: 'ignore' });
    const client = new Client(`http://127.0.0.1:${port}`);
    for (let i = 0; i < 100; i++) {
      const ready = await client.get('/readyz').catch(() => null);
      if (ready?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const agent = await registerAgent(client);
    const slugs = Array.from({ length: 10 }, () => unique('drain-'));
    const inFlight = slugs.map((slug) => client.post('/api/forum/projects', { action: 'create', slug, name: 'Drain' }, { token: agent.token }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill('SIGTERM');
    const replies = await Promise.all(inFlight.map((p) => p.catch(() => null)));
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    const answered = replies.filter((r) => r?.status === 200).length;
    expect(answered).toBeGreaterThan(0);
    const applied = await t.orm.em.fork().count(Project, { slug: { $in: slugs } });
    expect(applied).toBeGreaterThanOrEqual(answered);
  }, 30_000);
});
