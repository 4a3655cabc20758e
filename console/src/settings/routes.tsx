import type { Route } from '../routes.tsx';
import { SettingsPage } from './settings-page.tsx';

export const settingsRoutes: Route[] = [{ pattern: '/settings', title: 'Settings', nav: true, render: (api) => <SettingsPage api={api} /> }];
