/**
 * What the original panel does in the browser for passkeys (panel/src/lib/api.ts, passkey.ts):
 * JSON calls to the API with the cookie, the WebAuthn ceremonies through navigator.credentials,
 * and the assertion and attestation shapes it sends (base64url, no clientExtensionResults).
 * Installed into the page as `window.panel`.
 */
export const PANEL_SCRIPT = String.raw`
(() => {
  async function api(method, path, body) {
    const init = { method, credentials: 'include', headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch('/api/v1' + path, init);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  function assertionOf(cred) {
    const json = cred.toJSON();
    return {
      id: json.id,
      rawId: json.rawId,
      type: json.type,
      response: {
        clientDataJSON: json.response.clientDataJSON,
        authenticatorData: json.response.authenticatorData,
        signature: json.response.signature,
        userHandle: json.response.userHandle ?? null,
      },
    };
  }

  async function getAssertion(options) {
    const publicKey = PublicKeyCredential.parseRequestOptionsFromJSON(options);
    return assertionOf(await navigator.credentials.get({ publicKey }));
  }

  async function register(name) {
    const begin = await api('POST', '/account/passkey/register/begin');
    if (begin.status !== 200) return { step: 'begin', ...begin };
    const publicKey = PublicKeyCredential.parseCreationOptionsFromJSON(begin.body);
    const cred = await navigator.credentials.create({ publicKey });
    const json = cred.toJSON();
    const attestation = {
      id: json.id,
      rawId: json.rawId,
      type: json.type,
      response: {
        clientDataJSON: json.response.clientDataJSON,
        attestationObject: json.response.attestationObject,
        transports: json.response.transports,
      },
    };
    return { step: 'finish', options: begin.body, ...(await api('POST', '/account/passkey/register/finish', { name, attestation })) };
  }

  async function loginByEmail(email) {
    const begin = await api('POST', '/auth/passkey/login/begin', { email });
    if (begin.status !== 200) return { step: 'begin', ...begin };
    return { step: 'finish', options: begin.body, ...(await api('POST', '/auth/passkey/login/finish', { email, assertion: await getAssertion(begin.body) })) };
  }

  async function loginDiscoverable() {
    // The panel sends {} with the JSON type; the door reads no body.
    const begin = await api('POST', '/auth/passkey/login/discoverable/begin', {});
    if (begin.status !== 200) return { step: 'begin', ...begin };
    const assertion = await getAssertion(begin.body.publicKey);
    const finish = await api('POST', '/auth/passkey/login/discoverable/finish', { login_id: begin.body.login_id, assertion });
    return { step: 'finish', options: begin.body, userHandle: assertion.response.userHandle, ...finish };
  }

  async function reauthWithPasskey() {
    const begin = await api('POST', '/account/reauth/passkey/begin');
    if (begin.status !== 200) return { step: 'begin', ...begin };
    return { step: 'finish', ...(await api('POST', '/account/reauth/passkey/finish', { assertion: await getAssertion(begin.body.publicKey) })) };
  }

  window.panel = { api, register, loginByEmail, loginDiscoverable, reauthWithPasskey };
})();
`;
