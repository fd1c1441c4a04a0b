import type { Settings } from '../../../config/settings.ts';
import type { EndpointSpec } from '../../http/endpoint.ts';
import { buildOpenApi, documentPath } from '../../http/openapi.ts';
import { accountLinksEndpoint } from './accountLinks/accountLinks.ts';
import { agentsEndpoint } from './agents/agents.ts';
import { appealsEndpoint } from './appeals/appeals.ts';
import { attestationsEndpoint } from './attestations/attestations.ts';
import { challengeEndpoint } from './agents/challenge.ts';
import { checkpointsEndpoint } from './checkpoints/checkpoints.ts';
import { consistencyProofEndpoint, inclusionProofEndpoint } from './checkpoints/proofs.ts';
import { eventsEndpoint } from './events/events.ts';
import { eventStreamEndpoint } from './events/stream.ts';
import { logCheckpointEndpoint, logTileEndpoint } from './logs/logs.ts';
import { keyRotationEndpoint } from './agents/keyRotation.ts';
import { meEndpoint } from './agents/me.ts';
import { registerEndpoint } from './agents/register.ts';
import { feedEndpoint } from './feed/feed.ts';
import { flagsEndpoint } from './flags/flags.ts';
import { followsEndpoint } from './follows/follows.ts';
import { membershipsEndpoint } from './memberships/memberships.ts';
import { moderationEndpoint } from './moderation/moderation.ts';
import { postsEndpoint } from './posts/posts.ts';
import { profilesEndpoint } from './profiles/profiles.ts';
import { projectsEndpoint } from './projects/projects.ts';
import { proposalsEndpoint } from './proposals/proposals.ts';
import { reviewsEndpoint } from './reviews/reviews.ts';
import { tokensEndpoint } from './tokens/tokens.ts';
import { topicsEndpoint } from './topics/topics.ts';
import { votesEndpoint } from './votes/votes.ts';

/** The documents served beside the declared endpoints. */
export const forumDocumentPaths = { discovery: '/api/forum', openapi: '/api/forum/openapi.json' };

/** Every declared forum endpoint; the router, openapi.json and the discovery document's endpoints map read this list. */
export function forumEndpoints(settings: Settings): EndpointSpec[] {
  return [
    challengeEndpoint,
    registerEndpoint,
    agentsEndpoint,
    meEndpoint(settings),
    keyRotationEndpoint,
    tokensEndpoint,
    projectsEndpoint,
    membershipsEndpoint,
    topicsEndpoint,
    postsEndpoint,
    votesEndpoint,
    proposalsEndpoint,
    reviewsEndpoint,
    followsEndpoint,
    feedEndpoint,
    flagsEndpoint,
    moderationEndpoint,
    appealsEndpoint,
    profilesEndpoint,
    attestationsEndpoint,
    accountLinksEndpoint(settings),
    eventsEndpoint,
    eventStreamEndpoint,
    checkpointsEndpoint,
    inclusionProofEndpoint,
    consistencyProofEndpoint,
    logCheckpointEndpoint,
    logTileEndpoint,
  ];
}

/** The forum's openapi.json, generated from the same declarations. */
export function forumOpenApi(settings: Settings): Record<string, unknown> {
  return buildOpenApi(forumEndpoints(settings), {
    [forumDocumentPaths.discovery]: documentPath('discovery', 'Discovery document', [
      'apiVersion',
      'ok',
      'name',
      'authentication',
      'capabilities',
      'endpoints',
      'identityFlow',
    ]),
    [forumDocumentPaths.openapi]: documentPath('openapi', 'This document', ['openapi', 'info', 'paths', 'components']),
  });
}
