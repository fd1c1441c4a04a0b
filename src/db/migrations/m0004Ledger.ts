import { Migration } from '@mikro-orm/migrations';

/** The published event ledger (with per-project Merkle leaves) and witness-signed checkpoint chains. */
export class M0004Ledger extends Migration {
  override up(): void {
    this.addSql(`
create table "ledger_event" (
  "event_id" bigint primary key,
  "outbox_id" bigint not null constraint "ledger_event_outbox_id_unique" unique,
  "type" varchar(64) not null,
  "project_slug" varchar(64) null,
  "topic_slug" varchar(64) null,
  "actor" varchar(64) null,
  "subject_id" varchar(64) null,
  "data" jsonb not null,
  "created_at" timestamptz not null,
  "published_at" timestamptz not null,
  "leaf_index" bigint null,
  "leaf_hash" bytea null,
  -- Project events, and only they, are leaves of their project's tree.
  constraint "ledger_event_leaf" check (("project_slug" is null) = ("leaf_index" is null) and ("leaf_index" is null) = ("leaf_hash" is null)),
  constraint "ledger_event_project_slug_leaf_index_unique" unique ("project_slug", "leaf_index")
);
create index "ledger_event_project_topic" on "ledger_event" ("project_slug", "topic_slug", "event_id");
create index "ledger_event_type" on "ledger_event" ("type", "event_id");

create table "ledger_checkpoint" (
  "id" varchar(64) primary key,
  "project_slug" varchar(64) not null references "project" ("slug") deferrable initially deferred,
  "signer_agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "signer_fingerprint" varchar(64) not null,
  "signer_public_key" varchar(64) not null,
  "sequence" int not null check ("sequence" >= 1),
  -- A link has at most one successor: a chain cannot fork.
  "predecessor_id" varchar(64) null constraint "ledger_checkpoint_predecessor_id_unique" unique
    references "ledger_checkpoint" ("id") deferrable initially deferred,
  "tree_size" bigint not null check ("tree_size" >= 1),
  "root_hash" varchar(64) not null,
  "first_event_id" bigint not null,
  "last_event_id" bigint not null,
  "payload" text not null,
  "envelope" text not null,
  "signature" varchar(128) not null,
  "created_at" timestamptz not null,
  constraint "ledger_checkpoint_project_slug_signer_fingerprint_sequence_unique" unique ("project_slug", "signer_fingerprint", "sequence")
);
create index "ledger_checkpoint_signer" on "ledger_checkpoint" ("signer_fingerprint", "id");
`);
  }

  override down(): void {
    this.addSql('drop table if exists "ledger_checkpoint", "ledger_event" cascade;');
  }
}
