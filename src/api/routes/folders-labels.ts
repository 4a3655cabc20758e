import { z } from 'zod';
import { idParams, type Api } from '../route.ts';
import type { AppContext } from '../../context.ts';
import type { Named, NamedRepo } from '../../store/repos/folders.ts';
import { iso } from '../../store/json.ts';
import { NotFoundError } from '../../util/errors.ts';
import { messageOnly, timestamp, withData } from '../response-schemas.ts';

const nameBody = z.object({ name: z.string().trim().min(1).max(255) });

const namedView = z.object({ id: z.int(), name: z.string(), created_at: timestamp });

function present(n: Named) {
  return { id: n.id, name: n.name, created_at: iso(n.createdAt) };
}

/** Folders and labels: the same four operations over two tables. */
export function registerFolderLabelRoutes(api: Api, ctx: AppContext): void {
  const groups: Array<{ path: string; what: string; tag: string; repo: () => NamedRepo }> = [
    { path: '/user/folders', what: 'Folder', tag: 'Folders', repo: () => ctx.repos.folders },
    { path: '/user/labels', what: 'Label', tag: 'Labels', repo: () => ctx.repos.labels },
  ];
  for (const g of groups) {
    api.route({
      method: 'POST',
      url: g.path,
      summary: `Create a ${g.what.toLowerCase()}`,
      tags: [g.tag],
      body: nameBody,
      status: 201,
      response: withData(namedView),
      async handler({ body, accountId }) {
        const created = await g.repo().create(accountId, body.name);
        return { message: `${g.what} created successfully`, data: present(created) };
      },
    });
    api.route({
      method: 'GET',
      url: g.path,
      summary: `List ${g.what.toLowerCase()}s`,
      tags: [g.tag],
      response: z.array(namedView),
      async handler({ accountId }) {
        return (await g.repo().list(accountId)).map(present);
      },
    });
    api.route({
      method: 'GET',
      url: `${g.path}/:id`,
      summary: `Get a ${g.what.toLowerCase()}`,
      tags: [g.tag],
      params: idParams,
      response: namedView,
      async handler({ params, accountId }) {
        const found = await g.repo().get(accountId, params.id);
        if (!found) throw new NotFoundError(g.what);
        return present(found);
      },
    });
    api.route({
      method: 'DELETE',
      url: `${g.path}/:id`,
      summary: `Delete a ${g.what.toLowerCase()}`,
      tags: [g.tag],
      params: idParams,
      response: messageOnly,
      async handler({ params, accountId }) {
        if (!(await g.repo().delete(accountId, params.id))) throw new NotFoundError(g.what);
        return { message: `${g.what} deleted successfully` };
      },
    });
  }
}
