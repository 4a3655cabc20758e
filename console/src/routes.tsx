import type { VNode } from 'preact';
import type { Api } from './api.ts';
import { callsRoutes } from './calls/routes.tsx';
import { liveRoutes } from './live/routes.tsx';
import { assistantRoutes } from './assistants/routes.tsx';
import { numbersRoutes } from './numbers/routes.tsx';
import { campaignRoutes } from './campaigns/routes.tsx';
import { conversationRoutes } from './conversations/routes.tsx';
import { settingsRoutes } from './settings/routes.tsx';
import { webrtcRoutes } from './webrtc/routes.tsx';

/**
 * Every page of the console: its URL pattern under /console, the title the tab and the heading
 * show, whether it is in the navigation, and what it renders. A page gets the signed-in API and
 * its URL parameters; it fetches what it shows itself.
 */
export interface Route {
  pattern: string;
  title: string;
  nav?: boolean;
  render(api: Api, params: Record<string, string>): VNode;
}

export const ROUTES: Route[] = [
  ...callsRoutes,
  ...liveRoutes,
  ...assistantRoutes,
  ...numbersRoutes,
  ...campaignRoutes,
  ...conversationRoutes,
  ...settingsRoutes,
  ...webrtcRoutes,
];
