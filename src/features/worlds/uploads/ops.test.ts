import { describe, expect, it } from 'vitest';
import { toFileOpView } from './ops.js';

const started = new Date('2026-06-01T12:00:00.000Z');
const finished = new Date('2026-06-01T12:01:00.000Z');
const op = { id: 'j', serverName: 's', op: 'unzip' as const, path: 'a.zip', done: 10, total: 20, files: null, bytes: null, error: null, createdAt: started };
const job = {
  id: 'j',
  serverName: 's',
  kind: 'unzip' as const,
  state: 'failed' as const,
  message: null as string | null,
  backupId: null,
  requestedBy: null,
  lockHolder: 'j',
  startedAt: started,
  finishedAt: finished as Date | null,
};

describe('file op views', () => {
  it('reports a job that died without a word from the op as job_failed, and a coded message by its code', () => {
    const orphan = toFileOpView(op, { ...job, message: 'the replica running this job stopped' });
    expect(orphan).toMatchObject({ state: 'failed', done: 10, total: 20, error: { code: 'job_failed' } });
    expect(orphan.error!.message).toContain('the replica running this job stopped');
    expect(toFileOpView(op, { ...job, message: 'volume_full: the world volume is full' }).error).toEqual({ code: 'volume_full', message: 'the world volume is full' });
    const detailed = { ...op, error: { code: 'file_exists', message: 'm', conflicts: ['a'], conflict_count: 1 } };
    expect(toFileOpView(detailed, job).error).toEqual(detailed.error);
  });

  it('shows the result only of a success and no finish of a running op', () => {
    const running = toFileOpView(op, { ...job, state: 'running', finishedAt: null });
    expect(running).toEqual({ id: 'j', op: 'unzip', path: 'a.zip', state: 'running', started_at: started.toISOString(), done: 10, total: 20 });
    const done = toFileOpView({ ...op, files: 3, bytes: 20 }, { ...job, state: 'succeeded' });
    expect(done).toMatchObject({ state: 'succeeded', files: 3, bytes: 20, finished_at: finished.toISOString() });
    expect(done.error).toBeUndefined();
  });
});
