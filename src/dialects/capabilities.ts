import type { Dialect, DialectCapabilities } from './dialect.js';

/** The hooks a dialect may leave out (an engine without them has no such statement). */
export type OptionalHook = { [K in keyof Dialect]-?: undefined extends Dialect[K] ? K : never }[keyof Dialect];

/** What a plan step can need of a dialect: a capability it declares, or a hook it provides. */
export type Need = keyof DialectCapabilities | OptionalHook;

/** Whether the dialect has `need`. */
export function hasCapability(d: Dialect, need: Need): boolean {
  return need in d.capabilities ? d.capabilities[need as keyof DialectCapabilities] : d[need as OptionalHook] !== undefined;
}

/**
 * Refuse a step the dialect cannot run, naming the step, the dialect and what it lacks, before
 * any statement is sent: a plan never falls back to another engine's SQL.
 */
export function requireCapability<K extends Need>(d: Dialect, need: K, step: string): asserts d is Dialect & (K extends OptionalHook ? Required<Pick<Dialect, K>> : unknown) {
  if (!hasCapability(d, need)) throw new Error(`${step} needs ${need}, which the ${d.name} dialect lacks`);
}
