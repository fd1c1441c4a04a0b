import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../chaos/services.ts';
import { logOutput, terminate } from './processes.ts';

/** HAProxy with the project's own config/haproxy.cfg, in front of two API instances, on a free port. */
export class Balancer {
  readonly port: number;
  /** Its Prometheus exporter (the `metrics` frontend of config/haproxy.cfg). */
  readonly metricsPort: number;
  private readonly child: ChildProcess;

  private constructor(child: ChildProcess, port: number, metricsPort: number) {
    this.child = child;
    this.port = port;
    this.metricsPort = metricsPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Ready once an instance behind it answers /healthz through it. `logFile`: where its stderr goes; in the
   * foreground (-db) HAProxy prints there each server going down or up, with the reason.
   */
  static async start(apiPorts: [number, number], logFile?: string): Promise<Balancer> {
    const port = await freePort();
    const metricsPort = await freePort();
    const env = {
      ...process.env,
      AGORA_LISTEN: `127.0.0.1:${port}`,
      AGORA_METRICS_LISTEN: `127.0.0.1:${metricsPort}`,
      AGORA_API_1: `127.0.0.1:${apiPorts[0]}`,
      AGORA_API_2: `127.0.0.1:${apiPorts[1]}`,
    };
    // In the repository, as the user running this: config/haproxy.cfg names its error pages relative to it.
    const child = spawn('haproxy', ['-db', '-f', 'config/haproxy.cfg'], { env, stdio: ['ignore', 'ignore', logFile ? 'pipe' : 'ignore'] });
    if (logFile) logOutput(child, logFile);
    // Unhandled, a failed spawn (no haproxy installed) would end the keeper before it stops what it started.
    let spawnError: Error | null = null;
    child.once('error', (error) => {
      spawnError = error;
    });
    const balancer = new Balancer(child, port, metricsPort);
    for (let i = 0; i < 100; i++) {
      if (spawnError) throw new Error(`HAProxy did not start: ${(spawnError as Error).message}`);
      if ((await fetch(`${balancer.url}/healthz`).catch(() => null))?.status === 200) return balancer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await balancer.stop();
    throw new Error('HAProxy did not start');
  }

  stop(): Promise<void> {
    return terminate(this.child, 10_000);
  }
}
