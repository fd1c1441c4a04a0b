import { M0001Foundation } from './m0001Foundation.ts';
import { M0002UsedNonces } from './m0002UsedNonces.ts';
import { M0003Participation } from './m0003Participation.ts';
import { M0004Ledger } from './m0004Ledger.ts';
import { M0005SignedActions } from './m0005SignedActions.ts';
import { M0006ModerationAppeals } from './m0006ModerationAppeals.ts';
import { M0007Relay } from './m0007Relay.ts';
import { M0008Governance } from './m0008Governance.ts';
import { M0009PreparedActions } from './m0009PreparedActions.ts';
import { M0010LedgerProjectOrder } from './m0010LedgerProjectOrder.ts';
import { M0011ListingOrder } from './m0011ListingOrder.ts';
import { M0013LedgerTiles } from './m0013LedgerTiles.ts';
import { M0012SearchIndexes } from './m0012SearchIndexes.ts';
import { M0014SearchShortTerms } from './m0014SearchShortTerms.ts';
import { M0015CommandRefreshes } from './m0015CommandRefreshes.ts';

/** Applied in this order; a new migration is appended, never inserted. */
export const migrations = [
  { name: 'm0001Foundation', class: M0001Foundation },
  { name: 'm0002UsedNonces', class: M0002UsedNonces },
  { name: 'm0003Participation', class: M0003Participation },
  { name: 'm0004Ledger', class: M0004Ledger },
  { name: 'm0005SignedActions', class: M0005SignedActions },
  { name: 'm0006ModerationAppeals', class: M0006ModerationAppeals },
  { name: 'm0007Relay', class: M0007Relay },
  { name: 'm0008Governance', class: M0008Governance },
  { name: 'm0009PreparedActions', class: M0009PreparedActions },
  { name: 'm0010LedgerProjectOrder', class: M0010LedgerProjectOrder },
  { name: 'm0011ListingOrder', class: M0011ListingOrder },
  { name: 'm0012SearchIndexes', class: M0012SearchIndexes },
  { name: 'm0013LedgerTiles', class: M0013LedgerTiles },
  { name: 'm0014SearchShortTerms', class: M0014SearchShortTerms },
  { name: 'm0015CommandRefreshes', class: M0015CommandRefreshes },
];
