import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, linkAccount } from '../helpers/sessions.js';
import { startPanelRig, type PanelRig } from './panel-harness.js';

/** A .zip holding one stored (uncompressed) file, as any zip tool writes it. */
function zipOf(name: string, text: string): Buffer {
  const data = Buffer.from(text);
  const file = Buffer.from(name);
  const crc = crc32(data);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(file.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(data.length, 24);
  central.writeUInt16LE(file.length, 28);
  const localSize = local.length + file.length + data.length;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(central.length + file.length, 12);
  end.writeUInt32LE(localSize, 16);
  return Buffer.concat([local, file, data, central, file, end]);
}

/**
 * The pages' write forms in a real Chromium on the default hosts, CSP on: the file editor, the
 * players tab, the staff pages' forms (each posting through the public API and showing its
 * documented refusal beside the field it concerns), a build's live log, and paging. Each page is
 * checked clean (no console error, no failed request, nothing serious for axe-core).
 */
describe('the panel’s forms in a real browser', { timeout: 400_000 }, () => {
  let rig: PanelRig;
  /** A refused form answers its page with the API's status: that answer is the point, not a fault. */
  const refusalSeen = () => rig.problems.splice(0);

  beforeAll(async () => {
    rig = await startPanelRig();
    await rig.page.goto(`${rig.panel}/`);
    await rig.becomeOwner('owner@example.com');
  }, 180_000);
  afterAll(async () => {
    await rig?.close();
  });

  // First: the owner's saves need a proof of identity within 5 minutes, which the setup token gave.
  it('saves the owner’s policies and the maintenance window; each refusal shown beside its field', async () => {
    const { page, consoleHost } = rig;
    await page.goto(`${consoleHost}/staff/wake-policy`);
    await rig.pageIsClean('wake policy');
    await page.fill('#wp-max', '20000');
    await page.press('#wp-max', 'Enter');
    expect(await page.locator('#wp-max-error').textContent()).toBeTruthy();
    refusalSeen();
    await rig.pageIsClean('wake policy refused');
    await page.fill('#wp-max', '5');
    await page.press('#wp-max', 'Enter');
    expect(await rig.noticeText()).toBe('Wake policy saved.');
    expect(await page.inputValue('#wp-max')).toBe('5');

    await page.goto(`${consoleHost}/staff/entry-policy`);
    await rig.pageIsClean('entry policy');
    await page.selectOption('#ep-mode', 'direct');
    await page.fill('#ep-default', 'no-such-server');
    await page.click('form[action="/staff/entry-policy/do/save"] button');
    expect(await page.locator('main [role=alert], main .field-error').first().textContent()).toBeTruthy();
    refusalSeen();
    await page.selectOption('#ep-mode', 'lobby');
    await page.fill('#ep-default', '');
    await page.check('#ep-link');
    await page.click('form[action="/staff/entry-policy/do/save"] button');
    expect(await rig.noticeText()).toBe('Entry policy saved.');
    expect(await page.isChecked('#ep-link')).toBe(true);

    await page.goto(`${consoleHost}/staff/updates`);
    await rig.pageIsClean('updates');
    await page.fill('#uw-start', '2030-01-01T02:00');
    await page.click('form[action="/staff/updates/do/window"] button');
    expect(await page.locator('form[action="/staff/updates/do/window"] [role=alert], form[action="/staff/updates/do/window"] .field-error').first().textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#uw-start', '2030-01-01T02:00');
    await page.fill('#uw-end', '2030-01-01T04:00');
    await page.click('form[action="/staff/updates/do/window"] button');
    expect(await rig.noticeText()).toBe('Maintenance window saved.');
    const window = (await rig.api('GET', '/updates/window')).body as { start: string; end: string };
    expect([Date.parse(window.start), Date.parse(window.end)]).toEqual([Date.parse('2030-01-01T02:00:00Z'), Date.parse('2030-01-01T04:00:00Z')]);

    await page.goto(`${consoleHost}/staff/session-sources`);
    await rig.pageIsClean('session sources');
    await page.fill('#ss-tag-0', 'Bad Tag!');
    await page.fill('#ss-prefix-0', 'x');
    await page.fill('#ss-url-0', 'not a url');
    await page.click('form[action="/staff/session-sources/do/save"] button');
    expect(await page.locator('form[action="/staff/session-sources/do/save"] .field-error, form[action="/staff/session-sources/do/save"] [role=alert]').first().textContent()).toBeTruthy();
    refusalSeen();
    await rig.pageIsClean('session sources refused');

    await page.goto(`${consoleHost}/staff/node-tasks`);
    await rig.pageIsClean('node tasks');
    await page.fill('#nt-name', 'node-a');
    await page.click('form[action="/staff/node-tasks/do/start"] button');
    // Not confirmed: the API's 400 names confirmMaintenance, shown beside its box.
    expect(await page.locator('#nt-confirm-error').textContent()).toMatch(/confirmMaintenance/);
    refusalSeen();
    await rig.pageIsClean('node tasks refused');
    await page.goto(`${consoleHost}/staff/db-backup`);
    await rig.pageIsClean('database backup');
  });

  it('edits, creates, unzips and deletes the files of a stopped server, by keyboard where a person would', async () => {
    const { page, consoleHost } = rig;
    expect((await rig.api('POST', '/servers', { name: 'files', subdomain: 'files' })).status).toBe(201);
    const tab = `${consoleHost}/servers/files?tab=files`;
    await page.goto(tab);
    await rig.pageIsClean('files tab');

    // A new file: a bad name is refused beside its field; a good one opens the editor.
    await page.fill('#nf-name', '../outside.txt');
    await page.click('form[action="/servers/files/do/new-file"] button');
    expect(await page.locator('#nf-name-error').textContent()).toBeTruthy();
    expect(await page.getAttribute('#nf-name', 'aria-invalid')).toBe('true');
    refusalSeen();
    await page.fill('#nf-name', 'notes.txt');
    await page.press('#nf-name', 'Enter');
    await page.waitForURL(/edit=notes\.txt/);
    expect(await rig.noticeText()).toBe('Created notes.txt.');
    await rig.pageIsClean('editor of an empty file');

    // Typed and saved by keyboard: Tab from the text to Save, Enter.
    await page.focus('#editor-content');
    await page.keyboard.type('motd=Hello\nmax-players=10\n');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save');
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=Saved/);
    expect(await page.inputValue('#editor-content')).toBe('motd=Hello\nmax-players=10\n');
    // The file as the API reads it: LF line ends kept, not the text area's CRLF.
    const read = await rig.api('GET', '/servers/files/file?path=notes.txt');
    expect(Buffer.from(read.body.content, 'base64').toString()).toBe('motd=Hello\nmax-players=10\n');

    // Someone else changes it meanwhile: the stale save is refused beside the text, nothing lost.
    const changed = await rig.api('PUT', '/servers/files/file?path=notes.txt', { content: Buffer.from('motd=Theirs\n').toString('base64'), expect_sha256: read.body.sha256 });
    expect(changed.status).toBe(200);
    await page.fill('#editor-content', 'motd=Mine\n');
    await page.click('#editor-form button[type=submit]');
    expect(await page.locator('#editor-content-error').textContent()).toMatch(/changed/i);
    expect(await page.inputValue('#editor-content')).toBe('motd=Mine\n');
    refusalSeen();
    await rig.pageIsClean('editor after a refused save');
    const after = await rig.api('GET', '/servers/files/file?path=notes.txt');
    expect(Buffer.from(after.body.content, 'base64').toString()).toBe('motd=Theirs\n');

    // A folder; an uploaded .zip unzipped into the files it holds; a file deleted.
    await page.goto(tab);
    await page.fill('#md-name', 'plugins');
    await page.click('form[action="/servers/files/do/mkdir"] button');
    expect(await rig.noticeText()).toBe('Made the folder plugins.');
    await page.setInputFiles('#upload-file', { name: 'pack.zip', mimeType: 'application/zip', buffer: zipOf('inside.txt', 'from the zip') });
    await page.click('#upload-form button');
    await page.waitForURL(/done=Uploaded/);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('main table').first().textContent();
      }, { timeout: 30_000 })
      .toContain('pack.zip');
    await page.click('form[action="/servers/files/do/unzip"] button');
    expect(await rig.noticeText()).toMatch(/Unzipping pack\.zip/);
    await expect
      .poll(async () => {
        await page.reload();
        return page.locator('main table').first().textContent();
      }, { timeout: 30_000 })
      .toContain('inside.txt');
    await rig.pageIsClean('files after an unzip');
    await page.click('button:text-is("Delete notes.txt")');
    expect(await rig.noticeText()).toBe('Deleted notes.txt.');
    expect(await page.locator('main table').first().textContent()).not.toContain('notes.txt');
    expect(await page.locator('main table').first().textContent()).toContain('plugins/');
    await rig.pageIsClean('files after a delete');
  });

  it('bans, pardons, kicks and makes operators on a running server; refusals beside the player field', async () => {
    const { page, consoleHost } = rig;
    expect((await rig.api('POST', '/servers', { name: 'players', subdomain: 'players' })).status).toBe(201);
    await page.goto(`${consoleHost}/servers/players?tab=players`);
    await page.click('form[action="/servers/players/power"] button[value=wake]');
    await page.waitForFunction(() => document.getElementById('server-phase')?.textContent === 'Running', undefined, { timeout: 60_000 });
    await page.goto(`${consoleHost}/servers/players?tab=players`);
    await rig.pageIsClean('players tab');

    await page.fill('#ban-player', 'Griefer');
    await page.click('form[action="/servers/players/do/ban"] button[value=ban]');
    expect(await rig.noticeText()).toBe('Banned Griefer.');
    expect(await page.locator('#ban-list').textContent()).toContain('Griefer');
    await page.fill('#ban-player', 'Griefer');
    await page.click('form[action="/servers/players/do/ban"] button[value=pardon]');
    expect(await rig.noticeText()).toBe('Pardoned Griefer.');
    expect(await page.locator('#ban-list').textContent()).not.toContain('Griefer');

    // A name the game cannot have is refused beside the field, before any command is built.
    await page.fill('#op-player', 'bad name;stop');
    await page.click('form[action="/servers/players/do/op"] button[value=op]');
    expect(await page.locator('#op-player-error').textContent()).toMatch(/1 to 16/);
    refusalSeen();
    await page.fill('#op-player', 'Steve');
    await page.click('form[action="/servers/players/do/op"] button[value=op]');
    expect(await rig.noticeText()).toBe('Made an operator: Steve.');
    // LuckPerms: a group name the API refuses, beside its field; a permission granted.
    await page.fill('#grp-player', 'Steve');
    await page.fill('#grp-group', 'bad group!');
    await page.click('form[action="/servers/players/do/group"] button[type=submit]');
    expect(await page.locator('#grp-group-error').textContent()).toMatch(/group/);
    expect(await page.inputValue('#grp-player')).toBe('Steve');
    refusalSeen();
    await page.fill('#lp-player', 'Steve');
    await page.fill('#lp-node', 'essentials.fly');
    await page.click('form[action="/servers/players/do/permission"] button[type=submit]');
    expect(await rig.noticeText()).toBe('essentials.fly granted for Steve.');
    // The API refuses a bad kick name beside its field too (its 400 names `player`).
    await page.fill('#kick-player', 'x'.repeat(17));
    await page.click('form[action="/servers/players/do/kick"] button');
    expect(await page.locator('#kick-player-error').textContent()).toMatch(/player/);
    refusalSeen();
    await page.fill('#al-uuid', 'not-a-uuid');
    await page.click('form[action="/servers/players/do/allowlist"] button');
    expect(await page.locator('#al-uuid-error').textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#al-uuid', '069a79f4-44e9-4726-a5be-fca90e38aaf5');
    await page.click('form[action="/servers/players/do/allowlist"] button');
    expect(await rig.noticeText()).toMatch(/may wake it/);
    expect(await page.locator('main table').first().textContent()).toContain('069a79f4-44e9-4726-a5be-fca90e38aaf5');
    await rig.pageIsClean('players after the changes');
    await page.click('form[action="/servers/players/power"] button[value=stop]');
  });

  it('whitelists images, adds webhooks (their secret shown once), decides submissions, sets quotas, and pages through users', async () => {
    const { page, consoleHost } = rig;
    await page.goto(`${consoleHost}/staff/images`);
    await page.fill('#img-ref', 'not a reference');
    await page.click('form[action="/staff/images/do/add"] button');
    expect(await page.locator('#img-ref-error').textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#img-ref', 'ghcr.io/felis-test/paper:1.21');
    await page.click('form[action="/staff/images/do/add"] button');
    expect(await rig.noticeText()).toMatch(/Whitelisted/);
    // Whitelisted twice: the API's 409 beside the field.
    await page.fill('#img-ref', 'ghcr.io/felis-test/paper:1.21');
    await page.click('form[action="/staff/images/do/add"] button');
    expect(await page.locator('#img-ref-error').textContent()).toBeTruthy();
    refusalSeen();
    await page.locator('tr', { hasText: 'felis-test/paper:1.21' }).locator('button:has-text("Disable")').click();
    expect(await rig.noticeText()).toMatch(/Disabled/);
    const images = (await rig.api('GET', '/images')).body.images as Array<{ image_ref: string; enabled: boolean }>;
    expect(images.find((i) => i.image_ref.includes('felis-test/paper:1.21'))?.enabled).toBe(false);
    await rig.pageIsClean('images');

    await page.goto(`${consoleHost}/staff/webhooks`);
    await page.fill('#wh-name', 'alerts');
    await page.fill('#wh-url', 'ftp://example.com/hook');
    await page.click('form[action="/staff/webhooks/do/add"] button');
    expect(await page.locator('#wh-url-error').textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#wh-url', 'https://example.com/hook');
    await page.check('#wh-ev-backup-failed');
    await page.click('form[action="/staff/webhooks/do/add"] button');
    const secret = await page.inputValue('#secret-once');
    expect(secret.length).toBeGreaterThan(16);
    await rig.pageIsClean('webhook secret');
    await page.goto(`${consoleHost}/staff/webhooks`);
    expect(await page.content()).not.toContain(secret);
    await page.click('button:has-text("Test alerts")');
    expect(await rig.noticeText()).toBe('A test delivery is queued.');
    await rig.pageIsClean('webhooks');

    // Two submissions: one approved without a context is refused (409) and says so; one rejected.
    for (const name of ['Pack A', 'Pack B']) expect((await rig.api('POST', '/me/submissions', { display_name: name })).status).toBe(201);
    await page.goto(`${consoleHost}/staff/submissions`);
    await rig.pageIsClean('submissions lane');
    await page.click('button:has-text("Approve Pack A")');
    expect(await page.locator('main .notice.error').textContent()).toBeTruthy();
    refusalSeen();
    const row = page.locator('tr', { hasText: 'Pack B' });
    await row.locator('input[name=reason]').fill('Not a modpack.');
    await row.locator('button:has-text("Reject")').click();
    expect(await rig.noticeText()).toBe('Rejected.');
    expect(await page.locator('tr', { hasText: 'Pack B' }).textContent()).toContain('rejected');

    // Users in pages of 50, a new account, its quota.
    for (let i = 0; i < 55; i++) await createUser(rig.service.deps, { username: `paged_${String(i).padStart(2, '0')}` });
    await page.goto(`${consoleHost}/staff/users`);
    await rig.pageIsClean('users page 1');
    expect(await page.locator('main table tbody tr').count()).toBe(50);
    await page.click('a[rel=next]');
    expect(new URL(page.url()).searchParams.get('offset')).toBe('50');
    expect(await page.locator('main table tbody tr').count()).toBeGreaterThan(0);
    await rig.pageIsClean('users page 2');
    await page.fill('#u-username', 'alice');
    await page.click('form[action="/staff/users/do/create"] button');
    expect(await page.locator('h1').textContent()).toBe('User alice');
    await page.fill('#q-servers', 'many');
    await page.click('form[action="/staff/user/do/quotas"] button');
    expect(await page.locator('#q-servers-error').textContent()).toMatch(/max_servers/);
    refusalSeen();
    await page.fill('#q-servers', '3');
    await page.click('form[action="/staff/user/do/quotas"] button');
    expect(await rig.noticeText()).toBe('Quota saved.');
    expect(await page.inputValue('#q-servers')).toBe('3');
    await rig.pageIsClean('user detail');

    await page.goto(`${consoleHost}/staff/audit?action=webhook`);
    await rig.pageIsClean('audit log filtered');
  });

  it('starts a build and follows its log live until it ends', async () => {
    const { page, consoleHost } = rig;
    await page.goto(`${consoleHost}/staff/builds`);
    await rig.pageIsClean('builds');
    await page.fill('#b-image', 'example.com/felis/custom:1');
    await page.click('form[action="/staff/builds/do/start"] button');
    // No Dockerfile and no context: the API's 400 is shown in the form.
    expect(await page.locator('form[action="/staff/builds/do/start"] [role=alert], form[action="/staff/builds/do/start"] .field-error').first().textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#b-image', 'example.com/felis/custom:1');
    await page.fill('#b-dockerfile', 'FROM eclipse-temurin:21-jre\nRUN echo hello\n');
    await page.click('form[action="/staff/builds/do/start"] button');
    await page.waitForURL(/\/staff\/builds\/[^/?]+\?done=/);
    // The log arrives over the stream, and the page notices the end.
    await page.waitForFunction(() => (document.getElementById('build-log')?.textContent ?? '').trim().length > 0, undefined, { timeout: 60_000 });
    await page.waitForFunction(() => /has ended/.test(document.getElementById('build-log-status')?.textContent ?? ''), undefined, { timeout: 60_000 });
    expect(['succeeded', 'failed']).toContain(await page.locator('#build-status').textContent());
    await rig.pageIsClean('build page');
    await page.goto(`${consoleHost}/staff/builds`);
    expect(await page.locator('main table').textContent()).toContain('example.com/felis/custom:1');
  });

  it('shows the server list 100 rows a page', async () => {
    const { page, consoleHost } = rig;
    const before = ((await rig.api('GET', '/me/servers')).body.servers as unknown[]).length;
    const more = 101 - before;
    for (let i = 0; i < more; i++) expect((await rig.api('POST', '/servers', { name: `paged-${i}`, subdomain: `paged-${i}` })).status).toBe(201);
    await page.goto(`${consoleHost}/servers`);
    await rig.pageIsClean('server list page 1');
    expect(await page.locator('main table tbody tr').count()).toBe(100);
    await page.click('a[rel=next]');
    expect(await page.locator('main table tbody tr').count()).toBe(1);
    expect(await page.locator('nav.pager').textContent()).toContain('101–101 of 101');
    await rig.pageIsClean('server list page 2');
  });
  /** Signs a player in on a host by e-mailed code (signing out whoever is): also the fresh proof a change asks. */
  async function signInByCode(host: string, email: string) {
    const { page } = rig;
    await page.goto(`${host}/account`);
    if (new URL(page.url()).pathname !== '/sign-in') await page.click('nav form[action="/sign-out"] button');
    await page.fill('#f-email', email);
    await page.click('form[action="/sign-in"] button');
    await page.fill('#f-code', rig.lastCode());
    await page.click('form[action="/sign-in"] button');
    expect(new URL(page.url()).pathname).not.toBe('/sign-in');
  }

  it('shares a server: members added by name with permissions, changed and removed; a member sees only what they allow, and leaves', async () => {
    const { page, consoleHost, panel } = rig;
    // A player owns the server; signing in by e-mailed code is the fresh proof sharing asks.
    await page.goto(`${consoleHost}/servers`);
    expect((await rig.api('POST', '/servers', { name: 'shared', subdomain: 'shared' })).status).toBe(201);
    for (const name of ['host', 'friend', 'pal']) await createUser(rig.service.deps, { username: name, email: `${name}@example.com`, emailVerified: true });
    const host = (await rig.api('GET', '/users?query=host')).body.users[0].id as string;
    await linkAccount(rig.service.deps, { userId: host, mcUuid: '5c3f1a2e-9d7b-4c1e-8a6f-2b4d6e8f0a1c' });
    await signInByCode(panel, 'host@example.com');
    expect((await rig.api('POST', '/servers/shared/claim')).status).toBe(200);

    await page.goto(`${panel}/servers/shared?tab=members`);
    await rig.pageIsClean('members tab, empty');
    // Someone with no account: refused beside the name, as typed.
    await page.fill('#member-user', 'nobody-here');
    await page.press('#member-user', 'Enter');
    await page.waitForURL(/\/do\/member-add$/);
    expect(await page.locator('#member-user-error').textContent()).toMatch(/No account/);
    expect(await page.inputValue('#member-user')).toBe('nobody-here');
    refusalSeen();
    await rig.pageIsClean('members tab, refused');
    // By keyboard: the name, Space on a permission's box, Enter.
    await page.fill('#member-user', 'friend');
    await page.focus('#member-add-files-read');
    await page.keyboard.press('Space');
    await page.focus('#member-user');
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=/);
    expect(await rig.noticeText()).toBe('friend is a member now.');
    expect(await page.locator('main table').first().textContent()).toContain('friend');
    await rig.pageIsClean('members tab with a member');
    // Twice (by address this time): the API's 409 beside the name.
    await page.fill('#member-user', 'friend@example.com');
    await page.click('form[action="/servers/shared/do/member-add"] button[type=submit]');
    expect(await page.locator('#member-user-error').textContent()).toMatch(/already a member/);
    refusalSeen();
    const friendId = ((await rig.api('GET', '/servers/shared/members')).body.members as Array<{ user_id: string }>)[0]!.user_id;
    await page.check(`#m-${friendId}-power`);
    await page.click(`button:text-is("Save friend's permissions")`);
    expect(await rig.noticeText()).toBe('Saved what friend may do.');
    const members = (await rig.api('GET', '/servers/shared/members')).body.members as Array<{ username: string; permissions: string[] }>;
    expect(members.map((m) => [m.username, [...m.permissions].sort()])).toEqual([['friend', ['console.read', 'files.read', 'power']]]);
    expect((await rig.api('POST', '/servers/shared/members', { user: 'pal', permissions: ['console.read'] })).status).toBe(201);

    // The member: the server marked shared, only the tabs its permissions allow, files read-only, and leaving.
    await signInByCode(panel, 'friend@example.com');
    await page.goto(`${panel}/servers`);
    expect(await page.locator('tr', { hasText: 'shared' }).textContent()).toMatch(/shared with you: console\.read, files\.read, power/);
    await rig.pageIsClean('a member’s server list');
    await page.goto(`${panel}/servers/shared`);
    expect(await page.locator('nav.tabs a').allTextContents()).toEqual(['Overview', 'Console', 'Files']);
    expect(await page.locator('[aria-label=Power] button').count()).toBe(4);
    await rig.pageIsClean('a member’s server page');
    await page.goto(`${panel}/servers/shared?tab=console`);
    expect(await page.locator('#command-form').count()).toBe(0);
    await page.goto(`${panel}/servers/shared?tab=files`);
    expect(await page.locator('#nf-name, #upload-form').count()).toBe(0);
    await rig.pageIsClean('a member’s files tab');
    // A tab its permissions do not allow is the overview.
    await page.goto(`${panel}/servers/shared?tab=members`);
    expect(await page.locator('#members-heading').count()).toBe(0);
    expect(await page.locator('#activity-heading').count()).toBe(1);
    await page.click('button:text-is("Leave this server")');
    expect(new URL(page.url()).pathname).toBe('/servers');
    expect(await rig.noticeText()).toBe('You left shared.');
    expect(await page.locator('tr', { hasText: 'shared' }).count()).toBe(0);

    // Staff, on the operator console: the server's members, one changed and removed.
    await page.goto(`${consoleHost}/servers/shared?tab=members`);
    await rig.pageIsClean('members tab for staff');
    const palId = ((await rig.api('GET', '/servers/shared/members')).body.members as Array<{ user_id: string }>)[0]!.user_id;
    await page.check(`#m-${palId}-backups-read`);
    await page.click(`button:text-is("Save pal's permissions")`);
    expect(await rig.noticeText()).toBe('Saved what pal may do.');
    await page.click('button:text-is("Remove pal")');
    expect(await rig.noticeText()).toBe('pal is no longer a member.');
    expect((await rig.api('GET', '/servers/shared/members')).body.members).toEqual([]);
    await rig.pageIsClean('members tab after a removal');

    // Its schedules: an unknown time zone refused beside its field; a daily restart added and removed.
    await page.goto(`${consoleHost}/servers/shared?tab=schedules`);
    await rig.pageIsClean('schedules tab');
    await page.fill('#sc-label', 'nightly restart');
    await page.selectOption('#sc-action', 'restart');
    await page.fill('#sc-zone', 'Mars/Olympus');
    await page.click('form[action="/servers/shared/do/schedule"] button[type=submit]');
    expect(await page.locator('#sc-zone-error').textContent()).toMatch(/timezone/);
    refusalSeen();
    await page.fill('#sc-zone', 'Europe/Berlin');
    await page.click('form[action="/servers/shared/do/schedule"] button[type=submit]');
    expect(await rig.noticeText()).toBe('Scheduled nightly restart.');
    expect(await page.locator('tr', { hasText: 'nightly restart' }).textContent()).toContain('daily at 04:00 (Europe/Berlin)');
    await rig.pageIsClean('schedules tab with a schedule');
    await page.click('button:text-is("Remove nightly restart")');
    expect(await rig.noticeText()).toBe('Removed nightly restart.');
  });

  it('makes an API key shown once (copied), uses it, and revokes it; a past expiry refused beside its field', async () => {
    const { page, panel } = rig;
    // friend signed in on the panel host by e-mailed code a moment ago: a fresh proof.
    await page.goto(`${panel}/account`);
    await rig.pageIsClean('account with API keys');
    await page.fill('#key-name', 'backup script');
    await page.fill('#key-expires', '2020-01-01T00:00');
    await page.click('form[action="/account/do/api-key"] button[type=submit]');
    expect(await page.locator('#key-expires-error').textContent()).toBeTruthy();
    expect(await page.inputValue('#key-name')).toBe('backup script');
    refusalSeen();
    await rig.pageIsClean('API key refused');
    await page.fill('#key-expires', '');
    await page.selectOption('#key-scope', 'read');
    await page.focus('#key-name');
    // The refused page has the same address: wait for the answer's own navigation.
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.locator('h1').textContent()).toBe('API key made');
    const secret = await page.inputValue('#secret-once');
    expect(secret).toMatch(/^felis_/);
    expect(await page.locator('main').textContent()).toMatch(/never again/);
    await rig.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: panel });
    await page.click('button[data-copy=secret-once]');
    // The status is written when the clipboard's write settles, after the click returns.
    await expect.poll(() => page.locator('#secret-once-status').textContent()).toBe('Copied.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await rig.pageIsClean('API key made');

    // The key acts as its user (read only), without the cookie.
    const withKey = (method: string) =>
      page.evaluate(
        async ([m, key]) => (await fetch('/api/v1/me', { method: m, credentials: 'omit', headers: { Authorization: `Bearer ${key}` } })).status,
        [method, secret] as const,
      );
    expect(await withKey('GET')).toBe(200);
    await page.goto(`${panel}/account`);
    const row = page.locator('tr', { hasText: 'backup script' });
    expect(await row.textContent()).toContain('read only');
    expect(await page.content()).not.toContain(secret);
    await rig.pageIsClean('account with a key');
    await row.locator('button:has-text("Revoke backup script")').click();
    expect(await rig.noticeText()).toMatch(/^Revoked the key backup script/);
    expect(await withKey('GET')).toBe(401);
    rig.problems.splice(0); // the 401 above is the point, shown in the console as a failed load
    await rig.pageIsClean('account after a revoke');
  });

  it('edits, links, strips the passkeys of and deletes a user; deletes a world backup; lists a webhook’s deliveries', async () => {
    const { page, consoleHost } = rig;
    const bob = await createUser(rig.service.deps, { username: 'bob' });
    await page.goto(`${consoleHost}/staff/users/${bob.id}`);
    await rig.pageIsClean('user page');
    await page.fill('#ue-username', 'bad name!');
    await page.click('form[action="/staff/user/do/edit"] button[type=submit]');
    expect(await page.locator('#ue-username-error').textContent()).toMatch(/username/);
    refusalSeen();
    await rig.pageIsClean('user edit refused');
    await page.fill('#ue-username', 'robert');
    await page.fill('#ue-email', 'robert@example.com');
    await page.press('#ue-email', 'Enter');
    await page.waitForURL(/done=/);
    expect(await rig.noticeText()).toBe('Saved.');
    expect(await page.locator('h1').textContent()).toBe('User robert');

    await page.fill('#ul-uuid', 'not-a-uuid');
    await page.click('form[action="/staff/user/do/link"] button[type=submit]');
    expect(await page.locator('#ul-uuid-error').textContent()).toBeTruthy();
    refusalSeen();
    await page.fill('#ul-uuid', '069a79f4-44e9-4726-a5be-fca90e38aaf5');
    await page.click('form[action="/staff/user/do/link"] button[type=submit]');
    expect(await rig.noticeText()).toMatch(/^Linked/);
    expect(await page.locator('main table', { hasText: '069a79f4' }).count()).toBe(1);
    await page.click('button:text-is("Unlink 069a79f4-44e9-4726-a5be-fca90e38aaf5")');
    expect(await rig.noticeText()).toMatch(/^Unlinked/);
    await page.click('button:text-is("Remove every passkey")');
    expect(await rig.noticeText()).toMatch(/passkey/);
    await rig.pageIsClean('user after the changes');
    await page.click('button:text-is("Delete robert")');
    expect(new URL(page.url()).pathname).toBe('/staff/users');
    expect(await rig.noticeText()).toMatch(/^Deleted robert/);
    expect((await rig.api('GET', `/users/${bob.id}`)).body.deleted_at).toBeTruthy();

    // A world backup, then deleted from the staff list.
    expect((await rig.api('POST', '/servers', { name: 'kept', subdomain: 'kept' })).status).toBe(201);
    expect((await rig.api('POST', '/servers/kept/backup')).status).toBe(202);
    await expect.poll(async () => (await rig.api('GET', '/backups?server=kept')).body.backups.length, { timeout: 60_000 }).toBe(1);
    await page.goto(`${consoleHost}/staff/backups`);
    await rig.pageIsClean('world backups');
    await page.locator('tr', { hasText: 'kept' }).locator('button').click();
    expect(await rig.noticeText()).toMatch(/^Deleted the backup of kept/);
    expect(await page.locator('tr', { hasText: 'kept' }).count()).toBe(0);
    expect((await rig.api('GET', '/backups?server=kept')).body.backups).toEqual([]);

    // A webhook's test delivery, on the webhook's own page.
    const hook = await rig.api('POST', '/settings/webhooks', { name: 'pager', url: 'https://example.com/pager' });
    expect(hook.status).toBe(201);
    expect((await rig.api('POST', `/settings/webhooks/${hook.body.id}/test`)).status).toBe(202);
    await page.goto(`${consoleHost}/staff/webhooks`);
    await page.click('main table a:text-is("pager")');
    expect(await page.locator('h1').textContent()).toBe('Deliveries of pager');
    expect(await page.locator('main table').textContent()).toContain('webhook.test');
    await rig.pageIsClean('webhook deliveries');
  });
});
