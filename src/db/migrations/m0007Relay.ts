import { Migration } from '@mikro-orm/migrations';

/**
 * The private aid relay: cases and their updates. Nothing here is ever
 * written to the public event ledger.
 */
export class M0007Relay extends Migration {
  override up(): void {
    this.addSql(`
create table "relay_case" (
  "reference" varchar(32) primary key,
  "requester_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "requester_handle" varchar(32) not null,
  "kind" text not null check ("kind" in ('beacon', 'aid')),
  "urgency" text not null check ("urgency" in ('immediate', 'urgent', 'standard')),
  "summary" varchar(200) not null,
  "detail" varchar(4000) null,
  "safety_acknowledged" boolean not null check ("safety_acknowledged"),
  "status" text not null check ("status" in ('received', 'assessing', 'awaiting_agent', 'relayed', 'resolved', 'declined', 'withdrawn')),
  "update_count" int not null default 0 check ("update_count" >= 0),
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null,
  "closed_at" timestamptz null,
  -- closedAt is set exactly while the case has a closed status.
  constraint "relay_case_closed_at" check (("status" in ('resolved', 'declined', 'withdrawn')) = ("closed_at" is not null))
);
-- Requesters list their own cases, operators all or by status; both newest first.
create index "relay_case_requester_created_index" on "relay_case" ("requester_id", "created_at" desc);
create index "relay_case_status_created_index" on "relay_case" ("status", "created_at" desc);
create index "relay_case_created_index" on "relay_case" ("created_at" desc);

create table "relay_update" (
  "id" varchar(64) primary key,
  "case_reference" varchar(32) not null references "relay_case" ("reference") deferrable initially deferred,
  "sequence" int not null check ("sequence" >= 1),
  "author_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "author_handle" varchar(32) not null,
  "author_role" text not null check ("author_role" in ('agent', 'operator')),
  "visibility" text not null check ("visibility" in ('agent', 'operator')),
  "status" text null check ("status" in ('received', 'assessing', 'awaiting_agent', 'relayed', 'resolved', 'declined', 'withdrawn')),
  "body" varchar(4000) null,
  "created_at" timestamptz not null,
  constraint "relay_update_case_reference_sequence_unique" unique ("case_reference", "sequence"),
  constraint "relay_update_not_empty" check ("status" is not null or "body" is not null)
);
create index "relay_update_case_created_index" on "relay_update" ("case_reference", "created_at" desc);
`);
  }

  override down(): void {
    this.addSql('drop table if exists "relay_update", "relay_case" cascade;');
  }
}
