/**
 * The pages' own client code: small plain scripts, each loaded by the pages that need it (with the
 * page's nonce). Every page works without them (forms post to the page routes); they add what only
 * a browser can do: the live console (EventSource), passkeys (the kept @simplewebauthn/browser,
 * loaded as its UMD bundle), the usage chart (the kept uPlot), live phases, uploads in parts. They
 * call the public API (`/api/v1/...`) with the visitor's cookie, on the page's own origin.
 */

const PANEL_CSS = String.raw`
:root { --pico-font-size: 100%; }
.phase { font-weight: 600; }
.phase[data-phase="Running"] { color: #1b7f3b; }
.phase[data-phase="Starting"], .phase[data-phase="Stopping"] { color: #8a5a00; }
.phase[data-phase="Failed"] { color: #b3261e; }
.field-error { color: #b3261e; display: block; margin-top: -0.5rem; margin-bottom: 0.75rem; }
.notice { padding: 0.75rem 1rem; border-left: 4px solid #1b7f3b; background: rgba(27,127,59,0.08); }
.notice.error { border-left-color: #b3261e; background: rgba(179,38,30,0.08); }
pre.console { height: 18rem; overflow-y: auto; font-size: 0.8rem; white-space: pre-wrap; }
.actions form { display: inline-block; margin-right: 0.5rem; }
.actions button { width: auto; }
nav.tabs ul { flex-wrap: wrap; }
:focus-visible { outline: 3px solid #0b57d0 !important; outline-offset: 2px; }
table { font-size: 0.9rem; }
form.sign-out, form.sign-out button { margin: 0; }
form.sign-out button { padding: 0.25rem 0.75rem; }
.pager ul { display: flex; gap: 1rem; list-style: none; padding: 0; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

const API = String.raw`
async function felisApi(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    if (body instanceof Blob || body instanceof ArrayBuffer) {
      init.headers['Content-Type'] = 'application/octet-stream';
      init.body = body;
    } else {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
  }
  const res = await fetch('/api/v1' + path, init);
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { json = null; }
  return { status: res.status, ok: res.ok, body: json };
}
function felisSay(el, text, isError) {
  if (!el) return;
  el.textContent = text;
  el.hidden = false;
  el.className = isError ? 'notice error' : 'notice';
}
`;

/** The live console: the stream of log lines, and commands sent without leaving the page. */
const CONSOLE_JS = API + String.raw`
(() => {
  const out = document.getElementById('console-out');
  if (!out) return;
  const add = (line) => {
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    out.append(line + '\n');
    if (atEnd) out.scrollTop = out.scrollHeight;
  };
  // The stream answers only while the server runs: it opens once the shown phase says so.
  const phase = document.getElementById('server-phase');
  let source = null;
  const follow = () => {
    if (source || phase?.textContent !== 'Running') return;
    source = new EventSource(out.dataset.stream);
    source.onmessage = (e) => add(e.data);
    source.addEventListener('revoked', () => source.close());
  };
  follow();
  if (phase) new MutationObserver(follow).observe(phase, { childList: true, characterData: true, subtree: true });
  const form = document.getElementById('command-form');
  form?.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = form.querySelector('input[name=command]');
    const status = document.getElementById('command-status');
    const answer = await felisApi('POST', '/servers/' + encodeURIComponent(form.dataset.server) + '/command', { command: input.value });
    if (answer.ok) {
      add('> ' + input.value);
      if (answer.body.output) add(answer.body.output);
      input.value = '';
      status.hidden = true;
    } else {
      felisSay(status, answer.body?.error?.message ?? 'The command failed.', true);
    }
  });
})();
`;

/** Phases and players that follow the servers without a reload. */
const LIVE_JS = API + String.raw`
(() => {
  const rows = document.querySelectorAll('[data-live-server]');
  if (rows.length === 0) return;
  const show = (row, s) => {
    const phase = row.querySelector('.phase');
    if (phase && s.phase && phase.textContent !== s.phase) { phase.textContent = s.phase; phase.dataset.phase = s.phase; }
    const players = row.querySelector('.players');
    if (players) players.textContent = s.playersOnline + ' / ' + s.playersMax;
  };
  // One read a round: a server's own status on its page, the whole list on the list pages.
  const refresh = async () => {
    if (rows.length === 1 && !rows[0].closest('tbody')) {
      const answer = await felisApi('GET', '/servers/' + encodeURIComponent(rows[0].dataset.liveServer) + '/status');
      if (answer.ok) show(rows[0], answer.body);
      return;
    }
    const answer = await felisApi('GET', '/me/servers');
    if (!answer.ok) return;
    const byName = new Map(answer.body.servers.map((s) => [s.name, s]));
    for (const row of rows) if (byName.has(row.dataset.liveServer)) show(row, byName.get(row.dataset.liveServer));
  };
  setInterval(refresh, 2000);
})();
`;

/** Passkeys: sign in with one, and add one to the account (the kept browser library). */
const PASSKEY_JS = API + String.raw`
(() => {
  const lib = window.SimpleWebAuthnBrowser;
  const status = document.getElementById('passkey-status');
  const signIn = document.getElementById('passkey-sign-in');
  signIn?.addEventListener('click', async () => {
    try {
      const begin = await felisApi('POST', '/auth/passkey/login/discoverable/begin', {});
      if (!begin.ok) return felisSay(status, begin.body?.error?.message ?? 'Passkeys are not available.', true);
      const cred = await lib.startAuthentication({ optionsJSON: begin.body.publicKey });
      const assertion = { id: cred.id, rawId: cred.rawId, type: cred.type, response: {
        clientDataJSON: cred.response.clientDataJSON, authenticatorData: cred.response.authenticatorData,
        signature: cred.response.signature, userHandle: cred.response.userHandle ?? null } };
      const finish = await felisApi('POST', '/auth/passkey/login/discoverable/finish', { login_id: begin.body.login_id, assertion });
      if (!finish.ok) return felisSay(status, finish.body?.error?.message ?? 'The passkey was not accepted.', true);
      location.assign('/');
    } catch (err) {
      felisSay(status, 'The passkey sign-in was cancelled or failed: ' + err.message, true);
    }
  });
  const add = document.getElementById('passkey-add');
  add?.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const begin = await felisApi('POST', '/account/passkey/register/begin');
      if (!begin.ok) return felisSay(status, begin.body?.error?.message ?? 'A passkey cannot be added now.', true);
      const cred = await lib.startRegistration({ optionsJSON: begin.body });
      const attestation = { id: cred.id, rawId: cred.rawId, type: cred.type, response: {
        clientDataJSON: cred.response.clientDataJSON, attestationObject: cred.response.attestationObject,
        transports: cred.response.transports } };
      const name = add.querySelector('input[name=name]').value || 'Passkey';
      const finish = await felisApi('POST', '/account/passkey/register/finish', { name, attestation });
      if (!finish.ok) return felisSay(status, finish.body?.error?.message ?? 'The passkey was not saved.', true);
      location.assign('/account?done=' + encodeURIComponent('Passkey added.'));
    } catch (err) {
      felisSay(status, 'Adding the passkey was cancelled or failed: ' + err.message, true);
    }
  });
})();
`;

/** A server's usage history as a chart (the kept uPlot). */
const CHART_JS = API + String.raw`
(() => {
  const box = document.getElementById('usage-chart');
  if (!box) return;
  felisApi('GET', '/servers/' + encodeURIComponent(box.dataset.server) + '/usage?range=24h').then((answer) => {
    if (!answer.ok) { box.textContent = 'No usage history.'; return; }
    const points = answer.body.points;
    if (points.length === 0) { box.textContent = 'No usage recorded yet.'; return; }
    const data = [points.map((p) => Date.parse(p.at) / 1000), points.map((p) => p.players_avg), points.map((p) => p.memory_mib)];
    new uPlot({ width: Math.min(box.clientWidth || 600, 900), height: 220, series: [{}, { label: 'players', stroke: '#0b57d0' }, { label: 'memory MiB', stroke: '#1b7f3b', scale: 'mib' }], axes: [{}, {}, { scale: 'mib', side: 1 }] }, data, box);
  });
})();
`;

/** A file sent in parts: a session, each part at its offset, then the commit. */
const UPLOAD_JS = API + String.raw`
(() => {
  const form = document.getElementById('upload-form');
  if (!form) return;
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const status = document.getElementById('upload-status');
    const file = form.querySelector('input[type=file]').files[0];
    if (!file) return felisSay(status, 'Choose a file first.', true);
    const dir = form.dataset.dir;
    const base = '/servers/' + encodeURIComponent(form.dataset.server) + '/files/uploads';
    const path = (dir ? dir + '/' : '') + file.name;
    const begin = await felisApi('POST', base + '?path=' + encodeURIComponent(path), { size: file.size });
    if (!begin.ok) return felisSay(status, begin.body?.error?.message ?? 'The upload cannot start.', true);
    const step = Math.max(1, Math.min(begin.body.part_max_bytes, Number(form.dataset.part) || begin.body.part_max_bytes));
    for (let offset = 0; offset < file.size; offset += step) {
      const part = await felisApi('PUT', base + '/' + begin.body.id + '?offset=' + offset, file.slice(offset, offset + step));
      if (!part.ok) return felisSay(status, part.body?.error?.message ?? 'A part was refused.', true);
      felisSay(status, 'Sent ' + Math.min(file.size, offset + step) + ' of ' + file.size + ' bytes…', false);
    }
    const commit = await felisApi('POST', base + '/' + begin.body.id + '/commit', {});
    if (!commit.ok) return felisSay(status, commit.body?.error?.message ?? 'The upload could not be completed.', true);
    location.assign(location.pathname + '?tab=files&dir=' + encodeURIComponent(dir) + '&done=' + encodeURIComponent('Uploaded ' + path));
  });
})();
`;

/**
 * A build's log as it is written (EventSource). The stream ends once the build is over and every
 * line went out; the browser would reconnect (resuming after its last line), so an ended stream
 * asks the build's status and stops following a build that is over.
 */
const BUILD_LOG_JS = API + String.raw`
(() => {
  const out = document.getElementById('build-log');
  if (!out) return;
  const status = document.getElementById('build-status');
  const note = document.getElementById('build-log-status');
  const source = new EventSource(out.dataset.stream);
  source.onmessage = (e) => {
    const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    out.append(e.data + '\n');
    if (atEnd) out.scrollTop = out.scrollHeight;
  };
  source.addEventListener('revoked', () => { source.close(); if (note) note.textContent = 'Access to this log ended.'; });
  source.onerror = async () => {
    const answer = await felisApi('GET', '/images/build/' + encodeURIComponent(out.dataset.build));
    if (!answer.ok) return;
    if (status) status.textContent = answer.body.status;
    if (['succeeded', 'failed', 'cancelled'].includes(answer.body.status)) {
      source.close();
      if (note) note.textContent = 'The build has ended (' + answer.body.status + '); its whole log is above.';
    }
  };
})();
`;

/**
 * A secret shown once (an API key, a webhook's signing secret): a copy button, shown only when
 * the script runs; a browser that refuses the clipboard gets the text selected instead.
 */
const COPY_JS = API + String.raw`
(() => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const input = document.getElementById(button.dataset.copy);
    const status = document.getElementById(button.dataset.copy + '-status');
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(input.value);
        felisSay(status, 'Copied.', false);
      } catch {
        input.focus();
        input.select();
        felisSay(status, 'The browser did not allow copying: the text is selected, copy it with Ctrl+C.', true);
      }
    });
  }
})();
`;

export const CLIENT_SCRIPTS: Record<string, string> = {
  'copy.js': COPY_JS,
  'panel.css': PANEL_CSS,
  'console.js': CONSOLE_JS,
  'live.js': LIVE_JS,
  'passkey.js': PASSKEY_JS,
  'chart.js': CHART_JS,
  'upload.js': UPLOAD_JS,
  'buildlog.js': BUILD_LOG_JS,
};
