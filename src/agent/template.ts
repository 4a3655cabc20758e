/**
 * `{{variable}}` substitution. Unknown names stay as written: an unresolved placeholder in a
 * transcript points straight at the missing variable, where an empty string would hide it.
 */
export function fillTemplate(text: string, variables: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([\w.-]+)\s*\}\}/g, (whole, name: string) => {
    if (!Object.hasOwn(variables, name)) return whole;
    const v = variables[name];
    if (v === null || v === undefined) return '';
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  });
}

/** Assistant defaults first, then the conversation's (or call's) own values win. */
export function mergeVariables(...layers: (Record<string, unknown> | null | undefined)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) if (layer) Object.assign(out, layer);
  return out;
}
