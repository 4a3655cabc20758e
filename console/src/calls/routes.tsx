import type { Route } from '../routes.tsx';
import { CallDetail } from './detail.tsx';
import { CallsList } from './list.tsx';

export const callsRoutes: Route[] = [
  { pattern: '/calls', title: 'Calls', nav: true, render: (api) => <CallsList api={api} /> },
  { pattern: '/calls/:id', title: 'Call', render: (api, params) => <CallDetail api={api} id={params.id ?? ''} /> },
];
