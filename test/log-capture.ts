/** The app's log lines, parsed, for tests that read them (build with `loggerStream: log.stream`). */
import { Writable } from 'node:stream'

export interface LogLine {
  level: number
  msg: string
  requestId?: string
  [key: string]: unknown
}

export function captureLog(): { lines: LogLine[]; stream: Writable } {
  const lines: LogLine[] = []
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const text of String(chunk).split('\n')) if (text.trim()) lines.push(JSON.parse(text) as LogLine)
      callback()
    },
  })
  return { lines, stream }
}
