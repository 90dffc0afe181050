/**
 * The LISTEN connection (PostgreSQL only): a client of its own, `api-events-listener`, outside the
 * pool, that stays LISTENing on the outbox and events channels for the instance's lifetime.
 *
 * When it dies it reconnects with backoff (100 ms doubling to 5 s), LISTENs again and the caller
 * catches up (`onConnected`); meanwhile the timer keeps delivering through the pool, a second late
 * at most. When the pool reaches the database again (`reconnectNow`) the wait is cut short: after a
 * long outage the backoff would otherwise leave the listener away for up to 5 s more. A heartbeat ends a connection that stopped answering (a network cut sends no error), so
 * it is reopened too.
 */
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import { CLOSE_WAIT_MS, endClient } from '../db/end-client.ts'
import { EVENTS_CHANNEL, OUTBOX_CHANNEL } from '../db/repositories/outbox.ts'

/** How the listening connection names itself in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'api-events-listener'

const HEARTBEAT_TIMEOUT_MS = 2000
const LISTENER_CONNECT_TIMEOUT_MS = 2000
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 5000

export interface OutboxListenerOptions {
  url: string
  /** A write committed an event that awaits relaying. */
  onOutbox: () => void
  /** Relayed events await delivery. */
  onEvents: () => void
  /** (Re)connected: what was relayed or committed while no listener was there is to be picked up. */
  onConnected: () => void
  log: FastifyBaseLogger
  isClosing: () => boolean
}

export function createOutboxListener(options: OutboxListenerOptions) {
  const { log, isClosing } = options
  let listener: { client: pg.Client; drop: (error: unknown) => void } | undefined
  let up = false
  let reconnectDelay = RECONNECT_MIN_MS
  let reconnectTimer: NodeJS.Timeout | undefined

  const scheduleReconnect = () => {
    if (reconnectTimer || isClosing()) return
    const delay = reconnectDelay
    reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS)
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined
      void connect()
    }, delay)
  }

  const connect = async (): Promise<void> => {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: LISTENER_CONNECT_TIMEOUT_MS,
      keepAlive: true,
    })
    let lost = false
    const onLost = (error?: unknown) => {
      if (lost) return
      lost = true
      if (listener?.client === client) listener = undefined
      up = false
      client.end().catch(() => {})
      if (isClosing()) return
      log.warn({ err: error, retryInMs: reconnectDelay }, 'event listener connection lost; reconnecting')
      scheduleReconnect()
    }
    client.on('error', onLost)
    client.on('end', () => onLost(new Error('event listener connection ended')))
    client.on('notification', (notification) => {
      if (notification.channel === OUTBOX_CHANNEL) options.onOutbox()
      else if (notification.channel === EVENTS_CHANNEL) options.onEvents()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${EVENTS_CHANNEL}; LISTEN ${OUTBOX_CHANNEL}`)
    } catch (error) {
      onLost(error)
      return
    }
    if (isClosing() || lost) {
      await client.end().catch(() => {})
      return
    }
    listener = { client, drop: onLost }
    up = true
    reconnectDelay = RECONNECT_MIN_MS
    options.onConnected()
  }

  /** Ends the connection when it does not answer in time, so that it is reopened. */
  const heartbeat = async () => {
    const current = listener
    if (!current) return
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('event listener did not answer its heartbeat')), HEARTBEAT_TIMEOUT_MS)
    })
    try {
      await Promise.race([current.client.query('select 1'), timeout])
    } catch (error) {
      if (!isClosing()) current.drop(error)
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    connect,
    heartbeat,
    isUp: () => up,
    /** The database answers again: a reconnection waiting out its backoff starts now. */
    reconnectNow() {
      if (!reconnectTimer || isClosing()) return
      clearTimeout(reconnectTimer)
      reconnectTimer = undefined
      reconnectDelay = RECONNECT_MIN_MS
      void connect()
    },
    async stop() {
      clearTimeout(reconnectTimer)
      // A frozen server never sees the connection off: the shutdown does not wait for it.
      if (listener) await endClient(listener.client, CLOSE_WAIT_MS)
    },
  }
}
