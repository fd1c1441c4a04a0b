import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The secret an Authorization header presents: Bearer, or the password of HTTP Basic (browsers prompt for it). */
function presentedSecret(header: string | undefined): string | null {
  if (!header) return null;
  const bearer = /^Bearer (\S+)$/i.exec(header);
  if (bearer?.[1]) return bearer[1];
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!basic?.[1]) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/**
 * Whether an Authorization header carries OPERATOR_TOKEN. Digests are
 * compared, so neither the token's length nor its content leaks through
 * timing. No token configured: nobody is an operator.
 */
export function isOperator(authorization: string | undefined, operatorToken: string | null): boolean {
  const secret = presentedSecret(authorization);
  if (operatorToken === null || secret === null) return false;
  return timingSafeEqual(digest(secret), digest(operatorToken));
}

export const OPERATOR_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Agora operators", charset="UTF-8"' };

export function operatorRefusal(operatorToken: string | null): string {
  return operatorToken === null
    ? 'operator surfaces are closed: OPERATOR_TOKEN is not set'
    : 'an operator credential is needed (OPERATOR_TOKEN as Bearer or Basic password)';
}
