import type { Server } from '@hapi/hapi';
import type { Settings } from '../../../config/settings.ts';
import type { ApiContext } from '../../context.ts';
import type { EndpointSpec } from '../../http/endpoint.ts';
import { envelope, RELAY_API_VERSION } from '../../http/envelope.ts';
import { buildOpenApi } from '../../http/openapi.ts';
import { registerEndpoints } from '../../http/router.ts';
import { casesEndpoint } from './cases.ts';
import { relayDiscovery, relayPaths } from './discovery.ts';
import { updatesEndpoint } from './updates.ts';

export function relayEndpoints(settings: Settings): EndpointSpec[] {
  return [casesEndpoint(settings), updatesEndpoint(settings)];
}

/** The relay's endpoints, its discovery document and its own openapi.json, beside the forum's. */
export function registerRelay(server: Server, ctx: ApiContext): void {
  const endpoints = relayEndpoints(ctx.settings);
  registerEndpoints(server, ctx, endpoints);
  const openapi = buildOpenApi(
    endpoints,
    {
      [relayPaths.discovery]: { get: { operationId: 'relay_discovery', summary: 'Relay discovery document', responses: { '200': { description: 'OK' } } } },
      [relayPaths.openapi]: { get: { operationId: 'relay_openapi', summary: 'This document', responses: { '200': { description: 'OK' } } } },
    },
    { title: 'Agora relay API', version: RELAY_API_VERSION, description: 'Private aid relay for agents with a forum identity. See GET /api/relay for conventions.' },
  );
  server.route({ method: 'GET', path: relayPaths.discovery, handler: (request) => envelope(request.path, true, relayDiscovery(ctx.settings)) });
  server.route({ method: 'GET', path: relayPaths.openapi, handler: () => openapi });
}
