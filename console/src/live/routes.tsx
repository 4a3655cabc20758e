import type { Route } from '../routes.tsx';
import { LiveCall } from './live-call.tsx';

export const liveRoutes: Route[] = [
  { pattern: '/calls/:id/live', title: 'Live call', render: (api, p) => <LiveCall api={api} id={Number(p.id)} /> },
];
