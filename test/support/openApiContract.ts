import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/**
 * Every response a test receives through Client is checked against the
 * openapi.json the service itself publishes: the status must be documented
 * for the operation, and the body must match that status's schema. So the
 * document cannot drift from the service without a test failing.
 */
interface Document {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
}

const documents = new Map<string, Promise<{ ajv: Ajv2020; docs: { id: string; doc: Document }[] }>>();
const compiled = new Map<string, ValidateFunction | null>();

async function load(base: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const docs: { id: string; doc: Document }[] = [];
  for (const [id, path] of [
    ['forum', '/api/forum/openapi.json'],
    ['relay', '/api/relay/openapi.json'],
  ] as const) {
    const doc = (await (await fetch(`${base}${path}`)).json()) as Document;
    ajv.addSchema(doc, `${base}/${id}`);
    docs.push({ id: `${base}/${id}`, doc });
  }
  return { ajv, docs };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

class ContractViolation extends Error {}

export async function checkResponse(base: string, method: string, url: string, status: number, body: unknown): Promise<void> {
  const path = new URL(url, base).pathname.replace(/\/+$/, '') || '/';
  if (!path.startsWith('/api/')) return;
  let loaded = documents.get(base);
  if (!loaded) documents.set(base, (loaded = load(base)));
  const { ajv, docs } = await loaded;
  const owner = docs.find(({ doc }) => doc.paths[path]);
  // Unknown paths are 404s of the router, not operations of the document.
  if (!owner) return;
  const operation = owner.doc.paths[path]?.[method.toLowerCase()];
  // POST on a read-only endpoint is 405, which no operation of the document describes.
  if (!operation && status === 405) return;
  if (!operation) throw new ContractViolation(`${method} ${path} answered ${status} but the document has no ${method} operation`);
  const response = operation.responses?.[String(status)];
  if (!response)
    throw new ContractViolation(`${method} ${path} answered ${status}, which its operation does not document: ${JSON.stringify(body)}`);
  if (status === 304 || !response.content?.['application/json']?.schema) return;
  const ref = `${owner.id}#/${pointer('paths', path, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema')}`;
  let validate = compiled.get(ref);
  if (validate === undefined) {
    validate = ajv.getSchema(ref) ?? null;
    compiled.set(ref, validate);
  }
  if (validate && !validate(body)) {
    throw new ContractViolation(
      `${method} ${url} ${status} does not match openapi.json: ` +
        `${ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 1500)}\nbody: ` +
        `${JSON.stringify(body).slice(0, 1500)}`,
    );
  }
}
