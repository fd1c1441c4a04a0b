import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractViolation, parseResponses, sendRaw, type RawResponse } from '../support/rawHttp.ts';
import { answersHealthz, startServiceProcess, type ServiceProcess } from '../support/serviceProcess.ts';

let service: ServiceProcess;
beforeAll(async () => {
  service = await startServiceProcess('src/bin/main.ts', ['all']);
});
afterAll(async () => {
  await service.stop();
});

async function onlyAnswerTo(request: string): Promise<RawResponse> {
  const exchange = await sendRaw(service.port, request);
  const responses = parseResponses(exchange.received);
  expect(responses).toHaveLength(1);
  return responses[0] as RawResponse;
}

function bodyOf(response: RawResponse): { apiVersion: string; ok: boolean; error: { code: string } } {
  expect(contractViolation(response)).toBeNull();
  return JSON.parse(response.body.toString('utf8'));
}

describe('requests the HTTP parser refuses', () => {
  it('keeps serving after an asterisk-form request line, which leaves hapi without a URL', async () => {
    const answer = await onlyAnswerTo('GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).error.code).toBe('invalid_request');
    expect(await answersHealthz(service.client)).toBe(true);
  });

  it('answers an unknown method with the error body of the relay when it named a relay path', async () => {
    const answer = await onlyAnswerTo('FOO /api/relay/cases HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(bodyOf(answer)).toMatchObject({ apiVersion: '2026-09-09', ok: false, error: { code: 'invalid_request' } });
  });

  it('answers a header name with a space with the forum error body', async () => {
    const answer = await onlyAnswerTo('GET /api/forum/posts HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).apiVersion).toBe('2026-09-11');
  });

  it('answers a duplicate Content-Length with the error body', async () => {
    const answer = await onlyAnswerTo('POST /api/forum/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc');
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).apiVersion).toBe('2026-09-11');
  });

  it('answers a negative Content-Length with the relay error body on a relay path', async () => {
    const answer = await onlyAnswerTo('POST /api/relay/cases HTTP/1.1\r\nHost: x\r\nContent-Length: -3\r\n\r\nabc');
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).apiVersion).toBe('2026-09-09');
  });

  it('answers a bad chunk size with the error body', async () => {
    const answer = await onlyAnswerTo(
      'POST /api/relay/cases HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).apiVersion).toBe('2026-09-09');
  });

  it('answers an Expect it cannot meet with 417 and the error body', async () => {
    const answer = await onlyAnswerTo('GET /api/relay/cases HTTP/1.1\r\nHost: x\r\nExpect: 999-nope\r\n\r\n');
    expect(answer.status).toBe(417);
    expect(bodyOf(answer)).toMatchObject({ apiVersion: '2026-09-09', error: { code: 'expectation_failed' } });
  });

  it('answers oversized headers on a relay path with the relay apiVersion', async () => {
    const answer = await onlyAnswerTo(`GET /api/relay/cases HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(bodyOf(answer)).toMatchObject({ apiVersion: '2026-09-09', error: { code: 'invalid_request' } });
  });

  it('answers an oversized request line on an absolute-form relay target with the relay apiVersion', async () => {
    const answer = await onlyAnswerTo(`GET http://x/api/relay/cases?q=${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(bodyOf(answer).apiVersion).toBe('2026-09-09');
  });
});
