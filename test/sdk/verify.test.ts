import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agora, generateKeys, type LedgerExport } from '../../sdk/src/index.ts';
import { unique } from '../support/client.ts';
import { startTestApp, type TestApp } from '../support/testApp.ts';

const bin = join(import.meta.dirname, '..', '..', 'sdk', 'bin', 'agora.ts');

let t: TestApp | undefined;
let dir: string;
let exported: string;

function agora(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, '--config', join(dir, 'config.json'), ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/**
 * A project with everything an export holds: events, a profile its author
 * signed, and a witness chain of two checkpoints (so an inclusion proof per
 * checkpoint and a consistency proof between them). It is exported with the
 * CLI, then the service stops: every check below runs with no service at all.
 */
beforeAll(async () => {
  t = await startTestApp();
  const url = t.app.server?.info.uri ?? '';
  dir = await mkdtemp(join(tmpdir(), 'agora-export-'));
  const { agora: witness } = await Agora.register({ baseUrl: url, handle: unique('exp-'), keys: await generateKeys() });
  const project = await witness.createProject({ slug: unique('exp-'), name: 'Exported' });
  const topic = await witness.createTopic({ projectSlug: project.slug, title: 'Ledger' });
  await witness.publishProfile({ displayName: 'Witness', bio: 'signs checkpoints' });
  await witness.post({ projectSlug: project.slug, topicSlug: topic.slug, body: 'first' });
  await witness.publishCheckpoint(project.slug);
  await witness.post({ projectSlug: project.slug, topicSlug: topic.slug, body: 'second' });
  await witness.publishCheckpoint(project.slug);
  exported = join(dir, 'ledger.json');
  const run = await agora('--url', url, 'export', project.slug, '--out', exported);
  if (run.code !== 0) throw new Error(`export failed: ${run.stderr}`);
  await t.stop();
  t = undefined;
}, 60_000);
afterAll(async () => {
  await t?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** One character of a base64 or base64url string, or one digit, changed: one byte of the record differs. */
const flip = (text: string): string => (text[0] === 'A' ? 'B' : 'A') + text.slice(1);

async function verifyTampered(tamper: (file: LedgerExport) => void): Promise<{ code: number; failures: string[] }> {
  const file = JSON.parse(await readFile(exported, 'utf8')) as LedgerExport;
  tamper(file);
  const path = join(dir, `${unique('tampered-')}.json`);
  await writeFile(path, JSON.stringify(file));
  const run = await agora('--json', 'verify', '--offline', path);
  return { code: run.code, failures: (JSON.parse(run.stdout) as { failures: string[] }).failures };
}

describe('agora export and verify --offline', () => {
  it('verifies an untouched export with the service gone: events, checkpoints, chain, proofs, profile and keys all hold', async () => {
    const run = await agora('--json', 'verify', '--offline', exported);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const file = JSON.parse(await readFile(exported, 'utf8')) as LedgerExport;
    expect({
      inclusion: file.proofs.inclusion.length,
      consistency: file.proofs.consistency.length,
      keys: Object.keys(file.keys).length,
    }).toEqual({ inclusion: 2, consistency: 1, keys: 1 });
    // project, topic, two posts, two checkpoint.published events.
    expect(JSON.parse(run.stdout)).toMatchObject({
      failures: [],
      events: 6,
      checkpoints: 2,
      chains: 1,
      profiles: 1,
      tiles: { treeSize: 6, tiles: 1 },
    });
    expect(Object.keys(file.tiles?.tiles ?? {})).toEqual(['0/000.p/6']);
  });

  it('verifies a file exported before the service served tiles, saying the tiles were not checked', async () => {
    const file = JSON.parse(await readFile(exported, 'utf8')) as LedgerExport;
    delete file.tiles;
    const path = join(dir, `${unique('untiled-')}.json`);
    await writeFile(path, JSON.stringify(file));
    const run = await agora('verify', '--offline', path);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.stdout.split('\n').slice(1)).toEqual(['tiles: none in the export (not checked)', 'OK', '']);
  });

  const tampers: [string, (file: LedgerExport) => void, RegExp][] = [
    [
      'an event’s fields',
      (f) => void (f.events[1]!.subjectId = flip(f.events[1]!.subjectId ?? '')),
      /^event \d+: its leafHash differs from the leaf recomputed/,
    ],
    [
      'an event’s leaf index (a gap)',
      (f) => void (f.events[2]!.leafIndex = 3),
      /^event \d+: leafIndex 3, expected 2 \(the leaves are not gapless\)/,
    ],
    [
      'a checkpoint’s signature',
      (f) => void (f.checkpoints[0]!.signature = flip(f.checkpoints[0]!.signature ?? '')),
      /^checkpoint \S+: Ed25519 signature does not verify/,
    ],
    [
      'a checkpoint’s signed payload',
      (f) => void (f.checkpoints[1]!.payload = flip(f.checkpoints[1]!.payload ?? '')),
      /^checkpoint \S+: payload (digest does not match|or envelope is not JSON)/,
    ],
    [
      'an inclusion proof',
      (f) => void (f.proofs.inclusion[1]!.auditPath[0] = flip(f.proofs.inclusion[1]!.auditPath[0]!)),
      /^checkpoint \S+: inclusion proof of event \d+ in its tree fails/,
    ],
    [
      'a consistency proof',
      (f) => void (f.proofs.consistency[0]!.consistencyPath[0] = flip(f.proofs.consistency[0]!.consistencyPath[0]!)),
      /^chain \S+: consistency proof \d+ -> \d+ fails/,
    ],
    [
      'a tile’s leaf hash',
      (f) => void (f.tiles!.tiles['0/000.p/6'] = flip(f.tiles!.tiles['0/000.p/6']!)),
      /^tile 0\/000\.p\/6: entry 0 differs from the leaf recomputed from event \d+$/,
    ],
    [
      'a key',
      (f) => {
        for (const fp of Object.keys(f.keys)) f.keys[fp] = flip(f.keys[fp]!);
      },
      /^key SHA256:\S+: the public key does not hash to its fingerprint/,
    ],
    [
      'an agent’s signed profile',
      (f) => void (f.profiles[0]!.signature = flip(f.profiles[0]!.signature ?? '')),
      /^profile revision \S+: Ed25519 signature does not verify/,
    ],
  ];
  for (const [what, tamper, caught] of tampers) {
    it(`catches one changed byte in ${what}, naming it, and exits 1`, async () => {
      const { code, failures } = await verifyTampered(tamper);
      expect(code).toBe(1);
      expect(failures).toEqual(expect.arrayContaining([expect.stringMatching(caught)]));
    });
  }
});
