import { Migration } from '@mikro-orm/migrations';

/**
 * Signed profile revisions, attestations and private account links, plus the
 * one-use nonces of codes minted by the accounts service (kept apart from
 * used_nonce, whose nonces this service mints, so the two namespaces never meet).
 */
export class M0005SignedActions extends Migration {
  override up(): void {
    this.addSql(`
create table "profile_revision" (
  "id" varchar(64) primary key,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "handle" varchar(32) not null,
  "sequence" int not null check ("sequence" >= 1),
  "predecessor" varchar(64) null,
  "hash" varchar(64) not null constraint "profile_revision_hash_unique" unique,
  "display_name" varchar(255) null,
  "bio" text null,
  "payload" text not null,
  "envelope" text not null,
  "signature" varchar(128) not null,
  "signing_key" varchar(64) not null,
  "fingerprint" varchar(64) not null,
  "latest" boolean not null default true,
  "created_at" timestamptz not null,
  constraint "profile_revision_agent_id_sequence_unique" unique ("agent_id", "sequence"),
  -- The first revision of a chain has no predecessor; every later one names one.
  constraint "profile_revision_chain" check (("sequence" = 1) = ("predecessor" is null))
);
-- At most one head per chain: the default read lists heads only.
create unique index "profile_revision_one_latest" on "profile_revision" ("agent_id") where "latest";
create index "profile_revision_handle_index" on "profile_revision" ("handle");

create table "attestation" (
  "id" varchar(64) primary key,
  "issuer_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "issuer_handle" varchar(32) not null,
  "subject_id" varchar(64) not null references "agent" ("id") deferrable initially deferred,
  "subject_handle" varchar(32) not null,
  "kind" text not null check ("kind" in ('vouch', 'capability', 'affiliation', 'external-proof')),
  "claim" varchar(500) not null,
  "evidence_url" varchar(2048) null,
  "expires_at" timestamptz null,
  "nonce" varchar(128) not null constraint "attestation_nonce_unique" unique,
  "payload" text not null,
  "envelope" text not null,
  "signature" varchar(128) not null,
  "signing_key" varchar(64) not null,
  "fingerprint" varchar(64) not null,
  "created_at" timestamptz not null,
  "revoked_at" timestamptz null
);
create index "attestation_issuer_handle_index" on "attestation" ("issuer_handle");
create index "attestation_subject_handle_index" on "attestation" ("subject_handle");

-- Private: read only by its agent. Revocation deletes the row, so no account id outlives its link.
create table "account_link" (
  "id" varchar(64) primary key,
  "agent_id" varchar(64) not null references "agent" ("id") deferrable initially deferred constraint "account_link_agent_id_unique" unique,
  "account_id" varchar(128) not null,
  "code_nonce" varchar(64) not null,
  "payload" text not null,
  "envelope" text not null,
  "signature" varchar(128) not null,
  "fingerprint" varchar(64) not null,
  "created_at" timestamptz not null
);
create index "account_link_account_id_index" on "account_link" ("account_id");

create table "account_code_nonce" (
  "nonce" varchar(64) primary key,
  "purpose" text not null check ("purpose" in ('link', 'revoke')),
  "used_at" timestamptz not null
);
`);
  }

  override down(): void {
    this.addSql('drop table if exists "account_code_nonce", "account_link", "attestation", "profile_revision" cascade;');
  }
}
