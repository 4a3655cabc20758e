import type { Route } from '../routes.tsx';
import { CampaignsPage } from './campaigns-page.tsx';

export const campaignRoutes: Route[] = [{ pattern: '/campaigns', title: 'Campaigns', nav: true, render: (api) => <CampaignsPage api={api} /> }];
