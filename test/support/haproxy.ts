import { Balancer as HAProxy } from '../../scripts/topology/balancer.ts';
import { Client } from './client.ts';

/** scripts/topology/balancer.ts (HAProxy with config/haproxy.cfg) with a test client pointed at it. */
export class Balancer {
  readonly client: Client;
  private readonly haproxy: HAProxy;

  private constructor(haproxy: HAProxy) {
    this.haproxy = haproxy;
    this.client = new Client(haproxy.url);
  }

  static async start(apiPorts: [number, number]): Promise<Balancer> {
    return new Balancer(await HAProxy.start(apiPorts));
  }

  stop(): Promise<void> {
    return this.haproxy.stop();
  }
}
