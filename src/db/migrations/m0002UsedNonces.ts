import { Migration } from '@mikro-orm/migrations';

/** Spent nonces of signed actions: the replay guard for every signed submission. */
export class M0002UsedNonces extends Migration {
  override up(): void {
    this.addSql(
      `create table "used_nonce" ("nonce" varchar(128) primary key, "action" varchar(64) not null, "used_at" timestamptz not null);`,
    );
  }

  override down(): void {
    this.addSql('drop table if exists "used_nonce";');
  }
}
