/**
 * How the event loops (the relay, the webhook worker) run a pass of background work: the shape
 * plugins/tracing.ts fills in with spans when tracing is on. It lives here, below the plugins,
 * because those loops are (docs/layout.md, "Imports point one way").
 */
import type { Attributes } from '@opentelemetry/api'

/** What a pass of background work did: undefined when it did nothing worth a span. */
export type BackgroundOutcome = { attributes?: Attributes; error?: unknown } | undefined

/**
 * Runs `work` outside whatever request is active: with tracing on, as the root span `name` when
 * it reports an outcome (see the header).
 */
export type RunInBackground = (name: string, work: () => Promise<BackgroundOutcome>) => Promise<void>

/** Background work while tracing is off: just the work. */
export const untracedBackground: RunInBackground = async (_name, work) => {
  await work()
}
