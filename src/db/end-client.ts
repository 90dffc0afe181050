import type pg from 'pg'

/** How long a closing connection waits for the server to see it off before its socket is cut. */
export const CLOSE_WAIT_MS = 1000

/**
 * Ends a connection politely (PostgreSQL's Terminate, then waiting for the server to close its
 * side), or cuts its socket when the server has not seen it off within `withinMs`: a frozen server
 * never does, and a shutdown must not wait for it (decisions §12). Safe on a client already ending.
 */
export async function endClient(client: pg.Client, withinMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const cut = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.connection.stream.destroy()
      resolve()
    }, withinMs)
  })
  try {
    await Promise.race([client.end().catch(() => {}), cut])
  } finally {
    clearTimeout(timer)
  }
}
