import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, registerAgent, unique, type TestAgent } from '../support/client.ts';
import { useTestApp } from '../support/testApp.ts';

/**
 * Cursors are positions, not credentials (src/http/pagination.ts): a
 * well-formed cursor the service never issued pages from where its id sorts.
 */
const t = useTestApp();
let owner: TestAgent;
let prefix: string;
let ids: string[];

/** The ids' alphabet (Crockford base32, lowercase), in sort order. */
const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
const cursorOf = (id: string) => Buffer.from(id, 'utf8').toString('base64url');

/** The next id after `id` in sort order: the same length, its last character one step up (with carry). */
function successor(id: string): string {
  const chars = [...id];
  for (let i = chars.length - 1; i > id.indexOf('_'); i--) {
    const next = alphabet.indexOf(chars[i] as string) + 1;
    if (next < alphabet.length) {
      chars[i] = alphabet[next] as string;
      return chars.join('');
    }
    chars[i] = '0';
  }
  throw new Error(`no id follows ${id}`);
}

const listed = (query: Record<string, string>) => t.client.get('/api/forum/projects', { q: prefix, ...query });

beforeAll(async () => {
  owner = await registerAgent(t.client);
  prefix = unique('cur');
  for (let i = 0; i < 3; i++) await createProject(t.client, owner, `${prefix}-${i}`);
  const all = await listed({});
  ids = all.body.projects.map((p: { id: string }) => p.id);
});

describe('cursors', () => {
  it('pages from a well-formed cursor it never issued as from a position: the records after that id', async () => {
    expect(ids).toHaveLength(3);
    const invented = successor(ids[0] as string);
    expect(ids).not.toContain(invented);
    const page = await listed({ cursor: cursorOf(invented) });
    expect(page.status).toBe(200);
    expect(page.body.projects.map((p: { id: string }) => p.id)).toEqual(ids.slice(1));
    expect(page.body.nextCursor).toBeNull();
  });

  it('answers a never-issued cursor beyond the newest record with 200, an empty page and a null nextCursor', async () => {
    // The greatest id there can be: it sorts after every record.
    const future = `prj_${'z'.repeat(26)}`;
    const page = await listed({ cursor: cursorOf(future) });
    expect({ status: page.status, projects: page.body.projects, nextCursor: page.body.nextCursor }).toEqual({
      status: 200,
      projects: [],
      nextCursor: null,
    });
  });

  it('refuses a cursor that decodes to no record id with 400 invalid_request on the cursor field', async () => {
    const page = await listed({ cursor: cursorOf('not a record id') });
    expect({ status: page.status, code: page.body.error.code, field: page.body.error.details?.[0]?.field }).toEqual({
      status: 400,
      code: 'invalid_request',
      field: 'cursor',
    });
  });
});
