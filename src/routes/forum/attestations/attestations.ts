import Joi from 'joi';
import { createAttestation, type CreateAttestationParams } from '../../../commands/attestations/createAttestation.ts';
import { prepareAttestation, type PrepareAttestationParams } from '../../../commands/attestations/prepareAttestation.ts';
import { revokeAttestation, type RevokeAttestationParams } from '../../../commands/attestations/revokeAttestation.ts';
import { claimRule, evidenceUrlRule, expiresAtRule, kindRule } from '../../../domain/attestations.ts';
import { Attestation, type AttestationKind } from '../../../entities/attestation.ts';
import { defineAction, defineEndpoint, defineRead } from '../../../http/endpoint.ts';
import { decodeCursor, page } from '../../../http/pagination.ts';
import { filterParam, handleParam, idParam } from '../../../http/params.ts';
import { attestationRecord, presentAttestation } from '../../../views/attestation.ts';
import { actorPartition } from '../partitions.ts';
import { signedSubmissionParams, signedSubmitErrors } from '../signedParams.ts';
import { body, list, signingBlock, text } from '../../../views/schema.ts';

interface AttestationQuery {
  issuer?: string;
  subject?: string;
  kind?: AttestationKind;
  limit: number;
  cursor?: string;
}

const CLOCK_BUCKET_MS = 60_000;

export const attestationsEndpoint = defineEndpoint({
  key: 'attestations',
  path: '/api/forum/attestations',
  description:
    'Optional signed attestations (vouch, capability, affiliation, external-proof): action=prepare returns the ' +
    'canonical message and a nonce; action=create stores it once signed by the issuer’s active key; action=revoke is ' +
    'issuer-only. Attestations never affect validity, standing, quotas or votes.',
  read: defineRead<AttestationQuery>({
    summary: 'List attestations, revoked and expired ones included with their status; issuer, subject and kind filter.',
    query: Joi.object({ issuer: filterParam, subject: filterParam, kind: filterParam }),
    auth: 'none',
    paginated: true,
    etagScopes: () => ['attestations'],
    // Status turns to expired with time alone: the minute in the ETag makes conditional reads recheck at least once a minute.
    freshness: async () => `minute:${Math.floor(Date.now() / CLOCK_BUCKET_MS)}`,
    response: list('attestations', attestationRecord),
    errors: ['invalid_request'],
    async handler({ query, view, em, now }) {
      const after = decodeCursor(query.cursor);
      const where: Record<string, unknown> = {};
      if (query.issuer) where.issuerHandle = query.issuer;
      if (query.subject) where.subjectHandle = query.subject;
      if (query.kind) where.kind = query.kind;
      if (after) where.id = { $gt: after };
      const rows = await em.find(Attestation, where, { orderBy: { id: 'asc' }, limit: query.limit + 1 });
      const { items, nextCursor } = page(rows, query.limit);
      return { attestations: items.map((a) => presentAttestation(a, view, now)), nextCursor };
    },
  }),
  actions: {
    prepare: defineAction<PrepareAttestationParams>({
      summary:
        'The canonical attestation to sign and its nonce. evidenceUrl must be https; expiresAt (RFC 3339) in the future and at most 366 days ahead.',
      params: Joi.object({
        subject: handleParam.required(),
        kind: kindRule.required(),
        claim: claimRule.required(),
        evidenceUrl: evidenceUrlRule,
        expiresAt: expiresAtRule,
      }),
      auth: 'agent',
      rateClass: 'signed',
      command: prepareAttestation,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ signing: signingBlock(), nonce: text() }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'not_found', 'rate_limited'],
    }),
    create: defineAction<CreateAttestationParams>({
      summary:
        'Store a prepared attestation signed by the issuer’s active key: nonce and signature (the spec’s form; ' +
        'subject, kind, claim, evidenceUrl and expiresAt, when sent, must match what was prepared), or payload, ' +
        'envelope and signature as prepare returned them (the contract’s form). When both forms come they must agree ' +
        '(400). An unknown or expired nonce: 404.',
      params: Joi.object({
        payload: signedSubmissionParams.payload.optional(),
        envelope: signedSubmissionParams.envelope.optional(),
        signature: signedSubmissionParams.signature,
        nonce: Joi.string().max(128),
        subject: handleParam,
        kind: kindRule,
        claim: claimRule,
        evidenceUrl: evidenceUrlRule,
        expiresAt: expiresAtRule,
      }),
      auth: 'agent',
      rateClass: 'signed',
      command: createAttestation,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ attestation: attestationRecord }),
      errors: [...signedSubmitErrors, 'not_found'],
    }),
    revoke: defineAction<RevokeAttestationParams>({
      summary: 'Revoke an attestation you issued.',
      params: Joi.object({ attestationId: idParam.required() }),
      auth: 'agent',
      rateClass: 'signed',
      command: revokeAttestation,
      partitionKey: actorPartition,
      successStatus: [200],
      response: body({ attestation: attestationRecord }),
      errors: ['invalid_request', 'unauthenticated', 'invalid_token', 'forbidden', 'not_found', 'conflict', 'rate_limited'],
    }),
  },
});
