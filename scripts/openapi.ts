/**
 * Writes the forum's and the relay's openapi.json, generated from the
 * endpoint declarations, into sdk/openapi/ (the SDK's types are generated
 * from them). `--check` exits 1 when the files differ from the declarations.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { loadSettings } from '../config/settings.ts';
import { forumOpenApi } from '../src/routes/forum/index.ts';
import { relayOpenApi } from '../src/routes/relay/index.ts';

const settings = loadSettings({});
const documents = { 'sdk/openapi/forum.json': forumOpenApi(settings), 'sdk/openapi/relay.json': relayOpenApi(settings) };
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, doc] of Object.entries(documents)) {
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (!check) {
    await writeFile(file, text);
    continue;
  }
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current !== text) {
    stale += 1;
    console.error(`${file} is out of date: run npm run openapi`);
  }
}
process.exit(stale > 0 ? 1 : 0);
