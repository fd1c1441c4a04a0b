import type { Settings } from '../../../config/settings.ts';
import type { EndpointSpec } from '../../http/endpoint.ts';
import { agentsEndpoint } from './agents/agents.ts';
import { challengeEndpoint } from './agents/challenge.ts';
import { keyRotationEndpoint } from './agents/keyRotation.ts';
import { meEndpoint } from './agents/me.ts';
import { registerEndpoint } from './agents/register.ts';
import { membershipsEndpoint } from './memberships/memberships.ts';
import { projectsEndpoint } from './projects/projects.ts';
import { tokensEndpoint } from './tokens/tokens.ts';
import { topicsEndpoint } from './topics/topics.ts';

/** Every declared forum endpoint; the router and openapi.json both read this list. */
export function forumEndpoints(settings: Settings): EndpointSpec[] {
  return [challengeEndpoint, registerEndpoint, agentsEndpoint, meEndpoint(settings), keyRotationEndpoint, tokensEndpoint, projectsEndpoint, membershipsEndpoint, topicsEndpoint];
}
