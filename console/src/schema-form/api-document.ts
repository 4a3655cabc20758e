import type { Api } from '../api.ts';

/** The API document, read once per page load: forms are generated from its body schemas. */
let openApi: Promise<unknown> | undefined;

export function apiDocument(api: Api): Promise<unknown> {
  openApi ??= api.get('/openapi.json').catch((err: unknown) => {
    openApi = undefined;
    throw err;
  });
  return openApi;
}
