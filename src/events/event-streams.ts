/**
 * GET /events/stream: the event log as Server-Sent Events (decisions §13), written by hand on the
 * raw response rather than through an SSE plugin, because what a stream must do is decided by
 * where it reads from, not by how it frames: it replays from the log, goes live from the instance's
 * event feed without a gap or a duplicate at the seam, and falls back to the log when the reader
 * is slow (see below). Framing is four lines (`id:`, `event:`, `data:` and a blank line).
 *
 * A stream reads the log after its resume point (Last-Event-ID or `after`) page by page, then the
 * events the feed hands it. It subscribes to the feed before its first read, so that nothing
 * delivered meanwhile is missed, and skips what it already sent (seq at most the last one read):
 * seqs become visible in increasing order (src/db/repositories/outbox.ts), so a complete read
 * plus everything delivered after the subscription is every event.
 *
 * Backpressure: a write that the socket does not take at once is waited for ('drain'), one event
 * at a time. Meanwhile live events queue, up to QUEUE_LIMIT; past it the queue is dropped and
 * the stream goes back to reading the log from its last event once the reader catches up. Memory
 * per stream is thus bounded by QUEUE_LIMIT events and a page, however slow the reader. A reader
 * that takes nothing for `stallTimeoutMs` (no 'drain') has stopped: the stream is cut and its
 * slot freed, as a WebSocket subscriber that falls behind is (1013); a reader that was only slow
 * resumes with Last-Event-ID, which names the last event it actually received.
 *
 * Limits: `maxPerCaller` open streams per caller (token subject) on this instance; a further one
 * is 429 TOO_MANY_STREAMS. Instances do not share the count (N instances behind a balancer admit
 * up to N × the limit), like the WebSocket limits. A stream ends when its token expires, when its
 * reader goes or stalls, when reading the log fails (the reader resumes with Last-Event-ID) and on
 * shutdown.
 */
import type { FastifyBaseLogger, FastifyReply } from 'fastify'
import type { Caller } from '../auth/caller.ts'
import type { Event, EventType } from '../contract/contract-types.ts'
import type { DeliverableEvent } from '../db/repositories/outbox.ts'
import { ApiError } from '../errors.ts'
import type { EventFeed } from './event-feed.ts'
import { audienceOf, canSee } from './event-visibility.ts'
import type { EventsService } from './events.service.ts'
import { toEvent } from './events.service.ts'

/** Rows read from the log per round trip while a stream catches up. */
const PAGE = 100
/** Live events a stream queues while its reader is slow, before it falls back to the log. */
export const QUEUE_LIMIT = 1000

export interface EventStreamsOptions {
  events: EventsService
  feed: EventFeed
  /** A comment line this often keeps proxies from closing an idle stream (EVENTS_STREAM_HEARTBEAT). */
  heartbeatMs: number
  /** Open streams per caller on this instance (EVENTS_STREAM_MAX_PER_CALLER). */
  maxPerCaller: number
  /** How long a write may wait for the reader to drain the socket before the stream is cut (EVENTS_STREAM_STALL_TIMEOUT). */
  stallTimeoutMs: number
  log: FastifyBaseLogger
}

export interface StreamRequest {
  caller: Caller
  /** The seq to resume after, or undefined to start with the next event. */
  after: number | undefined
  types: readonly EventType[] | undefined
}

/** One SSE message: the event's id, its type and the event as JSON (which has no line breaks). */
export function sseMessage(event: Event): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

export function createEventStreams(options: EventStreamsOptions) {
  const { events, feed, log } = options
  const openPerCaller = new Map<string, number>()
  const closers = new Set<() => void>()

  /**
   * Opens a stream on `reply`. Refusals (400, 410, 429) are thrown before anything is written, so
   * they are answered as problem+json; after the first write the response belongs to the stream.
   */
  async function open(reply: FastifyReply, request: StreamRequest): Promise<void> {
    const { caller, types } = request
    const audience = audienceOf(caller)
    const open = openPerCaller.get(caller.subject) ?? 0
    if (open >= options.maxPerCaller) {
      throw new ApiError(
        'TOO_MANY_STREAMS',
        `This caller already has ${open} open event streams on this server (at most ${options.maxPerCaller}).`,
        {
          headers: { 'retry-after': '1' },
        },
      )
    }
    openPerCaller.set(caller.subject, open + 1)
    let released = false
    const release = () => {
      if (released) return
      released = true
      const count = (openPerCaller.get(caller.subject) ?? 1) - 1
      if (count > 0) openPerCaller.set(caller.subject, count)
      else openPerCaller.delete(caller.subject)
    }

    let queue: DeliverableEvent[] = []
    let overflowed = false
    let closed = false
    let wake: (() => void) | undefined
    const unsubscribe = feed.subscribe((event) => {
      if (closed) return
      if (queue.length < QUEUE_LIMIT) queue.push(event)
      else overflowed = true
      wake?.()
    })

    // The first page is read before the response starts: a resume point past the retention is 410.
    let lastSeq = request.after ?? feed.lastDeliveredSeq()
    let first: Awaited<ReturnType<EventsService['readAfter']>> | undefined
    try {
      if (request.after !== undefined) first = await events.readAfter(audience, request.after, { types, limit: PAGE })
    } catch (error) {
      unsubscribe()
      release()
      throw error
    }

    const raw = reply.raw
    reply.hijack()
    // The headers the hooks set so far (request id, rate limit, security headers), then the stream's.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value)
    raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // nginx buffers responses unless told not to.
      'x-accel-buffering': 'no',
    })
    raw.write(': open\n\n')

    let heartbeat: NodeJS.Timeout | undefined
    let expiry: NodeJS.Timeout | undefined
    const close = () => {
      if (closed) return
      closed = true
      unsubscribe()
      release()
      clearInterval(heartbeat)
      clearTimeout(expiry)
      closers.delete(close)
      queue = []
      wake?.()
      if (!raw.writableEnded) raw.end()
    }
    closers.add(close)
    raw.on('close', close)
    heartbeat = setInterval(() => {
      // Skipped while the socket is full: that stream is not idle.
      if (!raw.writableNeedDrain) raw.write(': keep-alive\n\n')
    }, options.heartbeatMs)
    heartbeat.unref()
    expiry = setTimeout(close, Math.max(0, caller.expiresAt - Date.now()))
    expiry.unref()

    /** Writes one message, waiting while the socket holds more than it wants; cuts a reader that stopped. */
    const send = async (event: Event) => {
      if (closed) return
      if (raw.write(sseMessage(event))) return
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(stall)
          raw.off('drain', done)
          raw.off('close', done)
          resolve()
        }
        const stall = setTimeout(() => {
          log.info({ writing: event.id, stallTimeoutMs: options.stallTimeoutMs }, 'event stream cut: its reader stopped reading')
          done()
          close()
          // What the kernel and the socket still hold is not sent: the reader resumes after what it got.
          raw.destroy()
        }, options.stallTimeoutMs)
        stall.unref()
        raw.on('drain', done)
        raw.on('close', done)
      })
    }

    const pump = async () => {
      let catchingUp = first !== undefined && !first.complete
      if (first) {
        for (const event of first.events) await send(event)
        lastSeq = first.lastSeq
      }
      while (!closed) {
        if (overflowed) {
          // Dropped events are still in the log: read them from there.
          overflowed = false
          queue = []
          catchingUp = true
        }
        if (catchingUp) {
          const read = await events.readAfter(audience, lastSeq, { types, limit: PAGE })
          for (const event of read.events) await send(event)
          lastSeq = read.lastSeq
          catchingUp = !read.complete
          continue
        }
        const next = queue.shift()
        if (!next) {
          await new Promise<void>((resolve) => {
            wake = resolve
          })
          wake = undefined
          continue
        }
        if (next.seq <= lastSeq) continue
        lastSeq = next.seq
        if (types && !types.includes(next.topic)) continue
        if (!canSee(audience, next.ownerId)) continue
        const event = toEvent(next)
        if (event) await send(event)
      }
    }
    pump().catch((error: unknown) => {
      // The log could not be read (the database is away, or pruning overtook a stalled reader):
      // the reader reconnects with Last-Event-ID and is answered from the log, or told 410.
      if (!closed) log.warn({ err: error, lastSeq }, 'event stream ended: reading the event log failed')
      close()
    })
  }

  return {
    open,
    /** Open streams on this instance. */
    count: () => closers.size,
    /** Ends every stream (shutdown): readers reconnect, with Last-Event-ID, to another instance. */
    closeAll() {
      for (const close of [...closers]) close()
    },
  }
}

export type EventStreams = ReturnType<typeof createEventStreams>
