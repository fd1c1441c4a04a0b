import { describe, expect, it } from 'vitest';
import { createPost, newTopic, type TestTopic } from '../support/forum.ts';
import { sample, scrapeMetrics } from '../support/metrics.ts';
import { queuesIdle } from '../support/queues.ts';
import { until } from '../support/until.ts';
import { failCommandOf, holdProjects } from '../support/stuckProjects.ts';
import { useTestApp } from '../support/testApp.ts';

// Two projects named; posts to a held project wait in the queue (their requests wait for the release, within COMMAND_TIMEOUT_MS).
const t = useTestApp({ OPERATOR_TOKEN: 'operator-token-for-tests-0123456789', METRICS_TOP_PROJECTS: '2', COMMAND_TIMEOUT_MS: '60000' });

const postTo = (topic: TestTopic) =>
  t.client.post(
    '/api/forum/posts',
    { action: 'create', projectSlug: topic.projectSlug, topicSlug: topic.topicSlug, body: 'queued' },
    { token: topic.owner.token },
  );
const project = (slug: string) => `project="${slug}"`;
const OTHER = project('(other)');
/** Whether a scrape has a backlog series for the project (its latency series may be there anyway). */
const namedInBacklog = (scrape: string, slug: string) => scrape.includes(`agora_project_commands_waiting{${project(slug)}}`);

describe('per-project metrics', () => {
  it('names the two projects with most commands waiting, sums the third as (other), and clears them once applied', async () => {
    const [a, b, c] = [await newTopic(t.client), await newTopic(t.client), await newTopic(t.client)] as [TestTopic, TestTopic, TestTopic];
    const release = await holdProjects(t, [a.projectSlug, b.projectSlug, c.projectSlug]);
    const posted = Date.now();
    const replies = Promise.all([postTo(a), postTo(a), postTo(a), postTo(b), postTo(b), postTo(c)]);
    try {
      const waiting = (scrape: string, labels: string) => sample(scrape, 'agora_project_commands_waiting', labels);
      let held = '';
      await until(
        async () =>
          waiting((held = await scrapeMetrics(t)), project(a.projectSlug)) +
            waiting(held, project(b.projectSlug)) +
            waiting(held, OTHER) ===
          6,
        30_000,
        'six commands waiting',
      );
      expect(waiting(held, project(a.projectSlug))).toBe(3);
      expect(waiting(held, project(b.projectSlug))).toBe(2);
      expect(namedInBacklog(held, c.projectSlug)).toBe(false);
      expect(waiting(held, OTHER)).toBe(1);
      // The ages grow while the commands wait, and never exceed the time since the posts were sent.
      const age = (scrape: string, labels: string) => sample(scrape, 'agora_project_oldest_command_age_seconds', labels);
      let aged = '';
      await until(
        async () => Math.min(age((aged = await scrapeMetrics(t)), project(a.projectSlug)), age(aged, OTHER)) >= 1,
        30_000,
        'the oldest commands to be a second old',
      );
      const sincePosted = (Date.now() - posted) / 1000;
      for (const labels of [project(a.projectSlug), OTHER]) expect(age(aged, labels), labels).toBeLessThanOrEqual(sincePosted);
    } finally {
      await release();
    }
    expect((await replies).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await until(() => queuesIdle(t.redis, t.settings), 20_000, 'the held commands to be applied');
    const applied = await scrapeMetrics(t);
    expect(namedInBacklog(applied, a.projectSlug)).toBe(false);
    expect(sample(applied, 'agora_project_commands_waiting', OTHER)).toBe(0);
    expect(sample(applied, 'agora_project_oldest_command_age_seconds', OTHER)).toBe(0);
  }, 120_000);

  it('counts the commands of a job that failed on every attempt against its project', async () => {
    const topic = await newTopic(t.client);
    await failCommandOf(t, topic.projectSlug, 'crashing-command-1');
    expect(sample(await scrapeMetrics(t), 'agora_project_failed_commands', project(topic.projectSlug))).toBe(1);
  }, 60_000);

  it('gives the two projects with most answered commands since the last scrape latency series of their own, and the rest (other)', async () => {
    const [d, e, f] = [await newTopic(t.client), await newTopic(t.client), await newTopic(t.client)] as [TestTopic, TestTopic, TestTopic];
    await scrapeMetrics(t);
    for (const topic of [d, d, d, e, e, f]) await createPost(t.client, topic.owner, topic);
    const ranked = await scrapeMetrics(t);
    for (const topic of [d, d, e, e, f]) await createPost(t.client, topic.owner, topic);
    const after = await scrapeMetrics(t);
    const count = (scrape: string, labels: string) => sample(scrape, 'agora_project_apply_latency_seconds_count', labels);
    expect(count(after, project(d.projectSlug)) - count(ranked, project(d.projectSlug))).toBe(2);
    expect(count(after, project(e.projectSlug)) - count(ranked, project(e.projectSlug))).toBe(2);
    expect(after).not.toContain(project(f.projectSlug));
    expect(count(after, OTHER) - count(ranked, OTHER)).toBe(1);
    expect(sample(after, 'agora_project_apply_latency_seconds_bucket', `${project(d.projectSlug)},le="+Inf"`)).toBe(
      count(after, project(d.projectSlug)),
    );
  }, 60_000);
});
