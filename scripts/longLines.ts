/**
 * No line over 160 characters in the code's folders (npm run lint, after Biome: its lineWidth formats code but
 * leaves a long string or comment as it is). Generated files are left out. Files are those git tracks or would
 * track, so what .gitignore keeps out (node_modules, reports) is never read.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const LIMIT = 160;
const FOLDERS = ['src', 'sdk', 'scripts', 'bench', 'workers', 'config', 'test'];
const GENERATED = /^sdk\/(src\/generated|openapi)\//;

const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...FOLDERS], { encoding: 'utf8' });
const files = listed.split('\n').filter((file) => file !== '' && !GENERATED.test(file) && existsSync(file));
const long = files.flatMap((file) => {
  const bytes = readFileSync(file);
  if (bytes.includes(0)) return [];
  return bytes
    .toString('utf8')
    .split('\n')
    .flatMap((line, i) => {
      const length = [...line].length;
      return length > LIMIT ? [`${file}:${i + 1}: ${length} characters`] : [];
    });
});
if (long.length > 0) {
  console.error(`Lines over ${LIMIT} characters: wrap them, or move long prose into a declaration's doc string or docs/.`);
  console.error(long.join('\n'));
  process.exit(1);
}
