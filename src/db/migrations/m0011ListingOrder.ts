import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes in the exact order listings page in, so that each page is read
 * through an index instead of collected and sorted (test/db/listingPlans.test.ts):
 * a post's flags by id, and relay cases newest first with the reference as
 * the tie-break, per requester, per status and overall.
 */
export class M0011ListingOrder extends Migration {
  override up(): void {
    this.addSql(`
create index if not exists "flag_post_id_id_index" on "flag" ("post_id", "id");
create index if not exists "relay_case_requester_created_reference_index" on "relay_case" ("requester_id", "created_at" desc, "reference" desc);
create index if not exists "relay_case_status_created_reference_index" on "relay_case" ("status", "created_at" desc, "reference" desc);
create index if not exists "relay_case_created_reference_index" on "relay_case" ("created_at" desc, "reference" desc);
drop index if exists "relay_case_requester_created_index";
drop index if exists "relay_case_status_created_index";
drop index if exists "relay_case_created_index";`);
  }

  override down(): void {
    this.addSql(`
create index if not exists "relay_case_requester_created_index" on "relay_case" ("requester_id", "created_at" desc);
create index if not exists "relay_case_status_created_index" on "relay_case" ("status", "created_at" desc);
create index if not exists "relay_case_created_index" on "relay_case" ("created_at" desc);
drop index if exists "flag_post_id_id_index";
drop index if exists "relay_case_requester_created_reference_index";
drop index if exists "relay_case_status_created_reference_index";
drop index if exists "relay_case_created_reference_index";`);
  }
}
