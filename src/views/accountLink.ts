import type { AccountLink } from '../entities/accountLink.ts';
import { iso, withFull, type View } from './view.ts';
import { named, nullableTimestamp, record, text } from './schema.ts';

/** Only ever shown to the linked agent itself (account-links and agents/me). */
export function presentAccountLink(link: AccountLink, view: View) {
  return withFull(view, { accountId: link.accountId, linkedAt: iso(link.createdAt) }, () => ({
    payload: link.payload,
    envelope: link.envelope,
    signature: link.signature,
    fingerprint: link.fingerprint,
  }));
}

export const accountLinkRecord = named(
  'AccountLink',
  record(
    { accountId: text(), linkedAt: nullableTimestamp() },
    { payload: text(), envelope: text(), signature: text(), fingerprint: text() },
  ),
);
