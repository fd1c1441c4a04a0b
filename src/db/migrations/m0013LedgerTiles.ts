import { Migration } from '@mikro-orm/migrations';

/**
 * Each project's Merkle tree stored as C2SP tlog-tiles entries
 * (src/ledger/tiles.ts): the root of every complete subtree of 256^level
 * leaves, level >= 1 (level 0 is ledger_event.leaf_hash). The publisher
 * adds entries as subtrees complete; this backfills the trees of events
 * published before it, in SQL alone, so existing checkpoints' roots are
 * reproduced from the same leaf hashes: every complete node, level by level
 * (sha256(0x01 || left || right)), kept where its height is a multiple of 8.
 * It runs in the migration's transaction, so an interrupted run leaves
 * nothing and runs again whole.
 */
export const backfillTreeHashes = `
do $$
declare
  h int := 0;
begin
  create temporary table tree_node (project_slug text, height int, idx bigint, hash bytea) on commit drop;
  insert into tree_node select project_slug, 0, leaf_index, leaf_hash from ledger_event where leaf_index is not null;
  create index on tree_node (height, project_slug, idx);
  loop
    insert into tree_node
      select a.project_slug, h + 1, a.idx / 2, sha256('\\x01'::bytea || a.hash || b.hash)
        from tree_node a join tree_node b on b.height = h and b.project_slug = a.project_slug and b.idx = a.idx + 1
       where a.height = h and a.idx % 2 = 0;
    exit when not found;
    h := h + 1;
  end loop;
  insert into ledger_tree_hash (project_slug, level, idx, hash)
    select project_slug, height / 8, idx, hash from tree_node where height > 0 and height % 8 = 0
    on conflict do nothing;
end $$;`;

export class M0013LedgerTiles extends Migration {
  override up(): void {
    this.addSql(`create table if not exists "ledger_tree_hash" (
      "project_slug" text not null,
      "level" smallint not null,
      "idx" bigint not null,
      "hash" bytea not null,
      constraint "ledger_tree_hash_pkey" primary key ("project_slug", "level", "idx")
    );`);
    this.addSql(backfillTreeHashes);
  }

  override down(): void {
    this.addSql('drop table if exists "ledger_tree_hash";');
  }
}
