import type { Route } from '../routes.tsx';
import { NumbersPage } from './numbers-page.tsx';

export const numbersRoutes: Route[] = [{ pattern: '/numbers', title: 'Numbers', nav: true, render: (api) => <NumbersPage api={api} /> }];
