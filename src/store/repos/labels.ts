import type { Store } from '../db.ts';
import type { Clock } from '../../util/clock.ts';
import { NamedRepo } from './folders.ts';

/** Assistant labels (many per assistant; the assistant keeps their ids). */
export class LabelsRepo extends NamedRepo {
  constructor(store: Store, clock: Clock) {
    super(store, clock, 'labels');
  }
}
