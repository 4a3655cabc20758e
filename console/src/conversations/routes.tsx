import type { Route } from '../routes.tsx';
import { ConversationDetail } from './detail-page.tsx';
import { ConversationList } from './list-page.tsx';

export const conversationRoutes: Route[] = [
  { pattern: '/conversations', title: 'Conversations', nav: true, render: (api) => <ConversationList api={api} /> },
  { pattern: '/conversations/:uuid', title: 'Conversation', render: (api, p) => <ConversationDetail api={api} uuid={p.uuid!} /> },
];
