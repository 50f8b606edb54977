import postgres from 'postgres';

/** Whether the bench's PostgreSQL (`BENCH_DATABASE_URL`, else the machine's) answers: its rows run only then. */
export async function postgresAnswers(): Promise<boolean> {
  const sql = postgres(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}
