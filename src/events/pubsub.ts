/**
 * The in-process pubsub behind GraphQL subscriptions, with a bound per subscriber.
 *
 * Fan-out between instances is the events plugin's job (PostgreSQL or Redis); this only hands an
 * instance's events to its own subscriptions. Mercurius gives each subscription a queue that its
 * send loop drains one message at a time, waiting for the socket to take each. A subscriber that
 * stops reading therefore stalls the loop while events keep arriving, and Mercurius' queue (a Node
 * Readable, whose high-water mark is only advisory) would grow without limit. Here a queue already
 * holding `queueLimit` undelivered events takes no more: the subscription is unsubscribed and its
 * `onOverflow` runs once (the connection then closes with SLOW_SUBSCRIBER_CLOSE_CODE).
 *
 * A queue's errors are ours to report too. Mercurius logs each at error level, among them the
 * AbortError that ends every subscription stopped while an event was on its way (its iterator
 * destroys the queue when returned early): one error line per subscription of a connection that is
 * cut. That is an ordinary end, which websocket.ts reports once per connection; any other queue
 * error is a warning.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { MercuriusContext } from 'mercurius'

/** WebSocket close code for a subscriber that fell too far behind: 1013 "Try Again Later". */
export const SLOW_SUBSCRIBER_CLOSE_CODE = 1013

/** The part of Mercurius' per-subscription queue (a Readable) that the pubsub touches. */
interface SubscriptionQueue {
  readonly readableLength: number
  readonly destroyed: boolean
  readonly readableEnded: boolean
  push(value: unknown): boolean
  /** Mercurius calls each of these when the subscription ends. */
  close?: Array<() => void>
  on(event: 'error', listener: (error: Error) => void): unknown
  removeAllListeners(event: 'error'): unknown
}

interface Subscription {
  queue: SubscriptionQueue
  onOverflow: (() => void) | undefined
}

export interface BoundedPubSub {
  subscribe(topics: string | string[], queue: SubscriptionQueue, onOverflow?: () => void): Promise<void>
  publish(event: { topic: string; payload: unknown }, callback?: (error?: Error) => void): Promise<void>
  /** Live subscriptions to `topic` on this instance. */
  subscriptionCount(topic: string): number
}

export function createBoundedPubSub(queueLimit: number, log: FastifyBaseLogger): BoundedPubSub {
  const topics = new Map<string, Set<Subscription>>()
  const onQueueError = (error: Error) => {
    if (error.name !== 'AbortError') log.warn({ err: error }, 'subscription queue failed; the subscription ends')
  }

  const unsubscribe = (topic: string, subscription: Subscription) => {
    const subscriptions = topics.get(topic)
    subscriptions?.delete(subscription)
    if (subscriptions?.size === 0) topics.delete(topic)
  }

  return {
    async subscribe(topicOrTopics, queue, onOverflow) {
      // In place of Mercurius' listener (see above); one is always there, as an unhandled 'error' would end the process.
      queue.removeAllListeners('error')
      queue.on('error', onQueueError)
      for (const topic of typeof topicOrTopics === 'string' ? [topicOrTopics] : topicOrTopics) {
        const subscription: Subscription = { queue, onOverflow }
        let subscriptions = topics.get(topic)
        if (!subscriptions) topics.set(topic, (subscriptions = new Set()))
        subscriptions.add(subscription)
        ;(queue.close ??= []).push(() => unsubscribe(topic, subscription))
      }
    },

    async publish({ topic, payload }, callback) {
      for (const subscription of [...(topics.get(topic) ?? [])]) {
        const { queue } = subscription
        if (queue.destroyed || queue.readableEnded) {
          unsubscribe(topic, subscription)
        } else if (queue.readableLength >= queueLimit) {
          unsubscribe(topic, subscription)
          subscription.onOverflow?.()
        } else {
          queue.push(payload)
        }
      }
      callback?.()
    },

    subscriptionCount(topic) {
      return topics.get(topic)?.size ?? 0
    },
  }
}

/**
 * The events of `topic` for a subscription resolver: the queue Mercurius iterates, bounded as
 * above, closing the subscriber's connection when it overflows.
 */
export function subscribeBounded(context: MercuriusContext, topic: string) {
  // Mercurius hands the arguments after the topic to our pubsub's subscribe, after its queue.
  return context.pubsub.subscribe(topic, context.closeAsTooSlow)
}

/** Whether the app's pubsub is ours (Mercurius types it as its own default pubsub). */
export function isBoundedPubSub(pubsub: object | undefined): pubsub is BoundedPubSub {
  return pubsub !== undefined && 'subscriptionCount' in pubsub && typeof pubsub.subscriptionCount === 'function'
}
