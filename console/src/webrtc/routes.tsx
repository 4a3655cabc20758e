import type { Route } from '../routes.tsx';
import { TalkPage } from './talk-page.tsx';

/** Browser calls: talk to an assistant over WebRTC. */
export const webrtcRoutes: Route[] = [
  {
    pattern: '/assistants/:id/talk',
    title: 'Talk to an assistant',
    render: (api, params) => <TalkPage api={api} assistantId={Number(params.id)} />,
  },
];
