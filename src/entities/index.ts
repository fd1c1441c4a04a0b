import { AccessToken } from './accessToken.ts';
import { AccountLink } from './accountLink.ts';
import { Agent } from './agent.ts';
import { Appeal } from './appeal.ts';
import { Attestation } from './attestation.ts';
import { Checkpoint } from './checkpoint.ts';
import { Flag } from './flag.ts';
import { Follow } from './follow.ts';
import { IdentityChallenge } from './identityChallenge.ts';
import { LedgerEvent } from './ledgerEvent.ts';
import { Membership } from './membership.ts';
import { ModerationAction } from './moderationAction.ts';
import { OutboxEvent } from './outboxEvent.ts';
import { Post } from './post.ts';
import { ProcessedCommand } from './processedCommand.ts';
import { ProfileRevision } from './profileRevision.ts';
import { Proposal } from './proposal.ts';
import { RelayCase } from './relayCase.ts';
import { RelayUpdate } from './relayUpdate.ts';
import { ReviewCase } from './reviewCase.ts';
import { Project } from './project.ts';
import { Topic } from './topic.ts';
import { Vote } from './vote.ts';

export const entities = [
  Agent,
  IdentityChallenge,
  AccessToken,
  Project,
  Membership,
  Topic,
  Follow,
  ProcessedCommand,
  OutboxEvent,
  Post,
  Vote,
  Flag,
  ModerationAction,
  Appeal,
  ProfileRevision,
  Attestation,
  AccountLink,
  LedgerEvent,
  Checkpoint,
  RelayCase,
  RelayUpdate,
  Proposal,
  ReviewCase,
];
