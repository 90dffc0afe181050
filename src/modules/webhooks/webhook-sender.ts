/**
 * One attempt of one delivery: a POST signed per the Standard Webhooks specification with the
 * `standardwebhooks` package (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,…`), to
 * the address webhook-target.ts checked, within the configured timeout. Redirects are not followed
 * (a 3xx is a failure like any non-2xx): following one would leave the checked address.
 */
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Webhook } from 'standardwebhooks'
import { ApiError } from '../../errors.ts'
import { checkTargetUrl, pinnedLookup, resolveTarget } from './webhook-target.ts'

export interface SendResult {
  ok: boolean
  /** The answer's status, null when none came (timeout, refused connection, refused target). */
  status: number | null
  error: string | null
  /** The first RESPONSE_BODY_KEPT bytes of the answer as text (U+FFFD for what is not UTF-8 or is NUL); null when none came. */
  body: string | null
}

export interface Message {
  /** `webhook-id`: the same on every attempt of a delivery, so that receivers can deduplicate. */
  id: string
  /** The public event as JSON, exactly the signed bytes. */
  payload: string
}

/** At most this much of an answer is read (and then thrown away): the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024
/** How much of an answer is kept in the delivery's attempt log, for whoever debugs the receiver. */
export const RESPONSE_BODY_KEPT = 1024

/** The kept start of an answer as storable text: PostgreSQL's text refuses U+0000 (storable-text.ts). */
function answerText(chunks: Buffer[]): string {
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_KEPT).toString('utf8').replaceAll('\u0000', '\uFFFD')
}

export async function sendWebhook(
  target: { url: string; secret: string },
  message: Message,
  options: { timeoutMs: number; allowPrivate: boolean; signal: AbortSignal },
): Promise<SendResult> {
  let url: URL
  let resolved: Awaited<ReturnType<typeof resolveTarget>>
  try {
    url = checkTargetUrl(target.url, options.allowPrivate)
    resolved = await resolveTarget(url, options.allowPrivate)
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, status: null, error: error.detail, body: null }
    throw error
  }
  const timestamp = new Date()
  const signature = new Webhook(target.secret).sign(message.id, timestamp, message.payload)
  const body = Buffer.from(message.payload)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<SendResult>((resolve) => {
    let settled = false
    const finish = (result: SendResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const req = send(url, {
      method: 'POST',
      lookup: pinnedLookup(resolved),
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': 'contract-api-webhooks',
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms`, body: null })
    }, options.timeoutMs)
    const onAbort = () => {
      req.destroy()
      finish({ ok: false, status: null, error: 'the attempt was abandoned (shutting down)', body: null })
    }
    options.signal.addEventListener('abort', onAbort, { once: true })
    req.on('error', (error) => finish({ ok: false, status: null, error: `network error: ${error.message}`, body: null }))
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      let read = 0
      const kept: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (read < RESPONSE_BODY_KEPT) kept.push(chunk)
        read += chunk.length
        if (read > MAX_ANSWER_BYTES) res.destroy()
      })
      const done = () => {
        const body = answerText(kept)
        finish(
          status >= 200 && status < 300
            ? { ok: true, status, error: null, body }
            : { ok: false, status, error: `the receiver answered ${status}`, body },
        )
      }
      res.on('end', done)
      res.on('close', done)
      res.on('error', done)
    })
    req.end(body)
  })
}
