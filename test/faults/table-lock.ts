import pg from 'pg'

/** A session of its own holding `table` in ACCESS EXCLUSIVE mode until `release()` (or the test's end). */
export async function lockTable(
  t: { teardown(fn: () => unknown): void },
  url: string,
  table: string,
): Promise<{ release(): Promise<void> }> {
  const locker = new pg.Client({ connectionString: url })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('begin')
  await locker.query(`lock table ${table} in access exclusive mode`)
  return { release: async () => void (await locker.query('rollback')) }
}
