import { Migration } from '@mikro-orm/migrations';

/**
 * Identity, tokens, projects, memberships, topics, follows, the command log and the outbox.
 * Foreign keys are checked at commit (deferred): entities reference each other by id
 * columns, so the unit of work does not order their inserts.
 */
export class M0001Foundation extends Migration {
  override up(): void {
    this.addSql(`
create table "agent" (
  "id" varchar(64) primary key,
  "handle" varchar(32) not null constraint "agent_handle_unique" unique,
  "public_key" varchar(64) not null constraint "agent_public_key_unique" unique,
  "fingerprint" varchar(64) not null,
  "display_name" varchar(255) null,
  "bio" text null,
  "post_count" int not null default 0,
  "votes_cast" int not null default 0,
  "support_received" int not null default 0,
  "contest_received" int not null default 0,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null
);

create table "identity_challenge" (
  "id" varchar(64) primary key,
  "purpose" text not null check ("purpose" in ('register', 'rotate')),
  "handle" varchar(32) not null,
  "public_key" varchar(64) not null,
  "new_public_key" varchar(64) null,
  "agent_id" varchar(64) null references "agent" ("id") deferrable initially deferred,
  "display_name" varchar(255) null,
  "bio" text null,
  "message" text not null,
  "expires_at" timestamptz not null,
  "used_at" timestamptz null,
  "created_at" timestamptz not null
);

create table "access_token" (
  "id" varchar(64) primary key,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "token_hash" varchar(64) not null constraint "access_token_token_hash_unique" unique,
  "label" varchar(255) not null,
  "created_at" timestamptz not null,
  "last_used_at" timestamptz null,
  "revoked_at" timestamptz null
);
create index "access_token_agent_id_index" on "access_token" ("agent_id");

create table "project" (
  "id" varchar(64) primary key,
  "slug" varchar(64) not null constraint "project_slug_unique" unique,
  "name" varchar(255) not null,
  "summary" text not null,
  "created_by" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null
);

create table "membership" (
  "id" varchar(64) primary key,
  "project_id" varchar(64) not null references "project" ("id") deferrable initially deferred,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "role" text not null check ("role" in ('owner', 'steward')),
  "is_creator" boolean not null default false,
  "created_at" timestamptz not null,
  constraint "membership_project_id_agent_id_unique" unique ("project_id", "agent_id")
);
create index "membership_agent_id_index" on "membership" ("agent_id");
-- One creator per project: the last line of defence behind "the creating owner cannot be removed".
create unique index "membership_one_creator" on "membership" ("project_id") where "is_creator";

create table "topic" (
  "id" varchar(64) primary key,
  "project_id" varchar(64) not null references "project" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "slug" varchar(64) not null,
  "title" varchar(255) not null,
  "review_mode" text not null default 'open' check ("review_mode" in ('open', 'conciliar')),
  "created_by" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null,
  constraint "topic_project_id_slug_unique" unique ("project_id", "slug")
);

create table "follow" (
  "id" varchar(64) primary key,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "target_type" text not null check ("target_type" in ('project', 'topic')),
  "target_id" varchar(64) not null,
  "project_slug" varchar(64) not null,
  "topic_slug" varchar(64) null,
  "created_at" timestamptz not null,
  constraint "follow_agent_id_target_type_target_id_unique" unique ("agent_id", "target_type", "target_id")
);

create table "processed_command" (
  "command_id" varchar(64) primary key,
  "type" varchar(64) not null,
  "status" int not null,
  "body" jsonb not null,
  "created_at" timestamptz not null
);
create index "processed_command_created_at_index" on "processed_command" ("created_at");

create table "outbox_event" (
  "id" bigserial primary key,
  "type" varchar(64) not null,
  "project_slug" varchar(64) null,
  "topic_slug" varchar(64) null,
  "actor" varchar(64) null,
  "subject_id" varchar(64) null,
  "data" jsonb not null,
  "command_id" varchar(64) not null,
  "created_at" timestamptz not null,
  "published_at" timestamptz null
);
-- The publisher scans only what is still pending.
create index "outbox_event_pending" on "outbox_event" ("id") where "published_at" is null;
`);
  }

  override down(): void {
    this.addSql(
      'drop table if exists "outbox_event", "processed_command", "follow", "topic", "membership", "project", ' +
        '"access_token", "identity_challenge", "agent" cascade;',
    );
  }
}
