import { randomUUID } from 'node:crypto';
import { describe } from 'vitest';
import { useTestDatabase } from '../../../test/helpers/database.js';
import { createUser, signIn } from '../../../test/helpers/sessions.js';
import { describeBadBodies, describeTierMatrix } from '../../../test/helpers/tiers.js';
import type { TestDeps } from '../../../test/helpers/app.js';

const someHash = 'a'.repeat(64);
const aUser = async (deps: TestDeps) => (await createUser(deps)).id;
const player = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps)).id })).headers;
const owner = async (deps: TestDeps) => (await signIn(deps, { userId: (await createUser(deps, { role: 'owner' })).id })).headers;

describe('accounts and sign-in: tiers and bodies of every route', () => {
  const database = useTestDatabase();

  describeTierMatrix(database, 'app', [
    { method: 'get', path: '/api/v1/me', setupAllowed: true },
    { method: 'get', path: '/api/v1/account/sessions' },
    { method: 'delete', path: `/api/v1/account/sessions/${someHash}` },
    { method: 'post', path: '/api/v1/account/email/start', body: { email: 'x@example.com' }, setupAllowed: true },
    { method: 'post', path: '/api/v1/account/email/verify', body: { code: '123456' }, setupAllowed: true },
    { method: 'post', path: '/api/v1/auth/change-password', body: { current_password: 'aaaaaaaa', new_password: 'bbbbbbbb' } },
    { method: 'post', path: '/api/v1/account/sessions/revoke-others' },
    { method: 'post', path: '/api/v1/account/email', body: { email: `t-${randomUUID()}@example.com` }, setupAllowed: true },
    { method: 'get', path: '/api/v1/auth/setup/status', setupAllowed: true },
  ]);

  describeTierMatrix(database, 'admin', [
    { method: 'get', path: '/api/v1/users' },
    { method: 'post', path: '/api/v1/users', body: { username: `u_${randomUUID().slice(0, 8)}`, role: 'user' } },
    { method: 'get', path: async (d) => `/api/v1/users/${await aUser(d)}` },
    { method: 'patch', path: async (d) => `/api/v1/users/${await aUser(d)}`, body: { role: 'user' } },
    { method: 'post', path: async (d) => `/api/v1/users/${await aUser(d)}/disable`, body: { disabled: false } },
    { method: 'delete', path: async (d) => `/api/v1/users/${await aUser(d)}` },
    { method: 'get', path: async (d) => `/api/v1/users/${await aUser(d)}/quotas` },
    { method: 'put', path: async (d) => `/api/v1/users/${await aUser(d)}/quotas`, body: { max_servers: 1 } },
    { method: 'get', path: async (d) => `/api/v1/users/${await aUser(d)}/sessions` },
    { method: 'delete', path: async (d) => `/api/v1/users/${await aUser(d)}/sessions` },
    { method: 'delete', path: async (d) => `/api/v1/users/${await aUser(d)}/sessions/${someHash}` },
    { method: 'delete', path: async (d) => `/api/v1/users/${await aUser(d)}/passkeys` },
    { method: 'post', path: async (d) => `/api/v1/users/${await aUser(d)}/links`, body: { mc_uuid: randomUUID(), auth_source: 'primary' } },
    { method: 'delete', path: async (d) => `/api/v1/users/${await aUser(d)}/links/${randomUUID()}` },
  ]);

  describeBadBodies(database, [
    { method: 'POST', path: '/api/v1/auth/options' },
    { method: 'POST', path: '/api/v1/auth/email/start' },
    { method: 'POST', path: '/api/v1/auth/email/verify' },
    { method: 'POST', path: '/api/v1/auth/login' },
    { method: 'POST', path: '/api/v1/auth/setup/redeem' },
    { method: 'POST', path: '/api/v1/account/email', headers: player },
    { method: 'POST', path: `/api/v1/users/${randomUUID()}/disable`, headers: owner },
    { method: 'POST', path: `/api/v1/users/${randomUUID()}/links`, headers: owner },
    { method: 'POST', path: '/api/v1/auth/change-password', headers: player },
    { method: 'POST', path: '/api/v1/account/email/start', headers: player },
    { method: 'POST', path: '/api/v1/account/email/verify', headers: player },
    { method: 'POST', path: '/api/v1/users', headers: owner },
    { method: 'PATCH', path: `/api/v1/users/${randomUUID()}`, headers: owner },
    { method: 'PUT', path: `/api/v1/users/${randomUUID()}/quotas`, headers: owner },
  ]);
});
