/** Money is integer micro-dollars inside the engine; dollars only at the edges (API, CLI). */
export const MICROS_PER_DOLLAR = 1_000_000;

/**
 * Parses a dollar amount given as text ("12.5", "0.01") exactly, without binary floats. At most
 * nine digits of dollars: a billion dollars in micro-dollars (1e15) stays below 2^53, where every
 * integer is still exact.
 */
export function parseDollars(text: string): number {
  const m = /^(-)?(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!m) throw new Error(`not a dollar amount: ${JSON.stringify(text)}`);
  const micros = Number(m[2]) * MICROS_PER_DOLLAR + Number((m[3] ?? '').padEnd(6, '0'));
  return m[1] ? -micros : micros;
}

/** Converts micro-dollars to a dollar number for JSON output (exact to the cent and beyond). */
export function toDollars(micros: number): number {
  return Number((micros / MICROS_PER_DOLLAR).toFixed(6));
}

export function dollarsToMicros(dollars: number): number {
  return Math.round(dollars * MICROS_PER_DOLLAR);
}
