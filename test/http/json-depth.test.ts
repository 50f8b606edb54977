import { describe, expect, it } from 'vitest';
import { createTestApp, createTestDeps, errorOf } from '../helpers/app.js';
import { useTestDatabase } from '../helpers/database.js';
import { fixtureRoutes } from '../helpers/fixture-routes.js';

const post = (app: ReturnType<typeof createTestApp>, body: string) =>
  app.request('/api/v1/fixture/ip', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

/** Milliseconds of `runs` requests of `body`, one after another (the attack's loop). */
async function timeOf(app: ReturnType<typeof createTestApp>, body: string, runs: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < runs; i++) await (await post(app, body)).arrayBuffer();
  return performance.now() - started;
}

describe('deeply nested JSON (issue 30, item 11)', () => {
  const database = useTestDatabase();

  it('refuses a body nested past 64 levels before parsing it, at about the cost of a flat body of its size', async () => {
    const app = createTestApp('external', createTestDeps(database()), fixtureRoutes());
    const brackets = '['.repeat(300_000) + ']'.repeat(300_000); // 600 KB, as in the attack
    const deep = await post(app, brackets);
    expect(deep.status).toBe(400);
    expect(await errorOf(deep)).toMatchObject({ code: 'bad_request', message: 'The JSON body nests deeper than 64 levels.' });
    const justOver = await post(app, `{"note":"x","a":${'['.repeat(64)}${']'.repeat(64)}}`);
    expect((await errorOf(justOver)).message).toBe('The JSON body nests deeper than 64 levels.');
    // Brackets inside a string are text, and a body within the depth is validated as before.
    expect((await post(app, JSON.stringify({ note: '['.repeat(1000) }))).status).toBe(200);
    const within = await post(app, `{"note":"x","a":${'['.repeat(60)}${']'.repeat(60)}}`);
    expect((await errorOf(within)).message).not.toContain('nests deeper');

    // What another client saw: the attack's four-request loop against a flat body of the same size.
    const flat = JSON.stringify({ note: 'a'.repeat(600_000 - 12) });
    await timeOf(app, flat, 2); // warm
    const flatMs = await timeOf(app, flat, 4);
    const deepMs = await timeOf(app, brackets, 4);
    console.log(`4 × 600 KB: flat ${flatMs.toFixed(1)} ms, nested ${deepMs.toFixed(1)} ms`);
    expect(deepMs).toBeLessThan(Math.max(flatMs * 4, 200));
  });
});
