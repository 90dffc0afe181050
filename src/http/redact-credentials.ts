/**
 * A credential is read only from the Authorization header (decisions §12), but clients still put
 * tokens in query strings (`?access_token=…`). The service ignores them, and this keeps them out of
 * everything that echoes a URL: the request log line and a problem's `instance`.
 */
import type { FastifyRequest } from 'fastify'

const REDACTED = 'REDACTED'

/** Parameter names, lower-cased with everything but letters and digits removed. */
const CREDENTIAL_PARAMETERS = new Set([
  'accesstoken',
  'token',
  'idtoken',
  'refreshtoken',
  'apikey',
  'jwt',
  'authorization',
  'password',
  'clientsecret',
  // A stream ticket (GET /events/stream?ticket=): single-use, but a credential all the same.
  'ticket',
])

/** A JWT anywhere (three base64url parts, the first an encoded JSON object), whatever it is called. */
const JWT = /eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g

function normalizedName(rawName: string): string {
  let name = rawName
  try {
    name = decodeURIComponent(rawName.replace(/\+/g, ' '))
  } catch {
    // A malformed escape: judge the name as sent.
  }
  return name
    .replace(/\[.*$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '')
}

/** The URL with the value of every credential-like query parameter, and any JWT, replaced. */
export function redactCredentials(url: string): string {
  const start = url.indexOf('?')
  const path = start === -1 ? url : url.slice(0, start)
  if (start === -1) return path.replace(JWT, REDACTED)
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=')
      if (equals === -1 || !CREDENTIAL_PARAMETERS.has(normalizedName(pair.slice(0, equals)))) return pair
      return `${pair.slice(0, equals)}=${REDACTED}`
    })
    .join('&')
  return `${path}?${query}`.replace(JWT, REDACTED)
}

/**
 * Fastify's request log serializer, with the URL redacted. A log call may pass any object as
 * `req`, so nothing here is assumed to be present.
 */
export function requestLogSerializer(
  request: Partial<Pick<FastifyRequest, 'method' | 'url' | 'headers' | 'host' | 'ip' | 'socket'>>,
): Record<string, unknown> {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactCredentials(request.url) : undefined,
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}
