/**
 * Each request's logger, made when the request first logs at an enabled level rather than when it
 * arrives. Fastify gives every request a child of the app's logger bound to its id; a pino child
 * serializes its bindings as it is made, which was a measurable share of a read's own work
 * (docs/performance.md, "Per-request work"), while most requests log nothing but the one line
 * request-cost.ts writes, and none at all at LOG_LEVEL=warn. A line logged through it is the same
 * line, with the same bindings, as through the child itself.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
/** pino's logger; Fastify's type leaves out the method this needs (its default logger is pino). */
type LevelAware = FastifyBaseLogger & { isLevelEnabled(level: string): boolean }
type LogArguments = Parameters<FastifyBaseLogger['info']>

class DeferredRequestLogger implements FastifyBaseLogger {
  readonly #parent: LevelAware
  readonly #bindings: Parameters<FastifyBaseLogger['child']>[0]
  #made: FastifyBaseLogger | undefined

  constructor(parent: LevelAware, bindings: Parameters<FastifyBaseLogger['child']>[0]) {
    this.#parent = parent
    this.#bindings = bindings
  }

  get #logger(): FastifyBaseLogger {
    this.#made ??= this.#parent.child(this.#bindings)
    return this.#made
  }

  #log(level: Level, args: LogArguments): void {
    // Nothing is made for a line the level drops; once made, the child decides as pino does.
    if (this.#made === undefined && !this.#parent.isLevelEnabled(level)) return
    this.#logger[level](...args)
  }

  get level(): string {
    return this.#made?.level ?? this.#parent.level
  }

  set level(level: string) {
    this.#logger.level = level
  }

  isLevelEnabled(level: string): boolean {
    return this.#made === undefined ? this.#parent.isLevelEnabled(level) : (this.#made as LevelAware).isLevelEnabled(level)
  }

  fatal(...args: LogArguments): void {
    this.#log('fatal', args)
  }
  error(...args: LogArguments): void {
    this.#log('error', args)
  }
  warn(...args: LogArguments): void {
    this.#log('warn', args)
  }
  info(...args: LogArguments): void {
    this.#log('info', args)
  }
  debug(...args: LogArguments): void {
    this.#log('debug', args)
  }
  trace(...args: LogArguments): void {
    this.#log('trace', args)
  }
  silent(...args: LogArguments): void {
    this.#logger.silent(...args)
  }

  child(...args: Parameters<FastifyBaseLogger['child']>): FastifyBaseLogger {
    return this.#logger.child(...args)
  }
}

function isLevelAware(logger: FastifyBaseLogger): logger is LevelAware {
  return typeof Reflect.get(logger, 'isLevelEnabled') === 'function'
}

/**
 * Fastify's childLoggerFactory: a request logger made on first use. A route with a log level of
 * its own (the probes, /metrics) gets its child at once, as Fastify would make it, and so does
 * every request of a logger that cannot say which levels it writes.
 */
export const deferredRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  options.level === undefined && isLevelAware(logger) ? new DeferredRequestLogger(logger, bindings) : logger.child(bindings, options)
