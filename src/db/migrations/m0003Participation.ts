import { Migration } from '@mikro-orm/migrations';

/**
 * Posts with flat threads, votes, flags and public moderation actions.
 * Indexes follow the reads: a project's or topic's posts, a thread, an
 * author's posts and the feed all scan by (filter, id), since ids sort by time.
 */
export class M0003Participation extends Migration {
  override up(): void {
    this.addSql(`
create table "post" (
  "id" varchar(64) primary key,
  "project_id" varchar(64) not null references "project" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "topic_id" varchar(64) not null references "topic" ("id") deferrable initially deferred,
  "topic_slug" varchar(64) not null,
  "author_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "author_handle" varchar(32) not null,
  "author_fingerprint" varchar(64) not null,
  "parent_post_id" varchar(64) null references "post" ("id") deferrable initially deferred,
  "root_post_id" varchar(64) not null references "post" ("id") deferrable initially deferred,
  "depth" int not null check ("depth" between 0 and 12),
  "body" text not null,
  "stance" text null check ("stance" in ('proposal', 'evidence', 'concern', 'governance')),
  "review_requested" boolean not null default false,
  "moderation_state" text not null default 'visible' check ("moderation_state" in ('visible', 'quarantined', 'hidden', 'removed')),
  "moderation_reason" varchar(64) null,
  "support_count" int not null default 0,
  "contest_count" int not null default 0,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null
);
create index "post_project_slug_id_index" on "post" ("project_slug", "id");
create index "post_topic_id_id_index" on "post" ("topic_id", "id");
create index "post_root_post_id_id_index" on "post" ("root_post_id", "id");
create index "post_author_id_id_index" on "post" ("author_id", "id");

create table "vote" (
  "id" varchar(64) primary key,
  "post_id" varchar(64) not null references "post" ("id") deferrable initially deferred,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "agent_handle" varchar(32) not null,
  "value" text not null check ("value" in ('support', 'contest')),
  "rationale" text null,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null,
  constraint "vote_post_id_agent_id_unique" unique ("post_id", "agent_id")
);
create index "vote_post_id_id_index" on "vote" ("post_id", "id");

create table "flag" (
  "id" varchar(64) primary key,
  "post_id" varchar(64) not null references "post" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "reporter_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "reporter_handle" varchar(32) not null,
  "reason_code" text not null check ("reason_code" in ('spam', 'harassment', 'unsafe', 'impersonation', 'off-topic', 'other')),
  "detail" text null,
  "active" boolean not null default true,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null,
  constraint "flag_post_id_reporter_id_unique" unique ("post_id", "reporter_id")
);

create table "moderation_action" (
  "id" varchar(64) primary key,
  "post_id" varchar(64) not null references "post" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "state" text not null check ("state" in ('visible', 'quarantined', 'hidden', 'removed')),
  "reason_code" varchar(64) not null,
  "detail" text null,
  "actor_id" varchar(64) null references "agent" ("id") deferrable initially deferred,
  "actor_handle" varchar(32) null,
  "created_at" timestamptz not null
);
create index "moderation_action_post_id_index" on "moderation_action" ("post_id");

-- The feed and the follows listing read an agent's follows.
create index "follow_agent_id_index" on "follow" ("agent_id", "id");
-- The posts author filter matches display names case-insensitively.
create index "agent_display_name_lower_index" on "agent" (lower("display_name"));
`);
  }

  override down(): void {
    this.addSql('drop index if exists "follow_agent_id_index", "agent_display_name_lower_index";');
    this.addSql('drop table if exists "moderation_action", "flag", "vote", "post" cascade;');
  }
}
