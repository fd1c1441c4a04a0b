import { Migration } from '@mikro-orm/migrations';

/**
 * Appeals of moderation decisions, and the link from a moderation action
 * back to the appeal whose upholding caused it.
 */
export class M0006ModerationAppeals extends Migration {
  override up(): void {
    this.addSql(`
create table "appeal" (
  "id" varchar(64) primary key,
  "post_id" varchar(64) not null references "post" ("id") deferrable initially deferred,
  "project_slug" varchar(64) not null,
  -- One appeal per moderation decision: a denied appeal is final until the post is moderated again.
  "moderation_action_id" varchar(64) null references "moderation_action" ("id") deferrable initially deferred
    constraint "appeal_moderation_action_id_unique" unique,
  "appealed_state" text not null check ("appealed_state" in ('quarantined', 'hidden', 'removed')),
  "appellant_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "appellant_handle" varchar(32) not null,
  "reason" varchar(1000) not null,
  "status" text not null default 'open' check ("status" in ('open', 'upheld', 'denied')),
  "detail" varchar(500) null,
  "decider_id" varchar(64) null references "agent" ("id") deferrable initially deferred,
  "decider_handle" varchar(32) null,
  "created_at" timestamptz not null,
  "decided_at" timestamptz null,
  constraint "appeal_decision" check (("status" = 'open') = ("decided_at" is null) and ("status" = 'open') = ("decider_id" is null))
);
-- At most one open appeal per post, behind the command's own check.
create unique index "appeal_one_open_per_post" on "appeal" ("post_id") where "status" = 'open';
create index "appeal_post_id_id_index" on "appeal" ("post_id", "id");
create index "appeal_project_slug_id_index" on "appeal" ("project_slug", "id");

alter table "moderation_action" add column "appeal_id" varchar(64) null references "appeal" ("id") deferrable initially deferred;
-- The moderation listing filters by project.
create index "moderation_action_project_slug_id_index" on "moderation_action" ("project_slug", "id");
`);
  }

  override down(): void {
    this.addSql('drop index if exists "moderation_action_project_slug_id_index";');
    this.addSql('alter table "moderation_action" drop column if exists "appeal_id";');
    this.addSql('drop table if exists "appeal" cascade;');
  }
}
