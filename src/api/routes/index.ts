import type { Api } from '../route.ts';
import type { AppContext } from '../../context.ts';

/** Every route group, in one list so the OpenAPI document and the app agree. */
export async function registerRoutes(api: Api, ctx: AppContext): Promise<void> {
  void api;
  void ctx;
}
