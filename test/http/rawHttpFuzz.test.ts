import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractViolation, parseResponses, sendRaw } from '../support/rawHttp.ts';
import { answersHealthz, startServiceProcess, type ServiceProcess } from '../support/serviceProcess.ts';

/**
 * Malformed HTTP over a plain socket against the service as its own
 * process: every answer is a contract error body (never a 5xx) or a clean
 * close, and the process still answers /healthz after each batch.
 * FUZZ_CASES and FUZZ_SEED widen or replay the mutator's run.
 */
const MUTATED_CASES = Number(process.env.FUZZ_CASES ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const BATCH = 50;

const CRLF = '\r\n';
const get = (target: string, headers = 'Host: x\r\n') => `GET ${target} HTTP/1.1${CRLF}${headers}${CRLF}`;
const post = (target: string, headers: string, body: string) => `POST ${target} HTTP/1.1${CRLF}Host: x${CRLF}${headers}${CRLF}${body}`;

/** Hand-picked malformed requests: each names what it tries. */
const corpus: Record<string, string | Buffer> = {
  'asterisk-form GET': get('*'),
  'asterisk-form OPTIONS': `OPTIONS * HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`,
  'absolute-form target': get('http://x/api/forum/posts?limit=1'),
  'absolute-form with a broken authority': get('http://[::1/api/forum/posts'),
  'absolute-form on the relay': get('https://x/api/relay/cases'),
  'unknown method': `FOO /api/forum/posts HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`,
  'lowercase method': `get /api/forum/posts HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`,
  'method with non-ASCII bytes': Buffer.from(`GÉT /api/forum/posts HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`, 'utf8'),
  'header name with a space': get('/api/forum/posts', `Host: x${CRLF}Bad Header: 1${CRLF}`),
  'header line without a colon': get('/api/forum/posts', `Host: x${CRLF}NoColonHere${CRLF}`),
  'space before the colon': get('/api/forum/posts', `Host: x${CRLF}Transfer-Encoding : chunked${CRLF}`),
  'obsolete line folding': get('/api/forum/posts', `Host: x${CRLF}X-A: 1${CRLF} folded${CRLF}`),
  'duplicate Content-Length': post('/api/forum/posts', `Content-Length: 3${CRLF}Content-Length: 4${CRLF}`, 'abc'),
  'negative Content-Length': post('/api/forum/posts', `Content-Length: -3${CRLF}`, 'abc'),
  'non-numeric Content-Length': post('/api/forum/posts', `Content-Length: ten${CRLF}`, 'abc'),
  'Content-Length past 2^64': post('/api/forum/posts', `Content-Length: 99999999999999999999999${CRLF}`, 'abc'),
  'smuggling CL.TE': post('/api/forum/posts', `Content-Length: 6${CRLF}Transfer-Encoding: chunked${CRLF}`, `0${CRLF}${CRLF}G`),
  'smuggling TE.CL': post(
    '/api/forum/posts',
    `Transfer-Encoding: chunked${CRLF}Content-Length: 4${CRLF}`,
    `5c${CRLF}GPOST / HTTP/1.1${CRLF}${CRLF}0${CRLF}${CRLF}`,
  ),
  'smuggling TE with an unknown coding': post('/api/forum/posts', `Transfer-Encoding: xchunked${CRLF}Content-Length: 3${CRLF}`, 'abc'),
  'smuggling a request after the last chunk': post(
    '/api/forum/posts',
    `Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}`,
    `2${CRLF}{}${CRLF}0${CRLF}${CRLF}GET /admin/queues HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`,
  ),
  'bad chunk size': post(
    '/api/relay/cases',
    `Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}`,
    `zz${CRLF}{}${CRLF}0${CRLF}${CRLF}`,
  ),
  'chunk size overflow': post(
    '/api/forum/posts',
    `Transfer-Encoding: chunked${CRLF}`,
    `ffffffffffffffffffff${CRLF}x${CRLF}0${CRLF}${CRLF}`,
  ),
  'chunk extension junk': post('/api/forum/posts', `Transfer-Encoding: chunked${CRLF}`, `2;\x00=\x01${CRLF}{}${CRLF}0${CRLF}${CRLF}`),
  'chunked body without its last chunk': post(
    '/api/forum/posts',
    `Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}`,
    `2${CRLF}{}${CRLF}`,
  ),
  'Expect it cannot meet': get('/api/relay/cases', `Host: x${CRLF}Expect: 999-nope${CRLF}`),
  'Expect 100-continue with a body': post(
    '/api/forum/posts',
    `Expect: 100-continue${CRLF}Content-Type: application/json${CRLF}Content-Length: 2${CRLF}`,
    '{}',
  ),
  'header flood': get('/api/forum/posts', `Host: x${CRLF}${Array.from({ length: 3000 }, (_, i) => `X-F${i}: ${i}${CRLF}`).join('')}`),
  'one oversized header value': get('/api/relay/cases', `Host: x${CRLF}X-Big: ${'b'.repeat(40_000)}${CRLF}`),
  'oversized request line': get(`/api/forum/posts?q=${'q'.repeat(40_000)}`),
  'NUL in the target': get('/api/forum/\x00posts'),
  'NUL in a header value': get('/api/forum/posts', `Host: x${CRLF}X-N: a\x00b${CRLF}`),
  'NUL in a header name': get('/api/forum/posts', `Host: x${CRLF}X-\x00N: ab${CRLF}`),
  'bare LF line endings': 'GET /api/forum/posts HTTP/1.1\nHost: x\n\n',
  'bare CR line endings': 'GET /api/forum/posts HTTP/1.1\rHost: x\r\r',
  'tabs in the request line': 'GET\t/api/forum/posts\tHTTP/1.1\r\nHost: x\r\n\r\n',
  'HTTP/1.0 without Host': `GET /api/forum/posts HTTP/1.0${CRLF}${CRLF}`,
  'HTTP/0.9 request line': `GET /${CRLF}`,
  'HTTP/2 connection preface': `PRI * HTTP/2.0${CRLF}${CRLF}SM${CRLF}${CRLF}`,
  'HTTP/3.0 version': `GET /api/forum/posts HTTP/3.0${CRLF}Host: x${CRLF}${CRLF}`,
  'malformed version': `GET /api/forum/posts HTTP/1.x${CRLF}Host: x${CRLF}${CRLF}`,
  'truncated body': post('/api/forum/posts', `Content-Type: application/json${CRLF}Content-Length: 100${CRLF}`, '{"action":"cre'),
  'headers without their end': `GET /api/forum/posts HTTP/1.1${CRLF}Host: x${CRLF}X-A: 1`,
  'only an empty line': CRLF,
  'only spaces': '        ',
  'TLS ClientHello on the plain port': Buffer.from('16030100f4010000f00303', 'hex'),
  'valid request then junk on the same connection': `${get('/healthz')}\x01\x02junk${CRLF}${CRLF}`,
  'two pipelined valid requests': `${get('/healthz')}${get('/api/forum/posts?limit=1')}`,
  'invalid percent-encoding in the query': get('/api/forum/posts?projectSlug=%zz&limit=%'),
  'invalid percent-encoding in the path': get('/api/forum/%E0%A4%A'),
  'dot segments': get('/api/forum/../../../etc/passwd'),
  'no Host in HTTP/1.1': `GET /api/forum/posts HTTP/1.1${CRLF}${CRLF}`,
  'two Host headers': get('/api/forum/posts', `Host: a${CRLF}Host: b${CRLF}`),
  'Latin-1 bytes in a header': Buffer.concat([
    Buffer.from(`GET /api/forum/posts HTTP/1.1${CRLF}Host: x${CRLF}X-L: `),
    Buffer.from([0xe9, 0xff, 0xfe]),
    Buffer.from(`${CRLF}${CRLF}`),
  ]),
  'invalid JSON body': post('/api/forum/posts', `Content-Type: application/json${CRLF}Content-Length: 9${CRLF}`, '{"action"'),
  'form body with thousands of fields': (() => {
    const body = Array.from({ length: 5000 }, (_, i) => `f${i}=${i}`).join('&');
    return post('/api/forum/posts', `Content-Type: application/x-www-form-urlencoded${CRLF}Content-Length: ${body.length}${CRLF}`, body);
  })(),
  'Authorization with a malformed scheme': get('/api/forum/agents/me', `Host: x${CRLF}Authorization: Bearer${CRLF}`),
  'operator path with junk credentials': get('/admin/queues', `Host: x${CRLF}Authorization: Basic %%%${CRLF}`),
  'metrics with a double slash': get('//metrics'),
};

/** mulberry32: a small seeded PRNG, so a failing run replays exactly with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEEDS = [
  get('/api/forum/posts?projectSlug=demo&limit=5'),
  get('/api/relay/cases?access_token=agora_x'),
  get('/api/forum/events?since=0', `Host: x${CRLF}If-None-Match: "abc"${CRLF}`),
  post(
    '/api/forum/posts',
    `Authorization: Bearer agora_fake${CRLF}Content-Type: application/json${CRLF}Content-Length: 17${CRLF}`,
    '{"action":"create"}',
  ),
  post(
    '/api/relay/cases',
    `Content-Type: application/x-www-form-urlencoded${CRLF}Transfer-Encoding: chunked${CRLF}`,
    `d${CRLF}action=create${CRLF}0${CRLF}${CRLF}`,
  ),
];
const INTERESTING = [0x00, 0x0d, 0x0a, 0x20, 0x3a, 0x09, 0x25, 0x3f, 0x2f, 0x7f, 0x80, 0xff, 0x22, 0x3b, 0x2c];

/** One mutated request: a seed request with one to four byte- or line-level edits. */
function mutate(random: () => number): Buffer {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  let bytes = Buffer.from(pick(SEEDS), 'latin1');
  const head = () => Math.max(1, bytes.indexOf('\r\n\r\n'));
  const edits = 1 + Math.floor(random() * 4);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * head());
    const byte = random() < 0.7 ? pick(INTERESTING) : Math.floor(random() * 256);
    switch (Math.floor(random() * 7)) {
      case 0:
        bytes[at] = byte;
        break;
      case 1:
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from([byte]), bytes.subarray(at)]);
        break;
      case 2:
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + Math.floor(random() * 8))]);
        break;
      case 3: {
        const lines = bytes.toString('latin1').split('\r\n');
        const line = 1 + Math.floor(random() * Math.max(1, lines.length - 3));
        lines.splice(line, 0, lines[line] ?? 'X: 1');
        bytes = Buffer.from(lines.join('\r\n'), 'latin1');
        break;
      }
      case 4:
        bytes = Buffer.from(
          bytes
            .toString('latin1')
            .replace(/^\S+/, pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'CONNECT', 'PRI', 'X', ''])),
          'latin1',
        );
        break;
      case 5:
        bytes = Buffer.from(
          bytes
            .toString('latin1')
            .replace(/HTTP\/1\.1/, pick(['HTTP/1.0', 'HTTP/2.0', 'HTTP/1.', 'HTTP/11', 'http/1.1', 'HTTP/1.1 extra', ''])),
          'latin1',
        );
        break;
      default:
        bytes = bytes.subarray(0, Math.floor(random() * bytes.length));
    }
  }
  return bytes;
}

let service: ServiceProcess;
beforeAll(async () => {
  service = await startServiceProcess('src/bin/main.ts', ['all']);
});
afterAll(async () => {
  await service.stop();
});

/** What went wrong with one exchange, or null when it was a contract body or a clean close. */
async function problemWith(request: Buffer | string): Promise<string | null> {
  const exchange = await sendRaw(service.port, request);
  if (exchange.ending === 'timeout') return 'the server neither answered nor closed the connection';
  const head = Buffer.from(request).subarray(0, 5).toString('latin1') === 'HEAD ';
  let responses: ReturnType<typeof parseResponses>;
  try {
    responses = parseResponses(exchange.received, head);
  } catch (error) {
    return (error as Error).message;
  }
  for (const response of responses) {
    const violation = contractViolation(response, head);
    if (violation) return violation;
  }
  return null;
}

async function runBatches(cases: [string, Buffer | string][]): Promise<string[]> {
  const problems: string[] = [];
  for (let start = 0; start < cases.length; start += BATCH) {
    const batch = cases.slice(start, start + BATCH);
    const found = await Promise.all(batch.map(async ([name, request]) => ({ name, problem: await problemWith(request) })));
    for (const { name, problem } of found) if (problem) problems.push(`${name}: ${problem}`);
    if (!(await answersHealthz(service.client))) {
      problems.push(`the service stopped answering /healthz after the batch starting at ${batch[0]?.[0]}`);
      break;
    }
  }
  return problems;
}

describe('raw HTTP fuzz', () => {
  it(
    `answers each of the ${Object.keys(corpus).length} malformed requests of the corpus with a contract body or a clean ` +
      'close, and keeps serving',
    async () => {
      expect(Object.keys(corpus).length).toBeGreaterThanOrEqual(40);
      expect(await runBatches(Object.entries(corpus))).toEqual([]);
    },
  );

  it(`answers ${MUTATED_CASES} seeded mutations (seed ${SEED}) of valid requests with a contract body or a clean close, and keeps serving`, async () => {
    const random = prng(SEED);
    const cases = Array.from({ length: MUTATED_CASES }, (_, i): [string, Buffer] => {
      const request = mutate(random);
      return [`mutation #${i} ${JSON.stringify(request.subarray(0, 400).toString('latin1'))}`, request];
    });
    expect(await runBatches(cases)).toEqual([]);
  }, 300_000);
});
