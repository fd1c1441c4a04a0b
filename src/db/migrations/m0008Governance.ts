import { Migration } from '@mikro-orm/migrations';

/**
 * Typed governance proposals and conciliar review cases. The database
 * itself keeps the two promises of the spec: a proposal moves only along
 * its lifecycle (so it is applied at most once), and a closed review, with
 * its vote snapshot, never changes.
 */
export class M0008Governance extends Migration {
  override up(): void {
    this.addSql(`
create table "proposal" (
  "id" varchar(64) primary key,
  "project_id" varchar(64) not null references "project" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "kind" text not null check ("kind" in ('project.update', 'topic.create', 'topic.update', 'topic.review-mode', 'membership.add', 'membership.remove')),
  "change" jsonb not null check (jsonb_typeof("change") = 'object'),
  "rationale" varchar(2000) null,
  "proposer_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "proposer_handle" varchar(32) not null,
  "status" text not null default 'open' check ("status" in ('open', 'applying', 'applied', 'returned', 'failed')),
  "reason" text null,
  "created_at" timestamptz not null,
  "updated_at" timestamptz not null,
  "decided_at" timestamptz null,
  "applied_at" timestamptz null,
  constraint "proposal_decided" check (("status" = 'open') = ("decided_at" is null)),
  constraint "proposal_applied" check (("status" = 'applied') = ("applied_at" is not null)),
  constraint "proposal_reason" check (("status" in ('returned', 'failed')) = ("reason" is not null))
);
create index "proposal_project_slug_id_index" on "proposal" ("project_slug", "id");

-- The lifecycle as the only allowed moves: nothing re-enters open or applying, so no re-run can apply twice.
create function "proposal_lifecycle_guard"() returns trigger language plpgsql as $$
begin
  if new."status" is distinct from old."status" and (old."status", new."status") not in
     (('open', 'applying'), ('open', 'returned'), ('applying', 'applied'), ('applying', 'failed')) then
    raise exception 'proposal % cannot move from % to %', old."id", old."status", new."status" using errcode = 'check_violation';
  end if;
  return new;
end $$;
create trigger "proposal_lifecycle" before update on "proposal" for each row execute function "proposal_lifecycle_guard"();

create table "review_case" (
  "id" varchar(64) primary key,
  "post_id" varchar(64) not null references "post" ("id") deferrable initially deferred constraint "review_case_post_id_unique" unique,
  "project_id" varchar(64) not null references "project" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  "topic_id" varchar(64) not null references "topic" ("id") deferrable initially deferred,
  "topic_slug" varchar(64) not null,
  -- A proposal is decided by one review at most: the one adoption that can apply it.
  "proposal_id" varchar(64) null references "proposal" ("id") deferrable initially deferred constraint "review_case_proposal_id_unique" unique,
  "opened_by_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "opened_by_handle" varchar(32) not null,
  "status" text not null default 'open' check ("status" in ('open', 'closed')),
  "outcome" text null check ("outcome" in ('adopted', 'rejected', 'no-consensus')),
  "conclusion" varchar(2000) null,
  "assumptions" jsonb not null default '[]' check (jsonb_typeof("assumptions") = 'array' and jsonb_array_length("assumptions") <= 10),
  "evidence" jsonb not null default '[]' check (jsonb_typeof("evidence") = 'array' and jsonb_array_length("evidence") <= 10),
  "material_disagreements" jsonb not null default '[]'
    check (jsonb_typeof("material_disagreements") = 'array' and jsonb_array_length("material_disagreements") <= 10),
  "decider_id" varchar(64) null references "agent" ("id") deferrable initially deferred,
  "decider_handle" varchar(32) null,
  "decider_role" text null check ("decider_role" in ('owner', 'steward')),
  "vote_snapshot" jsonb null,
  "support_count" int null,
  "contest_count" int null,
  "dissent_count" int null,
  "created_at" timestamptz not null,
  "closed_at" timestamptz null,
  -- Every closure field is set exactly when the review is closed.
  constraint "review_case_closure" check (
    ("status" = 'closed') = ("closed_at" is not null) and ("status" = 'closed') = ("outcome" is not null)
    and ("status" = 'closed') = ("conclusion" is not null) and ("status" = 'closed') = ("decider_id" is not null)
    and ("status" = 'closed') = ("vote_snapshot" is not null) and ("status" = 'closed') = ("dissent_count" is not null)
  )
);
create index "review_case_project_slug_id_index" on "review_case" ("project_slug", "id");

-- A closed review, its vote snapshot and dissent included, is immutable.
create function "review_case_closed_guard"() returns trigger language plpgsql as $$
begin
  raise exception 'review case % is closed and cannot change', old."id" using errcode = 'check_violation';
end $$;
create trigger "review_case_closed" before update or delete on "review_case"
  for each row when (old."status" = 'closed') execute function "review_case_closed_guard"();
`);
  }

  override down(): void {
    this.addSql('drop table if exists "review_case", "proposal" cascade;');
    this.addSql('drop function if exists "review_case_closed_guard"(), "proposal_lifecycle_guard"();');
  }
}
