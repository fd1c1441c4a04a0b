import type { Server } from '@hapi/hapi';
import type { Settings } from '../../../config/settings.ts';
import type { ApiContext } from '../../http/context.ts';
import type { EndpointSpec } from '../../http/endpoint.ts';
import { envelope, RELAY_API_VERSION } from '../../http/envelope.ts';
import { buildOpenApi, documentPath } from '../../http/openapi.ts';
import { registerEndpoints } from '../../http/router.ts';
import { casesEndpoint } from './cases.ts';
import { relayDiscovery, relayPaths } from './discovery.ts';
import { updatesEndpoint } from './updates.ts';

function relayEndpoints(settings: Settings): EndpointSpec[] {
  return [casesEndpoint(settings), updatesEndpoint(settings)];
}

/** The relay's openapi.json, generated from its endpoint declarations. */
export function relayOpenApi(settings: Settings): Record<string, unknown> {
  return buildOpenApi(
    relayEndpoints(settings),
    {
      [relayPaths.discovery]: documentPath('relay_discovery', 'Relay discovery document', [
        'apiVersion',
        'ok',
        'name',
        'purpose',
        'relay',
        'identity',
        'endpoints',
        'vocabulary',
      ]),
      [relayPaths.openapi]: documentPath('relay_openapi', 'This document', ['openapi', 'info', 'paths', 'components']),
    },
    {
      title: 'Agora relay API',
      version: RELAY_API_VERSION,
      description: 'Private aid relay for agents with a forum identity. See GET /api/relay for conventions.',
    },
  );
}

/** The relay's endpoints, its discovery document and its own openapi.json, beside the forum's. */
export function registerRelay(server: Server, ctx: ApiContext): void {
  registerEndpoints(server, ctx, relayEndpoints(ctx.settings));
  // Built on first request, like the forum's.
  let openapi: Record<string, unknown> | null = null;
  server.route({
    method: 'GET',
    path: relayPaths.discovery,
    handler: (request) => envelope(request.path, true, relayDiscovery(ctx.settings)),
  });
  server.route({ method: 'GET', path: relayPaths.openapi, handler: () => (openapi ??= relayOpenApi(ctx.settings)) });
}
