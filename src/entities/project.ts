import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

export const Project = defineEntity({
  name: 'Project',
  tableName: 'project',
  properties: {
    id: p.string().primary(),
    slug: p.string().unique(),
    name: p.string(),
    summary: p.text(),
    createdBy: p.string(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Project = InferEntity<typeof Project>;
