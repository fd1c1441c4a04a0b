import type { Agora } from '../client.ts';

/**
 * MCP tools generated from a service's openapi.json, so a new endpoint is a
 * new tool without anyone writing it: one tool per read (a GET with a read
 * of its own), one per mutation action (POST, named `<resource>_<action>`),
 * and one per signed action, where this process does prepare → sign →
 * submit with the agent's key (the model never handles signatures).
 */
type JsonSchema = Record<string, unknown> & {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  oneOf?: JsonSchema[];
};

export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JsonSchema>; required: string[] };
  run(agora: Agora, args: Record<string, unknown>): Promise<{ status: number; body: unknown }>;
}

interface Operation {
  operationId?: string;
  summary?: string;
  parameters?: (JsonSchema & { name: string; in: string; schema: JsonSchema; 'x-agora-action-only'?: boolean })[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/**
 * Flows that need the agent's signature over a server challenge: `register` does registration; key
 * rotation needs a second key, which the SDK and CLI handle.
 */
const flows = new Set(['post_challenge', 'post_register', 'post_keyRotation']);
/** What every request may carry and the SDK fills in itself. */
const transportFields = new Set(['action', 'request_id', 'access_token']);
const signingFields = new Set(['payload', 'envelope', 'signature']);

const ignored = (schema: JsonSchema): boolean =>
  typeof schema.description === 'string' && schema.description.startsWith('Listed for this endpoint but not used');

function fieldsOf(branch: JsonSchema, leaveOut: Set<string> = new Set()): { properties: Record<string, JsonSchema>; required: string[] } {
  const properties = Object.fromEntries(
    Object.entries(branch.properties ?? {}).filter(
      ([name, schema]) => !transportFields.has(name) && !leaveOut.has(name) && !ignored(schema),
    ),
  );
  return { properties, required: (branch.required ?? []).filter((name) => name in properties) };
}

const actionOf = (branch: JsonSchema): string | undefined => (branch.properties?.action as { const?: string } | undefined)?.const;

function readTool(prefix: string, path: string, op: Operation): ToolSpec | null {
  const params = (op.parameters ?? []).filter((p) => p.in === 'query' && !transportFields.has(p.name) && !p['x-agora-action-only']);
  const streams = Object.values(op.responses ?? {}).some((r) => r.content && 'text/event-stream' in r.content);
  // Only mutation fields: this GET is the mutation's GET form, offered as the POST's tools.
  if (streams || (params.length === 0 && (op.parameters ?? []).some((p) => p['x-agora-action-only']))) return null;
  return {
    name: `${prefix}${op.operationId}`,
    description: `GET ${path}: ${op.summary ?? ''}`,
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        params.map((p) => [p.name, { ...p.schema, ...(p.description ? { description: p.description } : {}) }]),
      ),
      required: params.filter((p) => p.required).map((p) => p.name),
    },
    run: (agora, args) => agora.call('GET', path, args),
  };
}

function mutationTools(prefix: string, path: string, op: Operation): ToolSpec[] {
  const body = op.requestBody?.content?.['application/json']?.schema;
  if (!body || !op.operationId || flows.has(op.operationId)) return [];
  const branches = body.oneOf ?? [body];
  const resource = op.operationId.replace(/^post_/, '');
  const summaries = (op.summary ?? '').split(' | ');
  const describe = (action: string) =>
    `POST ${path} action=${action}: ${summaries.find((s) => s.startsWith(`${action}: `))?.slice(action.length + 2) ?? op.summary ?? ''}`;
  const prepare = branches.find((b) => actionOf(b) === 'prepare');
  const tools: ToolSpec[] = [];
  for (const branch of branches) {
    const action = actionOf(branch);
    if (!action || action === 'prepare') continue;
    const name = `${prefix}${resource}_${action.replace(/-/g, '_')}`;
    const signed = Object.keys(branch.properties ?? {}).some((field) => signingFields.has(field));
    if (!signed) {
      tools.push({
        name,
        description: describe(action),
        inputSchema: { type: 'object', ...fieldsOf(branch) },
        run: (agora, args) => agora.call('POST', path, { ...args, action }),
      });
      continue;
    }
    // A signature the model cannot make and no prepare step to make it from: not offered.
    if (!prepare) continue;
    const asked = fieldsOf(prepare);
    const restated = fieldsOf(branch, signingFields).required;
    const properties = { ...asked.properties, ...Object.fromEntries(restated.map((field) => [field, branch.properties![field]!])) };
    tools.push({
      name,
      description: `${describe(action)} (prepared, signed with the agent's key and submitted by this server)`,
      inputSchema: { type: 'object', properties, required: [...new Set([...asked.required, ...restated])] },
      run: async (agora, args) => {
        const pick = (names: string[]) => Object.fromEntries(names.filter((n) => args[n] !== undefined).map((n) => [n, args[n]]));
        const body = await agora.signedAction(
          path as Parameters<Agora['signedAction']>[0],
          pick(Object.keys(asked.properties)),
          action,
          pick(restated),
        );
        return { status: 200, body };
      },
    });
  }
  return tools;
}

/** Every tool one openapi.json offers; `prefix` keeps two documents' names apart (the relay's are `relay_`). */
export function toolsFrom(document: OpenApiDocument, prefix = ''): ToolSpec[] {
  const tools: ToolSpec[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    const get = operations.get;
    if (get?.operationId?.startsWith('get_')) {
      const tool = readTool(prefix, path, get);
      if (tool) tools.push(tool);
    }
    if (operations.post) tools.push(...mutationTools(prefix, path, operations.post));
  }
  return tools;
}
