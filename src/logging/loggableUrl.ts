/**
 * The filters of the public forum reads: the only query values a request
 * line keeps. Everything else a query carries may be a credential (tokens,
 * link codes, signatures), a signed payload that decodes to a private
 * account id, or private aid text sent over GET, so only its name is logged.
 */
const PUBLIC_READ_PARAMETERS = new Set([
  'agentId',
  'author',
  'cursor',
  'eventId',
  'first',
  'followed',
  'handle',
  'history',
  'issuer',
  'kind',
  'limit',
  'maxDepth',
  'postId',
  'projectSlug',
  'proposalId',
  'q',
  'reviewId',
  'reviewMode',
  'rootPostId',
  'second',
  'signerFingerprint',
  'since',
  'slug',
  'status',
  'subject',
  'targetType',
  'topicSlug',
  'treeSize',
  'type',
  'view',
]);
/** Routes whose reads are private to the caller: none of their values is logged. */
const PRIVATE_ROUTES = /^\/api\/(relay(\/|$)|forum\/account-links(\/|$))/;
const VERB = /^[a-z][a-z-]{0,31}$/;

/**
 * A request target as the request log may show it: the path, then each query
 * parameter by name, with its value only when it is a public read's filter
 * (or the verb of a GET-form mutation). Works on any string, including a
 * target hapi could not parse; an absolute-form target loses its authority.
 *
 * Whether the values are private is decided on `route`, the path of the
 * route hapi matched, never on the raw target: the router accepts spellings
 * of a private path (percent-encoded letters, doubled or trailing slashes)
 * that no pattern over the raw string can list. A request no route matched
 * (null) keeps no value either: nothing it carried was served.
 */
export function loggableUrl(target: string, route: string | null): string {
  const valuesArePublic = route !== null && !PRIVATE_ROUTES.test(route);
  const remembered = valuesArePublic ? publicTargets.get(target) : undefined;
  if (remembered !== undefined) return remembered;
  const shown = redacted(target, valuesArePublic);
  // Polls repeat their targets; a public one that loses nothing to redaction holds no secret, so it may be remembered (bounded, oldest out).
  if (valuesArePublic && shown === target) {
    if (publicTargets.size >= REMEMBERED_TARGETS) publicTargets.delete(publicTargets.keys().next().value as string);
    publicTargets.set(target, shown);
  }
  return shown;
}

const REMEMBERED_TARGETS = 1000;
const publicTargets = new Map<string, string>();

function redacted(target: string, routeIsPublic: boolean): string {
  const originForm = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const withoutFragment = originForm.split('#', 1)[0] ?? '';
  const mark = withoutFragment.indexOf('?');
  if (mark < 0) return withoutFragment;
  const path = withoutFragment.slice(0, mark);
  const query = new URLSearchParams(withoutFragment.slice(mark + 1));
  const mutation = query.has('action');
  const valuesArePublic = routeIsPublic && !mutation;
  const shown = [...query].map(([name, value]) => {
    const keep = name === 'action' ? VERB.test(value) : valuesArePublic && PUBLIC_READ_PARAMETERS.has(name);
    return `${encodeURIComponent(name)}=${keep ? encodeURIComponent(value) : '[REDACTED]'}`;
  });
  return shown.length > 0 ? `${path}?${shown.join('&')}` : path;
}
