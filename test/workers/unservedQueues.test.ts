import { afterAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.ts';
import { Project } from '../../src/entities/project.ts';
import { projectKey } from '../../src/pipeline/batchName.ts';
import { allPartitionQueueNames, MAX_PARTITIONS, partitionOf, partitionQueueName } from '../../src/pipeline/partitions.ts';
import { Client, createProject, registerAgent, unique } from '../support/client.ts';
import { workersOn } from '../support/queues.ts';
import { useTestApp } from '../support/testApp.ts';

// One API and one worker with PARTITIONS=2; a second API, started with 8, fills queues the worker does not serve yet.
const t = useTestApp({ PARTITIONS: '2' });
const wide: RunningApp[] = [];
afterAll(async () => {
  for (const app of wide) await app.stop();
});

describe('the partition queues past a worker process PARTITIONS', () => {
  it('are left unserved while they hold no job', async () => {
    const counts = await Promise.all(allPartitionQueueNames(MAX_PARTITIONS).map((name) => workersOn(t.redis, t.settings, name)));
    expect(counts.slice(0, 2).every((count) => count >= 1)).toBe(true);
    expect(counts.slice(2)).toEqual(new Array(MAX_PARTITIONS - 2).fill(0));
  });

  it('get served once an API with more partitions puts a job there, and its command is answered', async () => {
    const app = await startApp({ ...t.settings, partitions: 8 }, ['api']);
    wide.push(app);
    const client = new Client(app.server?.info.uri ?? '');
    // Registered through the first API, whose two queues are served: only the project's command goes through the second.
    const owner = await registerAgent(t.client);
    let slug = unique('p-');
    while (partitionOf(projectKey(slug), 8) < 2) slug = unique('p-');
    const queue = partitionQueueName(partitionOf(projectKey(slug), 8));
    expect(await workersOn(t.redis, t.settings, queue)).toBe(0);

    expect(await createProject(client, owner, slug)).toBe(slug);
    expect(await workersOn(t.redis, t.settings, queue)).toBeGreaterThanOrEqual(1);
    expect(await t.orm.em.fork().count(Project, { slug })).toBe(1);
  });
});
