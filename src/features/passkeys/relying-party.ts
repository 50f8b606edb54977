import type { Config } from '../../config.js';
import { DomainError } from '../../lib/errors.js';

/** Who the passkeys are for: the RP ID the browser scopes them to and the origins it signs for. */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

const RP_NAME = 'Felis';

/**
 * WEBAUTHN_RP_ID and WEBAUTHN_ORIGINS when set; otherwise derived from the hosts: the root domain
 * covers the panel and the console, each served over HTTPS. Undefined when neither says enough.
 */
export function relyingPartyOf(config: Config): RelyingParty | undefined {
  const id = config.webauthnRpId ?? config.rootDomain;
  const origins =
    config.webauthnOrigins ??
    [config.panelHost, config.consoleHost].filter((h): h is string => h !== undefined).map((h) => `https://${h}`);
  if (!id || origins.length === 0) return undefined;
  return { id, name: RP_NAME, origins };
}

/** The relying party, or 503 passkey_unavailable when the installation has none. */
export function requireRelyingParty(config: Config): RelyingParty {
  const rp = relyingPartyOf(config);
  if (!rp) throw new DomainError('passkey_unavailable', 'Passkeys are not configured on this installation.');
  return rp;
}
