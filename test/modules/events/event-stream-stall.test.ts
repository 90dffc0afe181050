/**
 * A stream whose reader stops reading is cut after EVENTS_STREAM_STALL_TIMEOUT (docs/events.md):
 * its slot among the caller's streams is free again long before its token expires, and the
 * reader, reconnecting with the Last-Event-ID it actually received, loses nothing.
 */
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { bearer, build } from '../../helper.ts'
import { ADA, GRACE, listIds, logEnd, post, serve } from './event-helpers.ts'
import { openStream } from './sse-client.ts'

// A few MB of articles written and read twice can pass the suite's per-file default on a loaded machine.
t.setTimeout(300_000)

/** Near the contract's largest article body, so that a few hundred events fill the socket's buffers. */
const BODY = 'x'.repeat(90_000)

t.test(
  'a stream that stops reading is cut after EVENTS_STREAM_STALL_TIMEOUT; its slot is free and Last-Event-ID resumes without a loss',
  async (t) => {
    const app = await build(t, { env: { EVENTS_STREAM_MAX_PER_CALLER: '1', EVENTS_STREAM_STALL_TIMEOUT: '500ms' } })
    const { http } = await serve(app)
    const start = await logEnd(app)
    const stalled = await openStream(http, '/api/v1/events/stream', { ...bearer(GRACE), 'last-event-id': start })
    t.equal(stalled.status, 200)
    // A reader that stops: its socket is no longer read, so the kernel's buffers fill up.
    stalled.pause()

    /** A further stream of the same caller: 200 once the stalled one's slot is free, 429 before. */
    const slotFree = async () => {
      const probe = await openStream(http, '/api/v1/events/stream', bearer(GRACE))
      probe.cut()
      if (probe.status !== 200 && probe.status !== 429) throw new Error(`a probe stream answered ${probe.status}`)
      return probe.status === 200
    }
    t.equal(await slotFree(), false, 'the stalled stream holds the one slot')

    // Articles of about 90 kB each, until the stream has been cut (a few MB of buffers, on loopback).
    let written = 0
    let freed = false
    while (!freed) {
      if (written >= 1000) throw new Error(`${written} events written and the stalled stream still holds its slot`)
      for (let n = 0; n < 10; n++, written++) await post(app, GRACE, '/api/v1/articles', { title: `stall ${written}`, body: BODY })
      // Bounded generously: the cut comes 500 ms after the socket stops draining.
      for (let attempt = 0; attempt < 20 && !freed; attempt++) {
        freed = await slotFree()
        if (!freed) await sleep(100)
      }
    }
    t.pass(`the slot is free after ${written} events, long before the token expires`)

    // What the reader got before the cut; what the kernel still held for it was never received.
    stalled.resume()
    await stalled.ended
    const received = stalled.messages.map((message) => message.id)
    t.ok(received.length < written, `the stalled reader received ${received.length} of ${written} events`)
    const resumeAfter = received.at(-1) ?? start

    const expected: string[] = []
    for (let after = resumeAfter; ; ) {
      const page = await listIds(app, ADA, after)
      if (page.length === 0) break
      expected.push(...page.map((event) => event.id))
      after = page.at(-1)!.id
    }
    t.equal(received.length + expected.length, written, 'received plus what follows the resume point is every event')
    let resumed = await openStream(http, '/api/v1/events/stream', { ...bearer(GRACE), 'last-event-id': resumeAfter })
    for (let attempt = 0; attempt < 100 && resumed.status === 429; attempt++) {
      await sleep(50)
      resumed = await openStream(http, '/api/v1/events/stream', { ...bearer(GRACE), 'last-event-id': resumeAfter })
    }
    t.equal(resumed.status, 200)
    const messages = await resumed.waitFor(expected.length, 60_000)
    t.same(
      messages.map((message) => message.id),
      expected,
      'the resumed stream sends every event after the last one received, once and in order',
    )
    resumed.cut()
  },
)
