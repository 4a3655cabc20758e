/**
 * The active-span context carried through async work on AsyncLocalStorage: a provider request
 * made inside a span (an LLM request inside a turn) finds its parent, and the outgoing HTTP
 * request inside it finds what to put in `traceparent`. Installed only when tracing is on
 * (src/telemetry/tracing.ts); the API's no-op context manager is what runs otherwise.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ROOT_CONTEXT, type Context, type ContextManager } from '@opentelemetry/api';

export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const cb = thisArg === undefined ? fn : fn.bind(thisArg);
    return this.storage.run(context, cb as never, ...args) as ReturnType<F>;
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const manager = this;
    const bound = function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    };
    return bound as T;
  }

  enable(): this {
    return this;
  }

  disable(): this {
    this.storage.disable();
    return this;
  }
}
