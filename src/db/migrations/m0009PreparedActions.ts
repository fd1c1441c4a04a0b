import { Migration } from '@mikro-orm/migrations';

/**
 * Prepared signed actions whose nonce alone must identify the message:
 * attestation create may send the spec's fields (nonce and signature) instead
 * of the prepared payload and envelope. Rows die with their envelope.
 */
export class M0009PreparedActions extends Migration {
  override up(): void {
    this.addSql(`create table "prepared_action" (
  "nonce" varchar(128) primary key,
  "action" varchar(64) not null,
  "agent_id" varchar(64) not null,
  "payload" text not null,
  "envelope" text not null,
  "expires_at" timestamptz not null
);`);
    this.addSql('create index "prepared_action_expires_at_index" on "prepared_action" ("expires_at");');
  }

  override down(): void {
    this.addSql('drop table if exists "prepared_action";');
  }
}
