import { request as httpRequest, type ClientRequest } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The bench's stream clients, in a worker thread of their own so that
 * reading thousands of sockets does not slow the thread that posts (and
 * timestamps arrivals promptly). Messages: { open: count } -> { opened },
 * { record: boolean }, { report: true } -> { delivered, latencies }, { close: true } -> { closed }.
 */
interface Setup {
  url: string;
  projects: string[];
}

const { url, projects } = workerData as Setup;
const requests: ClientRequest[] = [];
let latencies: number[] = [];
let delivered = 0;
let recording = false;

function openOne(projectSlug: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/api/forum/events/stream?since=now&projectSlug=${projectSlug}`,
      { agent: false, headers: { accept: 'text/event-stream' } },
      (response) => {
        if (response.statusCode !== 200) return reject(new Error(`stream refused: ${response.statusCode}`));
        response.setEncoding('utf8');
        let buffer = '';
        response.on('data', (chunk: string) => {
          const now = Date.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const at = message.indexOf('"createdAt":"');
            if (at < 0) continue;
            delivered++;
            if (recording) latencies.push(now - Date.parse(message.slice(at + 13, at + 37)));
          }
        });
        resolve();
      },
    );
    request.on('error', () => {});
    requests.push(request);
    request.end();
  });
}

parentPort?.on('message', async (message: { open?: number; record?: boolean; report?: boolean; close?: boolean }) => {
  if (message.open !== undefined) {
    const start = requests.length;
    for (let i = 0; i < message.open; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, message.open - i) }, (_, j) => openOne(projects[(start + i + j) % projects.length] as string)),
      );
    }
    parentPort?.postMessage({ opened: requests.length });
  }
  if (message.record !== undefined) recording = message.record;
  if (message.report) {
    parentPort?.postMessage({ delivered, latencies });
    latencies = [];
  }
  if (message.close) {
    for (const request of requests) request.destroy();
    requests.length = 0;
    parentPort?.postMessage({ closed: true });
  }
});
