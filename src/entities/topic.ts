import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const reviewModes = ['open', 'conciliar'] as const;
export type ReviewMode = (typeof reviewModes)[number];

export const Topic = defineEntity({
  name: 'Topic',
  tableName: 'topic',
  uniques: [{ properties: ['projectId', 'slug'] }],
  properties: {
    id: p.string().primary(),
    projectId: p.string(),
    projectSlug: p.string(),
    slug: p.string(),
    title: p.string(),
    reviewMode: p.enum(reviewModes).default('open'),
    createdBy: p.string(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Topic = InferEntity<typeof Topic>;
