/**
 * The app's log, kept for tests that read it (build with `loggerStream: log.stream`): parsed lines
 * for tests that look at fields, raw text for tests that look for what must never be written.
 */
import { Writable } from 'node:stream'

export interface LogLine {
  level: number
  msg: string
  requestId?: string
  [key: string]: unknown
}

function collector(take: (chunk: string) => void): Writable {
  return new Writable({
    write(chunk, _encoding, callback) {
      take(String(chunk))
      callback()
    },
  })
}

export function captureLog(): { lines: LogLine[]; stream: Writable } {
  const lines: LogLine[] = []
  const stream = collector((chunk) => {
    for (const text of chunk.split('\n')) if (text.trim()) lines.push(JSON.parse(text) as LogLine)
  })
  return { lines, stream }
}

/** Everything written, as written (nothing parsed, so a line that is not JSON is kept too). */
export function captureLogText(): { text: () => string; stream: Writable } {
  const chunks: string[] = []
  return { text: () => chunks.join(''), stream: collector((chunk) => chunks.push(chunk)) }
}
