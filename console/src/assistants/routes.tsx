import type { Route } from '../routes.tsx';
import { AssistantEditor } from './editor-page.tsx';
import { AssistantList } from './list-page.tsx';

/** Assistants: list, create, edit (the form generated from the API's schema), delete. */
export const assistantRoutes: Route[] = [
  { pattern: '/assistants', title: 'Assistants', nav: true, render: (api) => <AssistantList api={api} /> },
  { pattern: '/assistants/new', title: 'New assistant', render: (api) => <AssistantEditor key="new" api={api} /> },
  { pattern: '/assistants/:id', title: 'Assistant', render: (api, p) => <AssistantEditor key={p.id} api={api} id={p.id} /> },
];
