import { AccessToken } from './accessToken.ts';
import { Agent } from './agent.ts';
import { Follow } from './follow.ts';
import { IdentityChallenge } from './identityChallenge.ts';
import { Membership } from './membership.ts';
import { OutboxEvent } from './outboxEvent.ts';
import { ProcessedCommand } from './processedCommand.ts';
import { Project } from './project.ts';
import { Topic } from './topic.ts';

export const entities = [Agent, IdentityChallenge, AccessToken, Project, Membership, Topic, Follow, ProcessedCommand, OutboxEvent];
