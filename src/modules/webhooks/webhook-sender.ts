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
}

export interface Message {
  /** `webhook-id`: the same on every attempt of a delivery, so that receivers can deduplicate. */
  id: string
  /** The public event as JSON, exactly the signed bytes. */
  payload: string
}

/** At most this much of an answer is read (and then thrown away): the status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024

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
    if (error instanceof ApiError) return { ok: false, status: null, error: error.detail }
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
      finish({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` })
    }, options.timeoutMs)
    const onAbort = () => {
      req.destroy()
      finish({ ok: false, status: null, error: 'the attempt was abandoned (shutting down)' })
    }
    options.signal.addEventListener('abort', onAbort, { once: true })
    req.on('error', (error) => finish({ ok: false, status: null, error: `network error: ${error.message}` }))
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      let read = 0
      res.on('data', (chunk: Buffer) => {
        read += chunk.length
        if (read > MAX_ANSWER_BYTES) res.destroy()
      })
      const done = () =>
        finish(
          status >= 200 && status < 300
            ? { ok: true, status, error: null }
            : { ok: false, status, error: `the receiver answered ${status}` },
        )
      res.on('end', done)
      res.on('close', done)
      res.on('error', done)
    })
    req.end(body)
  })
}
