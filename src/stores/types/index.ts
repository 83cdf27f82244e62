/**
 * Store interfaces: what services may ask of persistence.
 *
 * Every method is async so a Postgres implementation can slot in beside SQLite; each method is atomic on its own.
 * Every read of tenant data takes the organisation id explicitly, so a missing scope is a type error, not a leak.
 *
 * One file per resource under types/; this barrel keeps `stores/types` the one import path.
 */
import type { FeedbackEntityType, FeedbackRecord } from '../../domain/feedback';
import type { StoredBytes } from '../../domain/file';

export type { FeedbackEntityType, FeedbackRecord, StoredBytes };
export type * from './account';
export type * from './wallet';
export type * from './file';
export type * from './prediction';
export type * from './feedback';
export type * from './skill';
export type * from './oauth';
